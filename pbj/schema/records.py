"""The schema records of a message class: :class:`FieldInfo`, :class:`OneofInfo`, :class:`MessageInfo`.

``@pbj.message`` (and the loader through it) builds one :class:`MessageInfo` per
class and keeps it in the class's ``__pbj_info__``; the codec compiler, ProtoJSON,
the construction checks and the tools read the schema from it only.
"""

from __future__ import annotations

import enum
import weakref
from typing import Any

import attrs

__all__ = ["FieldInfo", "OneofInfo", "MessageInfo", "json_name_of", "is_message", "enum_default"]


@attrs.define(eq=False)
class FieldInfo:
    """The schema of one field (or one oneof member) of a message.

    Attributes:
        name: the Python attribute name (for a oneof member: the member name).
        number: the field number, 1 to 2**29-1.
        type: a scalar type name (``"int32"`` …), an ``enum.IntEnum`` class or a
            message class; a forward reference to a message (its name or a
            callable) is resolved on first use.
        proto_name: the field's name in the ``.proto`` schema.
        json_name: its ProtoJSON name (lowerCamelCase unless declared).
        repeated: a repeated field (stored as a tuple).
        packed: for repeated scalars, whether it is written packed.
        optional: explicit presence (``None`` when absent).
        map_key, map_value: for a map field, the key type (a scalar name) and
            the value type (like ``type``); ``type`` is then ``"map"``.
        oneof: the name of the oneof attribute holding this member, or ``None``.
        default: the declared default (proto2), or ``None``.
        group: proto2 group encoding (wire types 3/4) for a message field.
        required: proto2 ``required``.
        utf8: for a ``string`` field (a map's string key or value too): its
            values must be valid UTF-8 (``utf8_validation = VERIFY``, proto3's
            rule). ``False`` (proto2 strings, ``utf8_validation = NONE``): any
            bytes are kept, invalid UTF-8 as ``surrogateescape`` characters.
    """

    name: str
    number: int
    type: Any
    proto_name: str = ""
    json_name: str = ""
    repeated: bool = False
    packed: bool = False
    optional: bool = False
    map_key: str | None = None
    map_value: Any = None
    oneof: str | None = None
    default: Any = None
    group: bool = False
    required: bool = False
    utf8: bool = True

    @property
    def is_map(self) -> bool:
        """True for a map field."""
        return self.map_key is not None

    @property
    def kind(self) -> str:
        """``"map"``, ``"message"``, ``"enum"`` or ``"scalar"``."""
        if self.map_key is not None:
            return "map"
        t = self.type
        if isinstance(t, str):
            return "scalar"
        if isinstance(t, type) and issubclass(t, enum.IntEnum):
            return "enum"
        return "message"


@attrs.define(eq=False)
class OneofInfo:
    """A oneof: the attribute ``name`` holds a :class:`~pbj.schema.OneOf` or ``None``.

    Attributes:
        name: the attribute name.
        members: the member fields, in declaration order.
    """

    name: str
    members: list[FieldInfo]


@attrs.define(eq=False)
class MessageInfo:
    """The schema of a message class, kept in its ``__pbj_info__``.

    Attributes:
        cls: the message class.
        full_name: the protobuf full name (``package.Message``), or the Python
            qualified name for a hand-declared class.
        fields: regular fields (not oneof members), in field-number order.
        oneofs: the oneofs, in declaration order.
        attr_order: attribute names in declaration order.
        syntax: ``"proto3"`` or ``"proto2"``.
        map_entry: the class is a map entry (loader only).
        message_set: proto2 ``message_set_wire_format``.
        reserved_names: the schema's ``reserved`` field names (loader only;
            the text format skips them).
        extension_ranges: the ``extensions`` ranges, as ``(start, end)``
            pairs, end exclusive, ascending (protobuf.dev "Language Guide
            (proto2)", "Extensions"); empty for a class that has none.
        extensions: the registry of the extensions declared for this class,
            field number -> :class:`pbj.extensions.Extension`; the parser
            reads the extensions registered here when it decodes the class.
        resolved: the forward references have been resolved (see
            :func:`pbj.schema.resolve`).
    """

    cls: Any
    full_name: str
    fields: list[FieldInfo]
    oneofs: list[OneofInfo]
    attr_order: list[str]
    syntax: str = "proto3"
    map_entry: bool = False
    message_set: bool = False
    resolved: bool = False
    reserved_names: frozenset = frozenset()
    extension_ranges: tuple[tuple[int, int], ...] = ()
    extensions: dict[int, Any] = attrs.Factory(dict)

    def all_fields(self) -> list[FieldInfo]:
        """Every field and oneof member, in field-number order."""
        out = list(self.fields)
        for o in self.oneofs:
            out.extend(o.members)
        return sorted(out, key=lambda f: f.number)


def json_name_of(proto_name: str) -> str:
    """The default ProtoJSON name of a field: lowerCamelCase, as protoc makes it.

    Underscores are dropped and the letter after each is upper-cased
    ("ProtoJSON Format": "the field name is converted to lowerCamelCase").
    """
    if "_" not in proto_name:
        return proto_name
    head, *rest = proto_name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def is_message(obj: Any) -> bool:
    """True if ``obj`` is a pbj message class or instance."""
    return getattr(obj, "__pbj_info__", None) is not None


def namespace_of(owner: Any) -> Any:
    """The :class:`pbj.Namespace` a loaded class, enum or service came from, or None (declared in
    Python, or an enum whose load has gone).

    A message class and a service hold their namespace; an enum holds it weakly (an enum member
    lives on in places that outlive a load, and must not keep the load's classes alive with it).
    """
    ns = owner.__dict__.get("__pbj_namespace__") if isinstance(owner, type) else getattr(owner, "__pbj_namespace__",
                                                                                             None)
    return ns() if isinstance(ns, weakref.ref) else ns


def enum_default(enum_cls: Any) -> Any:
    """The default of an enum field: its member numbered 0, else its first member (proto2)."""
    try:
        return enum_cls(0)
    except ValueError:
        return next(iter(enum_cls))
