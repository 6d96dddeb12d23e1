"""The forward writer's emitter: ``size_<Name>`` and ``write_<Name>`` from a plan.

The contract of the generated functions:

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

from pbj import scalars, wire
from pbj.codec.emit import INT_KINDS, Emit, describe, kind_of, presence_test
from pbj.codec.plan import EXPLICIT, FIELD, IMPLICIT, MAP, MESSAGE, PACKED, FieldPlan, MessagePlan, row_of
from pbj.codec.source import Source, comment

__all__ = ["emit_forward", "emit_size", "emit_write", "emit_oneof_members", "size_expr"]


def size_expr(kind: str, v: str) -> str:
    """Source for the encoded size of one scalar value (no tag)."""
    if kind in INT_KINDS:
        return (f"(1 if 0 <= {v} < 128 else 2 if 0 <= {v} < 16384 else 3 if 0 <= {v} < 2097152 "
                f"else 4 if 0 <= {v} < 268435456 else _vsize({v}, {kind!r}))")
    if kind in ("sint32", "sint64"):
        zz = "_zz32" if kind == "sint32" else "_zz64"
        return (f"(1 if -64 <= {v} < 64 else 2 if -8192 <= {v} < 8192 else 3 if -1048576 <= {v} < 1048576 "
                f"else 4 if -134217728 <= {v} < 134217728 else _vsize({zz}({v})))")
    if kind == "bool":
        return "1"
    width = scalars.row(kind).width
    if width:
        return str(width)
    raise AssertionError(kind)


def value_expr(ctx: Emit, kind: str, v: str) -> str:
    """Source for the bytes of one scalar value (no tag)."""
    if kind in INT_KINDS:
        return f"(_V[{v}] if 0 <= {v} < 16384 else _venc({v}, {kind!r}))"
    if kind == "sint32":
        return f"(_V[_z] if 0 <= (_z := ({v} << 1) ^ ({v} >> 31)) < 16384 else _venc(_zz32({v})))"
    if kind == "sint64":
        return f"(_V[_z] if 0 <= (_z := ({v} << 1) ^ ({v} >> 63)) < 16384 else _venc(_zz64({v})))"
    if kind == "bool":
        return f"(_B1 if {v} else _B0)"
    return f"_S_{kind}.pack({v})"


def tagged_expr(ctx: Emit, tag: bytes, kind: str, v: str) -> str:
    """Source for the bytes of a tag and one scalar value, as one piece."""
    tv = ctx.tv(tag)
    t = ctx.tag(tag)
    if kind in INT_KINDS:
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
    return f"{ctx.tagged_struct(tag, kind)}.pack({', '.join(str(b) for b in tag)}, {v})"


def tagged_len(ctx: Emit, tag: bytes, n: str) -> str:
    """Source for the bytes of a tag and a length ``n``, as one piece."""
    return f"({ctx.tv(tag)}[{n}] if {n} < 128 else {ctx.tag(tag)} + _venc({n}))"


def _lensize_expr(n: str) -> str:
    return f"(1 if {n} < 128 else 2 if {n} < 16384 else _vsize({n}))"


# ---------------------------------------------------------------- sizing

def _size_sub(ctx: Emit, src: Source, f: FieldPlan, v: str, acc: str = "n") -> None:
    """Emit ``acc += <size of sub-message v with its tag and length (or group tags)>``."""
    src(f"_s = {v}._pbj_size")
    src(f"if _s < 0: _s = size_{ctx.stem(f.sub)}({v})")
    if f.group:
        src(f"{acc} += {len(f.tag) + len(f.end_tag)} + _s")
    else:
        src(f"{acc} += {len(f.tag)} + {_lensize_expr('_s')} + _s")


def _size_value(src: Source, kind: str, v: str, tagsize: int, acc: str = "n") -> None:
    """Emit ``acc += <size of a tag of tagsize bytes and the scalar v>``."""
    if kind == "string":
        src(f"_l = len({v}) if {v}.isascii() else len({v}.encode())")
        src(f"{acc} += {tagsize} + {_lensize_expr('_l')} + _l")
    elif kind == "bytes":
        src(f"_l = len({v})")
        src(f"{acc} += {tagsize} + {_lensize_expr('_l')} + _l")
    else:
        se = size_expr(kind, v)
        src(f"{acc} += {tagsize + 1 if se == '1' else f'{tagsize} + {se}'}")


def _size_field(ctx: Emit, src: Source, plan: MessagePlan, f: FieldPlan) -> None:
    src(describe(f))
    src(f"v = {ctx.get(plan, f.name)}")
    if f.label == MAP:
        _size_map(ctx, src, f)
        return
    kind = kind_of(f.type)
    if f.label in (EXPLICIT, IMPLICIT):
        src(f"if {presence_test(f, 'v')}:")
        with src:
            if kind == "message":
                _size_sub(ctx, src, f, "v")
            else:
                _size_value(src, kind, "v", len(f.tag))
        return
    src("if v:")
    with src:
        if f.label == PACKED:
            if f.width:
                src("_p = len(v)" if f.width == 1 else f"_p = len(v) * {f.width}")
            else:
                src("_p = 0")
                src("for x in v:")
                with src:
                    src(f"_p += {size_expr(kind, 'x')}")
            src(f"n += {len(f.tag)} + {_lensize_expr('_p')} + _p")
        elif f.width:
            src(f"n += len(v) * {len(f.tag) + f.width}")
        else:
            src("for x in v:")
            with src:
                if kind == "message":
                    _size_sub(ctx, src, f, "x")
                else:
                    _size_value(src, kind, "x", len(f.tag))


def _size_map(ctx: Emit, src: Source, f: FieldPlan) -> None:
    src("if v:")
    with src:
        src("for k, x in v.items():")
        with src:
            src("_e = 0")
            _size_value(src, row_of(f.key).name, "k", 1, "_e")  # key and value: field numbers 1 and 2
            if f.type == MESSAGE:
                src("_s = x._pbj_size")
                src(f"if _s < 0: _s = size_{ctx.stem(f.sub)}(x)")
                src(f"_e += 1 + {_lensize_expr('_s')} + _s")
            else:
                _size_value(src, row_of(f.type).name, "x", 1, "_e")
            src(f"n += {len(f.tag)} + {_lensize_expr('_e')} + _e")


def _oneof_table(ctx: Emit, plan: MessagePlan, j: int, role: str) -> str:
    return ctx.scope.shared((role, plan.idx, j), f"{role}_{ctx.stem(plan.idx)}__{plan.oneofs[j].name}", dict)


def _dispatch(ctx: Emit, src: Source, plan: MessagePlan, j: int, members: tuple[int, ...], role: str,
              call: str) -> None:
    """Emit the dispatch on a oneof's set member, for the members of one run."""
    oneof = plan.oneofs[j]
    table = _oneof_table(ctx, plan, j, role)
    runs = ", ".join(f"{comment(plan.fields[i].proto_name)} = {plan.fields[i].number}" for i in members)
    src(f"# oneof {comment(oneof.name)}: {runs}")
    src(f"v = {ctx.get(plan, oneof.name)}")
    if len(members) == len(oneof.members):
        src("if v is not None:")
    else:
        names = ctx.const(frozenset(plan.fields[i].name for i in members),
                          f"run_{ctx.stem(plan.idx)}__{oneof.name}_{plan.fields[members[0]].number}")
        src(f"if v is not None and v[0] in {names}:")
    with src:
        src(call.format(fn=f"{table}[v[0]]"))


def emit_oneof_members(ctx: Emit, plan: MessagePlan) -> str:
    """Source of the per-member size and write functions of every oneof, and their tables.

    ``size_<Name>__<oneof>__<member>(v) -> int`` and
    ``write_<Name>__<oneof>__<member>(v, ap)`` handle the member's value
    ``v``; the tables ``size_<Name>__<oneof>`` and ``write_<Name>__<oneof>``
    (dicts, filled here) map member names to them.
    """
    stem = ctx.stem(plan.idx)
    src = Source()
    for j, oneof in enumerate(plan.oneofs):
        tables = {role: _oneof_table(ctx, plan, j, role) for role in ("size", "write")}
        for i in oneof.members:
            m = plan.fields[i]
            kind = kind_of(m.type)
            fn_size = ctx.scope.name(f"size_{stem}__{oneof.name}__{m.name}")
            fn_write = ctx.scope.name(f"write_{stem}__{oneof.name}__{m.name}")
            src(f"def {fn_size}(v):")
            with src:
                src(describe(m))
                src("n = 0")
                if kind == "message":
                    _size_sub(ctx, src, m, "v")
                else:
                    _size_value(src, kind, "v", len(m.tag))
                src("return n")
            src(f"def {fn_write}(v, ap):")
            with src:
                src(describe(m))
                _write_single(ctx, src, m, "v")
            src(f"{tables['size']}[{m.name!r}] = {fn_size}")
            src(f"{tables['write']}[{m.name!r}] = {fn_write}")
    return src.text() if src.lines else ""


def emit_size(ctx: Emit, plan: MessagePlan) -> str:
    """Source of ``size_<Name>(o)``."""
    stem = ctx.stem(plan.idx)
    src = Source()
    src(f"def size_{stem}(o):")
    with src:
        src("n = 0")
        for step, i, members in plan.writes:
            if step == FIELD:
                _size_field(ctx, src, plan, plan.fields[i])
            else:
                _dispatch(ctx, src, plan, i, members, "size", "n += {fn}(v[1])")
        src("u = o._pbj_unknown")
        src("if u: n += len(u)")
        setter = ctx.scope.shared(("set_size", plan.idx), f"set_size_{stem}",
                                  lambda: plan.slots_class._pbj_size.__set__)
        src(f"{setter}(o, n)")
        src("return n")
    return src.text()


# ---------------------------------------------------------------- writing

def _write_single(ctx: Emit, src: Source, f: FieldPlan, v: str) -> None:
    """Emit the appends of one present singular value ``v`` (tag included)."""
    kind = kind_of(f.type)
    if f.group:
        src(f"ap({ctx.tag(f.tag)})\nwrite_{ctx.stem(f.sub)}({v}, ap)\nap({ctx.tag(f.end_tag)})")
    elif kind == "message":
        src(f"_s = {v}._pbj_size\nap({tagged_len(ctx, f.tag, '_s')})\nwrite_{ctx.stem(f.sub)}({v}, ap)")
    else:
        _write_tagged(ctx, src, f.tag, kind, v, implicit_bool=f.label == IMPLICIT)


def _write_tagged(ctx: Emit, src: Source, tag: bytes, kind: str, v: str, implicit_bool: bool = False) -> None:
    """Emit the appends of a tag and one scalar value ``v`` of ``kind``."""
    if kind == "string":
        src(f"_b = {v}.encode()\n_l = len(_b)\nap({tagged_len(ctx, tag, '_l')})\nap(_b)")
    elif kind == "bytes":
        src(f"_l = len({v})\nap({tagged_len(ctx, tag, '_l')})\nap({v})")
    elif kind == "bool" and implicit_bool:
        src(f"ap({ctx.tv(tag)}[1])")  # implicit presence: only true is written
    else:
        src(f"ap({tagged_expr(ctx, tag, kind, v)})")


def _write_field(ctx: Emit, src: Source, plan: MessagePlan, f: FieldPlan) -> None:
    src(describe(f))
    src(f"v = {ctx.get(plan, f.name)}")
    if f.label == MAP:
        _write_map(ctx, src, f)
        return
    kind = kind_of(f.type)
    if f.label in (EXPLICIT, IMPLICIT):
        src(f"if {presence_test(f, 'v')}:")
        with src:
            _write_single(ctx, src, f, "v")
        return
    src("if v:")
    with src:
        if f.label == PACKED:
            if f.width and kind != "bool":
                fmt = (row_of(f.type).struct_format or "")[1:]
                src(f"_l = len(v) * {f.width}")
                src(f"ap({tagged_len(ctx, f.tag, '_l')})\nap(_spack('<%d{fmt}' % len(v), *v))")
            elif kind == "bool":
                src(f"_l = len(v)\nap({tagged_len(ctx, f.tag, '_l')})\nap(bytes(map(bool, v)))")
            else:
                # the packed length is measured again here: cheaper than caching it
                src("_p = 0")
                src("for x in v:")
                with src:
                    src(f"_p += {size_expr(kind, 'x')}")
                src(f"ap({tagged_len(ctx, f.tag, '_p')})")
                src("for x in v:")
                with src:
                    src(f"ap({value_expr(ctx, kind, 'x')})")
        else:
            src("for x in v:")
            with src:
                _write_single(ctx, src, f, "x")


def _entry_piece(ctx: Emit, src: Source, kind: str, v: str, number: int, var: str) -> None:
    """Emit ``var = <tag and value of a scalar map-entry part, as one bytes piece>``."""
    tag = wire.tag_bytes(number, scalars.row(kind).wire_type)
    if kind == "string":
        src(f"_b = {v}.encode()\n_l = len(_b)\n{var} = {tagged_len(ctx, tag, '_l')} + _b")
    elif kind == "bytes":
        src(f"_l = len({v})\n{var} = {tagged_len(ctx, tag, '_l')} + {v}")
    else:
        src(f"{var} = {tagged_expr(ctx, tag, kind, v)}")


def _write_map(ctx: Emit, src: Source, f: FieldPlan) -> None:
    """Emit the entries of a map field in ascending key order ("Maps" in "Encoding").

    Each entry's key and (scalar) value are built as pieces first, so the
    entry length is the sum of their lengths, with no second measuring.
    """
    src("if v:")
    with src:
        src("for k in sorted(v):")
        with src:
            src("x = v[k]")
            _entry_piece(ctx, src, row_of(f.key).name, "k", 1, "_kb")
            if f.type == MESSAGE:
                value_tag = wire.tag_bytes(2, wire.WIRE_LEN)
                src("_s = x._pbj_size")
                src(f"_e = len(_kb) + 1 + {_lensize_expr('_s')} + _s")
                src(f"ap({tagged_len(ctx, f.tag, '_e')})\nap(_kb)\nap({tagged_len(ctx, value_tag, '_s')})")
                src(f"write_{ctx.stem(f.sub)}(x, ap)")
            else:
                _entry_piece(ctx, src, row_of(f.type).name, "x", 2, "_xb")
                src("_e = len(_kb) + len(_xb)")
                src(f"ap({tagged_len(ctx, f.tag, '_e')})\nap(_kb)\nap(_xb)")


def emit_write(ctx: Emit, plan: MessagePlan) -> str:
    """Source of ``write_<Name>(o, ap)``."""
    src = Source()
    src(f"def write_{ctx.stem(plan.idx)}(o, ap):")
    with src:
        for step, i, members in plan.writes:
            if step == FIELD:
                _write_field(ctx, src, plan, plan.fields[i])
            else:
                _dispatch(ctx, src, plan, i, members, "write", "{fn}(v[1], ap)")
        src("u = o._pbj_unknown")
        src("if u: ap(u)")
    return src.text()


def emit_forward(ctx: Emit, plan: MessagePlan) -> str:
    """The whole forward writer of one class: size, write and the oneof members' functions."""
    return "\n".join(t for t in (emit_size(ctx, plan), emit_write(ctx, plan), emit_oneof_members(ctx, plan)) if t)
