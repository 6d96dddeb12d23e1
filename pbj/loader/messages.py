"""Message classes of a load, and the whole build: index, enums, messages, nested attributes.

Each message becomes the same kind of class ``@pbj.message`` makes: fields in
declaration order, a real oneof as one ``pbj.oneof`` attribute placed where its
first member is declared, a proto3 ``optional`` field's synthetic oneof as a
plain optional field. Messages of Google's well-known types are the classes of
:mod:`pbj.wellknown`, not new ones.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable
from types import SimpleNamespace
from typing import Any

from pbj.descriptor import JsonFormat
from pbj.errors import SchemaError
from pbj.loader.enums import build_enums
from pbj.loader.fields import FieldBuilder
from pbj.loader.index import SchemaIndex
from pbj.loader.names import _attr_name
from pbj.loader.namespace import Namespace
from pbj.loader.pickling import message_copy, message_deepcopy, message_reduce, registry_module
from pbj.schema import OneOf, message

__all__ = ["UnknownRoot", "build_namespace", "reached", "well_known"]


def well_known() -> dict[str, Any]:
    """Full name -> :mod:`pbj.wellknown` class or enum, for the types loads reuse."""
    from pbj.wellknown import WELL_KNOWN
    return WELL_KNOWN


def build_message(fields: FieldBuilder, full: str) -> type:
    """The pbj message class of the message descriptor ``full``.

    Raises:
        SchemaError: a field is malformed or refused by ``@pbj.message``.
    """
    md, fd, package = fields.index.msg_desc[full]
    syntax = fd.syntax or "proto2"
    taken: set[str] = set()
    # Nested type names stay free for class attributes (ns.pkg.Outer.Inner).
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
    legacy = fields.index.features.messages[full].json_format == JsonFormat.LEGACY_BEST_EFFORT
    body["__pbj_json_rules__"] = "skip" if legacy_option else "legacy" if legacy else "allow"
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


def reached(fields: FieldBuilder, roots: Iterable[str]) -> set[str]:
    """The full names of the messages and enums ``roots`` reach, ``roots`` included.

    A message reaches the types of its fields (map entries and their value types included)
    and, for each extension of the set that extends it, the extension's type: every class a
    value of a root can hold, so the classes built for them resolve every reference. A
    ``google.protobuf.Any`` reaches every type of the set (it may hold any of them).

    Args:
        fields: the load's :class:`FieldBuilder` (its index, and type names resolved as
            the build resolves them).
        roots: full names of messages or enums (a leading dot is allowed).

    Raises:
        KeyError: a name of ``roots`` is no message or enum of the set.
        SchemaError: a field names a type the set does not define.
    """
    index = fields.index
    todo = []
    for root in roots:
        name = root[1:] if root.startswith(".") else root
        if name not in index.msg_desc and name not in index.enum_desc:
            raise UnknownRoot(f"no message or enum named {root!r} in this descriptor set")
        todo.append(name)
    extended: dict[str, list[tuple[str, Any]]] = {}  # extendee -> (scope, extension), for message extendees
    for full, fdp in index.extensions.items():
        if fdp.extendee:
            scope = full.rpartition(".")[0]
            target = fields.type_name(SimpleNamespace(type_name=fdp.extendee, name=fdp.name), scope)
            extended.setdefault(target, []).append((scope, fdp))
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen or name not in index.msg_desc:
            seen.add(name)
            continue
        seen.add(name)
        refs = [(fdp, name) for fdp in index.msg_desc[name][0].field]
        refs += [(fdp, scope) for scope, fdp in extended.get(name, ())]
        todo.extend(fields.type_name(fdp, owner) for fdp, owner in refs if fdp.type_name)
    if ANY in seen:  # an Any may hold a message of any type of the set (ProtoJSON resolves it by name)
        return {*index.msg_desc, *index.enum_desc}
    return seen


def build_namespace(fds: Any, only: Iterable[str] | None = None) -> tuple[Namespace, dict[str, Any]]:
    """The classes of a decoded ``FileDescriptorSet``, and the well-known classes it reused.

    Args:
        fds: the decoded ``FileDescriptorSet``.
        only: full names of messages or enums: build these and what they reach
            (:func:`reached`) instead of every message and enum of the set; services are
            built when every type of theirs is.

    Returns:
        ``(namespace, known)``: the :class:`Namespace`, and full name ->
        :mod:`pbj.wellknown` class for the types it did not build.

    Raises:
        KeyError: a name of ``only`` is no message or enum of the set.
        SchemaError: the descriptors are inconsistent (see :func:`pbj.load_descriptor_set`).
    """
    known = well_known()
    index = SchemaIndex(fds.file)
    enums: dict[str, type] = {}
    messages: dict[str, type] = {}
    fields = FieldBuilder(index, enums, messages, known)  # type names resolve from the index alone
    wanted = None if only is None else reached(fields, only)
    enums.update(build_enums(index, known, wanted))
    for full in index.msg_desc:
        if full in index.map_entries or (wanted is not None and full not in wanted):
            continue
        found = known.get(full)
        messages[full] = found if found is not None else build_message(fields, full)
    # Nested classes as class attributes (ns.pkg.Outer.Inner, and pickling of classes),
    # unless a field of the outer class has the same name.
    for full, cls in (*messages.items(), *enums.items()):
        parent, _, short = full.rpartition(".")
        outer = messages.get(parent)
        if outer is None or outer is known.get(parent) or short in outer.__pbj_fields_taken__:  # type: ignore[attr-defined]
            continue
        setattr(outer, short, cls)
    from pbj.loader.extensions import build_extensions
    extensions = build_extensions(index, fields, messages)
    from pbj.loader.services import build_services
    services = build_services(index.files, {**known, **messages}, complete=wanted is None)
    namespace = Namespace(messages, enums, index.files, extensions, services)
    # each class and service of this load knows its namespace: pbj.options_of and pbj.to_google read
    # the descriptors (options, custom options) the classes were built from
    for name, owned in messages.items():
        if known.get(name) is not owned:
            type.__setattr__(owned, "__pbj_namespace__", namespace)
    # an enum holds it weakly: its members outlive a load in places pbj does not own, and through a
    # strong reference they would keep every class of the load alive (pbj.schema.records.namespace_of)
    reference = weakref.ref(namespace)
    for name, owned in enums.items():
        if known.get(name) is not owned:
            type.__setattr__(owned, "__pbj_namespace__", reference)
    for svc in services.values():
        setattr(svc, "__pbj_namespace__", namespace)  # noqa: B010 (a dunder the Service class does not declare)
    return namespace, known
