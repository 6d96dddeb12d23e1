"""pbj declarations of the test schemas: pbj-it's ``everything.proto`` and ``tests/protos/features.proto``.

``Everything``, ``InnerEverything``, ``Suit`` and ``TimestampTest`` mirror
``../shared/protos/pbj-it/everything.proto`` and ``timestampTest.proto``
(package ``proto``): same field numbers, names and types, with the
well-known wrappers of :mod:`pbj.wellknown` for the boxed fields.

The ``pbjtest`` classes mirror ``tests/protos/features.proto`` and cover what
``Everything`` lacks: proto3 ``optional`` scalars (explicit presence),
unpacked repeated scalars, maps with every key type and message, enum and
bytes values, a recursive message, negative enum numbers and a oneof with
two members of the same type.

Google's classes for the same schemas come from :func:`compile_oracle`.
"""

from __future__ import annotations

import enum
from pathlib import Path

import pbj
from pbj import wellknown as wk
from tests.oracle import GOOGLE_PROTOS, PBJ_IT, protoc

PROTOS = Path(__file__).resolve().parent / "protos"


def compile_oracle() -> list[bytes]:
    """Compile everything.proto, features.proto and the well-known types into Google's default pool (once).

    Returns:
        The ``FileDescriptorSet`` bytes of each compilation (imports included).
    """
    wkt = GOOGLE_PROTOS / "google" / "protobuf"
    return [
        protoc([wkt / f"{name}.proto" for name in ("any", "duration", "empty", "field_mask", "struct",
                                                   "timestamp", "wrappers")], [GOOGLE_PROTOS]),
        protoc([PBJ_IT / "everything.proto"], [PBJ_IT, GOOGLE_PROTOS]),
        protoc([PROTOS / "features.proto"], [PROTOS, GOOGLE_PROTOS]),
    ]


class Suit(enum.IntEnum):
    """``proto.Suit``: suits of cards."""

    ACES = 0
    SPADES = 1
    CLUBS = 2
    DIAMONDS = 3


@pbj.message(full_name="proto.TimestampTest")
class TimestampTest:
    """``proto.TimestampTest`` (timestampTest.proto): seconds and nanos."""

    seconds: int = pbj.field(1, "int64")
    nanos: int = pbj.field(2, "int32")


@pbj.message(full_name="proto.InnerEverything")
class InnerEverything:
    """``proto.InnerEverything``: every scalar, repeated, wrapper and a 26-member oneof."""

    int32Number: int = pbj.field(1, "int32")
    sint32Number: int = pbj.field(2, "sint32")
    uint32Number: int = pbj.field(3, "uint32")
    fixed32Number: int = pbj.field(4, "fixed32")
    sfixed32Number: int = pbj.field(5, "sfixed32")
    floatNumber: float = pbj.field(6, "float")
    int64Number: int = pbj.field(7, "int64")
    sint64Number: int = pbj.field(8, "sint64")
    uint64Number: int = pbj.field(9, "uint64")
    fixed64Number: int = pbj.field(10, "fixed64")
    sfixed64Number: int = pbj.field(11, "sfixed64")
    doubleNumber: float = pbj.field(12, "double")
    booleanField: bool = pbj.field(13, "bool")
    enumSuit: Suit = pbj.field(14, Suit)
    subObject: TimestampTest | None = pbj.field(15, TimestampTest)
    text: str = pbj.field(16, "string")
    bytesField: bytes = pbj.field(17, "bytes")
    int32NumberList: tuple[int, ...] = pbj.field(100, "int32", repeated=True)
    sint32NumberList: tuple[int, ...] = pbj.field(102, "sint32", repeated=True)
    uint32NumberList: tuple[int, ...] = pbj.field(103, "uint32", repeated=True)
    fixed32NumberList: tuple[int, ...] = pbj.field(104, "fixed32", repeated=True)
    sfixed32NumberList: tuple[int, ...] = pbj.field(105, "sfixed32", repeated=True)
    floatNumberList: tuple[float, ...] = pbj.field(106, "float", repeated=True)
    int64NumberList: tuple[int, ...] = pbj.field(107, "int64", repeated=True)
    sint64NumberList: tuple[int, ...] = pbj.field(108, "sint64", repeated=True)
    uint64NumberList: tuple[int, ...] = pbj.field(109, "uint64", repeated=True)
    fixed64NumberList: tuple[int, ...] = pbj.field(110, "fixed64", repeated=True)
    sfixed64NumberList: tuple[int, ...] = pbj.field(111, "sfixed64", repeated=True)
    doubleNumberList: tuple[float, ...] = pbj.field(112, "double", repeated=True)
    booleanList: tuple[bool, ...] = pbj.field(113, "bool", repeated=True)
    enumSuitList: tuple[Suit, ...] = pbj.field(114, Suit, repeated=True)
    subObjectList: tuple[TimestampTest, ...] = pbj.field(115, TimestampTest, repeated=True)
    textList: tuple[str, ...] = pbj.field(116, "string", repeated=True)
    bytesExampleList: tuple[bytes, ...] = pbj.field(117, "bytes", repeated=True)
    int32Boxed: wk.Int32Value | None = pbj.field(1001, wk.Int32Value)
    uint32Boxed: wk.UInt32Value | None = pbj.field(1002, wk.UInt32Value)
    int64Boxed: wk.Int64Value | None = pbj.field(1004, wk.Int64Value)
    uint64Boxed: wk.UInt64Value | None = pbj.field(1005, wk.UInt64Value)
    floatBoxed: wk.FloatValue | None = pbj.field(1007, wk.FloatValue)
    doubleBoxed: wk.DoubleValue | None = pbj.field(1008, wk.DoubleValue)
    boolBoxed: wk.BoolValue | None = pbj.field(1009, wk.BoolValue)
    bytesBoxed: wk.BytesValue | None = pbj.field(10010, wk.BytesValue)
    stringBoxed: wk.StringValue | None = pbj.field(10011, wk.StringValue)
    oneofExample: pbj.OneOf | None = pbj.oneof(
        int32NumberOneOf=(100001, "int32"),
        sint32NumberOneOf=(100002, "sint32"),
        uint32NumberOneOf=(100003, "uint32"),
        fixed32NumberOneOf=(100004, "fixed32"),
        sfixed32NumberOneOf=(100005, "sfixed32"),
        floatNumberOneOf=(100006, "float"),
        int64NumberOneOf=(100007, "int64"),
        sint64NumberOneOf=(100008, "sint64"),
        uint64NumberOneOf=(100009, "uint64"),
        fixed64NumberOneOf=(100010, "fixed64"),
        sfixed64NumberOneOf=(100011, "sfixed64"),
        doubleNumberOneOf=(100012, "double"),
        booleanFieldOneOf=(100013, "bool"),
        enumSuitOneOf=(100014, Suit),
        subObjectOneOf=(100015, TimestampTest),
        textOneOf=(100016, "string"),
        bytesFieldOneOf=(100017, "bytes"),
        int32BoxedOneOf=(100018, wk.Int32Value),
        uint32BoxedOneOf=(100019, wk.UInt32Value),
        int64BoxedOneOf=(100020, wk.Int64Value),
        uint64BoxedOneOf=(100021, wk.UInt64Value),
        floatBoxedOneOf=(100022, wk.FloatValue),
        doubleBoxedOneOf=(100023, wk.DoubleValue),
        boolBoxedOneOf=(100024, wk.BoolValue),
        bytesBoxedOneOf=(100025, wk.BytesValue),
        stringBoxedOneOf=(100026, wk.StringValue),
    )

@pbj.message(full_name="proto.Everything")
class Everything:
    """``proto.Everything``: ``InnerEverything`` plus a nested message and five maps."""

    int32Number: int = pbj.field(1, "int32")
    sint32Number: int = pbj.field(2, "sint32")
    uint32Number: int = pbj.field(3, "uint32")
    fixed32Number: int = pbj.field(4, "fixed32")
    sfixed32Number: int = pbj.field(5, "sfixed32")
    floatNumber: float = pbj.field(6, "float")
    int64Number: int = pbj.field(7, "int64")
    sint64Number: int = pbj.field(8, "sint64")
    uint64Number: int = pbj.field(9, "uint64")
    fixed64Number: int = pbj.field(10, "fixed64")
    sfixed64Number: int = pbj.field(11, "sfixed64")
    doubleNumber: float = pbj.field(12, "double")
    booleanField: bool = pbj.field(13, "bool")
    enumSuit: Suit = pbj.field(14, Suit)
    subObject: TimestampTest | None = pbj.field(15, TimestampTest)
    text: str = pbj.field(16, "string")
    bytesField: bytes = pbj.field(17, "bytes")
    innerEverything: InnerEverything | None = pbj.field(50, InnerEverything)
    mapInt32ToString: pbj.FrozenMap = pbj.map_field(71, "int32", "string")
    mapBoolToDouble: pbj.FrozenMap = pbj.map_field(72, "bool", "double")
    mapStringToMessage: pbj.FrozenMap = pbj.map_field(73, "string", InnerEverything)
    mapUInt64ToBytes: pbj.FrozenMap = pbj.map_field(74, "uint64", "bytes")
    mapInt64ToBool: pbj.FrozenMap = pbj.map_field(75, "int64", "bool")
    int32NumberList: tuple[int, ...] = pbj.field(100, "int32", repeated=True)
    sint32NumberList: tuple[int, ...] = pbj.field(102, "sint32", repeated=True)
    uint32NumberList: tuple[int, ...] = pbj.field(103, "uint32", repeated=True)
    fixed32NumberList: tuple[int, ...] = pbj.field(104, "fixed32", repeated=True)
    sfixed32NumberList: tuple[int, ...] = pbj.field(105, "sfixed32", repeated=True)
    floatNumberList: tuple[float, ...] = pbj.field(106, "float", repeated=True)
    int64NumberList: tuple[int, ...] = pbj.field(107, "int64", repeated=True)
    sint64NumberList: tuple[int, ...] = pbj.field(108, "sint64", repeated=True)
    uint64NumberList: tuple[int, ...] = pbj.field(109, "uint64", repeated=True)
    fixed64NumberList: tuple[int, ...] = pbj.field(110, "fixed64", repeated=True)
    sfixed64NumberList: tuple[int, ...] = pbj.field(111, "sfixed64", repeated=True)
    doubleNumberList: tuple[float, ...] = pbj.field(112, "double", repeated=True)
    booleanList: tuple[bool, ...] = pbj.field(113, "bool", repeated=True)
    enumSuitList: tuple[Suit, ...] = pbj.field(114, Suit, repeated=True)
    subObjectList: tuple[TimestampTest, ...] = pbj.field(115, TimestampTest, repeated=True)
    textList: tuple[str, ...] = pbj.field(116, "string", repeated=True)
    bytesExampleList: tuple[bytes, ...] = pbj.field(117, "bytes", repeated=True)
    int32Boxed: wk.Int32Value | None = pbj.field(1001, wk.Int32Value)
    uint32Boxed: wk.UInt32Value | None = pbj.field(1002, wk.UInt32Value)
    int64Boxed: wk.Int64Value | None = pbj.field(1004, wk.Int64Value)
    uint64Boxed: wk.UInt64Value | None = pbj.field(1005, wk.UInt64Value)
    floatBoxed: wk.FloatValue | None = pbj.field(1007, wk.FloatValue)
    doubleBoxed: wk.DoubleValue | None = pbj.field(1008, wk.DoubleValue)
    boolBoxed: wk.BoolValue | None = pbj.field(1009, wk.BoolValue)
    bytesBoxed: wk.BytesValue | None = pbj.field(10010, wk.BytesValue)
    stringBoxed: wk.StringValue | None = pbj.field(10011, wk.StringValue)
    oneofExample: pbj.OneOf | None = pbj.oneof(
        int32NumberOneOf=(100001, "int32"),
        sint32NumberOneOf=(100002, "sint32"),
        uint32NumberOneOf=(100003, "uint32"),
        fixed32NumberOneOf=(100004, "fixed32"),
        sfixed32NumberOneOf=(100005, "sfixed32"),
        floatNumberOneOf=(100006, "float"),
        int64NumberOneOf=(100007, "int64"),
        sint64NumberOneOf=(100008, "sint64"),
        uint64NumberOneOf=(100009, "uint64"),
        fixed64NumberOneOf=(100010, "fixed64"),
        sfixed64NumberOneOf=(100011, "sfixed64"),
        doubleNumberOneOf=(100012, "double"),
        booleanFieldOneOf=(100013, "bool"),
        enumSuitOneOf=(100014, Suit),
        subObjectOneOf=(100015, TimestampTest),
        textOneOf=(100016, "string"),
        bytesFieldOneOf=(100017, "bytes"),
        int32BoxedOneOf=(100018, wk.Int32Value),
        uint32BoxedOneOf=(100019, wk.UInt32Value),
        int64BoxedOneOf=(100020, wk.Int64Value),
        uint64BoxedOneOf=(100021, wk.UInt64Value),
        floatBoxedOneOf=(100022, wk.FloatValue),
        doubleBoxedOneOf=(100023, wk.DoubleValue),
        boolBoxedOneOf=(100024, wk.BoolValue),
        bytesBoxedOneOf=(100025, wk.BytesValue),
        stringBoxedOneOf=(100026, wk.StringValue),
    )


# ---------------------------------------------------------------- features.proto (package pbjtest)

class Sign(enum.IntEnum):
    """``pbjtest.Sign``: negative enum numbers and the int32 limits."""

    SIGN_ZERO = 0
    SIGN_POS = 1
    SIGN_NEG = -1
    SIGN_MIN = -2147483648
    SIGN_MAX = 2147483647


@pbj.message(full_name="pbjtest.Leaf")
class Leaf:
    """``pbjtest.Leaf``: a small message for map values and oneof members."""

    n: int = pbj.field(1, "int32")
    s: str = pbj.field(2, "string")


@pbj.message(full_name="pbjtest.Presence")
class Presence:
    """``pbjtest.Presence``: proto3 ``optional`` (explicit presence) for every scalar type."""

    i32: int | None = pbj.field(1, "int32", optional=True)
    i64: int | None = pbj.field(2, "int64", optional=True)
    u32: int | None = pbj.field(3, "uint32", optional=True)
    u64: int | None = pbj.field(4, "uint64", optional=True)
    s32: int | None = pbj.field(5, "sint32", optional=True)
    s64: int | None = pbj.field(6, "sint64", optional=True)
    f32: int | None = pbj.field(7, "fixed32", optional=True)
    f64: int | None = pbj.field(8, "fixed64", optional=True)
    sf32: int | None = pbj.field(9, "sfixed32", optional=True)
    sf64: int | None = pbj.field(10, "sfixed64", optional=True)
    fl: float | None = pbj.field(11, "float", optional=True)
    db: float | None = pbj.field(12, "double", optional=True)
    b: bool | None = pbj.field(13, "bool", optional=True)
    s: str | None = pbj.field(14, "string", optional=True)
    by: bytes | None = pbj.field(15, "bytes", optional=True)
    sign: Sign | None = pbj.field(16, Sign, optional=True)
    plain: int = pbj.field(17, "int32")


@pbj.message(full_name="pbjtest.Unpacked")
class Unpacked:
    """``pbjtest.Unpacked``: repeated scalars with ``[packed = false]``."""

    i32: tuple[int, ...] = pbj.field(1, "int32", repeated=True, packed=False)
    i64: tuple[int, ...] = pbj.field(2, "int64", repeated=True, packed=False)
    u32: tuple[int, ...] = pbj.field(3, "uint32", repeated=True, packed=False)
    u64: tuple[int, ...] = pbj.field(4, "uint64", repeated=True, packed=False)
    s32: tuple[int, ...] = pbj.field(5, "sint32", repeated=True, packed=False)
    s64: tuple[int, ...] = pbj.field(6, "sint64", repeated=True, packed=False)
    f32: tuple[int, ...] = pbj.field(7, "fixed32", repeated=True, packed=False)
    f64: tuple[int, ...] = pbj.field(8, "fixed64", repeated=True, packed=False)
    sf32: tuple[int, ...] = pbj.field(9, "sfixed32", repeated=True, packed=False)
    sf64: tuple[int, ...] = pbj.field(10, "sfixed64", repeated=True, packed=False)
    fl: tuple[float, ...] = pbj.field(11, "float", repeated=True, packed=False)
    db: tuple[float, ...] = pbj.field(12, "double", repeated=True, packed=False)
    b: tuple[bool, ...] = pbj.field(13, "bool", repeated=True, packed=False)
    sign: tuple[Sign, ...] = pbj.field(14, Sign, repeated=True, packed=False)
    packed_sign: tuple[Sign, ...] = pbj.field(15, Sign, repeated=True)


@pbj.message(full_name="pbjtest.Maps")
class Maps:
    """``pbjtest.Maps``: every legal map key type; message, enum and bytes values."""

    int32_key: pbj.FrozenMap = pbj.map_field(1, "int32", "string")
    int64_key: pbj.FrozenMap = pbj.map_field(2, "int64", "bytes")
    uint32_key: pbj.FrozenMap = pbj.map_field(3, "uint32", Sign)
    uint64_key: pbj.FrozenMap = pbj.map_field(4, "uint64", Leaf)
    sint32_key: pbj.FrozenMap = pbj.map_field(5, "sint32", "double")
    sint64_key: pbj.FrozenMap = pbj.map_field(6, "sint64", "float")
    fixed32_key: pbj.FrozenMap = pbj.map_field(7, "fixed32", "bool")
    fixed64_key: pbj.FrozenMap = pbj.map_field(8, "fixed64", "int64")
    sfixed32_key: pbj.FrozenMap = pbj.map_field(9, "sfixed32", "sint64")
    sfixed64_key: pbj.FrozenMap = pbj.map_field(10, "sfixed64", "uint32")
    bool_key: pbj.FrozenMap = pbj.map_field(11, "bool", Leaf)
    string_to_message: pbj.FrozenMap = pbj.map_field(12, "string", Leaf)
    string_to_enum: pbj.FrozenMap = pbj.map_field(13, "string", Sign)
    string_to_bytes: pbj.FrozenMap = pbj.map_field(14, "string", "bytes")


@pbj.message(full_name="pbjtest.Node")
class Node:
    """``pbjtest.Node``: a recursive tree (repeated, singular and map self-references)."""

    name: str = pbj.field(1, "string")
    children: tuple[Node, ...] = pbj.field(2, "Node", repeated=True)
    parent: Node | None = pbj.field(3, "Node")
    named: pbj.FrozenMap = pbj.map_field(4, "string", "Node")


@pbj.message(full_name="pbjtest.Choice")
class Choice:
    """``pbjtest.Choice``: a oneof with two string and two ``Leaf`` members; negative enums."""

    pick: pbj.OneOf | None = pbj.oneof(first=(1, "string"), second=(2, "string"), leaf_a=(3, Leaf),
                                       leaf_b=(4, Leaf), sign_pick=(5, Sign))
    sign: Sign = pbj.field(6, Sign)
    signs: tuple[Sign, ...] = pbj.field(7, Sign, repeated=True)
