"""The extensions of a loaded schema: every ``extend`` block, top-level and nested.

``pbj.load_descriptor_set`` and ``pbj.load_proto`` call :func:`build_extensions`
once the message classes exist: each ``FieldDescriptorProto`` of a file's or
a message's ``extension`` list becomes an :class:`~pbj.extensions.Extension`
registered with the extended class of the same load, with the features that
apply to it (protobuf.dev "Feature Settings for Editions": ``message_encoding``
DELIMITED is a group, ``repeated_field_encoding`` packs; proto2 ``[packed]``)
and its declared ``default``. The namespace lists them by full name
(``Namespace.extension("pkg.ext")``).

An extension is left out when the class it extends is not a class of this
load (an ``extend google.protobuf.FieldOptions`` block: options classes are
shared by every load) or declares no extension range holding its number.
"""

from __future__ import annotations

from typing import Any

from pbj.errors import SchemaError
from pbj.extensions.declare import Extension, extension
from pbj.loader.defaults import parse_default
from pbj.loader.names import join
from pbj.schema import info

__all__ = ["build_extensions"]

_LABEL_REPEATED = 3


def _declared(files: Any) -> list[tuple[str, Any, str]]:
    """``(scope, FieldDescriptorProto, syntax)`` of every extension, in file order."""
    out: list[tuple[str, Any, str]] = []
    for fd in files:
        syntax = fd.syntax or "proto2"
        package = fd.package or ""
        out.extend((package, fdp, syntax) for fdp in fd.extension)
        stack = [(md, package) for md in reversed(fd.message_type)]
        while stack:
            md, scope = stack.pop()
            full = join(scope, md.name or "")
            out.extend((full, fdp, syntax) for fdp in md.extension)
            stack.extend((nd, full) for nd in reversed(md.nested_type))
    return out


def build_extensions(index: Any, fields: Any, messages: dict[str, Any]) -> dict[str, Extension[Any]]:
    """Declare and register the extensions of a load.

    Args:
        index: the load's :class:`~pbj.loader.index.SchemaIndex`.
        fields: its :class:`~pbj.loader.fields.FieldBuilder` (type names and features).
        messages: full name -> the load's message classes.

    Returns:
        Full name -> :class:`~pbj.extensions.Extension`, in declaration order.

    Raises:
        SchemaError: an extension's type is unknown, or its number is taken by
            another extension of the same class.
    """
    out: dict[str, Extension[Any]] = {}
    for scope, fdp, syntax in _declared(index.files):
        if not fdp.name or fdp.number is None or not fdp.extendee:
            continue
        full_name = join(scope, fdp.name)
        extendee = messages.get(fields.type_name(_Named(fdp.extendee, fdp.name), scope))
        if extendee is None or fields.known.get(info(extendee).full_name) is extendee:
            continue
        mi = info(extendee)
        if not any(lo <= fdp.number < hi for lo, hi in mi.extension_ranges):
            continue
        ftype = fields.field_type(fdp, scope)
        if callable(ftype) and not isinstance(ftype, type):
            ftype = ftype()
        rec = index.features.fields.get(full_name)
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
            ext = extension(extendee, fdp.number, ftype, name=full_name, repeated=repeated, packed=packed,
                            group=group and is_msg, syntax=syntax, **kwargs)
        except SchemaError as exc:
            raise SchemaError(f"extension {full_name}: {exc}", cls_name=mi.full_name) from None
        out[full_name] = ext
    return out


class _Named:
    """The ``type_name`` view of an ``extendee`` name, for :meth:`FieldBuilder.type_name`."""

    __slots__ = ("name", "type_name")

    def __init__(self, type_name: str, name: str) -> None:
        self.type_name = type_name
        self.name = name
