"""The engine pbj encodes and decodes with: one object, chosen once and switched as a whole.

An :class:`Engine` carries the entry points ``pbj.api`` calls before the pure-Python engine's
generated code: ``decode(plan, data, max_depth) -> obj | None``, ``encode(plan, obj) -> bytes |
None`` and ``write_reverse(plan, obj, buf, pos) -> pos | None``, where ``plan`` is a codec's
``native`` form (:mod:`pbj.codec.compiler`, ``Codec.native``) and ``None`` means "run the
pure-Python engine on the same input". The pure-Python engine, :data:`PYTHON`, has none of them:
``pbj.api`` then runs the generated code directly. The native engine (:mod:`pbj._native`) makes
its own :class:`Engine` and selects it with :func:`select` when it is imported.

``pbj.api`` reads :data:`CURRENT` once per call, so a switch from another thread (``use_engine``)
never leaves a call with half of one engine and half of the other.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["Engine", "PYTHON", "CURRENT", "select", "ENTRY_POINTS"]


class Engine:
    """One engine's entry points (``None``: the engine has none, the generated Python code runs).

    Attributes:
        name: ``"native"`` or ``"python"``.
        decode: ``decode(plan, data, max_depth) -> obj | None``.
        encode: ``encode(plan, obj) -> bytes | None`` (forward writer).
        write_reverse: ``write_reverse(plan, obj, buf, pos) -> pos | None`` (reverse writer).
    """

    __slots__ = ("decode", "encode", "name", "write_reverse")

    def __init__(self, name: str, decode: Callable[..., Any] | None = None, encode: Callable[..., Any] | None = None,
                 write_reverse: Callable[..., Any] | None = None) -> None:
        self.name = name
        self.decode = decode
        self.encode = encode
        self.write_reverse = write_reverse


#: The pure-Python engine: no entry point of its own, the generated code runs.
PYTHON = Engine("python")


class _Current:
    __slots__ = ("engine",)

    def __init__(self) -> None:
        self.engine = PYTHON


#: The engine in use (``CURRENT.engine``), in every thread.
CURRENT = _Current()


#: The native engine and its maker of C entry points, ``(engine, make)``, set when the extension is
#: imported (:mod:`pbj._native`, before :mod:`pbj.api`); ``None`` when it is not built. :mod:`pbj.api`
#: calls ``make(engine, CURRENT, ...)`` to replace its Python ``decode`` and ``encode`` by builtins that
#: answer the common call in C when ``engine`` is in use (``pbj/_native/entry.c``).
ENTRY_POINTS: tuple[Engine, Callable[..., Any]] | None = None


def select(engine: Engine) -> None:
    """Use ``engine`` from now on, in every thread."""
    CURRENT.engine = engine
