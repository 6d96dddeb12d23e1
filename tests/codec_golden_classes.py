"""Representative message classes whose generated source is kept under ``tests/golden/``."""

from __future__ import annotations

import enum

import pbj


class Color(enum.IntEnum):
    RED = 0
    GREEN = 1


@pbj.message
class Scalars:
    """Every scalar type once, implicit and explicit presence, repeated packed and not."""

    d: float = pbj.field(1, "double")
    f: float = pbj.field(2, "float")
    i64: int = pbj.field(3, "int64")
    u64: int = pbj.field(4, "uint64")
    i32: int = pbj.field(5, "int32")
    fx64: int = pbj.field(6, "fixed64")
    fx32: int = pbj.field(7, "fixed32")
    b: bool = pbj.field(8, "bool")
    s: str = pbj.field(9, "string")
    by: bytes = pbj.field(12, "bytes")
    u32: int = pbj.field(13, "uint32")
    color: Color = pbj.field(14, Color)
    sf32: int = pbj.field(15, "sfixed32")
    sf64: int = pbj.field(16, "sfixed64")
    s32: int = pbj.field(17, "sint32")
    s64: int | None = pbj.field(18, "sint64", optional=True)
    nums: tuple[int, ...] = pbj.field(20, "int32", repeated=True)
    doubles: tuple[float, ...] = pbj.field(21, "double", repeated=True)
    names: tuple[str, ...] = pbj.field(22, "string", repeated=True)


@pbj.message
class Choice:
    """A oneof whose members sit on both sides of a regular field."""

    first: int = pbj.field(1, "int32")
    pick: pbj.OneOf | None = pbj.oneof(text=(2, "string"), child=(4, "Node"), flag=(5, "bool"))
    middle: str = pbj.field(3, "string")


@pbj.message
class Maps:
    """Maps with scalar, enum and message values."""

    counts: pbj.FrozenMap = pbj.map_field(1, "string", "int64")
    colors: pbj.FrozenMap = pbj.map_field(2, "int32", Color)
    kids: pbj.FrozenMap = pbj.map_field(3, "bool", "Node")


@pbj.message
class Node:
    """A recursive message."""

    value: int = pbj.field(1, "sint64")
    children: tuple[Node, ...] = pbj.field(2, "Node", repeated=True)
    parent: Node | None = pbj.field(3, "Node")


@pbj.message(syntax="proto2")
class Grouped:
    """proto2 groups, singular and repeated."""

    one: Node | None = pbj.field(1, Node, group=True)
    many: tuple[Node, ...] = pbj.field(2, Node, repeated=True, group=True)
    x: int | None = pbj.field(3, "int32", optional=True)


GOLDEN = {"scalars": Scalars, "oneof": Choice, "map": Maps, "recursion": Node, "groups": Grouped}
