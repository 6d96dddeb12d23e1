"""Editions features of hand-declared classes: ``@pbj.message(edition=..., features=...)``.

protobuf.dev "Feature Settings for Editions": a feature is resolved from the
edition's defaults, overridden by the message's ``features``, then by the
field's (``pbj.field(..., features=...)``, a oneof member's ``"features"``
option). The loader resolves them from descriptors (:mod:`pbj.features`);
this module does the same for a class declared in Python, so a hand-declared
class with features behaves (and encodes) as the class loaded from the same
``.proto`` file:

* ``field_presence``: ``EXPLICIT`` (``None`` when unset, a set zero is
  written), ``IMPLICIT`` (not for message fields) or ``LEGACY_REQUIRED``;
* ``repeated_field_encoding``: ``PACKED`` or ``EXPANDED`` (repeated scalars);
* ``utf8_validation``: ``VERIFY`` or ``NONE`` (``string`` fields, maps with a
  string key or value);
* ``message_encoding``: ``LENGTH_PREFIXED`` or ``DELIMITED`` (the group
  encoding, for message fields that are not maps);
* ``json_format``: accepted (``ALLOW``, ``LEGACY_BEST_EFFORT``); it changes
  nothing in pbj, for loaded classes neither;
* ``enum_type`` is a feature of the enum, not of a message or field: a closed
  enum is declared with :func:`enum_features` (``@pbj.enum_features(enum_type="CLOSED")``).

A value is the feature enum's member (:mod:`pbj.feature_enums`'
``FieldPresence`` …, also named in :mod:`pbj.descriptor`) or its name. The legacy keywords of ``pbj.field``
(``optional``, ``required``, ``packed``, ``group``) still apply and say the
same thing; a keyword that contradicts the field's resolved features is a
:class:`~pbj.errors.SchemaError`.
"""

from __future__ import annotations

import enum
from typing import Any, TypeVar

from pbj.errors import SchemaError
from pbj.feature_enums import (
    EnumType,
    FieldPresence,
    JsonFormat,
    MessageEncoding,
    RepeatedFieldEncoding,
    Utf8Validation,
)
from pbj.features import E2023, E2024, EDITION_DEFAULTS, PROTO2, PROTO3, Features

__all__ = ["message_features", "field_features", "enum_features", "EDITIONS"]

E = TypeVar("E", bound=type)

#: Edition names a hand-declared class may give -> edition number (descriptor.proto ``Edition``).
EDITIONS = {"proto2": PROTO2, "proto3": PROTO3, "2023": E2023, "2024": E2024}

_KINDS: dict[str, type[enum.IntEnum]] = {
    "field_presence": FieldPresence, "repeated_field_encoding": RepeatedFieldEncoding,
    "utf8_validation": Utf8Validation, "message_encoding": MessageEncoding, "json_format": JsonFormat,
}


def _value(kind: type[enum.IntEnum], name: str, value: Any, cls_name: str, fname: str | None) -> Any:
    if isinstance(value, kind) and value != 0:
        return value
    if isinstance(value, str) and value in kind.__members__ and kind[value] != 0:
        return kind[value]
    names = [m for m in kind.__members__ if kind[m] != 0]
    raise SchemaError(f"feature {name} must be one of {names}, got {value!r}", cls_name=cls_name, field_name=fname)


def _merge(base: Features, features: dict[str, Any] | None, cls_name: str, fname: str | None) -> Features:
    if not features:
        return base
    if not isinstance(features, dict):
        raise SchemaError(f"features must be a dict of feature name -> value, got {features!r}",
                          cls_name=cls_name, field_name=fname)
    changes = {}
    for name, value in features.items():
        if name == "enum_type":
            raise SchemaError("enum_type is a feature of the enum: declare the enum with "
                              "@pbj.enum_features(enum_type=...)", cls_name=cls_name, field_name=fname)
        kind = _KINDS.get(name)
        if kind is None:
            raise SchemaError(f"unknown feature {name!r} (features: {sorted(_KINDS)})", cls_name=cls_name,
                              field_name=fname)
        changes[name] = _value(kind, name, value, cls_name, fname)
    return base._replace(**changes)


def message_features(edition: str | int | None, features: dict[str, Any] | None, syntax: str,
                     cls_name: str) -> Features:
    """The features a hand-declared message gives its fields.

    Args:
        edition: ``"2023"``, ``"2024"`` (or the edition number), or ``None`` for
            the legacy rules of ``syntax``.
        features: the message's feature settings, or ``None``.
        syntax: the message's ``syntax`` (``"proto2"``, ``"proto3"``, ``"editions"``).
        cls_name: for errors.

    Returns:
        The edition's defaults overridden by ``features``.

    Raises:
        SchemaError: an unknown edition, an unknown feature or value, features
            without an edition (proto2 and proto3 cannot set features, as protoc says).
    """
    if edition is None:
        if features:
            raise SchemaError("features need an edition (edition=\"2023\"): proto2 and proto3 cannot set them",
                              cls_name=cls_name)
        return EDITION_DEFAULTS[PROTO2 if syntax == "proto2" else PROTO3]
    number = EDITIONS.get(str(edition)) if not isinstance(edition, int) else edition
    if number not in EDITION_DEFAULTS or number in (PROTO2, PROTO3):
        raise SchemaError(f"edition {edition!r} is not supported (use one of '2023', '2024')", cls_name=cls_name)
    return _merge(EDITION_DEFAULTS[number], features, cls_name, None)


def field_features(base: Features, features: dict[str, Any] | None, cls_name: str, fname: str,
                   editions: bool) -> Features:
    """A field's features: its message's, overridden by its own ``features``.

    Raises:
        SchemaError: features on a field of a class without an edition, an unknown feature or value.
    """
    if features and not editions:
        raise SchemaError("features need an edition: declare the class with @pbj.message(edition=\"2023\")",
                          cls_name=cls_name, field_name=fname)
    return _merge(base, features, cls_name, fname)


def enum_features(enum_cls: E | None = None, /, *, enum_type: Any = "OPEN") -> Any:
    """Declare an enum's ``enum_type`` feature ("Feature Settings for Editions", ``enum_type``).

    ``@pbj.enum_features(enum_type="CLOSED")`` on an ``enum.IntEnum`` makes it
    closed, as proto2 enums are: a field of it accepts its members only, and
    the parser keeps a number it does not list as an unknown field ("Enum
    Behavior"). ``"OPEN"`` (the default, proto3's rule) keeps such a number
    as a plain ``int``.

    Args:
        enum_cls: the enum (when used without arguments, or called directly).
        enum_type: ``"OPEN"``, ``"CLOSED"`` or an :class:`pbj.descriptor.EnumType` member.

    Returns:
        The enum itself (or a decorator).

    Raises:
        SchemaError: not an ``IntEnum``, or an unknown ``enum_type``; an open enum
            whose first value is not zero (protobuf's rule for open enums).
    """
    value = _value(EnumType, "enum_type", enum_type, "enum", None)

    def apply(cls: Any) -> Any:
        if not (isinstance(cls, type) and issubclass(cls, enum.IntEnum)):
            raise SchemaError(f"enum_features needs an enum.IntEnum, got {cls!r}", cls_name=repr(cls))
        first = next(iter(cls), None)
        if value == EnumType.OPEN and first is not None and int(first) != 0:
            raise SchemaError("the first value of an open enum must be zero", cls_name=cls.__qualname__)
        target: Any = cls  # the codec, the constructor, JSON and the text format read the mark
        target.__pbj_closed__ = value == EnumType.CLOSED
        return cls

    return apply if enum_cls is None else apply(enum_cls)
