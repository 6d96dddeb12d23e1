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

_converters: dict[tuple, cattrs.Converter] = {}
_converters_lock = threading.Lock()


def converter(key: tuple) -> cattrs.Converter:
    """The converter of the options ``(emit_defaults, proto_names, enums_as_numbers, ignore_unknown)``."""
    conv = _converters.get(key)
    if conv is not None:
        return conv
    with _converters_lock:
        conv = _converters.get(key)
        if conv is None:
            conv = _make_converter(Options(*key))
            _converters[key] = conv
    return conv


def _make_converter(opts: Options) -> cattrs.Converter:
    """A cattrs converter whose hooks for pbj message classes are built per class on first use."""
    conv = cattrs.Converter()
    conv.register_unstructure_hook_factory(is_message_class, lambda cls: build_writer(cls, conv, opts))
    conv.register_structure_hook_factory(is_message_class, lambda cls: build_reader(cls, conv, opts))
    return conv
