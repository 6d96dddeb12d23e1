"""Pickling of loaded classes: a registry of the last schema loaded per full name.

Every loaded class lives, for ``pickle``, in a module ``pbj._loaded.<package>``
(:data:`REGISTRY_MODULE`) that resolves names in a process-wide registry of the
last schema loaded for each full name. Instances and enum members pickle by
full name, so another process that loaded the same schema unpickles them into
its own classes (``multiprocessing`` and ``concurrent.futures`` work).
"""

from __future__ import annotations

import sys
import threading
import types
import weakref
from typing import Any

from pbj.schema.presence import stored_values

__all__ = ["REGISTRY_MODULE", "register", "registry_module", "message_reduce", "make_enum_reduce"]

#: The module every loaded class names as its ``__module__`` (plus ``.<package>``).
REGISTRY_MODULE = "pbj._loaded"

# Full name -> the latest loaded class or enum of that name, for pickle.
# Weak values: a schema whose classes are no longer used goes away whole (its registration with it).
_REGISTRY: weakref.WeakValueDictionary[str, Any] = weakref.WeakValueDictionary()
_registry_lock = threading.Lock()


def register(classes: dict[str, Any]) -> None:
    """Make ``classes`` (full name -> class or enum) the ones pickles of those names resolve to."""
    with _registry_lock:
        for full, cls in classes.items():
            _REGISTRY[full] = cls


class _RegistryModule(types.ModuleType):
    """``pbj._loaded[.<package>]``: resolves loaded classes by name, for ``pickle``."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        prefix = self.__name__[len(REGISTRY_MODULE) + 1:]
        full = f"{prefix}.{name}" if prefix else name
        found = _REGISTRY.get(full)
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


def _lookup_loaded(full_name: str) -> Any:
    found = _REGISTRY.get(full_name)
    if found is None:
        raise LookupError(f"cannot unpickle {full_name!r}: its schema is not loaded in this process "
                          "(load it with pbj.load_descriptor_set or pbj.load_proto first)")
    return found


def _restore_message(full_name: str, values: tuple, unknown: bytes, extensions: tuple = ()) -> Any:
    """Rebuild a pickled instance of a loaded message class (``__reduce__`` target).

    ``extensions`` are its extensions as ``(field number, value)`` pairs, read back with the
    extensions the class of this process registers.
    """
    cls = _lookup_loaded(full_name)
    more = {}
    if extensions:
        registry = cls.__pbj_info__.extensions
        missing = [n for n, _ in extensions if n not in registry]
        if missing:
            raise LookupError(f"cannot unpickle {full_name!r}: no extension numbered {missing[0]} is loaded")
        more["_pbj_extensions"] = {registry[n]: v for n, v in extensions}
    return cls(**dict(zip(cls.__pbj_info__.attr_order, values, strict=True)), _pbj_unknown=unknown, **more)


def _restore_enum(full_name: str, number: int) -> Any:
    """Rebuild a pickled member of a loaded enum (``__reduce_ex__`` target)."""
    return _lookup_loaded(full_name)(number)


def message_reduce(self: Any) -> tuple:
    mi = type(self).__pbj_info__
    values = stored_values(self, mi.attr_order)
    if mi.extension_ranges and self._pbj_extensions:
        pairs = tuple((h.__pbj_extension__.number, h.__pbj_extension__.value_of(h)) for h in self._pbj_extensions)
        return (_restore_message, (mi.full_name, values, self._pbj_unknown, pairs))
    return (_restore_message, (mi.full_name, values, self._pbj_unknown))


def make_enum_reduce(full_name: str):
    def __reduce_ex__(self: Any, protocol: int) -> tuple:
        return (_restore_enum, (full_name, int(self)))
    return __reduce_ex__
