"""``float`` fields bit-exact: every binary32 NaN comes back with the bits it arrived with.

pbj holds a ``float`` field's value as a Python ``float``, a binary64. Every
binary32 value widens to binary64 exactly, and narrows back to the same bits,
with one exception: the hardware conversion on x86 (``cvtss2sd``/``cvtsd2ss``,
used by ``struct``'s ``"<f"``) quiets a *signalling* NaN, setting bit 22, so
``0x7f800001`` would come back as ``0x7fc00001``. Google's runtimes copy the
four bytes and keep the NaN as it arrived ("Encoding", "Non-varint Numbers":
``fixed32`` bits on the wire).

The representation (documented in ``docs/usage-guide.md``): a binary32 NaN
with sign ``s`` and the 23 bits ``p`` after its exponent (the quiet bit is
the highest of them) is held as the binary64 NaN with sign ``s`` and the 52
bits ``p << 29``, the value IEEE 754 widening gives, but with the quiet bit
as it arrived: a binary32 signalling NaN is a binary64 signalling NaN.
Writing narrows it back to the same 32 bits: sign, exponent, and the top 23
bits of the binary64 NaN's 52. A NaN built in Python whose top 23 bits are
all zero (a binary64 signalling NaN with a small payload) cannot keep its
payload in 32 bits; it is written as the quiet NaN of its sign, as the
hardware conversion writes it.

Generated code reaches these through the names ``_f32nan`` …  of
:data:`pbj.codec.runtime.HELPERS`, and only on a path that has already seen
a NaN (``v != v``), so a value that is not a NaN costs one comparison.
"""

from __future__ import annotations

import struct

__all__ = ["nan_from_bits", "nan_bits", "read_nan", "nan_bytes", "packed_run", "pack_run", "pack_into"]

_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")
_F64 = struct.Struct("<d")
_F32 = struct.Struct("<f")


def nan_from_bits(bits: int) -> float:
    """The Python float that holds the binary32 NaN ``bits`` (a 32-bit unsigned int)."""
    wide = ((bits & 0x80000000) << 32) | 0x7FF0000000000000 | ((bits & 0x7FFFFF) << 29)
    return _F64.unpack(_U64.pack(wide))[0]


def nan_bits(value: float) -> int:
    """The binary32 bits of NaN ``value``, held as :func:`nan_from_bits` gives it (a 32-bit unsigned int)."""
    wide = _U64.unpack(_F64.pack(value))[0]
    payload = (wide >> 29) & 0x7FFFFF
    return ((wide >> 32) & 0x80000000) | 0x7F800000 | (payload or 0x400000)


def read_nan(data: bytes, pos: int) -> float:
    """The binary32 NaN at ``data[pos:pos + 4]`` (little-endian), as a float that keeps its bits."""
    return nan_from_bits(_U32.unpack_from(data, pos)[0])


def nan_bytes(value: float) -> bytes:
    """The 4 little-endian bytes of NaN ``value`` as a binary32 (see :func:`nan_bits`)."""
    return _U32.pack(nan_bits(value))


def packed_run(data: bytes, pos: int, end: int, values: tuple) -> tuple:
    """The elements of the packed ``float`` run ``data[pos:end]``, given ``values`` as ``struct`` read them.

    Called when ``sum(values)`` is a NaN: the NaNs among ``values`` are read again bit-exact.
    """
    return tuple(read_nan(data, pos + 4 * i) if v != v else v for i, v in enumerate(values))


def pack_run(values: tuple | list) -> bytes:
    """The bytes of the packed ``float`` run ``values`` (some may be NaNs), bit-exact."""
    return b"".join(nan_bytes(v) if v != v else _F32.pack(v) for v in values)


def pack_into(buf: memoryview | bytearray, pos: int, value: float) -> None:
    """Write NaN ``value`` as a binary32 at ``buf[pos:pos + 4]`` (the reverse writer's form)."""
    _U32.pack_into(buf, pos, nan_bits(value))
