"""The run-time helpers generated code calls, and the decode-error boundary.

Generated functions read these as globals of their batch's namespace (see
:mod:`pbj.codec.source`), under the names of :data:`HELPERS`. Every name
there starts with an underscore or is ``DecodeError``; no name a schema can
produce for a generated function or constant starts that way.

The decode-error boundary: generated parse functions do not check values one
by one. Low-level failures (``IndexError`` on truncated input,
``UnicodeDecodeError``, ``struct.error``) are caught once per generated
function and turned into a :class:`~pbj.errors.DecodeError` by
:func:`locate`, which adds the function's part of the field path and the byte
offset of the failing field's tag.
"""

from __future__ import annotations

import math
import struct
from typing import Any

from pbj import scalars, wire
from pbj.codec import float32
from pbj.errors import DecodeError, EncodeError
from pbj.schema import EMPTY_MAP, FrozenMap, OneOf

__all__ = ["MAX_DEPTH", "StaleSize", "blob", "locate", "packed_varints", "group_failed"]

#: The nesting limit of decoding (messages and groups), as Google's runtimes use.
MAX_DEPTH = 100


class StaleSize(Exception):
    """Raised by a generated forward writer when a sub-message written after the length its cached
    size gave added another number of bytes: the size was set by hand (``object.__setattr__``), or
    a value changed since it was measured. Never leaves pbj: ``pbj.encode`` then forgets every size
    cached in the message's tree and writes it again, measuring as it goes (``pbj.api``)."""


def blob(v: Any) -> bytes:
    """The bytes of bytes-like ``v`` as the buffer protocol gives them (all of them, in C order),
    as exact ``bytes``: ``len`` of the result is their size, whatever ``v``'s own ``len`` says (a
    ``bytes`` subclass, a ``memoryview`` of wider items, a strided one).

    Raises:
        TypeError: ``v`` supports no buffer protocol (the caller names the field).
    """
    return memoryview(v).tobytes()


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


#: The first two bytes of gzip data (RFC 1952, "ID1" and "ID2"): read as protobuf, field 3 with wire type 7.
GZIP_MAGIC = b"\x1f\x8b"
#: Added to the reason of an error at the first byte of input that starts as gzip data.
GZIP_HINT = " (the input starts with 1f 8b, as gzip data does: decompress it first, gzip.decompress(data))"


#: The reason the parse functions give when the last field read ran past the end of its message: the
#: field (and a repeated field's element) was read from the bytes after the end and kept before the end
#: was checked (``walk.c`` says the same).
LAST_FIELD_PAST_END = "truncated input: the last field runs past the end of the message"


def locate(exc: BaseException, names: dict[int, tuple[str, Any]], frame: dict[str, Any]) -> DecodeError:
    """Turn ``exc`` into a DecodeError and add this message's part of the path.

    Args:
        exc: the exception caught in a generated parse function.
        names: tag -> ``(field name, where)``: ``where`` is ``None`` for a
            singular field, the name of the local holding a repeated field's
            list (its length is the element index), or ``("map", key kind)``.
        frame: the parse function's locals (read only here, on the error path):
            ``tag`` (the tag being handled when ``exc`` was raised), ``start``
            (the offset of that field's tag) and the repeated fields' lists.

    Returns:
        The DecodeError to raise (``exc`` itself when it is one).
    """
    err = exc if isinstance(exc, DecodeError) else DecodeError(_reason(exc))
    tag = frame.get("tag", 0)
    start = frame.get("start", frame.get("pos", 0))
    raised_here = err.offset is None  # not yet placed by the parse function of a sub-message
    if raised_here:
        err.offset = start
        if start == 0 and frame.get("data", b"")[:2] == GZIP_MAGIC and not err.reason.endswith(GZIP_HINT):
            err.reason += GZIP_HINT
    entry = names.get(tag)
    if entry is not None and tag >= 128:
        # the failure may lie inside a tag of 2+ bytes whose first byte alone looked like ``tag``
        try:
            whole, _ = wire.read_tag(frame["data"], start)
        except Exception:
            whole = None
        if whole != tag:
            entry = None
    if entry is not None:
        name, where = entry
        prefix: list = [name]
        if isinstance(where, tuple):
            key = _map_key(frame.get("data"), start, where[1])
            if key is not None:
                prefix.append(key)
        elif where is not None:
            items = frame.get(where)
            if items is None:
                items = frame.get("t" + where[1:], ())  # a packed run kept as a tuple
            index = len(items) if items is not None else 0
            if index and raised_here and err.reason == LAST_FIELD_PAST_END:
                # the element that ran past this message's end was read (from the bytes after it) and
                # appended before the end was checked: it is the last one, not one more. Any other
                # error (a length running past the end, an error inside the element) is raised before
                # its element is kept.
                index -= 1
            prefix.append(index)
        err.path[0:0] = prefix
    return err


def _map_key(data: Any, start: int, kind: str) -> tuple | None:
    """The key of the map entry whose tag is at ``start``, as a 1-tuple path element.

    Runs only on the error path: it reads the entry again and returns the last
    key it holds (the key may follow the value), or ``None`` if there is none
    or it cannot be read (it runs past the entry's end). ``pbj/_native/walk.c``
    ``map_key`` reads it the same way.
    """
    row = scalars.row(kind)
    try:
        _, pos = wire.read_tag(data, start)
        n, pos = wire.read_varint(data, pos)
        if n > wire.MAX_SIZE:  # a length the decoder refuses holds no entry, so no key (walk.c alike)
            return None
        end = min(pos + n, len(data))
        key_tag = wire.make_tag(1, row.wire_type)
        key = None
        while pos < end:
            t, pos = wire.read_tag(data, pos)
            if t != key_tag:
                pos = wire.skip_field(data, pos, t, end, MAX_DEPTH)
                continue
            if row.width is not None:
                key = struct.unpack_from(row.struct_format or "", data, pos)[0]
                pos += row.width
            elif row.is_len:
                m, pos = wire.read_varint(data, pos)
                key = bytes(data[pos:pos + m]).decode()
                pos += m
            else:
                key, pos = wire.read_varint(data, pos)
                key = narrow(key, row)
            if pos > end:  # a key that runs past its entry is not the entry's: none can be read
                return None
    except Exception:
        return None
    return None if key is None else (key,)


def narrow(value: int, row: scalars.ScalarType) -> Any:
    """A decoded 64-bit varint as a value of ``row``'s type ("Encoding": int32, ZigZag, bool).

    A 32-bit type keeps the low 32 bits (``int32`` and ``enum`` sign-extended),
    then a ZigZag type is decoded.
    """
    if row.op == scalars.OP_BOOL:
        return value != 0
    if row.bits == 32:
        if row.signed_varint:
            if value > 0x7FFFFFFF:
                value = ((value & 0xFFFFFFFF) ^ 0x80000000) - 0x80000000
        else:
            value &= 0xFFFFFFFF
    elif row.signed_varint and value > 0x7FFFFFFFFFFFFFFF:
        value -= 1 << 64
    if row.zigzag:
        value = (value >> 1) ^ -(value & 1)
    return value


def _varint_run(data: bytes, pos: int, end: int, row: scalars.ScalarType, lookup: Any):
    read = wire.read_varint
    plain = row.op != scalars.OP_BOOL and not row.zigzag  # a 1-byte varint is its own value
    while pos < end:
        v = data[pos]
        if v < 128 and plain:
            pos += 1
        else:
            v, pos = read(data, pos)
            v = narrow(v, row)
        yield v if lookup is None else lookup(v, v)
    if pos != end:
        raise DecodeError("packed run ends inside its last element")


def packed_varints(data: bytes, pos: int, end: int, code: int, lookup: Any = None) -> tuple:
    """The elements of a packed run of varints ``data[pos:end]`` of scalar ``code``, as a tuple.

    The tuple is built as the elements are read, with no list in between, so
    the memory above the result stays below the input's size ("Packed
    Repeated Fields"). ``lookup`` maps an enum number to its member.

    Raises:
        DecodeError: the run ends inside its last element, or a varint is malformed.
        IndexError: the input ends inside a varint.
    """
    return tuple(_varint_run(data, pos, end, scalars.BY_CODE[code], lookup))


def group_failed(number: int, found: int) -> DecodeError:
    """The error of a group field ``number`` whose body has no matching end tag.

    ``found`` is the end-group tag that came instead, or 0 when the input ended first.
    """
    if found:
        return DecodeError(f"group {number} ended by the end tag of field {found >> 3}")
    return DecodeError(f"group {number} has no end tag")


_HELPERS: dict[str, Any] = {}


def __getattr__(name: str) -> dict[str, Any]:
    """``HELPERS``: name -> value of everything generated code reads besides its own functions and
    constants; made on first use (it holds :mod:`pbj.wire`'s varint tables, which ``import pbj``
    on the native engine does not build)."""
    if name != "HELPERS":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if not _HELPERS:
        _HELPERS.update(_helpers())
    return _HELPERS


def _helpers() -> dict[str, Any]:
    helpers: dict[str, Any] = {
        "__builtins__": __builtins__,
        # forward writer
        "_V": wire.VARINT_BYTES,
        "_VM": wire.VARINT_MORE,
        "_venc": wire.encode_varint,
        "_vsize": wire.varint_size,
        "_zz32": wire.zigzag32,
        "_zz64": wire.zigzag64,
        "_copysign": math.copysign,
        "_spack": struct.pack,
        "_B0": b"\x00",
        "_B1": b"\x01",
        "_utf8": str.encode,
        "_blob": blob,
        "_type": type,
        "_StaleSize": StaleSize,
        "_EncodeError": EncodeError,
        # reverse writer
        "_rvar": wire.rev_varint,
        "_spack_into": struct.pack_into,
        # parser
        "_rv": wire.read_varint,
        "_rsize": wire.read_size,
        "_rtag": wire.read_tag,
        "_skip": wire.skip_field,
        "_new": object.__new__,
        "_tnew": tuple.__new__,
        "_OneOf": OneOf,
        "_FrozenMap": FrozenMap,
        "_EMPTY_MAP": EMPTY_MAP,
        "_locate": locate,
        "_packed_varints": packed_varints,
        "_group_failed": group_failed,
        "DecodeError": DecodeError,
        "_unpack_from": struct.unpack_from,
        # float fields: NaNs bit-exact
        "_f32nan": float32.read_nan,
        "_f32run": float32.packed_run,
        "_f32b": float32.nan_bytes,
        "_f32pack": float32.pack_run,
        "_f32into": float32.pack_into,
    }
    for t in scalars.SCALARS.values():
        if t.packer is not None:
            helpers[f"_S_{t.name}"] = t.packer
            # a bound method made once: ``_S_double.pack_into(...)`` made a new one on every call (memray)
            helpers[f"_PI_{t.name}"] = t.packer.pack_into
    return helpers
