"""String literals of the text format: C escaping (printing) and unescaping (parsing).

Printing follows Google's C++ printer, which writes every ``string`` and
``bytes`` value with C escapes (``absl::CEscape``): ``\\n``, ``\\r``, ``\\t``,
``\\"``, ``\\'`` and ``\\\\`` by name, every other byte outside printable ASCII
(``0x20``-``0x7e``) as three octal digits. A ``string`` is escaped as its UTF-8
bytes, so ``"é"`` prints as ``"\\303\\251"``, exactly as ``protoc --decode``
prints it; with ``utf8=True`` characters outside ASCII are written as they are
(C++ ``Printer::SetUseUtf8StringEscaping``, Python's ``as_utf8``).
``protoc --decode_raw`` escapes its strings the same way (:mod:`pbj.textformat.raw`).

Parsing follows the "String Literals" section of protobuf.dev "Text Format
Language Specification": ``\\a \\b \\f \\n \\r \\t \\v \\? \\\\ \\' \\"``, octal
escapes of one to three digits (a byte up to ``\\377``), ``\\x`` with one or two
hex digits (a byte), ``\\u`` with four and ``\\U`` with eight hex digits (a
Unicode code point, written as UTF-8; at most ``\\U0010ffff``). An escaped
surrogate code point (``\\ud800``-``\\udfff``) is refused, paired or not: the
spec calls C++'s pairing of ``\\uD801\\uDC37`` non-conforming, and the
conformance suite expects a parse error.
"""

from __future__ import annotations

import codecs
import re

__all__ = ["escape_bytes", "escape_text", "unescape", "EscapeError"]

# Every byte outside printable ASCII, plus the three printable characters that need a backslash.
_NEEDS_ESCAPE = re.compile(rb"[^\x20\x21\x23-\x26\x28-\x5b\x5d-\x7e]")
_BYTE_TEXT: tuple[str, ...] = tuple(
    {0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t", 0x22: '\\"', 0x27: "\\'", 0x5C: "\\\\"}.get(
        b, chr(b) if 0x20 <= b < 0x7F else f"\\{b:03o}")
    for b in range(256))
# The characters a UTF-8 printer still escapes: ASCII controls, DEL and the three above.
_NEEDS_ESCAPE_UTF8 = re.compile(r"[\x00-\x1f\x7f\"'\\]")


def escape_bytes(data: bytes) -> str:
    """``data`` C-escaped, without the quotes (as Google's C++ printer writes ``bytes``).

    Args:
        data: any bytes.

    Returns:
        Printable ASCII text: printable bytes as they are, ``\\n \\r \\t \\" \\' \\\\``
        by name, every other byte as a three-digit octal escape (``\\000``-``\\377``).
    """
    if not _NEEDS_ESCAPE.search(data):
        return data.decode("ascii")
    return "".join(map(_BYTE_TEXT.__getitem__, data))


def _escape_char(m: re.Match) -> str:
    return _BYTE_TEXT[ord(m.group())]


def escape_text(text: str, *, utf8: bool = False) -> str:
    """A ``string`` value C-escaped, without the quotes.

    Args:
        text: the value.
        utf8: write characters outside ASCII as they are; only ASCII control
            characters, DEL and ``" ' \\`` are escaped. Otherwise (the default,
            as C++ and ``protoc --decode``) the UTF-8 bytes are escaped as by
            :func:`escape_bytes`.

    Returns:
        The escaped text.

    Raises:
        UnicodeEncodeError: ``text`` holds a lone surrogate (not valid UTF-8),
            when ``utf8`` is false.
    """
    if utf8:
        return _NEEDS_ESCAPE_UTF8.sub(_escape_char, text) if _NEEDS_ESCAPE_UTF8.search(text) else text
    if text.isascii():
        data = text.encode("ascii")
        return text if not _NEEDS_ESCAPE.search(data) else "".join(map(_BYTE_TEXT.__getitem__, data))
    return "".join(map(_BYTE_TEXT.__getitem__, text.encode("utf-8")))


class EscapeError(ValueError):
    """A bad escape inside a string literal.

    Attributes:
        reason: what is wrong.
        index: the offset of the backslash within the literal's body.
    """

    def __init__(self, reason: str, index: int) -> None:
        super().__init__(reason)
        self.reason = reason
        self.index = index


_SIMPLE = {"a": b"\a", "b": b"\b", "f": b"\f", "n": b"\n", "r": b"\r", "t": b"\t", "v": b"\v",
           "?": b"?", "\\": b"\\", "'": b"'", '"': b'"'}
# One piece of a literal's body: a run of plain characters, or one escape.
_PIECE = re.compile(r"""([^\\]+)|\\(?:([0-7]{1,3})|x([0-9a-fA-F]{1,2})|u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8})"""
                    r"""|([abfnrtv?\\'"]))""")


def unescape(body: str) -> bytes:
    """The bytes a string literal's body stands for (the text between its quotes).

    Args:
        body: the characters between the quotes, escapes not yet resolved.

    Returns:
        The bytes: plain characters as UTF-8, escapes as described in the
        module docstring.

    Raises:
        EscapeError: an unknown escape (``\\z``), ``\\x`` without a hex digit,
            ``\\u``/``\\U`` without enough hex digits, an octal escape above
            ``\\377``, a code point above ``U+10FFFF`` or a surrogate, or a lone
            surrogate character in ``body`` itself.
    """
    if "\\" not in body:
        try:
            return body.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise EscapeError("the string holds a lone surrogate, which is not valid UTF-8", exc.start) from None
    if not _NOT_C_ESCAPE(body):
        # Only the escapes Python's bytes literals share with the spec (what printers write):
        # the C-level decoder does them all at once.
        try:
            return _escape_decode(body.encode("utf-8"))[0]
        except UnicodeEncodeError:
            pass  # a lone surrogate: reported below, with its place
    out = bytearray()
    pos, end = 0, len(body)
    match = _PIECE.match
    while pos < end:
        m = match(body, pos)
        if m is None:
            raise EscapeError(_bad_escape(body, pos), pos)
        plain, octal, hex2, u4, u8, simple = m.groups()
        if plain is not None:
            try:
                out += plain.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise EscapeError("the string holds a lone surrogate, which is not valid UTF-8",
                                  pos + exc.start) from None
        elif simple is not None:
            out += _SIMPLE[simple]
        elif octal is not None:
            value = int(octal, 8)
            if value > 0xFF:
                raise EscapeError(f"octal escape \\{octal} is above \\377, the largest byte", pos)
            out.append(value)
        elif hex2 is not None:
            out.append(int(hex2, 16))
        else:
            code = int(u4 or u8, 16)
            if code > 0x10FFFF:
                raise EscapeError(f"escape \\U{u8} is above \\U0010ffff, the largest code point", pos)
            if 0xD800 <= code <= 0xDFFF:
                raise EscapeError(f"escape {m.group()} is a surrogate code point, which UTF-8 cannot hold", pos)
            out += chr(code).encode("utf-8")
        pos = m.end()
    return bytes(out)


# A backslash that does not start an escape Python's ``codecs.escape_decode`` reads as the spec
# does: octal above \377, \x without two hex digits, \? \u \U, unknown escapes, a final backslash.
# (It may also match after an escaped backslash, which only sends the body down the slow path.)
_NOT_C_ESCAPE = re.compile(r"""\\(?:[4-7][0-7]{2}|x(?![0-9a-fA-F]{2})|[^0-7xabfnrtv\\'"]|\Z)""").search
_escape_decode = codecs.escape_decode


def _bad_escape(body: str, pos: int) -> str:
    """Why the escape at ``body[pos]`` (a backslash) is not valid."""
    rest = body[pos + 1:pos + 2]
    if not rest:
        return "a backslash ends the string"
    if rest == "x":
        return "escape \\x needs one or two hex digits"
    if rest == "u":
        return "escape \\u needs four hex digits"
    if rest == "U":
        return "escape \\U needs eight hex digits"
    return f"unknown escape \\{rest}"
