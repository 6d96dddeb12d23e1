"""The classes of one load, each built on its first use: :class:`LoadedSchema`.

A load decodes the descriptor set and indexes it (:mod:`pbj.loader.index`); nothing
else. A message class or an enum is built the first time it is asked for (a
:class:`~pbj.loader.namespace.Namespace` lookup, a field of a class being resolved,
an outer class's attribute, an unpickled instance), with the enums its fields use and
the extensions that extend it; so a program pays for the classes it reaches, as a
generated ``_pb2`` module does for the messages it imports.

Building is atomic, under threads and ``KeyboardInterrupt`` alike: under
:data:`pbj.schema.generated.FIRST_USE`, the reentrant lock every first use of a class takes
(building a class builds the enums of its fields; one lock, so no two are taken in opposite
orders), every class a request
builds kept in a transaction of its own and published in one step when the request
completes. A class asked for from several threads at once is built once; an
interrupted or failed build publishes nothing, so the load stays as it was and the
next request builds again (and raises again, for a declaration pbj refuses).
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Iterable, Mapping
from typing import Any

from pbj.errors import PbjError, SchemaError
from pbj.loader.features import LazyFeatures
from pbj.loader.index import SchemaIndex
from pbj.loader.pickling import release_newest
from pbj.loader.set_cache import Summary
from pbj.schema.generated import FIRST_USE

__all__ = ["LoadedSchema"]


class LoadedSchema:
    """The classes of one load, by full name, built on first use.

    Args:
        index: the load's descriptors, or ``None`` for a load from the schema cache (decoded from
            ``source`` when first needed).
        names: the full names of the messages and enums this load offers (a load with
            ``only=`` offers what its roots reach), or ``None`` for every one of the set.
        known: full name -> :mod:`pbj.wellknown` class, used instead of a new one.
        summary: the set's names (:class:`~pbj.loader.set_cache.Summary`); default: ``index``'s.
        source: the set's bytes (with ``index=None``).
        records: full name -> record (:mod:`pbj.loader.declarations`) of classes whose
            declarations are known (the schema cache's); the load adds those it derives.

    Attributes:
        summary: as given.
        records: as given.
        known: as given.
        message_names: the full names of the messages offered (map entries excluded), in
            the set's order.
        enum_names: the same for enums.
        token: a random string naming this load; every class it builds carries it as
            ``__pbj_load__``, and pickles carry it (:mod:`pbj.loader.pickling`).
    """

    def __init__(self, index: SchemaIndex | None, names: Iterable[str] | None, known: Mapping[str, Any], *,
                 summary: Summary | None = None, source: bytes | None = None,
                 records: dict[str, Any] | None = None) -> None:
        self._index = index
        self._source = source  # the set's bytes, decoded when the index is first needed
        summary = self.summary = summary if summary is not None else Summary.of(index)
        self._features: LazyFeatures | None = None
        self.known = known
        offered = None if names is None else set(names)
        self.message_names: tuple[str, ...] = tuple(
            n for n in summary.messages if offered is None or n in offered)
        self.enum_names: tuple[str, ...] = tuple(n for n in summary.enums if offered is None or n in offered)
        self._offered = frozenset((*self.message_names, *self.enum_names))
        self._enums = frozenset(summary.enums)
        self.records: dict[str, Any] = {} if records is None else records  # full name -> record (declarations)
        self.token = os.urandom(16).hex()
        self._built: dict[str, Any] = {}  # published classes and enums, by full name
        self._lock = FIRST_USE  # the lock of every first use: no order of two locks to deadlock on
        self._extensions: dict[str, Any] = {}  # published extensions, by full name
        self._pending: _Request | None = None  # what the running request built, not yet published
        self._fields: Any = None
        self.namespace: Any = None  # the load's Namespace, which sets itself here

    @property
    def index(self) -> SchemaIndex:
        """The load's :class:`~pbj.loader.index.SchemaIndex`; a load whose names and records came from
        the schema cache decodes its set when this is first read (a class with no record, the files)."""
        index = self._index
        if index is None:
            with self._lock:
                index = self._index
                if index is None:
                    from pbj.api import decode
                    from pbj.descriptor import FileDescriptorSet

                    fds = decode(FileDescriptorSet, self._source, allow_partial=True)  # type: ignore[arg-type]
                    index = self._index = SchemaIndex(fds.file)
        return index

    @property
    def features(self) -> LazyFeatures:
        """The load's :class:`~pbj.loader.features.LazyFeatures`."""
        made = self._features
        if made is None:
            made = self._features = LazyFeatures(self.index)
        return made

    @property
    def fields(self) -> Any:
        """The load's :class:`~pbj.loader.fields.FieldBuilder`, made when the first record is derived."""
        builder = self._fields
        if builder is None:
            from pbj.loader.fields import FieldBuilder  # (it imports pbj.descriptor's enums)

            builder = self._fields = FieldBuilder(self.index, self)
        return builder

    def __contains__(self, full_name: object) -> bool:
        return full_name in self._offered

    def get(self, full_name: str) -> Any:
        """The message class or enum ``full_name`` of this load (built now if it is not yet), or ``None``
        when the load does not offer that name.

        Raises:
            SchemaError: the declaration of the class (or of an enum, an extension it needs) is refused.
        """
        found = self._built.get(full_name) or self.known.get(full_name)
        if found is not None:
            return found if full_name in self._offered else None
        if full_name not in self._offered:
            return None
        return self._request(full_name)

    def built(self) -> dict[str, Any]:
        """The classes and enums built so far, by full name (a copy)."""
        return dict(self._built)

    def message(self, full_name: str) -> Any:
        """The message class ``full_name`` (a :mod:`pbj.wellknown` one for a well-known type), built
        if need be; the load's own message types reach every message of the set."""
        found = self._built.get(full_name) or self.known.get(full_name)
        return found if found is not None else self._request(full_name)

    def enum(self, full_name: str) -> Any:
        """The enum class ``full_name``, built if need be (as :meth:`message`)."""
        return self.message(full_name)

    def extensions(self) -> dict[str, Any]:
        """Full name -> :class:`pbj.Extension` of every extension of this load, in declaration order
        (building the classes they extend)."""
        if not self.summary.extendees:
            return {}
        for extendee in self.index.extending:
            if extendee in self._offered:
                self.get(extendee)
        return {name: self._extensions[name] for name in self.index.extensions if name in self._extensions}

    def _request(self, full_name: str) -> Any:
        with self._lock:
            found = self._built.get(full_name)
            if found is not None:
                return found
            if self._pending is not None:  # a class being built needs another: same request
                found = self._pending.classes.get(full_name)
                return found if found is not None else self._build(full_name, self._pending)
            pending = _Request()
            self._pending = pending
            try:
                found = self._build(full_name, pending)
                self._publish(pending)
            except PbjError:
                raise
            except (AttributeError, KeyError, TypeError, ValueError) as exc:  # a corrupt set's descriptors
                raise SchemaError(f"malformed descriptor set: {type(exc).__name__}: {exc}",
                                  cls_name=full_name) from None
            finally:
                self._pending = None
            return found

    def _build(self, full_name: str, pending: _Request) -> Any:
        known = self.known.get(full_name)
        if known is not None:
            return known
        from pbj.loader.declarations import build_checked_from, build_enum_from, build_message_from

        record, checked = self._record(full_name, pending)
        if record[0] == "enum":
            cls = build_enum_from(full_name, record)
            pending.classes[full_name] = cls
            return cls
        cls = (build_checked_from if checked else build_message_from)(self, full_name, record)
        pending.classes[full_name] = cls  # before its extensions: one may hold a value of this very class
        if full_name in self.summary.extendees:
            from pbj.loader.extensions import build_extensions

            pending.extensions.update(build_extensions(self, full_name, cls))
        return cls

    def _record(self, full_name: str, pending: _Request) -> tuple[tuple, bool]:
        """The record of ``full_name`` (:mod:`pbj.loader.declarations`) and whether its class was
        built before: the cache's, when it has a valid one (``True``), else derived from the
        descriptors now (``False``; kept in :attr:`records` when the request's classes are
        published, so the cache keeps only the records of classes built without an error)."""
        from pbj.loader.declarations import valid

        record = self.records.get(full_name)
        if record is not None and valid(full_name, record):
            return record, True
        if full_name in self._enums:
            from pbj.loader.enums import derive_enum

            record = derive_enum(self, full_name)
        else:
            from pbj.loader.messages import derive_message

            record = derive_message(self, full_name)
        pending.records[full_name] = record
        return record, False

    def _publish(self, pending: _Request) -> None:
        """Make a finished request's classes visible, in one dict update each.

        Each message class keeps its load alive (``__pbj_schema__``; an enum, weakly), as the
        classes of one load refer to each other: pickles resolve names through the loads still
        alive (:mod:`pbj.loader.pickling`).
        """
        for name, cls in pending.classes.items():
            if self.known.get(name) is cls:
                continue  # a pbj.wellknown class: shared by every load
            type.__setattr__(cls, "__pbj_load__", self.token)
            # pbj.options_of and pbj.to_google read the descriptors the class was built from
            # (pbj.schema.records.namespace_of). An enum holds its load weakly: its members live on
            # in places that outlive a load (the native engine's tables) and must not keep it alive.
            if name in self._enums:
                type.__setattr__(cls, "__pbj_schema__", weakref.ref(self))
                type.__setattr__(cls, "__pbj_namespace__", weakref.ref(self.namespace))
            else:
                type.__setattr__(cls, "__pbj_schema__", self)
                type.__setattr__(cls, "__pbj_namespace__", self.namespace)
        self._extensions.update(pending.extensions)
        self.records.update(pending.records)
        self._built.update(pending.classes)
        release_newest(self)  # its classes keep it alive from now on


class _Request:
    """What one request of a load builds: its classes, the extensions of those classes, and the
    records it derived."""

    __slots__ = ("classes", "extensions", "records")

    def __init__(self) -> None:
        self.classes: dict[str, Any] = {}
        self.extensions: dict[str, Any] = {}
        self.records: dict[str, Any] = {}
