"""The special JSON forms of Google's well-known types (protobuf.dev "ProtoJSON Format", the table).

A well-known type is recognised by its full name (``google.protobuf.Timestamp``
…), so the hand-declared classes of :mod:`pbj.wellknown` and the same types
loaded from a descriptor set get the same form. Each entry of
:data:`WKT_WRITERS` / :data:`WKT_READERS` takes the class's schema, the
converter and its options and returns the class's writer or reader.
"""

from __future__ import annotations

import enum
import math
from decimal import Decimal
from typing import Any

from pbj.api import decode, encode
from pbj.errors import DecodeError, EncodeError, PbjError
from pbj.protojson.common import JSONError, enter, json_type, leave
from pbj.protojson.jsontext import check_object
from pbj.protojson.registry import resolve_any
from pbj.protojson.scalar_forms import INF, read_string
from pbj.protojson.text_forms import (
    camel_path,
    duration_text,
    parse_duration,
    parse_timestamp,
    snake_path,
    timestamp_text,
)
from pbj.protojson.values import VALUE, lazy_reader, lazy_writer, value_reader, value_writer
from pbj.schema import FieldInfo, MessageInfo, OneOf, info

__all__ = ["SPECIAL_FORMS", "WKT_WRITERS", "WKT_READERS"]

_WRAPPERS = {f"google.protobuf.{n}" for n in (
    "DoubleValue", "FloatValue", "Int64Value", "UInt64Value", "Int32Value", "UInt32Value",
    "BoolValue", "StringValue", "BytesValue")}
#: Well-known types whose JSON form is not an object of fields; inside an ``Any`` they sit under "value".
SPECIAL_FORMS = frozenset(_WRAPPERS | {f"google.protobuf.{n}" for n in (
    "Any", "Timestamp", "Duration", "FieldMask", "Struct", "Value", "ListValue")})


def _field(mi: MessageInfo, proto_name: str) -> FieldInfo:
    for f in mi.all_fields():
        if f.proto_name == proto_name:
            return f
    raise PbjError(f"{mi.full_name} has no field {proto_name!r}")  # pragma: no cover


# ---------------------------------------------------------------- Timestamp, Duration, FieldMask

def _seconds_nanos_forms(to_text: Any, parse: Any, expected: str) -> tuple[Any, Any]:
    """The writer and reader factories of a ``seconds``/``nanos`` type (Timestamp, Duration).

    Args:
        to_text: ``(seconds, nanos, path=...) -> str``, the type's ProtoJSON text.
        parse: ``str -> (seconds, nanos)``, its reader (raising JSONError).
        expected: what the error says a non-string should have been.
    """

    def writer(mi, conv, opts):
        sec, nan = _field(mi, "seconds").name, _field(mi, "nanos").name

        def write(obj: Any) -> str:
            return to_text(getattr(obj, sec), getattr(obj, nan), path=[sec, nan])

        return write

    def reader(mi, conv, opts):
        cls = mi.cls
        sec, nan = _field(mi, "seconds").name, _field(mi, "nanos").name

        def read(v: Any, _cls: Any = None) -> Any:
            if v.__class__ is not str:
                raise JSONError(f"expected {expected}, got {json_type(v)}")
            seconds, nanos = parse(v)
            return cls(**{sec: seconds, nan: nanos})

        return read

    return writer, reader


_timestamp_writer, _timestamp_reader = _seconds_nanos_forms(
    timestamp_text, parse_timestamp, "an RFC 3339 string for Timestamp")
_duration_writer, _duration_reader = _seconds_nanos_forms(
    duration_text, parse_duration, "a string like '1.5s' for Duration")


def _field_mask_writer(mi, conv, opts):
    attr = _field(mi, "paths").name

    def write_field_mask(obj: Any) -> str:
        try:
            return ",".join(camel_path(p) for p in getattr(obj, attr))
        except EncodeError as exc:
            exc.path.insert(0, attr)
            raise

    return write_field_mask


def _field_mask_reader(mi, conv, opts):
    cls, attr = mi.cls, _field(mi, "paths").name

    def read_field_mask(v: Any, _cls: Any = None) -> Any:
        if v.__class__ is not str:
            raise JSONError(f"expected a comma-separated string for FieldMask, got {json_type(v)}")
        if not v.isascii():
            try:
                v.encode("utf-8")
            except UnicodeEncodeError:  # a path is a string field: valid UTF-8 only
                raise JSONError("FieldMask path holds a lone UTF-16 surrogate (not valid UTF-8)") from None
        return cls(**{attr: tuple(snake_path(p) for p in v.split(",")) if v else ()})

    return read_field_mask


# ---------------------------------------------------------------- wrappers

def _wrapper_writer(mi, conv, opts):
    f = _field(mi, "value")
    attr, w = f.name, value_writer(f.type, conv, opts)
    if w is None:
        return lambda obj: getattr(obj, attr)
    return lambda obj: w(getattr(obj, attr))


def _wrapper_reader(mi, conv, opts):
    f = _field(mi, "value")
    cls, attr, read = mi.cls, f.name, value_reader(f.type, conv, opts)

    def read_wrapper(v: Any, _cls: Any = None) -> Any:
        return cls(**{attr: read(v)})

    return read_wrapper


# ---------------------------------------------------------------- Struct, ListValue, Value

def _struct_writer(mi, conv, opts):
    f = _field(mi, "fields")
    attr, write_value = f.name, lazy_writer(conv, f.map_value)

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
    cls, attr, read_value = mi.cls, f.name, lazy_reader(conv, f.map_value)

    def read_struct(v: Any, _cls: Any = None) -> Any:
        check_object(v, "Struct")
        out = {}
        enter()
        try:
            for k, x in v.items():
                try:
                    out[read_string(k)] = read_value(x)
                except JSONError as exc:
                    exc.path.insert(0, k)
                    raise
        finally:
            leave()
        return cls(**{attr: out})

    return read_struct


def _list_value_writer(mi, conv, opts):
    f = _field(mi, "values")
    attr, write_value = f.name, lazy_writer(conv, f.type)

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
    cls, attr, read_value = mi.cls, f.name, lazy_reader(conv, f.type)

    def read_list_value(v: Any, _cls: Any = None) -> Any:
        if v.__class__ is not list:
            raise JSONError(f"expected a JSON array for ListValue, got {json_type(v)}")
        out = []
        enter()
        try:
            for i, x in enumerate(v):
                try:
                    out.append(read_value(x))
                except JSONError as exc:
                    exc.path.insert(0, i)
                    raise
        finally:
            leave()
        return cls(**{attr: tuple(out)})

    return read_list_value


def _value_members(mi: MessageInfo) -> dict[str, FieldInfo]:
    """The members of ``google.protobuf.Value``'s oneof ``kind``, by proto name."""
    return {m.proto_name: m for o in mi.oneofs for m in o.members}


def _value_writer(mi, conv, opts):
    members = _value_members(mi)
    attr = members["null_value"].oneof
    assert attr is not None  # a member of the oneof kind (see _value_members)
    names = {m.name: p for p, m in members.items()}
    struct_w = lazy_writer(conv, members["struct_value"].type)
    list_w = lazy_writer(conv, members["list_value"].type)

    def write_value(obj: Any) -> Any:
        v = getattr(obj, attr)
        if v is None:
            return None
        kind = names.get(v[0])
        x = v[1]
        if kind == "number_value":
            if x != x or x in (INF, -INF):
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


def _value_reader(mi, conv, opts):
    cls = mi.cls
    members = _value_members(mi)
    attr = members["null_value"].oneof
    assert attr is not None  # a member of the oneof kind (see _value_members)
    null_m = members["null_value"]
    null_zero = next(iter(null_m.type)) if isinstance(null_m.type, type) and issubclass(null_m.type, enum.Enum) else 0
    n_name, b_name, s_name = members["number_value"].name, members["bool_value"].name, members["string_value"].name
    st_name, l_name = members["struct_value"].name, members["list_value"].name
    struct_r = lazy_reader(conv, members["struct_value"].type)
    list_r = lazy_reader(conv, members["list_value"].type)

    def read_value(v: Any, _cls: Any = None) -> Any:
        t = v.__class__
        if v is None:
            kind = OneOf(null_m.name, null_zero)
        elif t is bool:
            kind = OneOf(b_name, v)
        elif t is int or t is float or t is Decimal:
            if t is Decimal and v.is_nan():  # (an sNaN would not even convert)
                raise JSONError(f"number {v} is out of range for Value.number_value")
            try:
                x = float(v)
            except OverflowError:
                x = INF
            if math.isinf(x) or x != x:
                raise JSONError(f"number {v} is out of range for Value.number_value")
            kind = OneOf(n_name, x)
        elif t is str:
            kind = OneOf(s_name, read_string(v))
        elif t is list:
            kind = OneOf(l_name, list_r(v))
        elif isinstance(v, dict):
            kind = OneOf(st_name, struct_r(v))
        else:
            raise JSONError(f"{type(v).__name__} is not a JSON value")
        return cls(**{attr: kind})

    return read_value


# ---------------------------------------------------------------- Any

def _any_writer(mi, conv, opts):
    url_attr, value_attr = _field(mi, "type_url").name, _field(mi, "value").name

    def write_any(obj: Any) -> dict:
        url, data = getattr(obj, url_attr), getattr(obj, value_attr)
        if not url and not data:
            return {}
        target = resolve_any(url)
        if target is None:
            raise EncodeError(f"Any holds type {url!r}, which is not a known message class "
                              "(load its schema or call pbj.protojson.register_types)", path=[url_attr])
        try:
            inner: Any = decode(target, data)
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
        check_object(v, "Any")
        if not v:
            return cls()
        url = v.get("@type")
        if url is None:
            raise JSONError("an Any object needs an \"@type\" member")
        if url.__class__ is not str:
            raise JSONError(f"expected a JSON string for \"@type\", got {json_type(url)}", path=["@type"])
        target = resolve_any(url)
        if target is None or "/" not in url:
            raise JSONError(f"cannot resolve Any type {url!r}: not a known message class "
                            "(load its schema or call pbj.protojson.register_types)", path=["@type"])
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


WKT_WRITERS = {
    "google.protobuf.Timestamp": _timestamp_writer, "google.protobuf.Duration": _duration_writer,
    "google.protobuf.FieldMask": _field_mask_writer, "google.protobuf.Struct": _struct_writer,
    "google.protobuf.ListValue": _list_value_writer, VALUE: _value_writer,
    "google.protobuf.Any": _any_writer, **{w: _wrapper_writer for w in _WRAPPERS},
}
WKT_READERS = {
    "google.protobuf.Timestamp": _timestamp_reader, "google.protobuf.Duration": _duration_reader,
    "google.protobuf.FieldMask": _field_mask_reader, "google.protobuf.Struct": _struct_reader,
    "google.protobuf.ListValue": _list_value_reader, VALUE: _value_reader,
    "google.protobuf.Any": _any_reader, **{w: _wrapper_reader for w in _WRAPPERS},
}
