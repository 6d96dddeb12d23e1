"""The reverse writer: :class:`ReverseBuffer` and the generated ``write_reverse_<Name>``.

A reverse writer fills a buffer from its end toward its start. Writing a
message back to front puts each value before its length and tag, so the
length of every nested message is known the moment it is needed, with no
measuring pass (the idea of Hedera's PBJ and of Google's upb encoder).

The contract of a generated ``write_reverse_<Name>(o, rb, pos) -> pos``:

* ``rb`` is the :class:`ReverseBuffer`; ``pos`` is the index in its storage
  where the bytes written so far begin. The function writes ``o`` (without
  its own tag and length) so that it ends at ``pos``, and returns the index
  where it begins.
* It writes, in order: the unknown fields (in reverse arrival order, so they
  come out last, in arrival order), then the fields in descending field
  number; each value before its length and tag; repeated elements and map
  entries in reverse (map entries in reverse sorted-key order, each as value,
  key, entry length, tag); a sub-message by calling its own writer and then
  writing the number of bytes that call added.
* Before writing it makes room with ``rb._grow``, which replaces the storage
  and returns the new ``pos``; after any call that may have grown the buffer
  it reloads the storage view. Only ``pbj.write_reverse`` stores ``pos`` back
  into the buffer, so a failed write leaves the buffer as it was.

The output equals the forward writer's byte for byte.
"""

from __future__ import annotations

import struct
import threading
from typing import Any

from pbj import wire
from pbj.codegen import (
    FIXED_SIZE,
    GENERATED,
    Source,
    codec_name,
    const,
    fixed_format,
    scalar_kind,
    wire_type_of,
)
from pbj.errors import EncodeError
from pbj.forward import presence_test, write_order
from pbj.schema import FieldInfo, MessageInfo

__all__ = ["ReverseBuffer", "emit_write_reverse", "emit_reverse_oneof_members", "thread_buffer"]

_INT_KINDS = {"int32", "int64", "uint32", "uint64", "enum"}
_LEN_ROOM = 15  # the most a length (10) and a tag (5) can take


class ReverseBuffer:
    """A reusable, growable buffer written from the end toward the start.

    ``with pbj.ReverseBuffer() as buf:`` gives an empty buffer; write into it
    with :func:`pbj.write_reverse` (or the primitive methods below), then read
    the result with :meth:`bytes`, :meth:`to_bytes` or :meth:`copy_to`.

    Growth allocates storage of at least twice the size and copies what was
    written to its end; marks stay valid because they count bytes written,
    not positions.

    Views: :meth:`bytes` returns a ``memoryview`` of the storage, without
    copying. A view still held when the buffer grows keeps showing the old
    storage, which no longer changes; a view held across :meth:`reset` (or a
    new write after it) shows whatever is written there next. Copy
    (:meth:`to_bytes`) what must outlive the next write.

    Args:
        capacity: the initial storage size in bytes (at least 1; default 4096).
    """

    __slots__ = ("_buf", "_mv", "_pos")

    def __init__(self, capacity: int = 4096) -> None:
        capacity = max(int(capacity), 1)
        self._buf = bytearray(capacity)
        self._mv = memoryview(self._buf)
        self._pos = capacity

    def _grow(self, pos: int, need: int) -> int:
        """Make room for ``need`` more bytes before ``pos``; return the new ``pos``."""
        old = self._mv
        cap = len(old)
        written = cap - pos
        new_cap = max(cap * 2, written + need + 64)
        buf = bytearray(new_cap)
        mv = memoryview(buf)
        start = new_cap - written
        mv[start:] = old[pos:]
        self._buf = buf
        self._mv = mv
        return start

    @property
    def capacity(self) -> int:
        """The storage size in bytes."""
        return len(self._mv)

    def __len__(self) -> int:
        """The number of bytes written."""
        return len(self._mv) - self._pos

    def mark(self) -> int:
        """Return the number of bytes written so far, to pass to :meth:`length_since`."""
        return len(self._mv) - self._pos

    def length_since(self, mark: int) -> None:
        """Write, as a varint, the number of bytes written since ``mark``.

        Raises:
            ValueError: ``mark`` is larger than what has been written.
        """
        n = len(self) - mark
        if n < 0:
            raise ValueError(f"mark {mark} is past the {len(self)} bytes written")
        self.write_varint(n)

    def _room(self, need: int) -> int:
        pos = self._pos
        if pos < need:
            pos = self._pos = self._grow(pos, need)
        return pos

    def write_varint(self, value: int) -> None:
        """Write an unsigned varint (0 to 2**64-1) before what is written.

        Raises:
            EncodeError: ``value`` is negative or above 2**64-1.
        """
        pos = self._room(10)
        if 0 <= value < 0x80:
            pos -= 1
            self._mv[pos] = value
            self._pos = pos
        else:
            self._pos = wire.rev_varint(self._mv, pos, value)

    def write_tag(self, number: int, wire_type: int) -> None:
        """Write the tag of field ``number`` with ``wire_type`` ("Message Structure").

        Raises:
            EncodeError: the field number is outside 1..2**29-1 or the wire type outside 0..5.
        """
        if not 1 <= number <= wire.MAX_FIELD_NUMBER or not 0 <= wire_type <= 5:
            raise EncodeError(f"invalid tag: field number {number}, wire type {wire_type}")
        self.write_varint(wire.make_tag(number, wire_type))

    def write_bytes(self, data: bytes | bytearray | memoryview) -> None:
        """Write raw bytes before what is written."""
        n = len(data)
        pos = self._room(n) - n
        self._mv[pos:pos + n] = data
        self._pos = pos

    def bytes(self) -> memoryview:
        """A zero-copy ``memoryview`` of what was written (see the class notes on views)."""
        return self._mv[self._pos:]

    def to_bytes(self) -> bytes:
        """A copy of what was written, as ``bytes``."""
        return self._mv[self._pos:].tobytes()

    def copy_to(self, target: bytearray | memoryview, offset: int = 0) -> int:
        """Copy what was written into ``target`` at ``offset``; return the bytes copied.

        Raises:
            ValueError: ``target`` is too small.
        """
        n = len(self)
        if offset < 0 or offset + n > len(target):
            raise ValueError(f"target of {len(target)} bytes cannot hold {n} bytes at offset {offset}")
        target[offset:offset + n] = self._mv[self._pos:]
        return n

    def reset(self) -> None:
        """Empty the buffer, keeping its storage and capacity."""
        self._pos = len(self._mv)

    def __enter__(self) -> ReverseBuffer:
        self.reset()
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    def __repr__(self) -> str:
        return f"ReverseBuffer({len(self)} bytes written, capacity {self.capacity})"


_local = threading.local()


def thread_buffer() -> ReverseBuffer:
    """This thread's reusable buffer for ``pbj.encode(obj, reverse=True)``, emptied."""
    buf = getattr(_local, "buf", None)
    if buf is None:
        buf = _local.buf = ReverseBuffer(1 << 16)
    buf.reset()
    return buf


GENERATED.update({"_rvar": wire.rev_varint, "_rzz32": wire.zigzag32, "_rzz64": wire.zigzag64,
                  "_spack_into": struct.pack_into})


# ---------------------------------------------------------------- emission helpers

def _ensure(src: Source, need: str) -> None:
    src(f"if pos < {need}:")
    with src:
        src(f"pos = rb._grow(pos, {need})")
        src("mv = rb._mv")


def _put_const(src: Source, data: bytes) -> None:
    """Emit the backwards write of constant bytes (a tag)."""
    if len(data) == 1:
        src(f"pos -= 1; mv[pos] = {data[0]}")
    elif len(data) == 2:
        src(f"pos -= 2; mv[pos] = {data[0]}; mv[pos + 1] = {data[1]}")
    else:
        src(f"pos -= {len(data)}; mv[pos:pos + {len(data)}] = {const(data, 'T')}")


def _put_len(src: Source, n: str) -> None:
    src(f"if {n} < 128:")
    with src:
        src(f"pos -= 1; mv[pos] = {n}")
    src("else:")
    with src:
        src(f"pos = _rvar(mv, pos, {n})")


def _put_scalar(src: Source, kind: str, v: str) -> None:
    """Emit the backwards write of one scalar value (room already made)."""
    if kind in _INT_KINDS:
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
            src(f"pos = _rvar(mv, pos, {v}, {kind!r})")
    elif kind in ("sint32", "sint64"):
        bits = 31 if kind == "sint32" else 63
        src(f"_z = ({v} << 1) ^ ({v} >> {bits})")
        src("if 0 <= _z < 128:")
        with src:
            src("pos -= 1; mv[pos] = _z")
        src("else:")
        with src:
            src(f"pos = _rvar(mv, pos, _rzz{bits + 1}({v}))")
    elif kind == "bool":
        src(f"pos -= 1; mv[pos] = 1 if {v} else 0")
    elif kind in FIXED_SIZE:
        src(f"pos -= {FIXED_SIZE[kind]}; PI_{kind}(mv, pos, {v})")
    else:
        raise AssertionError(kind)


def _scalar_room(kind: str) -> int:
    """The most bytes one scalar value of ``kind`` takes."""
    if kind == "bool":
        return 1
    return FIXED_SIZE.get(kind, 10)


def _tagb(f: FieldInfo, kind: str) -> bytes:
    if f.group:
        return wire.tag_bytes(f.number, wire.WIRE_SGROUP)
    if f.repeated and f.packed:
        return wire.tag_bytes(f.number, wire.WIRE_LEN)
    return wire.tag_bytes(f.number, wire_type_of(kind))


def _is_fixed_budget(f: FieldInfo) -> bool:
    """A singular scalar field whose room is made once, at the function's start."""
    return not f.repeated and not f.is_map and not f.group and scalar_kind(f.type) not in (
        "string", "bytes", "message")


def _budget(f: FieldInfo) -> int:
    kind = scalar_kind(f.type)
    return len(_tagb(f, kind)) + _scalar_room(kind)


def _put_len_value(src: Source, data: str, tag: bytes, rem: int) -> None:
    """Emit the backwards write of a LEN value held as bytes in ``data``."""
    src(f"_l = len({data})")
    _ensure(src, f"_l + {_LEN_ROOM + rem}")
    src(f"pos -= _l; mv[pos:pos + _l] = {data}")
    _put_len(src, "_l")
    _put_const(src, tag)


def _put_message(src: Source, cls: type, v: str, tag: bytes, rem: int, group: bool = False,
                 number: int = 0) -> None:
    """Emit the backwards write of a sub-message ``v``: body, length, tag."""
    if group:
        _ensure(src, f"{_LEN_ROOM + rem}")
        _put_const(src, wire.tag_bytes(number, wire.WIRE_EGROUP))
        src(f"pos = write_reverse_{codec_name(cls)}({v}, rb, pos)")
        src("mv = rb._mv")
        _ensure(src, f"{_LEN_ROOM + rem}")
        _put_const(src, tag)
        return
    src("_w = len(mv) - pos")
    src(f"pos = write_reverse_{codec_name(cls)}({v}, rb, pos)")
    src("mv = rb._mv")
    _ensure(src, f"{_LEN_ROOM + rem}")
    src("_l = len(mv) - pos - _w")
    _put_len(src, "_l")
    _put_const(src, tag)


def _put_single(src: Source, f: FieldInfo, kind: str, v: str, rem: int) -> None:
    """Emit one present singular value with its tag (scalars: room already made)."""
    tag = _tagb(f, kind)
    if kind == "string":
        src(f"_b = {v}.encode()")
        _put_len_value(src, "_b", tag, rem)
    elif kind == "bytes":
        _put_len_value(src, v, tag, rem)
    elif kind == "message":
        _put_message(src, f.type, v, tag, rem, group=f.group, number=f.number)
    else:
        _put_scalar(src, kind, v)
        _put_const(src, tag)


def _put_field(src: Source, f: FieldInfo, rem: int) -> None:
    v = f"o.{f.name}"
    if f.is_map:
        _put_map(src, f, v, rem)
        return
    kind = scalar_kind(f.type)
    src(f"v = {v}")
    if not f.repeated:
        src(f"if {presence_test(f, kind, 'v')}:")
        with src:
            _put_single(src, f, kind, "v", rem)
        return
    src("if v:")
    with src:
        tag = _tagb(f, kind)
        if f.packed:
            if kind in FIXED_SIZE:
                src(f"_l = len(v) * {FIXED_SIZE[kind]}")
                _ensure(src, f"_l + {_LEN_ROOM + rem}")
                src(f"pos -= _l; _spack_into('<%d{fixed_format(kind)}' % len(v), mv, pos, *v)")
            else:
                _ensure(src, f"len(v) * {_scalar_room(kind)} + {_LEN_ROOM + rem}")
                src("_w = len(mv) - pos")
                src("for x in reversed(v):")
                with src:
                    _put_scalar(src, kind, "x")
                src("_l = len(mv) - pos - _w")
            _put_len(src, "_l")
            _put_const(src, tag)
        elif kind in ("string", "bytes", "message"):
            src("for x in reversed(v):")
            with src:
                _put_single(src, f, kind, "x", rem)
        else:
            _ensure(src, f"len(v) * {len(tag) + _scalar_room(kind)} + {rem}")
            src("for x in reversed(v):")
            with src:
                _put_single(src, f, kind, "x", rem)


def _entry_room(kind: str, data: str | None) -> str:
    """Source for the most bytes one map-entry part (1-byte tag included) takes."""
    if data is not None:
        return f"len({data}) + 11"
    return str(1 + _scalar_room(kind))


def _put_entry_part(src: Source, kind: str, f_type: Any, v: str, data: str | None, number: int,
                    rem_after: str) -> None:
    tag = wire.tag_bytes(number, wire_type_of(kind))
    if kind == "message":
        _put_message_in_entry(src, f_type, v, tag, rem_after)
    elif data is not None:
        src(f"_l = len({data})")
        src(f"pos -= _l; mv[pos:pos + _l] = {data}")
        _put_len(src, "_l")
        _put_const(src, tag)
    else:
        _put_scalar(src, kind, v)
        _put_const(src, tag)


def _put_message_in_entry(src: Source, cls: type, v: str, tag: bytes, rem_after: str) -> None:
    src("_v = len(mv) - pos")
    src(f"pos = write_reverse_{codec_name(cls)}({v}, rb, pos)")
    src("mv = rb._mv")
    _ensure(src, rem_after)
    src("_l = len(mv) - pos - _v")
    _put_len(src, "_l")
    _put_const(src, tag)


def _put_map(src: Source, f: FieldInfo, v: str, rem: int) -> None:
    kkind = f.map_key
    vkind = scalar_kind(f.map_value)
    tag = wire.tag_bytes(f.number, wire.WIRE_LEN)
    src(f"v = {v}")
    src("if v:")
    with src:
        src("for k in sorted(v, reverse=True):")
        with src:
            src("x = v[k]")
            kdata = vdata = None
            if kkind == "string":
                src("_kb = k.encode()")
                kdata = "_kb"
            if vkind == "string":
                src("_xb = x.encode()")
                vdata = "_xb"
            elif vkind == "bytes":
                vdata = "x"
            key_room = _entry_room(kkind, kdata)
            after_value = f"{key_room} + {_LEN_ROOM + 11 + rem}"
            if vkind != "message":
                _ensure(src, f"{_entry_room(vkind, vdata)} + {after_value}")
            src("_w = len(mv) - pos")
            _put_entry_part(src, vkind, f.map_value, "x", vdata, 2, after_value)
            _put_entry_part(src, kkind, None, "k", kdata, 1, "")
            src("_l = len(mv) - pos - _w")
            _put_len(src, "_l")
            _put_const(src, tag)


def emit_write_reverse(mi: MessageInfo) -> str:
    """Source of ``write_reverse_<Name>(o, rb, pos) -> pos`` for a resolved message class."""
    name = codec_name(mi.cls)
    order = list(reversed(write_order(mi)))
    budgets = [(_budget(obj) if what == "field" and _is_fixed_budget(obj) else 0) for what, obj in order]
    src = Source()
    src(f"def write_reverse_{name}(o, rb, pos):")
    with src:
        src("mv = rb._mv")
        rem = sum(budgets)
        if rem:
            _ensure(src, str(rem))
        src("u = o._pbj_unknown")
        src("if u:")
        with src:
            _put_len_raw(src, rem)
        for (what, obj), budget in zip(order, budgets, strict=True):
            rem -= budget
            if what == "field":
                _put_field(src, obj, rem)
            else:
                oneof, members = obj
                table = f"write_reverse_{name}__{oneof.name}"
                src(f"v = o.{oneof.name}")
                if len(members) == len(oneof.members):
                    src("if v is not None:")
                else:
                    names = const(frozenset(m.name for m in members), f"run_{name}__{oneof.name}_{members[0].number}")
                    src(f"if v is not None and v[0] in {names}:")
                with src:
                    src(f"pos = {table}[v[0]](v[1], rb, pos)")
                    src("mv = rb._mv")
                    if rem:
                        _ensure(src, str(rem))
        src("return pos")
    return src.text()


def _put_len_raw(src: Source, rem: int) -> None:
    """Emit the backwards write of the unknown fields' raw bytes ``u``."""
    src("_l = len(u)")
    _ensure(src, f"_l + {rem}")
    src("pos -= _l; mv[pos:pos + _l] = u")


def emit_reverse_oneof_members(mi: MessageInfo) -> str:
    """Source of ``write_reverse_<Name>__<oneof>__<member>(v, rb, pos) -> pos`` for every member."""
    name = codec_name(mi.cls)
    src = Source()
    for oneof in mi.oneofs:
        for m in oneof.members:
            kind = scalar_kind(m.type)
            src(f"def write_reverse_{name}__{oneof.name}__{m.name}(v, rb, pos):")
            with src:
                src("mv = rb._mv")
                if kind not in ("string", "bytes", "message"):
                    _ensure(src, str(_budget(m)))
                _put_single(src, m, kind, "v", 0)
                src("return pos")
    return src.text()
