"""The first pass of a load: every message and enum descriptor of a set, by full name.

Files, packages and nesting are walked once; each message keeps its file and
the chain of editions ``features`` that applies to it (file, then enclosing
messages), each enum whether it is closed ("Enum Behavior": proto2 enums, and
editions enums with ``enum_type = CLOSED``).
"""

from __future__ import annotations

from typing import Any

from pbj.errors import SchemaError
from pbj.loader.names import join

__all__ = ["SchemaIndex", "feature"]

_CLOSED = 2  # FeatureSet.EnumType.CLOSED


def feature(feats: list, fdp: Any, name: str) -> Any:
    """The value of the editions feature ``name`` for field ``fdp``: its own, else the nearest scope's.

    Args:
        feats: the ``FeatureSet`` chain of the enclosing scopes, outermost first.
        fdp: a ``FieldDescriptorProto``, or ``None``.

    Returns:
        The feature's value, or ``None`` where no scope sets it (the edition's default).
    """
    if fdp is not None and fdp.options is not None and fdp.options.features is not None:
        v = getattr(fdp.options.features, name)
        if v is not None:
            return v
    for fs in reversed(feats):
        v = getattr(fs, name)
        if v is not None:
            return v
    return None


class SchemaIndex:
    """The descriptors of one ``FileDescriptorSet``, by full name.

    Attributes:
        files: the ``FileDescriptorProto`` of every file, in order.
        msg_desc: full name -> (DescriptorProto, its file, features chain, package).
        enum_desc: full name -> (EnumDescriptorProto, package).
        extensions: full name -> ``FieldDescriptorProto`` of every extension.
        map_entries: full names of map-entry messages (they get no class).
        closed_enums: full names of closed enums.

    Raises:
        SchemaError: a file or a type has no name, a syntax is unknown, a
            message is defined twice, or an open enum's first value is not 0.
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

    def _collect_file(self, fd: Any) -> None:
        if not fd.name:
            raise SchemaError("a FileDescriptorProto has no name")
        package = fd.package or ""
        syntax = fd.syntax or "proto2"
        if syntax not in ("proto2", "proto3", "editions"):
            raise SchemaError(f"unknown syntax {syntax!r}", cls_name=fd.name)
        feats = [fd.options.features] if fd.options is not None and fd.options.features is not None else []
        for ed in fd.enum_type:
            self._collect_enum(ed, package, package, fd, feats)
        for md in fd.message_type:
            self._collect_message(md, package, package, fd, feats)
        for ext in fd.extension:
            self.extensions[join(package, ext.name or "")] = ext

    def _collect_enum(self, ed: Any, scope: str, package: str, fd: Any = None, feats: list = ()) -> None:
        if not ed.name:
            raise SchemaError(f"an enum in {scope or 'the root package'} has no name")
        self.enum_desc[join(scope, ed.name)] = (ed, package)
        syntax = (fd.syntax if fd is not None else None) or "proto2"
        if syntax == "editions":
            own = [ed.options.features] if ed.options is not None and ed.options.features is not None else []
            closed = any(fs.enum_type is not None for fs in [*feats, *own]) and \
                next(fs.enum_type for fs in reversed([*feats, *own]) if fs.enum_type is not None) == _CLOSED
        else:
            closed = syntax == "proto2"
        if closed:
            self.closed_enums.add(join(scope, ed.name))
        elif ed.value and ed.value[0].number != 0:
            # "Enumerations" (proto3): the first value must be zero, the default of an open enum
            raise SchemaError(f"the first value of open enum {join(scope, ed.name)!r} is "
                              f"{ed.value[0].number}, not 0")

    def _collect_message(self, md: Any, scope: str, package: str, fd: Any, feats: list) -> None:
        if not md.name:
            raise SchemaError(f"a message in {scope or 'the root package'} has no name")
        full = join(scope, md.name)
        if full in self.msg_desc:
            raise SchemaError(f"message {full!r} is defined twice")
        if md.options is not None and md.options.features is not None:
            feats = [*feats, md.options.features]
        self.msg_desc[full] = (md, fd, feats, package)
        if md.options is not None and md.options.map_entry:
            self.map_entries.add(full)
        for ed in md.enum_type:
            self._collect_enum(ed, full, package, fd, feats)
        for nd in md.nested_type:
            self._collect_message(nd, full, package, fd, feats)
        for ext in md.extension:
            self.extensions[join(full, ext.name or "")] = ext
