"""The classes an ``Any`` can hold in ProtoJSON, by protobuf full name ("ProtoJSON Format", "Any").

An ``Any``'s JSON form names its type by URL (``type.googleapis.com/pkg.Msg``) and
writes the value's fields beside ``"@type"``, so reading or writing one needs the
class of that full name. It is found, in order: among classes given to
:func:`register_types`, in the loader's registry of the last schema loaded with
that name, among the classes the converters have met, then among :mod:`pbj.wellknown`.
"""

from __future__ import annotations

import threading
import weakref

from pbj import loader
from pbj.loader.pickling import latest_loaded
from pbj.schema import info, is_message

__all__ = ["register_types", "type_registry", "resolve_any", "remember"]

_registered: dict[str, type] = {}  # register_types (the user asked for these: kept)
# classes the converters met, and pbj.wellknown; weak values: a class unused elsewhere is not kept
# alive by having been met here
_registry: weakref.WeakValueDictionary[str, type] = weakref.WeakValueDictionary()
_registry_lock = threading.Lock()
_wellknown_loaded = False


def register_types(*classes: type) -> None:
    """Make message classes known to ``Any``'s ``"@type"`` resolution by their full name.

    Every class ``to_dict``/``from_dict`` has met, every class loaded with
    ``pbj.load_descriptor_set``/``pbj.load_proto`` and the classes of
    :mod:`pbj.wellknown` are known already; register hand-declared classes
    an ``Any`` may hold that the converter has not met yet.

    Raises:
        TypeError: an argument is not a pbj message class.
    """
    for cls in classes:
        _registered[info(cls).full_name] = cls


def remember(full_name: str, cls: type) -> None:
    """Register ``cls`` under ``full_name`` unless a class of that name is registered already."""
    _registry.setdefault(full_name, cls)


def type_registry() -> dict[str, type]:
    """The classes ``Any`` resolves, by protobuf full name (a copy)."""
    _load_wellknown()
    loaded = {name: cls for name, cls in list(loader._REGISTRY.items()) if is_message(cls)}
    return {**_registry, **loaded, **_registered}


def _load_wellknown() -> None:
    global _wellknown_loaded
    if _wellknown_loaded:
        return
    with _registry_lock:
        if _wellknown_loaded:
            return
        try:
            from pbj.wellknown import WELL_KNOWN
        except ImportError:  # pragma: no cover - pbj.wellknown is part of the package
            WELL_KNOWN = {}
        for name, cls in WELL_KNOWN.items():
            _registry.setdefault(name, cls)
        _wellknown_loaded = True


def resolve_any(type_url: str) -> type | None:
    """The message class named by an ``Any``'s type URL (see the module's order), or ``None``."""
    name = type_url.rpartition("/")[2]
    cls = _registered.get(name)
    if cls is not None:
        return cls
    found = latest_loaded(name)  # the last schema loaded (load_descriptor_set / load_proto) still alive
    if found is not None and is_message(found):
        return found
    cls = _registry.get(name)
    if cls is None:
        _load_wellknown()
        cls = _registry.get(name)
    return cls
