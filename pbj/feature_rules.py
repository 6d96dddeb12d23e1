"""protoc's rules for editions features and the legacy syntaxes, as data: each check returns the error text.

:mod:`pbj.features` resolves features and raises :class:`pbj.SchemaError`
with these texts (protoc's own words, so a user who knows protoc recognises
them), naming the file, the message and the field. Each function returns
``None`` when the rule holds.

Sources: descriptor.proto (the ``targets`` of each ``FeatureSet`` field),
protobuf.dev "Feature Settings for Editions" (what each feature applies to),
"Language Guide (proto3)" (no required fields, groups, defaults or closed
enums) and "Field Presence"; the texts are protoc's.
"""

from __future__ import annotations

from typing import Any

from pbj.feature_enums import FieldPresence, RepeatedFieldEncoding

__all__ = ["TARGETS", "NOT_PACKABLE", "target_error", "editions_field_error", "proto3_field_error",
           "packed_option_error", "presence_error"]

_IMPLICIT, _REQUIRED = FieldPresence.IMPLICIT, FieldPresence.LEGACY_REQUIRED
_PACKED = RepeatedFieldEncoding.PACKED
# FieldDescriptorProto.Type and .Label numbers (descriptor.proto).
_GROUP, _MESSAGE, _STRING, _BYTES = 10, 11, 9, 12
_LABEL_REQUIRED = 2

#: The element kinds that may set each of the six features (descriptor.proto, ``targets``), by
#: protoc's name of the kind.
_FIELD_TARGETS = frozenset({"field_presence", "repeated_field_encoding", "utf8_validation", "message_encoding"})
TARGETS: dict[str, frozenset[str]] = {
    "file": frozenset({"field_presence", "enum_type", "repeated_field_encoding", "utf8_validation",
                       "message_encoding", "json_format"}),
    "message": frozenset({"json_format"}),
    "enum": frozenset({"enum_type", "json_format"}),
    "field": _FIELD_TARGETS,
    "extension": _FIELD_TARGETS,
    "oneof": frozenset(), "enum entry": frozenset(), "service": frozenset(), "method": frozenset(),
    "extension range": frozenset(),
}
#: Field types that are never packed: only repeated scalars (numbers, bools, enums) can be ("Encoding", Packed).
NOT_PACKABLE = frozenset({_STRING, _BYTES, _GROUP, _MESSAGE})


def target_error(feature: str, kind: str) -> str | None:
    """``feature`` set on an element of ``kind`` (``"message"``, ``"enum entry"`` …) its targets exclude."""
    if feature in TARGETS[kind]:
        return None
    return f"Option google.protobuf.FeatureSet.{feature} cannot be set on an entity of type `{kind}`."


def editions_field_error(fdp: Any, own: Any, t: int | None, repeated: bool, in_oneof: bool, is_ext: bool,
                         is_map: bool, in_map_entry: bool) -> str | None:
    """A field of an editions file: legacy options, and the features it sets itself where they cannot apply.

    Args:
        fdp: the ``FieldDescriptorProto``.
        own: the ``FeatureSet`` of its own options, or ``None``.
        t: its type number; ``repeated``, ``in_oneof``, ``is_ext``, ``is_map``:
            what the field is; ``in_map_entry``: a ``key`` or ``value`` of a
            map entry (protoc copies the map field's features there: not checked).
    """
    if fdp.options is not None and fdp.options.packed is not None:
        return ("Field option packed is not allowed under editions.  Use the repeated_field_encoding feature "
                "to control this behavior.")
    if fdp.label == _LABEL_REQUIRED:
        return "Required label is not allowed under editions.  Use the field_presence feature to control this behavior."
    if own is None or in_map_entry:
        return None
    if own.field_presence is not None:
        if in_oneof:
            return "Oneof fields can't specify field presence."
        if repeated:
            return "Repeated fields can't specify field presence."
        if is_ext and own.field_presence != _REQUIRED:
            return "Extensions can't specify field presence."
        if t in (_MESSAGE, _GROUP) and own.field_presence == _IMPLICIT:
            return "Message fields can't specify implicit presence."
    if own.repeated_field_encoding is not None:
        if not repeated:
            return "Only repeated fields can specify repeated field encoding."
        if own.repeated_field_encoding == _PACKED and t in NOT_PACKABLE:
            return "Only repeated primitive fields can specify PACKED repeated field encoding."
    if own.utf8_validation is not None and t != _STRING and not is_map:
        return "Only string fields can specify utf8 validation."
    if own.message_encoding is not None and (t not in (_MESSAGE, _GROUP) or is_map):
        return "Only message fields can specify message encoding."
    return None


def proto3_field_error(fdp: Any, t: int | None, closed_enum: str | None, owner: str) -> str | None:
    """A field of a proto3 file: no ``required``, no groups, no defaults, no closed enum (``closed_enum``: its name)."""
    if fdp.label == _LABEL_REQUIRED:
        return "Required fields are not allowed in proto3."
    if t == _GROUP:
        return "Groups are not supported in proto3 syntax."
    if fdp.default_value is not None:
        return "Explicit default values are not allowed in proto3."
    if closed_enum is not None:
        return (f'Enum type "{closed_enum}" is not an open enum, but is used in "{owner}" '
                "which is a proto3 message type.")
    return None


def packed_option_error(packed: bool | None, repeated: bool, t: int | None) -> str | None:
    """``[packed = true]`` (proto2, proto3) on a field that cannot be packed."""
    if packed and (not repeated or t in NOT_PACKABLE):
        return "[packed = true] can only be specified for repeated primitive fields."
    return None


def presence_error(presence: FieldPresence, repeated: bool, closed_enum: bool, has_default: bool, is_ext: bool,
                   map_enum_first: int | None) -> str | None:
    """The presence that applies to a field against its enum, default and kind ("Field Presence").

    Args:
        presence: the presence that applies (``IMPLICIT`` for a field without presence).
        repeated: a repeated field (no presence, so none of the implicit rules).
        closed_enum: the field's type is a closed enum.
        has_default: the field declares a default.
        is_ext: an extension.
        map_enum_first: for the ``value`` of a map entry of an enum type, the
            number of the enum's first value; else ``None``.
    """
    if presence == _IMPLICIT and not repeated:
        if closed_enum:
            return "Implicit presence enum fields must always be open."
        if has_default:
            return "Implicit presence fields can't specify defaults."
    if map_enum_first not in (0, None):
        return "Enum value in map must define 0 as the first value."
    if is_ext and presence == _REQUIRED:
        return "Extensions can't be required."
    return None
