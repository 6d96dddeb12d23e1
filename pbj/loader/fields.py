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

import enum
import typing
from typing import Any

from pbj.descriptor import FieldPresence, Utf8Validation
from pbj.errors import SchemaError
from pbj.loader.defaults import parse_default
from pbj.loader.index import SchemaIndex
from pbj.loader.names import _attr_name, join
from pbj.scalars import SCALARS
from pbj.schema import FrozenMap, field, map_field, oneof

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
        enums: full name -> enum class (already built).
        messages: full name -> message class, filled while the load builds them
            (message types are referenced lazily through it).
        known: full name -> :mod:`pbj.wellknown` class, used instead of a new one.
    """

    def __init__(self, index: SchemaIndex, enums: dict[str, type], messages: dict[str, type],
                 known: dict[str, Any]) -> None:
        self.index = index
        self.enums = enums
        self.messages = messages
        self.known = known

    def type_name(self, fdp: Any, owner: str) -> str:
        """The full name of a field's message or enum type (``type_name`` without the leading dot)."""
        name = fdp.type_name or ""
        if name.startswith("."):
            return name[1:]
        # A relative name (not written by protoc): search the enclosing scopes.
        scope = owner
        while True:
            candidate = join(scope, name)
            if candidate in self.index.msg_desc or candidate in self.index.enum_desc:
                return candidate
            if not scope:
                raise SchemaError(f"unknown type {name!r}", cls_name=owner, field_name=fdp.name)
            scope = scope.rpartition(".")[0]

    def field_type(self, fdp: Any, owner: str) -> Any:
        """The pbj type of a field: a scalar name, an enum class or a message reference."""
        t = fdp.type
        if t in _SCALAR_TYPES:
            return _SCALAR_TYPES[t]
        if t is None and fdp.type_name:
            target = self.type_name(fdp, owner)
            t = _TYPE_ENUM if target in self.index.enum_desc else _TYPE_MESSAGE
        if t == _TYPE_ENUM:
            target = self.type_name(fdp, owner)
            if target not in self.enums:
                raise SchemaError(f"unknown enum type {fdp.type_name!r}", cls_name=owner, field_name=fdp.name)
            return self.enums[target]
        if t in (_TYPE_MESSAGE, _TYPE_GROUP):
            target = self.type_name(fdp, owner)
            if target not in self.index.msg_desc:
                raise SchemaError(f"unknown message type {fdp.type_name!r}", cls_name=owner,
                                  field_name=fdp.name)
            return self._ref(target)
        raise SchemaError(f"unknown field type {t!r}", cls_name=owner, field_name=fdp.name)

    def _ref(self, target: str) -> Any:
        known = self.known.get(target)
        if known is not None:
            return known
        messages = self.messages

        def ref() -> Any:
            return messages[target]
        ref.__qualname__ = ref.__name__ = target  # errors name the message, not FieldBuilder._ref.<locals>.<lambda>
        return ref

    @staticmethod
    def check_field(fdp: Any, full: str) -> None:
        """Refuse a field descriptor without a name or a number (only a corrupt set has one)."""
        if not fdp.name:
            raise SchemaError("a field has no name", cls_name=full)
        if fdp.number is None:
            raise SchemaError("a field has no number", cls_name=full, field_name=fdp.name)

    def oneof_spec(self, fdps: list, full: str) -> Any:
        """The ``pbj.oneof`` of a real oneof's member fields."""
        members: dict[str, tuple] = {}
        member_names: set[str] = set()
        for fdp in fdps:
            self.check_field(fdp, full)
            ftype = self.field_type(fdp, full)
            opts: dict[str, Any] = {"name": fdp.name}
            if fdp.json_name:
                opts["json_name"] = fdp.json_name
            if self.index.features.fields[join(full, fdp.name)].delimited:
                opts["group"] = True
            if fdp.default_value is not None:
                opts["default"] = parse_default(fdp.default_value, ftype, full, fdp.name)
            if ftype == "string":
                opts["utf8"] = self.index.features.fields[join(full, fdp.name)].utf8_validation == Utf8Validation.VERIFY
            members[_attr_name(fdp.name, member_names)] = (fdp.number, ftype, opts)
        return oneof(**members)

    def field_spec(self, fdp: Any, full: str) -> tuple[Any, Any]:
        """A field's annotation and its ``pbj.field`` (or ``pbj.map_field``) declaration.

        Presence, packing, ``required`` and the group encoding are the field's resolved
        features (:func:`pbj.features.resolve`, "Feature Settings for Editions").
        """
        repeated = fdp.label == _LABEL_REPEATED
        json_name = fdp.json_name or None
        if repeated and fdp.type == _TYPE_MESSAGE:
            target = self.type_name(fdp, full)
            if target in self.index.map_entries:
                spec = self._map_spec(fdp, target, json_name)
                rec = self.index.features.fields[join(full, fdp.name)]
                spec.utf8 = rec.utf8_validation == Utf8Validation.VERIFY  # about its string key or value
                return FrozenMap, spec
        ftype = self.field_type(fdp, full)
        is_message = not isinstance(ftype, str) and not (isinstance(ftype, type) and issubclass(ftype, enum.IntEnum))
        rec = self.index.features.fields[join(full, fdp.name)]
        group = rec.delimited
        packable = not is_message and ftype not in ("string", "bytes")
        packed = rec.packed if repeated and packable else None
        required = rec.required
        optional = not repeated and not is_message and rec.field_presence == FieldPresence.EXPLICIT
        default = None
        if fdp.default_value is not None:
            default = parse_default(fdp.default_value, ftype, full, fdp.name)
        kwargs: dict[str, Any] = {"name": fdp.name, "json_name": json_name}
        if default is not None:
            kwargs["default"] = default
        spec = field(fdp.number, ftype, repeated=repeated, packed=packed if repeated and packable else None,
                     optional=optional, group=group, required=required, **kwargs)
        if ftype == "string":  # proto2 and utf8_validation = NONE strings keep any bytes
            spec.utf8 = rec.utf8_validation == Utf8Validation.VERIFY
        # a field with a declared default reads it when unset: its attribute is never None
        return _annotation(ftype, repeated, (optional or required or is_message) and default is None), spec

    def _map_spec(self, fdp: Any, entry: str, json_name: str | None) -> Any:
        md = self.index.msg_desc[entry][0]
        by_number = {f.number: f for f in md.field}
        if 1 not in by_number or 2 not in by_number:
            raise SchemaError("a map entry needs a key (1) and a value (2)", cls_name=entry)
        key = self.field_type(by_number[1], entry)
        value = self.field_type(by_number[2], entry)
        return map_field(fdp.number, key, value, json_name=json_name, name=fdp.name)


def _annotation(ftype: Any, repeated: bool, optional: bool) -> Any:
    if repeated:
        return tuple
    if isinstance(ftype, str):
        base: Any = SCALARS[ftype].py_type
    elif isinstance(ftype, type):
        base = ftype
    else:
        return typing.Any  # a message reference, resolved on first use
    return base | None if optional else base
