"""The error of the text format: :class:`TextError`.

Raised by :func:`pbj.from_text` for text that is not a valid text-format
encoding of the requested message (protobuf.dev "Text Format Language
Specification"). Like every pbj error it carries its facts as attributes and
renders its message from them, so code can act on an error without parsing
its text::

    no field named "amout" in message example.Transfer - at `$.transfers[2]` (line 7, column 5)
"""

from __future__ import annotations

from pbj.errors import PbjError, format_path

__all__ = ["TextError"]


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
        return (_rebuild, (self.reason, self.line, self.column, self.offset, self.path))


def _rebuild(reason: str, line: int, column: int, offset: int, path: list) -> TextError:
    return TextError(reason, line=line, column=column, offset=offset, path=path)
