"""Message classes of a load, and the whole build: index, enums, messages, nested attributes.

Each message becomes the same kind of class ``@pbj.message`` makes: fields in
declaration order, a real oneof as one ``pbj.oneof`` attribute placed where its
first member is declared, a proto3 ``optional`` field's synthetic oneof as a
plain optional field. Messages of Google's well-known types are the classes of
:mod:`pbj.wellknown`, not new ones.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pbj.descriptor import JsonFormat
from pbj.errors import SchemaError
from pbj.loader.declarations import well_known
from pbj.loader.names import _attr_name

__all__ = ["UnknownRoot", "derive_message", "reached", "well_known"]


def derive_message(schema: Any, full: str) -> tuple:
    """The record (:mod:`pbj.loader.declarations`) of the message descriptor ``full`` of a load
    (a :class:`~pbj.loader.schema.LoadedSchema`): its fields' declarations as its descriptors
    and their editions features decide them.

    Raises:
        SchemaError: a field is malformed (no name or number, an unknown type, a oneof index out
            of range), or the message's file breaks a rule of protoc's.
    """
    fields = schema.fields
    md, fd, package = schema.index.msg_desc[full]
    taken: set[str] = set()
    synthetic = {f.oneof_index for f in md.field if f.proto3_optional and f.oneof_index is not None}
    real_oneofs: dict[int, list] = {}
    order: list[tuple[str, Any]] = []  # ("field", fdp) or ("oneof", index), declaration order
    for fdp in md.field:
        idx = fdp.oneof_index
        if idx is not None and idx not in synthetic:
            if idx >= len(md.oneof_decl) or idx < 0:
                raise SchemaError(f"oneof_index {idx} is out of range", cls_name=full, field_name=fdp.name)
            if idx not in real_oneofs:
                real_oneofs[idx] = []
                order.append(("oneof", idx))
            real_oneofs[idx].append(fdp)
        else:
            order.append(("field", fdp))
    items: list[tuple] = []
    for kind, item in order:
        if kind == "oneof":
            od = md.oneof_decl[item]
            attr = _attr_name(od.name or f"oneof_{item}", taken, full)
            items.append(("oneof", attr, fields.oneof_record(real_oneofs[item], full)))
            continue
        fields.check_field(item, full)
        items.append(fields.field_record(item, full, _attr_name(item.name, taken, full)))
    # protoc's JSON-name rules follow the message's json_format (pbj.schema.name_rules)
    legacy_option = md.options is not None and md.options.deprecated_legacy_json_field_conflicts
    legacy = schema.features.message(full).json_format == JsonFormat.LEGACY_BEST_EFFORT
    # nested classes become attributes of the class, unless a field of it has the same name
    nested = tuple((n.name, f"{full}.{n.name}") for n in (*md.nested_type, *md.enum_type)
                   if n.name not in taken and f"{full}.{n.name}" not in schema.index.map_entries)
    return ("message", full[len(package) + 1:] if package else full, package, fd.name, fd.syntax or "proto2",
            "skip" if legacy_option else "legacy" if legacy else "allow",
            bool(md.options is not None and md.options.message_set_wire_format),
            tuple((r.start, r.end) for r in md.extension_range
                  if r.start is not None and r.end is not None and r.start < r.end),
            tuple(md.reserved_name), tuple(items), nested, tuple(taken))


#: The well-known type whose value may be a message of any type.
ANY = "google.protobuf.Any"


class UnknownRoot(KeyError):
    """A type asked for by name (``load_descriptor_set(only=...)``) that the set does not define."""


def reached(index: Any, roots: Iterable[str]) -> set[str]:
    """The full names of the messages and enums ``roots`` reach, ``roots`` included.

    A message reaches the types of its fields (map entries and their value types included)
    and, for each extension of the set that extends it, the extension's type: every class a
    value of a root can hold, so the classes built for them resolve every reference. A
    ``google.protobuf.Any`` reaches every type of the set (it may hold any of them).

    Args:
        index: the load's :class:`~pbj.loader.index.SchemaIndex` (whose type names all resolve).
        roots: full names of messages or enums (a leading dot is allowed).

    Raises:
        KeyError: a name of ``roots`` is no message or enum of the set.
    """
    todo = []
    for root in roots:
        name = root[1:] if root.startswith(".") else root
        if name not in index:
            raise UnknownRoot(f"no message or enum named {root!r} in this descriptor set")
        todo.append(name)
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        if name not in index.msg_desc:
            continue
        refs = [(fdp, name) for fdp in index.msg_desc[name][0].field]
        refs += [(ext.fdp, ext.scope) for ext in index.extending.get(name, ())]
        todo.extend(index.resolve_name(fdp.type_name, owner) for fdp, owner in refs if fdp.type_name)
    if ANY in seen:  # an Any may hold a message of any type of the set (ProtoJSON resolves it by name)
        return {*index.msg_desc, *index.enum_desc}
    return seen
