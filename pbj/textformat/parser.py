"""Reading messages from the text format: :func:`from_text`.

A recursive-descent parser over the tokens of :mod:`pbj.textformat.tokenizer`
(read through :class:`~pbj.textformat.reader.TokenReader`), following
protobuf.dev "Text Format Language Specification" ("Syntax Elements", "Value
Types" and the sections on extensions, ``Any``, groups, maps and oneofs) and,
where the spec is silent, Google's C++ parser:

* a field is named by its ``.proto`` name (a group-like field also by its
  type's name); ``:`` is required before a scalar value and optional before a
  message; ``{ }`` and ``< >`` both delimit messages; each field may be
  followed by one ``,`` or ``;``;
* a repeated field may be repeated and may use the list form ``[a, b]``
  (also ``[]``); a singular field may appear once, and a oneof may have one
  member (both checked as C++ ``Parse`` does, not ``Merge``);
* scalar values as :mod:`pbj.textformat.reader` reads them (enums by name or
  by number; a number that is not a member only for open enums);
* a map as repeated ``{ key: ... value: ... }`` entries (a missing one is its
  type's zero; the last entry of a key wins);
* ``Any`` in its expanded form ``[type.googleapis.com/pkg.Msg] { ... }``,
  resolved through the ProtoJSON type registry (``pbj.protojson``);
* extensions ``[pkg.ext]`` registered with the message's class
  (:mod:`pbj.textformat.extensions`); they are stored as the message's extensions
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

import sys
from typing import Any

from pbj.api import DEFAULT_MAX_DEPTH, encode
from pbj.depth import check_max_depth
from pbj.extensions import Extension
from pbj.protojson.registry import resolve_any
from pbj.schema import OneOf, enum_default, is_message
from pbj.schema.constructor import build_unvalidated
from pbj.schema.resolve import class_needed
from pbj.schema.values import did_you_mean
from pbj.textformat.errors import TextError
from pbj.textformat.extensions import check_namespace, extension_plan, find_extension
from pbj.textformat.plan import FieldPlan, MessagePlan, message_plan
from pbj.textformat.reader import TokenReader
from pbj.textformat.tokenizer import line_and_column
from pbj.textformat.unknown import read_unknown_field

__all__ = ["from_text"]

_ZERO = {"string": "", "bytes": b"", "bool": False, "float": 0.0, "double": 0.0}


def from_text(cls: type, text: str | bytes, *, extensions: Any = None, allow_partial: bool = False,
              max_depth: int = DEFAULT_MAX_DEPTH, read_unknown_fields: bool = False) -> Any:
    """Read a message of class ``cls`` from the text format.

    Implements the parsing side of protobuf.dev "Text Format Language
    Specification" (see the module docstring for each rule).

    Args:
        cls: a pbj message class (hand-declared or loaded).
        text: the text (``bytes`` are read as UTF-8).
        extensions: a :class:`pbj.Namespace`, or ``None``; kept for
            compatibility: the ``[pkg.ext]`` names readable are those of the
            extensions registered with each message's class (:mod:`pbj.extensions`).
        allow_partial: accept messages whose proto2 ``required`` fields are
            not all set (C++ ``Parser::AllowPartialMessage``).
        max_depth: how deeply messages may nest (default
            ``pbj.DEFAULT_MAX_DEPTH``, 100).
        read_unknown_fields: read fields written by number (``5: 1``,
            ``7 { ... }``), as ``pbj.to_text(print_unknown_fields=True)`` and
            ``protoc --decode`` print unknown fields, back into the message's
            unknown fields (:mod:`pbj.textformat.unknown`). Off by default: a
            field number is then an error that names this option.

    Returns:
        The message, a ``cls`` instance; extensions are set on it
        (:func:`pbj.get_extension`).

    Raises:
        TextError: the text is not a valid text-format ``cls`` (a syntax
            error, an unknown field or enum name, a value out of range or of
            the wrong type, a bad escape or invalid UTF-8, a singular field or
            oneof set twice, a missing required field, an unresolvable
            ``Any`` type or extension, nesting deeper than ``max_depth`` or
            than Python's recursion limit lets the parser follow),
            with its line, column and field path.
        TypeError: ``cls`` is not a pbj message class, ``text`` is not
            ``str`` or ``bytes``, ``extensions`` is not a namespace, or
            ``max_depth`` is not an int.
        ValueError: ``max_depth`` is negative.
    """
    if not (isinstance(cls, type) and is_message(cls)):
        raise class_needed(cls, "pbj.from_text")
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
    check_max_depth(max_depth, "from_text")
    check_namespace(extensions)
    parser = _Parser(text, max_depth, allow_partial, read_unknown_fields)
    parser.advance()
    return _read(parser, cls)


def _read(parser: Any, cls: type) -> Any:
    """``parser.message(cls)``, with Python's recursion limit reported as a TextError at the depth reached."""
    try:
        return parser.message(cls, None)
    except RecursionError:
        parser.fail(f"messages are nested {parser.depth} levels deep, more than the text-format parser can "
                    f"follow within Python's recursion limit ({sys.getrecursionlimit()}); max_depth is "
                    f"{parser.max_depth}")

class _Parser(TokenReader):
    """One :func:`from_text` call: the token reader, and the readers of messages and fields."""

    __slots__ = ("allow_partial", "read_unknown")

    def __init__(self, text: str, max_depth: int, allow_partial: bool, read_unknown: bool = False) -> None:
        super().__init__(text, max_depth)
        self.allow_partial = allow_partial
        self.read_unknown = read_unknown

    # ------------------------------------------------------------ messages

    def message(self, cls: type, close: str | None) -> Any:
        """Read fields up to ``close`` (``}``, ``>``, or the end of the text for ``None``)."""
        plan = message_plan(cls)
        values: dict[str, Any] = {}
        extensions: dict[Extension, dict] | None = None
        unknown: list[bytes] | None = None
        while True:
            kind = self.kind
            if kind == "ident":
                name, start = self.tok, self.start
                p = plan.by_name.get(name)
                self.advance()
                if p is None:
                    if name not in plan.reserved:
                        self.fail(f'no field named "{name}" in message {plan.full_name}'
                                  f'{did_you_mean(name, plan.by_name)}', start)
                    self.skip_field_value()
                else:
                    self.field(p, values, name, start)
            elif kind == "dec":  # a field by number: an unknown field, as the printer writes it
                if not self.read_unknown:
                    self.fail(f"expected a field name, found the field number {self.tok}: unknown fields are "
                              "printed by number (print_unknown_fields, pbj decode --text); read them back with "
                              "read_unknown_fields=True (pbj encode --from-text --read-unknown-fields)")
                name, start = self.tok, self.start
                self.advance()
                if unknown is None:
                    unknown = []
                unknown.append(read_unknown_field(self, name, start))
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
            values["_pbj_extensions"] = {ext: v[extension_plan(ext).attr] for ext, v in extensions.items()}
        if unknown:
            values["_pbj_unknown"] = b"".join(unknown)
        return build_unvalidated(cls, values)

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
            exc.path.insert(0, p.path)
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
            assert p.message is not None  # a message field's plan holds its class
            return self.submessage(p.message)
        if kind == "enum":
            assert p.enum is not None  # an enum field's plan holds its EnumPlan
            return self.read_enum(p.enum)
        assert p.scalar is not None  # otherwise a scalar field, whose plan holds its type name
        return self.read_scalar(p.scalar, p.info.utf8)

    def submessage(self, cls: type) -> Any:
        close = self.open_message(f"a {message_plan(cls).full_name} message")
        value = self.message(cls, close)
        self.depth -= 1
        return value

    def map_entry(self, p: FieldPlan) -> tuple[Any, Any]:
        """Read one map entry ``{ key: ... value: ... }``; a missing key or value is its zero."""
        close = self.open_message(f'an entry of map field "{p.name}"')
        # A map field's plan holds its key's type name, and its value's class, EnumPlan or type name.
        assert p.key is not None
        key: Any = _ABSENT
        value: Any = _ABSENT
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
                if name == "value" and p.message is not None:
                    if self.at(":"):
                        self.advance()
                    value = self.submessage(p.message)
                else:
                    if not self.at(":"):
                        self.fail(f'expected ":" after field name "{name}", found {self.found()}')
                    self.advance()
                    if name == "key":
                        key = self.read_scalar(p.key, p.info.utf8)
                    elif p.enum is not None:
                        value = self.read_enum(p.enum)
                    else:
                        assert p.scalar is not None
                        value = self.read_scalar(p.scalar, p.info.utf8)
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
            if p.message is not None:
                value = p.message()
            elif p.enum is not None:
                value = enum_default(p.enum.cls)
            else:
                assert p.scalar is not None
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
        ext = find_extension(plan.cls, name)
        if ext is None:
            self.fail(f'no extension named "{name}" of message {plan.full_name} (declare it with '
                      'pbj.extension, or load the schema that declares it)', start)
        if extensions is None:
            extensions = {}
        self.field(extension_plan(ext), extensions.setdefault(ext, {}), f"[{name}]", start)
        return extensions

    def any_value(self, plan: MessagePlan, values: dict, url: str, start: int) -> None:
        """Read ``[type URL] { ... }`` into an ``Any``: its ``type_url`` and the value's encoding."""
        if "/" not in url:
            self.fail(f'"[{url}]" in a google.protobuf.Any needs a type URL such as '
                      f'"type.googleapis.com/{url}"', start)
        by_number = {p.number: p for p in plan.fields}
        url_attr, value_attr = by_number[1].attr, by_number[2].attr
        if url_attr in values or value_attr in values:
            self.fail("the google.protobuf.Any is set twice (its fields, or a second [type URL])", start)
        target = resolve_any(url)  # the registry ProtoJSON resolves "@type" with
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


class _Absent:
    __slots__ = ()

    def __repr__(self) -> str:
        return "<absent>"


_ABSENT = _Absent()
