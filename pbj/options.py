"""Schema options as data: :func:`options_of` a message, field, oneof, enum, enum value,
service or method.

Every element of a ``.proto`` schema may carry options ("Language Guide", "Options"):
standard ones (``deprecated``, ``packed``, ``json_name`` is not one of them) and custom ones,
extensions of ``google.protobuf.FieldOptions`` and its siblings that a schema declares
(``extend google.protobuf.FieldOptions { ... }``; ``buf.validate.field`` is one). A
descriptor keeps them as an options message, the custom ones as extension fields.

Where they come from:

* a loaded class (or enum, or service): the descriptors of its load (``Namespace.files``).
  When the load includes ``google/protobuf/descriptor.proto`` (every schema that declares
  or imports a custom option does), the options message is an instance of *that load's*
  ``google.protobuf.FieldOptions`` (and so on), with each custom option of the load
  registered as an extension of it, so custom options are decoded, typed by their own schema:
  ``pbj.get_extension(opts, ns.extension("buf.validate.field"))`` is a ``buf.validate.FieldRules``
  message. Otherwise it is :mod:`pbj.descriptor`'s class, standard options only, custom ones
  kept as unknown fields (``pbj.unknown_fields``), byte for byte;
* a declared class: the options its declaration implies, as
  :func:`pbj.descriptor_writer.describe` writes them (``packed``, ``features``,
  ``message_set_wire_format``); a declared enum: ``allow_alias`` when members share a number;
  a declared service or method: the options it was declared with.

An element with no options gives an empty options message, never ``None``.
"""

from __future__ import annotations

import enum
import weakref
from typing import Any

from pbj.api import decode, encode
from pbj.schema import info, is_message
from pbj.schema.records import namespace_of

__all__ = ["options_of"]

_OPTIONS = {"message": "MessageOptions", "field": "FieldOptions", "oneof": "OneofOptions", "enum": "EnumOptions",
            "enum_value": "EnumValueOptions", "service": "ServiceOptions", "method": "MethodOptions"}

# namespace -> {full name: descriptor}, built on first use
_INDEX: weakref.WeakKeyDictionary[Any, dict[str, Any]] = weakref.WeakKeyDictionary()


def options_of(x: Any, name: str | None = None, /) -> Any:
    """The options of a schema element, custom options decoded where the schema declares them.

    Args:
        x: a message class; an ``enum.IntEnum`` class or member (enum and enum-value options);
            a :class:`pbj.Service` or :class:`pbj.Method`.
        name: with a message class, a field's or oneof's name (the Python attribute name, the
            ``.proto`` name, or a oneof member's name): that field's ``FieldOptions`` or that
            oneof's ``OneofOptions``; with a service, a method's name.

    Returns:
        The options message: ``google.protobuf.MessageOptions``, ``FieldOptions``,
        ``OneofOptions``, ``EnumOptions``, ``EnumValueOptions``, ``ServiceOptions`` or
        ``MethodOptions`` (the load's own class, or :mod:`pbj.descriptor`'s; see the module
        docstring), empty when the element sets none. Read a standard option as an attribute
        (``options_of(cls, "id").deprecated``) and a custom one with :func:`pbj.get_extension`
        or :func:`pbj.extensions_of`.

    Raises:
        TypeError: ``x`` is none of these, or ``name`` is given with an enum or a method.
        KeyError: the message has no field or oneof ``name``, or the service no method ``name``.
        SchemaError: a declared class cannot be described (a class declared inside a function
            without ``full_name=``, see :func:`pbj.descriptor_writer.describe`).
    """
    from pbj.loader.services import Method, Service

    if isinstance(x, type) and is_message(x):
        if name is None:
            return _message_options(x)
        return _member_options(x, name)
    if name is not None and not isinstance(x, Service):
        raise TypeError(f"options_of({x!r}, {name!r}): a name goes with a message class or a service")
    if isinstance(x, type) and issubclass(x, enum.IntEnum):
        return _enum_options(x, None)
    if isinstance(x, enum.IntEnum):
        return _enum_options(type(x), x)
    if isinstance(x, Service):
        if name is None:
            return _finish(namespace_of(x), "service", x.options)
        return _method_options(x, x[name])
    if isinstance(x, Method):
        return _method_options(None, x)
    raise TypeError(f"options_of takes a message class, an enum class or member, a pbj.Service or a pbj.Method, "
                    f"not {x!r}")


def _finish(ns: Any, kind: str, opts: Any) -> Any:
    """``opts`` (a :mod:`pbj.descriptor` options message or ``None``) as the load's own options class."""
    from pbj import descriptor

    own = ns.messages.get(f"google.protobuf.{_OPTIONS[kind]}") if ns is not None else None
    if own is not None:
        return decode(own, encode(opts)) if opts is not None else own()
    if opts is None:
        return getattr(descriptor, _OPTIONS[kind])()
    return opts


def _index(ns: Any) -> dict[str, Any]:
    found = _INDEX.get(ns)
    if found is None:
        found = {}
        for fd in ns.files:
            pkg = fd.package or ""
            todo = [(f"{pkg}.{m.name}" if pkg else m.name, m) for m in fd.message_type]
            todo += [(f"{pkg}.{e.name}" if pkg else e.name, e) for e in fd.enum_type]
            while todo:
                full, d = todo.pop()
                found[full] = d
                for m in getattr(d, "nested_type", ()):
                    todo.append((f"{full}.{m.name}", m))
                for e in getattr(d, "enum_type", ()):
                    todo.append((f"{full}.{e.name}", e))
        _INDEX[ns] = found
    return found


def _descriptor_of(cls: Any, full: str) -> tuple[Any, Any]:
    """``(namespace, DescriptorProto or EnumDescriptorProto)`` of a loaded or declared class or enum."""
    ns = namespace_of(cls)
    if ns is not None:
        return ns, _index(ns)[full]
    from pbj.descriptor_writer import describe

    files = describe(cls)
    for fd in files:
        pkg = fd.package or ""
        todo = [(f"{pkg}.{m.name}" if pkg else m.name, m) for m in (*fd.message_type, *fd.enum_type)]
        while todo:
            name, d = todo.pop()
            if name == full:
                return None, d
            todo.extend((f"{name}.{m.name}", m) for m in (*getattr(d, "nested_type", ()), *getattr(d, "enum_type", ())))
    raise KeyError(f"no descriptor of {full}")  # pragma: no cover - describe writes every class it is given


def _message_options(cls: type) -> Any:
    ns, md = _descriptor_of(cls, info(cls).full_name)
    return _finish(ns, "message", md.options)


def _member_options(cls: type, name: str) -> Any:
    mi = info(cls)
    ns, md = _descriptor_of(cls, mi.full_name)
    for o in mi.oneofs:
        if o.name == name or _oneof_decl_name(md, o) == name:
            decl = _oneof_decl(md, o)
            return _finish(ns, "oneof", decl.options if decl is not None else None)
    for f in mi.all_fields():
        if name in (f.name, f.proto_name):
            fdp = next((d for d in md.field if d.number == f.number), None)
            return _finish(ns, "field", fdp.options if fdp is not None else None)
    names = [f.name for f in mi.all_fields()] + [o.name for o in mi.oneofs]
    raise KeyError(f"{mi.full_name} has no field or oneof {name!r} (it has {', '.join(names) or 'none'})")


def _oneof_decl(md: Any, o: Any) -> Any:
    number = o.members[0].number if o.members else None
    fdp = next((d for d in md.field if d.number == number), None)
    if fdp is None or fdp.oneof_index is None or fdp.oneof_index >= len(md.oneof_decl):
        return None
    return md.oneof_decl[fdp.oneof_index]


def _oneof_decl_name(md: Any, o: Any) -> str | None:
    decl = _oneof_decl(md, o)
    return decl.name if decl is not None else None


def _enum_options(cls: type[enum.IntEnum], member: enum.IntEnum | None) -> Any:
    ns = namespace_of(cls)
    if ns is None:  # a declared enum: what its declaration implies (aliases need allow_alias)
        from pbj import descriptor as _descriptor

        descriptor: Any = _descriptor  # declared through a helper the type checkers do not see through
        if member is not None:
            return descriptor.EnumValueOptions()
        aliased = len(cls.__members__) > len(cls)
        return descriptor.EnumOptions(allow_alias=True) if aliased else descriptor.EnumOptions()
    ed = _index(ns)[next(n for n, e in ns.enums.items() if e is cls)]
    if member is None:
        return _finish(ns, "enum", ed.options)
    wanted = getattr(cls, "__pbj_proto_names__", {}).get(member.name, member.name)
    vd = next((v for v in ed.value if v.name == wanted), None)
    return _finish(ns, "enum_value", vd.options if vd is not None else None)


def _method_options(svc: Any, method: Any) -> Any:
    ns = namespace_of(svc) if svc is not None else None
    if ns is None:  # a method knows its load through its message classes
        for cls in (method.input, method.output):
            ns = namespace_of(cls)
            if ns is not None:
                break
    return _finish(ns, "method", method.options)
