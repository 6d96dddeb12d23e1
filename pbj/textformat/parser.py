"""Reading messages from the text format: :func:`from_text`.

A recursive-descent parser over the tokens of :mod:`pbj.textformat.tokenizer`,
following protobuf.dev "Text Format Language Specification" ("Syntax
Elements", "Value Types" and the sections on extensions, ``Any``, groups,
maps and oneofs) and, where the spec is silent, Google's C++ parser:

* a field is named by its ``.proto`` name (a group-like field also by its
  type's name); ``:`` is required before a scalar value and optional before a
  message; ``{ }`` and ``< >`` both delimit messages; each field may be
  followed by one ``,`` or ``;``;
* a repeated field may be repeated and may use the list form ``[a, b]``
  (also ``[]``); a singular field may appear once, and a oneof may have one
  member (both checked as C++ ``Parse`` does, not ``Merge``);
* integers in decimal, octal (``017``) or hex (``0x1F``), ``-`` before signed
  types only, range-checked; floats also from decimal integers, with an
  exponent, an ``f`` suffix, ``inf``/``infinity``/``nan`` in any case, never
  hex or octal; ``bool`` as ``true True t false False f`` or an integer 0 or
  1; enums by name or by number (a number that is not a member only for open
  enums); strings and bytes as adjacent literals joined, unescaped by
  :mod:`pbj.textformat.escapes` (a ``string`` must be valid UTF-8);
* a map as repeated ``{ key: ... value: ... }`` entries (a missing one is its
  type's zero; the last entry of a key wins);
* ``Any`` in its expanded form ``[type.googleapis.com/pkg.Msg] { ... }``,
  resolved through the ProtoJSON type registry (``pbj.protojson``);
* extensions ``[pkg.ext]`` when ``extensions`` declares them
  (:mod:`pbj.textformat.extensions`); they are stored as the unknown fields
  ``pbj.decode`` would keep for them;
* a reserved field name (``MessageInfo.reserved_names``) is skipped with its
  value, as the spec says; unknown fields are never parsed;
* proto2 ``required`` fields must be set ("Fields marked ``required`` must be
  specified exactly once"), unless ``allow_partial``.

Every failure is a :class:`~pbj.textformat.errors.TextError` with the line,
column and field path; the path is added while the error unwinds, so it costs
nothing when parsing succeeds. Nesting deeper than ``max_depth`` is refused,
so hostile text cannot exhaust the stack.
"""

from __future__ import annotations

import gc
import re
from typing import Any

from pbj.api import DEFAULT_MAX_DEPTH, encode
from pbj.schema import OneOf, enum_default, is_message
from pbj.textformat.errors import TextError
from pbj.textformat.escapes import EscapeError, unescape
from pbj.textformat.extensions import Extension, ExtensionTable, extension_table
from pbj.textformat.numbers import to_float32
from pbj.textformat.plan import EnumPlan, FieldPlan, MessagePlan, message_plan
from pbj.textformat.tokenizer import ERROR_KINDS, NAME_PIECE, TOKEN, line_and_column
from pbj.wire import RANGES

__all__ = ["from_text"]

_INTEGER_TOKENS = frozenset({"dec", "hex", "oct"})
_VALUE_TOKENS = frozenset({"ident", "float", "dec", "hex", "oct"})
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z").match
_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})").search
_ZERO = {"string": "", "bytes": b"", "bool": False, "float": 0.0, "double": 0.0}
_TRUE = frozenset({"true", "True", "t"})
_FALSE = frozenset({"false", "False", "f"})
# Longer digit strings are out of range for every integer type (and would be slow to convert).
_MAX_DIGITS = 25
_GC_PAUSE_CHARS = 16384


def from_text(cls: type, text: str | bytes, *, extensions: Any = None, allow_partial: bool = False,
              max_depth: int = DEFAULT_MAX_DEPTH) -> Any:
    """Read a message of class ``cls`` from the text format.

    Implements the parsing side of protobuf.dev "Text Format Language
    Specification" (see the module docstring for each rule).

    Args:
        cls: a pbj message class (hand-declared or loaded).
        text: the text (``bytes`` are read as UTF-8).
        extensions: a :class:`pbj.Namespace` whose extension declarations
            make ``[pkg.ext]`` names readable.
        allow_partial: accept messages whose proto2 ``required`` fields are
            not all set (C++ ``Parser::AllowPartialMessage``).
        max_depth: how deeply messages may nest (default
            ``pbj.DEFAULT_MAX_DEPTH``, 100).

    Returns:
        The message, a ``cls`` instance; extensions are kept as its unknown
        fields (``pbj.unknown_fields``).

    Raises:
        TextError: the text is not a valid text-format ``cls`` (a syntax
            error, an unknown field or enum name, a value out of range or of
            the wrong type, a bad escape or invalid UTF-8, a singular field or
            oneof set twice, a missing required field, an unresolvable
            ``Any`` type or extension, nesting deeper than ``max_depth``),
            with its line, column and field path.
        TypeError: ``cls`` is not a pbj message class, ``text`` is not
            ``str`` or ``bytes``, or ``extensions`` is not a namespace.
    """
    if not (isinstance(cls, type) and is_message(cls)):
        raise TypeError(f"from_text() needs a pbj message class, got {cls!r}")
    if isinstance(text, bytes | bytearray | memoryview):
        raw = bytes(text)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            good = raw[:exc.start].decode("utf-8")
            line, column = line_and_column(good, len(good))
            raise TextError(f"the text is not valid UTF-8 (byte 0x{raw[exc.start]:02x})", line=line, column=column,
                            offset=len(good)) from None
    elif not isinstance(text, str):
        raise TypeError(f"from_text() needs the text as str or bytes, got {type(text).__name__}")
    table = extension_table(extensions) if extensions is not None else None
    parser = _Parser(text, table, max_depth, allow_partial)
    parser.advance()
    if len(text) < _GC_PAUSE_CHARS or not gc.isenabled():
        return parser.message(cls, None)
    # As pbj.decode does: the many objects a large text makes cannot form cycles, so the cyclic
    # collector would only scan them again and again while they are made.
    gc.disable()
    try:
        return parser.message(cls, None)
    finally:
        gc.enable()


def _found(kind: str, tok: str) -> str:
    """The current token, for an error message (a token that is an error itself says what is wrong)."""
    if kind == "end":
        return "the end of the text"
    if kind == "str":
        return f"the string {tok if len(tok) <= 40 else tok[:37] + '...'}"
    if kind in ERROR_KINDS:
        return f"{tok[:40]!r} ({ERROR_KINDS[kind]})"
    return f'"{tok}"'


class _Parser:
    """One :func:`from_text` call: the text, the current token, and the readers."""

    __slots__ = ("allow_partial", "depth", "kind", "max_depth", "pos", "start", "table", "text", "tok")

    def __init__(self, text: str, table: ExtensionTable | None, max_depth: int, allow_partial: bool) -> None:
        self.text = text
        self.pos = 0
        self.kind = self.tok = ""
        self.start = 0
        self.table = table
        self.max_depth = max_depth
        self.depth = 0
        self.allow_partial = allow_partial

    # ------------------------------------------------------------ tokens

    def advance(self) -> None:
        """Move to the next token (``kind``, ``tok``, ``start``)."""
        m = TOKEN(self.text, self.pos)
        self.kind = kind = m.lastgroup
        self.start, end = m.span(kind)
        self.tok = self.text[self.start:end]
        self.pos = end

    def fail(self, reason: str, offset: int | None = None) -> None:
        """Raise a :class:`TextError` at ``offset`` (default: the current token)."""
        offset = self.start if offset is None else offset
        line, column = line_and_column(self.text, offset)
        raise TextError(reason, line=line, column=column, offset=offset)

    def found(self) -> str:
        return _found(self.kind, self.tok)

    def at(self, symbol: str) -> bool:
        return self.kind == "sym" and self.tok == symbol

    # ------------------------------------------------------------ messages

    def message(self, cls: type, close: str | None) -> Any:
        """Read fields up to ``close`` (``}``, ``>``, or the end of the text for ``None``)."""
        plan = message_plan(cls)
        values: dict[str, Any] = {}
        extensions: dict[Extension, dict] | None = None
        while True:
            kind = self.kind
            if kind == "ident":
                name, start = self.tok, self.start
                p = plan.by_name.get(name)
                self.advance()
                if p is None:
                    if name not in plan.reserved:
                        self.fail(f'no field named "{name}" in message {plan.full_name}', start)
                    self.skip_field_value()
                else:
                    self.field(p, values, name, start)
            elif kind == "sym" and self.tok == "[":
                extensions = self.bracketed(plan, values, extensions)
            elif kind == "sym" and self.tok in ("}", ">") and close is not None:
                if self.tok != close:
                    self.fail(f'expected "{close}" to close the message, found "{self.tok}"')
                break
            elif kind == "end":
                if close is not None:
                    self.fail(f'expected "{close}" to close the message, found the end of the text')
                break
            else:
                self.fail(f"expected a field name, found {self.found()}")
            if self.kind == "sym" and self.tok in (",", ";"):
                self.advance()
        end = self.start
        if close is not None:
            self.advance()
        for attr in () if self.allow_partial else plan.required:
            if attr not in values:
                self.fail(f'required field "{attr}" of message {plan.full_name} is not set', end)
        if extensions:
            values["_pbj_unknown"] = b"".join(encode(ext.holder(**v)) for ext, v in
                                              sorted(extensions.items(), key=lambda e: e[0].number))
        return cls(**values)

    def field(self, p: FieldPlan, values: dict, name: str, start: int) -> None:
        """Read the value(s) of field ``p`` after its name (``name`` at ``start``) into ``values``."""
        attr = p.attr
        if p.presence != "repeated":
            other = values.get(attr, _ABSENT)
            if other is not _ABSENT:
                if p.member is None or other.which == p.member:
                    self.fail(f'field "{name}" is set twice, but it is not repeated', start)
                self.fail(f'field "{name}" and field "{other.which}" are members of the same oneof '
                          f'"{attr}": only one may be set', start)
        if p.kind == "message" or p.kind == "map":
            if self.kind == "sym" and self.tok == ":":
                self.advance()
        elif self.kind == "sym" and self.tok == ":":
            self.advance()
        else:
            self.fail(f'expected ":" after field name "{name}", found {self.found()}')
        try:
            if self.kind == "sym" and self.tok == "[":
                if p.presence != "repeated":
                    self.fail(f'field "{name}" is not repeated: the list form [...] is not allowed')
                self.advance()
                if self.at("]"):
                    self.advance()
                    values.setdefault(attr, {} if p.kind == "map" else [])
                    return
                while True:
                    self.value(p, values)
                    if self.kind == "sym" and self.tok == ",":
                        self.advance()
                    elif self.kind == "sym" and self.tok == "]":
                        self.advance()
                        return
                    else:
                        self.fail(f'expected "," or "]" in the list of "{name}", found {self.found()}')
            self.value(p, values)
        except TextError as exc:
            exc.path.insert(0, p.member or p.info.name)
            raise

    def value(self, p: FieldPlan, values: dict) -> None:
        """Read one value of field ``p`` into ``values``."""
        kind, attr = p.kind, p.attr
        if kind == "map":
            entries = values.get(attr)
            if entries is None:
                entries = values[attr] = {}
            try:
                key, v = self.map_entry(p)
            except TextError as exc:
                exc.path.insert(0, len(entries))
                raise
            entries[key] = v
            return
        if p.presence == "repeated":
            items = values.get(attr)
            if items is None:
                items = values[attr] = []
            try:
                items.append(self.single(p, kind))
            except TextError as exc:
                exc.path.insert(0, len(items))
                raise
        elif p.member is not None:
            values[attr] = OneOf(p.member, self.single(p, kind))
        else:
            values[attr] = self.single(p, kind)

    def single(self, p: FieldPlan, kind: str) -> Any:
        if kind == "message":
            return self.submessage(p.message)
        if kind == "enum":
            return self.read_enum(p.enum)
        return self.read_scalar(p.scalar)

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

    def submessage(self, cls: type) -> Any:
        close = self.open_message(f"a {message_plan(cls).full_name} message")
        value = self.message(cls, close)
        self.depth -= 1
        return value

    def map_entry(self, p: FieldPlan) -> tuple[Any, Any]:
        """Read one map entry ``{ key: ... value: ... }``; a missing key or value is its zero."""
        close = self.open_message(f'an entry of map field "{p.name}"')
        key = value = _ABSENT
        while not (self.kind == "sym" and self.tok == close):
            name, start = self.tok, self.start
            if self.kind != "ident" or name not in ("key", "value"):
                if self.kind == "sym" and self.tok in ("}", ">"):
                    self.fail(f'expected "{close}" to close the map entry, found "{self.tok}"')
                self.fail(f'expected "key" or "value" in an entry of map field "{p.name}", found {self.found()}')
            self.advance()
            if (key if name == "key" else value) is not _ABSENT:
                self.fail(f'field "{name}" is set twice in a map entry', start)
            try:
                if name == "value" and p.value_kind == "message":
                    if self.at(":"):
                        self.advance()
                    value = self.submessage(p.message)
                else:
                    if not self.at(":"):
                        self.fail(f'expected ":" after field name "{name}", found {self.found()}')
                    self.advance()
                    if name == "key":
                        key = self.read_scalar(p.key)
                    else:
                        value = self.read_enum(p.enum) if p.value_kind == "enum" else self.read_scalar(p.scalar)
            except TextError as exc:
                exc.path.insert(0, name)
                raise
            if self.kind == "sym" and self.tok in (",", ";"):
                self.advance()
        self.advance()
        self.depth -= 1
        if key is _ABSENT:
            key = _ZERO.get(p.key, 0)
        if value is _ABSENT:
            if p.value_kind == "message":
                value = p.message()
            elif p.value_kind == "enum":
                value = enum_default(p.enum.cls)
            else:
                value = _ZERO.get(p.scalar, 0)
        return key, value

    # ------------------------------------------------------------ [extensions] and [Any URLs]

    def bracketed(self, plan: MessagePlan, values: dict, extensions: dict | None) -> dict | None:
        """Read a field named in brackets: an ``Any``'s expanded value, or an extension."""
        start = self.start
        name = self.bracket_name()
        if plan.is_any:
            self.any_value(plan, values, name, start)
            return extensions
        if "/" in name:
            self.fail(f'"[{name}]" is a type URL, which only a google.protobuf.Any may hold', start)
        ext = None
        if self.table is not None:
            ext = self.table.by_name.get(name)
        if ext is None or ext.extendee != plan.full_name:
            hint = "" if self.table is not None else " (pass extensions= the schema that declares it)"
            self.fail(f'no extension named "{name}" of message {plan.full_name}{hint}', start)
        if extensions is None:
            extensions = {}
        self.field(ext.plan, extensions.setdefault(ext, {}), f"[{name}]", start)
        return extensions

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
            self.fail(f'expected "]" to close the name in brackets, found {self.found()}')
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

    def any_value(self, plan: MessagePlan, values: dict, url: str, start: int) -> None:
        """Read ``[type URL] { ... }`` into an ``Any``: its ``type_url`` and the value's encoding."""
        from pbj.protojson import _resolve_any  # the registry ProtoJSON resolves "@type" with

        if "/" not in url:
            self.fail(f'"[{url}]" in a google.protobuf.Any needs a type URL such as '
                      f'"type.googleapis.com/{url}"', start)
        by_number = {p.number: p for p in plan.fields}
        url_attr, value_attr = by_number[1].attr, by_number[2].attr
        if url_attr in values or value_attr in values:
            self.fail("the google.protobuf.Any is set twice (its fields, or a second [type URL])", start)
        target = _resolve_any(url)
        if target is None:
            self.fail(f'cannot resolve the Any type "{url}": no message class of that name '
                      "(load its schema or call pbj.protojson.register_types)", start)
        if self.at(":"):
            self.advance()
        try:
            inner = self.submessage(target)
        except TextError as exc:
            exc.path.insert(0, f"[{url}]")
            raise
        values[url_attr] = url
        values[value_attr] = encode(inner)

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

    def read_scalar(self, kind: str) -> Any:
        """A value of scalar type ``kind`` (``"int32"``, ``"string"`` …)."""
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

    def read_string(self) -> str:
        bodies = self.literals("string")
        if not any("\\" in body for body, _ in bodies):
            text = bodies[0][0] if len(bodies) == 1 else "".join(body for body, _ in bodies)
            if text.isascii():
                return text
        data = self.unescaped(bodies)
        try:
            return data.decode("utf-8")
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
    "float": _Parser.read_float, "double": _Parser.read_float,
    "bool": lambda parser, kind: parser.read_bool(), "string": lambda parser, kind: parser.read_string(),
    "bytes": lambda parser, kind: parser.read_bytes(),
}


class _Absent:
    __slots__ = ()

    def __repr__(self) -> str:
        return "<absent>"


_ABSENT = _Absent()
