"""The parser: generated ``parse_<Name>`` functions and the decode-error boundary.

The contract of a generated ``parse_<Name>(data, pos, end, depth, more) -> obj``:

* ``data`` is ``bytes``; the message's encoding is ``data[pos:end]``.
  ``more`` is ``None`` or a list of further ``(pos, end)`` spans, in reverse
  order, that continue the same message: a singular sub-message that occurs
  several times is parsed once over all its occurrences, which merges them
  as the spec says ("Last One Wins" in "Encoding") in linear time.
* ``depth`` is how many more levels of nested messages (and groups) may
  follow; a sub-message is parsed with ``depth - 1`` and refused at 0.
* It reads tags until ``end``: known tags (decided at compile time) go to
  their field's code; anything else, including a known field number with a
  wire type that does not fit, is kept as an unknown field, as Google's
  runtimes do. Repeated scalars accept both packed and unpacked forms.
* It returns a new instance, built on the class's hidden slots base and then
  switched to the frozen class (see :mod:`pbj.schema`).

Errors: low-level failures (``IndexError`` on truncated input,
``UnicodeDecodeError``, ``struct.error``) are not checked value by value;
each generated function catches them once, as the ``try`` costs nothing
until something is raised, and turns them into :class:`~pbj.errors.DecodeError`
with the field path and the offset of the failing field's tag.
"""

from __future__ import annotations

import struct
from typing import Any

from pbj import wire
from pbj.codegen import (
    FIXED_SIZE,
    GENERATED,
    Source,
    codec_name,
    const,
    default_literal,
    fixed_format,
    fixed_struct,
    scalar_kind,
    wire_type_of,
)
from pbj.errors import DecodeError
from pbj.schema import EMPTY_MAP, FieldInfo, FrozenMap, MessageInfo, OneOf, enum_default

__all__ = ["emit_parse", "locate"]

_LINEAR_LIMIT = 6  # up to this many tags, a chain of ifs; above, a binary decision tree


def _reason(exc: BaseException) -> str:
    if isinstance(exc, IndexError | struct.error):
        return "truncated input"
    if isinstance(exc, UnicodeDecodeError):
        return f"invalid UTF-8 in a string field ({exc.reason} at string byte {exc.start})"
    if isinstance(exc, RecursionError):
        return "nesting too deep"
    if isinstance(exc, MemoryError):
        return "input needs more memory than is available"
    return f"{type(exc).__name__}: {exc}"


def locate(exc: BaseException, names: dict[int, tuple[str, str | None]], frame: dict[str, Any]) -> DecodeError:
    """Turn ``exc`` into a DecodeError and add this message's part of the path.

    Args:
        exc: the exception caught in a generated parse function.
        names: tag -> (field name, local variable of a repeated field or None).
        frame: the parse function's locals (read only here, on the error path):
            ``tag`` (the tag being handled when ``exc`` was raised), ``start``
            (the offset of that field's tag) and the repeated fields' lists.

    Returns:
        The DecodeError to raise (``exc`` itself when it is one).
    """
    err = exc if isinstance(exc, DecodeError) else DecodeError(_reason(exc))
    tag = frame.get("tag", 0)
    start = frame.get("start", frame.get("pos", 0))
    if err.offset is None:
        err.offset = start
    entry = names.get(tag)
    if entry is not None and tag >= 128:
        # the failure may lie inside a tag of 2+ bytes whose first byte alone looked like ``tag``
        try:
            whole, _ = wire.read_tag(frame.get("data"), start)
        except Exception:
            whole = None
        if whole != tag:
            entry = None
    if entry is not None:
        name, list_local = entry
        prefix: list = [name]
        if list_local is not None and list_local.startswith("map:"):
            key = _map_key(frame.get("data"), start, list_local[4:])
            if key is not None:
                prefix.append(key)
        elif list_local is not None:
            items = frame.get(list_local)
            prefix.append(len(items) if items is not None else 0)
        err.path[0:0] = prefix
    return err


def _map_key(data: Any, start: int, kind: str) -> tuple | None:
    """The key of the map entry whose tag is at ``start``, as a 1-tuple path element.

    Runs only on the error path: it reads the entry again and returns the last
    key it holds (the key may follow the value), or ``None`` if there is none
    or it cannot be read.
    """
    try:
        _, pos = wire.read_tag(data, start)
        n, pos = wire.read_varint(data, pos)
        end = min(pos + n, len(data))
        key_tag = wire.make_tag(1, wire_type_of(kind))
        key = None
        while pos < end:
            t, pos = wire.read_tag(data, pos)
            if t != key_tag:
                pos = wire.skip_field(data, pos, t, end, 100)
                continue
            if kind in FIXED_SIZE:
                key = struct.unpack_from("<" + fixed_format(kind), data, pos)[0]
                pos += FIXED_SIZE[kind]
            elif kind == "string":
                m, pos = wire.read_varint(data, pos)
                key = bytes(data[pos:pos + m]).decode()
                pos += m
            else:
                key, pos = wire.read_varint(data, pos)
                if kind == "bool":
                    key = key != 0
                elif kind in ("sint32", "sint64"):
                    key = wire.unzigzag(key)
                elif kind == "int32" and key > 0x7FFFFFFF:
                    key = ((key & 0xFFFFFFFF) ^ 0x80000000) - 0x80000000
                elif kind == "int64" and key > 0x7FFFFFFFFFFFFFFF:
                    key -= 1 << 64
                elif kind == "uint32":
                    key &= 0xFFFFFFFF
    except Exception:
        return None
    return None if key is None else (key,)


GENERATED.update({
    "_rv": wire.read_varint,
    "_rtag": wire.read_tag,
    "_skip": wire.skip_field,
    "_new": object.__new__,
    "_tnew": tuple.__new__,
    "_OneOf": OneOf,
    "_FrozenMap": FrozenMap,
    "_EMPTY_MAP": EMPTY_MAP,
    "_locate": locate,
    "DecodeError": DecodeError,
    "_unpack_from": struct.unpack_from,
})


def _read_varint(src: Source, var: str, kind: str = "uint64") -> None:
    """Emit: read a varint at ``pos`` into ``var`` and advance ``pos``.

    Varints of up to 4 bytes (values below 2**28, which need no narrowing)
    are decoded inline; longer ones call :func:`pbj.wire.read_varint` and are
    narrowed to ``kind``.
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
                    src(f"{var}, pos = _rv(data, pos)")
                    _narrow(src, kind, var)


def _read_scalar(src: Source, kind: str, var: str, enum_map: str | None) -> None:
    """Emit: read one scalar of ``kind`` at ``pos`` into ``var``."""
    if kind in FIXED_SIZE:
        size = FIXED_SIZE[kind]
        src(f"{var} = {fixed_struct(kind)}.unpack_from(data, pos)[0]; pos += {size}")
        return
    _read_varint(src, var, kind)
    if kind == "bool":
        src(f"{var} = {var} != 0")
    elif kind in ("sint32", "sint64"):
        src(f"{var} = ({var} >> 1) ^ -({var} & 1)")
    elif kind == "enum":
        src(f"{var} = {enum_map}.get({var}, {var})")


def _narrow(src: Source, kind: str, var: str) -> None:
    """Emit the narrowing of a 64-bit varint to the field's type ("Encoding": int32 etc.)."""
    if kind in ("int32", "enum"):
        src(f"if {var} > 0x7FFFFFFF: {var} = (({var} & 0xFFFFFFFF) ^ 0x80000000) - 0x80000000")
    elif kind == "int64":
        src(f"if {var} > 0x7FFFFFFFFFFFFFFF: {var} -= 0x10000000000000000")
    elif kind in ("uint32", "sint32"):
        src(f"if {var} > 0xFFFFFFFF: {var} &= 0xFFFFFFFF")


def _read_len(src: Source) -> None:
    """Emit: read a length at ``pos`` and set ``e`` to the end of the value."""
    _read_varint(src, "n")
    src("e = pos + n")
    src("if e > end:")
    with src:
        src('raise DecodeError("truncated input: length runs past the end of the message")')


def _enum_map(enum_cls: type) -> str:
    return const({int(m): m for m in enum_cls}, f"E_{enum_cls.__name__}")


# ---- closed enums (proto2; "Enum Behavior" on protobuf.dev): a number that is not a
# member is not stored in the field but kept as an unknown varint field of the same
# field number, as Google's runtimes do (a map entry holding one is kept whole).

GENERATED["_venc_enum"] = wire.encode_varint


def _closed_enum(f_type: Any) -> bool:
    """True for an enum class the loader marked closed (``__pbj_closed__``)."""
    return bool(getattr(f_type, "__pbj_closed__", False))


def _keep_unknown_enum(src: Source, number: int, var: str) -> None:
    """Emit: keep the non-member number ``var`` of a closed enum as an unknown varint field."""
    tag = const(wire.tag_bytes(number, wire.WIRE_VARINT), "T")
    src("if unk is None: unk = bytearray()")
    src(f"unk.extend({tag} + _venc_enum({var}, 'enum'))")


def _read_closed_enum(src: Source, f: FieldInfo, store: str) -> None:
    """Emit: read one value of closed enum field ``f``; ``store`` (reading ``_m``) keeps a member."""
    _read_scalar(src, "int32", "v", None)  # an enum is read and narrowed as an int32
    src(f"_m = {_enum_map(f.type)}.get(v)")
    src("if _m is None:")
    with src:
        _keep_unknown_enum(src, f.number, "v")
    src("else:")
    with src:
        src(store)


def _parse_packed_closed(src: Source, f: FieldInfo, loc: str) -> None:
    """Emit the parse of a packed run ``data[pos:e]`` of closed enum field ``f`` into list ``loc``."""
    src("while pos < e:")
    with src:
        _read_closed_enum(src, f, f"{loc}.append(_m)")
    src("if pos != e:")
    with src:
        src('raise DecodeError("packed run ends inside its last element")')


class _Plan:
    """What the parse function of one class does for each tag."""

    def __init__(self, mi: MessageInfo) -> None:
        self.mi = mi
        self.name = codec_name(mi.cls)
        self.cases: dict[int, list[str]] = {}
        self.names: dict[int, tuple[str, str | None]] = {}
        self.locals: list[tuple[str, str]] = []
        self.finish: list[str] = []
        self.store: list[tuple[str, str]] = []


def _local(f: FieldInfo) -> str:
    return f"f_{f.name}"


def _case(plan: _Plan, tag: int, f_name: str, list_local: str | None) -> Source:
    src = Source()
    plan.cases[tag] = src.lines
    plan.names[tag] = (f_name, list_local)
    return src


def _plan_field(plan: _Plan, f: FieldInfo) -> None:
    loc = _local(f)
    if f.is_map:
        _plan_map(plan, f, loc)
        return
    kind = scalar_kind(f.type)
    enum_map = _enum_map(f.type) if kind == "enum" else None
    if f.repeated:
        plan.locals.append((loc, "None"))
        plan.store.append((f.name, f"() if {loc} is None else tuple({loc})"))
        if kind == "message":
            if f.group:
                src = _case(plan, wire.make_tag(f.number, wire.WIRE_SGROUP), f.name, loc)
                src(f"if {loc} is None: {loc} = []")
                _parse_group(src, f, f"{loc}.append")
            else:
                src = _case(plan, wire.make_tag(f.number, wire.WIRE_LEN), f.name, loc)
                src(f"if {loc} is None: {loc} = []")
                _read_len(src)
                _check_depth(src)
                src(f"{loc}.append(parse_{codec_name(f.type)}(data, pos, e, depth - 1, None)); pos = e")
            return
        if kind in ("string", "bytes"):
            src = _case(plan, wire.make_tag(f.number, wire.WIRE_LEN), f.name, loc)
            src(f"if {loc} is None: {loc} = []")
            _read_len(src)
            src(f"{loc}.append({_len_value(kind)}); pos = e")
            return
        # scalars: the element form and the packed form are both accepted
        src = _case(plan, wire.make_tag(f.number, wire_type_of(kind)), f.name, loc)
        src(f"if {loc} is None: {loc} = []")
        if _closed_enum(f.type):
            _read_closed_enum(src, f, f"{loc}.append(_m)")
        else:
            _read_scalar(src, kind, "v", enum_map)
            src(f"{loc}.append(v)")
        src = _case(plan, wire.make_tag(f.number, wire.WIRE_LEN), f.name, loc)
        src(f"if {loc} is None: {loc} = []")
        _read_len(src)
        if _closed_enum(f.type):
            _parse_packed_closed(src, f, loc)
        else:
            _parse_packed(src, kind, loc, enum_map)
        return
    plan.locals.append((loc, default_literal(f, kind)))
    plan.store.append((f.name, loc))
    if kind == "message":
        _plan_message(plan, f, loc)
        return
    wt = wire_type_of(kind)
    src = _case(plan, wire.make_tag(f.number, wt), f.name, None)
    if wt == wire.WIRE_LEN:
        _read_len(src)
        src(f"{loc} = {_len_value(kind)}; pos = e")
    elif _closed_enum(f.type):
        _read_closed_enum(src, f, f"{loc} = _m")
    else:
        _read_scalar(src, kind, loc, enum_map)


def _len_value(kind: str) -> str:
    return "data[pos:e].decode()" if kind == "string" else "data[pos:e]"


def _check_depth(src: Source) -> None:
    src("if depth <= 0:")
    with src:
        src('raise DecodeError("nesting too deep: the depth limit was reached")')


def _parse_packed(src: Source, kind: str, loc: str, enum_map: str | None) -> None:
    """Emit the parse of a packed run ``data[pos:e]`` appended to list ``loc``."""
    if kind in FIXED_SIZE:
        size = FIXED_SIZE[kind]
        src(f"if n % {size}:")
        with src:
            src(f'raise DecodeError("packed {kind} run of " + str(n) + " bytes is not a multiple of {size}")')
        src(f"{loc}.extend(_unpack_from('<%d{fixed_format(kind)}' % (n // {size}), data, pos)); pos = e")
        return
    if kind in ("int32", "int64", "uint32", "uint64", "enum", "bool"):
        # every element is one byte when no byte has its high bit set
        src("if data[pos:e].isascii():")
        with src:
            if kind == "enum":
                src(f"_g = {enum_map}.get")
                src(f"{loc}.extend([_g(b, b) for b in data[pos:e]]); pos = e")
            elif kind == "bool":
                src(f"{loc}.extend([b != 0 for b in data[pos:e]]); pos = e")
            else:
                src(f"{loc}.extend(data[pos:e]); pos = e")
        src("else:")
        src.depth += 1
    src(f"_a = {loc}.append")
    src("while pos < e:")
    with src:
        _read_scalar(src, kind, "v", enum_map)
        src("_a(v)")
    src("if pos != e:")
    with src:
        src('raise DecodeError("packed run ends inside its last element")')
    if kind in ("int32", "int64", "uint32", "uint64", "enum", "bool"):
        src.depth -= 1


def _parse_group(src: Source, f: FieldInfo, append: str) -> None:
    """Emit the parse of one element of a repeated group (proto2): its body up to the end tag."""
    _check_depth(src)
    src(f"e = _skip(data, pos, {wire.make_tag(f.number, wire.WIRE_SGROUP)}, end, depth)")
    src(f"{append}(parse_{codec_name(f.type)}(data, pos, e - {len(wire.tag_bytes(f.number, wire.WIRE_EGROUP))}, "
        "depth - 1, None))")
    src("pos = e")

def _plan_message(plan: _Plan, f: FieldInfo, loc: str, oneof: str | None = None) -> None:
    """A singular sub-message: parsed on its first occurrence; later ones merge into it."""
    sub = codec_name(f.type)
    # {loc}_s and {loc}_e are set by the first occurrence and read only after a second one
    plan.locals.append((f"{loc}_more", "None"))
    if f.group:  # the body ends before the end-group tag; ``e`` is past it
        src = _case(plan, wire.make_tag(f.number, wire.WIRE_SGROUP), f.name, None)
        _check_depth(src)
        src(f"e = _skip(data, pos, {wire.make_tag(f.number, wire.WIRE_SGROUP)}, end, depth)")
        src(f"_ge = e - {len(wire.tag_bytes(f.number, wire.WIRE_EGROUP))}")
        body_end = "_ge"
    else:
        src = _case(plan, wire.make_tag(f.number, wire.WIRE_LEN), f.name, None)
        _read_len(src)
        _check_depth(src)
        body_end = "e"
    present = f"{oneof} is not None and {oneof}[0] == {f.name!r}" if oneof else f"{loc} is not None"
    src(f"if {present}:")
    with src:
        src(f"if {loc}_more is None: {loc}_more = []")
        src(f"{loc}_more.append((pos, {body_end}))")
    src("else:")
    with src:
        value = f"parse_{sub}(data, pos, {body_end}, depth - 1, None)"
        if oneof:
            src(f"{oneof} = _tnew(_OneOf, ({f.name!r}, {value})); {loc}_more = None")
        else:
            src(f"{loc} = {value}")
        src(f"{loc}_s = pos; {loc}_e = {body_end}")
    src("pos = e")
    fin = Source()
    if oneof:
        fin(f"if {loc}_more is not None and {oneof}[0] == {f.name!r}:")
    else:
        fin(f"if {loc}_more is not None:")
    with fin:
        fin(f"{loc}_more.reverse()")
        value = f"parse_{sub}(data, {loc}_s, {loc}_e, depth - 1, {loc}_more)"
        fin(f"{oneof} = _tnew(_OneOf, ({f.name!r}, {value}))" if oneof else f"{loc} = {value}")
    plan.finish += fin.lines


def _plan_oneof(plan: _Plan, oneof) -> None:
    loc = f"f_{oneof.name}"
    plan.locals.append((loc, "None"))
    plan.store.append((oneof.name, loc))
    for m in oneof.members:
        kind = scalar_kind(m.type)
        if kind == "message":
            _plan_message(plan, m, f"m_{m.name}", oneof=loc)
            plan.names[wire.make_tag(m.number, wire.WIRE_SGROUP if m.group else wire.WIRE_LEN)] = (m.name, None)
            continue
        wt = wire_type_of(kind)
        src = _case(plan, wire.make_tag(m.number, wt), m.name, None)
        if wt == wire.WIRE_LEN:
            _read_len(src)
            src(f"{loc} = _tnew(_OneOf, ({m.name!r}, {_len_value(kind)})); pos = e")
        elif _closed_enum(m.type):
            _read_closed_enum(src, m, f"{loc} = _tnew(_OneOf, ({m.name!r}, _m))")
        else:
            _read_scalar(src, kind, "v", _enum_map(m.type) if kind == "enum" else None)
            src(f"{loc} = _tnew(_OneOf, ({m.name!r}, v))")


def _plan_map(plan: _Plan, f: FieldInfo, loc: str) -> None:
    plan.locals.append((loc, "None"))
    plan.store.append((f.name, f"_EMPTY_MAP if {loc} is None else _FrozenMap({loc})"))
    kkind = f.map_key
    vkind = scalar_kind(f.map_value)
    src = _case(plan, wire.make_tag(f.number, wire.WIRE_LEN), f.name, f"map:{kkind}")
    _read_len(src)
    src(f"if {loc} is None: {loc} = {{}}")
    key_default = {"string": '""', "bool": "False"}.get(kkind, "0")
    if vkind == "message":
        value_default = "None"
    elif vkind == "enum":
        value_default = const(enum_default(f.map_value), f"D_{f.map_value.__name__}")
    else:
        value_default = {"string": '""', "bytes": 'b""', "bool": "False", "float": "0.0",
                         "double": "0.0"}.get(vkind, "0")
    src(f"k = {key_default}; x = {value_default}; _u = False")
    src("while pos < e:")
    with src:
        src("t = data[pos]")
        src("if t < 128:")
        with src:
            src("pos += 1")
        src("else:")
        with src:
            src("t, pos = _rtag(data, pos)")
        ktag = wire.make_tag(1, wire_type_of(kkind))
        vtag = wire.make_tag(2, wire_type_of(vkind))
        src(f"if t == {ktag}:")
        with src:
            _entry_read(src, kkind, "k", None, None)
        src(f"elif t == {vtag}:")
        with src:
            _entry_read(src, vkind, "x", f.map_value, _enum_map(f.map_value) if vkind == "enum" else None)
        src("else:")
        with src:
            src("pos = _skip(data, pos, t, e, depth); _u = True")
    src("if pos != e:")
    with src:
        src('raise DecodeError("map entry overruns its length")')
    if vkind == "message":
        src(f"if x is None: x = {const(f.map_value(), f'EMPTY_{codec_name(f.map_value)}')}")
    # An entry holding an unknown field (or a closed enum's non-member value) is kept whole as an
    # unknown field of this message, as upb does; it is not added to the map.
    src("if _u or x.__class__ is int:" if _closed_enum(f.map_value) else "if _u:")
    with src:
        src("if unk is None: unk = bytearray()")
        src("unk.extend(data[start:e])")
    src("else:")
    with src:
        src(f"{loc}[k] = x")


def _entry_read(src: Source, kind: str, var: str, f_type: Any, enum_map: str | None) -> None:
    if kind in ("string", "bytes", "message"):
        src("_n = data[pos]")
        src("if _n < 128:")
        with src:
            src("pos += 1")
        src("else:")
        with src:
            src("_n, pos = _rv(data, pos)")
        src("_ee = pos + _n")
        src("if _ee > e:")
        with src:
            src('raise DecodeError("truncated input: map entry value runs past the entry")')
        if kind == "message":
            _check_depth(src)
            src(f"{var} = parse_{codec_name(f_type)}(data, pos, _ee, depth - 1, None); pos = _ee")
        else:
            src(f"{var} = data[pos:_ee]{'.decode()' if kind == 'string' else ''}; pos = _ee")
    else:
        _read_scalar(src, kind, var, enum_map)


def _emit_dispatch(src: Source, plan: _Plan, tags: list[int]) -> None:
    """Emit the tag dispatch: a chain of ifs, or a binary tree over the sorted tags."""
    if len(tags) <= _LINEAR_LIMIT:
        for i, tag in enumerate(tags):
            src(f"{'if' if i == 0 else 'elif'} tag == {tag}:")
            with src:
                for line in plan.cases[tag]:
                    src(line)
        src("else:" if tags else "if True:")
        with src:
            src("pos = _skip(data, pos, tag, end, depth)")
            src("if unk is None: unk = bytearray()")
            src("unk.extend(data[start:pos])")
        return
    mid = len(tags) // 2
    src(f"if tag < {tags[mid]}:")
    with src:
        _emit_dispatch(src, plan, tags[:mid])
    src("else:")
    with src:
        _emit_dispatch(src, plan, tags[mid:])


def emit_parse(mi: MessageInfo) -> str:
    """Source of ``parse_<Name>(data, pos, end, depth, more)`` for a resolved message class."""
    plan = _Plan(mi)
    for f in mi.fields:
        _plan_field(plan, f)
    for o in mi.oneofs:
        _plan_oneof(plan, o)
    names = const(plan.names, f"FIELDS_{plan.name}")
    slots = const(mi.cls.__pbj_slots__, f"Slots_{plan.name}")
    cls = const(mi.cls, f"Class_{plan.name}")
    src = Source()
    src(f"def parse_{plan.name}(data, pos, end, depth, more):")
    with src:
        for loc, default in plan.locals:
            src(f"{loc} = {default}")
        src("unk = None")
        src("try:")
        with src:
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
                    _emit_dispatch(src, plan, sorted(plan.cases))
                src("if pos != end:")
                with src:
                    src('raise DecodeError("truncated input: the last field runs past the end of the message")')
                src("if not more:")
                with src:
                    src("break")
                src("pos, end = more.pop()")
            for line in plan.finish:
                src(line)
        src("except Exception as exc:")
        with src:
            src(f"raise _locate(exc, {names}, locals()) from None")
        src(f"o = _new({slots})")
        for attr, expr in plan.store:
            src(f"o.{attr} = {expr}")
        src('o._pbj_unknown = bytes(unk) if unk is not None else b""')
        src("o._pbj_size = -1")
        src(f"o.__class__ = {cls}")
        src("return o")
    return src.text()
