"""The reverse writer's emitter: ``write_reverse_<Name>`` from a plan.

The contract of a generated ``write_reverse_<Name>(o, rb, pos) -> pos``:

* ``rb`` is a :class:`~pbj.codec.buffer.ReverseBuffer` claimed for this
  write; ``pos`` is the index in its storage where the bytes written so far
  begin. The function writes ``o`` (without its own tag and length) so that
  it ends at ``pos``, and returns the index where it begins.
* It writes, in order: the unknown fields (so they come out last, in arrival
  order), then the fields in descending field number; each value before its
  length and tag; repeated elements and map entries in reverse (map entries
  in reverse sorted-key order, each as value, key, entry length, tag); a
  sub-message by calling its own writer and then writing the number of bytes
  that call added.
* It uses the buffer only through the writer protocol of
  :mod:`pbj.codec.buffer`: it reads ``rb.writer_view`` into a local, makes
  room with ``rb.writer_grow`` (which replaces the storage and returns the
  new ``pos``) and reads the view again after any call that may have grown
  it. Only the caller commits ``pos``, so a failed write leaves the buffer as
  it was.

The output equals the forward writer's byte for byte.
"""

from __future__ import annotations

from pbj import wire
from pbj.codec.emit import (
    INT_OPS,
    Emit,
    FieldShapes,
    bytes_value,
    class_check,
    describe,
    emit_field,
    emit_run_head,
    kind_of,
    str_encode,
)
from pbj.codec.plan import (
    EXPLICIT,
    EXTENSIONS,
    FIELD,
    IMPLICIT,
    MESSAGE,
    FieldPlan,
    MessagePlan,
    row_of,
)
from pbj.codec.source import Source
from pbj.codec.wide import is_row, is_wide, step_number
from pbj.scalars import OP_BOOL, OP_FLOAT32, OP_STRING, OP_ZIGZAG, ScalarType

__all__ = ["emit_write_reverse", "emit_reverse_oneof_members", "emit_reverse"]

_LEN_ROOM = 15  # the most a length (10) and a tag (5) can take


def _ensure(src: Source, need: str) -> None:
    src(f"if pos < {need}:")
    with src:
        src(f"pos = rb.writer_grow(pos, {need})")
        src("mv = rb.writer_view")


def _put_const(ctx: Emit, src: Source, data: bytes) -> None:
    """Emit the backwards write of constant bytes (a tag)."""
    if len(data) == 1:
        src(f"pos -= 1; mv[pos] = {data[0]}")
    elif len(data) == 2:
        src(f"pos -= 2; mv[pos] = {data[0]}; mv[pos + 1] = {data[1]}")
    else:
        src(f"pos -= {len(data)}; mv[pos:pos + {len(data)}] = {ctx.tag(data)}")


def _put_len(src: Source, n: str) -> None:
    src(f"if {n} < 128:")
    with src:
        src(f"pos -= 1; mv[pos] = {n}")
    src("else:")
    with src:
        src(f"pos = _rvar(mv, pos, {n})")


def _put_scalar(src: Source, kind: ScalarType, v: str) -> None:
    """Emit the backwards write of one scalar value (room already made)."""
    if kind.op in INT_OPS:
        src(f"if 0 <= {v} < 128:")
        with src:
            src(f"pos -= 1; mv[pos] = {v}")
        src(f"elif 0 <= {v} < 16384:")
        with src:
            src(f"pos -= 2; mv[pos] = ({v} & 127) | 128; mv[pos + 1] = {v} >> 7")
        src(f"elif 0 <= {v} < 2097152:")
        with src:
            src(f"pos -= 3; mv[pos] = ({v} & 127) | 128; mv[pos + 1] = (({v} >> 7) & 127) | 128; "
                f"mv[pos + 2] = {v} >> 14")
        src(f"elif 0 <= {v} < 268435456:")
        with src:
            src(f"pos -= 4; mv[pos] = ({v} & 127) | 128; mv[pos + 1] = (({v} >> 7) & 127) | 128; "
                f"mv[pos + 2] = (({v} >> 14) & 127) | 128; mv[pos + 3] = {v} >> 21")
        src("else:")
        with src:
            src(f"pos = _rvar(mv, pos, {v}, {kind.name!r})")
    elif kind.op == OP_ZIGZAG:
        bits = (kind.bits or 64) - 1
        src(f"_z = ({v} << 1) ^ ({v} >> {bits})")
        src("if 0 <= _z < 128:")
        with src:
            src("pos -= 1; mv[pos] = _z")
        src("else:")
        with src:
            src(f"pos = _rvar(mv, pos, _zz{bits + 1}({v}))")
    elif kind.op == OP_BOOL:
        src(f"pos -= 1; mv[pos] = 1 if {v} else 0")
    else:
        if kind.op == OP_FLOAT32:  # a NaN keeps its bits (pbj.codec.float32)
            src(f"pos -= 4; _PI_float(mv, pos, {v}) if {v} == {v} else _f32into(mv, pos, {v})")
        else:
            src(f"pos -= {kind.width}; _PI_{kind.name}(mv, pos, {v})")


def _scalar_room(kind: ScalarType) -> int:
    """The most bytes one scalar value of ``kind`` takes."""
    if kind.op == OP_BOOL:
        return 1
    return kind.width or 10


def _is_fixed_budget(f: FieldPlan) -> bool:
    """A singular scalar field whose room is made once, at the function's start."""
    return f.label in (IMPLICIT, EXPLICIT) and not f.group and f.type != MESSAGE and not row_of(f.type).is_len


def _budget(f: FieldPlan) -> int:
    return len(f.tag) + _scalar_room(row_of(f.type))


def _put_len_value(ctx: Emit, src: Source, data: str, tag: bytes, rem: int) -> None:
    """Emit the backwards write of a LEN value held as bytes in ``data``."""
    src(f"_l = len({data})")
    _ensure(src, f"_l + {_LEN_ROOM + rem}")
    src(f"pos -= _l; mv[pos:pos + _l] = {data}")
    _put_len(src, "_l")
    _put_const(ctx, src, tag)


def _put_message(ctx: Emit, src: Source, f: FieldPlan, v: str, rem: int) -> None:
    """Emit the backwards write of a sub-message ``v``: body, length, tag (or end tag, body, tag).

    A sub-message of another class than ``f``'s is refused (by identity: one whose field names
    match would be written with its other fields dropped)."""
    src(class_check(ctx, f, v))
    fn = f"write_reverse_{ctx.stem(f.sub)}"
    if f.group:
        _ensure(src, f"{_LEN_ROOM + rem}")
        _put_const(ctx, src, f.end_tag)
        src(f"pos = {fn}({v}, rb, pos)")
        src("mv = rb.writer_view")
        _ensure(src, f"{_LEN_ROOM + rem}")
        _put_const(ctx, src, f.tag)
        return
    src("_w = len(mv) - pos")
    src(f"pos = {fn}({v}, rb, pos)")
    src("mv = rb.writer_view")
    _ensure(src, f"{_LEN_ROOM + rem}")
    src("_l = len(mv) - pos - _w")
    _put_len(src, "_l")
    _put_const(ctx, src, f.tag)


def _put_single(ctx: Emit, src: Source, f: FieldPlan, v: str, rem: int) -> None:
    """Emit one present singular value with its tag (scalars: room already made)."""
    kind = kind_of(f.type)
    if kind is None:
        _put_message(ctx, src, f, v, rem)
    elif kind.is_len:  # exact bytes: their len is what is stored
        src(f"_b = {str_encode(v, f.utf8) if kind.op == OP_STRING else bytes_value(v)}")
        _put_len_value(ctx, src, "_b", f.tag, rem)
    else:
        _put_scalar(src, kind, v)
        _put_const(ctx, src, f.tag)


class _Puts(FieldShapes):
    """The reverse writer's shapes: the field's bytes, last first, in front of ``pos``; ``rem``
    bytes of room stay made after them."""

    loop = "for x in reversed(v):"

    def __init__(self, ctx: Emit, rem: int) -> None:
        super().__init__(ctx)
        self.rem = rem

    def single(self, src: Source, f: FieldPlan, v: str) -> None:
        _put_single(self.ctx, src, f, v, self.rem)

    def repeated(self, src: Source, f: FieldPlan) -> bool:
        kind = kind_of(f.type)
        if kind is not None and not kind.is_len:  # room for every value made once
            _ensure(src, f"len(v) * {len(f.tag) + _scalar_room(kind)} + {self.rem}")
        return False

    def packed(self, src: Source, f: FieldPlan) -> None:
        r = row_of(f.type)
        if r.width:
            src(f"_l = len(v) * {r.width}")
            _ensure(src, f"_l + {_LEN_ROOM + self.rem}")
            src(f"pos -= _l; _spack_into('<%d{(r.struct_format or '')[1:]}' % len(v), mv, pos, *v)")
            if r.op == OP_FLOAT32:  # a NaN makes the sum a NaN; then each value keeps its bits
                src("_t = sum(v)")
                src("if _t != _t: mv[pos:pos + _l] = _f32pack(v)")
        else:
            _ensure(src, f"len(v) * {_scalar_room(r)} + {_LEN_ROOM + self.rem}")
            src("_w = len(mv) - pos")
            src("for x in reversed(v):")
            with src:
                _put_scalar(src, r, "x")
            src("_l = len(mv) - pos - _w")
        _put_len(src, "_l")
        _put_const(self.ctx, src, f.tag)

    def map(self, src: Source, f: FieldPlan) -> None:
        _put_map(self.ctx, src, f, self.rem)


def _entry_room(kind: ScalarType, data: str | None) -> str:
    """Source for the most bytes one map-entry part (1-byte tag included) takes."""
    if data is not None:
        return f"len({data}) + 11"
    return str(1 + _scalar_room(kind))


def _put_entry_part(ctx: Emit, src: Source, kind: ScalarType | None, sub: int, v: str, data: str | None, number: int,
                    rem_after: str) -> None:
    if kind is None:
        tag = wire.tag_bytes(number, wire.WIRE_LEN)
        src("_v = len(mv) - pos")
        src(f"pos = write_reverse_{ctx.stem(sub)}({v}, rb, pos)")
        src("mv = rb.writer_view")
        _ensure(src, rem_after)
        src("_l = len(mv) - pos - _v")
        _put_len(src, "_l")
        _put_const(ctx, src, tag)
        return
    tag = wire.tag_bytes(number, kind.wire_type)
    if data is not None:
        src(f"_l = len({data})")
        src(f"pos -= _l; mv[pos:pos + _l] = {data}")
        _put_len(src, "_l")
        _put_const(ctx, src, tag)
    else:
        _put_scalar(src, kind, v)
        _put_const(ctx, src, tag)


def _put_map(ctx: Emit, src: Source, f: FieldPlan, rem: int) -> None:
    kkind = row_of(f.key)
    vkind = kind_of(f.type)
    src("for k in sorted(v, reverse=True):")
    with src:
        src("x = v[k]")
        kdata = vdata = None
        if kkind.op == OP_STRING:
            src(f"_kb = {str_encode('k', f.utf8)}")
            kdata = "_kb"
        if vkind is None:
            src(class_check(ctx, f, "x"))
        elif vkind.is_len:
            src(f"_xb = {str_encode('x', f.utf8) if vkind.op == OP_STRING else bytes_value('x')}")
            vdata = "_xb"
        key_room = _entry_room(kkind, kdata)
        after_value = f"{key_room} + {_LEN_ROOM + 11 + rem}"
        if vkind is not None:
            _ensure(src, f"{_entry_room(vkind, vdata)} + {after_value}")
        src("_w = len(mv) - pos")
        _put_entry_part(ctx, src, vkind, f.sub, "x", vdata, 2, after_value)
        _put_entry_part(ctx, src, kkind, -1, "k", kdata, 1, "")
        src("_l = len(mv) - pos - _w")
        _put_len(src, "_l")
        _put_const(ctx, src, f.tag)


def _table(ctx: Emit, plan: MessagePlan, j: int) -> str:
    return ctx.scope.shared(("write_reverse", plan.idx, j),
                            f"write_reverse_{ctx.stem(plan.idx)}__{plan.oneofs[j].name}", dict)


def _reverse_step(ctx: Emit, src: Source, plan: MessagePlan, step: int, i: int, members: tuple[int, ...],
                  rem: int) -> None:
    """Emit the backwards write of write step ``(step, i, members)``; ``rem`` bytes of room stay made after it."""
    if step == FIELD:
        emit_field(ctx, src, plan, plan.fields[i], _Puts(ctx, rem))
        return
    if step == EXTENSIONS:
        lo, hi = plan.extension_ranges[i]
        src(f"# extensions {lo} to {hi - 1}")
        src("if o._pbj_extensions:")
        with src:
            src(f"pos = {ctx.extensions_helper('write_reverse_range')}(o._pbj_extensions, {lo}, {hi}, rb, pos)")
            src("mv = rb.writer_view")
            if rem:
                _ensure(src, str(rem))
        return
    emit_run_head(ctx, src, plan, i, members)
    with src:
        src(f"pos = {_table(ctx, plan, i)}[v[0]](v[1], rb, pos)")
        src("mv = rb.writer_view")
        if rem:
            _ensure(src, str(rem))


def _put_unknown(src: Source, rem: int) -> None:
    src("u = o._pbj_unknown")
    src("if u:")
    with src:
        src(f"u = {bytes_value('u')}; _l = len(u)")
        _ensure(src, f"_l + {rem}")
        src("pos -= _l; mv[pos:pos + _l] = u")


def emit_write_reverse(ctx: Emit, plan: MessagePlan) -> str:
    """Source of ``write_reverse_<Name>(o, rb, pos) -> pos``."""
    if is_wide(plan):
        return _emit_wide(ctx, plan)
    order = list(reversed(plan.writes))
    budgets = [(_budget(plan.fields[i]) if step == FIELD and _is_fixed_budget(plan.fields[i]) else 0)
               for step, i, _ in order]
    src = Source()
    src(f"def write_reverse_{ctx.stem(plan.idx)}(o, rb, pos):")
    with src:
        src("mv = rb.writer_view")
        rem = sum(budgets)
        if rem:
            _ensure(src, str(rem))
        _put_unknown(src, rem)
        for (step, i, members), budget in zip(order, budgets, strict=True):
            rem -= budget
            _reverse_step(ctx, src, plan, step, i, members, rem)
        src("return pos")
    return src.text()


def _emit_wide(ctx: Emit, plan: MessagePlan) -> str:
    """Source of the reverse writer of a wide message: a loop over its table (:mod:`pbj.codec.wide`),
    in descending field number; as :func:`pbj.codec.forward._emit_wide` for the forward roles."""
    stem = ctx.stem(plan.idx)
    table: list = []
    name = ctx.const(table, f"WRITE_REVERSE_{stem}")
    steps = Source()
    for k, (step, i, members) in enumerate(reversed(plan.writes)):
        f = plan.fields[i] if step == FIELD else None
        if f is not None and is_row(f):
            table.append(ctx.wide_row(plan, f, "write_reverse"))
            continue
        table.append(None)
        number = step_number(plan, step, i, members)
        fn = ctx.scope.name(f"write_reverse_{stem}__{number}")
        steps(f"def {fn}(o, _, rb, pos):")
        with steps:
            steps("mv = rb.writer_view")
            _reverse_step(ctx, steps, plan, step, i, members, 0)
            steps("return pos")
        steps(f"{name}[{k}] = ({fn}, None)")
    src = Source()
    src(f"def write_reverse_{stem}(o, rb, pos):")
    with src:
        src(f"# {len(plan.writes)} write steps, last first: each is the function in its row of {name} "
            "(pbj.codec.wide)")
        src("mv = rb.writer_view")
        _put_unknown(src, 0)
        src(f"for step, a in {name}:")
        with src:
            src("pos = step(o, a, rb, pos)")
        src("return pos")
    return src.text() + steps.text() if steps.lines else src.text()


def emit_reverse_oneof_members(ctx: Emit, plan: MessagePlan) -> str:
    """Source of ``write_reverse_<Name>__<oneof>__<member>(v, rb, pos) -> pos`` and their tables."""
    stem = ctx.stem(plan.idx)
    src = Source()
    for j, oneof in enumerate(plan.oneofs):
        table = _table(ctx, plan, j)
        for i in oneof.members:
            m = plan.fields[i]
            fn = ctx.scope.name(f"write_reverse_{stem}__{oneof.name}__{m.name}")
            src(f"def {fn}(v, rb, pos):")
            with src:
                src(describe(m))
                src("mv = rb.writer_view")
                if m.type != MESSAGE and not row_of(m.type).is_len:
                    _ensure(src, str(_budget(m)))
                _put_single(ctx, src, m, "v", 0)
                src("return pos")
            src(f"{table}[{m.name!r}] = {fn}")
    return src.text() if src.lines else ""


def emit_reverse(ctx: Emit, plan: MessagePlan) -> str:
    """The whole reverse writer of one class."""
    return "\n".join(t for t in (emit_write_reverse(ctx, plan), emit_reverse_oneof_members(ctx, plan)) if t)
