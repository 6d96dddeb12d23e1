"""Declared defaults and presence: what ``obj.a`` reads and what :func:`has` tells.

protobuf.dev "Field Presence" and "Language Guide (proto2)", section "Default
Values": a field with explicit presence is either set or not; reading a field
that is not set gives its default, which proto2 (and editions, for
``EXPLICIT`` fields) lets a schema declare (``optional int32 a = 1
[default = 5];``). pbj keeps both, without losing either:

* **the stored state** is the slot of the attribute: ``None`` when the field
  is not set, else its value. The constructor's ``None`` means "not set", the
  parser stores ``None`` for an absent field, and both writers, ProtoJSON and
  the text format read the stored state, so an unset field is never written
  or printed;
* **the value** is ``obj.a``: for a field with a declared default, a
  :class:`DeclaredDefault` descriptor on the class gives the default when the
  slot holds ``None``; every other field reads its slot directly, so classes
  without declared defaults (all of proto3) pay nothing;
* **the presence** is :func:`has` (``pbj.has(obj, "a")``), for every field
  with explicit presence (message fields, oneofs and oneof members, proto2
  ``optional``/``required``, proto3 ``optional``, editions ``EXPLICIT``).

Equality, hashing, ``repr`` and pickling of a class with declared defaults
use the stored state, as Google's runtimes compare presence
(``M() != M(a=5)`` even when 5 is ``a``'s default); ``repr`` shows an unset
field as ``None``, so ``eval(repr(m)) == m`` (without extensions: they show as
``[pkg.ext]=value``). :func:`pbj.replace` keeps
presence (an unset field stays unset); ``attrs.evolve`` reads the values and
so sets every defaulted field it copies.
"""

from __future__ import annotations

from typing import Any

__all__ = ["DeclaredDefault", "install_defaults", "stored", "has", "stored_values", "show_extensions"]


class DeclaredDefault:
    """The class attribute of a field with a declared default (a data descriptor).

    ``obj.<name>`` gives the stored value, or ``default`` when the slot holds
    ``None`` (the field is not set). Storing goes to the slot unchanged (only
    the parser and pickling store; the class is frozen).

    Attributes:
        name: the attribute name.
        default: the declared default value (never ``None``).
        raw: the slot's ``__get__``: ``raw(obj)`` is the stored state.
    """

    __slots__ = ("_delete", "_set", "default", "name", "raw")

    def __init__(self, name: str, default: Any, slot: Any) -> None:
        self.name = name
        self.default = default
        self.raw = slot.__get__
        self._set = slot.__set__
        self._delete = slot.__delete__

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        if obj is None:
            return self
        v = self.raw(obj)
        return self.default if v is None else v

    def __set__(self, obj: Any, value: Any) -> None:
        self._set(obj, value)

    def __delete__(self, obj: Any) -> None:
        self._delete(obj)

    def __repr__(self) -> str:
        return f"<pbj field {self.name!r}, default {self.default!r}>"


def stored(obj: Any, name: str) -> Any:
    """The stored state of attribute ``name`` of message ``obj``: ``None`` for an unset field.

    The same as ``getattr(obj, name)`` except for a field with a declared
    default, where it does not apply the default.
    """
    d = type(obj).__dict__.get(name)
    if isinstance(d, DeclaredDefault):
        return d.raw(obj)
    return getattr(obj, name)


def stored_values(obj: Any, names: Any) -> tuple:
    """The stored state of each attribute in ``names`` (see :func:`stored`)."""
    return tuple(stored(obj, n) for n in names)


def _eq_names(cls: type) -> tuple[str, ...]:
    return tuple(a.name for a in cls.__attrs_attrs__ if a.eq)  # type: ignore[attr-defined]


def show_extensions(obj: Any, text: str) -> str:
    """``repr`` text ``Name(fields)`` of ``obj`` with its extensions added as ``[pkg.ext]=value``,
    in number order (the text format's names; not Python, so such a repr does not ``eval``)."""
    holders = getattr(obj, "_pbj_extensions", ())
    if not holders:
        return text
    shown = ", ".join(f"{h.__pbj_extension__.json_name}={h.__pbj_extension__.value_of(h)!r}" for h in holders)
    head = text[:-1]
    return f"{head}{'' if head.endswith('(') else ', '}{shown})"


def install_defaults(cls: type, defaults: dict[str, Any]) -> None:
    """Give ``cls`` a :class:`DeclaredDefault` per field of ``defaults`` (attribute name ->
    declared default), and ``__eq__``, ``__hash__``, ``__repr__`` and ``__getstate__``
    reading the stored state. Does nothing when ``defaults`` is empty.
    """
    if cls.__dict__.get("__pbj_defaults__") != defaults:
        cls.__pbj_defaults__ = dict(defaults)  # type: ignore[attr-defined]
    if not defaults:
        return
    slots = cls.__pbj_slots__  # type: ignore[attr-defined]
    for name, default in defaults.items():
        setattr(cls, name, DeclaredDefault(name, default, slots.__dict__[name]))
    eq_names = _eq_names(cls)
    getters = tuple(slots.__dict__[n].__get__ for n in eq_names)
    state_names = tuple(a.name for a in cls.__attrs_attrs__)  # type: ignore[attr-defined]
    state_getters = tuple(slots.__dict__[n].__get__ for n in state_names)
    salt = hash(cls.__qualname__)

    def __eq__(self: Any, other: Any) -> Any:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return tuple([g(self) for g in getters]) == tuple([g(other) for g in getters])

    def __hash__(self: Any) -> int:
        return hash((salt, *(g(self) for g in getters)))

    def __repr__(self: Any) -> str:
        body = ", ".join(f"{n}={g(self)!r}" for n, g in zip(eq_names, getters, strict=True)
                         if n != "_pbj_extensions")
        return show_extensions(self, f"{type(self).__qualname__.rsplit('>.', 1)[-1]}({body})")

    def __getstate__(self: Any) -> dict[str, Any]:
        return {n: g(self) for n, g in zip(state_names, state_getters, strict=True)}

    for fn in (__eq__, __hash__, __repr__, __getstate__):
        fn.__qualname__ = f"{cls.__qualname__}.{fn.__name__}"
        fn.__doc__ = f"{fn.__name__} on the stored state (an unset field is None), see pbj.schema.presence."
        setattr(cls, fn.__name__, fn)


def has(obj: Any, name: str) -> bool:
    """Whether field ``name`` of message ``obj`` is set ("Field Presence", explicit presence).

    Works for every field with explicit presence: a singular message field, a
    oneof (any member set) and each oneof member (by its member name), a
    proto2 ``optional`` or ``required`` field, a proto3 ``optional`` field, an
    editions field whose ``field_presence`` is ``EXPLICIT`` or
    ``LEGACY_REQUIRED``. For a field with a declared default, ``obj.name``
    gives the default when this is false. The counterpart of Google's
    ``HasField``.

    Args:
        obj: a pbj message.
        name: an attribute name (a field or a oneof) or a oneof member's name.

    Returns:
        ``True`` when the field is set (a oneof member: when it is the member set).

    Raises:
        TypeError: ``obj`` is not a pbj message.
        ValueError: the class has no field, oneof or oneof member ``name``, or
            the field has no presence (implicit presence, repeated, map), as
            Google's ``HasField`` refuses them.
    """
    from pbj.schema.resolve import info

    mi = info(type(obj) if not isinstance(obj, type) else obj)
    if isinstance(obj, type):
        raise TypeError(f"pbj.has needs a message, got the class {obj.__qualname__}")
    cls_name = mi.cls.__qualname__
    for f in mi.fields:
        if f.name == name:
            if f.repeated or f.is_map or not f.optional:
                why = "a map" if f.is_map else "repeated" if f.repeated else "implicit presence"
                raise ValueError(f"{cls_name}.{name} has no presence ({why}): compare its value instead")
            return stored(obj, name) is not None
    for o in mi.oneofs:
        if o.name == name:
            return getattr(obj, name) is not None
        for m in o.members:
            if m.name == name:
                v = getattr(obj, o.name)
                return v is not None and v[0] == name
    raise ValueError(f"{cls_name} has no field, oneof or oneof member named {name!r}")
