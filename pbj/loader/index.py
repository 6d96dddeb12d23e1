"""The first pass of a load: every message and enum descriptor of a set, by full name.

Files, packages and nesting are walked once; each message keeps its file and
package. Every element's editions features are resolved once for the whole set
(:func:`pbj.features.resolve`), which also says which enums are closed ("Enum
Behavior": proto2 enums, and editions enums with ``enum_type = CLOSED``).
"""

from __future__ import annotations

from typing import Any

from pbj.errors import SchemaError
from pbj.features import Resolution, resolve
from pbj.loader.names import join

__all__ = ["SchemaIndex"]


class SchemaIndex:
    """The descriptors of one ``FileDescriptorSet``, by full name.

    Attributes:
        files: the ``FileDescriptorProto`` of every file, in order.
        msg_desc: full name -> (DescriptorProto, its file, package).
        enum_desc: full name -> (EnumDescriptorProto, package).
        extensions: full name -> ``FieldDescriptorProto`` of every extension.
        map_entries: full names of map-entry messages (they get no class).
        closed_enums: full names of closed enums.
        features: every element's resolved editions features (:func:`pbj.features.resolve`).

    Raises:
        SchemaError: a file or a type has no name, a syntax is unknown, a
            message is defined twice, or the schema breaks a rule of protoc's
            (:mod:`pbj.feature_rules`: an open enum's first value is not 0 …).
    """

    def __init__(self, files: Any) -> None:
        self.files = tuple(files)
        self.msg_desc: dict[str, tuple] = {}
        self.enum_desc: dict[str, tuple] = {}
        self.extensions: dict[str, Any] = {}
        self.map_entries: set[str] = set()
        self.closed_enums: set[str] = set()
        for fd in self.files:
            self._collect_file(fd)
        self.features: Resolution = resolve(self.files)
        self.closed_enums = {full for full in self.enum_desc if self.features.enums[full].closed}

    def _collect_file(self, fd: Any) -> None:
        if not fd.name:
            raise SchemaError("a FileDescriptorProto has no name")
        package = fd.package or ""
        syntax = fd.syntax or "proto2"
        if syntax not in ("proto2", "proto3", "editions"):
            raise SchemaError(f"unknown syntax {syntax!r}", cls_name=fd.name)
        for ed in fd.enum_type:
            self._collect_enum(ed, package, package)
        for md in fd.message_type:
            self._collect_message(md, package, package, fd)
        for ext in fd.extension:
            self.extensions[join(package, ext.name or "")] = ext

    def _collect_enum(self, ed: Any, scope: str, package: str) -> None:
        if not ed.name:
            raise SchemaError(f"an enum in {scope or 'the root package'} has no name")
        self.enum_desc[join(scope, ed.name)] = (ed, package)

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
            self._collect_enum(ed, full, package)
        for nd in md.nested_type:
            self._collect_message(nd, full, package, fd)
        for ext in md.extension:
            self.extensions[join(full, ext.name or "")] = ext
