"""Reading tokens and the values that need no schema: the cursor under :mod:`pbj.textformat.parser`.

:class:`TokenReader` walks the tokens of :mod:`pbj.textformat.tokenizer` one at a
time (``kind``, ``tok``, ``start``) and raises :class:`~pbj.textformat.errors.TextError`
with the line and column of the current token. It reads what the grammar
defines without a message schema (protobuf.dev "Text Format Language
Specification"):

* scalar values by type ("Value Types"): integers in decimal, octal and hex,
  range-checked, ``-`` for signed types only; floats from float and decimal
  literals and ``inf``/``infinity``/``nan`` in any case, never hex or octal, a
  ``float`` read as a ``double`` and then narrowed; ``bool`` as ``true True t
  false False f`` or 0 or 1; strings and bytes as adjacent literals joined and
  unescaped (a ``string`` must be valid UTF-8); enums by name or number;
* the name between brackets of an extension or an ``Any`` type URL ("Field
  Names"), with whitespace and comments between its pieces dropped as C++ does;
* the value of a skipped (reserved) field, whatever its shape ("Fields":
  reserved fields "are simply ignored").

Message and list nesting counts against ``max_depth``.
"""

from __future__ import annotations

import re
from typing import Any, NoReturn

from pbj.textformat.errors import TextError
from pbj.textformat.escapes import EscapeError, unescape
from pbj.textformat.numbers import to_float32
from pbj.textformat.plan import EnumPlan
from pbj.textformat.tokenizer import ERROR_KINDS, NAME_PIECE, TOKEN, line_and_column
from pbj.wire import RANGES

__all__ = ["TokenReader"]

_INTEGER_TOKENS = frozenset({"dec", "hex", "oct"})
_VALUE_TOKENS = frozenset({"ident", "float", "dec", "hex", "oct"})
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z").match
_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})").search
_TRUE = frozenset({"true", "True", "t"})
_FALSE = frozenset({"false", "False", "f"})
# Longer digit strings are out of range for every integer type (and would be slow to convert).
_MAX_DIGITS = 25


def _found(kind: str, tok: str) -> str:
    """The current token, for an error message (a token that is an error itself says what is wrong)."""
    if kind == "end":
        return "the end of the text"
    if kind == "str":
        return f"the string {tok if len(tok) <= 40 else tok[:37] + '...'}"
    if kind in ERROR_KINDS:
        return f"{tok[:40]!r} ({ERROR_KINDS[kind]})"
    return f'"{tok}"'


class TokenReader:
    """A cursor over the tokens of one text, and the readers of what needs no schema: scalar
    values, bracketed names, and the values of skipped fields."""

    __slots__ = ("depth", "kind", "max_depth", "pos", "start", "text", "tok")

    def __init__(self, text: str, max_depth: int) -> None:
        self.text = text
        self.pos = 0
        self.kind = self.tok = ""
        self.start = 0
        self.max_depth = max_depth
        self.depth = 0

    # ------------------------------------------------------------ tokens

    def advance(self) -> None:
        """Move to the next token (``kind``, ``tok``, ``start``)."""
        m = TOKEN(self.text, self.pos)
        self.kind = kind = m.lastgroup
        self.start, end = m.span(kind)
        self.tok = self.text[self.start:end]
        self.pos = end

    def fail(self, reason: str, offset: int | None = None) -> NoReturn:
        """Raise a :class:`TextError` at ``offset`` (default: the current token)."""
        offset = self.start if offset is None else offset
        line, column = line_and_column(self.text, offset)
        raise TextError(reason, line=line, column=column, offset=offset)

    def found(self) -> str:
        return _found(self.kind, self.tok)

    def at(self, symbol: str) -> bool:
        return self.kind == "sym" and self.tok == symbol

    def open_message(self, what: str) -> str:
        """Consume ``{`` or ``<``; return the closing symbol."""
        if self.kind == "sym" and self.tok in ("{", "<"):
            close = "}" if self.tok == "{" else ">"
        else:
            self.fail(f'expected "{{" or "<" to open {what}, found {self.found()}')
        self.depth += 1
        if self.depth > self.max_depth:
            self.fail(f"messages are nested deeper than max_depth ({self.max_depth})")
        self.advance()
        return close

    def bracket_name(self) -> str:
        """Read ``[`` name ``]``; whitespace and comments between the pieces are dropped (as C++)."""
        start = self.start
        pieces = []
        pos = self.pos
        while True:
            m = NAME_PIECE(self.text, pos)
            if m is None:
                break
            pieces.append(m.group(1))
            pos = m.end()
        self.pos = pos
        self.advance()
        if not self.at("]"):
            self.fail(f'expected "]" to close the name in brackets, found {self.found()} (a name in brackets holds '
                      "letters, digits and -._~!$&()*+,;=%/ only)")
        self.advance()
        name = "".join(pieces)
        prefix, slash, type_name = name.rpartition("/")
        if slash:
            if not prefix or prefix.startswith("/"):
                self.fail(f'type URL "{name}" has an empty first part', start)
            bad = _PERCENT(prefix)
            if bad:
                self.fail(f'invalid percent escape "{prefix[bad.start():bad.start() + 3]}" in type URL "{name}"',
                          start)
        if not all(_IDENT(part) for part in type_name.split(".")):
            self.fail(f'"[{name}]" is not a valid extension name or type URL', start)
        return name

    # ------------------------------------------------------------ skipping reserved fields

    def skip_field_value(self) -> None:
        """Skip the value of a reserved field whose name was just read (any value, any nesting)."""
        if self.at(":"):
            self.advance()
            if self.kind == "sym" and self.tok in ("{", "<"):
                self.skip_message()
            else:
                self.skip_value()
        else:
            self.skip_message()

    def skip_message(self) -> None:
        close = self.open_message("a message")
        while not self.at(close):
            if self.kind == "ident":
                self.advance()
            elif self.at("["):
                self.bracket_name()
            else:
                self.fail(f"expected a field name, found {self.found()}")
            self.skip_field_value()
            if self.kind == "sym" and self.tok in (",", ";"):
                self.advance()
        self.advance()
        self.depth -= 1

    def skip_value(self) -> None:
        if self.kind == "str":
            while self.kind == "str":
                self.advance()
            return
        if self.at("["):  # lists of lists are skipped too (as C++ does), within max_depth
            self.depth += 1
            if self.depth > self.max_depth:
                self.fail(f"lists are nested deeper than max_depth ({self.max_depth})")
            self.advance()
            if not self.at("]"):
                while True:
                    if self.kind == "sym" and self.tok in ("{", "<"):
                        self.skip_message()
                    else:
                        self.skip_value()
                    if self.at("]"):
                        break
                    if not self.at(","):
                        self.fail(f'expected "," or "]" in a list, found {self.found()}')
                    self.advance()
            self.advance()
            self.depth -= 1
            return
        negative = self.at("-")
        if negative:
            self.advance()
        if self.kind not in _VALUE_TOKENS:
            self.fail(f"expected a value, found {self.found()}")
        if negative and self.kind == "ident" and self.tok.lower() not in ("inf", "infinity", "nan"):
            self.fail(f'"-{self.tok}" is not a value')
        self.advance()

    # ------------------------------------------------------------ scalar values

    def read_scalar(self, kind: str, utf8: bool = True) -> Any:
        """A value of scalar type ``kind`` (``"int32"``, ``"string"`` …); ``utf8``: see :meth:`read_string`."""
        if kind == "string" and not utf8:
            return self.read_string(False)
        return _SCALAR_READERS[kind](self, kind)

    def read_int(self, kind: str, what: str) -> int:
        """An integer of type ``kind`` (``what`` names it in errors): decimal, octal or hex, range-checked."""
        start = self.start
        negative = self.kind == "sym" and self.tok == "-"
        if negative:
            self.advance()
        k, tok = self.kind, self.tok
        if k == "dec":
            digits, base = tok, 10
        elif k == "hex":
            digits, base = tok[2:], 16
        elif k == "oct":
            digits, base = tok[1:], 8
        else:
            self.fail(f"expected an integer for {what}, found {self.found()}")
        lo, hi = RANGES[kind]
        if negative and lo == 0:
            self.fail(f"{what} cannot be negative: -{tok}", start)
        text = f"-{tok}" if negative else tok
        if len(digits) > _MAX_DIGITS:
            self.fail(f"{text[:30]}... is out of range for {what} [{lo}, {hi}]", start)
        value = int(digits, base)
        if negative:
            value = -value
        if not lo <= value <= hi:
            self.fail(f"{text} is out of range for {what} [{lo}, {hi}]", start)
        self.advance()
        return value

    def read_float(self, kind: str) -> float:
        """A ``float`` or ``double``: a float or decimal literal, or inf/infinity/nan (any case)."""
        negative = self.kind == "sym" and self.tok == "-"
        if negative:
            self.advance()
        k, tok = self.kind, self.tok
        if k == "float":
            value = float(tok[:-1] if tok[-1] in "fF" else tok)
        elif k == "dec":
            value = float(tok)
        elif k == "hex" or k == "oct":
            self.fail(f"{tok} is not a valid {kind}: hexadecimal and octal numbers are for integer types only")
        elif k == "ident" and tok.lower() in ("inf", "infinity"):
            value = float("inf")
        elif k == "ident" and tok.lower() == "nan":
            value = float("nan")
        else:
            self.fail(f"expected a number for {kind}, found {self.found()}")
        if negative:
            value = -value
        self.advance()
        return to_float32(value) if kind == "float" else value

    def read_bool(self) -> bool:
        k, tok = self.kind, self.tok
        if k == "ident":
            if tok in _TRUE:
                value = True
            elif tok in _FALSE:
                value = False
            else:
                self.fail(f"expected true or false for bool, found {self.found()}")
        elif k in _INTEGER_TOKENS:
            number = int(tok, 16 if k == "hex" else 8 if k == "oct" else 10) if len(tok) <= _MAX_DIGITS else 2
            if number > 1:
                self.fail(f"expected true or false for bool, found {self.found()} (only 0 and 1 are booleans)")
            value = number == 1
        else:
            self.fail(f"expected true or false for bool, found {self.found()}")
        self.advance()
        return value

    def literals(self, what: str) -> list[tuple[str, int]]:
        """The bodies of one or more adjacent string literals, with their offsets."""
        if self.kind != "str":
            self.fail(f"expected a string for {what}, found {self.found()}")
        bodies = []
        while self.kind == "str":
            bodies.append((self.tok[1:-1], self.start + 1))
            self.advance()
        return bodies

    def unescaped(self, bodies: list[tuple[str, int]]) -> bytes:
        out = []
        for body, offset in bodies:
            try:
                out.append(unescape(body))
            except EscapeError as exc:
                self.fail(exc.reason, offset + exc.index)
        return out[0] if len(out) == 1 else b"".join(out)

    def read_bytes(self) -> bytes:
        return self.unescaped(self.literals("bytes"))

    def read_string(self, utf8: bool = True) -> str:
        """A ``string`` value. ``utf8`` false (proto2, ``utf8_validation = NONE``): any bytes
        (``"\\377"``) are accepted, invalid UTF-8 as ``surrogateescape`` characters, as the
        binary parser keeps them."""
        bodies = self.literals("string")
        if not any("\\" in body for body, _ in bodies):
            text = bodies[0][0] if len(bodies) == 1 else "".join(body for body, _ in bodies)
            if text.isascii():
                return text
        data = self.unescaped(bodies)
        try:
            return data.decode("utf-8") if utf8 else data.decode("utf-8", "surrogateescape")
        except UnicodeDecodeError as exc:
            self.fail(f"the string is not valid UTF-8: byte 0x{data[exc.start]:02x} at byte {exc.start} "
                      "of its value (use bytes for binary data)", bodies[0][1] - 1)

    def read_enum(self, ep: EnumPlan) -> Any:
        """An enum value by name, or by number (a non-member number only for an open enum)."""
        if self.kind == "ident":
            member = ep.by_name.get(self.tok)
            if member is None:
                self.fail(f'unknown name "{self.tok}" for enum {ep.name}')
            self.advance()
            return member
        if self.kind in _INTEGER_TOKENS or self.at("-"):
            start = self.start
            number = self.read_int("int32", f"enum {ep.name}")
            member = ep.by_number.get(number)
            if member is not None:
                return member
            if ep.closed:
                self.fail(f"{number} is not a number of closed enum {ep.name}", start)
            return number
        self.fail(f"expected a name or number for enum {ep.name}, found {self.found()}")


_SCALAR_READERS = {
    **{kind: lambda parser, kind: parser.read_int(kind, kind) for kind in RANGES},
    "float": TokenReader.read_float, "double": TokenReader.read_float,
    "bool": lambda parser, kind: parser.read_bool(), "string": lambda parser, kind: parser.read_string(),
    "bytes": lambda parser, kind: parser.read_bytes(),
}
