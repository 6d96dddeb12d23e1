"""Fields of a loaded message: a descriptor's field becomes a ``pbj.field``, ``map_field`` or oneof member.

protobuf.dev "Language Guide" (proto2, proto3, editions), "Field Presence" and
"Encoding" decide each field's pbj declaration:

* ``repeated`` fields are tuples; repeated scalars are packed by default in
  proto3, unpacked in proto2, as ``repeated_field_encoding`` says in editions;
  ``[packed = ...]`` overrides either;
* a singular scalar has explicit presence (``None`` when absent) for proto3
  ``optional``, proto2 ``optional`` and editions ``EXPLICIT``; proto2
  ``required`` and editions ``LEGACY_REQUIRED`` fields are ``required``;
* a repeated field whose type is a map-entry message is a ``pbj.map_field``;
* groups (proto2) and ``DELIMITED`` message fields (editions) use the group encoding;
* ``string`` fields follow ``utf8_validation``: proto2's and ``NONE`` ones keep
  any bytes (:attr:`pbj.FieldInfo.utf8`);
* ``json_name`` and declared ``default`` values (proto2, editions ``EXPLICIT``)
  are kept on each field; the attribute of such a field gives the default when
  the field is unset (:mod:`pbj.schema.presence`).

Message types refer to each other through callables resolved on first use, so
recursive schemas load.
"""

from __future__ import annotations

from typing import Any

from pbj.descriptor import FieldPresence, Utf8Validation
from pbj.errors import SchemaError
from pbj.loader.declarations import field_type
from pbj.loader.index import SchemaIndex
from pbj.loader.names import _attr_name

__all__ = ["FieldBuilder"]

#: ``FieldDescriptorProto.Type`` number -> pbj scalar type name.
_SCALAR_TYPES = {
    1: "double", 2: "float", 3: "int64", 4: "uint64", 5: "int32", 6: "fixed64", 7: "fixed32",
    8: "bool", 9: "string", 12: "bytes", 13: "uint32", 15: "sfixed32", 16: "sfixed64",
    17: "sint32", 18: "sint64",
}
_TYPE_GROUP, _TYPE_MESSAGE, _TYPE_ENUM = 10, 11, 14
_LABEL_REPEATED = 3


class FieldBuilder:
    """Turns field descriptors into pbj field declarations, resolving type names in one load.

    Args:
        index: the load's descriptors.
        schema: the load (:class:`~pbj.loader.schema.LoadedSchema`): an enum type is its
            enum class, built now; a message type is a reference resolved on first use
            (:mod:`pbj.schema.resolve`), so building a class builds no other message class.
    """

    def __init__(self, index: SchemaIndex, schema: Any) -> None:
        self.index = index
        self.schema = schema
        self.known = schema.known

    def type_name(self, fdp: Any, owner: str) -> str:
        """The full name of a field's message or enum type (``type_name`` without the leading dot).

        Raises:
            SchemaError: the set defines no type of that name.
        """
        name = fdp.type_name or ""
        found = self.index.resolve_name(name, owner)
        if found is None:
            raise SchemaError(f"unknown type {name!r}", cls_name=owner, field_name=fdp.name)
        return found

    def features(self, fdp: Any, full: str) -> Any:
        """The resolved features of the field ``fdp`` of the message ``full``."""
        return self.schema.features.field(full, fdp.name, self.index.msg_desc[full][1])

    def type_record(self, fdp: Any, owner: str) -> Any:
        """The type of a field as a record says it (:mod:`pbj.loader.declarations`): a scalar's
        name, ``("enum", full name)`` or ``("message", full name)``.

        Raises:
            SchemaError: the type is unknown, not offered by the load, or a map entry.
        """
        t = fdp.type
        if t in _SCALAR_TYPES:
            return _SCALAR_TYPES[t]
        if t is None and fdp.type_name:
            target = self.type_name(fdp, owner)
            t = _TYPE_ENUM if target in self.index.enum_desc else _TYPE_MESSAGE
        if t == _TYPE_ENUM:
            target = self.type_name(fdp, owner)
            if target not in self.index.enum_desc or target not in self.schema:
                raise SchemaError(f"unknown enum type {fdp.type_name!r}", cls_name=owner, field_name=fdp.name)
            return ("enum", target)
        if t in (_TYPE_MESSAGE, _TYPE_GROUP):
            target = self.type_name(fdp, owner)
            if target not in self.index.msg_desc:
                raise SchemaError(f"unknown message type {fdp.type_name!r}", cls_name=owner,
                                  field_name=fdp.name)
            if target in self.index.map_entries:  # only a repeated message field of it is a map
                raise SchemaError(f"type {fdp.type_name!r} is a map entry, which only a map field can use",
                                  cls_name=owner, field_name=fdp.name)
            return ("message", target)
        raise SchemaError(f"unknown field type {t!r}", cls_name=owner, field_name=fdp.name)

    def field_type(self, fdp: Any, owner: str) -> Any:
        """The pbj type of a field: a scalar name, an enum class (built now) or a message reference."""
        return field_type(self.schema, self.type_record(fdp, owner))

    @staticmethod
    def check_field(fdp: Any, full: str) -> None:
        """Refuse a field descriptor without a name or a number (only a corrupt set has one)."""
        if not fdp.name:
            raise SchemaError("a field has no name", cls_name=full)
        if fdp.number is None:
            raise SchemaError("a field has no number", cls_name=full, field_name=fdp.name)

    def oneof_record(self, fdps: list, full: str) -> tuple:
        """The members of a real oneof, as a record's ``oneof`` item holds them."""
        members: list[tuple] = []
        member_names: set[str] = set()
        for fdp in fdps:
            self.check_field(fdp, full)
            kind = self.type_record(fdp, full)
            rec = self.features(fdp, full)
            members.append((_attr_name(fdp.name, member_names, full), fdp.number, kind, fdp.name, fdp.json_name or None,
                            bool(rec.delimited), fdp.default_value,
                            rec.utf8_validation == Utf8Validation.VERIFY if kind == "string" else None))
        return tuple(members)

    def field_record(self, fdp: Any, full: str, attr: str) -> tuple:
        """A field's ``field`` (or ``map``) item of its message's record.

        Presence, packing, ``required`` and the group encoding are the field's resolved
        features (:func:`pbj.features.resolve`, "Feature Settings for Editions").
        """
        repeated = fdp.label == _LABEL_REPEATED
        json_name = fdp.json_name or None
        if repeated and fdp.type == _TYPE_MESSAGE:
            target = self.type_name(fdp, full)
            if target in self.index.map_entries:
                md = self.index.msg_desc[target][0]
                by_number = {f.number: f for f in md.field}
                if 1 not in by_number or 2 not in by_number:
                    raise SchemaError("a map entry needs a key (1) and a value (2)", cls_name=target)
                key, value = self.type_record(by_number[1], target), self.type_record(by_number[2], target)
                rec = self.features(fdp, full)
                return ("map", attr, fdp.number, key, value, json_name, fdp.name,
                        rec.utf8_validation == Utf8Validation.VERIFY)  # about its string key or value
        kind = self.type_record(fdp, full)
        is_message = not isinstance(kind, str) and kind[0] == "message"
        rec = self.features(fdp, full)
        packable = not is_message and kind not in ("string", "bytes")
        packed = bool(rec.packed) if repeated and packable else None
        optional = not repeated and not is_message and rec.field_presence == FieldPresence.EXPLICIT
        return ("field", attr, fdp.number, kind, repeated, packed, optional, bool(rec.delimited), bool(rec.required),
                fdp.name, json_name, fdp.default_value,
                rec.utf8_validation == Utf8Validation.VERIFY if kind == "string" else None)
