"""The error hierarchy of pbj.

Every failure pbj reports is a :class:`PbjError`. Each carries its facts as
attributes first (the field path, the byte offset) and renders its text from
them, so code can act on an error without parsing its message.

* :class:`SchemaError`: a message declaration or a loaded schema is wrong.
* :class:`DecodeError`: bytes are not a valid encoding of the message.
* :class:`EncodeError`: a value cannot be written (wrong type, out of range).
"""

from __future__ import annotations

__all__ = ["PbjError", "SchemaError", "DecodeError", "EncodeError", "format_path"]


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
