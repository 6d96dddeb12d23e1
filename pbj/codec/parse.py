"""The parser's emitter: ``parse_<Name>`` from a plan.

The contract of a generated ``parse_<Name>(data, pos, end, depth, more, group=0)``:

* ``data`` is ``bytes``; the message's encoding is ``data[pos:end]``.
  ``more`` is ``None`` or a list of further ``(pos, end)`` spans, in reverse
  order, that continue the same message: a singular sub-message that occurs
  several times is parsed once over all its occurrences, which merges them
  as the spec says ("Last One Wins" in "Encoding") in linear time. So is a
  map entry's message value that occurs twice in one entry, and so are the
  later occurrences of a oneof member that another member then replaced:
  their value is dropped, but every occurrence is parsed, and so checked.
* ``depth`` is how many more levels of nested messages (and groups) may
  follow; a sub-message is parsed with ``depth - 1`` and refused at 0.
* ``group`` is 0 for a LEN body. For a group body it is the end-group tag:
  the function reads up to that tag (``end`` is then the end of the
  enclosing message) and returns ``(obj, pos after the end tag)``, or
  ``(None, tag)`` when another end-group tag came first, ``(None, 0)``
  when the input ended first. So a group is read once, however deep it nests.
  Generated calls always pass ``group`` (0 for a LEN body): CPython 3.13's
  specialized call of a function whose defaults fill in missing arguments
  skips the recursion-limit check, so a parser calling itself with ``group``
  left out could nest past Python's recursion limit instead of raising the
  ``RecursionError`` that ends a ``max_depth`` lifted that high (a
  :class:`~pbj.errors.DecodeError`, "nesting too deep").
* It reads tags until ``end``: known tags (the plan's ``dispatch``) go to
  their field's code; anything else, including a known field number with a
  wire type that does not fit, is kept as an unknown field, as Google's
  runtimes do. Repeated scalars accept both packed and unpacked forms.
* A closed enum's non-member number becomes an unknown field with the bytes
  upb keeps (see ``_keep_unknown_enum``); a ``float`` NaN is read keeping its
  bits (:mod:`pbj.codec.float32`).
* It returns a new instance, built on the class's hidden slots base and then
  switched to the frozen class (see :mod:`pbj.schema`).

Locals are named from indexes (``f3``, ``f3_more``, ``o0``), never from
field names. Errors go through the boundary of :mod:`pbj.codec.runtime`:
each generated function has one ``try`` that turns low-level failures into a
:class:`~pbj.errors.DecodeError` with the path and the offset.
"""

from __future__ import annotations

from typing import Any

from pbj import scalars, wire
from pbj.codec.emit import Emit, describe, kind_of, str_decode
from pbj.codec.plan import MAP, MEMBER, MESSAGE, PACKED, PACKED_RUN, REPEATED, FieldPlan, MessagePlan, row_of
from pbj.codec.runtime import LAST_FIELD_PAST_END
from pbj.codec.source import Source, comment
from pbj.scalars import OP_BOOL, OP_ENUM, OP_FLOAT32, OP_STRING, ScalarType
from pbj.schema import enum_default

__all__ = ["emit_parse"]

_INT32 = scalars.SCALARS["int32"]
_LINEAR_LIMIT = 6  # up to this many tags, a chain of ifs; above, a binary decision tree


def _read_varint(src: Source, var: str, kind: ScalarType | None) -> None:
    """Emit: read a varint at ``pos`` into ``var`` and advance ``pos``.

    Varints of up to 5 bytes are decoded inline (those of up to 4, values
    below 2**28, need no narrowing); longer ones call
    :func:`pbj.wire.read_varint`. Values above 2**28 are narrowed to scalar ``kind``;
    ``kind`` ``None``: the varint is a length prefix (see :func:`_narrow`).
    """
    src(f"{var} = data[pos]")
    src(f"if {var} < 128:")
    with src:
        src("pos += 1")
    src("else:")
    with src:
        src("_b = data[pos + 1]")
        src("if _b < 128:")
        with src:
            src(f"{var} = ({var} & 127) | (_b << 7); pos += 2")
        src("else:")
        with src:
            src("_c = data[pos + 2]")
            src("if _c < 128:")
            with src:
                src(f"{var} = ({var} & 127) | ((_b & 127) << 7) | (_c << 14); pos += 3")
            src("else:")
            with src:
                src("_d = data[pos + 3]")
                src("if _d < 128:")
                with src:
                    src(f"{var} = ({var} & 127) | ((_b & 127) << 7) | ((_c & 127) << 14) | (_d << 21); pos += 4")
                src("else:")
                with src:
                    src("_a = data[pos + 4]")
                    src("if _a < 128:")
                    with src:
                        src(f"{var} = ({var} & 127) | ((_b & 127) << 7) | ((_c & 127) << 14) | ((_d & 127) << 21)"
                            " | (_a << 28); pos += 5")
                        _narrow(src, kind, var)
                    src("else:")
                    with src:
                        src(f"{var}, pos = _r{'size' if kind is None else 'v'}(data, pos)")
                        if kind is not None:  # read_size refuses what does not fit an int32 itself
                            _narrow(src, kind, var)


def _narrow(src: Source, kind: ScalarType | None, var: str) -> None:
    """Emit the narrowing of a 64-bit varint to the field's type ("Encoding": int32 etc.).

    ``kind`` ``None``: a length prefix: a 5-byte one above 2**31-1 is refused
    (:func:`pbj.wire.read_size`; a longer one is refused by ``read_size`` itself).
    """
    if kind is None:
        src(f"if {var} > 0x7FFFFFFF: {var}, pos = _rsize(data, pos - 5)")
        return
    r = kind
    if r.bits == 32 and r.signed_varint:
        src(f"if {var} > 0x7FFFFFFF: {var} = (({var} & 0xFFFFFFFF) ^ 0x80000000) - 0x80000000")
    elif r.bits == 32:
        src(f"if {var} > 0xFFFFFFFF: {var} &= 0xFFFFFFFF")
    elif r.bits == 64 and r.signed_varint:
        src(f"if {var} > 0x7FFFFFFFFFFFFFFF: {var} -= 0x10000000000000000")


def _read_scalar(src: Source, kind: ScalarType, var: str, enum_map: str | None) -> None:
    """Emit: read one scalar of ``kind`` at ``pos`` into ``var``."""
    r = kind
    if kind.op == OP_FLOAT32:  # a NaN is read again keeping its bits (pbj.codec.float32)
        src(f"{var} = _S_float.unpack_from(data, pos)[0]")
        src(f"if {var} != {var}: {var} = _f32nan(data, pos)")
        src("pos += 4")
        return
    if r.width:
        src(f"{var} = _S_{kind.name}.unpack_from(data, pos)[0]; pos += {r.width}")
        return
    _read_varint(src, var, kind)
    if kind.op == OP_BOOL:
        src(f"{var} = {var} != 0")
    elif r.zigzag:
        src(f"{var} = ({var} >> 1) ^ -({var} & 1)")
    elif kind.op == OP_ENUM:
        src(f"{var} = {enum_map}.get({var}, {var})")


def _read_len(src: Source) -> None:
    """Emit: read a length at ``pos`` and set ``e`` to the end of the value.

    A length prefix is an int32 varint (:func:`pbj.wire.read_size`): longer than 5 bytes,
    or above 2**31-1, is refused, as upb does.
    """
    _read_varint(src, "n", None)
    src("e = pos + n")
    src("if e > end:")
    with src:
        src('raise DecodeError("truncated input: length runs past the end of the message")')


def _check_depth(src: Source) -> None:
    src("if depth <= 0:")
    with src:
        src('raise DecodeError("nesting too deep: the depth limit was reached")')


def _len_value(kind: ScalarType, utf8: bool = True) -> str:
    return str_decode("data[pos:e]", utf8) if kind.op == OP_STRING else "data[pos:e]"


class _Parse:
    """What the parse function of one class does for each tag, being collected."""

    def __init__(self, ctx: Emit, plan: MessagePlan) -> None:
        self.ctx = ctx
        self.plan = plan
        self.stem = ctx.stem(plan.idx)
        self.cases: dict[int, list[str]] = {}
        self.first: dict[int, list[str]] = {}  # a case's code for the prefix, where it cannot be a repeat
        self.names: dict[int, tuple[str, Any]] = {}
        self.locals: list[tuple[str, str]] = []
        self.finish: list[str] = []
        self.store: list[tuple[str, str]] = []

    def case(self, tag: int, f: FieldPlan, where: Any) -> Source:
        src = Source()
        self.cases[tag] = src.lines
        self.names[tag] = (f.name, where)
        src(describe(f))
        return src

    def enum_map(self, f: FieldPlan) -> str | None:
        if f.enum is None:
            return None
        e = f.enum
        return self.ctx.scope.shared(("enum", e), f"E_{e.__name__}", lambda: {int(m): m for m in e})

    def default(self, f: FieldPlan) -> str:
        if f.default is None:
            return "None"
        if f.enum is not None:
            return self.ctx.const(f.default, f"D_{f.enum.__name__}")
        return repr(f.default)


def _keep_unknown_enum(p: _Parse, src: Source, number: int, packed: bool) -> None:
    """Emit: keep the non-member value just read of a closed enum as an unknown varint field.

    Closed enums (proto2; "Enum Behavior" on protobuf.dev): a number that is not a
    member is not stored in the field but kept as an unknown varint field of the same
    field number, as Google's runtimes do (a map entry holding one is kept whole).
    The bytes are those upb keeps: a value that arrived as a field of its own is kept
    as it arrived, tag and varint (``data[start:pos]``, an over-long varint too); an
    element of a packed run (which began at ``_vs``) gets a varint tag of its own and
    the canonical varint of its 64-bit value as read, not narrowed to 32 bits.
    """
    src("if unk is None: unk = bytearray()")
    if packed:
        tag = p.ctx.tag(wire.tag_bytes(number, wire.WIRE_VARINT))
        src(f"unk.extend({tag} + _venc(_rv(data, _vs)[0]))")
    else:
        src("unk.extend(data[start:pos])")


def _read_closed_enum(p: _Parse, src: Source, f: FieldPlan, store: str, packed: bool = False) -> None:
    """Emit: read one value of closed enum field ``f``; ``store`` (reading ``_m``) keeps a member.

    ``packed``: the value is an element of a packed run (see :func:`_keep_unknown_enum`).
    """
    if packed:
        src("_vs = pos")
    _read_scalar(src, _INT32, "v", None)  # an enum is read and narrowed as an int32
    src(f"_m = {p.enum_map(f)}.get(v)")
    src("if _m is None:")
    with src:
        _keep_unknown_enum(p, src, f.number, packed)
    src("else:")
    with src:
        src(store)


def _packed_tuple(p: _Parse, src: Source, f: FieldPlan) -> None:
    """Emit: ``_r`` = the elements of the packed run ``data[pos:e]`` of ``f``, as a tuple; ``pos = e``."""
    r = row_of(f.type)
    kind = r
    if r.width:
        src(f"if n % {r.width}:")
        with src:
            src(f'raise DecodeError("packed {r.name} run of " + str(n) + " bytes is not a multiple of {r.width}")')
        if kind.op == OP_FLOAT32:  # a NaN makes the sum a NaN; then the NaNs are read again keeping their bits
            src("_r = _unpack_from('<%df' % (n // 4), data, pos); _t = sum(_r)")
            src("if _t != _t: _r = _f32run(data, pos, e, _r)")
            src("pos = e")
            return
        src(f"_r = _unpack_from('<%d{(r.struct_format or '')[1:]}' % (n // {r.width}), data, pos); pos = e")
        return
    lookup = p.enum_map(f)
    slow = f"_packed_varints(data, pos, e, {f.type}{', ' + lookup + '.get' if lookup else ''})"
    if r.zigzag:
        src(f"_r = {slow}; pos = e")
        return
    # every element is one byte when no byte has its high bit set
    src("_q = data[pos:e]")
    if kind.op == OP_ENUM:
        fast = f"tuple(map({lookup}.get, _q, _q))"
    elif kind.op == OP_BOOL:
        fast = "tuple(map(bool, _q))"
    else:
        fast = "tuple(_q)"
    src(f"_r = {fast} if _q.isascii() else {slow}; pos = e")


def _plan_repeated(p: _Parse, f: FieldPlan) -> None:
    loc = f"f{f.idx}"
    kind = kind_of(f.type)
    p.locals.append((loc, "None"))
    if kind is None:
        p.store.append((f.name, f"() if {loc} is None else tuple({loc})"))
        if f.group:
            src = p.case(wire.make_tag(f.number, wire.WIRE_SGROUP), f, loc)
            src(f"if {loc} is None: {loc} = []")
            _check_depth(src)
            _group_body(p, src, f, "x")
            src(f"{loc}.append(x); pos = e")
        else:
            src = p.case(wire.make_tag(f.number, wire.WIRE_LEN), f, loc)
            src(f"if {loc} is None: {loc} = []")
            _read_len(src)
            _check_depth(src)
            src(f"{loc}.append(parse_{p.ctx.stem(f.sub)}(data, pos, e, depth - 1, None, 0)); pos = e")
        return
    if kind is not None and kind.is_len:
        p.store.append((f.name, f"() if {loc} is None else tuple({loc})"))
        src = p.case(wire.make_tag(f.number, wire.WIRE_LEN), f, loc)
        src(f"if {loc} is None: {loc} = []")
        _read_len(src)
        src(f"{loc}.append({_len_value(kind, f.utf8)}); pos = e")
        return
    # scalars: the element form and the packed form are both accepted; a first packed run is
    # kept as the tuple it is read into (t<i>), with no list in between
    run = f"t{f.idx}"
    p.locals.append((run, "()"))
    p.store.append((f.name, f"{run} if {loc} is None else tuple({loc})"))
    src = p.case(wire.make_tag(f.number, row_of(f.type).wire_type), f, loc)
    src(f"if {loc} is None: {loc} = list({run})")
    if f.closed:
        _read_closed_enum(p, src, f, f"{loc}.append(_m)")
    else:
        _read_scalar(src, kind, "v", p.enum_map(f))
        src(f"{loc}.append(v)")
    src = p.case(wire.make_tag(f.number, wire.WIRE_LEN), f, loc)
    _read_len(src)
    if f.closed:
        src(f"if {loc} is None: {loc} = list({run})")
        src("while pos < e:")
        with src:
            _read_closed_enum(p, src, f, f"{loc}.append(_m)", packed=True)
        src("if pos != e:")
        with src:
            src('raise DecodeError("packed run ends inside its last element")')
        return
    _packed_tuple(p, src, f)
    src(f"if {loc} is None and not {run}:")
    with src:
        src(f"{run} = _r")
    src("else:")
    with src:
        src(f"if {loc} is None: {loc} = list({run})")
        src(f"{loc}.extend(_r)")


def _group_body(p: _Parse, src: Source, f: FieldPlan, var: str) -> None:
    """Emit: parse the group body at ``pos`` up to its end tag into ``var``; ``pos`` after the end tag."""
    end_tag = wire.make_tag(f.number, wire.WIRE_EGROUP)
    src(f"{var}, e = parse_{p.ctx.stem(f.sub)}(data, pos, end, depth - 1, None, {end_tag})")
    src(f"if {var} is None: raise _group_failed({f.number}, e)")


def _plan_singular(p: _Parse, f: FieldPlan) -> None:
    loc = f"f{f.idx}"
    p.locals.append((loc, p.default(f)))
    p.store.append((f.name, loc))
    if f.type == MESSAGE:
        _plan_message(p, f, loc)
        return
    r = kind = row_of(f.type)
    src = p.case(wire.make_tag(f.number, r.wire_type), f, None)
    if r.is_len:
        _read_len(src)
        src(f"{loc} = {_len_value(kind, f.utf8)}; pos = e")
    elif f.closed:
        _read_closed_enum(p, src, f, f"{loc} = _m")
    else:
        _read_scalar(src, kind, loc, p.enum_map(f))


def _inline_leaf(p: _Parse, src: Source, f: FieldPlan, leaf: MessagePlan, target: str) -> None:
    """Emit: parse the leaf sub-message ``data[pos:e]`` of ``f`` inline into ``target``; ``pos = e``.

    Only the regular case is inline: known fields with their own tags. Anything
    else (an unknown field, a malformed value) parses the span again with the
    leaf's own function, which keeps unknown fields or raises the error it
    always raised, with its path.
    """
    stem = p.ctx.stem(f.sub)
    src(comment(f"# {leaf.full_name}, inline"))
    src("_ls = pos")
    src("try:")
    with src:
        src("; ".join(f"l{g.idx} = {p.default(g)}" for g in leaf.fields))
        src("while pos < e:")
        with src:
            src("t = data[pos]")
            for i, (tag, idx, _) in enumerate(leaf.dispatch):
                g = leaf.fields[idx]
                src(f"{'if' if i == 0 else 'elif'} t == {tag}:")
                with src:
                    src("pos += 1")
                    _read_scalar(src, row_of(g.type), f"l{g.idx}", p.enum_map(g))
            src("else:")
            with src:
                src("break")
        src("if pos == e:")
        with src:
            src(f"x = _new({p.ctx.const(leaf.slots_class, f'Slots_{stem}')})")
            for g in leaf.fields:
                src(f"x.{g.name} = l{g.idx}")
            src('x._pbj_unknown = b""; x._pbj_size = -1')
            src(f"x.__class__ = {p.ctx.const(leaf.cls, f'Class_{stem}')}")
        src("else:")
        with src:
            src(f"x = parse_{stem}(data, _ls, e, depth - 1, None, 0)")
    src("except Exception:")
    with src:
        src(f"x = parse_{stem}(data, _ls, e, depth - 1, None, 0)")
    src(f"{target} = x; pos = _ls")


def _plan_message(p: _Parse, f: FieldPlan, loc: str, oneof: str | None = None) -> None:
    """A singular sub-message: parsed on its first occurrence; later ones merge into it."""
    sub = p.ctx.stem(f.sub)
    # {loc}_s and {loc}_e are set by the first occurrence and read only after a second one
    p.locals.append((f"{loc}_more", "None"))
    present = f"{oneof} is not None and {oneof}[0] == {f.name!r}" if oneof else f"{loc} is not None"
    if f.group:
        src = p.case(wire.make_tag(f.number, wire.WIRE_SGROUP), f, None)
        _check_depth(src)
        elen = len(f.end_tag)
        src(f"if {present}:")
        with src:
            src(f"e = _skip(data, pos, {wire.make_tag(f.number, wire.WIRE_SGROUP)}, end, depth)")
            src(f"if {loc}_more is None: {loc}_more = []")
            src(f"{loc}_more.append((pos, e - {elen})); dup = True")
        src("else:")
        with src:
            if oneof:
                _check_superseded(p, src, f, loc)
            _group_body(p, src, f, "x")
            if oneof:
                src(f"{oneof} = _tnew(_OneOf, ({f.name!r}, x))")
            else:
                src(f"{loc} = x")
            src(f"{loc}_s = pos; {loc}_e = e - {elen}")
        src("pos = e")
    else:
        tag = wire.make_tag(f.number, wire.WIRE_LEN)
        value = f"parse_{sub}(data, pos, e, depth - 1, None, 0)"
        first = Source()
        for src in (p.case(tag, f, None), first):
            if src is first:
                src(describe(f))
            _read_len(src)
            _check_depth(src)
            if src is not first:
                src(f"if {present}:")
                with src:
                    src(f"if {loc}_more is None: {loc}_more = []")
                    src(f"{loc}_more.append((pos, e)); dup = True")
                src("else:")
                src.depth += 1
            leaf = p.ctx.leaf(f.sub) if not oneof else None
            if oneof:
                _check_superseded(p, src, f, loc)
                src(f"{oneof} = _tnew(_OneOf, ({f.name!r}, {value}))")
            elif leaf is not None:
                _inline_leaf(p, src, f, leaf, loc)
            else:
                src(f"{loc} = {value}")
            src(f"{loc}_s = pos; {loc}_e = e")
            if src is not first:
                src.depth -= 1
            src("pos = e")
        p.first[tag] = first.lines
    fin = Source()
    fin(f"if {loc}_more is not None:")
    with fin:
        fin(f"{loc}_more.reverse()")
        # the error path names this field: ``tag`` is the last tag read, maybe another field's
        fin("try:")
        with fin:
            fin(f"x = parse_{sub}(data, {loc}_s, {loc}_e, depth - 1, {loc}_more, 0)")
        fin("except DecodeError as _x:")
        with fin:
            fin(f"_x.path.insert(0, {f.name!r}); tag = 0; raise")
        if oneof:
            # parsed even when another member came later: a superseded occurrence is still checked
            fin(f"if {oneof}[0] == {f.name!r}: {oneof} = _tnew(_OneOf, ({f.name!r}, x))")
        else:
            fin(f"{loc} = x")
    p.finish += fin.lines


def _check_superseded(p: _Parse, src: Source, f: FieldPlan, loc: str) -> None:
    """Emit, before oneof member ``f`` starts a new run: parse the later occurrences of its last run.

    Oneof member ``f`` was set, occurred again (those spans wait in ``{loc}_more``), then
    another member replaced it, and now ``f`` comes back. Its value starts afresh, but the
    waiting occurrences are still parsed, and so checked, as upb checks every occurrence
    ("Last One Wins" in "Encoding" keeps the value, not the malformed bytes). The result is dropped.
    """
    src(f"if {loc}_more is not None:  # the occurrences of a superseded run, checked before they are dropped")
    with src:
        src(f"{loc}_more.reverse(); parse_{p.ctx.stem(f.sub)}(data, {loc}_s, {loc}_e, depth - 1, {loc}_more, 0)")
        src(f"{loc}_more = None")


def _plan_oneof(p: _Parse, j: int) -> None:
    oneof = p.plan.oneofs[j]
    loc = f"o{j}"
    p.locals.append((loc, "None"))
    p.store.append((oneof.name, loc))
    for i in oneof.members:
        m = p.plan.fields[i]
        if m.type == MESSAGE:
            _plan_message(p, m, f"f{m.idx}", oneof=loc)
            continue
        r = kind = row_of(m.type)
        src = p.case(wire.make_tag(m.number, r.wire_type), m, None)
        if r.is_len:
            _read_len(src)
            src(f"{loc} = _tnew(_OneOf, ({m.name!r}, {_len_value(kind, m.utf8)})); pos = e")
        elif m.closed:
            _read_closed_enum(p, src, m, f"{loc} = _tnew(_OneOf, ({m.name!r}, _m))")
        else:
            _read_scalar(src, kind, "v", p.enum_map(m))
            src(f"{loc} = _tnew(_OneOf, ({m.name!r}, v))")


def _plan_map(p: _Parse, f: FieldPlan) -> None:
    loc = f"f{f.idx}"
    p.locals.append((loc, "None"))
    p.store.append((f.name, f"_EMPTY_MAP if {loc} is None else _FrozenMap({loc})"))
    kkind = row_of(f.key)
    vkind = kind_of(f.type)
    src = p.case(wire.make_tag(f.number, wire.WIRE_LEN), f, ("map", kkind.name))
    _read_len(src)
    src(f"if {loc} is None: {loc} = {{}}")
    key_default = repr(row_of(f.key).zero)
    if vkind is None:
        value_default = "None"
    elif vkind.op == OP_ENUM:
        value_default = p.ctx.const(f.default if f.default is not None else enum_default(f.enum),
                                    f"D_{f.enum.__name__}")
    else:
        value_default = repr(row_of(f.type).zero)
    src(f"k = {key_default}; x = {value_default}; _u = False{'; _xm = None' if vkind is None else ''}")
    src("while pos < e:")
    with src:
        src("t = data[pos]")
        src("if t < 128:")
        with src:
            src("pos += 1")
        src("else:")
        with src:
            src("t, pos = _rtag(data, pos)")
        ktag = wire.make_tag(1, row_of(f.key).wire_type)
        vtag = wire.make_tag(2, wire.WIRE_LEN if f.type == MESSAGE else row_of(f.type).wire_type)
        src(f"if t == {ktag}:")
        with src:
            _entry_read(p, src, kkind, "k", f, None)
        src(f"elif t == {vtag}:")
        with src:
            _entry_read(p, src, vkind, "x", f, p.enum_map(f))
            if f.closed:  # a non-member, even one a later member replaces, keeps the entry whole
                src("if x.__class__ is int: _u = True")
        src("else:")
        with src:
            src("pos = _skip(data, pos, t, e, depth); _u = True")
    src("if pos != e:")
    with src:
        src('raise DecodeError("map entry overruns its length")')
    if vkind is None:
        src("if _xm is not None:")
        with src:
            src("_xm.reverse()")
            src(f"x = parse_{p.ctx.stem(f.sub)}(data, _xs, _xe, depth - 1, _xm, 0)")
        cls = p.ctx.batch.classes[f.sub]
        empty = p.ctx.scope.shared(("empty", cls), f"EMPTY_{p.ctx.stem(f.sub)}", cls)
        src(f"if x is None: x = {empty}")
    # An entry holding an unknown field (or a closed enum's non-member value) is kept whole as an
    # unknown field of this message, as upb does; it is not added to the map.
    src("if _u:")
    with src:
        src("if unk is None: unk = bytearray()")
        src("unk.extend(data[start:e])")
    src("else:")
    with src:
        src(f"{loc}[k] = x")


def _entry_read(p: _Parse, src: Source, kind: ScalarType | None, var: str, f: FieldPlan, enum_map: str | None) -> None:
    if kind is None or kind.is_len:
        src("_n = data[pos]")
        src("if _n < 128:")
        with src:
            src("pos += 1")
        src("else:")
        with src:
            src("_n, pos = _rsize(data, pos)")
        src("_ee = pos + _n")
        src("if _ee > e:")
        with src:
            src('raise DecodeError("truncated input: map entry value runs past the entry")')
        if kind is None:
            # a value that occurs again merges into the first ("Maps": an entry is a message), over all
            # its spans at the end of the entry, as _plan_message does
            _check_depth(src)
            src(f"if {var} is None:")
            with src:
                src(f"{var} = parse_{p.ctx.stem(f.sub)}(data, pos, _ee, depth - 1, None, 0); _xs = pos; _xe = _ee")
            src("else:")
            with src:
                src("if _xm is None: _xm = []")
                src("_xm.append((pos, _ee))")
            src("pos = _ee")
        else:
            value = str_decode("data[pos:_ee]", f.utf8) if kind.op == OP_STRING else "data[pos:_ee]"
            src(f"{var} = {value}; pos = _ee")
    else:
        _read_scalar(src, kind, var, enum_map)


def _unknown(src: Source) -> None:
    """Emit the unknown-field branch: the end of a group body, or a field kept as unknown."""
    src("if tag & 7 == 4 and group:")
    with src:
        src("if tag == group: break")
        src("return None, tag")
    src("pos = _skip(data, pos, tag, end, depth)")
    src("if unk is None: unk = bytearray()")
    src("unk.extend(data[start:pos])")


def _emit_dispatch(src: Source, p: _Parse, tags: list[int]) -> None:
    """Emit the tag dispatch: a chain of ifs, or a binary tree over the sorted tags."""
    if len(tags) <= _LINEAR_LIMIT:
        for i, tag in enumerate(tags):
            src(f"{'if' if i == 0 else 'elif'} tag == {tag}:")
            with src:
                for line in p.cases[tag]:
                    src(line)
        src("else:" if tags else "if True:")
        with src:
            _unknown(src)
        return
    mid = len(tags) // 2
    src(f"if tag < {tags[mid]}:")
    with src:
        _emit_dispatch(src, p, tags[:mid])
    src("else:")
    with src:
        _emit_dispatch(src, p, tags[mid:])


#: Oneofs with more members than this are left to the dispatch loop: each absent member costs
#: the prefix one comparison.
_PREFIX_ONEOF_MEMBERS = 4
#: The most steps (fields) in the prefix.
_PREFIX_STEPS = 40


def _prefix(src: Source, p: _Parse) -> None:
    """Emit the straight-line prefix: the fields in field-number order, while they arrive so.

    Each step compares the tag byte at ``pos`` with the next field's tag (a
    repeated field loops while its tag repeats); the first tag out of order,
    or an unknown one, ends the prefix without being consumed, and the
    dispatch loop takes over from there: nothing is read twice.
    """
    plan = p.plan
    primary: dict[int, int] = {}
    for tag, idx, form in plan.dispatch:
        f = plan.fields[idx]
        if f.label == PACKED and form != PACKED_RUN:
            continue  # a packed field is expected as its LEN run
        if f.label != PACKED and form == PACKED_RUN:
            continue
        primary.setdefault(idx, tag)
    steps = []
    for f in plan.fields:
        if f.idx not in primary:
            continue
        if f.oneof >= 0 and len(plan.oneofs[f.oneof].members) > _PREFIX_ONEOF_MEMBERS:
            continue
        steps.append((f, primary[f.idx]))
    steps = steps[:_PREFIX_STEPS]
    if not steps:
        return
    src("# fields in field-number order while they arrive so; the loop below takes the rest")
    src("nt = data[pos] if pos < end else 0  # the next tag's first byte (``tag`` keeps the last tag read)")
    for f, tag in steps:
        raw = wire.tag_bytes(tag >> 3, tag & 7)
        loop = "while" if f.label in (REPEATED, PACKED) else "if"
        if len(raw) == 1:
            src(f"{loop} nt == {tag}:")
        else:
            # the whole tag inside the message: a tag the input's end cuts is the loop's (which reads
            # it as every tag is read, so the error of a cut tag is the same wherever it falls)
            src(f"{loop} nt == {raw[0]} and pos + {len(raw) - 1} < end and "
                + " and ".join(f"data[pos + {i}] == {b}" for i, b in enumerate(raw) if i) + ":")
        with src:
            src(f"start = pos; tag = {tag}; pos += {len(raw)}")
            for line in p.first.get(tag, p.cases[tag]):
                src(line)
            src("nt = data[pos] if pos < end else 0")


def emit_parse(ctx: Emit, plan: MessagePlan) -> str:
    """Source of ``parse_<Name>(data, pos, end, depth, more, group=0)``."""
    p = _Parse(ctx, plan)
    for f in plan.fields:
        if f.label == MEMBER:
            continue
        if f.label == MAP:
            _plan_map(p, f)
        elif f.label in (REPEATED, PACKED):
            _plan_repeated(p, f)
        else:
            _plan_singular(p, f)
    for j in range(len(plan.oneofs)):
        _plan_oneof(p, j)
    assert sorted(p.cases) == [t for t, _, _ in plan.dispatch], "the plan's dispatch and the cases differ"
    names = ctx.const(p.names, f"FIELDS_{p.stem}")
    slots = ctx.const(plan.slots_class, f"Slots_{p.stem}")
    cls = ctx.const(plan.cls, f"Class_{p.stem}")
    src = Source()
    src(f"def parse_{p.stem}(data, pos, end, depth, more, group=0):")
    with src:
        for loc, default in p.locals:
            src(f"{loc} = {default}")
        if p.finish:
            src("dup = False")
        src("unk = None")
        src("try:")
        with src:
            _prefix(src, p)
            src("while True:")
            with src:
                src("while pos < end:")
                with src:
                    src("start = pos")
                    src("tag = data[pos]")
                    src("if tag < 128:")
                    with src:
                        src("pos += 1")
                    src("else:")
                    with src:
                        src("_t2 = data[pos + 1]")
                        src("if _t2 < 128:")
                        with src:
                            src("tag = (tag & 127) | (_t2 << 7); pos += 2")
                        src("else:")
                        with src:
                            src("tag, pos = _rtag(data, pos)")
                    _emit_dispatch(src, p, sorted(p.cases))
                src("else:")
                with src:
                    src("if pos != end:")
                    with src:
                        src(f'raise DecodeError("{LAST_FIELD_PAST_END}")')
                    src("if not more:")
                    with src:
                        src("if group: return None, 0")
                        src("break")
                    src("pos, end = more.pop()")
                    src("continue")
                src("break  # the end tag of a group body")
            if p.finish:
                src("if dup:  # a sub-message occurred more than once: parse all its spans as one")
                with src:
                    for line in p.finish:
                        src(line)
        src("except Exception as exc:")
        with src:
            src(f"raise _locate(exc, {names}, locals()) from None")
        if plan.extension_ranges:
            registry = ctx.const(plan.extension_registry, f"Extensions_{p.stem}")
            src("# the unknown fields that are extensions registered for this class (pbj.extensions.wire)")
            src(f"if unk is not None: _xt, unk = {ctx.extensions_helper('take')}({registry}, "
                f"{plan.message_set}, unk, depth)")
            src("else: _xt = ()")
        src(f"o = _new({slots})")
        for attr, expr in p.store:
            src(ctx.set(plan, attr, expr))
        if plan.extension_ranges:
            src("o._pbj_extensions = _xt")
        src('o._pbj_unknown = bytes(unk) if unk is not None else b""')
        src("o._pbj_size = -1")
        src(f"o.__class__ = {cls}")
        src("if group: return o, pos")
        src("return o")
    return src.text()
