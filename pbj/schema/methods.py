"""``__eq__``, ``__hash__`` and ``__repr__`` of a message class, compiled on first call.

attrs would compile them (and an ``__attrs_init__`` pbj discards) for every class when it
is made: a load of a few hundred classes spent about half its time in ``compile()`` for
methods most programs never call on most classes. So :func:`make_class` asks attrs for none
of them, and :func:`stand_in_methods` gives the class three small stand-ins; the first call
of each emits the method's source (:func:`method_source`, plain text, testable on its own),
compiles it, registers it in ``linecache`` as ``<pbj generated eq module.Qualname>`` (so
tracebacks and ``inspect.getsource`` show it), installs it on the class in place of the
stand-in and runs it, under :data:`~pbj.schema.generated.FIRST_USE`: once, whatever the
number of threads calling at once; an interrupted compile leaves the stand-in. The compiled
methods are those attrs writes, with the same meaning:

* ``__eq__``: ``NotImplemented`` for another class, else ``self.a == other.a and ...``
  over the fields attrs compares (``eq=True``), in order;
* ``__hash__``: the hash of a tuple of a per-class salt and those fields;
* ``__repr__``: ``Name(a=..., b=...)`` over the fields attrs shows (``repr=True``), with
  ``...`` for an instance already being shown by the same thread.

A class whose field names are not plain identifiers (names Python would normalise) gets
methods that read the slots through their descriptors instead of compiled code.
"""

from __future__ import annotations

import keyword
import threading
import unicodedata
from collections.abc import Callable
from typing import Any

from pbj.schema.generated import FIRST_USE, ClassRef, run_source

__all__ = ["stand_in_methods", "method_source"]

_KINDS = ("eq", "hash", "repr")


def _plain(name: str) -> bool:
    return name.isidentifier() and not keyword.iskeyword(name) and unicodedata.normalize("NFKC", name) == name


def method_source(kind: str, eq_names: tuple[str, ...], repr_names: tuple[str, ...]) -> str:
    """The source text of the ``kind`` method (``"eq"``, ``"hash"`` or ``"repr"``).

    Args:
        kind: which method.
        eq_names: the attribute names compared and hashed, in order (plain identifiers).
        repr_names: the attribute names shown by ``repr``, in order (plain identifiers).

    Returns:
        Python source defining ``__eq__``, ``__hash__`` or ``__repr__``; the hash reads the
        global ``_pbj_salt``, the repr the global ``_pbj_showing`` (a thread-local).

    Raises:
        ValueError: ``kind`` is none of the three.
    """
    if kind == "eq":
        test = " and\n        ".join(f"self.{n} == other.{n}" for n in eq_names) or "True"
        return ("def __eq__(self, other):\n"
                "    if other.__class__ is not self.__class__:\n"
                "        return NotImplemented\n"
                f"    return (\n        {test}\n    )\n")
    if kind == "hash":
        values = "".join(f"self.{n}, " for n in eq_names)
        return f"def __hash__(self):\n    return hash((_pbj_salt, {values}))\n"
    if kind == "repr":
        body = ", ".join(f"{n}={{self.{n}!r}}" for n in repr_names)
        return ("def __repr__(self):\n"
                "    showing = _pbj_showing.__dict__.setdefault('ids', set())\n"
                "    if id(self) in showing:\n"
                "        return '...'\n"
                "    showing.add(id(self))\n"
                "    try:\n"
                f"        return f'{{self.__class__.__qualname__.rsplit(\">.\", 1)[-1]}}({body})'\n"
                "    finally:\n"
                "        showing.discard(id(self))\n")
    raise ValueError(f"no method kind {kind!r} (one of {', '.join(_KINDS)})")


_showing = threading.local()


def _names(cls: type) -> tuple[tuple[str, ...], tuple[str, ...]]:
    recipe = cls.__dict__.get("__pbj_attrs_pending__")
    if recipe is not None:  # the names attrs would give (make_class's fields), without importing attrs
        order, _, extensions = recipe
        return (*order, *(("_pbj_extensions",) if extensions else ())), tuple(order)
    attributes = cls.__attrs_attrs__  # type: ignore[attr-defined]
    return tuple(a.name for a in attributes if a.eq), tuple(a.name for a in attributes if a.repr)


def _generic(kind: str, cls: type, eq_names: tuple[str, ...], repr_names: tuple[str, ...]) -> Callable[..., Any]:
    """The ``kind`` method reading the slots through their descriptors (any attribute names)."""
    slots = cls.__pbj_slots__  # type: ignore[attr-defined]
    getters = tuple(slots.__dict__[n].__get__ for n in eq_names)
    shown = tuple((n, slots.__dict__[n].__get__) for n in repr_names)
    salt = hash(cls.__qualname__)

    def __eq__(self: Any, other: Any) -> Any:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(g(self) == g(other) for g in getters)

    def __hash__(self: Any) -> int:
        return hash((salt, *(g(self) for g in getters)))

    def __repr__(self: Any) -> str:
        showing = _showing.__dict__.setdefault("ids", set())
        if id(self) in showing:
            return "..."
        showing.add(id(self))
        try:
            body = ", ".join(f"{n}={g(self)!r}" for n, g in shown)
            return f"{self.__class__.__qualname__.rsplit('>.', 1)[-1]}({body})"
        finally:
            showing.discard(id(self))

    methods: dict[str, Callable[..., Any]] = {"eq": __eq__, "hash": __hash__, "repr": __repr__}
    return methods[kind]


def compile_method(cls: type, kind: str) -> Callable[..., Any]:
    """Emit and compile the ``kind`` method of ``cls`` (see :func:`method_source`).

    Returns:
        The function (not yet installed on the class).
    """
    eq_names, repr_names = _names(cls)
    if not all(map(_plain, (*eq_names, *repr_names))):
        fn = _generic(kind, cls, eq_names, repr_names)
    else:
        source = method_source(kind, eq_names, repr_names)
        globals_: dict[str, Any] = {"_pbj_salt": hash(cls.__qualname__), "_pbj_showing": _showing}
        run_source(cls, kind, source, globals_)
        fn = globals_[f"__{kind}__"]
    fn.__qualname__ = f"{cls.__qualname__}.__{kind}__"
    return fn


def _installed(cls: type, kind: str, stand_in: Callable[..., Any]) -> Callable[..., Any]:
    """The ``kind`` method of ``cls``: compiled and installed in place of ``stand_in`` by the first
    caller, under :data:`~pbj.schema.generated.FIRST_USE` (threads calling at once compile it once;
    an interrupted compile leaves the stand-in, and the next call compiles)."""
    name = f"__{kind}__"
    with FIRST_USE:
        fn = cls.__dict__.get(name)
        if fn is stand_in:
            fn = compile_method(cls, kind)
            setattr(cls, name, fn)
    return fn  # type: ignore[return-value]


def stand_in_methods(ref: ClassRef, qualname: str) -> tuple[Callable[..., Any], Callable[..., Any], Callable[..., str]]:
    """Stand-in ``__eq__`` and ``__hash__`` for the namespace of the class ``ref`` will hold (named
    ``qualname``), which compile the real ones on first call, and the repr body.

    Returns:
        ``(__eq__, __hash__, repr body)``: the repr body (``Name(a=..., ...)``, compiled on its
        first call) is for the caller to wrap (:mod:`pbj.schema.make_class` limits its depth and
        adds extensions) and put in the namespace.
    """

    def __eq__(self: Any, other: Any) -> Any:
        return _installed(ref.cls, "eq", __eq__)(self, other)

    def __hash__(self: Any) -> int:
        return _installed(ref.cls, "hash", __hash__)(self)  # type: ignore[no-any-return]

    compiled: list[Callable[..., str]] = []

    def __repr__(self: Any) -> str:
        if not compiled:
            with FIRST_USE:
                if not compiled:
                    compiled.append(compile_method(ref.cls, "repr"))
        return compiled[0](self)

    for fn in (__eq__, __hash__, __repr__):
        fn.__qualname__ = f"{qualname}.{fn.__name__}"
    return __eq__, __hash__, __repr__
