"""ProtoJSON: the canonical JSON form of every message (protobuf.dev "ProtoJSON Format").

``to_dict``/``to_json`` write a message as its JSON value; ``from_dict``/``from_json``
read one back, checking every value and raising :class:`JSONError` with the JSON
path of the first bad value (``$.transfers[3].amount``).

How it works: cattrs is the dispatch and caching engine. Each set of options has
its own ``cattrs.Converter`` whose hook *factories* match pbj message classes; the
first time a class is met, the factory builds that class's two functions from its
schema (:func:`pbj.schema.info`) once: a list of per-field steps (the JSON key,
the value converter picked for the field's type, when the field is skipped) and
a loop over them. cattrs caches the hook, so later calls never look at the
schema again. Nested message fields call the nested class's hook, looked up
lazily on the first value (recursive messages need no special case). A
well-known type (``google.protobuf.Timestamp`` …, recognised by its full name)
gets a hook that reads and writes its special JSON form instead.

The file is named ``protojson`` so that it can never shadow the standard
library's ``json`` module.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import enum
import json
import math
import re
import struct
import threading
import weakref
from decimal import Decimal
from typing import Any, TypeVar

import cattrs

from pbj.errors import DecodeError, EncodeError, PbjError
from pbj.schema import FieldInfo, MessageInfo, OneOf, info, is_message

__all__ = ["JSONError", "to_dict", "from_dict", "to_json", "from_json", "register_types", "type_registry"]

T = TypeVar("T")


class JSONError(DecodeError):
    """A JSON value is not a valid ProtoJSON form of the requested message.

    A :class:`pbj.DecodeError` whose ``path`` is the JSON path of the bad value
    (object keys as ``str``, array indexes as ``int``, map keys as one-element
    tuples) and whose ``offset`` is ``None``. ``str(err)`` reads
    ``expected a JSON number for int32, got string - at `$.transfers[3].amount```.
    """

    def __init__(self, reason: str, *, path: list | None = None):
        super().__init__(reason, path=path)


# ---------------------------------------------------------------- constants

_INT_RANGE = {
    "int32": (-(1 << 31), (1 << 31) - 1), "sint32": (-(1 << 31), (1 << 31) - 1),
    "sfixed32": (-(1 << 31), (1 << 31) - 1), "uint32": (0, (1 << 32) - 1), "fixed32": (0, (1 << 32) - 1),
    "int64": (-(1 << 63), (1 << 63) - 1), "sint64": (-(1 << 63), (1 << 63) - 1),
    "sfixed64": (-(1 << 63), (1 << 63) - 1), "uint64": (0, (1 << 64) - 1), "fixed64": (0, (1 << 64) - 1),
}
_INT64 = frozenset({"int64", "sint64", "sfixed64", "uint64", "fixed64"})
_F32 = struct.Struct("<f")
_INF = math.inf
_NUMBER_RE = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_DIGITS_RE = re.compile(r"-?[0-9]+")
_SPECIAL_FLOATS = {"NaN": math.nan, "Infinity": _INF, "-Infinity": -_INF}
_TIMESTAMP_RE = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]{1,9}))?(Z|[+-][0-9]{2}:[0-9]{2})")
_DURATION_RE = re.compile(r"(-)?([0-9]+)(?:\.([0-9]{1,9}))?s")
_EPOCH_ORDINAL = datetime.date(1970, 1, 1).toordinal()
#: Timestamp range of the spec: 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999999999Z.
TIMESTAMP_MIN_SECONDS = -62_135_596_800
TIMESTAMP_MAX_SECONDS = 253_402_300_799
#: Duration range of the spec: about +-10,000 years.
DURATION_MAX_SECONDS = 315_576_000_000

_WRAPPERS = {f"google.protobuf.{n}" for n in (
    "DoubleValue", "FloatValue", "Int64Value", "UInt64Value", "Int32Value", "UInt32Value",
    "BoolValue", "StringValue", "BytesValue")}
#: Well-known types whose JSON form is not an object of fields; inside an ``Any`` they sit under "value".
SPECIAL_FORMS = frozenset(_WRAPPERS | {f"google.protobuf.{n}" for n in (
    "Any", "Timestamp", "Duration", "FieldMask", "Struct", "Value", "ListValue")})
_VALUE = "google.protobuf.Value"
_NULL_VALUE = "google.protobuf.NullValue"

_SKIP = object()  # a reader's answer for "leave the field unset"

#: How deep messages (Struct and ListValue included) may nest in JSON input, as in binary decoding.
MAX_DEPTH = 100
_local = threading.local()


def _enter() -> None:
    """Count one more level of message nesting on this thread; raise past :data:`MAX_DEPTH`."""
    depth = getattr(_local, "depth", 0) + 1
    if depth > MAX_DEPTH:
        raise JSONError(f"messages nest deeper than {MAX_DEPTH} levels")
    _local.depth = depth


def _leave() -> None:
    _local.depth -= 1


def _jtype(v: Any) -> str:
    """The JSON type name of a decoded JSON value, for error texts."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, (int, float, Decimal)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict):
        return "object"
    return type(v).__name__


def _type_name(t: Any) -> str:
    if isinstance(t, str):
        return t
    if is_message(t):
        return info(t).full_name
    return getattr(t, "__name__", repr(t))


# ---------------------------------------------------------------- the type registry (for Any)

# weak values: a class unused elsewhere is not kept alive by having been met here
_registry: weakref.WeakValueDictionary[str, type] = weakref.WeakValueDictionary()
_registry_lock = threading.Lock()
_wellknown_loaded = False


def register_types(*classes: type) -> None:
    """Make message classes known to ``Any``'s ``"@type"`` resolution by their full name.

    Every class ``to_dict``/``from_dict`` has met, every class loaded with
    ``pbj.load_descriptor_set``/``pbj.load_proto`` and the classes of
    :mod:`pbj.wellknown` are known already; register hand-declared classes
    an ``Any`` may hold that the converter has not met yet.

    Raises:
        TypeError: an argument is not a pbj message class.
    """
    for cls in classes:
        _registry[info(cls).full_name] = cls


def type_registry() -> dict[str, type]:
    """The classes ``Any`` resolves, by protobuf full name (a copy)."""
    _load_wellknown()
    return dict(_registry)


def _load_wellknown() -> None:
    global _wellknown_loaded
    if _wellknown_loaded:
        return
    with _registry_lock:
        if _wellknown_loaded:
            return
        try:
            from pbj.wellknown import WELL_KNOWN
        except ImportError:  # pragma: no cover - pbj.wellknown is part of the package
            WELL_KNOWN = {}
        for name, cls in WELL_KNOWN.items():
            _registry.setdefault(name, cls)
        _wellknown_loaded = True


def _resolve_any(type_url: str) -> type | None:
    """The message class named by an ``Any``'s type URL: registered, met, loaded or well-known."""
    name = type_url.rpartition("/")[2]
    cls = _registry.get(name)
    if cls is None:
        _load_wellknown()
        cls = _registry.get(name)
    if cls is None:  # the last schema loaded (pbj.load_descriptor_set / load_proto) with that name
        from pbj import loader
        found = getattr(loader, "_REGISTRY", {}).get(name)
        if found is not None and is_message(found):
            cls = found
    return cls


# ---------------------------------------------------------------- scalar writers (to JSON)

def _f64_out(v: float) -> Any:
    if v != v:
        return "NaN"
    if v == _INF:
        return "Infinity"
    if v == -_INF:
        return "-Infinity"
    return float(v)


def _f32_out(v: float) -> Any:
    """A float field's value as the shortest decimal that reads back as the same 32-bit float."""
    if v != v or v in (_INF, -_INF):
        return _f64_out(v)
    try:
        bits = _F32.pack(v)
    except OverflowError:
        raise EncodeError(f"value {v!r} is out of range for float") from None
    original = _F32.unpack(bits)[0]
    for precision in range(6, 18):  # as Google's runtimes print it: start at 6 significant digits
        short = float(f"{original:.{precision}g}")
        if _F32.pack(short) == bits:
            return short
    return original  # pragma: no cover - 9 digits always round-trip


def _bytes_out(v: bytes) -> str:
    return base64.b64encode(v).decode("ascii")


def _enum_out(enum_cls: type, as_numbers: bool):
    if as_numbers:
        return int
    if enum_cls.__name__ == "NullValue":
        return lambda v: None
    names = {int(m): m.name for m in enum_cls}
    return lambda v: names.get(v, v if v.__class__ is int else int(v))


def _map_key_out(key_type: str):
    if key_type == "string":
        return None
    if key_type == "bool":
        return lambda k: "true" if k else "false"
    return str


# ---------------------------------------------------------------- scalar readers (from JSON)

def _int_reader(kind: str):
    lo, hi = _INT_RANGE[kind]

    def read_int(v: Any) -> int:
        t = v.__class__
        if t is int:
            n = v
        elif t is str:
            if _DIGITS_RE.fullmatch(v):
                n = int(v)
            elif _NUMBER_RE.fullmatch(v):
                n = _integral(Decimal(v), kind)
            else:
                raise JSONError(f"expected an integer for {kind}, got string {v!r}")
        elif t is float:
            if not v.is_integer():
                raise JSONError(f"expected an integer for {kind}, got {v!r}")
            n = int(v)
        elif t is Decimal:
            n = _integral(v, kind)
        else:
            raise JSONError(f"expected a JSON number or string for {kind}, got {_jtype(v)}")
        if n < lo or n > hi:
            raise JSONError(f"integer {n} is out of range for {kind}")
        return n

    return read_int


def _integral(d: Decimal, kind: str) -> int:
    if not d.is_finite():
        raise JSONError(f"expected an integer for {kind}, got {d}")
    if d.adjusted() > 40:
        raise JSONError(f"integer {d} is out of range for {kind}")
    if d != d.to_integral_value():
        raise JSONError(f"expected an integer for {kind}, got {d}")
    return int(d)


def _float_reader(kind: str):
    single = kind == "float"

    def read_float(v: Any) -> float:
        t = v.__class__
        if t is float:
            x = v
        elif t is int or t is Decimal:
            try:
                x = float(v)
            except OverflowError:
                x = _INF
            if math.isinf(x):
                raise JSONError(f"number {v} is out of range for {kind}")
        elif t is str:
            special = _SPECIAL_FLOATS.get(v)
            if special is not None:
                return special
            if not _NUMBER_RE.fullmatch(v):
                raise JSONError(f"expected a number for {kind}, got string {v!r}")
            x = float(v)
            if math.isinf(x):
                raise JSONError(f"number {v} is out of range for {kind}")
        else:
            raise JSONError(f"expected a JSON number or string for {kind}, got {_jtype(v)}")
        if single and x == x and not math.isinf(x):
            try:
                x = _F32.unpack(_F32.pack(x))[0]
            except OverflowError:
                raise JSONError(f"number {v} is out of range for float") from None
        return x

    return read_float


def _read_bool(v: Any) -> bool:
    if v is True or v is False:
        return v
    raise JSONError(f"expected true or false for bool, got {_jtype(v)}")


def _read_string(v: Any) -> str:
    if v.__class__ is not str:
        raise JSONError(f"expected a JSON string for string, got {_jtype(v)}")
    if not v.isascii():
        try:
            v.encode("utf-8")
        except UnicodeEncodeError:
            raise JSONError("string holds a lone UTF-16 surrogate (not valid UTF-8)") from None
    return v


_URLSAFE = str.maketrans("-_", "+/")


def _read_bytes(v: Any) -> bytes:
    if v.__class__ is not str:
        raise JSONError(f"expected a base64 JSON string for bytes, got {_jtype(v)}")
    text = v.translate(_URLSAFE)
    if len(text) % 4:
        text += "=" * (-len(text) % 4)
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise JSONError(f"invalid base64 for bytes: {v[:40]!r}") from None


def _enum_reader(enum_cls: type, closed: bool, ignore_unknown: bool):
    by_name = {m.name: m for m in enum_cls}
    by_name.update(enum_cls.__members__)  # aliases
    by_number = {int(m): m for m in enum_cls}
    name = enum_cls.__name__
    is_null = name == "NullValue"

    def read_enum(v: Any) -> Any:
        t = v.__class__
        if t is str:
            m = by_name.get(v)
            if m is None:
                if ignore_unknown:
                    return _SKIP
                raise JSONError(f"unknown name {v!r} for enum {name}")
            return m
        if t is int or t is float or t is Decimal:
            if t is not int and not (v == v and float(v).is_integer()):
                raise JSONError(f"expected an integer for enum {name}, got {v}")
            n = int(v)
            if n < -(1 << 31) or n >= (1 << 31):
                raise JSONError(f"integer {n} is out of range for enum {name}")
            m = by_number.get(n)
            if m is not None:
                return m
            if closed:
                if ignore_unknown:
                    return _SKIP
                raise JSONError(f"unknown number {n} for closed enum {name}")
            return n
        if v is None and is_null:
            return by_number.get(0, 0)
        raise JSONError(f"expected a JSON string or number for enum {name}, got {_jtype(v)}")

    return read_enum


def _map_key_reader(key_type: str):
    if key_type == "string":
        return _read_string
    if key_type == "bool":
        def read_bool_key(k: Any) -> bool:
            if k == "true":
                return True
            if k == "false":
                return False
            raise JSONError(f"expected \"true\" or \"false\" as a bool map key, got {k!r}")
        return read_bool_key
    return _int_reader(key_type)


# ---------------------------------------------------------------- the converters

class _Options:
    __slots__ = ("emit_defaults", "enums_as_numbers", "ignore_unknown", "proto_names")

    def __init__(self, emit_defaults=False, proto_names=False, enums_as_numbers=False, ignore_unknown=False):
        self.emit_defaults = emit_defaults
        self.proto_names = proto_names
        self.enums_as_numbers = enums_as_numbers
        self.ignore_unknown = ignore_unknown


_converters_lock = threading.Lock()


def _is_message_class(t: Any) -> bool:
    return isinstance(t, type) and is_message(t)


def _converter(key: tuple, cls: type) -> cattrs.Converter:
    """The converter for options ``key`` used from message class ``cls``.

    Kept on the class (``__pbj_json__``), not in a process-wide table: its
    hooks refer to the classes it has met, which must be free to go when
    their schema is no longer used.
    """
    per_class = cls.__dict__.get("__pbj_json__")
    conv = per_class.get(key) if per_class is not None else None
    if conv is not None:
        return conv
    with _converters_lock:
        per_class = cls.__dict__.get("__pbj_json__")
        if per_class is None:
            per_class = {}
            type.__setattr__(cls, "__pbj_json__", per_class)
        conv = per_class.get(key)
        if conv is None:
            conv = per_class[key] = _make_converter(_Options(*key))
    return conv


def _make_converter(opts: _Options) -> cattrs.Converter:
    """A cattrs converter whose hooks for pbj message classes are built per class on first use."""
    conv = cattrs.Converter()
    conv.register_unstructure_hook_factory(_is_message_class, lambda cls: _build_writer(cls, conv, opts))
    conv.register_structure_hook_factory(_is_message_class, lambda cls: _build_reader(cls, conv, opts))
    return conv


def _lazy_writer(conv: cattrs.Converter, cls: type):
    """The unstructure hook of ``cls``, fetched from ``conv`` on the first call."""
    cell: list = []

    def write_nested(v: Any) -> Any:
        if not cell:
            cell.append(conv.get_unstructure_hook(cls))
        return cell[0](v)

    return write_nested


def _lazy_reader(conv: cattrs.Converter, cls: type):
    """The structure hook of ``cls`` (as a one-argument function), fetched on the first call."""
    cell: list = []

    def read_nested(v: Any) -> Any:
        if not cell:
            cell.append(conv.get_structure_hook(cls))
        return cell[0](v, cls)

    return read_nested


def _value_writer(t: Any, conv: cattrs.Converter, opts: _Options):
    """The function writing one value of type ``t`` (scalar name, enum, message), or None for as-is."""
    if isinstance(t, str):
        if t in _INT64:
            return str
        if t == "double":
            return _f64_out
        if t == "float":
            return _f32_out
        if t == "bytes":
            return _bytes_out
        return None
    if isinstance(t, type) and issubclass(t, enum.IntEnum):
        return _enum_out(t, opts.enums_as_numbers)
    return _lazy_writer(conv, t)


def _value_reader(t: Any, conv: cattrs.Converter, opts: _Options):
    """The function reading one JSON value as type ``t``; it raises JSONError (path relative).

    An enum is closed ("Enum Behavior" on protobuf.dev: proto2, or editions with
    ``enum_type = CLOSED``) when the loader marked its class ``__pbj_closed__``;
    a closed enum rejects numbers that are not members.
    """
    if isinstance(t, str):
        if t in _INT_RANGE:
            return _int_reader(t)
        if t in ("double", "float"):
            return _float_reader(t)
        if t == "bool":
            return _read_bool
        if t == "string":
            return _read_string
        return _read_bytes
    if isinstance(t, type) and issubclass(t, enum.IntEnum):
        return _enum_reader(t, bool(getattr(t, "__pbj_closed__", False)), opts.ignore_unknown)
    return _lazy_reader(conv, t)


def _null_keeps(t: Any) -> bool:
    """Whether JSON null is a value of type ``t`` (google.protobuf.Value, NullValue) rather than "unset"."""
    if isinstance(t, type) and issubclass(t, enum.IntEnum):
        return t.__name__ == "NullValue"
    return _is_message_class(t) and info(t).full_name == _VALUE


def _is_zero(f: FieldInfo):
    t = f.type
    if t in ("double", "float"):
        return lambda v: v == 0 and math.copysign(1.0, v) > 0
    return lambda v: not v


# ---- writer (message -> JSON value)

_SCALAR, _PRESENT, _REPEATED, _MAP = 0, 1, 2, 3


def _build_writer(cls: type, conv: cattrs.Converter, opts: _Options):
    mi = info(cls)
    _registry.setdefault(mi.full_name, cls)
    special = _WKT_WRITERS.get(mi.full_name)
    if special is not None:
        return special(mi, conv, opts)
    steps = []
    for f in mi.fields:
        key = f.proto_name if opts.proto_names else f.json_name
        if f.is_map:
            kw = _map_key_out(f.map_key)
            vw = _value_writer(f.map_value, conv, opts)
            steps.append((f.name, key, _MAP, (kw, vw), None))
        elif f.repeated:
            steps.append((f.name, key, _REPEATED, _value_writer(f.type, conv, opts), None))
        elif f.optional:
            steps.append((f.name, key, _PRESENT, _value_writer(f.type, conv, opts), None))
        else:
            steps.append((f.name, key, _SCALAR, _value_writer(f.type, conv, opts), _is_zero(f)))
    oneofs = []
    for o in mi.oneofs:
        members = {m.name: (m.proto_name if opts.proto_names else m.json_name, _value_writer(m.type, conv, opts))
                   for m in o.members}
        oneofs.append((o.name, members))
    emit = opts.emit_defaults

    def write_message(obj: Any) -> dict:
        out: dict = {}
        for attr, key, mode, w, is_zero in steps:
            v = getattr(obj, attr)
            try:
                if mode == _SCALAR:
                    if not emit and is_zero(v):
                        continue
                    out[key] = v if w is None else w(v)
                elif mode == _PRESENT:
                    if v is not None:
                        out[key] = v if w is None else w(v)
                elif mode == _REPEATED:
                    if v or emit:
                        out[key] = list(v) if w is None else [w(x) for x in v]
                else:
                    if v or emit:
                        kw, vw = w
                        out[key] = {(k if kw is None else kw(k)): (x if vw is None else vw(x))
                                    for k, x in v.items()}
            except EncodeError as exc:
                if mode == _REPEATED:
                    exc.path.insert(0, _failing_index(v, w))
                elif mode == _MAP:
                    exc.path.insert(0, (_failing_key(v, w[1]),))
                exc.path.insert(0, attr)
                raise
        for attr, members in oneofs:
            v = getattr(obj, attr)
            if v is None:
                continue
            which, x = v
            try:
                key, w = members[which]
            except KeyError:
                raise EncodeError(f"{which!r} is not a member of oneof {attr}", path=[attr]) from None
            try:
                out[key] = x if w is None else w(x)
            except EncodeError as exc:
                exc.path.insert(0, which)
                raise
        return out

    write_message.__name__ = write_message.__qualname__ = f"to_dict_{cls.__name__}"
    return write_message


def _failing_index(items: Any, write: Any) -> int:
    """The index of the first element ``write`` fails on (for an error's path; rarely called)."""
    for i, x in enumerate(items):
        try:
            write(x)
        except EncodeError:
            return i
    return -1  # pragma: no cover


def _failing_key(items: Any, write: Any) -> Any:
    for k, x in items.items():
        try:
            if write is not None:
                write(x)
        except EncodeError:
            return k
    return None  # pragma: no cover


# ---- reader (JSON value -> message)

def _check_object(d: Any, what: str) -> None:
    if d.__class__ is dict:
        return
    if isinstance(d, _DupDict):
        raise JSONError(f"duplicate key {d.duplicate!r} in a JSON object", path=[d.duplicate])
    if isinstance(d, dict):
        return
    raise JSONError(f"expected a JSON object for {what}, got {_jtype(d)}")


def _repeated_reader(read, null_ok: bool):
    def read_list(v: Any) -> tuple:
        if v.__class__ is not list:
            raise JSONError(f"expected a JSON array, got {_jtype(v)}")
        out = []
        for i, x in enumerate(v):
            try:
                if x is None and not null_ok:
                    raise JSONError("null is not allowed as an element of a repeated field")
                y = read(x)
            except JSONError as exc:
                exc.path.insert(0, i)
                raise
            if y is not _SKIP:
                out.append(y)
        return tuple(out)
    return read_list


def _map_reader(read_key, read_value, null_ok: bool):
    def read_map(v: Any) -> dict:
        _check_object(v, "a map field")
        out = {}
        for k, x in v.items():
            try:
                key = read_key(k)
                if x is None and not null_ok:
                    raise JSONError("null is not allowed as a map value")
                y = read_value(x)
            except JSONError as exc:
                exc.path.insert(0, (k,))
                raise
            if y is not _SKIP:
                out[key] = y
        return out
    return read_map


def _build_reader(cls: type, conv: cattrs.Converter, opts: _Options):
    mi = info(cls)
    _registry.setdefault(mi.full_name, cls)
    special = _WKT_READERS.get(mi.full_name)
    if special is not None:
        return special(mi, conv, opts)
    by_key: dict[str, tuple] = {}
    for f in mi.fields:
        if f.is_map:
            read = _map_reader(_map_key_reader(f.map_key), _value_reader(f.map_value, conv, opts),
                               _null_keeps(f.map_value))
        elif f.repeated:
            read = _repeated_reader(_value_reader(f.type, conv, opts), _null_keeps(f.type))
        else:
            read = _value_reader(f.type, conv, opts)
        step = (f.name, None, read, _null_keeps(f.type) and not f.repeated)
        by_key[f.json_name] = step
        by_key[f.proto_name] = step
    for o in mi.oneofs:
        for m in o.members:
            step = (o.name, m.name, _value_reader(m.type, conv, opts), _null_keeps(m.type))
            by_key[m.json_name] = step
            by_key[m.proto_name] = step
    ignore = opts.ignore_unknown
    name = mi.full_name

    def read_message(d: Any, _cls: Any = None) -> Any:
        _check_object(d, f"message {name}")
        _enter()
        try:
            return read_fields(d)
        finally:
            _leave()

    def read_fields(d: dict) -> Any:
        kw: dict = {}
        given: dict = {}
        for k, v in d.items():
            step = by_key.get(k)
            if step is None:
                if ignore:
                    continue
                raise JSONError(f"unknown field {k!r} in message {name}", path=[k])
            attr, member, read, null_keeps = step
            if v is None and not null_keeps:
                continue
            try:
                x = read(v)
            except JSONError as exc:
                exc.path.insert(0, k)
                raise
            if x is _SKIP:
                continue
            if attr in kw:
                if member is not None:
                    raise JSONError(f"oneof {attr!r} has two members set: {given[attr]!r} and {k!r}", path=[k])
                raise JSONError(f"field {attr!r} is given twice, as {given[attr]!r} and as {k!r}", path=[k])
            given[attr] = k
            kw[attr] = x if member is None else OneOf(member, x)
        try:
            return cls(**kw)
        except (TypeError, ValueError) as exc:  # pragma: no cover - readers check every value
            raise JSONError(f"cannot build {name}: {exc}") from None

    read_message.__name__ = read_message.__qualname__ = f"from_dict_{cls.__name__}"
    return read_message


# ---------------------------------------------------------------- well-known types

def _field(mi: MessageInfo, proto_name: str) -> FieldInfo:
    for f in mi.all_fields():
        if f.proto_name == proto_name:
            return f
    raise PbjError(f"{mi.full_name} has no field {proto_name!r}")  # pragma: no cover


def _timestamp_writer(mi, conv, opts):
    sec, nan = _field(mi, "seconds").name, _field(mi, "nanos").name

    def write_timestamp(obj: Any) -> str:
        s, n = getattr(obj, sec), getattr(obj, nan)
        if not TIMESTAMP_MIN_SECONDS <= s <= TIMESTAMP_MAX_SECONDS:
            raise EncodeError(f"Timestamp seconds {s} is outside 0001-01-01..9999-12-31", path=[sec])
        if not 0 <= n <= 999_999_999:
            raise EncodeError(f"Timestamp nanos {n} is outside 0..999999999", path=[nan])
        days, rest = divmod(s, 86400)
        date = datetime.date.fromordinal(_EPOCH_ORDINAL + days)
        hh, rest = divmod(rest, 3600)
        mm, ss = divmod(rest, 60)
        return f"{date.year:04d}-{date.month:02d}-{date.day:02d}T{hh:02d}:{mm:02d}:{ss:02d}{_fraction(n)}Z"

    return write_timestamp


def _fraction(n: int) -> str:
    """Nanoseconds as 0, 3, 6 or 9 fractional digits, as the spec prints them."""
    if n == 0:
        return ""
    if n % 1_000_000 == 0:
        return f".{n // 1_000_000:03d}"
    if n % 1000 == 0:
        return f".{n // 1000:06d}"
    return f".{n:09d}"


def _timestamp_reader(mi, conv, opts):
    cls = mi.cls
    sec, nan = _field(mi, "seconds").name, _field(mi, "nanos").name

    def read_timestamp(v: Any, _cls: Any = None) -> Any:
        if v.__class__ is not str:
            raise JSONError(f"expected an RFC 3339 string for Timestamp, got {_jtype(v)}")
        m = _TIMESTAMP_RE.fullmatch(v)
        if m is None:
            raise JSONError(f"invalid Timestamp {v!r} (expected RFC 3339 like '1972-01-01T10:00:20.021Z')")
        y, mo, d, hh, mi_, ss = (int(m.group(i)) for i in range(1, 7))
        try:
            ordinal = datetime.date(y, mo, d).toordinal()
        except ValueError:
            raise JSONError(f"invalid Timestamp {v!r}: no such date") from None
        if hh > 23 or mi_ > 59 or ss > 59:
            raise JSONError(f"invalid Timestamp {v!r}: no such time of day")
        seconds = (ordinal - _EPOCH_ORDINAL) * 86400 + hh * 3600 + mi_ * 60 + ss
        zone = m.group(8)
        if zone != "Z":
            oh, om = int(zone[1:3]), int(zone[4:6])
            if oh > 23 or om > 59:
                raise JSONError(f"invalid Timestamp {v!r}: bad UTC offset")
            offset = oh * 3600 + om * 60
            seconds -= offset if zone[0] == "+" else -offset
        if not TIMESTAMP_MIN_SECONDS <= seconds <= TIMESTAMP_MAX_SECONDS:
            raise JSONError(f"Timestamp {v!r} is outside 0001-01-01T00:00:00Z..9999-12-31T23:59:59Z")
        frac = m.group(7)
        nanos = int(frac.ljust(9, "0")) if frac else 0
        return cls(**{sec: seconds, nan: nanos})

    return read_timestamp


def _duration_writer(mi, conv, opts):
    sec, nan = _field(mi, "seconds").name, _field(mi, "nanos").name

    def write_duration(obj: Any) -> str:
        s, n = getattr(obj, sec), getattr(obj, nan)
        if not -DURATION_MAX_SECONDS <= s <= DURATION_MAX_SECONDS:
            raise EncodeError(f"Duration seconds {s} is outside +-{DURATION_MAX_SECONDS}", path=[sec])
        if not -999_999_999 <= n <= 999_999_999 or (s > 0 and n < 0) or (s < 0 and n > 0):
            raise EncodeError(f"Duration nanos {n} is out of range or of another sign than seconds {s}",
                              path=[nan])
        sign = "-" if s < 0 or n < 0 else ""
        return f"{sign}{abs(s)}{_fraction(abs(n))}s"

    return write_duration


def _duration_reader(mi, conv, opts):
    cls = mi.cls
    sec, nan = _field(mi, "seconds").name, _field(mi, "nanos").name

    def read_duration(v: Any, _cls: Any = None) -> Any:
        if v.__class__ is not str:
            raise JSONError(f"expected a string like '1.5s' for Duration, got {_jtype(v)}")
        m = _DURATION_RE.fullmatch(v)
        if m is None:
            raise JSONError(f"invalid Duration {v!r} (expected seconds with an 's' suffix, like '-1.5s')")
        seconds = int(m.group(2))
        nanos = int(m.group(3).ljust(9, "0")) if m.group(3) else 0
        if seconds > DURATION_MAX_SECONDS:
            raise JSONError(f"Duration {v!r} is outside +-{DURATION_MAX_SECONDS}s")
        if m.group(1):
            seconds, nanos = -seconds, -nanos
        return cls(**{sec: seconds, nan: nanos})

    return read_duration


def _wrapper_writer(mi, conv, opts):
    f = _field(mi, "value")
    attr, w = f.name, _value_writer(f.type, conv, opts)
    if w is None:
        return lambda obj: getattr(obj, attr)
    return lambda obj: w(getattr(obj, attr))


def _wrapper_reader(mi, conv, opts):
    f = _field(mi, "value")
    cls, attr, read = mi.cls, f.name, _value_reader(f.type, conv, opts)

    def read_wrapper(v: Any, _cls: Any = None) -> Any:
        return cls(**{attr: read(v)})

    return read_wrapper


def _camel(path: str) -> str:
    out = []
    upper = False
    for ch in path:
        if ch.isupper():
            raise EncodeError(f"FieldMask path {path!r} has an upper-case letter; it has no JSON form")
        if ch == "_":
            if upper:
                raise EncodeError(f"FieldMask path {path!r} has '__'; it has no JSON form")
            upper = True
            continue
        if upper:
            if not ch.islower():
                raise EncodeError(f"FieldMask path {path!r} has '_' before {ch!r}; it has no JSON form")
            ch = ch.upper()
            upper = False
        out.append(ch)
    if upper:
        raise EncodeError(f"FieldMask path {path!r} ends with '_'; it has no JSON form")
    return "".join(out)


def _snake(path: str) -> str:
    if "_" in path:
        raise JSONError(f"FieldMask path {path!r} must be lowerCamelCase (no '_')")
    return "".join("_" + ch.lower() if ch.isupper() else ch for ch in path)


def _field_mask_writer(mi, conv, opts):
    attr = _field(mi, "paths").name

    def write_field_mask(obj: Any) -> str:
        try:
            return ",".join(_camel(p) for p in getattr(obj, attr))
        except EncodeError as exc:
            exc.path.insert(0, attr)
            raise

    return write_field_mask


def _field_mask_reader(mi, conv, opts):
    cls, attr = mi.cls, _field(mi, "paths").name

    def read_field_mask(v: Any, _cls: Any = None) -> Any:
        if v.__class__ is not str:
            raise JSONError(f"expected a comma-separated string for FieldMask, got {_jtype(v)}")
        return cls(**{attr: tuple(_snake(p) for p in v.split(",")) if v else ()})

    return read_field_mask


def _struct_writer(mi, conv, opts):
    f = _field(mi, "fields")
    attr, write_value = f.name, _lazy_writer(conv, f.map_value)

    def write_struct(obj: Any) -> dict:
        out = {}
        for k, x in getattr(obj, attr).items():
            try:
                out[k] = write_value(x)
            except EncodeError as exc:
                exc.path[:0] = [attr, (k,)]
                raise
        return out

    return write_struct


def _struct_reader(mi, conv, opts):
    f = _field(mi, "fields")
    cls, attr, read_value = mi.cls, f.name, _lazy_reader(conv, f.map_value)

    def read_struct(v: Any, _cls: Any = None) -> Any:
        _check_object(v, "Struct")
        out = {}
        _enter()
        try:
            for k, x in v.items():
                try:
                    out[_read_string(k)] = read_value(x)
                except JSONError as exc:
                    exc.path.insert(0, k)
                    raise
        finally:
            _leave()
        return cls(**{attr: out})

    return read_struct


def _list_value_writer(mi, conv, opts):
    f = _field(mi, "values")
    attr, write_value = f.name, _lazy_writer(conv, f.type)

    def write_list_value(obj: Any) -> list:
        out = []
        for i, x in enumerate(getattr(obj, attr)):
            try:
                out.append(write_value(x))
            except EncodeError as exc:
                exc.path[:0] = [attr, i]
                raise
        return out

    return write_list_value


def _list_value_reader(mi, conv, opts):
    f = _field(mi, "values")
    cls, attr, read_value = mi.cls, f.name, _lazy_reader(conv, f.type)

    def read_list_value(v: Any, _cls: Any = None) -> Any:
        if v.__class__ is not list:
            raise JSONError(f"expected a JSON array for ListValue, got {_jtype(v)}")
        out = []
        _enter()
        try:
            for i, x in enumerate(v):
                try:
                    out.append(read_value(x))
                except JSONError as exc:
                    exc.path.insert(0, i)
                    raise
        finally:
            _leave()
        return cls(**{attr: tuple(out)})

    return read_list_value


def _value_members(mi: MessageInfo) -> dict[str, FieldInfo]:
    """The members of ``google.protobuf.Value``'s oneof ``kind``, by proto name."""
    return {m.proto_name: m for o in mi.oneofs for m in o.members}


def _value_writer_wkt(mi, conv, opts):
    members = _value_members(mi)
    attr = members["null_value"].oneof
    names = {m.name: p for p, m in members.items()}
    struct_w = _lazy_writer(conv, members["struct_value"].type)
    list_w = _lazy_writer(conv, members["list_value"].type)

    def write_value(obj: Any) -> Any:
        v = getattr(obj, attr)
        if v is None:
            return None
        kind = names.get(v[0])
        x = v[1]
        if kind == "number_value":
            if x != x or x in (_INF, -_INF):
                raise EncodeError(f"Value.number_value {x!r} has no JSON form (NaN and infinities are not allowed)",
                                  path=[v[0]])
            return x
        if kind in ("string_value", "bool_value"):
            return x
        if kind == "struct_value":
            return struct_w(x)
        if kind == "list_value":
            return list_w(x)
        return None

    return write_value


def _value_reader_wkt(mi, conv, opts):
    cls = mi.cls
    members = _value_members(mi)
    attr = members["null_value"].oneof
    null_m = members["null_value"]
    null_zero = next(iter(null_m.type)) if isinstance(null_m.type, type) else 0
    n_name, b_name, s_name = members["number_value"].name, members["bool_value"].name, members["string_value"].name
    st_name, l_name = members["struct_value"].name, members["list_value"].name
    struct_r = _lazy_reader(conv, members["struct_value"].type)
    list_r = _lazy_reader(conv, members["list_value"].type)

    def read_value(v: Any, _cls: Any = None) -> Any:
        t = v.__class__
        if v is None:
            kind = OneOf(null_m.name, null_zero)
        elif t is bool:
            kind = OneOf(b_name, v)
        elif t is int or t is float or t is Decimal:
            try:
                x = float(v)
            except OverflowError:
                x = _INF
            if math.isinf(x) or x != x:
                raise JSONError(f"number {v} is out of range for Value.number_value")
            kind = OneOf(n_name, x)
        elif t is str:
            kind = OneOf(s_name, _read_string(v))
        elif t is list:
            kind = OneOf(l_name, list_r(v))
        elif isinstance(v, dict):
            kind = OneOf(st_name, struct_r(v))
        else:
            raise JSONError(f"{type(v).__name__} is not a JSON value")
        return cls(**{attr: kind})

    return read_value


def _any_writer(mi, conv, opts):
    url_attr, value_attr = _field(mi, "type_url").name, _field(mi, "value").name

    def write_any(obj: Any) -> dict:
        url, data = getattr(obj, url_attr), getattr(obj, value_attr)
        if not url and not data:
            return {}
        target = _resolve_any(url)
        if target is None:
            raise EncodeError(f"Any holds type {url!r}, which is not a known message class "
                              "(load its schema or call pbj.protojson.register_types)", path=[url_attr])
        from pbj.api import decode
        try:
            inner = decode(target, data)
        except DecodeError as exc:
            raise EncodeError(f"Any value is not a valid {info(target).full_name}: {exc}",
                              path=[value_attr]) from None
        body = conv.get_unstructure_hook(target)(inner)
        if info(target).full_name in SPECIAL_FORMS:
            return {"@type": url, "value": body}
        return {"@type": url, **body}

    return write_any


def _any_reader(mi, conv, opts):
    cls = mi.cls
    url_attr, value_attr = _field(mi, "type_url").name, _field(mi, "value").name

    def read_any(v: Any, _cls: Any = None) -> Any:
        _check_object(v, "Any")
        if not v:
            return cls()
        url = v.get("@type")
        if url is None:
            raise JSONError("an Any object needs an \"@type\" member")
        if url.__class__ is not str:
            raise JSONError(f"expected a JSON string for \"@type\", got {_jtype(url)}", path=["@type"])
        target = _resolve_any(url)
        if target is None or "/" not in url:
            raise JSONError(f"cannot resolve Any type {url!r}: not a known message class "
                            "(load its schema or call pbj.protojson.register_types)", path=["@type"])
        from pbj.api import encode
        read = conv.get_structure_hook(target)
        if info(target).full_name in SPECIAL_FORMS:
            extra = [k for k in v if k not in ("@type", "value")]
            if extra and not opts.ignore_unknown:
                raise JSONError(f"unknown field {extra[0]!r} in Any holding {url!r}", path=[extra[0]])
            if "value" not in v:
                raise JSONError(f"an Any holding {url!r} needs a \"value\" member")
            try:
                inner = read(v["value"], target)
            except JSONError as exc:
                exc.path.insert(0, "value")
                raise
        else:
            inner = read({k: x for k, x in v.items() if k != "@type"}, target)
        return cls(**{url_attr: url, value_attr: encode(inner)})

    return read_any


_WKT_WRITERS = {
    "google.protobuf.Timestamp": _timestamp_writer, "google.protobuf.Duration": _duration_writer,
    "google.protobuf.FieldMask": _field_mask_writer, "google.protobuf.Struct": _struct_writer,
    "google.protobuf.ListValue": _list_value_writer, _VALUE: _value_writer_wkt,
    "google.protobuf.Any": _any_writer, **{w: _wrapper_writer for w in _WRAPPERS},
}
_WKT_READERS = {
    "google.protobuf.Timestamp": _timestamp_reader, "google.protobuf.Duration": _duration_reader,
    "google.protobuf.FieldMask": _field_mask_reader, "google.protobuf.Struct": _struct_reader,
    "google.protobuf.ListValue": _list_value_reader, _VALUE: _value_reader_wkt,
    "google.protobuf.Any": _any_reader, **{w: _wrapper_reader for w in _WRAPPERS},
}


# ---------------------------------------------------------------- JSON text

class _DupDict(dict):
    """A JSON object that had a key twice; readers raise on it, where its path is known."""

    __slots__ = ("duplicate",)


def _pairs_hook(found: list):
    def pairs(pairs: list) -> dict:
        d = dict(pairs)
        if len(d) != len(pairs):
            seen = set()
            for k, _ in pairs:
                if k in seen:
                    break
                seen.add(k)
            dup = _DupDict(d)
            dup.duplicate = k
            found.append(k)
            return dup
        return d
    return pairs


def _bad_constant(name: str) -> Any:
    raise JSONError(f"{name} is not valid JSON (write it as the string \"{name}\")")


def _loads(text: str | bytes, found: list) -> Any:
    try:
        return json.loads(text, object_pairs_hook=_pairs_hook(found), parse_float=Decimal, parse_constant=_bad_constant)
    except json.JSONDecodeError as exc:
        raise JSONError(f"invalid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except (ValueError, RecursionError) as exc:
        if isinstance(exc, JSONError):
            raise
        raise JSONError(f"invalid JSON: {exc}") from None


def _find_duplicate(v: Any, path: list) -> list | None:
    if isinstance(v, dict):
        if isinstance(v, _DupDict):
            return [*path, v.duplicate]
        for k, x in v.items():
            found = _find_duplicate(x, [*path, k])
            if found is not None:
                return found
    elif isinstance(v, list):
        for i, x in enumerate(v):
            found = _find_duplicate(x, [*path, i])
            if found is not None:
                return found
    return None


# ---------------------------------------------------------------- public API

def to_dict(obj: Any, *, emit_defaults: bool = False, proto_names: bool = False,
            enums_as_numbers: bool = False) -> Any:
    """A message as its ProtoJSON value: ``dict``/``list``/``str``/numbers ready for ``json.dumps``.

    Follows protobuf.dev "ProtoJSON Format": lowerCamelCase ``json_name`` keys,
    64-bit integers as strings, NaN and infinities as strings, bytes as
    standard base64, enums by name (unknown numbers as numbers), well-known
    types in their special forms; fields at their default (implicit presence)
    and unknown fields are left out.

    Args:
        obj: a pbj message instance.
        emit_defaults: also write fields without presence that hold their
            default (zero scalars, empty repeated fields and maps).
        proto_names: use the ``.proto`` field names instead of ``json_name``.
        enums_as_numbers: write enum values as numbers.

    Returns:
        A JSON value: a ``dict`` for ordinary messages; a ``str``, number,
        ``list`` or ``None`` for well-known types with a special form.

    Raises:
        TypeError: ``obj`` is not a pbj message.
        EncodeError: a value has no JSON form (Timestamp or Duration out of
            range, an ``Any`` whose type is unknown, a float beyond float32),
            with the path of attribute names.
    """
    cls = type(obj)
    if not is_message(cls):
        raise TypeError(f"{cls.__name__} is not a pbj message")
    conv = _converter((emit_defaults, proto_names, enums_as_numbers, False), cls)
    return conv.unstructure(obj, cls)


def from_dict(cls: type[T], d: Any, *, ignore_unknown: bool = False) -> T:
    """Read a ProtoJSON value (as ``json.loads`` gives it) as a message of ``cls``.

    Accepts everything the spec allows: ``json_name`` and ``.proto`` names,
    numbers as strings or numbers (integral exponent forms included), enum
    names or numbers, URL-safe and unpadded base64, ``null`` for "default".

    Args:
        cls: a pbj message class.
        d: the JSON value (a ``dict`` for ordinary messages).
        ignore_unknown: skip unknown field names (and unknown enum names)
            instead of raising.

    Returns:
        A new instance of ``cls``.

    Raises:
        TypeError: ``cls`` is not a pbj message class.
        JSONError: the value is not a valid ProtoJSON form of ``cls``: a wrong
            JSON type, an integer out of range or not integral, bad base64, a
            bad Timestamp or Duration, an unknown field name, two members of
            one oneof, a field given under both of its names; with the path.
    """
    if not _is_message_class(cls):
        raise TypeError(f"{cls!r} is not a pbj message class")
    conv = _converter((False, False, False, ignore_unknown), cls)
    return conv.get_structure_hook(cls)(d, cls)


def to_json(obj: Any, *, emit_defaults: bool = False, proto_names: bool = False,
            enums_as_numbers: bool = False, indent: int | None = None) -> str:
    """A message as ProtoJSON text; see :func:`to_dict` for the mapping and options.

    Args:
        indent: pretty-print with this many spaces per level; ``None`` gives
            compact text without spaces.

    Returns:
        The JSON text (non-ASCII characters written as they are).

    Raises:
        TypeError, EncodeError: as :func:`to_dict`.
    """
    value = to_dict(obj, emit_defaults=emit_defaults, proto_names=proto_names, enums_as_numbers=enums_as_numbers)
    separators = (",", ":") if indent is None else (",", ": ")
    return json.dumps(value, indent=indent, separators=separators, ensure_ascii=False, allow_nan=False)


def from_json(cls: type[T], text: str | bytes, *, ignore_unknown: bool = False) -> T:
    """Parse ProtoJSON text as a message of ``cls``; see :func:`from_dict`.

    The text must be strict JSON (RFC 8259): ``NaN``/``Infinity`` literals
    and an object key given twice are errors.

    Raises:
        TypeError: ``cls`` is not a pbj message class.
        JSONError: the text is not JSON, has a duplicate key, or is not a
            valid ProtoJSON form of ``cls`` (see :func:`from_dict`), with the path.
    """
    duplicates: list = []
    value = _loads(text, duplicates)
    result = from_dict(cls, value, ignore_unknown=ignore_unknown)
    if duplicates:  # a duplicate key the readers did not meet (inside a skipped member)
        dup = _find_duplicate(value, [])
        if dup is not None:
            raise JSONError(f"duplicate key {dup[-1]!r} in a JSON object", path=dup)
    return result
