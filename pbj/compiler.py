"""The codec compiler: builds, on first use, the specialised functions of a message class.

``compile_class(cls)`` resolves the class's schema, then generates (as Python
source), compiles and registers the functions of every message class it can
reach that has none yet: ``size_<Name>``, ``write_<Name>`` (forward writer,
:mod:`pbj.forward`), ``write_reverse_<Name>`` (:mod:`pbj.reverse`) and
``parse_<Name>`` (:mod:`pbj.parser`), plus the per-member functions of its
oneofs. The generated code looks at values only: tag bytes, field order,
sizes of fixed-width values and the oneof dispatch tables are decided here.

Each class's source is registered in :mod:`linecache` under the file name
``<pbj generated codec full.Name>``, so tracebacks show the generated lines
and ``inspect.getsource`` works on every generated function.
"""

from __future__ import annotations

import linecache
import threading
from typing import Any

from pbj import forward, parser, reverse
from pbj.codegen import GENERATED, codec_name
from pbj.schema import MessageInfo, resolve

__all__ = ["Codec", "compile_class", "codec_of", "source_of"]

_lock = threading.RLock()
_sources: dict[type, str] = {}


class Codec:
    """The compiled functions of one message class (its ``__pbj_codec__``).

    Attributes:
        size: ``size(o) -> int`` (caches the size on ``o``).
        write: ``write(o, ap) -> None`` (forward writer; sizes must be cached).
        write_reverse: ``write_reverse(o, rb, pos) -> pos``.
        parse: ``parse(data, pos, end, depth, more) -> obj``.
        name: the stem of the generated functions' names.
    """

    __slots__ = ("name", "parse", "size", "write", "write_reverse")

    def __init__(self, name: str) -> None:
        self.name = name
        self.size = GENERATED[f"size_{name}"]
        self.write = GENERATED[f"write_{name}"]
        self.write_reverse = GENERATED[f"write_reverse_{name}"]
        self.parse = GENERATED[f"parse_{name}"]


def _reachable(cls: type) -> list[MessageInfo]:
    """Every message class reachable from ``cls`` that has no codec yet, resolved."""
    out: list[MessageInfo] = []
    seen: set[type] = set()
    stack = [cls]
    while stack:
        c = stack.pop()
        if c in seen or c.__dict__.get("__pbj_codec__") is not None:
            continue
        seen.add(c)
        mi = resolve(c)
        out.append(mi)
        for f in mi.all_fields():
            for t in (f.type, f.map_value):
                if isinstance(t, type) and hasattr(t, "__pbj_info__"):
                    stack.append(t)
    return out


def class_source(mi: MessageInfo) -> str:
    """The whole generated source of one class (every function, in one text)."""
    return "\n".join([
        forward.emit_size(mi),
        forward.emit_write(mi),
        forward.emit_oneof_members(mi),
        reverse.emit_write_reverse(mi),
        reverse.emit_reverse_oneof_members(mi),
        parser.emit_parse(mi),
    ])


def _exec(mi: MessageInfo, text: str) -> None:
    filename = f"<pbj generated codec {mi.full_name}>"
    code = compile(text, filename, "exec")
    linecache.cache[filename] = (len(text), None, text.splitlines(keepends=True), filename)
    exec(code, GENERATED)


def compile_class(cls: type) -> Codec:
    """Compile (once) the codec of ``cls`` and of every class it reaches.

    Returns:
        The class's :class:`Codec`, also stored as ``cls.__pbj_codec__``.

    Raises:
        SchemaError: a forward reference cannot be resolved or names a wrong type.
    """
    with _lock:
        codec = cls.__dict__.get("__pbj_codec__")
        if codec is not None:
            return codec
        infos = _reachable(cls)
        for mi in infos:
            codec_name(mi.cls)
        for mi in infos:
            text = class_source(mi)
            _sources[mi.cls] = text
            _exec(mi, text)
        for mi in infos:
            forward.oneof_tables(mi)
        for mi in infos:
            mi.cls.__pbj_codec__ = Codec(codec_name(mi.cls))
        return cls.__pbj_codec__


def codec_of(cls: type) -> Codec:
    """The codec of a message class, compiling it on first use."""
    codec = cls.__pbj_codec__  # a plain class attribute read: no mappingproxy or bound method allocated
    return codec if codec is not None else compile_class(cls)


def source_of(cls: Any) -> str:
    """The generated source of a message class (compiling it if needed)."""
    if not isinstance(cls, type):
        cls = type(cls)
    codec_of(cls)
    return _sources[cls]
