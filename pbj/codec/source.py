"""Generated source text, the namespace of a compile batch, and linecache.

A *compile batch* is the set of classes one call of
:func:`pbj.codec.compiler.compile_class` compiles: a class and every class it
reaches that has no codec yet (for a loaded schema, what its first use
reaches). A batch's generated functions and constants live in a namespace of
their own (a :class:`Scope` while it is being built, a plain ``dict`` once
compiled); a function calls the functions of other classes by name, so
mutually recursive messages need no linking step. Classes compiled by an
earlier batch are reached through their compiled functions, bound into the
new namespace under names of its own.

Names are allocated by :meth:`Scope.name`, which escapes what a schema
provides to ASCII identifier characters and adds a numbered suffix on clash;
the run-time helpers' names (:data:`pbj.codec.runtime.HELPERS`) are taken
first. So no class, field or oneof name can shadow another generated name,
and Python's NFKC normalisation of identifiers has nothing to change.

Each class's source is compiled under a file name registered in
:mod:`linecache`, in the style of attrs: ``<pbj generated codec
module.Qualname>``, with `` (2)`` … added on clash. :func:`register_lines`
returns it; a finalizer on the batch removes the entries when the batch's
classes are gone (see :class:`Batch`).
"""

from __future__ import annotations

import keyword
import linecache
import weakref
from typing import Any

from pbj.generated_text import attr_ok, comment

__all__ = ["Source", "Scope", "Batch", "ident", "comment", "attr_ok", "register_lines"]


class Source:
    """The lines of generated source being built, with indentation.

    ``src("line")`` adds a line at the current depth; ``with src:`` indents
    the lines added inside the block.
    """

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.depth = 0

    def __call__(self, text: str) -> None:
        """Add one line (or several, separated by newlines) at the current depth."""
        for line in text.split("\n"):
            self.lines.append("    " * self.depth + line)

    def __enter__(self) -> Source:
        self.depth += 1
        return self

    def __exit__(self, *exc: Any) -> None:
        self.depth -= 1

    def text(self) -> str:
        """The source text, ending with a newline."""
        return "\n".join(self.lines) + "\n"


def ident(text: str) -> str:
    """``text`` as the stem of a generated name: ASCII letters, digits and ``_`` only.

    Every other character becomes ``_``; a leading digit gets a ``_`` in front.
    """
    out = "".join(c if (c.isascii() and c.isalnum()) or c == "_" else "_" for c in text) or "_"
    return "_" + out if out[0].isdigit() else out


class Scope:
    """The namespace of one compile batch while its source is being emitted.

    Attributes:
        values: global name -> value (helpers, constants, other batches' functions).
    """

    def __init__(self, helpers: dict[str, Any]) -> None:
        self.values: dict[str, Any] = dict(helpers)
        self._taken: set[str] = set(helpers)
        self._bytes: dict[bytes, str] = {}
        self._objects: dict[Any, str] = {}

    def name(self, stem: str) -> str:
        """A new global name made from ``stem`` (escaped, numbered on clash), now taken."""
        base = ident(stem)
        name = base
        i = 2
        while name in self._taken or keyword.iskeyword(name):
            name = f"{base}_{i}"
            i += 1
        self._taken.add(name)
        return name

    def names(self, *prefixes: str, stem: str) -> str:
        """A stem free under every prefix (``size_``, ``parse_`` …); all those names are taken."""
        base = ident(stem)
        cand = base
        i = 2
        while any(p + cand in self._taken for p in prefixes):
            cand = f"{base}_{i}"
            i += 1
        self._taken.update(p + cand for p in prefixes)
        return cand

    def const(self, value: Any, stem: str) -> str:
        """The global name holding ``value``, registered on first use.

        ``bytes`` are shared by value (``T_08`` holds the tag byte 0x08);
        other values by identity.
        """
        if isinstance(value, bytes):
            name = self._bytes.get(value)
            if name is None:
                name = self.name(f"{stem}_{value.hex()}" if len(value) <= 6 else stem)
                self._bytes[value] = name
                self.values[name] = value
            return name
        name = self._objects.get(id(value))
        if name is None:
            name = self.name(stem)
            self._objects[id(value)] = name
            self.values[name] = value
        return name

    def shared(self, key: Any, stem: str, make: Any) -> str:
        """The global name of the value ``make()`` registered once per hashable ``key``."""
        name = self._objects.get(key)
        if name is None:
            value = make()  # first: a make() that raises (or a Ctrl-C) leaves no name without a value
            name = self.name(stem)
            self._objects[key] = name
            self.values[name] = value
        return name

    def bind(self, name: str, value: Any) -> None:
        """Bind an already allocated ``name`` to ``value`` (another batch's function)."""
        self.values[name] = value


class Batch:
    """What a compiled batch owns besides its namespace: its linecache entries.

    The namespace holds the batch (``__pbj_batch__``) and every codec of the
    batch holds the namespace (through its functions), so the batch lives as
    long as any of its classes; when the last is collected, a finalizer
    removes the batch's linecache entries (those still holding its text).
    """

    __slots__ = ("__weakref__", "entries")

    def __init__(self, entries: list[list[Any]]) -> None:
        """``entries``: the batch's ``[file name, linecache entry]`` pairs, a list the compiler
        extends and updates as it compiles the batch's parts; they go with the batch."""
        self.entries = entries
        weakref.finalize(self, _forget, entries)


def _forget(entries: list[list[Any]]) -> None:
    cache = linecache.cache
    for filename, entry in entries:
        if cache.get(filename) is entry:
            del cache[filename]


def register_lines(label: str, text: str, replace: tuple | None = None) -> tuple[str, tuple]:
    """Register ``text`` in linecache under ``<pbj generated codec label>`` (numbered on clash).

    Args:
        label: the class's qualified name; or, with ``replace``, the file name registered already.
        text: the source.
        replace: the entry registered under ``label`` before: its text is replaced by ``text``
            (which goes on from it: the lines compiled already keep their numbers), if it is
            still there.

    Returns:
        The file name and the linecache entry.
    """
    if replace is not None:
        filename = label
    else:
        base = f"<pbj generated codec {comment(label)}"
        filename = base + ">"
        i = 2
        while filename in linecache.cache:
            filename = f"{base} ({i})>"
            i += 1
    entry = (len(text), None, text.splitlines(keepends=True), filename)
    if replace is None or linecache.cache.get(filename) is replace:
        linecache.cache[filename] = entry
    return filename, entry
