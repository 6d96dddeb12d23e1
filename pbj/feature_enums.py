"""The six enums of ``google.protobuf.FeatureSet`` (descriptor.proto), and the open-enum base.

protobuf.dev "Feature Settings for Editions": ``field_presence``, ``enum_type``,
``repeated_field_encoding``, ``utf8_validation``, ``message_encoding`` and
``json_format``. They sit below :mod:`pbj.schema`, which resolves the features
of a hand-declared class (:mod:`pbj.schema.declared_features`), below
:mod:`pbj.features` and :mod:`pbj.feature_rules`, which resolve and check
them, and below :mod:`pbj.descriptor`, which declares ``FeatureSet`` with
them and names them too (``pbj.descriptor.FieldPresence`` is the same class).
"""

from __future__ import annotations

import enum

__all__ = ["OpenEnum", "FieldPresence", "EnumType", "RepeatedFieldEncoding", "Utf8Validation", "MessageEncoding",
           "JsonFormat"]


class OpenEnum(enum.IntEnum):
    """The base of descriptor.proto's enums: open, although descriptor.proto is proto2 (whose enums
    are closed, see :mod:`pbj.schema.field_rules`), so a number a newer protoc writes is read as
    a plain ``int`` that the loader can name in its error (``edition 99997 is not supported``)
    rather than hidden among the unknown fields."""

    __pbj_closed__ = False


class FieldPresence(OpenEnum):
    """``FeatureSet.FieldPresence``: whether singular fields track presence."""

    FIELD_PRESENCE_UNKNOWN = 0
    EXPLICIT = 1
    IMPLICIT = 2
    LEGACY_REQUIRED = 3


class EnumType(OpenEnum):
    """``FeatureSet.EnumType``: open or closed enums."""

    ENUM_TYPE_UNKNOWN = 0
    OPEN = 1
    CLOSED = 2


class RepeatedFieldEncoding(OpenEnum):
    """``FeatureSet.RepeatedFieldEncoding``: packed or expanded repeated scalars."""

    REPEATED_FIELD_ENCODING_UNKNOWN = 0
    PACKED = 1
    EXPANDED = 2


class Utf8Validation(OpenEnum):
    """``FeatureSet.Utf8Validation``."""

    UTF8_VALIDATION_UNKNOWN = 0
    VERIFY = 2
    NONE = 3


class MessageEncoding(OpenEnum):
    """``FeatureSet.MessageEncoding``: ``DELIMITED`` is the group encoding."""

    MESSAGE_ENCODING_UNKNOWN = 0
    LENGTH_PREFIXED = 1
    DELIMITED = 2


class JsonFormat(OpenEnum):
    """``FeatureSet.JsonFormat``."""

    JSON_FORMAT_UNKNOWN = 0
    ALLOW = 1
    LEGACY_BEST_EFFORT = 2
