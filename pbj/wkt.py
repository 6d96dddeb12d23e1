"""Helpers that make Google's well-known types feel like Python (protobuf.dev "Protocol Buffers Well-Known Types").

They work on the classes of :mod:`pbj.wellknown` and on the same types loaded
from a descriptor set (``ns["google.protobuf.Timestamp"]``: the loader gives
the :mod:`pbj.wellknown` class itself), and on any class declared with the
well-known full name: fields are found by their ``.proto`` names. Functions
that build a message take ``cls=`` for such a class (default: the
:mod:`pbj.wellknown` one).

* ``Timestamp`` <-> ``datetime`` (timezone-aware, UTC), nanoseconds since the
  epoch (lossless), RFC 3339 text: :func:`timestamp_from_datetime`,
  :func:`timestamp_to_datetime`, :func:`timestamp_from_nanos`,
  :func:`timestamp_to_nanos`, :func:`timestamp_from_text`, :func:`timestamp_to_text`,
  :func:`timestamp_now`.
* ``Duration`` <-> ``timedelta``, nanoseconds (lossless), ProtoJSON text:
  :func:`duration_from_timedelta`, :func:`duration_to_timedelta`,
  :func:`duration_from_nanos`, :func:`duration_to_nanos`,
  :func:`duration_from_text`, :func:`duration_to_text`.
* ``Any``: :func:`pack`, :func:`unpack`, :func:`is_type`, :func:`type_name`.
* ``Struct``, ``Value``, ``ListValue`` <-> ``dict``, plain values, ``list``:
  :func:`struct_from_dict`, :func:`struct_to_dict`, :func:`value_from_python`,
  :func:`value_to_python`, :func:`list_value_from_list`, :func:`list_value_to_list`.
* wrappers (``Int32Value`` …) <-> a plain value or ``None``: :func:`wrap`, :func:`unwrap`.
* ``FieldMask`` <-> paths and ProtoJSON text: :func:`field_mask`,
  :func:`field_mask_paths`, :func:`field_mask_from_text`, :func:`field_mask_to_text`.

Precision: a ``datetime`` or ``timedelta`` holds microseconds, a ``Timestamp``
or ``Duration`` nanoseconds. Converting to ``datetime``/``timedelta`` drops the
last three digits (toward zero, as Google's ``ToDatetime``/``ToTimedelta``
do); the ``*_nanos`` and ``*_text`` functions keep every nanosecond.
"""

from __future__ import annotations

import datetime
import time
from collections.abc import Iterable, Mapping
from typing import Any as _Any

from pbj import wellknown
from pbj.api import decode, encode
from pbj.errors import PbjError
from pbj.protojson.registry import resolve_any
from pbj.protojson.text_forms import (
    DURATION_MAX_SECONDS,
    TIMESTAMP_MAX_SECONDS,
    TIMESTAMP_MIN_SECONDS,
    camel_path,
    duration_text,
    parse_duration,
    parse_timestamp,
    snake_path,
    timestamp_text,
)
from pbj.schema import OneOf, info, is_message

__all__ = [
    "UnknownTypeError",
    "timestamp_from_datetime", "timestamp_to_datetime", "timestamp_from_nanos", "timestamp_to_nanos",
    "timestamp_from_text", "timestamp_to_text", "timestamp_now",
    "duration_from_timedelta", "duration_to_timedelta", "duration_from_nanos", "duration_to_nanos",
    "duration_from_text", "duration_to_text",
    "pack", "unpack", "is_type", "type_name",
    "struct_from_dict", "struct_to_dict", "value_from_python", "value_to_python",
    "list_value_from_list", "list_value_to_list",
    "wrap", "unwrap", "field_mask", "field_mask_paths", "field_mask_from_text", "field_mask_to_text",
]

_PKG = "google.protobuf."
_NANOS = 1_000_000_000
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
_WRAPPERS = frozenset(_PKG + n for n in (
    "DoubleValue", "FloatValue", "Int64Value", "UInt64Value", "Int32Value", "UInt32Value",
    "BoolValue", "StringValue", "BytesValue"))
#: The type URL prefix ``pack`` uses by default (the one Google's runtimes use).
DEFAULT_TYPE_URL_PREFIX = "type.googleapis.com/"


class UnknownTypeError(PbjError, LookupError):
    """An ``Any`` names a type that no loaded schema, registered or declared class has.

    Attributes:
        type_url: the ``Any``'s type URL.
    """

    def __init__(self, type_url: str) -> None:
        self.type_url = type_url
        super().__init__(f"no message class is known for the Any type URL {type_url!r}: load its schema "
                         "(pbj.load_descriptor_set / pbj.load_proto), register the class with "
                         "pbj.protojson.register_types, or pass the class to unpack(any, cls)")


# ------------------------------------------------------------------ shared

def _check(obj: _Any, full_name: str) -> dict[str, str]:
    """The attribute names of ``obj``'s fields by proto name; TypeError unless it is a ``full_name``."""
    cls = type(obj)
    if not is_message(cls) or info(cls).full_name != full_name:
        raise TypeError(f"expected a {full_name} message, got {cls.__name__}")
    return _attrs(cls)


def _attrs(cls: type) -> dict[str, str]:
    """Proto field name -> attribute to read (a oneof member's oneof attribute)."""
    return {f.proto_name: f.oneof or f.name for f in info(cls).all_fields()}


def _member_names(cls: type) -> dict[str, str]:
    """Proto field name -> member name, for the members of oneofs."""
    return {f.proto_name: f.name for f in info(cls).all_fields() if f.oneof}


def _class(cls: type | None, full_name: str) -> type:
    """The class to build: ``cls`` (checked) or the :mod:`pbj.wellknown` class of ``full_name``."""
    if cls is None:
        return wellknown.WELL_KNOWN[full_name]
    if not (isinstance(cls, type) and is_message(cls)) or info(cls).full_name != full_name:
        raise TypeError(f"cls must be a {full_name} message class, got {cls!r}")
    return cls


def _make(cls: type, **by_proto_name: _Any) -> _Any:
    attrs = _attrs(cls)
    return cls(**{attrs[k]: v for k, v in by_proto_name.items()})


# ------------------------------------------------------------------ Timestamp

def timestamp_from_datetime(dt: datetime.datetime, *, cls: type | None = None) -> _Any:
    """A ``Timestamp`` of the instant ``dt``, exact to the microsecond.

    Args:
        dt: a ``datetime``; a naive one is taken as UTC (as Google's ``FromDatetime`` does).
        cls: the ``google.protobuf.Timestamp`` class to build (default :class:`pbj.wellknown.Timestamp`).

    Raises:
        TypeError: ``dt`` is not a ``datetime``, or ``cls`` is not a Timestamp class.
    """
    if not isinstance(dt, datetime.datetime):
        raise TypeError(f"expected a datetime, got {type(dt).__name__}")
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=datetime.UTC)
    delta = dt - _EPOCH
    return _make(_class(cls, _PKG + "Timestamp"), seconds=delta.days * 86400 + delta.seconds,
                 nanos=delta.microseconds * 1000)


def timestamp_to_datetime(ts: _Any) -> datetime.datetime:
    """The ``Timestamp`` as a timezone-aware UTC ``datetime``; nanoseconds below a microsecond are dropped.

    For every nanosecond use :func:`timestamp_to_nanos` or :func:`timestamp_to_text`.

    Raises:
        TypeError: ``ts`` is not a ``google.protobuf.Timestamp``.
        ValueError: ``seconds`` is outside 0001-01-01..9999-12-31 or ``nanos`` outside 0..999,999,999.
    """
    a = _check(ts, _PKG + "Timestamp")
    seconds, nanos = getattr(ts, a["seconds"]), getattr(ts, a["nanos"])
    _timestamp_range(seconds, nanos)
    return _EPOCH + datetime.timedelta(seconds=seconds, microseconds=nanos // 1000)


def _timestamp_range(seconds: int, nanos: int) -> None:
    if not TIMESTAMP_MIN_SECONDS <= seconds <= TIMESTAMP_MAX_SECONDS:
        raise ValueError(f"Timestamp seconds {seconds} is outside 0001-01-01..9999-12-31")
    if not 0 <= nanos < _NANOS:
        raise ValueError(f"Timestamp nanos {nanos} is outside 0..999999999")


def timestamp_from_nanos(nanos: int, *, cls: type | None = None) -> _Any:
    """A ``Timestamp`` ``nanos`` nanoseconds after the Unix epoch (negative: before), exactly.

    Raises:
        ValueError: the instant is outside 0001-01-01..9999-12-31.
    """
    seconds, rest = divmod(int(nanos), _NANOS)
    _timestamp_range(seconds, rest)
    return _make(_class(cls, _PKG + "Timestamp"), seconds=seconds, nanos=rest)


def timestamp_to_nanos(ts: _Any) -> int:
    """The ``Timestamp`` as nanoseconds since the Unix epoch (an ``int``: lossless)."""
    a = _check(ts, _PKG + "Timestamp")
    return getattr(ts, a["seconds"]) * _NANOS + getattr(ts, a["nanos"])


def timestamp_from_text(text: str, *, cls: type | None = None) -> _Any:
    """A ``Timestamp`` from RFC 3339 text (``"1972-01-01T10:00:20.021Z"``, any UTC offset, up to 9 digits).

    Raises:
        ValueError: (:class:`pbj.JSONError`) the text is not RFC 3339 or is out of range.
    """
    seconds, nanos = parse_timestamp(text)
    return _make(_class(cls, _PKG + "Timestamp"), seconds=seconds, nanos=nanos)


def timestamp_to_text(ts: _Any) -> str:
    """The ``Timestamp`` as RFC 3339 text in UTC (``Z``, 0, 3, 6 or 9 fractional digits), as ProtoJSON writes it.

    Raises:
        ValueError: (:class:`pbj.EncodeError`) the Timestamp is out of range.
    """
    a = _check(ts, _PKG + "Timestamp")
    return timestamp_text(getattr(ts, a["seconds"]), getattr(ts, a["nanos"]))


def timestamp_now(*, cls: type | None = None) -> _Any:
    """A ``Timestamp`` of the current time (``time.time_ns()``)."""
    return timestamp_from_nanos(time.time_ns(), cls=cls)


# ------------------------------------------------------------------ Duration

def _duration_parts(total: int) -> tuple[int, int]:
    """Nanoseconds as ``(seconds, nanos)`` of the same sign, both toward zero."""
    seconds, nanos = divmod(abs(total), _NANOS)
    if total < 0:
        seconds, nanos = -seconds, -nanos
    if not -DURATION_MAX_SECONDS <= seconds <= DURATION_MAX_SECONDS:
        raise ValueError(f"Duration of {seconds} s is outside +-{DURATION_MAX_SECONDS} s")
    return seconds, nanos


def duration_from_timedelta(td: datetime.timedelta, *, cls: type | None = None) -> _Any:
    """A ``Duration`` of ``td``, exact (a ``timedelta`` holds microseconds).

    Raises:
        TypeError: ``td`` is not a ``timedelta``.
        ValueError: ``td`` is longer than +-315,576,000,000 s (about 10,000 years).
    """
    if not isinstance(td, datetime.timedelta):
        raise TypeError(f"expected a timedelta, got {type(td).__name__}")
    total = (td.days * 86400 + td.seconds) * _NANOS + td.microseconds * 1000
    seconds, nanos = _duration_parts(total)
    return _make(_class(cls, _PKG + "Duration"), seconds=seconds, nanos=nanos)


def duration_to_timedelta(d: _Any) -> datetime.timedelta:
    """The ``Duration`` as a ``timedelta``; nanoseconds below a microsecond are dropped (toward zero).

    Raises:
        TypeError: ``d`` is not a ``google.protobuf.Duration``.
    """
    a = _check(d, _PKG + "Duration")
    nanos = getattr(d, a["nanos"])
    micros = abs(nanos) // 1000 * (-1 if nanos < 0 else 1)
    return datetime.timedelta(seconds=getattr(d, a["seconds"]), microseconds=micros)


def duration_from_nanos(nanos: int, *, cls: type | None = None) -> _Any:
    """A ``Duration`` of ``nanos`` nanoseconds (``seconds`` and ``nanos`` of the same sign).

    Raises:
        ValueError: longer than +-315,576,000,000 s.
    """
    seconds, rest = _duration_parts(int(nanos))
    return _make(_class(cls, _PKG + "Duration"), seconds=seconds, nanos=rest)


def duration_to_nanos(d: _Any) -> int:
    """The ``Duration`` in nanoseconds (an ``int``: lossless)."""
    a = _check(d, _PKG + "Duration")
    return getattr(d, a["seconds"]) * _NANOS + getattr(d, a["nanos"])


def duration_from_text(text: str, *, cls: type | None = None) -> _Any:
    """A ``Duration`` from its ProtoJSON text (``"-1.5s"``, up to 9 fractional digits).

    Raises:
        ValueError: (:class:`pbj.JSONError`) the text is not seconds with an ``s`` suffix, or out of range.
    """
    seconds, nanos = parse_duration(text)
    return _make(_class(cls, _PKG + "Duration"), seconds=seconds, nanos=nanos)


def duration_to_text(d: _Any) -> str:
    """The ``Duration`` as ProtoJSON text (``"-1.500s"``: 0, 3, 6 or 9 fractional digits).

    Raises:
        ValueError: (:class:`pbj.EncodeError`) out of range, or ``nanos`` of another sign than ``seconds``.
    """
    a = _check(d, _PKG + "Duration")
    return duration_text(getattr(d, a["seconds"]), getattr(d, a["nanos"]))


# ------------------------------------------------------------------ Any

def pack(msg: _Any, *, type_url_prefix: str = DEFAULT_TYPE_URL_PREFIX, cls: type | None = None) -> _Any:
    """An ``Any`` holding ``msg``: its type URL (prefix + full name) and its encoding.

    Raises:
        TypeError: ``msg`` is not a pbj message.
        EncodeError: ``msg`` cannot be encoded.
    """
    if not is_message(type(msg)):
        raise TypeError(f"pack needs a pbj message, got {type(msg).__name__}")
    sep = "" if type_url_prefix.endswith("/") else "/"
    url = f"{type_url_prefix}{sep}{info(type(msg)).full_name}"
    return _make(_class(cls, _PKG + "Any"), type_url=url, value=encode(msg))


def type_name(any_msg: _Any) -> str:
    """The full name of the type an ``Any`` holds (its type URL after the last ``/``)."""
    a = _check(any_msg, _PKG + "Any")
    return getattr(any_msg, a["type_url"]).rpartition("/")[2]


def is_type(any_msg: _Any, cls: type) -> bool:
    """Whether the ``Any`` holds a message of class ``cls`` (compared by full name)."""
    if not (isinstance(cls, type) and is_message(cls)):
        raise TypeError(f"{cls!r} is not a pbj message class")
    return type_name(any_msg) == info(cls).full_name


def unpack(any_msg: _Any, cls: type | None = None) -> _Any:
    """The message an ``Any`` holds, decoded as ``cls`` or as the class its type URL names.

    Without ``cls`` the class is looked up by full name among loaded schemas
    (the last load of each name), classes given to
    ``pbj.protojson.register_types`` or met by the JSON converters, and
    :mod:`pbj.wellknown`.

    Raises:
        TypeError: ``cls`` is given and the ``Any`` holds another type.
        UnknownTypeError: no class is known for the type URL (a ``LookupError``).
        DecodeError: the value is not a valid encoding of that type.
    """
    a = _check(any_msg, _PKG + "Any")
    url, data = getattr(any_msg, a["type_url"]), getattr(any_msg, a["value"])
    if cls is None:
        cls = resolve_any(url)
        if cls is None:
            raise UnknownTypeError(url)
    elif not is_type(any_msg, cls):
        raise TypeError(f"the Any holds {type_name(any_msg)!r}, not {info(cls).full_name!r}")
    return decode(cls, data)


# ------------------------------------------------------------------ Struct, Value, ListValue

def value_from_python(x: _Any, *, cls: type | None = None, _path: str = "$") -> _Any:
    """A ``Value`` of a plain Python value, recursively (as ``json.loads`` gives them).

    ``None`` -> ``null_value``, ``bool`` -> ``bool_value``, ``int``/``float`` ->
    ``number_value`` (a double: integers beyond 2**53 round, as in every JSON
    runtime), ``str`` -> ``string_value``, a mapping with ``str`` keys ->
    ``struct_value``, a ``list``/``tuple`` -> ``list_value``. A ``Value``,
    ``Struct`` or ``ListValue`` message is taken as it is.

    Args:
        cls: the ``google.protobuf.Value`` class to build; its ``Struct`` and
            ``ListValue`` are the types its fields name.

    Raises:
        TypeError: a value (or a mapping key) of another type, naming its path (``$.a[2]``).
    """
    vcls = _class(cls, _PKG + "Value")
    members = _member_names(vcls)
    kind = _attrs(vcls)["null_value"]
    if is_message(type(x)):
        name = info(type(x)).full_name
        if name == _PKG + "Value":
            return x
        if name == _PKG + "Struct":
            return vcls(**{kind: OneOf(members["struct_value"], x)})
        if name == _PKG + "ListValue":
            return vcls(**{kind: OneOf(members["list_value"], x)})
    if x is None:
        null = next(f for f in info(vcls).all_fields() if f.proto_name == "null_value").type
        return vcls(**{kind: OneOf(members["null_value"], null(0) if isinstance(null, type) else 0)})
    if isinstance(x, bool):
        return vcls(**{kind: OneOf(members["bool_value"], x)})
    if isinstance(x, (int, float)):
        return vcls(**{kind: OneOf(members["number_value"], float(x))})
    if isinstance(x, str):
        return vcls(**{kind: OneOf(members["string_value"], x)})
    if isinstance(x, Mapping):
        return vcls(**{kind: OneOf(members["struct_value"], _struct(x, vcls, _path))})
    if isinstance(x, (list, tuple)):
        return vcls(**{kind: OneOf(members["list_value"], _list_value(x, vcls, _path))})
    raise TypeError(f"{type(x).__name__} has no google.protobuf.Value form - at `{_path}`")


def _field_type(cls: type, proto_name: str) -> _Any:
    f = next(f for f in info(cls).all_fields() if f.proto_name == proto_name)
    return f.map_value if f.is_map else f.type


def _struct(d: Mapping, vcls: type, path: str, scls: type | None = None) -> _Any:
    scls = scls or _field_type(vcls, "struct_value")
    fields = {}
    for k, v in d.items():
        if not isinstance(k, str):
            raise TypeError(f"a Struct key must be a str, got {type(k).__name__} {k!r} - at `{path}`")
        fields[k] = value_from_python(v, cls=vcls, _path=f"{path}.{k}")
    return _make(scls, fields=fields)


def _list_value(items: Iterable, vcls: type, path: str) -> _Any:
    lcls = _field_type(vcls, "list_value")
    return _make(lcls, values=tuple(value_from_python(v, cls=vcls, _path=f"{path}[{i}]")
                                    for i, v in enumerate(items)))


def value_to_python(v: _Any) -> _Any:
    """A ``Value`` as a plain Python value: ``None``, ``bool``, ``float``, ``str``, ``dict`` or ``list``.

    A ``Value`` with no kind set reads as ``None`` (ProtoJSON writes it as ``null``).
    """
    a = _check(v, _PKG + "Value")
    kind = getattr(v, a["null_value"])
    if kind is None:
        return None
    by_member = {m: p for p, m in _member_names(type(v)).items()}
    which = by_member.get(kind.which)
    if which == "null_value":
        return None
    if which == "struct_value":
        return struct_to_dict(kind.value)
    if which == "list_value":
        return list_value_to_list(kind.value)
    return kind.value


def struct_from_dict(d: Mapping[str, _Any], *, cls: type | None = None) -> _Any:
    """A ``Struct`` of a ``dict`` of plain values (see :func:`value_from_python`).

    This is the way to build a ``Struct``: ``Struct(fields={"a": 1})`` needs
    ``Value`` messages as its values.

    Args:
        cls: the ``google.protobuf.Struct`` class to build.

    Raises:
        TypeError: ``d`` is not a mapping, or holds a value or key without a ``Value`` form (with its path).
    """
    if not isinstance(d, Mapping):
        raise TypeError(f"expected a dict, got {type(d).__name__}")
    scls = _class(cls, _PKG + "Struct")
    vcls = _field_type(scls, "fields")
    return _struct(d, vcls, "$", scls)


def struct_to_dict(s: _Any) -> dict[str, _Any]:
    """A ``Struct`` as a ``dict`` of plain values (see :func:`value_to_python`)."""
    a = _check(s, _PKG + "Struct")
    return {k: value_to_python(v) for k, v in getattr(s, a["fields"]).items()}


def list_value_from_list(items: Iterable[_Any], *, cls: type | None = None) -> _Any:
    """A ``ListValue`` of plain values (see :func:`value_from_python`).

    Raises:
        TypeError: an element has no ``Value`` form (with its path).
    """
    lcls = _class(cls, _PKG + "ListValue")
    return _make(lcls, values=tuple(value_from_python(v, cls=_field_type(lcls, "values"), _path=f"$[{i}]")
                                    for i, v in enumerate(items)))


def list_value_to_list(lv: _Any) -> list[_Any]:
    """A ``ListValue`` as a ``list`` of plain values (see :func:`value_to_python`)."""
    a = _check(lv, _PKG + "ListValue")
    return [value_to_python(v) for v in getattr(lv, a["values"])]


# ------------------------------------------------------------------ wrappers

def wrap(value: _Any, cls: type) -> _Any:
    """The wrapper message ``cls`` (``Int32Value`` …) holding ``value``; ``None`` stays ``None``.

    Raises:
        TypeError: ``cls`` is not a wrapper type, or ``value`` does not fit it.
    """
    if not (isinstance(cls, type) and is_message(cls)) or info(cls).full_name not in _WRAPPERS:
        raise TypeError(f"{cls!r} is not a google.protobuf wrapper type (Int32Value, StringValue ...)")
    if value is None:
        return None
    return _make(cls, value=value)


def unwrap(w: _Any) -> _Any:
    """The value a wrapper message holds; ``None`` (the field is unset) stays ``None``.

    Raises:
        TypeError: ``w`` is not a wrapper message.
    """
    if w is None:
        return None
    if not is_message(type(w)) or info(type(w)).full_name not in _WRAPPERS:
        raise TypeError(f"expected a google.protobuf wrapper message, got {type(w).__name__}")
    return getattr(w, _attrs(type(w))["value"])


# ------------------------------------------------------------------ FieldMask

def field_mask(paths: Iterable[str], *, cls: type | None = None) -> _Any:
    """A ``FieldMask`` of field paths (``["user.display_name", "photo"]``).

    Raises:
        TypeError: a path is not a ``str``.
    """
    paths = tuple(paths)
    for p in paths:
        if not isinstance(p, str):
            raise TypeError(f"a FieldMask path must be a str, got {type(p).__name__}")
    return _make(_class(cls, _PKG + "FieldMask"), paths=paths)


def field_mask_paths(fm: _Any) -> tuple[str, ...]:
    """The paths of a ``FieldMask``."""
    a = _check(fm, _PKG + "FieldMask")
    return tuple(getattr(fm, a["paths"]))


def field_mask_from_text(text: str, *, cls: type | None = None) -> _Any:
    """A ``FieldMask`` from its ProtoJSON text (``"user.displayName,photo"``).

    Raises:
        ValueError: (:class:`pbj.JSONError`) a path has a ``_`` (JSON paths are lowerCamelCase).
    """
    paths = tuple(snake_path(p) for p in text.split(",")) if text else ()
    return _make(_class(cls, _PKG + "FieldMask"), paths=paths)


def field_mask_to_text(fm: _Any) -> str:
    """The ``FieldMask`` as ProtoJSON text: paths in lowerCamelCase, joined by commas.

    Raises:
        ValueError: (:class:`pbj.EncodeError`) a path has no JSON form (an upper-case letter, ``__`` …).
    """
    return ",".join(camel_path(p) for p in field_mask_paths(fm))
