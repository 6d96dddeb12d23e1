"""Run the Python source :mod:`pbj.schema` generates for a message class, readable in tracebacks.

The checking ``__init__`` (:mod:`pbj.schema.constructor`) and ``__eq__``/``__hash__``/``__repr__``
(:mod:`pbj.schema.methods`) are generated per class. Their source is compiled under a file name
of its own (``<pbj generated init pkg.Cls>``) and registered in :mod:`linecache`, so a traceback
and ``inspect.getsource`` show the generated lines, as attrs does for its methods; the entry goes
when the class does.

What a class builds on its first use (attrs' part, :func:`pbj.schema.make_class.complete_attrs`;
``__eq__``, ``__hash__`` and ``__repr__``, :mod:`pbj.schema.methods`) is built and published
under :data:`FIRST_USE`, so threads using a new class at once build it once and never see it
half-built.
"""

from __future__ import annotations

import linecache
import threading
import types
import weakref
from typing import Any

__all__ = ["run_source", "FIRST_USE", "ClassRef"]

#: Held while a class's first-use parts are built and published (re-entrant: building one part
#: may complete another, as ``__eq__`` reads attrs' fields).
FIRST_USE = threading.RLock()

_filenames: set[str] = set()


class ClassRef:
    """The class a namespace is being made for, set once ``type()`` has made it.

    A message class's stand-ins (the first ``__init__``, ``__eq__``, ``__hash__``, ``__repr__``,
    attrs' parts) go into its namespace before the class exists, each holding this reference:
    setting them on the class afterwards costs CPython a slot update per name.
    """

    __slots__ = ("cls",)

    cls: type


def _filename(cls: type, kind: str) -> str:
    """A file name no other live generated source holds: ``<pbj generated KIND module.Qualname>``
    (``-2``, ``-3`` ... before the ``>`` for another class of the same name)."""
    base = f"<pbj generated {kind} {cls.__module__}.{cls.__qualname__}>"
    name, n = base, 1
    while name in _filenames:
        n += 1
        name = f"{base[:-1]}-{n}>"
    _filenames.add(name)
    return name


def _forget(filename: str) -> None:
    linecache.cache.pop(filename, None)
    _filenames.discard(filename)


#: Compiled generated sources, by their text: classes of one shape (the same fields, as a schema's
#: ``proto3`` and ``editions`` copies of one message) generate the same text, compiled once.
#: Bounded: the oldest entry goes first.
_CODE: dict[str, types.CodeType] = {}
_CODE_ENTRIES = 256


def _named(code: types.CodeType, filename: str) -> types.CodeType:
    """``code`` and the code objects it defines (its functions), under the file name ``filename``."""
    consts = tuple(_named(c, filename) if isinstance(c, types.CodeType) else c for c in code.co_consts)
    return code.replace(co_filename=filename, co_consts=consts)


def _compiled(source: str, filename: str) -> types.CodeType:
    """The code of ``source`` under ``filename``: compiled once per text (:data:`_CODE`), renamed per use."""
    code = _CODE.get(source)
    if code is None:
        code = compile(source, "<pbj generated>", "exec")
        if len(_CODE) >= _CODE_ENTRIES:
            _CODE.pop(next(iter(_CODE)), None)
        _CODE[source] = code
    return _named(code, filename)


def run_source(cls: type, kind: str, source: str, globals_: dict[str, Any]) -> None:
    """Compile and run ``source`` (pbj's own generated text) in ``globals_``, registered in
    :mod:`linecache` under a file name naming ``kind`` (``"init"``, ``"eq"`` ...) and ``cls``
    for as long as ``cls`` lives. What it defines is left in ``globals_``. A text run before
    (another class of the same shape) is not compiled again: its code is reused under this
    class's file name."""
    with FIRST_USE:  # two threads compiling at once take two names
        filename = _filename(cls, kind)
    exec(_compiled(source, filename), globals_)  # our own generated source
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    weakref.finalize(cls, _forget, filename)  # a class loaded and dropped leaves nothing behind
