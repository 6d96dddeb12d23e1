"""Reading unknown fields back: the ``number: value`` lines that :func:`pbj.to_text` writes with
``print_unknown_fields=True`` (and ``pbj decode --text``, ``protoc --decode``).

:mod:`pbj.textformat.raw` writes a field that the schema does not know by its
number, in the form of Google's C++ ``TextFormat::Printer::PrintUnknownFields``.
:func:`read_unknown_field` reads that form back into the field's wire bytes
(protobuf.dev "Encoding"), so that text printed from a decoded message reads
back to the same encoding:

* ``N: 150`` (an unsigned decimal, at most ``2**64 - 1``): a varint;
* ``N: 0x`` and 16 hex digits: an I64 value; ``N: 0x`` and 8 hex digits: an
  I32 value (the digit count, as printed, says which);
* ``N: "..."`` (C-escaped, adjacent strings joined): a LEN value;
* ``N { ... }`` (or ``< ... >``, the colon optional): a LEN value holding the
  fields inside, read the same way. The printer writes a group the same way
  (C++ does too), so a group comes back as a LEN value: the one case that
  does not read back to the same bytes.

The option is off by default, as in Google's parsers (which have no way to
keep such a field); :func:`pbj.from_text` takes ``read_unknown_fields=True``.
"""

from __future__ import annotations

from pbj import wire
from pbj.textformat.reader import TokenReader

__all__ = ["read_unknown_field", "MAX_FIELD_NUMBER"]

#: The largest field number ("Assigning Field Numbers").
MAX_FIELD_NUMBER = 2**29 - 1


def read_unknown_field(reader: TokenReader, name: str, start: int) -> bytes:
    """Read the value of the numbered field ``name`` (just consumed, at offset ``start``).

    Args:
        reader: the :class:`pbj.textformat.reader.TokenReader` positioned after the number.
        name: the field number as written (a decimal literal).
        start: the offset of the number, for errors.

    Returns:
        The field's encoding: its tag and value.

    Raises:
        TextError: a number outside 1..2**29-1, or a value not in one of the forms above.
    """
    number = int(name)
    if not 1 <= number <= MAX_FIELD_NUMBER:
        reader.fail(f"field number {number} is out of range [1, {MAX_FIELD_NUMBER}]", start)
    colon = reader.at(":")
    if colon:
        reader.advance()
    if reader.kind == "sym" and reader.tok in ("{", "<"):
        close = reader.open_message(f"unknown field {number}")
        body = []
        while not reader.at(close):
            if reader.kind != "dec":
                reader.fail(f"expected a field number inside unknown field {number}, found {reader.found()}")
            inner, inner_start = reader.tok, reader.start
            reader.advance()
            body.append(read_unknown_field(reader, inner, inner_start))
            if reader.kind == "sym" and reader.tok in (",", ";"):
                reader.advance()
        reader.depth -= 1
        reader.advance()
        payload = b"".join(body)
        return wire.tag_bytes(number, wire.WIRE_LEN) + wire.encode_varint(len(payload)) + payload
    if not colon:
        reader.fail(f'expected ":" or "{{" after field number {number}, found {reader.found()}')
    kind, tok = reader.kind, reader.tok
    if kind == "dec":
        value = int(tok)
        if value > 2**64 - 1:
            reader.fail(f"unknown field {number}: varint {tok} is larger than 2**64 - 1")
        reader.advance()
        return wire.tag_bytes(number, wire.WIRE_VARINT) + wire.encode_varint(value)
    if kind == "hex":
        digits, at = tok[2:], reader.start
        reader.advance()
        if len(digits) == 16:
            return wire.tag_bytes(number, wire.WIRE_I64) + int(digits, 16).to_bytes(8, "little")
        if len(digits) == 8:
            return wire.tag_bytes(number, wire.WIRE_I32) + int(digits, 16).to_bytes(4, "little")
        reader.fail(f"unknown field {number}: a fixed-width value is 0x and 8 (I32) or 16 (I64) hex digits, "
                    f"found {tok}", at)
    if kind == "str":
        payload = reader.read_bytes()
        return wire.tag_bytes(number, wire.WIRE_LEN) + wire.encode_varint(len(payload)) + payload
    reader.fail(f"unknown field {number}: expected a varint, 0x-hex, a string or {{...}}, found {reader.found()}")
