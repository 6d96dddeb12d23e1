"""The result of a load: :class:`Namespace`, the classes of a schema by full name or attribute path.

The classes are built on first use (:mod:`pbj.loader.schema`): a lookup, an attribute
path, iterating ``ns.messages.values()`` builds what it returns.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, TypeVar

__all__ = ["Namespace"]

_M = TypeVar("_M")


class Namespace:
    """The classes of a loaded schema.

    ``ns["com.hedera.hapi.block.stream.Block"]`` looks a message or enum up
    by full name (a leading dot is allowed); ``ns.com.hedera.hapi.block.stream.Block``
    does the same by package path (nested types too: ``ns.pkg.Outer.Inner``).
    Iterating gives the full names of all messages; ``len(ns)`` counts them.

    Attributes:
        messages: full name -> message class, nested messages included (map
            entries excluded), in the order of the descriptor set: a read-only
            mapping whose classes are built when first looked up (``len``,
            iteration and ``in`` build nothing).
        enums: full name -> ``enum.IntEnum`` class, the same way.
        files: the decoded ``FileDescriptorProto`` of every file, in order (a load whose
            names and declarations came from the schema cache decodes its set when this is
            first read).
        extensions: full name -> :class:`pbj.Extension` of every extension
            declared in the schema (top-level and nested ``extend`` blocks) of
            a message class of this load, registered with that class: decoding
            reads them, and :func:`pbj.get_extension` takes them (see
            :mod:`pbj.loader.extensions`). Reading it builds the classes they extend.
        services: full name -> :class:`pbj.Service` of every ``service`` of the
            schema (:mod:`pbj.loader.services`), in the order of the files; reading
            it builds their message classes.
    """

    def __init__(self, schema: Any) -> None:
        self._schema = schema
        schema.namespace = self  # each class of the load names it (``__pbj_namespace__``: options_of, to_google)
        # typed Any: a static checker cannot know a loaded class's attributes (see ``pbj stubs``)
        self.messages: Any = _Classes(schema, schema.message_names)
        self.enums: Any = _Classes(schema, schema.enum_names)
        self._services: dict[str, Any] | None = None
        self._prefixes: frozenset[str] | None = None

    @property
    def files(self) -> tuple[Any, ...]:
        """The decoded ``FileDescriptorProto`` of every file, in order (see the class's attributes)."""
        return self._schema.index.files  # type: ignore[no-any-return]

    @property
    def extensions(self) -> dict[str, Any]:
        """Full name -> :class:`pbj.Extension` (see the class's attributes)."""
        return self._schema.extensions()  # type: ignore[no-any-return]

    @property
    def services(self) -> dict[str, Any]:
        """Full name -> :class:`pbj.Service` (see the class's attributes).

        Raises:
            SchemaError: a method names a type that is not a message of the schema, or a
                service is defined twice.
        """
        if self._services is None:
            from pbj.loader.services import build_services

            schema = self._schema
            complete = len(schema.message_names) == len(schema.summary.messages)
            services = build_services(self.files, _Classes(schema, schema.message_names, known=True),
                                      complete=complete)
            for svc in services.values():  # pbj.options_of reads the descriptors through it
                setattr(svc, "__pbj_namespace__", self)  # noqa: B010 (a dunder the Service class does not declare)
            self._services = services
        return self._services

    def build_all(self) -> Namespace:
        """Build every class and enum of the namespace now (and the extensions of its classes).

        A load builds each class on its first use, so a declaration pbj refuses (a field
        number used twice, a rule of protoc's the file breaks ...) raises when its class is
        first used; this raises it now, for every class.

        Returns:
            The namespace itself.

        Raises:
            SchemaError: the first refused declaration, naming class and field.
        """
        from pbj.schema import info

        for name in (*self._schema.enum_names, *self._schema.message_names):
            found = self._schema.get(name)
            if name in self.messages:
                info(found)  # every type reference resolved: a dangling one raises here
        self._schema.extensions()
        return self

    def __getitem__(self, full_name: str) -> Any:
        """The message class or enum named ``full_name``.

        Raises:
            KeyError: no message or enum has that full name.
        """
        found = self._find(full_name)
        if found is None:
            name = full_name[1:] if full_name.startswith(".") else full_name
            raise KeyError(f"no message or enum named {full_name!r} in this schema{self.suggest(name)}")
        return found

    def _find(self, full_name: str) -> Any:
        """The message class or enum named ``full_name`` (a leading dot allowed), or ``None``: no hint
        is built, so a lookup that may miss (:meth:`get`, ``in``) costs one or two dict lookups."""
        name = full_name[1:] if full_name.startswith(".") else full_name
        return self._schema.get(name)

    def suggest(self, name: str) -> str:
        """``"; did you mean 'pkg.Closest'?"`` for a name that is not here (the closest full names), or ``""``."""
        import difflib

        names = [*self.messages, *self.enums]
        by_short: dict[str, list[str]] = {}
        for n in names:
            by_short.setdefault(n.rsplit(".", 1)[-1], []).append(n)
        # the closest last parts (a typo, or the right name in another package), then whole names
        shorts = difflib.get_close_matches(name.rsplit(".", 1)[-1], list(by_short), n=3, cutoff=0.6)
        ranked = [n for short in shorts for n in sorted(
            by_short[short], key=lambda n: -difflib.SequenceMatcher(None, name, n).ratio())]
        close = list(dict.fromkeys([*ranked, *difflib.get_close_matches(name, names, n=3, cutoff=0.85)]))[:3]
        return f"; did you mean {' or '.join(map(repr, close))}?" if close else ""

    def message_class(self, full_name: str, expected: type[_M] | None = None) -> type[_M]:
        """The message class named ``full_name``, typed for static checkers.

        Args:
            full_name: the message's full name (a leading dot is allowed).
            expected: a class describing the same message, as the modules written
                by ``pbj stubs`` give it (``from protos.pkg import Block``); the
                result is typed as that class. It must have the same full name.

        Returns:
            This namespace's class (typed ``type[expected]``, else ``type[Any]``).

        Raises:
            KeyError: no message has that full name (the error suggests the closest names).
            TypeError: ``expected`` describes another message.
        """
        name = full_name[1:] if full_name.startswith(".") else full_name
        found = self.messages.get(name) if name in self.messages else None
        if found is None:
            raise KeyError(f"no message named {full_name!r} in this schema{self.suggest(name)}")
        if expected is not None:
            other = getattr(getattr(expected, "__pbj_info__", None), "full_name", None)
            if other != name:
                raise TypeError(f"{expected!r} is not the message {name} (it is {other or 'not a pbj message'})")
        return found  # type: ignore[no-any-return]

    def extension(self, full_name: str) -> Any:
        """The :class:`pbj.Extension` named ``full_name`` (``pkg.ext``, ``pkg.Scope.ext``; a
        leading dot or the brackets of ``[pkg.ext]`` are allowed).

        Raises:
            KeyError: no extension of this schema has that name.
        """
        name = full_name.strip("[]").lstrip(".")
        found = self.extensions.get(name)
        if found is None:
            import difflib
            close = difflib.get_close_matches(name, list(self.extensions), n=3, cutoff=0.6)
            hint = f"; did you mean {' or '.join(map(repr, close))}?" if close else ""
            raise KeyError(f"no extension named {full_name!r} in this schema{hint}")
        return found

    def service(self, full_name: str) -> Any:
        """The :class:`pbj.Service` named ``full_name`` (``"pkg.Greeter"``; a leading dot is allowed).

        Raises:
            KeyError: no service of this schema has that name (the error suggests the closest).
        """
        name = full_name.lstrip(".")
        found = self.services.get(name)
        if found is None:
            import difflib

            close = difflib.get_close_matches(name, list(self.services), n=3, cutoff=0.6)
            hint = f"; did you mean {' or '.join(map(repr, close))}?" if close else ""
            raise KeyError(f"no service named {full_name!r} in this schema{hint}")
        return found

    def get(self, full_name: str, default: Any = None) -> Any:
        """The message class or enum named ``full_name`` (a leading dot allowed), or ``default``
        (no "did you mean" hint is looked for: a miss costs a dict lookup)."""
        found = self._find(full_name)
        return default if found is None else found

    def __contains__(self, full_name: object) -> bool:
        if not isinstance(full_name, str):
            return False
        return (full_name[1:] if full_name.startswith(".") else full_name) in self._schema  # builds nothing

    def __iter__(self) -> Iterator[str]:
        return iter(self.messages)

    def __len__(self) -> int:
        return len(self.messages)

    def _lookup(self, prefix: str, name: str) -> Any:
        full = f"{prefix}.{name}" if prefix else name
        found = self._schema.get(full)
        if found is not None:
            return found
        if self._prefixes is None:
            prefixes: set[str] = set()
            for known in (*self.messages, *self.enums):
                parts = known.split(".")
                for i in range(1, len(parts)):
                    prefixes.add(".".join(parts[:i]))
            self._prefixes = frozenset(prefixes)
        if full in self._prefixes:
            return _PackageView(self, full)
        hint = self.suggest(full)
        if not hint:
            import difflib

            close = difflib.get_close_matches(full, sorted(self._prefixes), n=3, cutoff=0.6)
            hint = f"; did you mean {' or '.join(map(repr, close))}?" if close else ""
        raise AttributeError(f"no package, message or enum named {full!r} in this schema{hint}")

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("messages", "enums", "files", "_schema", "_services", "_prefixes"):
            raise AttributeError(name)
        return self._lookup("", name)

    def __dir__(self) -> list[str]:
        top = {n.split(".", 1)[0] for n in (*self.messages, *self.enums)}
        return sorted(top | set(super().__dir__()))

    def __repr__(self) -> str:
        return f"<pbj.Namespace: {len(self.messages)} messages, {len(self.enums)} enums, {len(self.files)} files>"


class _PackageView:
    """A package (or a prefix of one) inside a :class:`Namespace`, for attribute access."""

    __slots__ = ("_ns", "_prefix")

    def __init__(self, ns: Namespace, prefix: str) -> None:
        self._ns = ns
        self._prefix = prefix

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return self._ns._lookup(self._prefix, name)

    def __dir__(self) -> list[str]:
        n = len(self._prefix) + 1
        return sorted({k[n:].split(".", 1)[0] for k in (*self._ns.messages, *self._ns.enums)
                       if k.startswith(self._prefix + ".")})

    def __repr__(self) -> str:
        return f"<pbj package {self._prefix}>"


class _Classes(Mapping):
    """Full name -> class of one load, built when first looked up (``Namespace.messages``, ``.enums``).

    ``len``, iteration and ``in`` read the names only; ``ns.messages[name]``, ``.get``,
    ``.values()`` and ``.items()`` build the classes they return. With ``known``, the
    :mod:`pbj.wellknown` classes the load reuses are found by their names too.
    """

    __slots__ = ("_names", "_schema")

    def __init__(self, schema: Any, names: tuple[str, ...], known: bool = False) -> None:
        self._schema = schema
        self._names = dict.fromkeys((*names, *schema.known) if known else names)

    def __getitem__(self, full_name: str) -> Any:
        if full_name not in self._names:
            raise KeyError(full_name)
        return self._schema.message(full_name)

    def get(self, full_name: str, default: Any = None) -> Any:
        return self._schema.message(full_name) if full_name in self._names else default

    def __contains__(self, full_name: object) -> bool:
        return full_name in self._names

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def __repr__(self) -> str:
        return f"<{len(self._names)} classes of a pbj load, built on first use>"
