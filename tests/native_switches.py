"""A second module object of the native engine, made with its test switches set.

The engine keeps its state in its module object (PEP 489, ``pbj/_native/module.c``) and reads two
switches from the environment once, when a module object is executed: ``PBJ_NATIVE_SHARE_MIN``
(inputs of at least that many bytes share repeated sub-messages) and ``PBJ_NATIVE_UNTRACK``
(decoded messages are left untracked by the cyclic GC). They are not entry points of the shipped
module: a test that needs them makes a module object of its own here, whose ``decode(plan, data,
max_depth)`` runs the plans pbj built (with ``pbj._native._engine``) under those switches.
"""

from __future__ import annotations

import functools
import importlib.util
import os
from typing import Any

from pbj import _native
from pbj.errors import DecodeError
from pbj.schema import EMPTY_MAP, FrozenMap, OneOf


@functools.cache
def engine_with(**switches: int) -> Any:
    """A new module object of ``pbj._native._engine`` executed with ``PBJ_NATIVE_<NAME>`` set to each value.

    Its ``decode`` reads the plans of the main module; nothing of the main module changes.
    """
    spec = importlib.util.find_spec("pbj._native._engine")
    assert spec is not None and spec.loader is not None
    names = {f"PBJ_NATIVE_{k.upper()}": str(v) for k, v in switches.items()}
    saved = {k: os.environ.get(k) for k in names}
    os.environ.update(names)
    try:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    assert module is not _native._engine
    module.setup(FrozenMap, OneOf, EMPTY_MAP, DecodeError, _native.layout())
    return module
