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
import enum
import math
import re
import struct
from decimal import Decimal
from fractions import Fraction
from typing import Any

from pbj.errors import EncodeError
from pbj.protojson.common import SKIP, JSONError, json_type
from pbj.protojson.jsontext import to_decimal
from pbj.scalars import ENUM, fixed_packer, row

__all__ = [
    "scalar_writer", "scalar_reader", "enum_writer", "enum_reader", "map_key_writer", "map_key_reader",
    "read_string", "INF",
]

_F32 = fixed_packer("float")
INF = math.inf
_NUMBER_RE = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_DIGITS_RE = re.compile(r"-?(?:0|[1-9][0-9]*)")
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


def enum_writer(enum_cls: type[enum.IntEnum], as_numbers: bool):
    """The function writing a value of ``enum_cls``: its name (unknown numbers as numbers), or its number.

    The name is the schema's: a member the loader renamed (``__pbj_proto_names__``) is written as declared.
    """
    if as_numbers:
        return int
    if enum_cls.__name__ == "NullValue":
        return lambda v: None
    schema = getattr(enum_cls, "__pbj_proto_names__", {})  # the loader's renamed members (value_ for value)
    names = {int(m): schema.get(m.name, m.name) for m in enum_cls}
    return lambda v: names.get(v, v if v.__class__ is int else int(v))


def map_key_writer(key_type: str):
    """The function writing a map key as a JSON object key (a string), or ``None`` for string keys."""
    if key_type == "string":
        return None
    if key_type == "bool":
        return lambda k: "true" if k else "false"
    return str


# ---------------------------------------------------------------- readers (from JSON)

def _show(v: Any) -> str:
    """``v`` for an error message: a number of thousands of digits is cut to its start and its length."""
    text = str(v)
    return text if len(text) <= 60 else f"{text[:40]}... ({len(text)} characters)"


def _int_reader(kind: str):
    bounds = row(kind).range
    assert bounds is not None  # read only for integral types, which have a range
    lo, hi = bounds

    def read_int(v: Any) -> int:
        t = v.__class__
        if t is int:
            n = v
        elif t is str:
            if len(v) <= 40 and _DIGITS_RE.fullmatch(v):  # longer ones go through Decimal (int() caps digits)
                n = int(v)
            elif _NUMBER_RE.fullmatch(v):
                n = _integral(to_decimal(v), kind)
            else:
                raise JSONError(f"expected an integer for {kind}, got string {_show(repr(v))}")
        elif t is float:
            if not v.is_integer():
                raise JSONError(f"expected an integer for {kind}, got {_show(repr(v))}")
            n = int(v)
        elif t is Decimal:
            n = _integral(v, kind)
        else:
            raise JSONError(f"expected a JSON number or string for {kind}, got {json_type(v)}")
        if n < lo or n > hi:
            raise JSONError(f"integer {_show(n)} is out of range for {kind}")
        return n

    return read_int


def _integral(d: Decimal, kind: str) -> int:
    if not d.is_finite():
        raise JSONError(f"expected an integer for {kind}, got {_show(d)}")
    if d.adjusted() > 40:
        raise JSONError(f"integer {_show(d)} is out of range for {kind}")
    if d != d.to_integral_value():
        raise JSONError(f"expected an integer for {kind}, got {_show(d)}")
    return int(d)


_BITS32 = struct.Struct("<I")
#: Half an ulp above the largest float32: a value this large or larger rounds to infinity (ties to even).
_F32_OVERFLOW = Fraction(2**128 - 2**103)


def _f32_from_bits(bits: int) -> float:
    return _F32.unpack(_BITS32.pack(bits))[0]


def _nearest_f32(exact: Fraction, approx: float, kind: str, shown: Any) -> float:
    """The float32 nearest to ``exact`` (ties to even), rounded once as Go's ``ParseFloat(s, 32)``.

    ``approx`` is ``exact`` rounded to a double; rounding that again to float32
    can land 1 ulp off when the double falls on a midpoint between two float32
    values, so the two candidates are compared with the exact value.

    Raises:
        JSONError: ``exact`` rounds to infinity as a float32.
    """
    if abs(exact) >= _F32_OVERFLOW:
        raise JSONError(f"number {_show(shown)} is out of range for {kind}")
    try:
        f = _F32.unpack(_F32.pack(approx))[0]
    except OverflowError:  # approx is above the largest float32 by less than half an ulp
        f = math.copysign(_f32_from_bits(0x7F7FFFFF), approx)
    if Fraction(f) == exact:
        return f
    bits = _BITS32.unpack(_F32.pack(f))[0]
    # the float32 on the other side of exact: one step away from f, towards exact
    toward_bigger_magnitude = (Fraction(f) < exact) == (math.copysign(1.0, f) > 0)
    if f == 0.0:
        other_bits = (0x80000001 if exact < 0 else 0x00000001)
    else:
        other_bits = bits + 1 if toward_bigger_magnitude else bits - 1
    other = _f32_from_bits(other_bits)
    if math.isinf(other):
        return f
    d_f, d_other = abs(Fraction(f) - exact), abs(Fraction(other) - exact)
    if d_other < d_f or (d_other == d_f and not other_bits & 1):
        return other
    return f


def _float_reader(kind: str):
    single = kind == "float"

    def read_float(v: Any) -> float:
        t = v.__class__
        if t is float:
            x = v
            exact = None
        elif t is int or t is Decimal:
            if t is Decimal and v.is_nan():  # only a dict can hold one (from_dict): JSON has no NaN number
                raise JSONError(f"{v!r} is not a JSON number (write NaN as the string \"NaN\")")
            try:
                x = float(v)
            except OverflowError:
                x = INF
            if math.isinf(x):
                raise JSONError(f"number {_show(v)} is out of range for {kind}")
            exact = v
        elif t is str:
            special = _SPECIAL_FLOATS.get(v)
            if special is not None:
                return special
            if not _NUMBER_RE.fullmatch(v):
                raise JSONError(f"expected a number for {kind}, got string {_show(repr(v))}")
            x = float(v)
            if math.isinf(x):
                raise JSONError(f"number {_show(v)} is out of range for {kind}")
            exact = v
        else:
            raise JSONError(f"expected a JSON number or string for {kind}, got {json_type(v)}")
        if single and x == x and not math.isinf(x):
            # the exact decimal only matters where float32 values are (|x| below 2**-150 rounds to 0)
            if exact is not None and x != 0.0 and abs(x) > 2.0**-151:
                return _nearest_f32(Fraction(exact if t is not str else Decimal(exact)), x, kind, v)
            try:
                x = _F32.unpack(_F32.pack(x))[0]
            except OverflowError:
                raise JSONError(f"number {_show(v)} is out of range for float") from None
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


def enum_reader(enum_cls: type[enum.IntEnum], closed: bool, ignore_unknown: bool):
    """The function reading an enum value given by name or number.

    A closed enum ("Enum Behavior": proto2, editions ``CLOSED``) refuses numbers
    that are not members; ``ignore_unknown`` makes unknown names (and such
    numbers) read as :data:`~pbj.protojson.common.SKIP`.
    """
    schema = getattr(enum_cls, "__pbj_proto_names__", {})  # the loader's renamed members (value_ for value)
    by_name = {schema.get(k, k): m for k, m in enum_cls.__members__.items()}  # aliases included
    by_number = {int(m): m for m in enum_cls}
    name = enum_cls.__name__
    is_null = name == "NullValue"
    assert ENUM.range is not None  # the enum row is int32's
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
                raise JSONError(f"expected an integer for enum {name}, got {_show(v)}")
            n = int(v)
            if n < lo or n > hi:
                raise JSONError(f"integer {_show(n)} is out of range for enum {name}")
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
