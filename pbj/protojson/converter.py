"""One cattrs converter per set of options, whose hooks for pbj message classes are built on first use.

cattrs is the dispatch and caching engine: each converter's hook *factories*
match pbj message classes and build a class's writer and reader once
(:mod:`pbj.protojson.messages`); cattrs caches them per class, so later calls
never look at the schema again.
"""

from __future__ import annotations

import threading

import cattrs

from pbj.protojson.messages import build_reader, build_writer
from pbj.protojson.values import Options, is_message_class

__all__ = ["converter"]

_converters_lock = threading.Lock()


def converter(key: tuple, cls: type) -> cattrs.Converter:
    """The converter of the options ``(emit_defaults, proto_names, enums_as_numbers, ignore_unknown)``
    used from message class ``cls``.

    Kept on the class (``__pbj_json__``), not in a process-wide table: its
    hooks refer to the classes it has met, which must be free to go when
    their schema is no longer used.
    """
    per_class = cls.__dict__.get("__pbj_json__")
    conv = per_class.get(key) if per_class is not None else None
    if conv is not None:
        return conv
    with _converters_lock:
        per_class = cls.__dict__.get("__pbj_json__")
        if per_class is None:
            per_class = {}
            type.__setattr__(cls, "__pbj_json__", per_class)
        conv = per_class.get(key)
        if conv is None:
            conv = per_class[key] = _make_converter(Options(*key))
    return conv


def _make_converter(opts: Options) -> cattrs.Converter:
    """A cattrs converter whose hooks for pbj message classes are built per class on first use."""
    conv = cattrs.Converter()
    conv.register_unstructure_hook_factory(is_message_class, lambda cls: build_writer(cls, conv, opts))
    conv.register_structure_hook_factory(is_message_class, lambda cls: build_reader(cls, conv, opts))
    return conv
