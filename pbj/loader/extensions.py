"""The extensions of a loaded schema: every ``extend`` block, top-level and nested.

When a load builds a message class (:mod:`pbj.loader.schema`), :func:`build_extensions`
declares the extensions of the set that extend it: each ``FieldDescriptorProto`` of a
file's or a message's ``extension`` list becomes an :class:`~pbj.extensions.Extension`
registered with the extended class of the same load, with the features that apply to it
(protobuf.dev "Feature Settings for Editions": ``message_encoding`` DELIMITED is a group,
``repeated_field_encoding`` packs; proto2 ``[packed]``) and its declared ``default``. The
namespace lists them by full name (``Namespace.extension("pkg.ext")``).

An extension is left out when the class it extends is not a class of this load (an
``extend google.protobuf.FieldOptions`` block: options classes are shared by every load)
or declares no extension range holding its number.
"""

from __future__ import annotations

from typing import Any

from pbj.errors import SchemaError
from pbj.extensions.declare import Extension, extension
from pbj.loader.defaults import parse_default
from pbj.schema import info

__all__ = ["build_extensions"]

_LABEL_REPEATED = 3


def build_extensions(schema: Any, extendee_name: str, extendee: type) -> dict[str, Extension[Any]]:
    """Declare and register the extensions of a load that extend one of its classes.

    Args:
        schema: the load (:class:`~pbj.loader.schema.LoadedSchema`).
        extendee_name: the full name of the extended message.
        extendee: its class, just built.

    Returns:
        Full name -> :class:`~pbj.extensions.Extension`, in declaration order.

    Raises:
        SchemaError: an extension's type is unknown, or its number is taken by
            another extension of the same class.
    """
    out: dict[str, Extension[Any]] = {}
    extending = schema.index.extending.get(extendee_name)
    if not extending or schema.known.get(extendee_name) is extendee:
        return out
    mi = info(extendee)
    fields = schema.fields
    for ext in extending:
        fdp, scope, full_name = ext.fdp, ext.scope, ext.full_name
        if not any(lo <= fdp.number < hi for lo, hi in mi.extension_ranges):
            continue
        ftype = fields.field_type(fdp, scope)
        if callable(ftype) and not isinstance(ftype, type):
            ftype = ftype()
        rec = schema.features.field(scope, fdp.name, ext.file)
        repeated = fdp.label == _LABEL_REPEATED
        is_msg = hasattr(ftype, "__pbj_info__")
        packable = not is_msg and ftype not in ("string", "bytes")
        packed = bool(rec.packed) if (rec is not None and repeated and packable) else False
        group = bool(rec.delimited) if rec is not None else fdp.type == 10
        default: Any = None
        if fdp.default_value is not None and not repeated:
            default = parse_default(fdp.default_value, ftype, scope, fdp.name)
        kwargs = {"default": default} if default is not None else {}
        try:
            made = extension(extendee, fdp.number, ftype, name=full_name, repeated=repeated, packed=packed,
                             group=group and is_msg, syntax=ext.file.syntax or "proto2", **kwargs)
        except SchemaError as exc:
            raise SchemaError(f"extension {full_name}: {exc}", cls_name=mi.full_name) from None
        out[full_name] = made
    return out
