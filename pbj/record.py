"""Plain slotted records for pbj's own schema data (scalar rows, field records, field markers).

``import pbj`` loads what encoding and decoding need and no more; attrs (about two thirds of
what the import used to cost, with ``inspect`` under it) is loaded only when a message class is
first used through attrs (see :mod:`pbj.schema.make_class`). So pbj's own records are ordinary
classes with ``__slots__``: :class:`Record` gives them a ``repr`` in attrs' form
(``FieldInfo(name='x', number=1, ...)``) and identity equality; :class:`ValueRecord` compares and
hashes by value, and :class:`FrozenRecord` also refuses attribute stores after ``__init__``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Record", "ValueRecord", "FrozenRecord"]


class Record:
    """A slotted record: ``repr`` lists every slot of the class, in order; equality is identity."""

    __slots__ = ()

    def __repr__(self) -> str:
        names: tuple[str, ...] = type(self).__slots__  # type: ignore[assignment]
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
        return f"{type(self).__name__}({shown})"


class ValueRecord(Record):
    """A record equal to another of its class with equal slots (unhashable, as its slots may change:
    defining ``__eq__`` alone makes Python set ``__hash__`` to ``None``)."""

    __slots__ = ()

    def _values(self) -> tuple:
        names: tuple[str, ...] = type(self).__slots__  # type: ignore[assignment]
        return tuple(getattr(self, name) for name in names)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._values() == other._values()  # type: ignore[attr-defined]


class FrozenRecord(ValueRecord):
    """A value record whose slots are set once, by ``__init__`` (through :meth:`_set`); hashable."""

    __slots__ = ()

    def _set(self, **values: Any) -> None:
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen: cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen: cannot delete {name!r}")

    def __hash__(self) -> int:
        return hash(self._values())
