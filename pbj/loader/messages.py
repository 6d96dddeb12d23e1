"""Message classes of a load, and the whole build: index, enums, messages, nested attributes.

Each message becomes the same kind of class ``@pbj.message`` makes: fields in
declaration order, a real oneof as one ``pbj.oneof`` attribute placed where its
first member is declared, a proto3 ``optional`` field's synthetic oneof as a
plain optional field. Messages of Google's well-known types are the classes of
:mod:`pbj.wellknown`, not new ones.
"""

from __future__ import annotations

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

__all__ = ["build_namespace", "well_known"]


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


def build_namespace(fds: Any) -> tuple[Namespace, dict[str, Any]]:
    """The classes of a decoded ``FileDescriptorSet``, and the well-known classes it reused.

    Returns:
        ``(namespace, known)``: the :class:`Namespace`, and full name ->
        :mod:`pbj.wellknown` class for the types it did not build.

    Raises:
        SchemaError: the descriptors are inconsistent (see :func:`pbj.load_descriptor_set`).
    """
    known = well_known()
    index = SchemaIndex(fds.file)
    enums = build_enums(index, known)
    messages: dict[str, type] = {}
    fields = FieldBuilder(index, enums, messages, known)
    for full in index.msg_desc:
        if full in index.map_entries:
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
    services = build_services(index.files, {**known, **messages})
    return Namespace(messages, enums, index.files, extensions, services), known
