"""The field specifiers ``pbj.field``, ``pbj.map_field`` and ``pbj.oneof``.

Each leaves a :class:`FieldSpec` marker as the default value of an annotated
attribute in the class body; ``@pbj.message`` reads the markers, checks them
and turns them into attrs fields. To type checkers the specifiers return
``Any``: a field then simply has a default (every protobuf field is optional
in the constructor) and its type is the attribute's annotation (PEP 681).
"""

from __future__ import annotations

from typing import Any

from pbj.record import ValueRecord

__all__ = ["FieldSpec", "MISSING", "field", "map_field", "oneof"]

#: Marks "no value given" (a proto2 default that was not declared).
MISSING: Any = object()


class FieldSpec(ValueRecord):
    """What ``pbj.field``/``map_field``/``oneof`` leave in the class body (``utf8``: the loader's
    resolved ``utf8_validation``; ``None``: the class's rules decide)."""

    # the order of repr and __init__, not sorted
    __slots__ = (  # noqa: RUF023
        "number", "type", "repeated", "packed", "optional", "map_key", "map_value", "members", "json_name",
        "proto_name", "default", "group", "required", "features", "utf8")

    def __init__(self, number: int | None, type: Any, repeated: bool = False, packed: bool | None = None,
                 optional: bool = False, map_key: str | None = None, map_value: Any = None,
                 members: dict[str, tuple[Any, ...]] | None = None, json_name: str | None = None,
                 proto_name: str | None = None, default: Any = MISSING, group: bool = False, required: bool = False,
                 features: dict[str, Any] | None = None, utf8: bool | None = None) -> None:
        self.number = number
        self.type = type
        self.repeated = repeated
        self.packed = packed
        self.optional = optional
        self.map_key = map_key
        self.map_value = map_value
        self.members = members
        self.json_name = json_name
        self.proto_name = proto_name
        self.default = default
        self.group = group
        self.required = required
        self.features = features
        self.utf8 = utf8


def field(number: int, type: Any, *, repeated: bool = False, packed: bool | None = None,
          optional: bool = False, json_name: str | None = None, name: str | None = None,
          default: Any = MISSING, group: bool = False, required: bool = False,
          features: dict[str, Any] | None = None) -> Any:
    """Declare a message field (as the default value of an annotated attribute).

    Args:
        number: the field number, 1 to 2**29-1, not 19000-19999
            ("Assigning Field Numbers").
        type: a scalar type name (``"int32"``, ``"string"`` …), an
            ``enum.IntEnum`` class, a ``@pbj.message`` class, or a forward
            reference to a message class (for recursive and mutually recursive
            messages): its name as a string (looked up in the class's module)
            or a zero-argument callable returning it.
        repeated: a repeated field; the value is a tuple (lists are converted).
        packed: write a repeated scalar packed (default: ``True`` as proto3
            does, ``False`` in a ``syntax="proto2"`` class as proto2 does, the
            class's ``repeated_field_encoding`` under an edition; "Packed
            Repeated Fields"); ``False`` writes one tag per element.
        optional: explicit presence: the value is ``None`` when absent and a set
            zero is written ("Field Presence"). Message fields always have it.
        json_name: the ProtoJSON name; default lowerCamelCase of ``name``.
        name: the field's name in the ``.proto`` schema, when it differs from
            the attribute (a Python keyword such as ``from`` is declared as
            ``from_`` with ``name="from"``).
        default: the declared default ("Language Guide (proto2)", "Default
            Values"): the attribute reads it while the field is unset
            (``pbj.has`` tells presence). Needs explicit presence
            (``optional=True`` or ``required=True``, or editions
            ``EXPLICIT``); a singular scalar or enum field only. A ``float``
            field's is rounded to float32, as the field holds it.
        group: proto2 group encoding for a message field.
        required: proto2 ``required``.
        features: editions feature settings of this field (feature name ->
            value, e.g. ``{"utf8_validation": "NONE"}``), overriding its
            message's; the class needs ``@pbj.message(edition=...)``
            (:mod:`pbj.schema.declared_features`).

    Returns:
        A marker that ``@pbj.message`` turns into an attrs field (typed ``Any``).
    """
    return FieldSpec(number, type, repeated=repeated, packed=packed, optional=optional,
                     json_name=json_name, proto_name=name, default=default, group=group,
                     required=required, features=features)


def map_field(number: int, key: str, value: Any, *, json_name: str | None = None,
              name: str | None = None, features: dict[str, Any] | None = None) -> Any:
    """Declare a map field ("Maps"); the value is a :class:`~pbj.schema.FrozenMap`.

    Args:
        number: the field number.
        key: the key type: any integral scalar type, ``"bool"`` or ``"string"``.
        value: the value type: a scalar type name, an enum or a message class
            (or a forward reference to one, as for :func:`field`).
        json_name, name, features: as for :func:`field` (of the features, only
            ``utf8_validation`` applies to a map: to its string key and value).

    Returns:
        A marker that ``@pbj.message`` turns into an attrs field (typed ``Any``).
    """
    return FieldSpec(number, "map", map_key=key, map_value=value, json_name=json_name,
                     proto_name=name, features=features)


def oneof(**members: tuple[Any, ...]) -> Any:
    """Declare a oneof: one attribute holding a :class:`~pbj.schema.OneOf` or ``None``.

    Each keyword names a member and gives ``(number, type)`` or
    ``(number, type, {"json_name": ..., "name": ..., "group": ..., "default": ..., "features": ...})``::

        data: pbj.OneOf | None = pbj.oneof(transfer=(14, Transfer), memo=(15, "string"))

    Members may not be repeated or maps ("Oneof").

    Returns:
        A marker that ``@pbj.message`` turns into an attrs field (typed ``Any``).
    """
    return FieldSpec(None, "oneof", members=members)
