"""The first pass of a load: every message and enum descriptor of a set, by full name.

Files, packages and nesting are walked once; each message and enum keeps its file
and package, each extension its scope and the message it extends. This pass is all
a load does before a class is asked for (:mod:`pbj.loader.schema` builds each class
on its first use), so it checks only what a whole load depends on: names, a message
defined twice, and that every type a field names is defined (a set made without
``protoc --include_imports`` fails here). The editions features of an element are
resolved when a class of its file is built (:mod:`pbj.loader.features`).
"""

from __future__ import annotations

from typing import Any

from pbj.errors import SchemaError
from pbj.loader.names import join

__all__ = ["SchemaIndex", "Extending"]


class Extending:
    """One extension of the set (an ``extend`` block's field), with where it is declared.

    Attributes:
        full_name: ``scope.name``.
        scope: the package or message full name it is declared in.
        fdp: its ``FieldDescriptorProto``.
        file: the ``FileDescriptorProto`` that declares it.
        extendee: the full name of the message it extends.
    """

    __slots__ = ("extendee", "fdp", "file", "full_name", "scope")

    def __init__(self, full_name: str, scope: str, fdp: Any, file: Any, extendee: str) -> None:
        self.full_name = full_name
        self.scope = scope
        self.fdp = fdp
        self.file = file
        self.extendee = extendee


class SchemaIndex:
    """The descriptors of one ``FileDescriptorSet``, by full name.

    ``name in index`` says whether the set defines a message or an enum of that full name.

    Attributes:
        files: the ``FileDescriptorProto`` of every file, in order.
        msg_desc: full name -> (DescriptorProto, its file, package), in the set's order.
        enum_desc: full name -> (EnumDescriptorProto, package, its file), in the set's order.
        extensions: full name -> ``FieldDescriptorProto`` of every extension.
        extending: extendee full name -> the :class:`Extending` of each extension of it, in
            declaration order (an extension whose ``extendee`` names no message of the set is left out).
        map_entries: full names of map-entry messages (they get no class).

    Raises:
        SchemaError: a file or a type has no name, a syntax is unknown, a message is
            defined twice, or a field names a type that no file of the set defines.
    """

    def __init__(self, files: Any) -> None:
        self.files = tuple(files)
        self.msg_desc: dict[str, tuple] = {}
        self.enum_desc: dict[str, tuple] = {}
        self.extensions: dict[str, Any] = {}
        self.extending: dict[str, list[Extending]] = {}
        self.map_entries: set[str] = set()
        self._declared: list[tuple[str, Any, Any]] = []  # (scope, extension, file)
        for fd in self.files:
            self._collect_file(fd)
        self._check_type_names()
        for scope, fdp, fd in self._declared:
            full = join(scope, fdp.name or "")
            self.extensions[full] = fdp
            if fdp.name and fdp.number is not None and fdp.extendee:
                target = self.resolve_name(fdp.extendee, scope)
                if target in self.msg_desc:
                    self.extending.setdefault(target, []).append(Extending(full, scope, fdp, fd, target))

    def __contains__(self, full_name: object) -> bool:
        return full_name in self.msg_desc or full_name in self.enum_desc

    def file_of(self, full_name: str) -> Any:
        """The ``FileDescriptorProto`` that defines the message or enum ``full_name``."""
        found = self.msg_desc.get(full_name)
        return found[1] if found is not None else self.enum_desc[full_name][2]

    def resolve_name(self, type_name: str, scope: str) -> str | None:
        """The full name a field's ``type_name`` refers to from ``scope``, or ``None`` if the set lacks it.

        protoc writes full names with a leading dot; a relative name (another tool's) is
        looked up in ``scope`` and then in each enclosing scope ("Packages and Name
        Resolution" in the Language Guide).
        """
        if type_name.startswith("."):
            full = type_name[1:]
            return full if full in self.msg_desc or full in self.enum_desc else None
        while True:
            candidate = join(scope, type_name)
            if candidate in self.msg_desc or candidate in self.enum_desc:
                return candidate
            if not scope:
                return None
            scope = scope.rpartition(".")[0]

    def _collect_file(self, fd: Any) -> None:
        if not fd.name:
            raise SchemaError("a FileDescriptorProto has no name")
        package = fd.package or ""
        syntax = fd.syntax or "proto2"
        if syntax not in ("proto2", "proto3", "editions"):
            raise SchemaError(f"unknown syntax {syntax!r}", cls_name=fd.name)
        for ed in fd.enum_type:
            self._collect_enum(ed, package, package, fd)
        for md in fd.message_type:
            self._collect_message(md, package, package, fd)
        self._declared.extend((package, ext, fd) for ext in fd.extension)

    def _collect_enum(self, ed: Any, scope: str, package: str, fd: Any) -> None:
        if not ed.name:
            raise SchemaError(f"an enum in {scope or 'the root package'} has no name")
        self.enum_desc[join(scope, ed.name)] = (ed, package, fd)

    def _collect_message(self, md: Any, scope: str, package: str, fd: Any) -> None:
        if not md.name:
            raise SchemaError(f"a message in {scope or 'the root package'} has no name")
        full = join(scope, md.name)
        if full in self.msg_desc:
            raise SchemaError(f"message {full!r} is defined twice")
        self.msg_desc[full] = (md, fd, package)
        if md.options is not None and md.options.map_entry:
            self.map_entries.add(full)
        for ed in md.enum_type:
            self._collect_enum(ed, full, package, fd)
        for nd in md.nested_type:
            self._collect_message(nd, full, package, fd)
        self._declared.extend((full, ext, fd) for ext in md.extension)

    def _check_type_names(self) -> None:
        """Refuse a field (an extension included) whose message or enum type the set does not define."""
        messages, enums = self.msg_desc, self.enum_desc
        for full, (md, _, _) in messages.items():
            for fdp in md.field:
                name = fdp.type_name
                if name and not (name[1:] in messages or name[1:] in enums if name[0] == "." else
                                 self.resolve_name(name, full) is not None):
                    raise SchemaError(f"unknown type {name!r}", cls_name=full, field_name=fdp.name)
        for scope, fdp, _ in self._declared:
            if fdp.type_name and self.resolve_name(fdp.type_name, scope) is None:
                raise SchemaError(f"unknown type {fdp.type_name!r}", cls_name=scope, field_name=fdp.name)
