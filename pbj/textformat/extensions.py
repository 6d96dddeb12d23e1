"""Extensions in the text format (``[pkg.ext]: 1``), until pbj has an extension API.

pbj keeps the extensions of a decoded message as unknown fields (their raw
bytes, written back unchanged). The text format names them by full name in
brackets (protobuf.dev "Text Format Language Specification", "Extension
Fields"), so printing and parsing them needs the extension declarations. They
come from a loaded schema: ``pbj.Namespace.files`` holds every
``FieldDescriptorProto`` of an ``extend`` block.

:func:`extension_table` turns those into an :class:`ExtensionTable`. Each
extension gets a *holder*: a pbj message class with one field, ``value``,
of the extension's number, type, label and encoding. pbj's own codec then
reads and writes the extension's wire bytes: parsing ``[pkg.ext]: 5`` appends
``pbj.encode(holder(value=5))`` to the message's unknown fields (the bytes
``pbj.decode`` would have kept for it), and printing decodes the unknown
fields of that number with the holder.

This is a provisional bridge: when pbj gets an extension API, the text format
should take its extensions from there.
"""

from __future__ import annotations

import typing
import weakref
from typing import Any

from pbj.schema import field as declare_field
from pbj.schema import info, is_message, message
from pbj.textformat.plan import FieldPlan

__all__ = ["Extension", "ExtensionTable", "extension_table"]

# FieldDescriptorProto.Type numbers.
_SCALARS = {
    1: "double", 2: "float", 3: "int64", 4: "uint64", 5: "int32", 6: "fixed64", 7: "fixed32",
    8: "bool", 9: "string", 12: "bytes", 13: "uint32", 15: "sfixed32", 16: "sfixed64",
    17: "sint32", 18: "sint64",
}
_GROUP, _MESSAGE = 10, 11
_REPEATED = 3
# FeatureSet values (descriptor.proto).
_PACKED, _DELIMITED = 1, 2


class Extension:
    """One extension field.

    Attributes:
        full_name: its full name (``protobuf_test_messages.proto2.extension_int32``).
        extendee: the full name of the message it extends.
        number: its field number.
        holder: the one-field pbj message class that reads and writes it.
        plan: the :class:`~pbj.textformat.plan.FieldPlan` of the holder's
            field, named ``[full_name]``.
    """

    __slots__ = ("extendee", "full_name", "holder", "number", "plan")

    def __init__(self, full_name: str, extendee: str, number: int, holder: type, plan: FieldPlan) -> None:
        self.full_name = full_name
        self.extendee = extendee
        self.number = number
        self.holder = holder
        self.plan = plan


class ExtensionTable:
    """The extensions of a schema, by full name and by extended message.

    Attributes:
        by_name: full name -> :class:`Extension`.
        by_extendee: extended message's full name -> {field number: :class:`Extension`}.
    """

    __slots__ = ("__weakref__", "by_extendee", "by_name")

    def __init__(self, extensions: list[Extension]) -> None:
        self.by_name = {e.full_name: e for e in extensions}
        self.by_extendee: dict[str, dict[int, Extension]] = {}
        for e in extensions:
            self.by_extendee.setdefault(e.extendee, {})[e.number] = e


_tables: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def extension_table(namespace: Any) -> ExtensionTable:
    """The extensions declared in a loaded schema (cached per namespace).

    Args:
        namespace: a :class:`pbj.Namespace` (from ``pbj.load_descriptor_set``
            or ``pbj.load_proto``), or an :class:`ExtensionTable` (returned as is).

    Returns:
        Its :class:`ExtensionTable`. An extension whose type the schema does
        not define, or which extends a message the schema does not define, is
        left out.

    Raises:
        TypeError: ``namespace`` is neither.
    """
    if isinstance(namespace, ExtensionTable):
        return namespace
    files = getattr(namespace, "files", None)
    if files is None:
        raise TypeError(f"extensions must be a pbj.Namespace, not {type(namespace).__name__}")
    table = _tables.get(namespace)
    if table is None:
        table = ExtensionTable(list(_declared(namespace)))
        _tables[namespace] = table
    return table


def _declared(namespace: Any) -> typing.Iterator[Extension]:
    """Every extension of every file of ``namespace``, with the features that apply to it."""
    for fd in namespace.files:
        syntax = fd.syntax or "proto2"
        feats = [fd.options.features] if fd.options is not None and fd.options.features is not None else []
        package = fd.package or ""
        for fdp in fd.extension:
            ext = _extension(namespace, fdp, package, syntax, feats)
            if ext is not None:
                yield ext
        stack = [(md, package, feats) for md in fd.message_type]
        while stack:
            md, scope, outer = stack.pop()
            full = f"{scope}.{md.name}" if scope else md.name
            inner = outer
            if md.options is not None and md.options.features is not None:
                inner = [*outer, md.options.features]
            for fdp in md.extension:
                ext = _extension(namespace, fdp, full, syntax, inner)
                if ext is not None:
                    yield ext
            stack.extend((nd, full, inner) for nd in md.nested_type)


def _feature(feats: list, fdp: Any, name: str) -> Any:
    """The value of an editions feature for a field: its own option, else the innermost scope's."""
    own = fdp.options.features if fdp.options is not None else None
    for fs in (own, *reversed(feats)):
        value = getattr(fs, name, None) if fs is not None else None
        if value is not None:
            return value
    return None


def _extension(namespace: Any, fdp: Any, scope: str, syntax: str, feats: list) -> Extension | None:
    if not fdp.name or fdp.number is None or not fdp.extendee:
        return None
    full_name = f"{scope}.{fdp.name}" if scope else fdp.name
    extendee = fdp.extendee.lstrip(".")
    if namespace.get(extendee) is None:
        return None
    t = fdp.type
    if t in _SCALARS:
        ftype: Any = _SCALARS[t]
    else:
        ftype = namespace.get((fdp.type_name or "").lstrip("."))
        if ftype is None:
            return None
    repeated = fdp.label == _REPEATED
    group = t == _GROUP or (syntax == "editions" and t == _MESSAGE
                            and _feature(feats, fdp, "message_encoding") == _DELIMITED)
    packable = ftype not in ("string", "bytes") and not is_message(ftype)
    packed = None
    if repeated and packable:
        own = fdp.options.packed if fdp.options is not None else None
        if syntax == "proto3":
            packed = own if own is not None else True
        elif syntax == "proto2":
            packed = bool(own)
        else:
            packed = own if own is not None else _feature(feats, fdp, "repeated_field_encoding") in (None, _PACKED)
    spec = declare_field(fdp.number, ftype, repeated=repeated, packed=packed, optional=not repeated, group=group)
    body = {"__annotations__": {"value": typing.Any}, "value": spec, "__module__": __name__,
            "__doc__": f"Holder of the extension {full_name} of {extendee}."}
    holder = message(type("ExtensionHolder", (), body), full_name=f"[{full_name}]", syntax="proto2")
    plan = FieldPlan(info(holder).fields[0], scope)
    plan.name = f"[{full_name}]"
    return Extension(full_name, extendee, fdp.number, holder, plan)
