"""The JSON form of every scalar value, both ways (protobuf.dev "ProtoJSON Format", the type table).

Writers turn a field's Python value into its JSON value; readers check a JSON
value and return the Python value, raising :class:`~pbj.protojson.common.JSONError`
(path relative to the value). Which form a type takes (number, decimal string,
float with ``"NaN"``/``"Infinity"``, base64 …) and the integer ranges are read
from the type's row in :mod:`pbj.scalars` (``row(name).json``, ``.range``).
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from decimal import Decimal
from typing import Any

from pbj.errors import EncodeError
from pbj.protojson.common import SKIP, JSONError, json_type
from pbj.scalars import ENUM, SCALARS, row

__all__ = [
    "scalar_writer", "scalar_reader", "enum_writer", "enum_reader", "map_key_writer", "map_key_reader",
    "read_string", "INF",
]

_F32 = SCALARS["float"].packer
INF = math.inf
_NUMBER_RE = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_DIGITS_RE = re.compile(r"-?[0-9]+")
_SPECIAL_FLOATS = {"NaN": math.nan, "Infinity": INF, "-Infinity": -INF}


# ---------------------------------------------------------------- writers (to JSON)

def _f64_out(v: float) -> Any:
    if v != v:
        return "NaN"
    if v == INF:
        return "Infinity"
    if v == -INF:
        return "-Infinity"
    return float(v)


def _f32_out(v: float) -> Any:
    """A float field's value as the shortest decimal that reads back as the same 32-bit float."""
    if v != v or v in (INF, -INF):
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


def scalar_writer(kind: str):
    """The function writing a value of scalar type ``kind`` as JSON, or ``None`` where it is written as is."""
    form = row(kind).json
    if form == "int64":
        return str
    if form == "float":
        return _f32_out if kind == "float" else _f64_out
    if form == "bytes":
        return _bytes_out
    return None


def enum_writer(enum_cls: type, as_numbers: bool):
    """The function writing a value of ``enum_cls``: its name (unknown numbers as numbers), or its number."""
    if as_numbers:
        return int
    if enum_cls.__name__ == "NullValue":
        return lambda v: None
    names = {int(m): m.name for m in enum_cls}
    return lambda v: names.get(v, v if v.__class__ is int else int(v))


def map_key_writer(key_type: str):
    """The function writing a map key as a JSON object key (a string), or ``None`` for string keys."""
    if key_type == "string":
        return None
    if key_type == "bool":
        return lambda k: "true" if k else "false"
    return str


# ---------------------------------------------------------------- readers (from JSON)

def _int_reader(kind: str):
    lo, hi = row(kind).range

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
            raise JSONError(f"expected a JSON number or string for {kind}, got {json_type(v)}")
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
                x = INF
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
            raise JSONError(f"expected a JSON number or string for {kind}, got {json_type(v)}")
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
    raise JSONError(f"expected true or false for bool, got {json_type(v)}")


def read_string(v: Any) -> str:
    """A JSON string as a ``string`` value.

    Raises:
        JSONError: ``v`` is not a string, or holds a lone UTF-16 surrogate (not valid UTF-8).
    """
    if v.__class__ is not str:
        raise JSONError(f"expected a JSON string for string, got {json_type(v)}")
    if not v.isascii():
        try:
            v.encode("utf-8")
        except UnicodeEncodeError:
            raise JSONError("string holds a lone UTF-16 surrogate (not valid UTF-8)") from None
    return v


_URLSAFE = str.maketrans("-_", "+/")


def _read_bytes(v: Any) -> bytes:
    if v.__class__ is not str:
        raise JSONError(f"expected a base64 JSON string for bytes, got {json_type(v)}")
    text = v.translate(_URLSAFE)
    if len(text) % 4:
        text += "=" * (-len(text) % 4)
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise JSONError(f"invalid base64 for bytes: {v[:40]!r}") from None


_FIXED_READERS = {"bool": _read_bool, "string": read_string, "bytes": _read_bytes}


def scalar_reader(kind: str):
    """The function reading a JSON value as scalar type ``kind`` (raises JSONError on a bad value)."""
    t = row(kind)
    if t.is_integral:
        return _int_reader(kind)
    if t.is_float:
        return _float_reader(kind)
    return _FIXED_READERS[kind]


def enum_reader(enum_cls: type, closed: bool, ignore_unknown: bool):
    """The function reading an enum value given by name or number.

    A closed enum ("Enum Behavior": proto2, editions ``CLOSED``) refuses numbers
    that are not members; ``ignore_unknown`` makes unknown names (and such
    numbers) read as :data:`~pbj.protojson.common.SKIP`.
    """
    by_name = {m.name: m for m in enum_cls}
    by_name.update(enum_cls.__members__)  # aliases
    by_number = {int(m): m for m in enum_cls}
    name = enum_cls.__name__
    is_null = name == "NullValue"
    lo, hi = ENUM.range

    def read_enum(v: Any) -> Any:
        t = v.__class__
        if t is str:
            m = by_name.get(v)
            if m is None:
                if ignore_unknown:
                    return SKIP
                raise JSONError(f"unknown name {v!r} for enum {name}")
            return m
        if t is int or t is float or t is Decimal:
            if t is not int and not (v == v and float(v).is_integer()):
                raise JSONError(f"expected an integer for enum {name}, got {v}")
            n = int(v)
            if n < lo or n > hi:
                raise JSONError(f"integer {n} is out of range for enum {name}")
            m = by_number.get(n)
            if m is not None:
                return m
            if closed:
                if ignore_unknown:
                    return SKIP
                raise JSONError(f"unknown number {n} for closed enum {name}")
            return n
        if v is None and is_null:
            return by_number.get(0, 0)
        raise JSONError(f"expected a JSON string or number for enum {name}, got {json_type(v)}")

    return read_enum


def map_key_reader(key_type: str):
    """The function reading a JSON object key as a map key of scalar type ``key_type``."""
    if key_type == "string":
        return read_string
    if key_type == "bool":
        def read_bool_key(k: Any) -> bool:
            if k == "true":
                return True
            if k == "false":
                return False
            raise JSONError(f"expected \"true\" or \"false\" as a bool map key, got {k!r}")
        return read_bool_key
    return _int_reader(key_type)
