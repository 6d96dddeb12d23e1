"""The forward writer: a measuring pass with cached sizes, then field-by-field appends.

For each message class the compiler generates two functions (the contract):

``size_<Name>(o) -> int``
    Returns the encoded size of ``o`` in bytes (without its own tag and
    length) and caches it in ``o._pbj_size``. Sub-messages' sizes come from
    their cache or are measured (and cached) on the way.

``write_<Name>(o, ap) -> None``
    Appends the encoding of ``o`` to a list through ``ap`` (its bound
    ``append``), as ``bytes`` pieces: fields in ascending field number, each
    as tag then value (LEN values as length then bytes), the unknown fields
    last, in arrival order. It reads nested lengths from the cached sizes, so
    ``size_<Name>`` must have run on ``o`` first.

``pbj.encode`` joins the pieces once. Appending ``bytes`` pieces to a list
and joining them costs less in CPython than any store into a preallocated
``bytearray`` (see ``../shared/PERF-NOTES.md``); the 1- and 2-byte varints
come from a table (:data:`pbj.wire.VARINT_BYTES`).

Output is deterministic: map entries sorted by key (Python's order of ints,
``False < True``, and code-point order of strings, which is the bytewise
order of their UTF-8), every entry written with both key and value.
"""

from __future__ import annotations

import math
import struct

from pbj import wire
from pbj.codegen import (
    FIXED_SIZE,
    GENERATED,
    Source,
    codec_name,
    const,
    fixed_format,
    fixed_struct,
    scalar_kind,
    tag_const,
    tag_value_table,
    tagged_struct,
    wire_type_of,
)
from pbj.schema import FieldInfo, MessageInfo

__all__ = ["emit_size", "emit_write", "emit_oneof_members", "write_order"]

_INT_KINDS = {"int32", "int64", "uint32", "uint64", "enum"}

GENERATED.update({
    "_V": wire.VARINT_BYTES,
    "_VM": wire.VARINT_MORE,
    "_venc": wire.encode_varint,
    "_vsize": wire.varint_size,
    "_zz32": wire.zigzag32,
    "_zz64": wire.zigzag64,
    "_copysign": math.copysign,
    "_spack": struct.pack,
    "B0": b"\x00",
    "B1": b"\x01",
})


def write_order(mi: MessageInfo) -> list[tuple[str, object]]:
    """The order fields are written in: ascending field number.

    Returns a list of ``("field", FieldInfo)`` and ``("oneof", (OneofInfo,
    [members]))`` items. A oneof appears once for each run of its members
    between two regular fields, so a set member is written exactly where its
    field number falls ("Field Order" in "Encoding").
    """
    items: list[tuple[int, str, object]] = [(f.number, "field", f) for f in mi.fields]
    for o in mi.oneofs:
        items.extend((m.number, "member", (o, m)) for m in o.members)
    items.sort(key=lambda t: t[0])
    out: list[tuple[str, object]] = []
    for _, what, obj in items:
        if what == "field":
            out.append(("field", obj))
            continue
        o, m = obj
        if out and out[-1][0] == "oneof" and out[-1][1][0] is o:
            out[-1][1][1].append(m)
        else:
            out.append(("oneof", (o, [m])))
    return out


def size_expr(kind: str, v: str) -> str:
    """Source for the encoded size of one scalar value (no tag)."""
    if kind in _INT_KINDS:
        return (f"(1 if 0 <= {v} < 128 else 2 if 0 <= {v} < 16384 else 3 if 0 <= {v} < 2097152 "
                f"else 4 if 0 <= {v} < 268435456 else _vsize({v}, {kind!r}))")
    if kind == "sint32":
        return (f"(1 if -64 <= {v} < 64 else 2 if -8192 <= {v} < 8192 else 3 if -1048576 <= {v} < 1048576 "
                f"else 4 if -134217728 <= {v} < 134217728 else _vsize(_zz32({v})))")
    if kind == "sint64":
        return (f"(1 if -64 <= {v} < 64 else 2 if -8192 <= {v} < 8192 else 3 if -1048576 <= {v} < 1048576 "
                f"else 4 if -134217728 <= {v} < 134217728 else _vsize(_zz64({v})))")
    if kind == "bool":
        return "1"
    if kind in FIXED_SIZE:
        return str(FIXED_SIZE[kind])
    raise AssertionError(kind)


def value_expr(kind: str, v: str) -> str:
    """Source for the bytes of one scalar value (no tag)."""
    if kind in _INT_KINDS:
        return f"(_V[{v}] if 0 <= {v} < 16384 else _venc({v}, {kind!r}))"
    if kind == "sint32":
        return f"(_V[_z] if 0 <= (_z := ({v} << 1) ^ ({v} >> 31)) < 16384 else _venc(_zz32({v})))"
    if kind == "sint64":
        return f"(_V[_z] if 0 <= (_z := ({v} << 1) ^ ({v} >> 63)) < 16384 else _venc(_zz64({v})))"
    if kind == "bool":
        return f"(B1 if {v} else B0)"
    if kind in FIXED_SIZE:
        return f"{fixed_struct(kind)}.pack({v})"
    raise AssertionError(kind)


def tagged_expr(tag: bytes, kind: str, v: str) -> str:
    """Source for the bytes of a tag and one scalar value, as one piece."""
    tv = tag_value_table(tag)
    t = const(tag, "T")
    if kind in _INT_KINDS:
        return (f"({tv}[{v}] if 0 <= {v} < 128 else {t} + _V[{v}] if 0 <= {v} < 16384 "
                f"else {t} + _VM[{v} & 16383] + _V[{v} >> 14] if 0 <= {v} < 268435456 "
                f"else {t} + _venc({v}, {kind!r}))")
    if kind in ("sint32", "sint64"):
        bits = 31 if kind == "sint32" else 63
        return (f"({tv}[_z] if 0 <= (_z := ({v} << 1) ^ ({v} >> {bits})) < 128 else {t} + _V[_z] if _z < 16384 "
                f"else {t} + _VM[_z & 16383] + _V[_z >> 14] if _z < 268435456 "
                f"else {t} + _venc(_zz{bits + 1}({v})))")
    if kind == "bool":
        return f"({tv}[1] if {v} else {tv}[0])"
    if kind in FIXED_SIZE:
        return f"{tagged_struct(tag, kind)}.pack({', '.join(str(b) for b in tag)}, {v})"
    raise AssertionError(kind)


def tagged_len(tag: bytes, n: str) -> str:
    """Source for the bytes of a tag and a length ``n``, as one piece."""
    return f"({tag_value_table(tag)}[{n}] if {n} < 128 else {const(tag, 'T')} + _venc({n}))"


def _lensize_expr(n: str) -> str:
    return f"(1 if {n} < 128 else 2 if {n} < 16384 else _vsize({n}))"


def presence_test(f: FieldInfo, kind: str, v: str) -> str:
    """Source for "this singular value is written" ("Field Presence")."""
    if f.optional or kind == "message":
        return f"{v} is not None"
    if kind in ("float", "double"):
        return f"{v} or _copysign(1.0, {v}) < 0.0"  # -0.0 is written, 0.0 is not
    return v


# ---------------------------------------------------------------- sizing

def _size_value(src: Source, kind: str, f_type, v: str, tagsize: int, acc: str = "n") -> None:
    """Emit ``acc += <size of a tag of tagsize bytes and the value v>``."""
    if kind == "string":
        src(f"_l = len({v}) if {v}.isascii() else len({v}.encode())")
        src(f"{acc} += {tagsize} + {_lensize_expr('_l')} + _l")
    elif kind == "bytes":
        src(f"_l = len({v})")
        src(f"{acc} += {tagsize} + {_lensize_expr('_l')} + _l")
    elif kind == "message":
        src(f"_s = {v}._pbj_size")
        src(f"if _s < 0: _s = size_{codec_name(f_type)}({v})")
        src(f"{acc} += {tagsize} + {_lensize_expr('_s')} + _s")
    else:
        se = size_expr(kind, v)
        src(f"{acc} += {tagsize + 1 if se == '1' else f'{tagsize} + {se}'}")


def _size_field(src: Source, f: FieldInfo) -> None:
    v = f"o.{f.name}"
    if f.is_map:
        _size_map(src, f, v)
        return
    kind = scalar_kind(f.type)
    tagsize = len(_tag(f, kind))
    if not f.repeated:
        src(f"v = {v}")
        src(f"if {presence_test(f, kind, 'v')}:")
        with src:
            if f.group:
                src(f"_s = v._pbj_size\nif _s < 0: _s = size_{codec_name(f.type)}(v)\nn += {2 * tagsize} + _s")
            else:
                _size_value(src, kind, f.type, "v", tagsize)
        return
    src(f"v = {v}")
    src("if v:")
    with src:
        if f.packed:
            if kind in FIXED_SIZE:
                src(f"_p = len(v) * {FIXED_SIZE[kind]}")
            elif kind == "bool":
                src("_p = len(v)")
            else:
                src("_p = 0")
                src("for x in v:")
                with src:
                    src(f"_p += {size_expr(kind, 'x')}")
            src(f"n += {tagsize} + {_lensize_expr('_p')} + _p")
        elif kind in FIXED_SIZE or kind == "bool":
            width = FIXED_SIZE.get(kind, 1)
            src(f"n += len(v) * {tagsize + width}")
        elif f.group:
            src("for x in v:")
            with src:
                src(f"_s = x._pbj_size\nif _s < 0: _s = size_{codec_name(f.type)}(x)\nn += {2 * tagsize} + _s")
        else:
            src("for x in v:")
            with src:
                _size_value(src, kind, f.type, "x", tagsize)


def _size_map(src: Source, f: FieldInfo, v: str) -> None:
    tagsize = len(wire.tag_bytes(f.number, wire.WIRE_LEN))
    src(f"v = {v}")
    src("if v:")
    with src:
        src("for k, x in v.items():")
        with src:
            src("_e = 0")
            _size_value(src, f.map_key, None, "k", 1, "_e")  # key and value: field numbers 1 and 2
            _size_value(src, scalar_kind(f.map_value), f.map_value, "x", 1, "_e")
            src(f"n += {tagsize} + {_lensize_expr('_e')} + _e")


def _tag(f: FieldInfo, kind: str) -> bytes:
    if f.group:
        return wire.tag_bytes(f.number, wire.WIRE_SGROUP)
    if f.repeated and f.packed:
        return wire.tag_bytes(f.number, wire.WIRE_LEN)
    return wire.tag_bytes(f.number, wire_type_of(kind))


def emit_size(mi: MessageInfo) -> str:
    """Source of ``size_<Name>(o)`` for a resolved message class."""
    name = codec_name(mi.cls)
    src = Source()
    src(f"def size_{name}(o):")
    with src:
        src("n = 0")
        for what, obj in write_order(mi):
            if what == "field":
                _size_field(src, obj)
            else:
                oneof, members = obj
                _dispatch(src, mi, oneof, members, "size", "n += {fn}(v[1])")
        src("u = o._pbj_unknown")
        src("if u: n += len(u)")
        src(f"{const(mi.cls.__pbj_slots__._pbj_size.__set__, f'set_size_{name}')}(o, n)")
        src("return n")
    return src.text()


def _dispatch(src: Source, mi: MessageInfo, oneof, members, role: str, call: str) -> None:
    """Emit the dispatch on a oneof's set member, for the members of one run."""
    name = codec_name(mi.cls)
    table = f"{role}_{name}__{oneof.name}"
    src(f"v = o.{oneof.name}")
    if len(members) == len(oneof.members):
        src("if v is not None:")
    else:
        names = const(frozenset(m.name for m in members), f"run_{name}__{oneof.name}_{members[0].number}")
        src(f"if v is not None and v[0] in {names}:")
    with src:
        src(call.format(fn=f"{table}[v[0]]"))


def emit_oneof_members(mi: MessageInfo) -> str:
    """Source of the per-member size and write functions of every oneof.

    ``size_<Name>__<oneof>__<member>(v) -> int`` and
    ``write_<Name>__<oneof>__<member>(v, ap)`` handle the member's value
    ``v``; the tables ``size_<Name>__<oneof>`` and ``write_<Name>__<oneof>``
    map member names to them, so writing a oneof costs one lookup whatever
    its number of members.
    """
    name = codec_name(mi.cls)
    src = Source()
    for oneof in mi.oneofs:
        for m in oneof.members:
            kind = scalar_kind(m.type)
            tag = _tag(m, kind)
            fn = f"{name}__{oneof.name}__{m.name}"
            src(f"def size_{fn}(v):")
            with src:
                src("n = 0")
                if m.group:
                    src(f"_s = v._pbj_size\nif _s < 0: _s = size_{codec_name(m.type)}(v)\nn += {2 * len(tag)} + _s")
                else:
                    _size_value(src, kind, m.type, "v", len(tag))
                src("return n")
            src(f"def write_{fn}(v, ap):")
            with src:
                _write_single(src, m, kind, "v")
    return src.text()


def oneof_tables(mi: MessageInfo) -> None:
    """Register the member dispatch tables of every oneof (after the functions exist)."""
    name = codec_name(mi.cls)
    for oneof in mi.oneofs:
        for role in ("size", "write", "write_reverse"):
            GENERATED[f"{role}_{name}__{oneof.name}"] = {
                m.name: GENERATED[f"{role}_{name}__{oneof.name}__{m.name}"] for m in oneof.members
            }


# ---------------------------------------------------------------- writing

def _write_single(src: Source, f: FieldInfo, kind: str, v: str) -> None:
    """Emit the appends of one present singular value ``v`` (tag included)."""
    if f.group:
        tag = tag_const(f.number, wire.WIRE_SGROUP)
        end = tag_const(f.number, wire.WIRE_EGROUP)
        src(f"ap({tag})\nwrite_{codec_name(f.type)}({v}, ap)\nap({end})")
        return
    _write_tagged(src, wire.tag_bytes(f.number, wire_type_of(kind)), kind, f.type, v,
                  implicit_bool=not f.optional and not f.repeated)


def _write_tagged(src: Source, tag: bytes, kind: str, f_type, v: str, implicit_bool: bool = False) -> None:
    """Emit the appends of a tag and one value ``v`` of ``kind``."""
    if kind == "string":
        src(f"_b = {v}.encode()\n_l = len(_b)\nap({tagged_len(tag, '_l')})\nap(_b)")
    elif kind == "bytes":
        src(f"_l = len({v})\nap({tagged_len(tag, '_l')})\nap({v})")
    elif kind == "message":
        src(f"_s = {v}._pbj_size\nap({tagged_len(tag, '_s')})\nwrite_{codec_name(f_type)}({v}, ap)")
    elif kind == "bool" and implicit_bool:
        src(f"ap({tag_value_table(tag)}[1])")  # implicit presence: only true is written
    else:
        src(f"ap({tagged_expr(tag, kind, v)})")


def _write_field(src: Source, f: FieldInfo) -> None:
    v = f"o.{f.name}"
    if f.is_map:
        _write_map(src, f, v)
        return
    kind = scalar_kind(f.type)
    src(f"v = {v}")
    if not f.repeated:
        src(f"if {presence_test(f, kind, 'v')}:")
        with src:
            _write_single(src, f, kind, "v")
        return
    src("if v:")
    with src:
        if f.packed:
            tagb = wire.tag_bytes(f.number, wire.WIRE_LEN)
            if kind in FIXED_SIZE:
                fmt = fixed_format(kind)
                src(f"_l = len(v) * {FIXED_SIZE[kind]}")
                src(f"ap({tagged_len(tagb, '_l')})\nap(_spack('<%d{fmt}' % len(v), *v))")
            elif kind == "bool":
                src(f"_l = len(v)\nap({tagged_len(tagb, '_l')})\nap(bytes(map(bool, v)))")
            else:
                # the packed length is measured again here: cheaper than caching it
                src("_p = 0")
                src("for x in v:")
                with src:
                    src(f"_p += {size_expr(kind, 'x')}")
                src(f"ap({tagged_len(tagb, '_p')})")
                src("for x in v:")
                with src:
                    src(f"ap({value_expr(kind, 'x')})")
        else:
            src("for x in v:")
            with src:
                _write_single(src, f, kind, "x")


def _entry_part_write(src: Source, kind: str, f_type, v: str, number: int) -> None:
    _write_tagged(src, wire.tag_bytes(number, wire_type_of(kind)), kind, f_type, v)


def _entry_piece(src: Source, kind: str, v: str, number: int, var: str) -> None:
    """Emit ``var = <tag and value of a scalar map-entry part, as one bytes piece>``."""
    tag = wire.tag_bytes(number, wire_type_of(kind))
    if kind == "string":
        src(f"_b = {v}.encode()\n_l = len(_b)\n{var} = {tagged_len(tag, '_l')} + _b")
    elif kind == "bytes":
        src(f"_l = len({v})\n{var} = {tagged_len(tag, '_l')} + {v}")
    else:
        src(f"{var} = {tagged_expr(tag, kind, v)}")


def _write_map(src: Source, f: FieldInfo, v: str) -> None:
    """Emit the entries of a map field in ascending key order ("Maps" in "Encoding").

    Each entry's key and (scalar) value are built as pieces first, so the
    entry length is the sum of their lengths, with no second measuring.
    """
    vkind = scalar_kind(f.map_value)
    entry_tag = wire.tag_bytes(f.number, wire.WIRE_LEN)
    src(f"v = {v}")
    src("if v:")
    with src:
        src("for k in sorted(v):")
        with src:
            src("x = v[k]")
            _entry_piece(src, f.map_key, "k", 1, "_kb")
            if vkind == "message":
                value_tag = wire.tag_bytes(2, wire.WIRE_LEN)
                src("_s = x._pbj_size")
                src(f"_e = len(_kb) + 1 + {_lensize_expr('_s')} + _s")
                src(f"ap({tagged_len(entry_tag, '_e')})\nap(_kb)\nap({tagged_len(value_tag, '_s')})")
                src(f"write_{codec_name(f.map_value)}(x, ap)")
            else:
                _entry_piece(src, vkind, "x", 2, "_xb")
                src("_e = len(_kb) + len(_xb)")
                src(f"ap({tagged_len(entry_tag, '_e')})\nap(_kb)\nap(_xb)")


def emit_write(mi: MessageInfo) -> str:
    """Source of ``write_<Name>(o, ap)`` for a resolved message class."""
    name = codec_name(mi.cls)
    src = Source()
    src(f"def write_{name}(o, ap):")
    with src:
        for what, obj in write_order(mi):
            if what == "field":
                _write_field(src, obj)
            else:
                oneof, members = obj
                _dispatch(src, mi, oneof, members, "write", "{fn}(v[1], ap)")
        src("u = o._pbj_unknown")
        src("if u: ap(u)")
    return src.text()
