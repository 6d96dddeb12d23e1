"""Pickling and copying of loaded classes: a registry per load, and one of the last load per full name.

Every loaded class lives, for ``pickle``, in a module ``pbj._loaded.<package>``
(:data:`REGISTRY_MODULE`) that resolves names in a process-wide registry of the
last schema loaded for each full name. Instances pickle as their binary encoding
(read back by field number, so another version of the schema reads what it knows),
enum members as their number; both carry their full name *and* the load they come
from (a random token each load draws, the class's ``__pbj_load__``). Unpickling in the same process gives an object of
the very class it came from, even after the same schema was loaded again (a
second load makes new classes, which compare unequal to the first one's); a
load whose classes have all gone, and any other process, resolve the full name
to the last schema loaded there whose classes are still alive (``multiprocessing``
and ``concurrent.futures`` work when the worker loaded the schema). ``copy.copy`` and ``copy.deepcopy``
rebuild with ``type(obj)`` itself, with no name lookup at all.
"""

from __future__ import annotations

import copy
import sys
import threading
import types
import weakref
from collections.abc import Iterator, Mapping
from typing import Any

from pbj.schema.constructor import build_unvalidated
from pbj.schema.presence import stored_values

__all__ = ["REGISTRY_MODULE", "register", "loads_alive", "latest_loaded", "registry_module", "message_reduce",
           "message_copy", "message_deepcopy", "make_enum_reduce", "release_newest"]

#: The module every loaded class names as its ``__module__`` (plus ``.<package>``).
REGISTRY_MODULE = "pbj._loaded"

# The loads of this process still alive, oldest first (a load lives while its namespace or one
# of its classes does: each class keeps its load), and each by its token. Weak references: a
# schema whose classes are no longer used goes away whole, its registration with it.
_LOADS: list[weakref.ref] = []
_BY_TOKEN: weakref.WeakValueDictionary[str, Any] = weakref.WeakValueDictionary()
_registry_lock = threading.Lock()
# The newest load while it has built no class, held strongly: a worker's initializer that loads a schema
# and drops the namespace keeps it for the pickles its tasks receive (once a class is built, the classes
# keep their load alive).
_NEWEST: list[Any] = []


def register(schema: Any) -> None:
    """Make the classes of a finished load (a :class:`~pbj.loader.schema.LoadedSchema`) the ones
    pickles of their names resolve to, ahead of every earlier load; its classes are built on
    demand, when a pickle asks for one. The newest load stays alive until another load is
    registered (older ones live while their namespace or a class of theirs does)."""
    with _registry_lock:
        _NEWEST[:] = [schema]
        _LOADS[:] = [ref for ref in _LOADS if ref() is not None]
        _LOADS.append(weakref.ref(schema))
        _BY_TOKEN[schema.token] = schema


def release_newest(schema: Any) -> None:
    """Stop holding ``schema`` strongly (its first class is built: the classes hold it from now on)."""
    with _registry_lock:
        if _NEWEST and _NEWEST[0] is schema:
            _NEWEST.clear()


def _live_loads() -> list[Any]:
    """The loads alive, newest first."""
    with _registry_lock:
        refs = list(_LOADS)
    return [s for s in (ref() for ref in reversed(refs)) if s is not None]


def loads_alive() -> tuple[Any, ...]:
    """The loads registered and still alive, newest first (what a failed load must not change); holding
    the tuple keeps them alive."""
    return tuple(_live_loads())


def _owner(full_name: str) -> Any:
    """The newest live load that offers ``full_name`` as a class of its own, or ``None``."""
    for schema in _live_loads():
        if full_name in schema and full_name not in schema.known:
            return schema
    return None


class _Registry(Mapping):
    """Full name -> the class of the newest live load offering it (read by the tests, the fuzz targets and
    ``Any``'s resolution); looking a name up builds its class."""

    def __getitem__(self, full_name: str) -> Any:
        found = latest_loaded(full_name)
        if found is None:
            raise KeyError(full_name)
        return found

    def __contains__(self, full_name: object) -> bool:
        return isinstance(full_name, str) and _owner(full_name) is not None

    def __iter__(self) -> Iterator[str]:
        seen: set[str] = set()
        for schema in _live_loads():
            for name in (*schema.message_names, *schema.enum_names):
                if name not in seen and name not in schema.known:
                    seen.add(name)
                    yield name

    def __len__(self) -> int:
        return sum(1 for _ in self)


_REGISTRY = _Registry()


class _RegistryModule(types.ModuleType):
    """``pbj._loaded[.<package>]``: resolves loaded classes by name, for ``pickle``."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        prefix = self.__name__[len(REGISTRY_MODULE) + 1:]
        full = f"{prefix}.{name}" if prefix else name
        found = latest_loaded(full)
        if found is None:
            raise AttributeError(f"{full!r} is not loaded in this process; load its schema with "
                                 "pbj.load_descriptor_set or pbj.load_proto first")
        return found


def registry_module(package: str) -> str:
    """Make sure ``pbj._loaded.<package>`` and its parents are importable; return its name."""
    name = REGISTRY_MODULE
    parts = [REGISTRY_MODULE, *package.split(".")] if package else [REGISTRY_MODULE]
    for i in range(len(parts)):
        name = ".".join(parts[: i + 1])
        if name not in sys.modules:
            sys.modules[name] = _RegistryModule(name, "classes loaded by pbj.loader, by package")
    return name


def latest_loaded(full_name: str) -> Any:
    """The class or enum ``full_name`` of the newest load still alive that offers it (built now if need
    be), or None."""
    schema = _owner(full_name)
    return None if schema is None else schema.get(full_name)


def _lookup_loaded(full_name: str, load: str | None = None) -> Any:
    schema = _BY_TOKEN.get(load) if load is not None else None
    found = schema.get(full_name) if schema is not None else None
    if found is None:
        found = latest_loaded(full_name)
    if found is None:
        raise LookupError(f"cannot unpickle {full_name!r}: its schema is not loaded in this process "
                          "(load it with pbj.load_descriptor_set or pbj.load_proto first)")
    return found


def _restore_message(full_name: str, values: tuple, unknown: bytes, extensions: tuple = (),
                     load: str | None = None) -> Any:
    """Rebuild a pickled instance of a loaded message class (``__reduce__`` target).

    ``extensions`` are its extensions as ``(field number, value)`` pairs, read back with the
    extensions the class of this process registers. ``load`` is the token of the load the
    instance came from: its class when that load is alive in this process, else the last
    class loaded under ``full_name`` (pickles written before tokens existed have none).

    Raises:
        LookupError: no schema of that name is loaded, or an extension is not registered.
    """
    return _rebuild(_lookup_loaded(full_name, load), full_name, values, unknown, extensions)


def _rebuild(cls: Any, full_name: str, values: tuple, unknown: bytes, extensions: tuple) -> Any:
    more = {}
    if extensions:
        registry = cls.__pbj_info__.extensions
        missing = [n for n, _ in extensions if n not in registry]
        if missing:
            raise LookupError(f"cannot unpickle {full_name!r}: no extension numbered {missing[0]} is loaded")
        more["_pbj_extensions"] = {registry[n]: v for n, v in extensions}
    fields = dict(zip(cls.__pbj_info__.attr_order, values, strict=True))
    if unknown and _reads_some_of(cls, unknown):
        # Pickled where the schema did not know a field this one knows: read those fields as
        # the parser would ("Message Merging": the bytes of the unknown fields come last).
        from pbj.api import decode, encode
        known = encode(build_unvalidated(cls, {**fields, **more}), allow_partial=True)
        return decode(cls, known + unknown, allow_partial=True)
    return build_unvalidated(cls, {**fields, "_pbj_unknown": unknown, **more})


def _reads_some_of(cls: Any, unknown: bytes) -> bool:
    from pbj.schema.constructor import known_tag
    from pbj.schema.resolve import resolve
    from pbj.wire import check_fields

    return known_tag(resolve(cls), check_fields(unknown)) is not None


def _restore_enum(full_name: str, number: int, load: str | None = None) -> Any:
    """Rebuild a pickled member of a loaded enum (``__reduce_ex__`` target); ``load`` as in
    :func:`_restore_message`."""
    return _lookup_loaded(full_name, load)(number)


def _state(self: Any) -> tuple[str, tuple, bytes, tuple]:
    mi = type(self).__pbj_info__
    pairs: tuple = ()
    if mi.extension_ranges and self._pbj_extensions:
        pairs = tuple((h.__pbj_extension__.number, h.__pbj_extension__.value_of(h)) for h in self._pbj_extensions)
    return mi.full_name, stored_values(self, mi.attr_order), self._pbj_unknown, pairs


def _restore_encoded(full_name: str, data: bytes, load: str | None = None) -> Any:
    """Rebuild a pickled instance of a loaded message class from its binary encoding
    (``__reduce__`` target); ``load`` as in :func:`_restore_message`.

    The class found reads the bytes as its parser does, so a pickle made with another version
    of the schema (another process) keeps each value by field number ("Updating A Message
    Type"): a field this schema does not know stays an unknown field, one it knows is read.

    Raises:
        LookupError: no schema of that name is loaded.
        DecodeError: the bytes do not decode with this process's schema of that name.
    """
    from pbj.api import decode

    return decode(_lookup_loaded(full_name, load), data, allow_partial=True)


def message_reduce(self: Any) -> tuple:
    """``__reduce__`` of a loaded message: its full name, binary encoding (required fields
    may be missing) and load token (see the module docstring)."""
    from pbj.api import encode

    return (_restore_encoded, (type(self).__pbj_info__.full_name, encode(self, allow_partial=True),
                               type(self).__dict__.get("__pbj_load__")))


def message_copy(self: Any) -> Any:
    """``copy.copy`` of a loaded message: a new instance of ``type(self)``, with the same values."""
    return _rebuild(type(self), *_state(self))


def message_deepcopy(self: Any, memo: dict) -> Any:
    """``copy.deepcopy`` of a loaded message: ``type(self)`` again, its values deep-copied."""
    full, values, unknown, pairs = _state(self)
    return _rebuild(type(self), full, copy.deepcopy(values, memo), unknown, copy.deepcopy(pairs, memo))


def make_enum_reduce(full_name: str):
    """``__reduce_ex__`` of a loaded enum: its full name, number and load token."""
    def __reduce_ex__(self: Any, protocol: int) -> tuple:
        return (_restore_enum, (full_name, int(self), type(self).__dict__.get("__pbj_load__")))
    return __reduce_ex__
