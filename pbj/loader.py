"""Loading real schemas at run time: ``pbj.load_descriptor_set`` and ``pbj.load_proto``.

A ``google.protobuf.FileDescriptorSet`` (what ``protoc --include_imports
--descriptor_set_out`` or ``buf build -o`` writes) is decoded with pbj itself
(:mod:`pbj.descriptor`) and turned into ordinary pbj classes, one per message
and one ``enum.IntEnum`` per enum, nested ones included. The classes are the
same kind ``@pbj.message`` makes; their codecs are compiled on first use.

How the descriptors map onto pbj declarations (protobuf.dev "Language Guide"
for proto2 and proto3, "Field Presence", "Encoding"):

* labels: ``repeated`` fields are tuples; proto2 ``optional`` singular fields
  and proto3 ``optional`` fields have explicit presence (``None`` when
  absent); proto2 ``required`` fields are ``required``;
* a proto3 ``optional`` field's synthetic oneof becomes a plain optional
  field; real oneofs become ``pbj.oneof`` attributes (placed where their first
  member is declared);
* repeated scalars are packed by default in proto3 and unpacked in proto2;
  ``[packed = ...]`` overrides either; editions files follow their
  ``repeated_field_encoding`` feature;
* a repeated field whose type is a map-entry message is a ``pbj.map_field``
  (entry messages get no class of their own);
* ``json_name`` and proto2 ``default`` values are kept on each field;
* groups (proto2) and ``DELIMITED`` message fields (editions) use the group
  encoding; extensions are not loaded (``Namespace.extensions`` lists them;
  on the wire they are kept and written back as unknown fields);
* proto2 enums (and editions enums with ``enum_type = CLOSED``) are closed:
  their class has ``__pbj_closed__ = True`` and the parser keeps a number that
  is not a member as an unknown field, as Google's runtimes do.

Names: a field whose name is a Python keyword (``from``), starts with
``_pbj`` or repeats another attribute gets a trailing underscore, with
``name=`` keeping the proto name. Message types refer to each other through
callables resolved on first use, so recursive schemas load.

Messages and enums of Google's well-known types (``google.protobuf.Timestamp``
…) are the classes of :mod:`pbj.wellknown`, not new ones.

Pickling: every loaded class lives, for ``pickle``, in a module
``pbj._loaded.<package>`` that resolves names in a process-wide registry of
the last schema loaded for each full name. Instances and enum members pickle
by full name, so another process that loaded the same schema unpickles them
into its own classes (``multiprocessing`` works).
"""

from __future__ import annotations

import enum
import keyword
import math
import os
import struct
import sys
import tempfile
import threading
import types
import typing
import unicodedata
import weakref
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pbj.errors import DecodeError, PbjError, SchemaError
from pbj.schema import FrozenMap, OneOf, field, info, map_field, message, oneof

__all__ = ["Namespace", "load_descriptor_set", "load_proto", "REGISTRY_MODULE"]

#: The module every loaded class names as its ``__module__`` (plus ``.<package>``).
REGISTRY_MODULE = "pbj._loaded"

#: ``FieldDescriptorProto.Type`` number -> pbj scalar type name.
_SCALARS = {
    1: "double", 2: "float", 3: "int64", 4: "uint64", 5: "int32", 6: "fixed64", 7: "fixed32",
    8: "bool", 9: "string", 12: "bytes", 13: "uint32", 15: "sfixed32", 16: "sfixed64",
    17: "sint32", 18: "sint64",
}
_TYPE_GROUP, _TYPE_MESSAGE, _TYPE_ENUM = 10, 11, 14
_LABEL_REQUIRED, _LABEL_REPEATED = 2, 3
_F32 = struct.Struct("<f")
_PY_TYPES = {"double": float, "float": float, "bool": bool, "string": str, "bytes": bytes}
# Editions feature values (descriptor.proto FeatureSet).
_EXPLICIT, _IMPLICIT, _LEGACY_REQUIRED = 1, 2, 3
_PACKED = 1
_DELIMITED = 2
_CLOSED = 2  # FeatureSet.EnumType.CLOSED

# Full name -> the latest loaded class or enum of that name, for pickle. Weak values: a schema
# whose classes are no longer used goes away whole (its registration with it).
_REGISTRY: weakref.WeakValueDictionary[str, Any] = weakref.WeakValueDictionary()
_registry_lock = threading.Lock()


# ------------------------------------------------------------------ the result

class Namespace:
    """The classes of a loaded schema.

    ``ns["com.hedera.hapi.block.stream.Block"]`` looks a message or enum up
    by full name (a leading dot is allowed); ``ns.com.hedera.hapi.block.stream.Block``
    does the same by package path (nested types too: ``ns.pkg.Outer.Inner``).
    Iterating gives the full names of all messages; ``len(ns)`` counts them.

    Attributes:
        messages: full name -> message class, nested messages included (map
            entries excluded), in the order of the descriptor set.
        enums: full name -> ``enum.IntEnum`` class.
        files: the decoded ``FileDescriptorProto`` of every file, in order.
        extensions: full name -> ``FieldDescriptorProto`` of every extension
            declared in the schema (not applied: extensions are not supported yet).
    """

    def __init__(self, messages: dict[str, type], enums: dict[str, type], files: tuple,
                 extensions: dict[str, Any]) -> None:
        self.messages = messages
        self.enums = enums
        self.files = files
        self.extensions = extensions
        prefixes: set[str] = set()
        for name in (*messages, *enums):
            parts = name.split(".")
            for i in range(1, len(parts)):
                prefixes.add(".".join(parts[:i]))
        self._prefixes = frozenset(prefixes)

    def __getitem__(self, full_name: str) -> type:
        """The message class or enum named ``full_name``.

        Raises:
            KeyError: no message or enum has that full name.
        """
        name = full_name[1:] if full_name.startswith(".") else full_name
        found = self.messages.get(name) or self.enums.get(name)
        if found is None:
            raise KeyError(f"no message or enum named {full_name!r} in this schema")
        return found

    def get(self, full_name: str, default: Any = None) -> Any:
        """The message class or enum named ``full_name``, or ``default``."""
        try:
            return self[full_name]
        except KeyError:
            return default

    def __contains__(self, full_name: object) -> bool:
        return isinstance(full_name, str) and self.get(full_name) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self.messages)

    def __len__(self) -> int:
        return len(self.messages)

    def _lookup(self, prefix: str, name: str) -> Any:
        full = f"{prefix}.{name}" if prefix else name
        found = self.messages.get(full) or self.enums.get(full)
        if found is not None:
            return found
        if full in self._prefixes:
            return _PackageView(self, full)
        raise AttributeError(f"no package, message or enum named {full!r} in this schema")

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("messages", "enums", "files", "extensions", "_prefixes"):
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


# ------------------------------------------------------------------ pickling

class _RegistryModule(types.ModuleType):
    """``pbj._loaded[.<package>]``: resolves loaded classes by name, for ``pickle``."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        prefix = self.__name__[len(REGISTRY_MODULE) + 1:]
        full = f"{prefix}.{name}" if prefix else name
        found = _REGISTRY.get(full)
        if found is None:
            raise AttributeError(f"{full!r} is not loaded in this process; load its schema with "
                                 "pbj.load_descriptor_set or pbj.load_proto first")
        return found


def _registry_module(package: str) -> str:
    """Make sure ``pbj._loaded.<package>`` and its parents are importable; return its name."""
    name = REGISTRY_MODULE
    parts = [REGISTRY_MODULE, *package.split(".")] if package else [REGISTRY_MODULE]
    for i in range(len(parts)):
        name = ".".join(parts[: i + 1])
        if name not in sys.modules:
            sys.modules[name] = _RegistryModule(name, "classes loaded by pbj.loader, by package")
    return name


def _lookup_loaded(full_name: str) -> Any:
    found = _REGISTRY.get(full_name)
    if found is None:
        raise LookupError(f"cannot unpickle {full_name!r}: its schema is not loaded in this process "
                          "(load it with pbj.load_descriptor_set or pbj.load_proto first)")
    return found


def _restore_message(full_name: str, values: tuple, unknown: bytes) -> Any:
    """Rebuild a pickled instance of a loaded message class (``__reduce__`` target)."""
    cls = _lookup_loaded(full_name)
    return cls(**dict(zip(cls.__pbj_info__.attr_order, values, strict=True)), _pbj_unknown=unknown)


def _restore_enum(full_name: str, number: int) -> Any:
    """Rebuild a pickled member of a loaded enum (``__reduce_ex__`` target)."""
    return _lookup_loaded(full_name)(number)


def _message_reduce(self: Any) -> tuple:
    mi = type(self).__pbj_info__
    return (_restore_message, (mi.full_name, tuple(getattr(self, a) for a in mi.attr_order),
                               self._pbj_unknown))


def _make_enum_reduce(full_name: str):
    def __reduce_ex__(self: Any, protocol: int) -> tuple:
        return (_restore_enum, (full_name, int(self)))
    return __reduce_ex__


# ------------------------------------------------------------------ building

def _well_known() -> dict[str, Any]:
    try:
        from pbj.wellknown import WELL_KNOWN
    except ImportError:  # pragma: no cover - the module ships with pbj
        return {}
    return WELL_KNOWN


def _unescape_bytes(text: str) -> bytes:
    """Undo the C escaping protoc applies to a ``bytes`` field's ``default_value``."""
    out = bytearray()
    raw = text.encode("latin-1", "backslashreplace") if all(ord(c) < 256 for c in text) else text.encode()
    i, n = 0, len(raw)
    simple = {ord("n"): 10, ord("r"): 13, ord("t"): 9, ord('"'): 34, ord("'"): 39, ord("\\"): 92,
              ord("a"): 7, ord("b"): 8, ord("f"): 12, ord("v"): 11, ord("?"): 63}
    while i < n:
        c = raw[i]
        if c != 92 or i + 1 >= n:
            out.append(c)
            i += 1
            continue
        d = raw[i + 1]
        if d in simple:
            out.append(simple[d])
            i += 2
        elif 48 <= d <= 55:
            j = i + 1
            while j < n and j < i + 4 and 48 <= raw[j] <= 55:
                j += 1
            out.append(int(raw[i + 1:j], 8) & 0xFF)
            i = j
        elif d in (ord("x"), ord("X")):
            j = i + 2
            while j < n and j < i + 4 and chr(raw[j]) in "0123456789abcdefABCDEF":
                j += 1
            out.append(int(raw[i + 2:j] or b"0", 16) & 0xFF)
            i = j
        else:
            out.append(d)
            i += 2
    return bytes(out)


def _parse_default(text: str, ftype: Any, full: str, fname: str) -> Any:
    """A proto2 ``default_value`` (text as protoc writes it) as a Python value."""
    try:
        if isinstance(ftype, type) and issubclass(ftype, enum.IntEnum):
            return ftype.__members__.get(text, ftype.__members__.get(text + "_"))
        if ftype == "double":
            return float(text)
        if ftype == "float":  # the value a float field holds: rounded to 32 bits
            value = float(text)
            return value if not math.isfinite(value) else _F32.unpack(_F32.pack(value))[0]
        if ftype == "bool":
            return text == "true"
        if ftype == "string":
            return text
        if ftype == "bytes":
            return _unescape_bytes(text)
        if isinstance(ftype, str):
            return int(text, 0)
    except ValueError:
        raise SchemaError(f"default value {text!r} does not fit the field's type", cls_name=full,
                          field_name=fname) from None
    return None


def _attr_name(proto_name: str, taken: set[str]) -> str:
    """The Python attribute name of a field: its proto name, made safe and unique.

    The name is NFKC-normalised first, as Python normalises identifiers in
    source ("Identifiers and keywords" in the Python reference), so that
    ``obj.<name>`` written in code reaches the field (``ﬁ`` becomes ``fi``,
    ``M²`` becomes ``M2``); ``proto_name`` keeps the schema's spelling. A
    keyword or a name already taken gets trailing underscores; a dunder name
    or one starting with ``_pbj`` (pbj's own slots) gets an ``f`` in front.

    Raises:
        SchemaError: the name is not an identifier, even NFKC-normalised (only a
            corrupt descriptor has one: protoc accepts letters, digits and ``_``).
    """
    name = unicodedata.normalize("NFKC", proto_name)
    if not name.isidentifier():
        raise SchemaError(f"field name {proto_name!r} is not an identifier")
    if name.startswith("_pbj") or (name.startswith("__") and name.endswith("__")):
        name = "f" + name
    while keyword.iskeyword(name) or name in taken:
        name += "_"
    taken.add(name)
    return name


def _enum_member_names(values: list[tuple[str, int]]) -> list[tuple[str, int]]:
    out = []
    for name, number in values:
        if name.startswith("_") or name in ("name", "value", "mro"):
            name = name + "_" if not name.startswith("_") else "V" + name
        out.append((name, number))
    return out


class _Builder:
    """Turns the decoded descriptors of one descriptor set into classes."""

    def __init__(self, fds: Any) -> None:
        self.fds = fds
        self.known = _well_known()
        self.msg_desc: dict[str, tuple] = {}  # full name -> (DescriptorProto, file, features chain, package)
        self.enum_desc: dict[str, tuple] = {}  # full name -> (EnumDescriptorProto, package)
        self.messages: dict[str, type] = {}
        self.enums: dict[str, type] = {}
        self.extensions: dict[str, Any] = {}
        self.map_entries: set[str] = set()
        self.closed_enums: set[str] = set()  # full names of closed enums (proto2, editions CLOSED)

    # -- collecting

    def collect(self) -> None:
        for fd in self.fds.file:
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
                self.extensions[_join(package, ext.name or "")] = ext

    def _collect_enum(self, ed: Any, scope: str, package: str, fd: Any = None, feats: list = ()) -> None:
        if not ed.name:
            raise SchemaError(f"an enum in {scope or 'the root package'} has no name")
        self.enum_desc[_join(scope, ed.name)] = (ed, package)
        syntax = (fd.syntax if fd is not None else None) or "proto2"
        if syntax == "editions":
            own = [ed.options.features] if ed.options is not None and ed.options.features is not None else []
            closed = any(fs.enum_type is not None for fs in [*feats, *own]) and \
                next(fs.enum_type for fs in reversed([*feats, *own]) if fs.enum_type is not None) == _CLOSED
        else:
            closed = syntax == "proto2"
        if closed:
            self.closed_enums.add(_join(scope, ed.name))
        elif ed.value and ed.value[0].number != 0:
            # "Enumerations" (proto3): the first value must be zero, the default of an open enum
            raise SchemaError(f"the first value of open enum {_join(scope, ed.name)!r} is "
                              f"{ed.value[0].number}, not 0")

    def _collect_message(self, md: Any, scope: str, package: str, fd: Any, feats: list) -> None:
        if not md.name:
            raise SchemaError(f"a message in {scope or 'the root package'} has no name")
        full = _join(scope, md.name)
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
            self.extensions[_join(full, ext.name or "")] = ext

    # -- enums

    def build_enums(self) -> None:
        for full, (ed, package) in self.enum_desc.items():
            known = self.known.get(full)
            if known is not None:
                self.enums[full] = known
                continue
            if not ed.value:
                raise SchemaError("an enum needs at least one value", cls_name=full)
            pairs = _enum_member_names([(v.name or f"VALUE_{v.number}", v.number or 0) for v in ed.value])
            qualname = full[len(package) + 1:] if package else full
            try:
                cls = enum.IntEnum(qualname.rsplit(".", 1)[-1], pairs, module=_registry_module(package),
                                   qualname=qualname)
            except (ValueError, TypeError) as exc:
                raise SchemaError(f"cannot build enum: {exc}", cls_name=full) from None
            cls.__reduce_ex__ = _make_enum_reduce(full)
            cls.__doc__ = f"The enum {full}."
            if full in self.closed_enums:  # the parser keeps non-member numbers as unknown fields
                cls.__pbj_closed__ = True
            self.enums[full] = cls

    # -- messages

    def _type_name(self, fdp: Any, owner: str) -> str:
        name = fdp.type_name or ""
        if name.startswith("."):
            return name[1:]
        # A relative name (not written by protoc): search the enclosing scopes.
        scope = owner
        while True:
            candidate = _join(scope, name)
            if candidate in self.msg_desc or candidate in self.enum_desc:
                return candidate
            if not scope:
                raise SchemaError(f"unknown type {name!r}", cls_name=owner, field_name=fdp.name)
            scope = scope.rpartition(".")[0]

    def _field_type(self, fdp: Any, owner: str) -> Any:
        """The pbj type of a field: a scalar name, an enum class or a message reference."""
        t = fdp.type
        if t in _SCALARS:
            return _SCALARS[t]
        if t is None and fdp.type_name:
            target = self._type_name(fdp, owner)
            t = _TYPE_ENUM if target in self.enum_desc else _TYPE_MESSAGE
        if t == _TYPE_ENUM:
            target = self._type_name(fdp, owner)
            if target not in self.enums:
                raise SchemaError(f"unknown enum type {fdp.type_name!r}", cls_name=owner, field_name=fdp.name)
            return self.enums[target]
        if t in (_TYPE_MESSAGE, _TYPE_GROUP):
            target = self._type_name(fdp, owner)
            if target not in self.msg_desc:
                raise SchemaError(f"unknown message type {fdp.type_name!r}", cls_name=owner,
                                  field_name=fdp.name)
            return self._ref(target)
        raise SchemaError(f"unknown field type {t!r}", cls_name=owner, field_name=fdp.name)

    def _ref(self, target: str) -> Any:
        known = self.known.get(target)
        if known is not None:
            return known
        messages = self.messages
        return lambda: messages[target]

    @staticmethod
    def _feature(feats: list, fdp: Any, name: str) -> Any:
        if fdp is not None and fdp.options is not None and fdp.options.features is not None:
            v = getattr(fdp.options.features, name)
            if v is not None:
                return v
        for fs in reversed(feats):
            v = getattr(fs, name)
            if v is not None:
                return v
        return None

    def build_message(self, full: str) -> type:
        md, fd, feats, package = self.msg_desc[full]
        syntax = fd.syntax or "proto2"
        taken: set[str] = set()
        # Nested type names stay free for class attributes (ns.pkg.Outer.Inner).
        anns: dict[str, Any] = {}
        body: dict[str, Any] = {}
        synthetic = {f.oneof_index for f in md.field if f.proto3_optional and f.oneof_index is not None}
        real_oneofs: dict[int, list] = {}
        order: list[tuple[str, Any]] = []  # ("field", fdp) or ("oneof", index), declaration order
        for fdp in md.field:
            idx = fdp.oneof_index
            if idx is not None and idx not in synthetic:
                if idx >= len(md.oneof_decl) or idx < 0:
                    raise SchemaError(f"oneof_index {idx} is out of range", cls_name=full, field_name=fdp.name)
                if idx not in real_oneofs:
                    real_oneofs[idx] = []
                    order.append(("oneof", idx))
                real_oneofs[idx].append(fdp)
            else:
                order.append(("field", fdp))
        for kind, item in order:
            if kind == "oneof":
                od = md.oneof_decl[item]
                attr = _attr_name(od.name or f"oneof_{item}", taken)
                members: dict[str, tuple] = {}
                member_names: set[str] = set()
                for fdp in real_oneofs[item]:
                    self._check_field(fdp, full)
                    ftype = self._field_type(fdp, full)
                    opts: dict[str, Any] = {"name": fdp.name}
                    if fdp.json_name:
                        opts["json_name"] = fdp.json_name
                    if self._is_group(fdp, feats, syntax):
                        opts["group"] = True
                    if fdp.default_value is not None:
                        opts["default"] = _parse_default(fdp.default_value, ftype, full, fdp.name)
                    members[_attr_name(fdp.name, member_names)] = (fdp.number, ftype, opts)
                anns[attr] = OneOf | None
                body[attr] = oneof(**members)
                continue
            fdp = item
            self._check_field(fdp, full)
            attr = _attr_name(fdp.name, taken)
            ann, spec = self._field_spec(fdp, full, feats, syntax)
            anns[attr] = ann
            body[attr] = spec
        qualname = full[len(package) + 1:] if package else full
        ns = {"__annotations__": anns, **body, "__module__": _registry_module(package),
              "__doc__": f"The message {full} (loaded from {fd.name}).", "__reduce__": _message_reduce}
        raw = type(qualname.rsplit(".", 1)[-1], (), ns)
        message_set = bool(md.options is not None and md.options.message_set_wire_format)
        cls = message(raw, full_name=full, syntax=syntax, message_set=message_set)
        cls.__qualname__ = qualname
        cls.__pbj_fields_taken__ = frozenset(taken)
        return cls

    @staticmethod
    def _check_field(fdp: Any, full: str) -> None:
        if not fdp.name:
            raise SchemaError("a field has no name", cls_name=full)
        if fdp.number is None:
            raise SchemaError("a field has no number", cls_name=full, field_name=fdp.name)

    def _is_group(self, fdp: Any, feats: list, syntax: str) -> bool:
        if fdp.type == _TYPE_GROUP:
            return True
        if syntax == "editions" and fdp.type == _TYPE_MESSAGE:
            return self._feature(feats, fdp, "message_encoding") == _DELIMITED
        return False

    def _field_spec(self, fdp: Any, full: str, feats: list, syntax: str) -> tuple[Any, Any]:
        repeated = fdp.label == _LABEL_REPEATED
        json_name = fdp.json_name or None
        if repeated and fdp.type == _TYPE_MESSAGE:
            target = self._type_name(fdp, full)
            if target in self.map_entries:
                return FrozenMap, self._map_spec(fdp, target, json_name)
        ftype = self._field_type(fdp, full)
        is_message = not isinstance(ftype, str) and not (isinstance(ftype, type) and issubclass(ftype, enum.IntEnum))
        group = self._is_group(fdp, feats, syntax)
        packable = not is_message and ftype not in ("string", "bytes")
        packed = None
        optional = False
        required = fdp.label == _LABEL_REQUIRED
        opt_packed = fdp.options.packed if fdp.options is not None else None
        if repeated and packable:
            if syntax == "proto3":
                packed = opt_packed if opt_packed is not None else True
            elif syntax == "proto2":
                packed = bool(opt_packed)
            else:
                enc = self._feature(feats, fdp, "repeated_field_encoding")
                packed = opt_packed if opt_packed is not None else enc in (None, _PACKED)
        elif not repeated and not is_message:
            if syntax == "proto3":
                optional = bool(fdp.proto3_optional)
            elif syntax == "proto2":
                optional = not required
            else:
                presence = self._feature(feats, fdp, "field_presence")
                required = required or presence == _LEGACY_REQUIRED
                optional = not required and presence in (None, _EXPLICIT)
        default = None
        if fdp.default_value is not None:
            default = _parse_default(fdp.default_value, ftype, full, fdp.name)
        kwargs: dict[str, Any] = {"name": fdp.name, "json_name": json_name}
        if default is not None:
            kwargs["default"] = default
        spec = field(fdp.number, ftype, repeated=repeated, packed=packed if repeated and packable else None,
                     optional=optional, group=group, required=required, **kwargs)
        return _annotation(ftype, repeated, optional or required or is_message), spec

    def _map_spec(self, fdp: Any, entry: str, json_name: str | None) -> Any:
        md = self.msg_desc[entry][0]
        by_number = {f.number: f for f in md.field}
        if 1 not in by_number or 2 not in by_number:
            raise SchemaError("a map entry needs a key (1) and a value (2)", cls_name=entry)
        key = self._field_type(by_number[1], entry)
        value = self._field_type(by_number[2], entry)
        return map_field(fdp.number, key, value, json_name=json_name, name=fdp.name)

    def build(self) -> Namespace:
        self.collect()
        self.build_enums()
        for full in self.msg_desc:
            if full in self.map_entries:
                continue
            known = self.known.get(full)
            self.messages[full] = known if known is not None else self.build_message(full)
        # Nested classes as class attributes (ns.pkg.Outer.Inner, and pickling of classes),
        # unless a field of the outer class has the same name.
        for full, cls in (*self.messages.items(), *self.enums.items()):
            parent, _, short = full.rpartition(".")
            outer = self.messages.get(parent)
            if outer is None or outer is self.known.get(parent) or short in outer.__pbj_fields_taken__:
                continue
            setattr(outer, short, cls)
        return Namespace(self.messages, self.enums, tuple(self.fds.file), self.extensions)


def _annotation(ftype: Any, repeated: bool, optional: bool) -> Any:
    if repeated:
        return tuple
    if isinstance(ftype, str):
        base: Any = _PY_TYPES.get(ftype, int)
    elif isinstance(ftype, type):
        base = ftype
    else:
        return typing.Any  # a message reference, resolved on first use
    return base | None if optional else base


def _join(scope: str, name: str) -> str:
    return f"{scope}.{name}" if scope else name


# ------------------------------------------------------------------ public API

def load_descriptor_set(data: bytes | bytearray | memoryview) -> Namespace:
    """Build pbj classes for every message and enum of a ``FileDescriptorSet``.

    Args:
        data: the serialized ``google.protobuf.FileDescriptorSet`` (from
            ``protoc --include_imports --descriptor_set_out=F`` or ``buf build -o F``).
            Every file a file imports must be in the set.

    Returns:
        A :class:`Namespace` of the new classes (and of :mod:`pbj.wellknown`
        classes for Google's well-known types).

    Raises:
        DecodeError: ``data`` is not a valid encoding of a ``FileDescriptorSet``.
        SchemaError: the descriptors are inconsistent: a type name that no
            file defines, a message defined twice, a field with no name or
            number, or a declaration pbj refuses (duplicate field number …).
            Nothing is registered when loading fails.
    """
    from pbj.api import decode
    from pbj.descriptor import FileDescriptorSet

    fds = decode(FileDescriptorSet, data)
    builder = _Builder(fds)
    try:
        ns = builder.build()
        for cls in ns.messages.values():
            info(cls)  # resolve every type reference now: a dangling one fails the load, not a later use
    except PbjError:
        raise
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        raise SchemaError(f"malformed descriptor set: {type(exc).__name__}: {exc}") from None
    with _registry_lock:
        for full, cls in (*ns.enums.items(), *ns.messages.items()):
            if full not in builder.known:
                _REGISTRY[full] = cls
    return ns


_protoc_lock = threading.Lock()


def _run_protoc(args: list[str]) -> tuple[int, str]:
    """Run grpc_tools' protoc in this process; return its exit status and what it wrote to stderr."""
    from grpc_tools import protoc as grpc_protoc

    with _protoc_lock, tempfile.TemporaryFile() as err:
        sys.stderr.flush()
        saved = os.dup(2)
        try:
            os.dup2(err.fileno(), 2)
            status = grpc_protoc.main(args)
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        err.seek(0)
        return status, err.read().decode("utf-8", "replace")


def load_proto(files: str | os.PathLike | Iterable[str | os.PathLike],
               include: Iterable[str | os.PathLike] = ()) -> Namespace:
    """Compile ``.proto`` files with the protoc of ``grpcio-tools`` and load them.

    Args:
        files: one or more ``.proto`` files (paths on disk, or paths relative
            to an include directory).
        include: import directories (protoc's ``-I``). Default: the directory
            of each file. Google's well-known ``.proto`` files (those
            ``grpcio-tools`` ships) are always importable.

    Returns:
        A :class:`Namespace`, as :func:`load_descriptor_set` gives, of the
        files and everything they import.

    Raises:
        SchemaError: ``grpcio-tools`` is not installed (``pip install 'pbj[proto]'``),
            or protoc refused the files; the message carries protoc's own
            error lines.
    """
    if isinstance(files, (str, os.PathLike)):
        files = [files]
    files = [str(f) for f in files]
    if not files:
        raise SchemaError("load_proto needs at least one .proto file")
    try:
        import grpc_tools
    except ImportError:
        raise SchemaError("load_proto needs protoc from grpcio-tools: pip install 'pbj[proto]'") from None
    includes = [str(i) for i in include] or sorted({str(Path(f).resolve().parent) for f in files})
    builtin = Path(grpc_tools.__file__).parent / "_proto"
    with tempfile.TemporaryDirectory(prefix="pbj-protoc-") as tmp:
        out = Path(tmp) / "set.binpb"
        args = ["protoc", "--include_imports", f"--descriptor_set_out={out}",
                *(f"-I{i}" for i in includes), f"-I{builtin}", *files]
        status, errors = _run_protoc(args)
        if status != 0 or not out.exists():
            text = errors.strip() or f"protoc exited with status {status}"
            raise SchemaError(f"protoc failed:\n{text}")
        data = out.read_bytes()
    try:
        return load_descriptor_set(data)
    except DecodeError as exc:  # pragma: no cover - protoc writes valid sets
        raise SchemaError(f"protoc wrote an unreadable descriptor set: {exc}") from None
