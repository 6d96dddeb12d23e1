"""The editions features of a load, resolved one file at a time, when a class of that file is built.

:func:`pbj.features.resolve` resolves every element of a set at once; a load that builds
the classes a program uses (:mod:`pbj.loader.schema`) needs the features of their files
only. :class:`LazyFeatures` runs the same resolver file by file: a file's messages,
enums and oneofs when one of its elements is first asked for, its fields (and
extensions) when a field of it is, after adding the files that define the enums and
map entries those fields use. A rule of protoc's that a file breaks
(:mod:`pbj.feature_rules`) is a :class:`pbj.SchemaError` when a class of that file is built.

Not thread-safe by itself: :class:`pbj.loader.schema.LoadedSchema` calls it under its lock.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pbj.loader.index import SchemaIndex
from pbj.loader.names import join

if TYPE_CHECKING:
    from pbj.features import EnumFeatures, FieldFeatures, MessageFeatures, _Resolver

__all__ = ["LazyFeatures"]


class LazyFeatures:
    """The resolved features of the elements of one load, computed per file on first need."""

    def __init__(self, index: SchemaIndex) -> None:
        self._index = index
        self._made: _Resolver | None = None  # on the first class built: a load itself resolves nothing
        self._added: set[str] = set()  # files whose messages, enums and oneofs are resolved
        self._with_fields: set[str] = set()  # files whose fields are resolved too

    @property
    def _resolver(self) -> _Resolver:
        made = self._made
        if made is None:
            from pbj.features import _Resolver  # (its import declares the features' classes: ~5 ms)

            made = self._made = _Resolver(defines=self._index)
        return made

    def message(self, full_name: str) -> MessageFeatures:
        """The features of the message ``full_name``.

        Raises:
            SchemaError: its file breaks a rule of protoc's (see :func:`pbj.features.resolve`).
        """
        self._add(self._index.msg_desc[full_name][1])
        return self._resolver.messages[full_name]

    def enum(self, full_name: str) -> EnumFeatures:
        """The features of the enum ``full_name`` (``closed``: proto2's enums, editions' ``CLOSED``)."""
        self._add(self._index.enum_desc[full_name][2])
        return self._resolver.enums[full_name]

    def field(self, scope: str, name: str, file: Any) -> FieldFeatures:
        """The features of the field (or extension) ``name`` declared in ``scope`` of ``file``.

        Raises:
            SchemaError: a field of ``file`` breaks a rule of protoc's.
        """
        if file.name not in self._with_fields:
            self._add_fields(file)
        return self._resolver.fields[join(scope, name)]

    def _add(self, file: Any) -> None:
        if file.name not in self._added:
            self._resolver.add_file(file)
            self._added.add(file.name)

    def _add_fields(self, file: Any) -> None:
        self._add(file)
        pending = self._resolver.pending_of.get(file.name, ())
        index = self._index
        for fdp, scope, *_ in pending:  # the files of the enums and map entries these fields use
            target = index.resolve_name(fdp.type_name, scope) if fdp.type_name else None
            if target is not None:
                self._add(index.file_of(target))
        for item in pending:
            self._resolver.add_field(*item)
        self._with_fields.add(file.name)
