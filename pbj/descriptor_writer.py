"""``FileDescriptorProto``\\ s written from pbj classes and services: the loader's reverse.

A loaded schema keeps the descriptors its classes were built from
(``Namespace.files``); a class declared with ``@pbj.message``, an
``enum.IntEnum`` and a service declared with :func:`pbj.service` have none.
:func:`describe` writes them from the schema the classes carry (their
:class:`~pbj.schema.MessageInfo`), so that server reflection, ``grpcurl`` and
Google's ``DescriptorPool`` can know them: each field's name, number, type,
label, ``json_name``, packing, presence, UTF-8 check, group encoding and
declared default; oneofs; maps as their nested ``map_entry`` messages
("Language Guide", "Maps": "Backwards compatibility"); nested messages and
enums; extension ranges and the extensions registered on a class; services
and their methods (``descriptor.proto``, protobuf v30+).

The files:

* one file per protobuf package, named ``<package as a path>/declared.proto``
  (``declared.proto`` for no package), holding the package's messages, enums,
  extensions and services; it imports the files of the types it uses;
* the well-known types (:mod:`pbj.wellknown`) are written as their own files,
  ``google/protobuf/timestamp.proto`` and so on, which a user file imports as
  protoc's output does;
* a type (or a service) whose full name ``known`` maps to a file (one a
  loaded namespace already serves) is not written again: the files using it
  import that file.

Where a type sits: a message whose full name's parent is another described
message is nested in it (a class declared in another's body, or named so by
``full_name``); otherwise it is a top-level message of the package its parent
name gives. An enum has no full name of its own in Python: a loaded enum
keeps its schema's; one defined in a message class's body is nested in that
message; any other is a top-level enum of the package of the first message
that uses it (named by its ``__name__``).

The syntax of a file: ``proto3`` when every class of the package is a
proto3 class that proto3 can say (no ``required``, groups, defaults,
extension ranges or strings without UTF-8 checks, no closed enum), ``proto2``
likewise, else edition 2023 with each field's features written where they
differ from the edition's defaults ("Feature Settings for Editions"), which
says every pbj field exactly. Either way a message encodes to the same bytes
with a class Google's runtime builds from the file as with the pbj class.
"""

from __future__ import annotations

import enum
import keyword
import math
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pbj import descriptor as _descriptor
from pbj.errors import SchemaError
from pbj.scalars import SCALAR_NAMES, SCALARS
from pbj.schema import info, is_message
from pbj.schema.records import FieldInfo, MessageInfo
from pbj.wellknown import WELL_KNOWN

if TYPE_CHECKING:
    from pbj.loader.services import Service

__all__ = ["describe", "DECLARED_FILE", "WELL_KNOWN_FILES"]

# typed Any: the descriptor classes are declared through a helper the checkers do not see through
D: Any = _descriptor

#: The name of the file of a package's declared types, under the package's path.
DECLARED_FILE = "declared.proto"

#: The file of each well-known type (``google/protobuf/*.proto``); any other ``google.protobuf``
#: type is one of ``descriptor.proto``'s.
WELL_KNOWN_FILES = {
    **{f"google.protobuf.{n}": "google/protobuf/wrappers.proto" for n in (
        "DoubleValue", "FloatValue", "Int64Value", "UInt64Value", "Int32Value", "UInt32Value", "BoolValue",
        "StringValue", "BytesValue")},
    **{f"google.protobuf.{n}": "google/protobuf/struct.proto" for n in ("Struct", "Value", "ListValue", "NullValue")},
    "google.protobuf.Timestamp": "google/protobuf/timestamp.proto",
    "google.protobuf.Duration": "google/protobuf/duration.proto",
    "google.protobuf.Empty": "google/protobuf/empty.proto",
    "google.protobuf.FieldMask": "google/protobuf/field_mask.proto",
    "google.protobuf.Any": "google/protobuf/any.proto",
}
_GOOGLE = "google.protobuf"
_LOADED = "pbj._loaded"
_ENUM_NAMES = {cls: full for full, cls in WELL_KNOWN.items() if not is_message(cls)}
_TYPES = {name: D.Type[f"TYPE_{name.upper()}"] for name in SCALAR_NAMES}
_EDITION_2023 = D.Edition.EDITION_2023


def describe(*items: Any, known: Mapping[str, str] | None = None) -> list[Any]:
    """The ``FileDescriptorProto``\\ s describing message classes, enums and services.

    Args:
        items: pbj message classes (declared or loaded), ``enum.IntEnum``
            classes and :class:`pbj.Service` objects; every type they use is
            described too (a service's input and output messages, each
            message's field types, the extensions registered on a message).
        known: full name -> the name of a file that already declares it (a
            loaded namespace's, served beside these): such a type is not written
            again, and a file that uses it imports that file.

    Returns:
        The decoded ``FileDescriptorProto``\\ s (:mod:`pbj.descriptor`), each
        after the files it imports (the order a ``FileDescriptorSet`` and a
        ``DescriptorPool`` need); the files of ``known`` are not among them.

    Raises:
        SchemaError: a full name is not a dotted name of identifiers (a class
            declared in a function needs ``full_name=``); two different classes
            have one full name; two symbols of one scope share a name (protobuf
            puts an enum's values beside the enum, C++ scoping); the packages'
            files would import each other in a circle (protobuf forbids it).
        TypeError: an item is not a message class, an enum or a service.
    """
    writer = _Writer(dict(known or {}))
    for item in items:
        if isinstance(item, type) and is_message(item):
            writer.add_message(item)
        elif isinstance(item, type) and issubclass(item, enum.IntEnum):
            writer.add_enum(item, None)
        elif hasattr(item, "methods") and hasattr(item, "full_name"):
            writer.add_service(item)
        else:
            raise TypeError(f"describe takes pbj message classes, enum.IntEnum classes and pbj.Service objects, "
                            f"not {item!r}")
    return writer.files()


def _check_name(full: str, what: str) -> None:
    if not full or not all(p.isidentifier() and not keyword.iskeyword(p) for p in full.split(".")):
        raise SchemaError(f"{what} full name {full!r} is not a dotted name of identifiers (a class declared "
                          f"inside a function needs @pbj.message(full_name=...))", cls_name=full)


def _python_outer(cls: type) -> Any:
    """The message class whose body defines ``cls`` (found through its module), or None."""
    qual = cls.__qualname__
    if "." not in qual or "<locals>" in qual:
        return None
    obj: Any = sys.modules.get(cls.__module__)
    for part in qual.split(".")[:-1]:
        obj = getattr(obj, part, None)
    ok = isinstance(obj, type) and is_message(obj) and getattr(obj, cls.__name__, None) is cls
    return obj if ok else None


def _has_strings(f: FieldInfo) -> bool:
    return "string" in ((f.map_key, f.map_value) if f.is_map else (f.type,))


def _is_enum(t: Any) -> bool:
    return isinstance(t, type) and issubclass(t, enum.IntEnum)


def _closed(t: Any) -> bool:
    return bool(getattr(t, "__pbj_closed__", False))


def _packable(f: FieldInfo) -> bool:
    return f.repeated and not f.is_map and (_is_enum(f.type) or (isinstance(f.type, str) and SCALARS[f.type].packable))


def _entry_name(f: FieldInfo) -> str:
    """protoc's name of a map field's entry message: the field's name in CamelCase, and ``Entry``."""
    return "".join(p[:1].upper() + p[1:] for p in (f.proto_name or f.name).split("_")) + "Entry"


def _fits(mi: MessageInfo, syntax: str) -> bool:
    """Whether the file syntax ``syntax`` can say every field of ``mi`` as pbj holds it."""
    if mi.syntax != syntax:
        return False
    for f in mi.all_fields():
        singular = not f.repeated and f.oneof is None
        if syntax == "proto3":
            if f.required or f.group or f.default is not None or (_has_strings(f) and not f.utf8):
                return False
            if _is_enum(f.type) and _closed(f.type):
                return False
        else:
            if singular and not f.optional and not f.required:
                return False  # implicit presence
            if _has_strings(f) and f.utf8:
                return False  # proto2 does not check UTF-8
    return syntax == "proto2" or not (mi.extension_ranges or mi.message_set)


def _default_text(value: Any) -> str:
    """A declared default as ``default_value`` writes it (``descriptor.proto``: C-escaped bytes, enum names)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, enum.IntEnum):
        return str(getattr(type(value), "__pbj_proto_names__", {}).get(value.name, value.name))
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        return ("-inf" if value < 0 else "inf") if math.isinf(value) else repr(value)
    if isinstance(value, bytes):
        return "".join(chr(b) if 32 <= b < 127 and b not in b"\\\"'" else
                       ("\\" + chr(b) if b in b"\\\"'" else f"\\{b:03o}") for b in value)
    return str(value)


class _Writer:
    """Collects the types to describe, then lays them out in files."""

    def __init__(self, known: dict[str, str]) -> None:
        self.known = known
        self.messages: dict[str, type] = {}
        self.enums: dict[Any, Any] = {}  # enum -> full name (None until named after its first user)
        self.enum_users: dict[Any, type] = {}
        self.services: list[Any] = []
        self.extensions: dict[str, Any] = {}
        self.names: dict[str, str] = {}  # package -> its file's name

    # ------------------------------------------------------------ collecting

    def add_message(self, cls: type) -> None:
        mi = info(cls)
        full = mi.full_name
        found = self.messages.get(full)
        if found is cls or full in self.known:
            return
        if found is not None:
            raise SchemaError(f"two different classes are named {full!r}: {found!r} and {cls!r}", cls_name=full)
        _check_name(full, "message")
        self.messages[full] = cls
        outer = _python_outer(cls)
        if outer is not None and info(outer).full_name == full.rpartition(".")[0]:
            self.add_message(outer)
        for f in mi.all_fields():
            for t in ((f.map_value,) if f.is_map else (f.type,)):
                if _is_enum(t):
                    self.add_enum(t, cls)
                elif not isinstance(t, str):
                    self.add_message(t)
        for ext in mi.extensions.values():
            self.add_extension(ext)

    def add_enum(self, t: Any, user: type | None) -> None:
        if t in self.enums:
            return
        full = _ENUM_NAMES.get(t)
        module = t.__module__
        if full is None and (module == _LOADED or module.startswith(_LOADED + ".")):
            package = module[len(_LOADED) + 1:]
            full = f"{package}.{t.__qualname__}" if package else t.__qualname__
        if full is None:
            outer = _python_outer(t)
            if outer is not None:
                self.add_message(outer)
                full = f"{info(outer).full_name}.{t.__name__}"
        if full is None and user is None:
            full = f"{module}.{t.__qualname__}"
        self.enums[t] = full
        if user is not None:
            self.enum_users.setdefault(t, user)

    def add_extension(self, ext: Any) -> None:
        if ext.full_name in self.extensions or ext.full_name in self.known:
            return
        _check_name(ext.full_name, "extension")
        self.extensions[ext.full_name] = ext
        self.add_message(ext.extendee)
        if _is_enum(ext.type):
            self.add_enum(ext.type, ext.extendee)
        elif not isinstance(ext.type, str):
            self.add_message(ext.type)

    def add_service(self, svc: Service | Any) -> None:
        if svc.full_name in self.known or any(s.full_name == svc.full_name for s in self.services):
            return
        _check_name(svc.full_name, "service")
        self.services.append(svc)
        for m in svc:
            self.add_message(m.input)
            self.add_message(m.output)

    # ------------------------------------------------------------ laying out

    def _name_enums(self) -> None:
        for t, full in self.enums.items():
            if full is None:
                user = info(self.enum_users[t]).full_name
                self.enums[t] = f"{self.package_of(user)}.{t.__name__}".lstrip(".")
        for full in self.enums.values():
            assert full is not None
            _check_name(full, "enum")

    def package_of(self, full: str) -> str:
        """The package of a described message or enum (its outermost described message's parent)."""
        parent = full.rpartition(".")[0]
        while parent in self.messages:
            parent = parent.rpartition(".")[0]
        return parent

    def file_of(self, full: str) -> str:
        """The file that declares the type, service or extension ``full``."""
        if full in self.known:
            return self.known[full]
        package = self.package_of(full)
        if package == _GOOGLE:
            return WELL_KNOWN_FILES.get(full, "google/protobuf/descriptor.proto")
        name = self.names.get(package)
        if name is None:  # a known file of that name (another schema's) keeps it: this one takes a number
            base = f"{package.replace('.', '/')}/" if package else ""
            name = f"{base}{DECLARED_FILE}"
            taken = set(self.known.values())
            n = 1
            while name in taken:
                name = f"{base}declared_{n}.proto"
                n += 1
            self.names[package] = name
        return name

    def files(self) -> list[Any]:
        self._name_enums()
        enum_names: dict[str, Any] = {full: t for t, full in self.enums.items() if full not in self.known}
        groups: dict[str, dict[str, Any]] = {}

        def group(full: str, package: str) -> dict[str, Any]:
            name = self.file_of(full)
            return groups.setdefault(name, {"package": package, "messages": [], "enums": [], "extensions": [],
                                            "services": []})

        for full, cls in self.messages.items():
            if full.rpartition(".")[0] not in self.messages:
                group(full, self.package_of(full))["messages"].append(cls)
        for full, t in enum_names.items():
            if full.rpartition(".")[0] not in self.messages:
                group(full, self.package_of(full))["enums"].append(t)
        for full, ext in self.extensions.items():
            if full.rpartition(".")[0] not in self.messages:
                group(full, self.package_of(full))["extensions"].append(ext)
        for svc in self.services:
            group(svc.full_name, svc.package)["services"].append(svc)
        self._check_symbols(enum_names)
        built = {name: self._file(name, g) for name, g in groups.items()}
        return self._ordered(built)

    def _check_symbols(self, enum_names: dict[str, Any]) -> None:
        """Refuse two symbols of one name (fields, oneofs, nested types, enum values beside their enum)."""
        seen: dict[str, str] = {}

        def add(full: str, what: str) -> None:
            if full in seen:
                raise SchemaError(f"{full!r} would be declared twice, as {seen[full]} and as {what} (protobuf "
                                  f"puts an enum's values beside the enum: rename one, or nest the enum in a "
                                  f"message's body)", cls_name=full)
            seen[full] = what
        for full in self.messages:
            add(full, "a message")
        for full, t in enum_names.items():
            add(full, "an enum")
            scope = full.rpartition(".")[0]
            for name in t.__members__:
                value = getattr(t, "__pbj_proto_names__", {}).get(name, name)
                add(f"{scope}.{value}" if scope else value, f"a value of enum {full}")
        for full, cls in self.messages.items():
            mi = info(cls)
            for f in mi.all_fields():
                add(f"{full}.{f.proto_name or f.name}", f"a field of {full}")
            for o in mi.oneofs:
                add(f"{full}.{o.name}", f"a oneof of {full}")
        for full in self.extensions:
            add(full, "an extension")

    # ------------------------------------------------------------ writing

    def _file(self, name: str, g: dict[str, Any]) -> Any:
        classes = [c for c in self.messages.values() if self.file_of(info(c).full_name) == name]
        enums = [t for t, full in self.enums.items() if full not in self.known and self.file_of(full) == name]
        syntax = "editions"
        for candidate in ("proto3", "proto2"):
            if classes and all(_fits(info(c), candidate) for c in classes) and \
                    all(_closed(t) == (candidate == "proto2") for t in enums) and \
                    (candidate == "proto2" or not g["extensions"]):
                syntax = candidate
        if not classes and not g["extensions"] and all(not _closed(t) for t in enums):
            syntax = "proto3"  # only services and open enums
        deps: set[str] = set()
        out = _FileWriter(self, syntax, deps)
        messages = [out.message(c) for c in g["messages"]]
        enums_ = [out.enum(t) for t in g["enums"]]
        services = [out.service(s) for s in g["services"]]
        extensions = [out.extension(e) for e in g["extensions"]]
        return D.FileDescriptorProto(
            name=name, package=g["package"] or None, dependency=sorted(deps - {name}), message_type=messages,
            enum_type=enums_, service=services, extension=extensions, syntax=syntax,
            edition=_EDITION_2023 if syntax == "editions" else None)

    def _ordered(self, built: dict[str, Any]) -> list[Any]:
        out: list[Any] = []
        state: dict[str, int] = {}

        def visit(name: str, path: list[str]) -> None:
            if state.get(name) == 2 or name not in built:
                return
            if state.get(name) == 1:
                circle = [*path[path.index(name):], name]
                raise SchemaError(f"the files {' -> '.join(circle)} would import each other in a circle, "
                                  f"which protobuf forbids: their packages use each other's types")
            state[name] = 1
            for dep in built[name].dependency:
                visit(dep, [*path, name])
            state[name] = 2
            out.append(built[name])
        for name in sorted(built):
            visit(name, [])
        return out


class _FileWriter:
    """Writes the descriptors of one file in one syntax, noting the files its references import."""

    def __init__(self, writer: _Writer, syntax: str, deps: set[str]) -> None:
        self.w = writer
        self.syntax = syntax
        self.deps = deps

    def ref(self, t: Any) -> str:
        full = self.w.enums[t] if _is_enum(t) else info(t).full_name
        assert full is not None
        self.deps.add(self.w.file_of(full))
        return f".{full}"

    def message(self, cls: type) -> Any:
        mi = info(cls)
        full = mi.full_name
        fields: list[Any] = []
        oneofs = [D.OneofDescriptorProto(name=o.name) for o in mi.oneofs]
        index = {o.name: i for i, o in enumerate(mi.oneofs)}
        entries: list[Any] = []
        synthetic: list[Any] = []
        by_attr = {f.name: f for f in mi.fields}
        for attr in mi.attr_order:
            if attr in index:
                one = next(o for o in mi.oneofs if o.name == attr)
                fields += [self.field(m, full, oneof_index=index[attr]) for m in one.members]
                continue
            f = by_attr[attr]
            if f.is_map:
                entries.append(self.entry(f, full))
            if self.syntax == "proto3" and f.optional and not f.repeated and f.kind != "message":
                synthetic.append(D.OneofDescriptorProto(name=f"_{f.proto_name or f.name}"))
                fields.append(self.field(f, full, oneof_index=len(oneofs) + len(synthetic) - 1, proto3_optional=True))
            else:
                fields.append(self.field(f, full))
        nested = [self.message(c) for n, c in self.w.messages.items() if n.rpartition(".")[0] == full]
        enums = [self.enum(t) for t, n in self.w.enums.items()
                 if n is not None and n.rpartition(".")[0] == full and n not in self.w.known]
        extensions = [self.extension(e) for n, e in self.w.extensions.items() if n.rpartition(".")[0] == full]
        options = None
        if mi.message_set:
            options = D.MessageOptions(message_set_wire_format=True)
        return D.DescriptorProto(
            name=full.rpartition(".")[2], field=fields, nested_type=[*nested, *entries], enum_type=enums,
            extension_range=[D.ExtensionRange(start=a, end=b) for a, b in mi.extension_ranges],
            extension=extensions, options=options, oneof_decl=[*oneofs, *synthetic],
            reserved_name=sorted(mi.reserved_names))

    def entry(self, f: FieldInfo, owner: str) -> Any:
        key = FieldInfo("key", 1, f.map_key, proto_name="key", json_name="key", utf8=f.utf8)
        value = FieldInfo("value", 2, f.map_value, proto_name="value", json_name="value", utf8=f.utf8,
                          optional=not isinstance(f.map_value, str) and not _is_enum(f.map_value))
        return D.DescriptorProto(name=_entry_name(f), field=[self.field(key, owner, in_entry=True),
                                                             self.field(value, owner, in_entry=True)],
                                 options=D.MessageOptions(map_entry=True))

    def field(self, f: FieldInfo, owner: str, *, oneof_index: int | None = None, proto3_optional: bool = False,
              in_entry: bool = False, name: str | None = None, extendee: str | None = None) -> Any:
        L, T = D.Label, D.Type
        editions = self.syntax == "editions"
        type_name = None
        if f.is_map:
            kind = T.TYPE_MESSAGE
            type_name = f".{owner}.{_entry_name(f)}"
        elif isinstance(f.type, str):
            kind = _TYPES[f.type]
        elif _is_enum(f.type):
            kind, type_name = T.TYPE_ENUM, self.ref(f.type)
        else:
            kind = T.TYPE_GROUP if f.group and self.syntax == "proto2" else T.TYPE_MESSAGE
            type_name = self.ref(f.type)
        label = L.LABEL_REPEATED if f.repeated else \
            L.LABEL_REQUIRED if f.required and self.syntax == "proto2" else L.LABEL_OPTIONAL
        options: dict[str, Any] = {}
        features: dict[str, Any] = {}
        if _packable(f):
            if self.syntax == "proto2" and f.packed:
                options["packed"] = True
            elif self.syntax == "proto3" and not f.packed:
                options["packed"] = False
            elif editions and not f.packed:
                features["repeated_field_encoding"] = D.RepeatedFieldEncoding.EXPANDED
        if editions:
            if not f.repeated and f.oneof is None and not in_entry and extendee is None:
                if f.required:
                    features["field_presence"] = D.FieldPresence.LEGACY_REQUIRED
                elif not f.optional:
                    features["field_presence"] = D.FieldPresence.IMPLICIT
            if _has_strings(f) and not f.utf8:
                features["utf8_validation"] = D.Utf8Validation.NONE
            if f.group and not f.is_map:
                features["message_encoding"] = D.MessageEncoding.DELIMITED
        if features:
            options["features"] = D.FeatureSet(**features)
        return D.FieldDescriptorProto(
            name=name or f.proto_name or f.name, number=f.number, label=label, type=kind, type_name=type_name,
            extendee=extendee, default_value=None if f.default is None else _default_text(f.default),
            options=D.FieldOptions(**options) if options else None, oneof_index=oneof_index,
            json_name=None if extendee else f.json_name or None, proto3_optional=proto3_optional or None)

    def extension(self, ext: Any) -> Any:
        f = FieldInfo("value", ext.number, ext.type, repeated=ext.repeated, packed=ext.packed,
                      optional=not ext.repeated, group=ext.group, utf8=ext.field.utf8,
                      default=None if ext.repeated else ext.default)
        return self.field(f, "", name=ext.full_name.rpartition(".")[2], extendee=self.ref(ext.extendee))

    def enum(self, t: Any) -> Any:
        names = getattr(t, "__pbj_proto_names__", {})
        members = t.__members__
        values = [D.EnumValueDescriptorProto(name=names.get(n, n), number=int(v)) for n, v in members.items()]
        aliased = len(values) > len(t)
        features = D.FeatureSet(enum_type=D.EnumType.CLOSED) if self.syntax == "editions" and _closed(t) else None
        options = D.EnumOptions(allow_alias=True if aliased else None, features=features) \
            if aliased or features is not None else None
        full = self.w.enums[t]
        assert full is not None
        return D.EnumDescriptorProto(name=full.rpartition(".")[2], value=values, options=options)

    def service(self, svc: Any) -> Any:
        methods = [D.MethodDescriptorProto(name=m.name, input_type=self.ref(m.input), output_type=self.ref(m.output),
                                           options=m.options, client_streaming=m.client_streaming or None,
                                           server_streaming=m.server_streaming or None) for m in svc]
        return D.ServiceDescriptorProto(name=svc.name, method=methods, options=svc.options)
