"""The error hierarchy of pbj.

Every failure pbj reports is a :class:`PbjError`. Each carries its facts as
attributes first (the field path, the byte offset) and renders its text from
them, so code can act on an error without parsing its message.

* :class:`SchemaError`: a message declaration or a loaded schema is wrong.
* :class:`DecodeError`: bytes are not a valid encoding of the message.
* :class:`EncodeError`: a value cannot be written (wrong type, out of range).
* :class:`JSONError`: JSON text is not a ProtoJSON form of the message (a :class:`DecodeError`).
* :class:`TextError`: text is not a text-format encoding of the message.

The last two live here (and are re-exported by :mod:`pbj.protojson` and :mod:`pbj.textformat`)
so that ``except pbj.JSONError`` works without importing the JSON or text-format machinery.
"""

from __future__ import annotations

from typing import Any

__all__ = ["PbjError", "SchemaError", "DecodeError", "EncodeError", "JSONError", "TextError", "ValidationError",
           "format_path"]


def format_path(path: list[str | int]) -> str:
    """Render a field path as ``$.transfers[3].amount``.

    Args:
        path: field names (``str``), list indexes (``int``) and map keys (the
            key wrapped in a one-element tuple), outermost first.

    Returns:
        The path in the JSONPath-like form used by every pbj error.
    """
    out = ["$"]
    for part in path:
        if isinstance(part, int):
            out.append(f"[{part}]")
        elif isinstance(part, tuple):
            out.append(f"[{part[0]!r}]")
        else:
            out.append(f".{part}")
    return "".join(out)


class PbjError(Exception):
    """Base class of every error pbj raises."""


class SchemaError(PbjError, TypeError):
    """A message class or a loaded schema breaks a rule of protobuf or of pbj.

    Raised when a class is declared (``@pbj.message``) or a schema is loaded,
    never while encoding or decoding.

    Attributes:
        cls_name: the message class (or proto type) at fault, or ``None``.
        field_name: the field at fault, or ``None``.
    """

    def __init__(self, message: str, *, cls_name: str | None = None, field_name: str | None = None):
        self.cls_name = cls_name
        self.field_name = field_name
        where = ""
        if cls_name and field_name:
            where = f"{cls_name}.{field_name}: "
        elif cls_name:
            where = f"{cls_name}: "
        super().__init__(where + message)


class DecodeError(PbjError, ValueError):
    """Input bytes are not a valid protobuf encoding of the requested message.

    Attributes:
        reason: what is wrong, without location (``"truncated input"`` …).
        path: the field path from the top-level message, outermost first
            (names as ``str``, repeated indexes as ``int``).
        offset: the byte offset in the top-level input where the failing
            field (its tag) starts, or where reading stopped; ``None`` if unknown.
        missing: for a message missing proto2 ``required`` fields, the path of
            each (as ``path``); else empty.
    """

    def __init__(self, reason: str, *, path: list | None = None, offset: int | None = None):
        self.reason = reason
        self.path = list(path) if path else []
        self.offset = offset
        self.missing: list[list] = []
        super().__init__(reason)

    def __str__(self) -> str:
        at = f" at byte {self.offset}" if self.offset is not None else ""
        return f"{self.reason} - at `{format_path(self.path)}`{at}"


class EncodeError(PbjError, ValueError):
    """A field value cannot be written in the field's protobuf type.

    Attributes:
        reason: what is wrong with the value.
        path: the field path from the top-level message, outermost first.
        missing: for a message missing proto2 ``required`` fields, the path of
            each (as ``path``); else empty.
    """

    def __init__(self, reason: str, *, path: list | None = None):
        self.reason = reason
        self.path = list(path) if path else []
        self.missing: list[list] = []
        super().__init__(reason)

    def __str__(self) -> str:
        return f"{self.reason} - at `{format_path(self.path)}`"


class JSONError(DecodeError):
    """A JSON value is not a valid ProtoJSON form of the requested message.

    A :class:`pbj.DecodeError` whose ``path`` is the JSON path of the bad value
    (object keys as ``str``, array indexes as ``int``, map keys as one-element
    tuples) and whose ``offset`` is ``None``. ``str(err)`` reads
    ``expected a JSON number for int32, got string - at `$.transfers[3].amount```.
    """

    def __init__(self, reason: str, *, path: list | None = None):
        super().__init__(reason, path=path)


class TextError(PbjError, ValueError):
    """Text is not a valid text-format encoding of the requested message.

    Attributes:
        reason: what is wrong, without location (``'expected ":" after field
            name "a", found "1"'`` …).
        line: the 1-based line of the offending token in the input text.
        column: its 1-based column, counted in characters (code points).
        path: the field path of the message being read when the error was
            found, outermost first: field names (``str``), repeated-field
            indexes (``int``) and map keys (one-element tuples), as in
            :class:`pbj.DecodeError`.
        offset: the 0-based character offset of the offending token.
    """

    def __init__(self, reason: str, *, line: int, column: int, offset: int, path: list | None = None):
        self.reason = reason
        self.line = line
        self.column = column
        self.offset = offset
        self.path = list(path) if path else []
        super().__init__(reason)

    def __str__(self) -> str:
        return f"{self.reason} - at `{format_path(self.path)}` (line {self.line}, column {self.column})"

    def __reduce__(self):
        return (_rebuild_text_error, (self.reason, self.line, self.column, self.offset, self.path))


def _rebuild_text_error(reason: str, line: int, column: int, offset: int, path: list) -> TextError:
    """Unpickle a :class:`TextError` (``__reduce__`` target)."""
    return TextError(reason, line=line, column=column, offset=offset, path=path)


class ValidationError(PbjError, ValueError):
    """A message breaks ``buf.validate`` rules of its schema (:func:`pbj.validate`).

    Defined here, with pbj's other errors, so that ``pbj.ValidationError`` is the class itself after a
    plain ``import pbj`` (the validation package is imported on first use).

    Attributes:
        violations: every :class:`pbj.validation.Violation` found (just the first with ``fail_fast``), in
            protovalidate's order.
        type_name: the full name of the validated message.

    The text lists each violation on its own line, with its path, message and rule id. ``to_proto()``
    gives the violations as one ``buf.validate.Violations`` message (pbj's; added by :mod:`pbj.validation`).
    """

    def __init__(self, type_name: str, violations: list[Any]) -> None:
        self.type_name = type_name
        self.violations = violations
        lines = "".join(f"\n  {v}" for v in violations)
        n = len(violations)
        super().__init__(f"{type_name}: {n} validation rule{'s' if n != 1 else ''} broken:{lines}")
