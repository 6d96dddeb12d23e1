"""What a table leaves out: the unknown fields and extensions of the messages, said once per call.

The mapping has no column for unknown fields or extensions (``docs/arrow.md``,
"The type mapping"), so :func:`pbj.arrow.to_arrow` and
:func:`pbj.arrow.decode_to_arrow` cannot keep them. Rather than drop them
without a word, each call counts them and warns once, as ``pbj decode`` does
for JSON: an :class:`UnknownFieldsWarning` naming how many fields, how many
bytes and in which message types. The counting is per call (a context
variable set by :func:`counting`), so threads and tasks do not mix their counts.
"""

from __future__ import annotations

import contextlib
import contextvars
import operator
import warnings
from collections.abc import Iterator
from typing import Any

__all__ = ["UnknownFieldsWarning", "Lost", "counting", "note", "note_unknown", "note_counted", "note_tree"]

_UNKNOWN = operator.attrgetter("_pbj_unknown")


class UnknownFieldsWarning(UserWarning):
    """Unknown fields or extensions of the messages are not columns of the table and are left out."""


class Lost:
    """The unknown fields and extensions met during one call: per message full name, their encodings."""

    def __init__(self) -> None:
        self.unknown: dict[str, list[bytes]] = {}
        self.counted: dict[str, list[int]] = {}  # full name -> [fields, bytes], counted by the native walker
        self.extensions: dict[str, int] = {}

    def add_unknown(self, full_name: str, chunks: list[bytes]) -> None:
        self.unknown.setdefault(full_name, []).extend(chunks)

    def add_counted(self, full_name: str, fields: int, size: int) -> None:
        counts = self.counted.setdefault(full_name, [0, 0])
        counts[0] += fields
        counts[1] += size

    def warning(self) -> str | None:
        """The warning's text, or ``None`` when nothing was left out."""
        if not self.unknown and not self.counted and not self.extensions:
            return None
        from pbj.textformat.raw import walk_fields

        parts = []
        if self.unknown or self.counted:
            fields = sum(len(walk_fields(c)) for chunks in self.unknown.values() for c in chunks)
            size = sum(len(c) for chunks in self.unknown.values() for c in chunks)
            fields += sum(f for f, _ in self.counted.values())
            size += sum(n for _, n in self.counted.values())
            names = sorted(set(self.unknown) | set(self.counted))
            more = f" and {len(names) - 3} more types" if len(names) > 3 else ""
            parts.append(f"{fields:,} unknown field{'s' if fields != 1 else ''} ({size:,} bytes) in "
                         f"{', '.join(names[:3])}{more}")
        if self.extensions:
            count = sum(self.extensions.values())
            names = sorted(self.extensions)
            more = f" and {len(names) - 3} more types" if len(names) > 3 else ""
            parts.append(f"{count:,} extension value{'s' if count != 1 else ''} in {', '.join(names[:3])}{more}")
        return (f"{' and '.join(parts)} are no columns of the table and are left out "
                "(pbj.encode of the messages keeps them)")


_current: contextvars.ContextVar[Lost | None] = contextvars.ContextVar("pbj_arrow_lost", default=None)


@contextlib.contextmanager
def counting(stacklevel: int = 4) -> Iterator[Lost]:
    """Count what the columns built inside leave out; warn once on the way out (not on an error).

    Inside another ``counting`` (a split table decoded per kind), the counts
    go to the outer one, which warns once for the whole call.
    """
    outer = _current.get()
    if outer is not None:
        yield outer
        return
    lost = Lost()
    token = _current.set(lost)
    try:
        yield lost
    finally:
        _current.reset(token)
    text = lost.warning()
    if text is not None:
        warnings.warn(text, UnknownFieldsWarning, stacklevel=stacklevel)


def note(full_name: str, has_extensions: bool, messages: list[Any]) -> None:
    """Count the unknown fields (and extensions) of ``messages`` (``None`` among them is skipped)."""
    lost = _current.get()
    if lost is None:
        return
    chunks = [u for u in map(_UNKNOWN, (m for m in messages if m is not None)) if u]
    if chunks:
        lost.add_unknown(full_name, chunks)
    if has_extensions:
        count = sum(len(getattr(m, "_pbj_extensions", ())) for m in messages if m is not None)
        if count:
            lost.extensions[full_name] = lost.extensions.get(full_name, 0) + count


def note_unknown(full_name: str, chunks: list[bytes]) -> None:
    """Count unknown fields met in encoded form (``chunks``: each field's bytes, tag included)."""
    lost = _current.get()
    if lost is not None and chunks:
        lost.add_unknown(full_name, chunks)


def note_counted(full_name: str, fields: int, size: int) -> None:
    """Count ``fields`` unknown fields of ``size`` bytes in all, met in messages of type ``full_name``
    (the native walker's counts: :func:`pbj.arrow.native.decode_table`)."""
    lost = _current.get()
    if lost is not None:
        lost.add_counted(full_name, fields, size)


def note_tree(message: Any) -> None:
    """Count the unknown fields (and extensions) kept anywhere in a decoded message tree."""
    from pbj.schema import OneOf, info, is_message

    lost = _current.get()
    if lost is None:
        return
    stack = [message]
    while stack:
        msg = stack.pop()
        mi = info(type(msg))
        note(mi.full_name, bool(mi.extension_ranges), [msg])
        values = [getattr(msg, f.name) for f in mi.fields] + [getattr(msg, o.name) for o in mi.oneofs]
        for v in values:
            if v is None:
                continue
            if isinstance(v, OneOf):
                v = v.value
            if isinstance(v, dict):
                stack.extend(x for x in v.values() if is_message(type(x)))
            elif isinstance(v, tuple):
                stack.extend(x for x in v if is_message(type(x)))
            elif is_message(type(v)):
                stack.append(v)
