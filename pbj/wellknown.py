"""The well-known types of ``google/protobuf/*.proto`` as pbj message classes.

Each class is declared by hand with the full name, field numbers, names and
types of its ``.proto`` file (protobuf.dev "Protocol Buffers Well-Known
Types"), so its encoding is byte for byte Google's:

* ``timestamp.proto``: :class:`Timestamp`; ``duration.proto``: :class:`Duration`.
* ``wrappers.proto``: :class:`DoubleValue`, :class:`FloatValue`,
  :class:`Int64Value`, :class:`UInt64Value`, :class:`Int32Value`,
  :class:`UInt32Value`, :class:`BoolValue`, :class:`StringValue`,
  :class:`BytesValue` (one implicit-presence field ``value = 1`` each).
* ``empty.proto``: :class:`Empty`; ``field_mask.proto``: :class:`FieldMask`;
  ``any.proto``: :class:`Any`.
* ``struct.proto``: :class:`Struct`, :class:`Value`, :class:`ListValue` and
  the enum :class:`NullValue`. The three messages refer to each other, so
  they name each other by forward reference.

Only the binary wire format is defined here; the special ProtoJSON forms of
these types (RFC 3339 strings for ``Timestamp`` and the like) belong to the
JSON codec. :data:`WELL_KNOWN` maps each full name (``"google.protobuf.Timestamp"``)
to its class, so the schema loader uses these classes instead of building
new ones.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping

from pbj.schema import OneOf, field, info, map_field, message, oneof

__all__ = [
    "Timestamp", "Duration", "DoubleValue", "FloatValue", "Int64Value", "UInt64Value",
    "Int32Value", "UInt32Value", "BoolValue", "StringValue", "BytesValue", "Empty",
    "FieldMask", "Any", "NullValue", "Struct", "Value", "ListValue", "WELL_KNOWN",
]

_PKG = "google.protobuf"


@message(full_name=f"{_PKG}.Timestamp")
class Timestamp:
    """A point in time independent of any time zone (``google/protobuf/timestamp.proto``).

    Attributes:
        seconds: seconds of UTC time since the Unix epoch 1970-01-01T00:00:00Z
            (``int64``, field 1; valid range 0001-01-01 to 9999-12-31).
        nanos: non-negative fractions of a second in nanoseconds, 0 to
            999,999,999 (``int32``, field 2).
    """

    seconds: int = field(1, "int64")
    nanos: int = field(2, "int32")


@message(full_name=f"{_PKG}.Duration")
class Duration:
    """A signed, fixed-length span of time (``google/protobuf/duration.proto``).

    Attributes:
        seconds: signed seconds of the span, -315,576,000,000 to
            +315,576,000,000 (``int64``, field 1).
        nanos: signed fractions of a second in nanoseconds, -999,999,999 to
            +999,999,999, with the same sign as ``seconds`` when that is not 0
            (``int32``, field 2).
    """

    seconds: int = field(1, "int64")
    nanos: int = field(2, "int32")


@message(full_name=f"{_PKG}.DoubleValue")
class DoubleValue:
    """Wrapper for ``double`` (``google/protobuf/wrappers.proto``): ``value`` is field 1."""

    value: float = field(1, "double")


@message(full_name=f"{_PKG}.FloatValue")
class FloatValue:
    """Wrapper for ``float`` (``google/protobuf/wrappers.proto``): ``value`` is field 1."""

    value: float = field(1, "float")


@message(full_name=f"{_PKG}.Int64Value")
class Int64Value:
    """Wrapper for ``int64`` (``google/protobuf/wrappers.proto``): ``value`` is field 1."""

    value: int = field(1, "int64")


@message(full_name=f"{_PKG}.UInt64Value")
class UInt64Value:
    """Wrapper for ``uint64`` (``google/protobuf/wrappers.proto``): ``value`` is field 1."""

    value: int = field(1, "uint64")


@message(full_name=f"{_PKG}.Int32Value")
class Int32Value:
    """Wrapper for ``int32`` (``google/protobuf/wrappers.proto``): ``value`` is field 1."""

    value: int = field(1, "int32")


@message(full_name=f"{_PKG}.UInt32Value")
class UInt32Value:
    """Wrapper for ``uint32`` (``google/protobuf/wrappers.proto``): ``value`` is field 1."""

    value: int = field(1, "uint32")


@message(full_name=f"{_PKG}.BoolValue")
class BoolValue:
    """Wrapper for ``bool`` (``google/protobuf/wrappers.proto``): ``value`` is field 1."""

    value: bool = field(1, "bool")


@message(full_name=f"{_PKG}.StringValue")
class StringValue:
    """Wrapper for ``string`` (``google/protobuf/wrappers.proto``): ``value`` is field 1."""

    value: str = field(1, "string")


@message(full_name=f"{_PKG}.BytesValue")
class BytesValue:
    """Wrapper for ``bytes`` (``google/protobuf/wrappers.proto``): ``value`` is field 1."""

    value: bytes = field(1, "bytes")


@message(full_name=f"{_PKG}.Empty")
class Empty:
    """A message with no fields (``google/protobuf/empty.proto``); encodes to ``b""``."""


@message(full_name=f"{_PKG}.FieldMask")
class FieldMask:
    """A set of symbolic field paths (``google/protobuf/field_mask.proto``).

    Attributes:
        paths: the field paths, e.g. ``("user.display_name",)``
            (``repeated string``, field 1).
    """

    paths: tuple[str, ...] = field(1, "string", repeated=True)


@message(full_name=f"{_PKG}.Any")
class Any:
    """A message of any type with its type URL (``google/protobuf/any.proto``).

    Attributes:
        type_url: identifies the packed message's type, e.g.
            ``"type.googleapis.com/google.protobuf.Duration"`` (``string``, field 1).
        value: the packed message's encoding (``bytes``, field 2).
    """

    type_url: str = field(1, "string")
    value: bytes = field(2, "bytes")


class NullValue(enum.IntEnum):
    """The single value of the ``null`` of JSON (``google/protobuf/struct.proto``)."""

    NULL_VALUE = 0


@message(full_name=f"{_PKG}.Struct")
class Struct:
    """A JSON object (``google/protobuf/struct.proto``).

    Attributes:
        fields: the object's members (``map<string, Value>``, field 1).
    """

    fields: Mapping[str, Value] = map_field(1, "string", "Value")


@message(full_name=f"{_PKG}.Value")
class Value:
    """A JSON value (``google/protobuf/struct.proto``).

    Attributes:
        kind: the oneof ``kind``, a :class:`pbj.OneOf` naming one member, or
            ``None`` (no member set): ``null_value`` (:class:`NullValue`,
            field 1), ``number_value`` (``double``, 2), ``string_value``
            (``string``, 3), ``bool_value`` (``bool``, 4), ``struct_value``
            (:class:`Struct`, 5) or ``list_value`` (:class:`ListValue`, 6).
    """

    kind: OneOf | None = oneof(
        null_value=(1, NullValue),
        number_value=(2, "double"),
        string_value=(3, "string"),
        bool_value=(4, "bool"),
        struct_value=(5, "Struct"),
        list_value=(6, "ListValue"),
    )


@message(full_name=f"{_PKG}.ListValue")
class ListValue:
    """A JSON array (``google/protobuf/struct.proto``).

    Attributes:
        values: the array's elements (``repeated Value``, field 1).
    """

    values: tuple[Value, ...] = field(1, "Value", repeated=True)


#: Every well-known message class (and the enum ``NullValue``), by protobuf full name.
WELL_KNOWN: dict[str, type] = {
    **{info(cls).full_name: cls
       for cls in (Timestamp, Duration, DoubleValue, FloatValue, Int64Value, UInt64Value,
                   Int32Value, UInt32Value, BoolValue, StringValue, BytesValue, Empty,
                   FieldMask, Any, Struct, Value, ListValue)},
    f"{_PKG}.NullValue": NullValue,
}
