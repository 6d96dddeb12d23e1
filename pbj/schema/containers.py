"""The value containers of message fields: :class:`FrozenMap` (maps) and :class:`OneOf` (oneofs).

Messages are immutable (their encoded size is cached on them), so the values of
map and oneof fields are immutable too: a map field holds a :class:`FrozenMap`
("Maps" in protobuf.dev "Language Guide (proto3)"), a oneof a :class:`OneOf`
naming the member that is set ("Oneof").
"""

from __future__ import annotations

import typing
from typing import Any, Generic, TypeVar

__all__ = ["FrozenMap", "EMPTY_MAP", "OneOf"]

K = TypeVar("K")
V = TypeVar("V")
T = TypeVar("T", covariant=True)


class FrozenMap(dict[K, V]):
    """An immutable ``dict``: the value of every map field.

    Reads work as on a ``dict``; every method that would change it raises
    ``TypeError``. It is hashable when its values are, so messages holding
    maps can be hashed.
    """

    __slots__ = ()

    def _immutable(self, *args: Any, **kwargs: Any) -> typing.NoReturn:
        raise TypeError("a pbj map is immutable; build a new one and use pbj.replace")

    __setitem__ = __delitem__ = __ior__ = _immutable  # type: ignore[assignment]
    clear = pop = popitem = setdefault = update = _immutable  # type: ignore[assignment]

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(frozenset(self.items()))

    def __repr__(self) -> str:
        return f"FrozenMap({dict.__repr__(self)})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenMap, (dict(self),))


#: The shared empty map: the default of every map field.
EMPTY_MAP: FrozenMap[Any, Any] = FrozenMap()


class OneOf(tuple, Generic[T]):  # type: ignore[type-arg]
    """The value of a oneof: which member is set, and its value.

    ``OneOf("transfer", Transfer(...))``. Two members of the same type stay
    distinct because the member name is kept. It matches positionally in
    ``match`` statements::

        match body.data:
            case pbj.OneOf("transfer", t): ...
            case pbj.OneOf("memo", text): ...
            case None: ...  # no member set

    For type checkers it is generic in the value: a oneof attribute is
    annotated with the union of its members' types, ``pbj.OneOf[Transfer | str]
    | None`` (or simply ``pbj.OneOf | None``), so mypy and pyright refuse a
    member value of another type. (The member name is a plain ``str``: mypy
    cannot infer a literal name from a union context.)

    Attributes:
        which: the member's field name (a ``str``).
        value: the member's value.
    """

    __slots__ = ()
    __match_args__ = ("which", "value")

    def __new__(cls, which: str, value: T) -> OneOf[T]:
        return tuple.__new__(cls, (which, value))

    @property
    def which(self) -> str:
        """The name of the member that is set."""
        return self[0]  # type: ignore[no-any-return]

    @property
    def value(self) -> T:
        """The member's value."""
        return self[1]  # type: ignore[no-any-return]

    def __repr__(self) -> str:
        return f"OneOf({self[0]!r}, {self[1]!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (OneOf, (self[0], self[1]))
