"""Message classes of a load, and the whole build: index, enums, messages, nested attributes.

Each message becomes the same kind of class ``@pbj.message`` makes: fields in
declaration order, a real oneof as one ``pbj.oneof`` attribute placed where its
first member is declared, a proto3 ``optional`` field's synthetic oneof as a
plain optional field. Messages of Google's well-known types are the classes of
:mod:`pbj.wellknown`, not new ones.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from pbj.descriptor import JsonFormat
from pbj.errors import SchemaError
from pbj.loader.names import _attr_name
from pbj.loader.pickling import message_copy, message_deepcopy, message_reduce, registry_module
from pbj.schema import OneOf, message

__all__ = ["UnknownRoot", "build_message", "reached", "well_known"]


def well_known() -> Mapping[str, Any]:
    """Full name -> :mod:`pbj.wellknown` class or enum, for the types loads reuse.

    :mod:`pbj.wellknown` is imported (its classes declared) when a name of package
    ``google.protobuf`` is first looked up, not by the load: a program that never
    reaches a well-known type does not pay for them.
    """
    return _KNOWN


class _WellKnown(Mapping):
    """:data:`pbj.wellknown.WELL_KNOWN`, imported on the first lookup of a ``google.protobuf`` name
    (every name it holds is of that package); other names are answered without it."""

    __slots__ = ()

    @staticmethod
    def _table() -> dict[str, Any]:
        # (looked up under FIRST_USE while a class is built: importing pbj.wellknown never takes that lock)
        from pbj.wellknown import WELL_KNOWN
        return WELL_KNOWN

    def get(self, full_name: str, default: Any = None) -> Any:
        if not full_name.startswith(_WELL_KNOWN_PACKAGE):
            return default
        return self._table().get(full_name, default)

    def __getitem__(self, full_name: str) -> Any:
        found = self.get(full_name)
        if found is None:
            raise KeyError(full_name)
        return found

    def __contains__(self, full_name: object) -> bool:
        return isinstance(full_name, str) and self.get(full_name) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self._table())

    def __len__(self) -> int:
        return len(self._table())


_WELL_KNOWN_PACKAGE = "google.protobuf."
_KNOWN = _WellKnown()


class _Nested:
    """A nested message or enum as an attribute of its outer class (``Outer.Inner``), built on first read.

    The first read builds the class (through the load, so every thread gets the same one) and
    puts it on the outer class in place of this stand-in.
    """

    __slots__ = ("full_name", "name", "schema")

    def __init__(self, schema: Any, full_name: str, name: str) -> None:
        self.schema = schema
        self.full_name = full_name
        self.name = name

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        cls = self.schema.get(self.full_name)
        if owner is not None:
            type.__setattr__(owner, self.name, cls)
        return cls


def build_message(schema: Any, full: str) -> type:
    """The pbj message class of the message descriptor ``full`` of a load
    (a :class:`~pbj.loader.schema.LoadedSchema`).

    The enums its fields use are built with it; the message types of its fields are
    references resolved on first use, and its nested types are built when first read as
    its attributes (``Outer.Inner``).

    Raises:
        SchemaError: a field is malformed or refused by ``@pbj.message``, or the message's
            file breaks a rule of protoc's.
    """
    fields = schema.fields
    md, fd, package = schema.index.msg_desc[full]
    syntax = fd.syntax or "proto2"
    taken: set[str] = set()
    anns: dict[str, Any] = {}
    body: dict[str, Any] = {}
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
    for kind, item in order:
        if kind == "oneof":
            od = md.oneof_decl[item]
            attr = _attr_name(od.name or f"oneof_{item}", taken)
            anns[attr] = OneOf | None
            body[attr] = fields.oneof_spec(real_oneofs[item], full)
            continue
        fdp = item
        fields.check_field(fdp, full)
        attr = _attr_name(fdp.name, taken)
        anns[attr], body[attr] = fields.field_spec(fdp, full)
    qualname = full[len(package) + 1:] if package else full
    # protoc's JSON-name rules follow the message's json_format (pbj.schema.name_rules)
    legacy_option = md.options is not None and md.options.deprecated_legacy_json_field_conflicts
    legacy = schema.features.message(full).json_format == JsonFormat.LEGACY_BEST_EFFORT
    body["__pbj_json_rules__"] = "skip" if legacy_option else "legacy" if legacy else "allow"
    # Nested classes as class attributes (ns.pkg.Outer.Inner, and pickling of classes), built
    # when first read, unless a field of the class has the same name.
    for nested in (*md.nested_type, *md.enum_type):
        inner = f"{full}.{nested.name}"
        if nested.name not in taken and inner in schema and inner not in schema.index.map_entries:
            body[nested.name] = _Nested(schema, inner, nested.name)
    ns = {"__annotations__": anns, **body, "__module__": registry_module(package),
          "__doc__": f"The message {full} (loaded from {fd.name}).", "__reduce__": message_reduce,
          "__copy__": message_copy, "__deepcopy__": message_deepcopy}
    raw = type(qualname.rsplit(".", 1)[-1], (), ns)
    message_set = bool(md.options is not None and md.options.message_set_wire_format)
    ranges = [range(r.start, r.end) for r in md.extension_range
              if r.start is not None and r.end is not None and r.start < r.end]
    cls = message(raw, full_name=full, syntax=syntax, message_set=message_set, extensions=ranges or None)
    cls.__qualname__ = qualname
    # Attributes of the class message() built from a plain type(): the checkers do not see them.
    cls.__pbj_fields_taken__ = frozenset(taken)  # type: ignore[attr-defined]
    cls.__pbj_info__.reserved_names = frozenset(md.reserved_name)  # type: ignore[attr-defined]
    return cls


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
