"""Wire-format primitives: varints, ZigZag, fixed-width values and tags.

This is the one place where each primitive of protobuf's binary encoding is
defined (protobuf.dev, "Encoding": "Base 128 Varints", "Signed Integers",
"Non-varint Numbers", "Message Structure"). The codec compiler inlines the
fast paths (1- and 2-byte varints) into generated code and calls the
functions here for everything else, so a value reaches these functions only
when it is large, negative or out of range.

Conventions:

* ``encode_*`` return the encoding as ``bytes`` and check the value's range,
  raising :class:`~pbj.errors.EncodeError`.
* ``size_*`` return the number of bytes the encoding takes (same checks).
* ``rev_*`` write backwards into a writable ``memoryview`` ending at ``pos``
  and return the new (smaller) position; the caller guarantees room.
* ``read_*`` take ``(data, pos)`` and return ``(value, new_pos)``; they raise
  :class:`~pbj.errors.DecodeError` (without a path: the generated parser adds
  it) or ``IndexError`` on truncation, which the parser turns into a
  ``DecodeError``.
"""

from __future__ import annotations

from pbj import scalars
from pbj.errors import DecodeError, EncodeError
from pbj.scalars import WIRE_EGROUP, WIRE_I32, WIRE_I64, WIRE_LEN, WIRE_SGROUP, WIRE_VARINT

__all__ = [
    "WIRE_VARINT", "WIRE_I64", "WIRE_LEN", "WIRE_SGROUP", "WIRE_EGROUP", "WIRE_I32",
    "MAX_FIELD_NUMBER", "make_tag", "tag_bytes", "encode_varint",
    "varint_size", "zigzag32", "zigzag64", "unzigzag", "read_varint", "read_size", "read_tag", "check_fields",
    "skip_field", "RANGES", "check_range",
]

MAX_FIELD_NUMBER = (1 << 29) - 1
_U64 = (1 << 64) - 1

#: Inclusive ranges of the integer types (and ``enum``), from :mod:`pbj.scalars`; a value
#: outside raises EncodeError.
RANGES: dict[str, tuple[int, int]] = {
    t.name: t.range for t in scalars.BY_CODE if t.range is not None
}


def _varint_slow(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


_TABLES: list[list[bytes]] = []


def _tables() -> list[list[bytes]]:
    """``[VARINT_BYTES, VARINT_MORE]``, built on first use (not at import: the native engine needs neither)."""
    if not _TABLES:
        one = [bytes((i,)) for i in range(128)]
        low = [bytes((i | 0x80,)) for i in range(128)]  # the low 7 bits with the continuation bit
        # every value below 2**14: its 1 or 2 varint bytes; the low 14 bits of a longer varint
        _TABLES[:] = [one + [lo + hi for hi in one[1:] for lo in low],
                      [lo + bytes((hi | 0x80,)) for hi in range(128) for lo in low]]
    return _TABLES


def __getattr__(name: str) -> list[bytes]:
    """``VARINT_BYTES`` (the varint encoding of every value below 2**14, the 1- and 2-byte
    varints) and ``VARINT_MORE`` (the low 14 bits of a longer varint: 2 bytes, both with the
    continuation bit set), made on first use."""
    if name == "VARINT_BYTES":
        return _tables()[0]
    if name == "VARINT_MORE":
        return _tables()[1]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _uvarint(v: int) -> bytes:
    """The varint bytes of ``0 <= v < 2**64``, from two tables, 14 bits at a time."""
    V, M = _TABLES or _tables()
    if v < 0x4000:
        return V[v]
    if v < 0x10000000:
        return M[v & 0x3FFF] + V[v >> 14]
    if v < 0x40000000000:
        return M[v & 0x3FFF] + M[(v >> 14) & 0x3FFF] + V[v >> 28]
    if v < 0x100000000000000:
        return M[v & 0x3FFF] + M[(v >> 14) & 0x3FFF] + M[(v >> 28) & 0x3FFF] + V[v >> 42]
    return (M[v & 0x3FFF] + M[(v >> 14) & 0x3FFF] + M[(v >> 28) & 0x3FFF]
            + M[(v >> 42) & 0x3FFF] + V[v >> 56])


def check_range(value: int, kind: str) -> int:
    """Return ``value`` if it fits integer type ``kind``; else raise EncodeError.

    Raises:
        EncodeError: ``value`` is not an ``int`` or lies outside ``RANGES[kind]``.
    """
    lo, hi = RANGES[kind]
    if value.__class__ is not int and not isinstance(value, int):
        raise EncodeError(f"{kind} field needs an int, got {type(value).__name__}")
    if not lo <= value <= hi:
        raise EncodeError(f"{value} is out of range for {kind} [{lo}, {hi}]")
    return value


def encode_varint(value: int, kind: str = "uint64") -> bytes:
    """Encode an integer of type ``kind`` as a varint (protobuf.dev "Encoding").

    Negative int32, int64 and enum values are sign-extended to 64 bits and so
    always take 10 bytes ("Signed Integers").

    Args:
        value: the integer.
        kind: its protobuf type: ``int32``, ``int64``, ``uint32``, ``uint64``,
            ``enum`` (ZigZag types are mapped by the caller with zigzag32/64).

    Returns:
        1 to 10 bytes.

    Raises:
        EncodeError: the value is out of the type's range.
    """
    if value.__class__ is not int or not RANGES[kind][0] <= value <= RANGES[kind][1]:
        check_range(value, kind)
        value = int(value)
    return _uvarint(value & _U64 if value < 0 else value)


def varint_size(value: int, kind: str = "uint64") -> int:
    """Return how many bytes ``encode_varint(value, kind)`` takes (1 to 10).

    Raises:
        EncodeError: the value is out of the type's range.
    """
    if 0 <= value < 0x80:
        return 1
    check_range(value, kind)
    if value < 0:
        return 10
    return (value.bit_length() + 6) // 7


def zigzag32(value: int) -> int:
    """ZigZag-encode a sint32 ("Signed Integers"): 0, -1, 1, -2 -> 0, 1, 2, 3.

    Raises:
        EncodeError: the value is outside the sint32 range.
    """
    check_range(value, "sint32")
    return ((value << 1) ^ (value >> 31)) & 0xFFFFFFFF


def zigzag64(value: int) -> int:
    """ZigZag-encode a sint64 ("Signed Integers").

    Raises:
        EncodeError: the value is outside the sint64 range.
    """
    check_range(value, "sint64")
    return ((value << 1) ^ (value >> 63)) & _U64


def unzigzag(value: int) -> int:
    """Decode a ZigZag value (either width): 0, 1, 2, 3 -> 0, -1, 1, -2."""
    return (value >> 1) ^ -(value & 1)


def make_tag(number: int, wire_type: int) -> int:
    """Return the tag ``(field_number << 3) | wire_type`` ("Message Structure")."""
    return (number << 3) | wire_type


def tag_bytes(number: int, wire_type: int) -> bytes:
    """Return the tag of a field as its varint bytes (1 to 5 bytes)."""
    return _varint_slow(make_tag(number, wire_type))


def rev_varint(mv, pos: int, value: int, kind: str = "uint64") -> int:
    """Write ``value`` as a varint ending at ``pos`` in ``mv``, backwards.

    The caller has made sure there are at least 10 bytes of room before
    ``pos``. Returns the position of the varint's first byte.

    Raises:
        EncodeError: the value is out of the type's range.
    """
    data = encode_varint(value, kind)
    n = len(data)
    mv[pos - n:pos] = data
    return pos - n


def read_varint(data: bytes, pos: int) -> tuple[int, int]:
    """Read a varint starting at ``pos``; return ``(value, next_pos)``.

    The value is the unsigned 64-bit integer; callers narrow it to the field's
    type. Follows "Base 128 Varints": at most 10 bytes, and the 10th byte may
    only carry the 64th bit.

    Raises:
        DecodeError: more than 10 bytes, or a 10th byte above 1.
        IndexError: the input ends inside the varint.
    """
    b = data[pos]
    if b < 0x80:
        return b, pos + 1
    result = b & 0x7F
    b = data[pos + 1]
    if b < 0x80:
        return result | (b << 7), pos + 2
    result |= (b & 0x7F) << 7
    b = data[pos + 2]
    if b < 0x80:
        return result | (b << 14), pos + 3
    result |= (b & 0x7F) << 14
    b = data[pos + 3]
    if b < 0x80:
        return result | (b << 21), pos + 4
    result |= (b & 0x7F) << 21
    shift = 28
    pos += 4
    while True:
        b = data[pos]
        pos += 1
        if b < 0x80:
            if shift == 63 and b > 1:
                raise DecodeError("varint overflows 64 bits")
            return result | (b << shift), pos
        result |= (b & 0x7F) << shift
        shift += 7
        if shift > 63:
            raise DecodeError("varint is longer than 10 bytes")


#: The largest length a LEN value may declare: a length prefix is an ``int32`` varint
#: ("Encoding", "Length-Delimited Records" and the condensed reference card: "size encoded as
#: int32 varint"), so at most 5 bytes and at most 2**31-1; upb refuses longer ones too.
MAX_SIZE = 0x7FFFFFFF


def read_size(data: bytes, pos: int) -> tuple[int, int]:
    """Read the length prefix of a LEN value at ``pos``; return ``(length, next_pos)``.

    Raises:
        DecodeError: the varint is longer than 5 bytes (a padded prefix of a
            small length too) or its value is above :data:`MAX_SIZE`.
        IndexError: the input ends inside the varint.
    """
    start = pos
    n, pos = read_varint(data, pos)
    if pos - start > 5:
        raise DecodeError(f"length prefix of {pos - start} bytes is longer than 5 bytes (an int32 varint)")
    if n > MAX_SIZE:
        raise DecodeError(f"length {n} is above the maximum {MAX_SIZE}")
    return n, pos


def read_tag(data: bytes, pos: int) -> tuple[int, int]:
    """Read a tag of 2 or more bytes at ``pos``; return ``(tag, next_pos)``.

    Raises:
        DecodeError: the field number is 0 or above 2**29-1, or the varint is
            malformed or longer than 5 bytes (a tag is a 32-bit varint).
        IndexError: the input ends inside the tag.
    """
    start = pos
    tag, pos = read_varint(data, pos)
    if tag > 0xFFFFFFFF or tag >> 3 > MAX_FIELD_NUMBER:
        raise DecodeError(f"field number {tag >> 3} is above the maximum {MAX_FIELD_NUMBER}")
    if pos - start > 5:
        raise DecodeError(f"tag varint of {pos - start} bytes is longer than 5 bytes")
    return tag, pos


def skip_field(data: bytes, pos: int, tag: int, end: int, depth: int) -> int:
    """Skip the value of an unknown field whose tag was just read.

    ``pos`` is the first byte after the tag. Groups (wire types 3 and 4) are
    skipped with their whole contents up to the matching end tag.

    Returns:
        The position after the field.

    Raises:
        DecodeError: field number 0, wire type 6 or 7, an unmatched end-group
            tag, a group nested deeper than ``depth``, a value past ``end``.
        IndexError: the input ends inside the field.
    """
    wire_type = tag & 7
    if tag >> 3 == 0:
        raise DecodeError("field number 0 is not allowed")
    if wire_type == WIRE_VARINT:
        _, pos = read_varint(data, pos)
    elif wire_type == WIRE_I64:
        pos += 8
    elif wire_type == WIRE_LEN:
        n, pos = read_size(data, pos)
        pos += n
    elif wire_type == WIRE_I32:
        pos += 4
    elif wire_type == WIRE_SGROUP:
        if depth <= 0:
            raise DecodeError("groups nested too deeply")
        number = tag >> 3
        while True:
            if pos >= end:
                raise DecodeError(f"group {number} has no end tag")
            inner = data[pos]
            if inner < 0x80:
                pos += 1
            else:
                inner, pos = read_tag(data, pos)
            if inner & 7 == WIRE_EGROUP:
                if inner >> 3 != number:
                    raise DecodeError(f"group {number} ended by the end tag of field {inner >> 3}")
                break
            pos = skip_field(data, pos, inner, end, depth - 1)
    elif wire_type == WIRE_EGROUP:
        raise DecodeError(f"end-group tag of field {tag >> 3} without a start-group tag")
    else:
        raise DecodeError(f"wire type {wire_type} is not a valid wire type")
    if pos > end:
        raise DecodeError("truncated input: field runs past the end of its message")
    return pos


def check_fields(data: bytes) -> list[int]:
    """Check that ``data`` is a run of whole fields, as a message's unknown fields are.

    Each field has a valid tag (field number 1 to 2**29-1, wire type 0 to 5) and a
    whole value; every group is closed by its own end tag. Groups are followed with a
    stack, not recursion, so any depth is checked.

    Returns:
        The tags of the fields at the top level (not those inside groups), in order.

    Raises:
        DecodeError: the first malformed field (``offset`` is where its tag starts).
    """
    pos, end = 0, len(data)
    groups: list[int] = []
    tags: list[int] = []
    start = 0
    try:
        while pos < end:
            start = pos
            tag, pos = read_tag(data, pos)
            number, wire_type = tag >> 3, tag & 7
            if not groups and wire_type != WIRE_EGROUP:
                tags.append(tag)
            if number == 0:
                raise DecodeError("field number 0 is not allowed")
            if wire_type == WIRE_SGROUP:
                groups.append(number)
            elif wire_type == WIRE_EGROUP:
                if not groups or groups[-1] != number:
                    raise DecodeError(f"end-group tag of field {number} without its start-group tag")
                groups.pop()
            else:
                pos = skip_field(data, pos, tag, end, 0)
    except IndexError:
        raise DecodeError("truncated input: the last field runs past the end", offset=start) from None
    except DecodeError as exc:
        raise DecodeError(exc.reason, offset=start) from None
    if groups:
        raise DecodeError(f"group {groups[-1]} has no end tag", offset=end)
    return tags
