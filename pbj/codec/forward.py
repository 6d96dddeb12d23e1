"""The forward writer's emitter: ``size_<Name>`` and ``write_<Name>`` from a plan.

The contract of the generated functions:

``size_<Name>(o) -> int``
    Returns the encoded size of ``o`` in bytes (without its own tag and
    length) and caches it in ``o._pbj_size``. Sub-messages' sizes come from
    their cache or are measured (and cached) on the way.

``write_<Name>(o, ap) -> int``
    Appends the encoding of ``o`` to a list through ``ap`` (its bound
    ``append``), as ``bytes`` pieces: fields in ascending field number, each
    as tag then value (LEN values as length then bytes), the unknown fields
    last, in arrival order; returns the number of bytes appended. It reads
    nested lengths from the cached sizes (``size_<Name>`` ran on ``o``, or
    an earlier write cached them) and checks each against the bytes its
    sub-message's writer adds: one that does not match (a size set by hand,
    or a value changed since it was measured) raises ``_StaleSize``
    (:class:`pbj.codec.runtime.StaleSize`), and ``pbj.encode`` measures again.

``write_fresh_<Name>(o, parts, ap) -> int``
    The same in one pass with no size cached: a sub-message whose size is
    not cached is written first, its tag and length put after into a place
    kept for them in ``parts``; every size it learns is cached.

A sub-message of another class than its field's is refused (``EncodeError``,
which ``pbj.encode`` completes with the field's path).

A oneof is written through per-member functions ``size_<Name>__<oneof>__<member>(v)``
and ``write_<Name>__<oneof>__<member>(v, ap)`` found in a table keyed by the
member's name (one lookup whatever the number of members).

``pbj.encode`` joins the pieces once. Appending ``bytes`` pieces to a list
and joining them costs less in CPython than any store into a preallocated
``bytearray`` (``../shared/PERF-NOTES.md``); the 1- and 2-byte varints come
from a table (:data:`pbj.wire.VARINT_BYTES`).

Output is deterministic: map entries sorted by key (Python's order of ints,
``False < True``, and code-point order of strings, which is the bytewise
order of their UTF-8), every entry written with both key and value.
"""

from __future__ import annotations

from contextlib import nullcontext

from pbj import wire
from pbj.codec.emit import (
    INT_OPS,
    Emit,
    FieldShapes,
    bytes_value,
    class_check,
    describe,
    describe_run,
    emit_field,
    emit_run_head,
    kind_of,
    presence_test,
    str_encode,
    text_size,
)
from pbj.codec.plan import (
    EXTENSIONS,
    FIELD,
    IMPLICIT,
    MESSAGE,
    FieldPlan,
    MessagePlan,
    row_of,
)
from pbj.codec.source import Source, comment
from pbj.codec.wide import is_row, is_wide, step_number
from pbj.scalars import OP_BOOL, OP_BYTES, OP_FLOAT32, OP_STRING, OP_ZIGZAG, ScalarType

__all__ = ["emit_forward", "emit_size", "emit_write", "emit_write_fresh", "emit_oneof_members", "size_expr"]


def size_expr(kind: ScalarType, v: str) -> str:
    """Source for the encoded size of one scalar value (no tag)."""
    if kind.op in INT_OPS:
        return (f"(1 if 0 <= {v} < 128 else 2 if 0 <= {v} < 16384 else 3 if 0 <= {v} < 2097152 "
                f"else 4 if 0 <= {v} < 268435456 else _vsize({v}, {kind.name!r}))")
    if kind.op == OP_ZIGZAG:
        zz = f"_zz{kind.bits}"
        return (f"(1 if -64 <= {v} < 64 else 2 if -8192 <= {v} < 8192 else 3 if -1048576 <= {v} < 1048576 "
                f"else 4 if -134217728 <= {v} < 134217728 else _vsize({zz}({v})))")
    if kind.op == OP_BOOL:
        return "1"
    width = kind.width
    if width:
        return str(width)
    raise AssertionError(kind)


def value_expr(ctx: Emit, kind: ScalarType, v: str) -> str:
    """Source for the bytes of one scalar value (no tag)."""
    if kind.op in INT_OPS:
        return f"(_V[{v}] if 0 <= {v} < 16384 else _venc({v}, {kind.name!r}))"
    if kind.op == OP_ZIGZAG:
        bits = kind.bits or 64
        return f"(_V[_z] if 0 <= (_z := ({v} << 1) ^ ({v} >> {bits - 1})) < 16384 else _venc(_zz{bits}({v})))"
    if kind.op == OP_BOOL:
        return f"(_B1 if {v} else _B0)"
    if kind.op == OP_FLOAT32:  # a NaN keeps its bits (pbj.codec.float32)
        return f"(_S_float.pack({v}) if {v} == {v} else _f32b({v}))"
    return f"_S_{kind.name}.pack({v})"


def tagged_expr(ctx: Emit, tag: bytes, kind: ScalarType, v: str) -> str:
    """Source for the bytes of a tag and one scalar value, as one piece."""
    tv = ctx.tv(tag)
    t = ctx.tag(tag)
    if kind.op in INT_OPS:
        return (f"({tv}[{v}] if 0 <= {v} < 128 else {t} + _V[{v}] if 0 <= {v} < 16384 "
                f"else {t} + _VM[{v} & 16383] + _V[{v} >> 14] if 0 <= {v} < 268435456 "
                f"else {t} + _venc({v}, {kind.name!r}))")
    if kind.op == OP_ZIGZAG:
        bits = (kind.bits or 64) - 1
        return (f"({tv}[_z] if 0 <= (_z := ({v} << 1) ^ ({v} >> {bits})) < 128 else {t} + _V[_z] if _z < 16384 "
                f"else {t} + _VM[_z & 16383] + _V[_z >> 14] if _z < 268435456 "
                f"else {t} + _venc(_zz{bits + 1}({v})))")
    if kind.op == OP_BOOL:
        return f"({tv}[1] if {v} else {tv}[0])"
    packed = f"{ctx.tagged_struct(tag, kind)}.pack({', '.join(str(b) for b in tag)}, {v})"
    if kind.op == OP_FLOAT32:  # a NaN keeps its bits (pbj.codec.float32)
        return f"({packed} if {v} == {v} else {ctx.tag(tag)} + _f32b({v}))"
    return packed


def tagged_len(ctx: Emit, tag: bytes, n: str) -> str:
    """Source for the bytes of a tag and a length ``n``, as one piece."""
    return f"({ctx.tv(tag)}[{n}] if {n} < 128 else {ctx.tag(tag)} + _venc({n}))"


def _lensize_expr(n: str) -> str:
    return f"(1 if {n} < 128 else 2 if {n} < 16384 else _vsize({n}))"


# ---------------------------------------------------------------- sizing

def _check_class(ctx: Emit, src: Source, f: FieldPlan, v: str) -> None:
    """Emit the refusal of a sub-message ``v`` of another class than ``f``'s (by identity: one of
    another class with the same field names would be written with its other fields dropped)."""
    src(class_check(ctx, f, v))


def _size_sub(ctx: Emit, src: Source, f: FieldPlan, v: str, acc: str = "n") -> None:
    """Emit ``acc += <size of sub-message v with its tag and length (or group tags)>``."""
    _check_class(ctx, src, f, v)
    src(f"_s = {v}._pbj_size")
    src(f"if _s < 0: _s = size_{ctx.stem(f.sub)}({v})")
    if f.group:
        src(f"{acc} += {len(f.tag) + len(f.end_tag)} + _s")
    else:
        src(f"{acc} += {len(f.tag)} + {_lensize_expr('_s')} + _s")


def _size_value(src: Source, kind: ScalarType, v: str, tagsize: int, acc: str = "n", utf8: bool = True) -> None:
    """Emit ``acc += <size of a tag of tagsize bytes and the scalar v>``."""
    if kind.op == OP_STRING:
        src(f"_l = {text_size(v, utf8)}")
        src(f"{acc} += {tagsize} + {_lensize_expr('_l')} + _l")
    elif kind.op == OP_BYTES:
        src(f"_l = len({bytes_value(v)})")
        src(f"{acc} += {tagsize} + {_lensize_expr('_l')} + _l")
    else:
        se = size_expr(kind, v)
        src(f"{acc} += {tagsize + 1 if se == '1' else f'{tagsize} + {se}'}")


class _Sizes(FieldShapes):
    """The sizer's shapes: ``n += <the field's size>``."""

    def single(self, src: Source, f: FieldPlan, v: str) -> None:
        kind = kind_of(f.type)
        if kind is None:
            _size_sub(self.ctx, src, f, v)
        else:
            _size_value(src, kind, v, len(f.tag), utf8=f.utf8)

    def repeated(self, src: Source, f: FieldPlan) -> bool:
        if f.width:  # every value the same size
            src(f"n += len(v) * {len(f.tag) + f.width}")
            return True
        return False

    def packed(self, src: Source, f: FieldPlan) -> None:
        if f.width:
            src("_p = len(v)" if f.width == 1 else f"_p = len(v) * {f.width}")
        else:
            src("_p = 0")
            src("for x in v:")
            with src:
                src(f"_p += {size_expr(row_of(f.type), 'x')}")
        src(f"n += {len(f.tag)} + {_lensize_expr('_p')} + _p")

    def map(self, src: Source, f: FieldPlan) -> None:
        src("for k, x in v.items():")
        with src:
            src("_e = 0")
            _size_value(src, row_of(f.key), "k", 1, "_e", f.utf8)  # key and value: field numbers 1 and 2
            if f.type == MESSAGE:
                _check_class(self.ctx, src, f, "x")
                src("_s = x._pbj_size")
                src(f"if _s < 0: _s = size_{self.ctx.stem(f.sub)}(x)")
                src(f"_e += 1 + {_lensize_expr('_s')} + _s")
            else:
                _size_value(src, row_of(f.type), "x", 1, "_e", f.utf8)
            src(f"n += {len(f.tag)} + {_lensize_expr('_e')} + _e")


def _oneof_table(ctx: Emit, plan: MessagePlan, j: int, role: str) -> str:
    return ctx.scope.shared((role, plan.idx, j), f"{role}_{ctx.stem(plan.idx)}__{plan.oneofs[j].name}", dict)


def _dispatch(ctx: Emit, src: Source, plan: MessagePlan, j: int, members: tuple[int, ...], role: str,
              call: str) -> None:
    """Emit the dispatch on a oneof's set member, for the members of one run."""
    table = _oneof_table(ctx, plan, j, role)
    emit_run_head(ctx, src, plan, j, members)
    with src:
        src(call.format(fn=f"{table}[v[0]]"))


#: A oneof with at most this many members is written by a chain of comparisons of the member
#: name with the members' code inline (no call); a larger one through its table.
_INLINE_ONEOF_MEMBERS = 8


def _write_oneof_inline(ctx: Emit, src: Source, plan: MessagePlan, j: int, members: tuple[int, ...],
                        fresh: bool) -> None:
    """Emit the write of a oneof's set member for the members of one run, inline."""
    oneof = plan.oneofs[j]
    src(describe_run(plan, j, members))
    src(f"v = {ctx.get(plan, oneof.name)}")
    src("if v is not None:")
    with src:
        src("w = v[0]; x = v[1]")
        for k, i in enumerate(members):
            m = plan.fields[i]
            src(f"{'if' if k == 0 else 'elif'} w == {m.name!r}:")
            with src:
                _write_single(ctx, src, m, "x", fresh)
        every = ctx.const(frozenset(plan.fields[i].name for i in oneof.members),
                          f"members_{ctx.stem(plan.idx)}__{oneof.name}")
        src(f"elif w not in {every}:")
        with src:
            src("raise KeyError(w)  # not a member: the caller names the field")


def _size_step(ctx: Emit, src: Source, plan: MessagePlan, step: int, i: int, members: tuple[int, ...]) -> None:
    """Emit ``n += <the size of write step (step, i, members)>`` (:attr:`MessagePlan.writes`)."""
    if step == FIELD:
        emit_field(ctx, src, plan, plan.fields[i], _Sizes(ctx))
    elif step == EXTENSIONS:
        lo, hi = plan.extension_ranges[i]
        src(f"# extensions {lo} to {hi - 1}")
        src(f"if o._pbj_extensions: n += {ctx.extensions_helper('size_range')}(o._pbj_extensions, {lo}, {hi})")
    else:
        _dispatch(ctx, src, plan, i, members, "size", "n += {fn}(v[1])")


def emit_size(ctx: Emit, plan: MessagePlan) -> str:
    """Source of ``size_<Name>(o)``."""
    if is_wide(plan):
        return _emit_wide(ctx, plan, "size")
    stem = ctx.stem(plan.idx)
    src = Source()
    src(f"def size_{stem}(o):")
    with src:
        src("n = 0")
        for step, i, members in plan.writes:
            _size_step(ctx, src, plan, step, i, members)
        src("u = o._pbj_unknown")
        src("if u: n += len(u)")
        src(f"{_set_size(ctx, plan)}(o, n)")
        src("return n")
    return src.text()


# ---------------------------------------------------------------- writing
#
# Both writers append pieces through ``ap`` and count the bytes they append as they go (each
# branch knows how many), returning the count. ``write_<Name>(o, ap) -> n`` reads nested sizes
# from the cache; ``write_fresh_<Name>(o, parts, ap) -> n`` needs none: it writes a sub-message
# whose size is not cached first and then puts its tag and length into a place kept for them in
# ``parts``, and caches every size it learns, so a second encode of the same objects takes the
# cached path. Values below 2**42 are written from tables with one append per piece, no
# concatenation.
#
# A cached size is private state that Python code can set by hand (``object.__setattr__``), so
# no length is written from one without a check: a sub-message written after the length its
# cache gave must add that many bytes, or the write stops (``_StaleSize``) and ``pbj.encode``
# measures every size again (``pbj.api``). Strings and bytes are written from exact ``bytes``
# (``str.encode``, the buffer protocol: :func:`pbj.codec.emit.str_encode`,
# :func:`pbj.codec.emit.bytes_value`), whose ``len`` is what is appended.

_VARINT_STEPS = (  # (bound, pieces after the tag, bytes): varints from the tables, 14 bits a piece
    (128, None, 1),
    (16384, ("_V[{v}]",), 2),
    (2097152, ("_VM[{v} & 16383]", "_V[{v} >> 14]"), 3),
    (268435456, ("_VM[{v} & 16383]", "_V[{v} >> 14]"), 4),
    (34359738368, ("_VM[{v} & 16383]", "_VM[({v} >> 14) & 16383]", "_V[{v} >> 28]"), 5),
    (4398046511104, ("_VM[{v} & 16383]", "_VM[({v} >> 14) & 16383]", "_V[{v} >> 28]"), 6),
)


def _count(acc: str, k: int | str) -> str:
    """``; acc += k``: the bytes just appended, counted in ``acc``."""
    return f"; {acc} += {k}"


def _put_varint(ctx: Emit, src: Source, tag: bytes, v: str, slow: str, acc: str) -> None:
    """Emit the appends of ``tag`` and the varint of ``v`` (``0 <= v`` checked here); ``slow`` encodes any value."""
    tl = len(tag)
    src(f"if {v} >= 0:")
    with src:
        for i, (bound, pieces, size) in enumerate(_VARINT_STEPS):
            src(f"{'if' if i == 0 else 'elif'} {v} < {bound}:")
            with src:
                if pieces is None:
                    src(f"ap({ctx.tv(tag)}[{v}]){_count(acc, tl + 1)}")
                else:
                    src(f"ap({ctx.tag(tag)}); " + "; ".join(f"ap({p.format(v=v)})" for p in pieces)
                        + _count(acc, tl + size))
        src("else:")
        with src:
            src(f"_b = {slow}; ap({ctx.tag(tag)}); ap(_b){_count(acc, f'{tl} + len(_b)')}")
    src("else:")
    with src:
        src(f"_b = {slow}; ap({ctx.tag(tag)}); ap(_b){_count(acc, f'{tl} + len(_b)')}")


def _put_len(ctx: Emit, src: Source, tag: bytes, n: str, acc: str, extra: str = "") -> None:
    """Emit the appends of ``tag`` and the length ``n`` (counting ``extra`` more bytes)."""
    tl = len(tag)
    more = f" + {extra}" if extra else ""
    src(f"if {n} < 128:")
    with src:
        src(f"ap({ctx.tv(tag)}[{n}]){_count(acc, f'{tl + 1}{more}')}")
    src("else:")
    with src:
        src(f"_lb = _venc({n}); ap({ctx.tag(tag)}); ap(_lb){_count(acc, f'{tl} + len(_lb){more}')}")


def _write_scalar(ctx: Emit, src: Source, tag: bytes, kind: ScalarType, v: str, acc: str,
                  implicit_bool: bool = False, utf8: bool = True) -> None:
    """Emit the appends of a tag and one scalar value ``v`` of ``kind``, counted in ``acc``."""
    tl = len(tag)
    if kind.op == OP_STRING:
        src(f"_b = {str_encode(v, utf8)}; _l = len(_b)")
        _put_len(ctx, src, tag, "_l", acc, "_l")
        src("ap(_b)")
    elif kind.op == OP_BYTES:
        src(f"_b = {bytes_value(v)}; _l = len(_b)")
        _put_len(ctx, src, tag, "_l", acc, "_l")
        src("ap(_b)")
    elif kind.op == OP_BOOL:
        if implicit_bool:
            src(f"ap({ctx.tv(tag)}[1]){_count(acc, tl + 1)}")  # implicit presence: only true is written
        else:
            src(f"ap({ctx.tv(tag)}[1] if {v} else {ctx.tv(tag)}[0]){_count(acc, tl + 1)}")
    elif kind.op in INT_OPS:
        _put_varint(ctx, src, tag, v, f"_venc({v}, {kind.name!r})", acc)
    elif kind.op == OP_ZIGZAG:
        bits = (kind.bits or 64) - 1
        src(f"_z = ({v} << 1) ^ ({v} >> {bits})")
        _put_varint(ctx, src, tag, "_z", f"_venc(_zz{bits + 1}({v}))", acc)
    else:
        width = kind.width or 0
        src(f"ap({tagged_expr(ctx, tag, kind, v)}){_count(acc, tl + width)}")


def _check_written(src: Source, written: str) -> None:
    """Emit the check that a sub-message written after the length ``_s`` (from its cache) added
    ``_s`` bytes (``written``: the count its writer returned)."""
    src(f"if {written} != _s: raise _StaleSize  # a size set by hand, or a value changed since measured")


def _put_sub_len(ctx: Emit, src: Source, tag: bytes, s: str, put: str = "ap({})") -> None:
    """Emit the piece of ``tag`` and a sub-message's length ``s``, stored by ``put`` (a format of
    the piece: appended, or put into the place kept for it), and ``n += s + <its size>``: the
    sub-message's bytes are counted with their tag and length, in one addition."""
    src(f"if {s} < 128: {put.format(f'{ctx.tv(tag)}[{s}]')}; n += {s} + {len(tag) + 1}")
    src(f"else: _lb = {ctx.tag(tag)} + _venc({s}); {put.format('_lb')}; n += {s} + len(_lb)")


def _write_leaf(ctx: Emit, src: Source, f: FieldPlan, leaf: MessagePlan, v: str, fresh: bool) -> None:
    """Emit the write of leaf sub-message ``v`` inline: its tag, length and fields, with no call.

    Its fields are counted in ``m`` (a leaf is small: no large integer is made), and so is every
    byte of it checked against the size ``_s`` its cache gave."""
    src(comment(f"# {leaf.full_name}, inline"))
    src(f"_s = {v}._pbj_size")
    if fresh:
        src("if _s < 0:")
        with src:
            src(f"_i = len(parts); ap({ctx.tag(f.tag)}); m = 0  # kept for the tag and length")
            _leaf_fields(ctx, src, leaf, v, "m")
            src(f"{_set_size(ctx, leaf)}({v}, m)")
            _put_sub_len(ctx, src, f.tag, "m", "parts[_i] = {}")
        src("else:")
    with src if fresh else nullcontext():  # sizes cached
        _put_sub_len(ctx, src, f.tag, "_s")
        src("m = 0")
        _leaf_fields(ctx, src, leaf, v, "m")
        _check_written(src, "m")


def _leaf_fields(ctx: Emit, src: Source, leaf: MessagePlan, w: str, acc: str) -> None:
    for _, i, _ in leaf.writes:
        g = leaf.fields[i]
        src(describe(g))
        src(f"y = {w}.{g.name}")
        src(f"if {presence_test(g, 'y')}:")
        with src:
            _write_scalar(ctx, src, g.tag, row_of(g.type), "y", acc, implicit_bool=g.label == IMPLICIT)
    _write_unknown(src, w, acc)


def _write_unknown(src: Source, o: str, acc: str) -> None:
    """Emit the append of ``o``'s unknown fields (exact bytes: their length is what is counted)."""
    src(f"u = {o}._pbj_unknown")
    src(f"if u: u = {bytes_value('u')}; ap(u){_count(acc, 'len(u)')}")


def _set_size(ctx: Emit, plan: MessagePlan) -> str:
    return ctx.scope.shared(("set_size", plan.cls), f"set_size_{ctx.stem(plan.idx)}",
                            lambda: plan.slots_class._pbj_size.__set__)


def _write_message(ctx: Emit, src: Source, f: FieldPlan, v: str, fresh: bool) -> None:
    """Emit the appends of one sub-message ``v`` with its tag and length (or its group tags)."""
    _check_class(ctx, src, f, v)
    sub = ctx.stem(f.sub)
    leaf = ctx.leaf(f.sub) if not f.group else None
    if leaf is not None:
        _write_leaf(ctx, src, f, leaf, v, fresh)
        return
    if f.group:  # no length: the count of what its writer added is all there is to know
        src(f"ap({ctx.tag(f.tag)})")
        call = f"write_fresh_{sub}({v}, parts, ap)" if fresh else f"write_{sub}({v}, ap)"
        src(f"n += {len(f.tag) + len(f.end_tag)} + {call}")
        src(f"ap({ctx.tag(f.end_tag)})")
        return
    src(f"_s = {v}._pbj_size")
    if fresh:
        src("if _s < 0:")
        with src:
            src(f"_i = len(parts); ap({ctx.tag(f.tag)})  # kept for the tag and length")
            src(f"_s = write_fresh_{sub}({v}, parts, ap)")
            _put_sub_len(ctx, src, f.tag, "_s", "parts[_i] = {}")
        src("else:")
    with src if fresh else nullcontext():  # sizes cached
        _put_sub_len(ctx, src, f.tag, "_s")
        _check_written(src, f"write_{sub}({v}, ap)")


def _write_single(ctx: Emit, src: Source, f: FieldPlan, v: str, fresh: bool) -> None:
    """Emit the appends of one present singular value ``v`` (tag included)."""
    if f.type == MESSAGE:
        _write_message(ctx, src, f, v, fresh)
    else:
        _write_scalar(ctx, src, f.tag, row_of(f.type), v, "n", implicit_bool=f.label == IMPLICIT, utf8=f.utf8)


def _entry_piece(ctx: Emit, src: Source, kind: ScalarType, v: str, number: int, var: str, utf8: bool = True) -> None:
    """Emit ``var = <tag and value of a scalar map-entry part, as one bytes piece>``."""
    tag = wire.tag_bytes(number, kind.wire_type)
    if kind.is_len:
        data = str_encode(v, utf8) if kind.op == OP_STRING else bytes_value(v)
        src(f"_b = {data}\n_l = len(_b)\n{var} = {tagged_len(ctx, tag, '_l')} + _b")
    else:
        src(f"{var} = {tagged_expr(ctx, tag, kind, v)}")


class _Writes(FieldShapes):
    """The writers' shapes: the appends of the field's pieces, counted in ``n``; ``fresh``:
    sub-messages' sizes may not be cached."""

    def __init__(self, ctx: Emit, fresh: bool) -> None:
        super().__init__(ctx)
        self.fresh = fresh

    def single(self, src: Source, f: FieldPlan, v: str) -> None:
        _write_single(self.ctx, src, f, v, self.fresh)

    def packed(self, src: Source, f: FieldPlan) -> None:
        ctx = self.ctx
        kind = row_of(f.type)
        if f.width and kind.op != OP_BOOL:
            fmt = (kind.struct_format or "")[1:]
            src(f"_l = len(v) * {f.width}")
            _put_len(ctx, src, f.tag, "_l", "n", "_l")
            if kind.op == OP_FLOAT32:  # a NaN makes the sum a NaN; then each value keeps its bits
                src("_t = sum(v)")
                src("ap(_spack('<%df' % len(v), *v) if _t == _t else _f32pack(v))")
            else:
                src(f"ap(_spack('<%d{fmt}' % len(v), *v))")
        elif kind.op == OP_BOOL:
            src("_l = len(v)")
            _put_len(ctx, src, f.tag, "_l", "n", "_l")
            src("ap(bytes(map(bool, v)))")
        else:
            # the packed length is measured first: cheaper than caching it
            src("_p = 0")
            src("for x in v:")
            with src:
                src(f"_p += {size_expr(kind, 'x')}")
            _put_len(ctx, src, f.tag, "_p", "n", "_p")
            src("for x in v:")
            with src:
                src(f"ap({value_expr(ctx, kind, 'x')})")

    def map(self, src: Source, f: FieldPlan) -> None:
        """The entries of a map field in ascending key order ("Maps" in "Encoding").

        Each entry's key and (scalar) value are built as pieces first, so the
        entry length is the sum of their lengths, with no second measuring.
        """
        ctx = self.ctx
        src("for k in sorted(v):")
        with src:
            src("x = v[k]")
            _entry_piece(ctx, src, row_of(f.key), "k", 1, "_kb", f.utf8)
            if f.type == MESSAGE:
                _check_class(ctx, src, f, "x")
                src("_s = x._pbj_size")
                src(f"if _s < 0: _s = size_{ctx.stem(f.sub)}(x)")
                src(f"_e = len(_kb) + 1 + {_lensize_expr('_s')} + _s")
                _put_len(ctx, src, f.tag, "_e", "n", "_e")
                src(f"ap(_kb)\nap({tagged_len(ctx, wire.tag_bytes(2, wire.WIRE_LEN), '_s')})")
                _check_written(src, f"write_{ctx.stem(f.sub)}(x, ap)")
            else:
                _entry_piece(ctx, src, row_of(f.type), "x", 2, "_xb", f.utf8)
                src("_e = len(_kb) + len(_xb)")
                _put_len(ctx, src, f.tag, "_e", "n", "_e")
                src("ap(_kb)\nap(_xb)")


def _write_step(ctx: Emit, src: Source, plan: MessagePlan, step: int, i: int, members: tuple[int, ...],
                fresh: bool) -> None:
    """Emit the appends of write step ``(step, i, members)`` (:attr:`MessagePlan.writes`), counted in ``n``."""
    if step == FIELD:
        emit_field(ctx, src, plan, plan.fields[i], _Writes(ctx, fresh))
    elif step == EXTENSIONS:
        lo, hi = plan.extension_ranges[i]
        src(f"# extensions {lo} to {hi - 1}")
        if fresh:
            fn = ctx.extensions_helper("write_fresh_range")
            src(f"if o._pbj_extensions: n += {fn}(o._pbj_extensions, {lo}, {hi}, parts, ap)")
        else:
            fn = ctx.extensions_helper("write_range")
            src(f"if o._pbj_extensions: n += {fn}(o._pbj_extensions, {lo}, {hi}, ap)")
    elif len(plan.oneofs[i].members) <= _INLINE_ONEOF_MEMBERS:
        _write_oneof_inline(ctx, src, plan, i, members, fresh)
    elif fresh:
        _dispatch(ctx, src, plan, i, members, "write_fresh", "n += {fn}(v[1], parts, ap)")
    else:
        _dispatch(ctx, src, plan, i, members, "write", "n += {fn}(v[1], ap)")


def _emit_writer(ctx: Emit, plan: MessagePlan, fresh: bool) -> str:
    if is_wide(plan):
        return _emit_wide(ctx, plan, "write_fresh" if fresh else "write")
    stem = ctx.stem(plan.idx)
    src = Source()
    src(f"def write_fresh_{stem}(o, parts, ap):" if fresh else f"def write_{stem}(o, ap):")
    with src:
        src("n = 0")
        for step, i, members in plan.writes:
            _write_step(ctx, src, plan, step, i, members, fresh)
        _write_unknown(src, "o", "n")
        if fresh:
            src(f"{_set_size(ctx, plan)}(o, n)")
        src("return n")
    return src.text()


#: The arguments of each forward role's generated function, and of a wide message's row functions.
_ARGS = {"size": "o", "write": "o, ap", "write_fresh": "o, parts, ap"}
_ROW_ARGS = {"size": "o, _", "write": "o, _, ap", "write_fresh": "o, _, parts, ap"}


def _emit_wide(ctx: Emit, plan: MessagePlan, role: str) -> str:
    """Source of forward role ``role`` of a wide message: a loop over its table (:mod:`pbj.codec.wide`).

    The table (``<ROLE>_<Name>``, a list with one row ``(function, argument)`` per write step)
    holds the rows of the singular scalar fields; each other step is a function of its own,
    emitted here and put into its row by the line after it.
    """
    stem = ctx.stem(plan.idx)
    args = _ARGS[role]
    table: list = []
    name = ctx.const(table, f"{role.upper()}_{stem}")
    steps = Source()
    for k, (step, i, members) in enumerate(plan.writes):
        f = plan.fields[i] if step == FIELD else None
        if f is not None and is_row(f):
            table.append(ctx.wide_row(plan, f, role))
            continue
        table.append(None)
        number = step_number(plan, step, i, members)
        fn = ctx.scope.name(f"{role}_{stem}__{number}")
        steps(f"def {fn}({_ROW_ARGS[role]}):")
        with steps:
            steps("n = 0")
            if role == "size":
                _size_step(ctx, steps, plan, step, i, members)
            else:
                _write_step(ctx, steps, plan, step, i, members, role == "write_fresh")
            steps("return n")
        steps(f"{name}[{k}] = ({fn}, None)")
    src = Source()
    src(f"def {role}_{stem}({args}):")
    with src:
        src(f"# {len(plan.writes)} write steps: each is the function in its row of {name} (pbj.codec.wide)")
        src("n = 0")
        src(f"for step, a in {name}:")
        with src:
            src(f"n += step({_ROW_ARGS[role].replace(', _', ', a')})")
        if role == "size":
            src("u = o._pbj_unknown")
            src("if u: n += len(u)")
        else:
            _write_unknown(src, "o", "n")
        if role != "write":
            src(f"{_set_size(ctx, plan)}(o, n)")
        src("return n")
    return src.text() + steps.text() if steps.lines else src.text()


def emit_write(ctx: Emit, plan: MessagePlan) -> str:
    """Source of ``write_<Name>(o, ap) -> int`` (sizes cached, each checked against the bytes written)."""
    return _emit_writer(ctx, plan, fresh=False)


def emit_write_fresh(ctx: Emit, plan: MessagePlan) -> str:
    """Source of ``write_fresh_<Name>(o, parts, ap) -> int`` (one pass, sizes learnt and cached)."""
    return _emit_writer(ctx, plan, fresh=True)


def emit_oneof_members(ctx: Emit, plan: MessagePlan) -> str:
    """Source of the per-member size and write functions of every oneof, and their tables.

    ``size_<Name>__<oneof>__<member>(v) -> int``, ``write_<Name>__<oneof>__<member>(v, ap) -> int``
    and ``write_fresh_<Name>__<oneof>__<member>(v, parts, ap) -> int`` handle the member's
    value ``v`` (the last two only for a oneof the writers do not handle inline); the
    tables ``size_<Name>__<oneof>``, ``write_<Name>__<oneof>`` and
    ``write_fresh_<Name>__<oneof>`` (dicts, filled here) map member names to them.
    """
    stem = ctx.stem(plan.idx)
    src = Source()
    for j, oneof in enumerate(plan.oneofs):
        # a oneof the writers handle inline needs only its sizers (for pbj.encoded_size)
        roles = ("size",) if len(oneof.members) <= _INLINE_ONEOF_MEMBERS else ("size", "write", "write_fresh")
        tables = {role: _oneof_table(ctx, plan, j, role) for role in roles}
        for i in oneof.members:
            m = plan.fields[i]
            kind = kind_of(m.type)
            fns = {role: ctx.scope.name(f"{role}_{stem}__{oneof.name}__{m.name}") for role in tables}
            src(f"def {fns['size']}(v):")
            with src:
                src(describe(m))
                src("n = 0")
                if kind is None:
                    _size_sub(ctx, src, m, "v")
                else:
                    _size_value(src, kind, "v", len(m.tag), utf8=m.utf8)
                src("return n")
            for role, fresh in (("write", False), ("write_fresh", True)):
                if role in fns:
                    src(f"def {fns[role]}(v, parts, ap):" if fresh else f"def {fns[role]}(v, ap):")
                    with src:
                        src(describe(m))
                        src("n = 0")
                        _write_single(ctx, src, m, "v", fresh)
                        src("return n")
            for role, fn in fns.items():
                src(f"{tables[role]}[{m.name!r}] = {fn}")
    return src.text() if src.lines else ""


def emit_forward(ctx: Emit, plan: MessagePlan) -> str:
    """The whole forward writer of one class: size, write, write_fresh and the oneof members' functions."""
    parts = (emit_size(ctx, plan), emit_write(ctx, plan), emit_write_fresh(ctx, plan), emit_oneof_members(ctx, plan))
    return "\n".join(t for t in parts if t)
