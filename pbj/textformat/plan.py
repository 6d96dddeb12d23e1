"""What the text format needs to know about a message class, worked out once per class.

:func:`message_plan` reads a class's schema (:func:`pbj.schema.info`, nothing
else) and returns a :class:`MessagePlan`: its fields in field-number order
with the name each is written under, how its presence is decided, and the
names the parser accepts for it. The printer and the parser both use it, so
the two agree on every name.

Field names (protobuf.dev "Text Format Language Specification", "Field
Names" and "group Fields"): a field is written under its ``.proto`` name.
A *group-like* field (a proto2 ``group``, or an editions ``DELIMITED``
message field whose name is its type's name in lower case and whose type is
declared beside it) is written under its type's name (``Data``, ``MultiWordGroupField``),
and both spellings are read, as C++ does.
"""

from __future__ import annotations

import enum
from functools import cache

from pbj.schema import FieldInfo, info, is_message

__all__ = ["FieldPlan", "MessagePlan", "message_plan", "EnumPlan", "enum_plan", "ANY_FULL_NAME"]

ANY_FULL_NAME = "google.protobuf.Any"


class EnumPlan:
    """An enum class as the text format sees it.

    Attributes:
        cls: the ``enum.IntEnum`` class.
        by_name: every member by its schema name, aliases included (the loader lists
            the names it had to change in the class's ``__pbj_proto_names__``).
        by_number: the first member of each number.
        names: number -> the schema name of its first member, as printed.
        closed: a closed enum (proto2, editions ``CLOSED``): numbers that are
            not members are refused when parsing.
        name: the class name, for messages.
    """

    __slots__ = ("by_name", "by_number", "closed", "cls", "name", "names")

    def __init__(self, cls: type[enum.IntEnum]) -> None:
        self.cls = cls
        schema = getattr(cls, "__pbj_proto_names__", {})  # member -> schema name, where they differ (loader)
        self.by_name = {schema.get(k, k): m for k, m in cls.__members__.items()}
        self.by_number = {int(m): m for m in cls}
        self.names = {int(m): schema.get(m.name, m.name) for m in cls}
        self.closed = bool(getattr(cls, "__pbj_closed__", False))
        self.name = cls.__qualname__


@cache
def enum_plan(cls: type[enum.IntEnum]) -> EnumPlan:
    """The (cached) :class:`EnumPlan` of an enum class."""
    return EnumPlan(cls)


class FieldPlan:
    """One field (or oneof member) of a message, for printing and parsing.

    Attributes:
        info: the field's :class:`pbj.FieldInfo`.
        attr: the attribute holding it (for a oneof member: the oneof's attribute).
        member: for a oneof member, its name (``OneOf.which``); else ``None``.
        number: the field number.
        name: the name it is written under (the ``.proto`` name, or the type
            name of a group-like field).
        kind: ``"scalar"``, ``"enum"``, ``"message"`` or ``"map"``.
        scalar: for scalars, the type name (``"int32"`` …); for maps, the value's.
        enum: for enums (and maps of enums), the :class:`EnumPlan`.
        message: for messages (and maps of messages), the class.
        key: for maps, the key's scalar type name.
        repeated: a repeated field or a map.
        presence: ``"explicit"`` (``None`` when absent, or a oneof member),
            ``"implicit"`` (absent at its zero value) or ``"repeated"``.
        required: proto2 ``required``.
        path: the name an error's field path gives it (the attribute, a oneof
            member's name, an extension's ``[full_name]`` as ProtoJSON's path does).
    """

    __slots__ = ("attr", "enum", "info", "key", "kind", "member", "message", "name", "number", "path",
                 "presence", "repeated", "required", "scalar", "value_kind")

    def __init__(self, f: FieldInfo, owner_full_name: str) -> None:
        self.info = f
        self.attr = f.oneof or f.name
        self.member = f.name if f.oneof else None
        self.path = f.name
        self.number = f.number
        self.required = f.required
        self.repeated = f.repeated
        # Which of these is set follows value_kind (and kind "map" for key): the readers narrow on it.
        self.enum: EnumPlan | None = None
        self.message: type | None = None
        self.scalar: str | None = None
        self.key: str | None = f.map_key
        proto_name = f.proto_name or f.name
        t = f.map_value if f.is_map else f.type
        if isinstance(t, str):
            self.value_kind = "scalar"
            self.scalar = t
        elif isinstance(t, type) and issubclass(t, enum.IntEnum):
            self.value_kind = "enum"
            self.enum = enum_plan(t)
        else:
            self.value_kind = "message"
            self.message = t
        self.kind = "map" if f.is_map else self.value_kind
        self.name = proto_name
        if f.group and self.message is not None and is_group_like(proto_name, self.message, owner_full_name):
            self.name = info(self.message).full_name.rpartition(".")[2]
        if f.repeated:
            self.presence = "repeated"
        elif f.optional or f.oneof is not None:
            self.presence = "explicit"
        else:
            self.presence = "implicit"


def is_group_like(proto_name: str, message_cls: type, scope: str) -> bool:
    """Whether a delimited field is written under its type's name (C++ ``IsGroupLike``).

    Args:
        proto_name: the field's ``.proto`` name.
        message_cls: its message class.
        scope: the full name of the message (or, for an extension, the scope)
            that declares the field.
    """
    type_name = info(message_cls).full_name
    parent, _, short = type_name.rpartition(".")
    return short.lower() == proto_name and parent == scope


class MessagePlan:
    """A message class as the text format sees it.

    Attributes:
        cls: the class.
        full_name: its protobuf full name.
        fields: the regular fields (not oneof members), in field-number order.
        oneofs: oneof attribute name -> {member name: :class:`FieldPlan`}.
        by_name: every name the parser accepts -> :class:`FieldPlan` (oneof
            members included).
        required: the attribute names of proto2 ``required`` fields.
        reserved: reserved field names, skipped when parsing
            (``MessageInfo.reserved_names``).
        is_any: the class is ``google.protobuf.Any``.
    """

    __slots__ = ("by_name", "cls", "fields", "full_name", "is_any", "oneofs", "required", "reserved")

    def __init__(self, cls: type) -> None:
        mi = info(cls)
        self.cls = cls
        self.full_name = mi.full_name
        self.fields = [FieldPlan(f, mi.full_name) for f in mi.fields]
        self.oneofs: dict[str, dict[str, FieldPlan]] = {
            o.name: {m.name: FieldPlan(m, mi.full_name) for m in o.members} for o in mi.oneofs}
        self.by_name: dict[str, FieldPlan] = {}
        every = [*self.fields, *(p for members in self.oneofs.values() for p in members.values())]
        for p in every:
            proto_name = p.info.proto_name or p.info.name
            self.by_name[proto_name] = p
        for p in every:  # a group-like field is also read under its type's name
            self.by_name.setdefault(p.name, p)
        self.required = tuple(p.attr for p in self.fields if p.required)
        self.reserved = mi.reserved_names
        self.is_any = mi.full_name == ANY_FULL_NAME


@cache
def message_plan(cls: type) -> MessagePlan:
    """The (cached) :class:`MessagePlan` of a message class.

    Raises:
        TypeError: ``cls`` is not a pbj message class.
        SchemaError: a forward reference of the class cannot be resolved.
    """
    if not is_message(cls):
        raise TypeError(f"{cls!r} is not a pbj message class")
    return MessagePlan(cls)
