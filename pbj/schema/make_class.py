"""Build a message class: a frozen attrs class with slots, on top of a hidden slots base.

The base (``_<Name>Slots``) owns the slots and has Python's default
``__setattr__``: the generated parser builds instances of it with plain
attribute stores, then switches their ``__class__`` to the frozen class, which
costs about a third of calling the frozen ``__init__`` (and skips the value
checks, which decoded values do not need). The frozen class gets attrs'
fields and pickling, ``__eq__``, ``__hash__`` and ``__repr__`` with attrs'
meaning compiled on their first call (:mod:`pbj.schema.methods`), and pbj's own checking
``__init__`` (:mod:`pbj.schema.constructor`), so the constructor's parameter
names are exactly the field names, whatever they are (``self`` included). A
field with a declared default reads through a descriptor that gives the
default when the field is unset (:mod:`pbj.schema.presence`); such a class
compares, hashes, prints and pickles its stored state instead.
"""

from __future__ import annotations

import threading
from typing import Any

from pbj.schema.constructor import bootstrap_init
from pbj.schema.generated import FIRST_USE, ClassRef
from pbj.schema.methods import stand_in_methods
from pbj.schema.presence import install_defaults, show_extensions
from pbj.schema.protocols import PROTOCOLS
from pbj.schema.records import FieldInfo, MessageInfo, OneofInfo
from pbj.schema.specs import FieldSpec

__all__ = ["make_class", "build_class", "complete_attrs", "REPR_DEPTH"]

#: How many levels of nested messages ``repr`` writes in full; deeper ones are ``Name(...)``.
REPR_DEPTH = 100

#: Names attrs' generated ``__attrs_init__`` uses itself; a field of such a name gets a
#: stand-in alias while attrs builds the class (pbj's own ``__init__`` is used instead).
_ATTRS_OWN_NAMES = frozenset({"self", "_setattr", "_cached_setattr_get", "attr_dict", "_config",
                              "_inst_dict", "NOTHING"})


def _unsafe_for_attrs(name: str) -> bool:
    return name in _ATTRS_OWN_NAMES or name.startswith("__attr")


_repr_level = threading.local()


def _depth_limited(attrs_repr: Any) -> Any:
    """Wrap attrs' ``__repr__``: a message :data:`REPR_DEPTH` levels below the one shown prints as ``Name(...)``.

    So ``repr`` of a message of any depth returns (as Python writes ``[...]``
    for a list holding itself) instead of raising ``RecursionError``.
    """

    def __repr__(self: Any) -> str:
        level = getattr(_repr_level, "n", 0)
        if level >= REPR_DEPTH:
            return f"{type(self).__name__}(...)"
        _repr_level.n = level + 1
        try:
            return show_extensions(self, attrs_repr(self))
        finally:
            _repr_level.n = level

    return __repr__


def make_class(cls: type, fields_: list[FieldInfo], oneofs: list[OneofInfo], order: list[str],
               defaults: dict[str, Any], annotations: dict[str, Any], **info: Any) -> type:
    """Build the message class for a checked declaration.

    Args:
        cls: the declared class (its body is copied, the field markers dropped).
        fields_: the regular fields, in field-number order.
        oneofs: the oneofs.
        order: attribute names in declaration order.
        defaults: attribute name -> default value.
        annotations: the class's annotations (as declared, unevaluated).
        info: ``full_name``, ``syntax``, ``message_set``, ``map_entry`` for the MessageInfo,
            and optionally ``extension_ranges``: a class with extension ranges gets one more
            hidden attribute, ``_pbj_extensions`` (its extension values, see :mod:`pbj.extensions`).

    Returns:
        The new class, with ``__pbj_info__`` (its MessageInfo) and ``__pbj_slots__`` (the base).
    """
    ns: dict[str, Any] = {}
    for key, value in cls.__dict__.items():
        if key in ("__dict__", "__weakref__") or isinstance(value, FieldSpec):
            continue
        ns[key] = value
    return build_class(cls.__name__, cls.__qualname__, ns, fields_, oneofs, order, defaults, annotations, **info)


def build_class(cls_name: str, qualname: str, ns: dict[str, Any], fields_: list[FieldInfo], oneofs: list[OneofInfo],
                order: list[str], defaults: dict[str, Any], annotations: dict[str, Any], **info: Any) -> type:
    """:func:`make_class` for a class given by its name, qualified name and namespace ``ns`` (its
    body without the field markers, ``__module__`` included; this function adds to it), as the
    loader builds a class from a declaration kept in the schema cache (no declared class first).
    """
    ranges = tuple(info.get("extension_ranges", ()))
    slot_names = (*tuple(order), "_pbj_unknown", "_pbj_size", *(("_pbj_extensions",) if ranges else ()))
    # Created under an all-underscore name, which turns off private-name mangling of
    # slot names such as "__x" (legal protobuf field names), then renamed.
    base = type("_", (), {"__slots__": slot_names, "__module__": ns["__module__"]})
    base.__name__ = base.__qualname__ = f"_{cls_name}Slots"
    ann: dict[str, Any] = {name: annotations[name] for name in order}
    ann["_pbj_unknown"] = bytes
    ann["_pbj_size"] = int
    if ranges:
        # the extension values: a tuple of holder instances sorted by field number (pbj.extensions)
        ann["_pbj_extensions"] = tuple
    for name in slot_names:
        ns[name] = base.__dict__[name]  # the slots, also in the class's own namespace
    ns["__slots__"] = ()  # the base owns the slots: no __dict__, no __weakref__
    ns["__annotations__"] = ann
    ns["__match_args__"] = ()  # every field is keyword-only (what attrs would set)
    ns["__pbj_codec__"] = None
    for key, value in PROTOCOLS.items():  # copy.replace and pydantic (pbj.schema.protocols)
        ns.setdefault(key, value)
    # What first use replaces goes into the namespace as stand-ins holding a reference to the class
    # (setting a dunder on a class once made costs CPython a slot update per name).
    ref = ClassRef()
    ns.update(_deferred_attrs(ref, (tuple(order), defaults, bool(ranges)), qualname))
    eq, hash_, repr_ = stand_in_methods(ref, qualname)
    ns["__eq__"], ns["__hash__"], ns["__repr__"] = eq, hash_, _depth_limited(repr_)
    ns["__init__"] = bootstrap_init(ref, defaults, qualname)
    ns["__pbj_slots__"] = base
    declared = {f.name: f.default for f in fields_ if f.default is not None}
    ns["__pbj_defaults__"] = declared
    new_cls = ref.cls = type(cls_name, (base,), ns)
    new_cls.__pbj_info__ = MessageInfo(  # type: ignore[attr-defined]
        new_cls, info["full_name"], fields_, oneofs, order, syntax=info["syntax"], map_entry=info["map_entry"],
        message_set=info["message_set"], extension_ranges=ranges)
    if declared:
        complete_attrs(new_cls)  # install_defaults replaces methods attrs would add later
        install_defaults(new_cls, declared)
    return new_cls


#: What attrs adds to a class that pbj's own code may use before anything else of attrs':
#: each is a stand-in until attrs completes the class (see :func:`complete_attrs`).
_STAND_INS = ("__setattr__", "__delattr__", "__getstate__", "__setstate__")
_ATTRS_DATA = ("__attrs_attrs__", "__attrs_props__")


class _AttrsPending:
    """``__attrs_attrs__`` (or ``__attrs_props__``) of a class attrs has not completed yet: reading
    it (``attrs.fields``, ``attrs.has``, ``attrs.evolve``, cattrs ...) completes the class first."""

    __slots__ = ("name", "ref")

    def __init__(self, ref: ClassRef, name: str) -> None:
        self.ref = ref
        self.name = name

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        cls = self.ref.cls
        complete_attrs(cls)
        try:
            return cls.__dict__[self.name]
        except KeyError:  # what this attrs release does not add
            raise AttributeError(f"type object {cls.__qualname__!r} has no attribute {self.name!r}") from None


def _stand_in(ref: ClassRef, name: str, qualname: str) -> Any:
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        cls = ref.cls
        complete_attrs(cls)
        return getattr(cls, name)(self, *args, **kwargs)

    method.__name__ = name
    method.__qualname__ = f"{qualname}.{name}"
    return method


def _attrs_fields(order: tuple[str, ...], defaults: dict[str, Any], extensions: bool) -> dict[str, Any]:
    """attrs' fields of a message class (``these``), in slot order: the declared fields
    (keyword-only; a stand-in alias for a name attrs' own code uses), then the hidden ones."""
    import attrs  # on a class's first use of attrs only: ``import pbj`` does not load attrs
    these: dict[str, Any] = {}
    for i, name in enumerate(order, 1):
        alias = f"_pbj_alias_{i}" if _unsafe_for_attrs(name) else name
        these[name] = attrs.field(default=defaults[name], kw_only=True, alias=alias)
    these["_pbj_unknown"] = attrs.field(default=b"", eq=False, repr=False, kw_only=True, alias="_pbj_unknown")
    these["_pbj_size"] = attrs.field(default=-1, init=False, eq=False, repr=False)
    if extensions:
        # the extension values: compared, not shown (repr adds them as [pkg.ext]=value)
        these["_pbj_extensions"] = attrs.field(default=(), eq=True, repr=False, kw_only=True,
                                               alias="_pbj_extensions")
    return these


def _deferred_attrs(ref: ClassRef, recipe: tuple[tuple[str, ...], dict[str, Any], bool],
                    qualname: str) -> dict[str, Any]:
    """attrs' part of the class ``ref`` will hold (its fields, frozen ``__setattr__``, pickling
    state), left to its first use: the namespace entries that stand in for it.

    attrs builds its methods from source it compiles per class, which a load of hundreds of
    classes paid for all of them; decoding and encoding never use attrs. So the class gets
    stand-ins, each of which runs :func:`complete_attrs` and then does what attrs' own would.
    ``recipe`` is what :func:`_attrs_fields` needs: the declared names, their defaults, and
    whether the class has extension ranges.
    """
    entries: dict[str, Any] = {"__pbj_attrs_pending__": recipe}
    for name in _ATTRS_DATA:
        entries[name] = _AttrsPending(ref, name)
    for name in _STAND_INS:
        entries[name] = _stand_in(ref, name, qualname)
    return entries


def _built_aside(cls: type, recipe: tuple[tuple[str, ...], dict[str, Any], bool]) -> dict[str, Any]:
    """What attrs adds to ``cls`` (its fields, frozen ``__setattr__``, pickling state), built on a
    class of the same name and base made for the purpose: ``cls`` is not touched.

    Returns:
        attribute name -> value, for :func:`complete_attrs` to publish on ``cls``.
    """
    import attrs  # (see _attrs_fields)

    these = _attrs_fields(*recipe)
    aside = type(cls.__name__, (cls.__pbj_slots__,),  # type: ignore[attr-defined]
                 {"__slots__": (), "__module__": cls.__module__, "__qualname__": cls.__qualname__})
    before = set(aside.__dict__)
    attrs.define(these=these, frozen=True, slots=False, weakref_slot=False, eq=False, hash=False,
                 repr=False, init=False, auto_attribs=False, getstate_setstate=True, match_args=False)(aside)
    if any(map(_unsafe_for_attrs, these)):
        # give the stand-ins their real names back, as attrs.evolve and cattrs read them
        built = attrs.fields(aside)
        fixed = [a.evolve(alias=a.name) if a.name in these else a for a in built]
        aside.__attrs_attrs__ = type(built)(fixed)  # type: ignore[attr-defined]
    # pbj's own __init__ is used, not attrs' __attrs_init__
    return {k: v for k, v in aside.__dict__.items() if k not in before and k != "__attrs_init__"}


def complete_attrs(cls: type) -> None:
    """Make ``cls`` a complete attrs class (frozen, keyword-only fields, ``__getstate__``), once.

    The class stays the same object. attrs' part is built aside (:func:`_built_aside`), then
    published under a lock, one attribute at a time, each replacing its stand-in: a thread
    reading the class meanwhile finds either a stand-in (which waits for the lock, then runs
    the real method) or the real attribute, never neither (a frozen ``__setattr__`` missing
    would let an assignment through). The recipe goes last: an exception or a
    ``KeyboardInterrupt`` anywhere before leaves the class usable, and its next use completes it.
    Thread-safe; does nothing for a class already complete.
    """
    with FIRST_USE:
        recipe = cls.__dict__.get("__pbj_attrs_pending__")
        if recipe is None:
            return
        made = _built_aside(cls, recipe)
        for name, value in made.items():
            setattr(cls, name, value)
        for name in (*_STAND_INS, *_ATTRS_DATA):
            if name not in made and name in cls.__dict__:
                delattr(cls, name)  # what this attrs release does not add (__attrs_props__ in older ones)
        del cls.__pbj_attrs_pending__  # type: ignore[attr-defined]
