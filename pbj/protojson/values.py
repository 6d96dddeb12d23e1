"""The function that writes or reads one value of a field's type, picked once per field.

A field's type is a scalar name (:mod:`pbj.protojson.scalar_forms`), an
``enum.IntEnum`` class or a message class; a message value goes through the
nested class's hook in the same converter, fetched on the first value so that
recursive messages need no special case.
"""

from __future__ import annotations

import enum
import math
from typing import Any

import cattrs

from pbj.protojson.scalar_forms import enum_reader, enum_writer, scalar_reader, scalar_writer
from pbj.scalars import SCALARS
from pbj.schema import FieldInfo, info, is_message

__all__ = ["Options", "is_message_class", "lazy_writer", "lazy_reader", "value_writer", "value_reader",
           "null_keeps", "is_zero", "VALUE"]

VALUE = "google.protobuf.Value"


class Options:
    """The options of one converter (see :func:`pbj.to_dict` and :func:`pbj.from_dict`)."""

    __slots__ = ("emit_defaults", "enums_as_numbers", "ignore_unknown", "proto_names")

    def __init__(self, emit_defaults=False, proto_names=False, enums_as_numbers=False, ignore_unknown=False):
        self.emit_defaults = emit_defaults
        self.proto_names = proto_names
        self.enums_as_numbers = enums_as_numbers
        self.ignore_unknown = ignore_unknown


def is_message_class(t: Any) -> bool:
    """True for a pbj message class (the predicate of the converters' hook factories)."""
    return isinstance(t, type) and is_message(t)


def lazy_writer(conv: cattrs.Converter, cls: type):
    """The unstructure hook of ``cls``, fetched from ``conv`` on the first call."""
    cell: list = []

    def write_nested(v: Any) -> Any:
        if not cell:
            cell.append(conv.get_unstructure_hook(cls))
        return cell[0](v)

    return write_nested


def lazy_reader(conv: cattrs.Converter, cls: type):
    """The structure hook of ``cls`` (as a one-argument function), fetched on the first call."""
    cell: list = []

    def read_nested(v: Any) -> Any:
        if not cell:
            cell.append(conv.get_structure_hook(cls))
        return cell[0](v, cls)

    return read_nested


def value_writer(t: Any, conv: cattrs.Converter, opts: Options):
    """The function writing one value of type ``t`` (scalar name, enum, message), or None for as-is."""
    if isinstance(t, str):
        return scalar_writer(t)
    if isinstance(t, type) and issubclass(t, enum.IntEnum):
        return enum_writer(t, opts.enums_as_numbers)
    return lazy_writer(conv, t)


def value_reader(t: Any, conv: cattrs.Converter, opts: Options):
    """The function reading one JSON value as type ``t``; it raises JSONError (path relative).

    An enum is closed ("Enum Behavior" on protobuf.dev: proto2, or editions with
    ``enum_type = CLOSED``) when the loader marked its class ``__pbj_closed__``;
    a closed enum rejects numbers that are not members.
    """
    if isinstance(t, str):
        return scalar_reader(t)
    if isinstance(t, type) and issubclass(t, enum.IntEnum):
        return enum_reader(t, bool(getattr(t, "__pbj_closed__", False)), opts.ignore_unknown)
    return lazy_reader(conv, t)


def null_keeps(t: Any) -> bool:
    """Whether JSON null is a value of type ``t`` (google.protobuf.Value, NullValue) rather than "unset"."""
    if isinstance(t, type) and issubclass(t, enum.IntEnum):
        return t.__name__ == "NullValue"
    return is_message_class(t) and info(t).full_name == VALUE


def is_zero(f: FieldInfo):
    """The test "this value is the field's default" (``-0.0`` is not: it is written)."""
    scalar = SCALARS.get(f.type) if isinstance(f.type, str) else None
    if scalar is not None and scalar.is_float:
        return lambda v: v == 0 and math.copysign(1.0, v) > 0
    return lambda v: not v
