"""Fields without a schema: the wire walker, unknown fields in text, ``pbj decode-raw``.

Without a schema a field is only its number, its wire type and its value
(protobuf.dev "Encoding"), and it is written as Google's C++ printer writes
unknown fields (``TextFormat::Printer::PrintUnknownFields``, which is also
what ``protoc --decode_raw`` prints):

* a varint as an unsigned decimal (``1: 150``);
* an I64 or I32 value as hex of its 16 or 8 digits (``4: 0x0000000000000007``);
* a LEN value as a nested block (``2 { ... }``) when it is not empty and its
  bytes parse as fields (as C++ parses them, :func:`lenient_fields`), at most
  :data:`RECURSION_BUDGET` levels deep, else as
  a C-escaped string (``3: "\\001\\002"``, :mod:`pbj.textformat.escapes`);
* a group as a nested block (``1004 { ... }``).

:func:`print_unknown` writes them for :func:`pbj.to_text` (with
``print_unknown_fields=True``). :func:`format_raw` is ``pbj decode-raw``: the
same, except that a LEN value that is printable UTF-8 text is written as a
string even when its bytes happen to parse as fields (``"hi"`` is also the
varint field 13 = 105), which reads better in a dump of real messages.
"""

from __future__ import annotations

from typing import Any

from pbj import wire
from pbj.errors import DecodeError
from pbj.textformat.escapes import escape_bytes

__all__ = ["walk_fields", "lenient_fields", "print_unknown", "format_raw", "RECURSION_BUDGET"]

#: How deep LEN values are tried as nested fields (C++ ``kUnknownFieldRecursionLimit``).
RECURSION_BUDGET = 10
_GROUP_DEPTH = 100

#: One field as the walkers return it: ``(field_number, wire_type, start, stop, value)``.
RawField = tuple[int, int, int, int, Any]


def walk_fields(data: bytes, pos: int = 0, end: int | None = None) -> list[RawField]:
    """Split an encoded message into its top-level fields, with no schema.

    Args:
        data: the encoding.
        pos, end: the byte range to walk (default: all of ``data``).

    Returns:
        ``(field_number, wire_type, start, stop, value)`` per field, in order:
        ``start``/``stop`` delimit the whole field (tag included); ``value`` is
        the varint (``int``), the 8 or 4 raw bytes (I64/I32), the payload
        ``(begin, end)`` offsets (LEN), or the group body ``(begin, end)``
        offsets without the end tag (SGROUP).

    Raises:
        DecodeError: the bytes are not a valid sequence of fields (truncated,
            bad wire type, field number 0 …), with the byte offset of the field.
    """
    end = len(data) if end is None else end
    out: list[RawField] = []
    value: int | bytes | tuple[int, int]
    try:
        while pos < end:
            start = pos
            tag, pos = wire.read_tag(data, pos)
            number, wt = tag >> 3, tag & 7
            if number == 0:
                raise DecodeError("field number 0 is not allowed", offset=start)
            if wt == wire.WIRE_VARINT:
                value, pos = wire.read_varint(data, pos)
            elif wt == wire.WIRE_I64:
                value, pos = data[pos:pos + 8], pos + 8
            elif wt == wire.WIRE_I32:
                value, pos = data[pos:pos + 4], pos + 4
            elif wt == wire.WIRE_LEN:
                n, pos = wire.read_varint(data, pos)
                value, pos = (pos, pos + n), pos + n
            elif wt == wire.WIRE_SGROUP:
                body = pos
                pos = wire.skip_field(data, pos, tag, end, _GROUP_DEPTH)
                # The body ends before the end-group tag (same field number, wire type 4).
                value = (body, pos - len(wire.tag_bytes(number, wire.WIRE_EGROUP)))
            else:
                raise DecodeError(f"wire type {wt} cannot start a field", offset=start)
            if pos > end:
                raise DecodeError("truncated input: field runs past the end", offset=start)
            out.append((number, wt, start, pos, value))
    except IndexError:
        raise DecodeError("truncated input", offset=pos) from None
    except DecodeError as exc:
        if exc.offset is None:
            exc.offset = pos
        raise
    return out


class _Malformed(Exception):
    """The bytes are not fields as C++'s ``UnknownFieldSet`` parser reads them."""


def _lenient_varint(data: bytes, pos: int, end: int) -> tuple[int, int]:
    """A varint as C++'s ``CodedInputStream`` reads it: up to 10 bytes, bits above 64 dropped."""
    result = shift = 0
    for i in range(pos, min(pos + 10, end)):
        b = data[i]
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result & 0xFFFFFFFFFFFFFFFF, i + 1
        shift += 7
    raise _Malformed


def _lenient_walk(data: bytes, pos: int, end: int, depth: int, group: int | None) -> tuple[list[RawField], int, int]:
    out: list[RawField] = []
    value: int | bytes | tuple[int, int]
    while pos < end:
        start = pos
        tag, pos = _lenient_varint(data, pos, end)
        tag &= 0xFFFFFFFF  # a tag is read as a 32-bit varint: longer ones keep their low 32 bits
        number, wt = tag >> 3, tag & 7
        if wt == wire.WIRE_EGROUP:
            if number != group or number == 0:
                raise _Malformed
            return out, start, pos
        if number == 0:
            raise _Malformed
        if wt == wire.WIRE_VARINT:
            value, pos = _lenient_varint(data, pos, end)
        elif wt == wire.WIRE_I64 or wt == wire.WIRE_I32:
            size = 8 if wt == wire.WIRE_I64 else 4
            if pos + size > end:
                raise _Malformed
            value, pos = data[pos:pos + size], pos + size
        elif wt == wire.WIRE_LEN:
            n, pos = _lenient_varint(data, pos, end)
            n &= 0xFFFFFFFF
            if n > 0x7FFFFFFF or pos + n > end:
                raise _Malformed
            value, pos = (pos, pos + n), pos + n
        elif wt == wire.WIRE_SGROUP:
            if depth <= 0:
                raise _Malformed
            body = pos
            _fields, body_end, pos = _lenient_walk(data, pos, end, depth - 1, number)
            value = (body, body_end)
        else:
            raise _Malformed
        out.append((number, wt, start, pos, value))
    if group is not None:
        raise _Malformed
    return out, pos, pos


def lenient_fields(data: bytes, begin: int, end: int, depth: int = _GROUP_DEPTH) -> list[RawField] | None:
    """The fields of ``data[begin:end]`` as C++ reads unknown fields, or ``None`` if they do not parse.

    C++ (``UnknownFieldSet`` through ``CodedInputStream``, what ``protoc
    --decode_raw`` and the printer's LEN heuristic use) is more lenient than
    :func:`walk_fields`: varints may take all 10 bytes whatever the 10th holds
    (bits above 64 are dropped), and a tag may be longer than 5 bytes (it keeps
    its low 32 bits). Groups may nest ``depth`` levels.

    Returns:
        The fields as :func:`walk_fields` returns them, or ``None``.
    """
    try:
        return _lenient_walk(data, begin, end, depth, None)[0]
    except (_Malformed, IndexError):
        return None


def _printable(raw: bytes) -> bool:
    """Whether ``raw`` is UTF-8 text of printable characters (tabs and newlines allowed)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return text.replace("\n", "").replace("\t", "").isprintable()


def print_unknown(data: bytes, fields: list, out: list[str], prefix: str, step: str, nl: str,
                  budget: int = RECURSION_BUDGET, strings_first: bool = False) -> None:
    """Append the text of schema-less fields to ``out``, one field a line.

    Args:
        data: the bytes the fields are in.
        fields: the fields, as :func:`walk_fields` returns them.
        out: the pieces of text written so far.
        prefix: the indentation of this level.
        step: what each nested level adds to ``prefix`` (``"  "``, or ``""`` on one line).
        nl: what ends a field: ``"\\n"``, or ``" "`` on one line.
        budget: how many more levels LEN values are tried as nested fields.
        strings_first: write printable UTF-8 text as a string even if it parses
            as fields (``pbj decode-raw``).
    """
    for number, wt, _start, _stop, value in fields:
        if wt == wire.WIRE_VARINT:
            out.append(f"{prefix}{number}: {value}{nl}")
        elif wt == wire.WIRE_I64:
            out.append(f"{prefix}{number}: 0x{int.from_bytes(value, 'little'):016x}{nl}")
        elif wt == wire.WIRE_I32:
            out.append(f"{prefix}{number}: 0x{int.from_bytes(value, 'little'):08x}{nl}")
        elif wt == wire.WIRE_SGROUP:
            out.append(f"{prefix}{number} {{{nl}")
            print_unknown(data, lenient_fields(data, value[0], value[1]) or [], out, prefix + step, step, nl,
                          budget - 1, strings_first)
            out.append(f"{prefix}}}{nl}")
        else:
            begin, stop = value
            nested = None
            if stop > begin and budget > 0 and not (strings_first and _printable(data[begin:stop])):
                nested = lenient_fields(data, begin, stop, budget)
            if nested is not None:
                out.append(f"{prefix}{number} {{{nl}")
                print_unknown(data, nested, out, prefix + step, step, nl, budget - 1, strings_first)
                out.append(f"{prefix}}}{nl}")
            else:
                out.append(f'{prefix}{number}: "{escape_bytes(data[begin:stop])}"{nl}')


def format_raw(data: bytes, *, indent: str = "  ", max_depth: int = RECURSION_BUDGET) -> str:
    """The wire structure of ``data`` as text, like ``protoc --decode_raw`` (``pbj decode-raw``).

    Each field is ``number: value`` as described in the module docstring;
    LEN values that are printable UTF-8 text are written as strings.

    Args:
        data: an encoded message.
        indent: the indentation of each nested level.
        max_depth: how many levels LEN values are tried as nested fields.

    Returns:
        The text, one field a line, without a final newline (``""`` for no fields).

    Raises:
        DecodeError: ``data`` is not a valid sequence of fields.
    """
    fields = lenient_fields(data, 0, len(data))
    if fields is None:
        walk_fields(data)  # raises a DecodeError that says what is wrong and where
        raise DecodeError("the input is not a valid sequence of fields")
    out: list[str] = []
    print_unknown(data, fields, out, "", indent, "\n", max_depth, strings_first=True)
    return "".join(out).removesuffix("\n")
