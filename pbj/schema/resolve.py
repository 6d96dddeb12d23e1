"""Forward references and the type rules of fields; the introspection entry points.

A field's type may be given before the class it names exists (a recursive or
mutually recursive message): as the class's name (a string looked up in the
declaring module) or as a zero-argument callable. They are resolved on first
use (construction, encode, decode, introspection), when every class exists.
"""

from __future__ import annotations

import enum
import sys
from typing import Any, TypeVar

from pbj.errors import SchemaError
from pbj.scalars import MAP_KEY_NAMES, SCALAR_NAMES
from pbj.schema.records import FieldInfo, MessageInfo, is_message

__all__ = ["resolve", "info", "fields", "replace", "unknown_fields", "check_type", "scalar_name_problem", "type_text",
           "class_needed", "message_needed", "is_google_message", "google_hint"]

M = TypeVar("M")

#: Words that are never the name of a message class in a ``pbj.field`` type.
_NOT_TYPES = frozenset({"map", "oneof", "message", "enum", "group"})


def scalar_name_problem(ref: str) -> str | None:
    """Why a type name that is not a scalar type and names no class yet is refused at declaration.

    A string type is either a scalar type name or a forward reference to a
    message class (any capitalisation: ``class node`` may refer to ``"node"``).
    A name that cannot be a class (``"map"``), or a lower-case name close to a
    scalar type name (``"int33"``, ``"str"``) that names no class yet, is a
    mistake, reported at once (a lower-case class declared later is given as
    a callable: ``lambda: thing``).

    Returns:
        The reason (naming the closest scalar types), or ``None`` when the name
        may be a forward reference.
    """
    if ref in _NOT_TYPES or not all(part.isidentifier() for part in ref.split(".")):
        return f"unknown scalar type {ref!r}"
    if not ref.islower():
        return None  # a class name (a forward reference to a message)
    import difflib  # a lower-case name only (rare): not at import, nor for every forward reference
    close = difflib.get_close_matches(ref, sorted(SCALAR_NAMES), n=3, cutoff=0.6)
    if close:
        return f"unknown scalar type {ref!r} (did you mean {' or '.join(map(repr, close))}?)"
    return None


def lookup_name(ref: str, cls: type) -> Any:
    """The object a dotted name refers to from ``cls``'s module (the class itself by its own name), or None."""
    module = sys.modules.get(cls.__module__)
    scope = vars(module) if module else {}
    head, *rest = ref.split(".")
    obj = scope.get(head)
    if obj is None and head == cls.__name__:
        obj = cls
    for part in rest:
        obj = getattr(obj, part, None)
    return obj


def resolve_ref(ref: Any, cls: type, fname: str | None = None) -> Any:
    """Resolve a forward reference (name or callable) to an enum or message class.

    Raises:
        SchemaError: the name is not found, or the callable fails.
    """
    if isinstance(ref, str):
        if ref in SCALAR_NAMES:
            return ref
        obj = lookup_name(ref, cls)
        if obj is None:
            raise SchemaError(f"cannot resolve type {ref!r}: neither a scalar type nor a class of that name "
                              f"in module {cls.__module__}", cls_name=cls.__qualname__, field_name=fname)
        return obj
    if isinstance(ref, type):
        return ref
    if callable(ref):
        try:
            return ref()
        except Exception as exc:
            raise SchemaError(f"cannot resolve {type_text(ref)}: {type(exc).__name__}: {exc}",
                              cls_name=cls.__qualname__, field_name=fname) from exc
    return ref


def type_text(t: Any) -> str:
    """A field's type as an error message names it, never as a function's repr: a scalar type
    name quoted (``'double'``); a class by kind and name (``message pkg.Point``, ``enum Color``,
    ``float (a Python class)``); a forward reference by the message it names when it has a name
    (a loaded schema's references are named after their message), else ``a message (given by a
    lambda)``."""
    if isinstance(t, str):
        return repr(t)
    if isinstance(t, type):
        if is_message(t):
            return f"message {t.__pbj_info__.full_name}"  # type: ignore[attr-defined]
        if issubclass(t, enum.Enum):
            return f"enum {t.__qualname__}"
        return f"{t.__qualname__} (a Python class)"
    if callable(t):
        name = getattr(t, "__qualname__", "")
        if name and "<" not in name:
            return f"message {name}"
        return f"a message (given by a {'lambda' if name.endswith('<lambda>') else 'callable'})"
    return repr(t)


def is_google_message(obj: Any) -> bool:
    """Whether ``obj`` is a message or message class of Google's ``protobuf`` runtime (by its
    ``DESCRIPTOR`` and ``SerializeToString``, without importing ``protobuf``)."""
    t = obj if isinstance(obj, type) else type(obj)
    return hasattr(t, "DESCRIPTOR") and callable(getattr(t, "SerializeToString", None))


def google_hint(obj: Any) -> str:
    """What to do with ``obj`` when it is a Google protobuf message or class (with a leading space), else ``""``."""
    if not is_google_message(obj):
        return ""
    if isinstance(obj, type):
        return " (a Google protobuf message class: load its schema with pbj.load_google)"
    return " (a Google protobuf message: convert it with pbj.from_google)"


def message_needed(obj: Any, call: str, wanted: str = "a pbj message") -> TypeError:
    """The error of ``call`` (``"pbj.encode"`` …) given ``obj`` where a message goes (``wanted``
    says which): what was given, in a few words, and for a Google protobuf message how to convert it."""
    what = f"the class {obj.__qualname__}" if isinstance(obj, type) else type(obj).__qualname__
    return TypeError(f"{call} takes {wanted}, not {what}{google_hint(obj)}")


def class_needed(obj: Any, call: str) -> TypeError:
    """The error of ``call`` (``"pbj.decode"`` …) given ``obj`` where a message class goes: for a
    message instance, the call written with its class; else what was given, in a few words
    (never an object's whole repr), and for a Google protobuf message how to get a pbj class."""
    if is_message(obj) and not isinstance(obj, type):
        name = type(obj).__qualname__
        return TypeError(f"{call} takes a message class, not a {name} message: {call}({name}, ...)")
    if isinstance(obj, type):
        return TypeError(f"{call} takes a pbj message class, not the class {obj.__qualname__}{google_hint(obj)}")
    if is_google_message(obj):
        return TypeError(f"{call} takes a pbj message class, not a {type(obj).__qualname__} message"
                         f"{google_hint(type(obj))}")
    text = repr(obj)
    return TypeError(f"{call} takes a pbj message class, not {type(obj).__qualname__} "
                     f"{text if len(text) <= 40 else text[:37] + '...'}")


def check_type(t: Any, cls_name: str, fname: str, *, map_key: bool = False) -> None:
    """Check a (resolved) field type: a scalar name, an IntEnum or a message class.

    Raises:
        SchemaError: another type, or (``map_key``) a type a map key may not have ("Maps").
    """
    if isinstance(t, str):
        if t not in SCALAR_NAMES:
            raise SchemaError(f"unknown scalar type {t!r}", cls_name=cls_name, field_name=fname)
        if map_key and t not in MAP_KEY_NAMES:
            raise SchemaError(f"map key type {t!r} is not allowed (integral types, bool or string only)",
                              cls_name=cls_name, field_name=fname)
        return
    if map_key:
        raise SchemaError(f"map key type {type_text(t)} is not allowed (integral types, bool or string only)",
                          cls_name=cls_name, field_name=fname)
    if isinstance(t, type) and issubclass(t, enum.IntEnum):
        return
    if isinstance(t, type) and is_message(t):
        return
    raise SchemaError(f"type {type_text(t)} is not a scalar type name, an IntEnum or a @pbj.message class",
                      cls_name=cls_name, field_name=fname)


def _resolve_field(f: FieldInfo, cls: type, name: str) -> None:
    if f.map_key is not None:
        f.map_value = resolve_ref(f.map_value, cls, f.name)
        check_type(f.map_value, name, f.name)
        return
    forward = not isinstance(f.type, type) and not (isinstance(f.type, str) and f.type in SCALAR_NAMES)
    resolved = resolve_ref(f.type, cls, f.name)
    check_type(resolved, name, f.name)
    if forward and not (isinstance(resolved, type) and is_message(resolved)):
        # f.type stays the reference: the next use is refused again, not let through half-resolved
        raise SchemaError("a forward reference (name or callable) must name a message class; "
                          "give enums as the class itself", cls_name=name, field_name=f.name)
    f.type = resolved
    if f.group and f.kind != "message":
        raise SchemaError("only a message field can be a group", cls_name=name, field_name=f.name)


def resolve(cls: type) -> MessageInfo:
    """Resolve the forward references of a message class and check its types.

    Called on first use (construction, encode, decode, introspection), when
    every class a declaration refers to exists.

    Raises:
        SchemaError: a reference cannot be resolved or names a wrong type.
    """
    mi: MessageInfo = cls.__pbj_info__  # type: ignore[attr-defined]
    if mi.resolved:
        return mi
    for f in mi.all_fields():
        _resolve_field(f, cls, cls.__qualname__)
    mi.resolved = True
    return mi


def info(cls: Any) -> MessageInfo:
    """The resolved schema of a message class (or of the class of a message).

    Raises:
        TypeError: ``cls`` is not a pbj message class or message.
        SchemaError: a forward reference cannot be resolved.
    """
    if not is_message(cls):
        raise TypeError(f"{cls!r} is not a pbj message class")
    if not isinstance(cls, type):
        cls = type(cls)
    return resolve(cls)


def fields(cls: Any) -> list[FieldInfo]:
    """Every field and oneof member of a message class, in field-number order.

    Raises:
        TypeError: ``cls`` is not a pbj message class.
    """
    return info(cls).all_fields()


def replace(obj: M, /, **changes: Any) -> M:
    """Return a copy of message ``obj`` with some fields changed (``attrs.evolve``).

    Unknown fields are kept; the copy's encoded size is measured afresh. The
    changed values are checked as the constructor checks them. Presence is
    kept: a field that is not set stays unset (a field with a declared default
    included, see :func:`pbj.has`), and ``None`` unsets a field.

    Raises:
        TypeError: an unknown field name, or a value of the wrong type for its
            field (the message names class, field and value).
        ValueError: a value out of range for its field.
    """
    import attrs  # here, not at import: ``import pbj`` does not load attrs

    cls: Any = obj.__class__
    if not getattr(cls, "__pbj_defaults__", None):
        return attrs.evolve(obj, **changes)  # type: ignore[misc]
    # a class with declared defaults: copy the stored state, so an unset field stays unset
    from pbj.schema.presence import stored

    for a in attrs.fields(cls):
        if a.init and a.alias not in changes:
            changes[a.alias] = stored(obj, a.name)
    return cls(**changes)  # type: ignore[no-any-return]


def unknown_fields(obj: Any) -> bytes:
    """The unknown fields kept on a decoded message: their raw bytes, tags included,
    in arrival order ("Unknown Fields" in the Language Guide). ``b""`` if none."""
    return obj._pbj_unknown  # type: ignore[no-any-return]
