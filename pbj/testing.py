"""Hypothesis strategies for pbj messages, and a NaN-aware equality.

``values(cls)`` builds valid instances of any pbj message class from its
schema (:func:`pbj.schema.info`), whether declared by hand or loaded from a
descriptor. The values lean on the edges of the wire format (protobuf.dev
"Encoding"): integers at the limits of each type and where a varint grows a
byte, floats that are ``-0.0``, NaN, infinite or subnormal, strings, bytes and
sub-messages whose length prefix is about to grow, unicode outside the Basic
Multilingual Plane, enum numbers no member names (proto3 enums are open),
each oneof member, every map key type, empty and non-empty repeated fields,
explicit presence with a set zero, and unknown fields of every wire type::

    from hypothesis import given
    import pbj, pbj.testing

    @given(pbj.testing.values(Transfer))
    def test_round_trip(x):
        assert pbj.testing.equivalent(pbj.decode(Transfer, pbj.encode(x)), x)

``equivalent(a, b)`` compares two values as the wire format sees them: floats
by bit pattern, so ``NaN`` equals ``NaN`` and ``-0.0`` differs from ``0.0``.

This module needs the ``hypothesis`` package (a test dependency, imported here
only).
"""

from __future__ import annotations

import enum
import functools
import math
import struct
from functools import cache
from typing import Any

from hypothesis import strategies as st

from pbj import wire
from pbj.schema import FieldInfo, FrozenMap, OneOf, info, is_message

__all__ = ["values", "field_values", "scalar_values", "unknown_field_bytes", "equivalent", "unchecked",
           "INT_EDGES", "LENGTH_EDGES"]

#: Integers where a varint or a type's range changes; each type gets those in its range.
INT_EDGES: tuple[int, ...] = (
    0, 1, -1, 127, 128, -127, -128, 16383, 16384, (1 << 31) - 1, -(1 << 31), (1 << 32) - 1,
    1 << 31, (1 << 63) - 1, -(1 << 63), 1 << 63, (1 << 64) - 1,
)
#: Byte lengths where a length prefix grows (1 to 2 to 3 bytes) or stays empty.
LENGTH_EDGES: tuple[int, ...] = (0, 127, 128, 16383, 16384)

_F32_MAX = 3.4028234663852886e38
_DOUBLE_EDGES = (
    0.0, -0.0, math.nan, -math.nan, math.inf, -math.inf, 1.0, -1.0,
    5e-324, -5e-324,                                    # smallest subnormal
    2.225073858507201e-308,                             # largest subnormal
    2.2250738585072014e-308,                            # smallest normal
    1.7976931348623157e308, -1.7976931348623157e308,    # largest finite
)
_FLOAT_EDGES = (
    0.0, -0.0, math.nan, -math.nan, math.inf, -math.inf, 1.0, -1.0,
    1.401298464324817e-45, -1.401298464324817e-45,      # smallest float32 subnormal
    1.1754942106924411e-38,                             # largest float32 subnormal
    1.1754943508222875e-38,                             # smallest float32 normal
    _F32_MAX, -_F32_MAX,                                # largest finite float32
)
# Characters of each UTF-8 length (1 to 4 bytes), for strings of an exact byte length.
_LEAD_CHARS = ("a", "\x00", "\u00e9", "\u20ac", "\U0001f600", "\U0010ffff")
_ASTRAL = ("\U0001f600", "\U00010000", "\U0010ffff", "\U0001d11e")

_REPEATED_MAX = 5
_MAP_MAX = 3
_UNKNOWN_MAX = 3


def _int_strategy(kind: str) -> st.SearchStrategy[int]:
    lo, hi = wire.RANGES[kind]
    edges = sorted({v for v in (*INT_EDGES, lo, hi) if lo <= v <= hi})
    return st.one_of(st.sampled_from(edges), st.integers(lo, hi))


def _exact_text(n: int, lead: str) -> str:
    """A string whose UTF-8 encoding is exactly ``n`` bytes, starting with ``lead`` if it fits."""
    size = len(lead.encode())
    return lead + "x" * (n - size) if n >= size else "y" * n


@cache
def scalar_values(kind: str) -> st.SearchStrategy[Any]:
    """A strategy for the values of one scalar type.

    Args:
        kind: a scalar type name (``"int32"``, ``"double"``, ``"string"`` …,
            protobuf.dev "Scalar Value Types").

    Returns:
        Integers in the type's range (its limits and the varint edges of
        :data:`INT_EDGES` often), floats (``float`` values exactly
        representable as IEEE 754 binary32; NaN, infinities, ``-0.0`` and
        subnormals often), ``bool``, ``str`` (any code point but surrogates,
        also astral ones, and sometimes an exact UTF-8 length from
        :data:`LENGTH_EDGES`) or ``bytes`` (also of those lengths).

    Raises:
        ValueError: ``kind`` is not a scalar type name.
    """
    if kind in wire.RANGES:
        return _int_strategy(kind)
    if kind == "double":
        return st.one_of(st.sampled_from(_DOUBLE_EDGES), st.floats())
    if kind == "float":
        # NaN only as the quiet NaNs of _FLOAT_EDGES: narrowing a signalling
        # NaN to binary32 quiets it, so its bits would not survive.
        return st.one_of(st.sampled_from(_FLOAT_EDGES), st.floats(width=32, allow_nan=False))
    if kind == "bool":
        return st.booleans()
    if kind == "string":
        edge = st.builds(_exact_text, st.sampled_from(LENGTH_EDGES), st.sampled_from(_LEAD_CHARS))
        text = st.text(st.characters(codec="utf-8"), max_size=8)
        astral = st.lists(st.sampled_from(_ASTRAL), max_size=3).map("".join)
        return st.one_of(text, astral, text, edge)
    if kind == "bytes":
        edge = st.builds(lambda n, b: bytes([b]) * n, st.sampled_from(LENGTH_EDGES), st.integers(0, 255))
        raw = st.binary(max_size=10)
        return st.one_of(raw, raw, edge)
    raise ValueError(f"{kind!r} is not a scalar type name")


@cache
def _enum_values(enum_cls: type[enum.IntEnum], closed: bool) -> st.SearchStrategy[int]:
    members = st.sampled_from(list(enum_cls))
    if closed or getattr(enum_cls, "__pbj_closed__", False):  # a closed enum holds its members only
        return members
    known = {int(m) for m in enum_cls}
    unknown = st.one_of(st.sampled_from([v for v in (2, 7, 127, 128, -1, -2, (1 << 31) - 1, -(1 << 31))
                                         if v not in known] or [(1 << 31) - 1]),
                        _int_strategy("enum")).filter(lambda v: v not in known)
    return st.one_of(members, members, unknown)


def _single(t: Any, depth: int, unknown: bool, closed: bool) -> st.SearchStrategy[Any] | None:
    """Values of one element of type ``t``; ``None`` when a message may not nest further."""
    if isinstance(t, str):
        return scalar_values(t)
    if isinstance(t, type) and issubclass(t, enum.IntEnum):
        return _enum_values(t, closed)
    if depth <= 0:
        return None
    return values(t, max_depth=depth - 1, unknown_fields=unknown)


def field_values(field_info: FieldInfo, *, max_depth: int = 3, unknown_fields: bool = True,
                 closed_enums: bool = False) -> st.SearchStrategy[Any]:
    """A strategy for the attribute value of one field (or the value of one oneof member).

    Args:
        field_info: the field, as from :func:`pbj.fields` (resolved).
        max_depth: how many levels of sub-messages the value may still hold;
            at 0, a message field is ``None``, a repeated message field ``()``,
            a map with message values empty.
        unknown_fields: give sub-messages unknown fields too.
        closed_enums: enum values are members only (proto2 enums are closed);
            otherwise numbers no member names are generated too.

    Returns:
        For a repeated field a tuple (empty often), for a map field a
        :class:`pbj.FrozenMap` (keys of the key type), for a field with
        explicit presence ``None`` or a value (a set zero often), for a oneof
        member its bare value, else a value of the field's type.
    """
    f = field_info
    if f.is_map:
        keys = scalar_values(f.map_key)
        vals = _single(f.map_value, max_depth, unknown_fields, closed_enums)
        if vals is None:
            return st.just(FrozenMap())
        return st.dictionaries(keys, vals, max_size=_MAP_MAX).map(FrozenMap)
    elem = _single(f.type, max_depth, unknown_fields, closed_enums)
    if f.repeated:
        if elem is None:
            return st.just(())
        return st.lists(elem, max_size=_REPEATED_MAX).map(tuple)
    if f.oneof is not None:
        if elem is None:
            raise ValueError(f"oneof member {f.name!r} is a message and max_depth is 0")
        return elem
    if elem is None:
        return st.none()
    if f.optional and not f.required:
        zero = _zero_of(f.type)
        present = elem if zero is None else st.one_of(st.just(zero), elem)
        return st.one_of(st.none(), present)
    return elem


def _zero_of(t: Any) -> Any:
    if isinstance(t, str):
        return {"bool": False, "string": "", "bytes": b"", "double": 0.0, "float": 0.0}.get(t, 0)
    if isinstance(t, type) and issubclass(t, enum.IntEnum):
        return t(0) if 0 in t._value2member_map_ else None
    return None


def _member(name: str, value: Any) -> OneOf[Any]:
    return OneOf(name, value)


def _oneof_values(members: list[FieldInfo], depth: int, unknown: bool, closed: bool) -> st.SearchStrategy:
    options: list[st.SearchStrategy[Any]] = [st.none()]
    for m in members:
        v = _single(m.type, depth, unknown, closed)
        if v is not None:
            options.append(v.map(functools.partial(_member, m.name)))
    return st.one_of(*options)


def _tag(number: int, wire_type: int) -> bytes:
    return wire.encode_varint(number << 3 | wire_type)


def unknown_field_bytes(used: frozenset[int] | set[int] = frozenset(), *, groups: bool = True,
                        max_fields: int = _UNKNOWN_MAX) -> st.SearchStrategy[bytes]:
    """A strategy for the raw bytes of unknown fields ("Unknown Fields", "Encoding").

    Each field is a valid tag and value: varint (wire type 0, canonical, 0 to
    2**64-1), I64 (1), LEN (2) or I32 (5), and with ``groups`` a group
    (start tag 3, one nested unknown field, end tag 4), in any order.

    Args:
        used: field numbers the message declares; none of them is generated.
        groups: also generate groups (proto2's wire types 3 and 4).
        max_fields: at most this many fields.

    Returns:
        The concatenated encodings (``b""`` often).
    """
    numbers = st.one_of(st.sampled_from([1, 2, 3, 15, 16, 2047, 2048, 262143, 262144, wire.MAX_FIELD_NUMBER]),
                        st.integers(1, wire.MAX_FIELD_NUMBER)).filter(lambda n: n not in used)
    varint = st.one_of(st.sampled_from([0, 1, 127, 128, (1 << 63), (1 << 64) - 1]),
                       st.integers(0, (1 << 64) - 1))
    plain = st.one_of(
        st.builds(lambda n, v: _tag(n, 0) + wire.encode_varint(v), numbers, varint),
        st.builds(lambda n, b: _tag(n, 1) + b, numbers, st.binary(min_size=8, max_size=8)),
        st.builds(lambda n, b: _tag(n, 2) + wire.encode_varint(len(b)) + b, numbers, st.binary(max_size=10)),
        st.builds(lambda n, b: _tag(n, 5) + b, numbers, st.binary(min_size=4, max_size=4)),
    )
    one = plain
    if groups:
        group = st.builds(lambda n, inner: _tag(n, 3) + inner + _tag(n, 4), numbers,
                          st.lists(plain, max_size=2).map(b"".join))
        one = st.one_of(plain, group)
    return st.lists(one, max_size=max_fields).map(b"".join)


@cache
def values(cls: type, *, max_depth: int = 3, unknown_fields: bool = True) -> st.SearchStrategy[Any]:
    """A strategy for valid instances of the pbj message class ``cls``.

    Every field gets a value of its type (see :func:`field_values` and
    :func:`scalar_values`); each oneof is ``None`` or one of its members, each
    member reachable; proto2 classes (``syntax == "proto2"``) get enum members
    only, and their ``required`` fields are always set.

    Args:
        cls: a pbj message class (hand-declared or loaded).
        max_depth: levels of sub-messages below this one; recursion in the
            schema stops there (message fields ``None``, lists and maps of
            messages empty).
        unknown_fields: give this message and its sub-messages unknown fields
            (valid raw bytes of field numbers the class does not declare and
            that no extension registered with it has, see
            :func:`unknown_field_bytes`), kept in the hidden ``_pbj_unknown``.

    Returns:
        A hypothesis ``SearchStrategy`` of ``cls`` instances.

    Raises:
        TypeError: ``cls`` is not a pbj message class.
        SchemaError: a forward reference of the class cannot be resolved.
    """
    mi = info(cls)
    closed = mi.syntax == "proto2"
    kwargs: dict[str, st.SearchStrategy] = {}
    for f in mi.fields:
        strategy = field_values(f, max_depth=max_depth, unknown_fields=unknown_fields, closed_enums=closed)
        if f.repeated or f.type in ("string", "bytes"):
            # Lists, maps, strings and bytes are left empty half the time: the
            # messages stay small and the default (not written) comes up often.
            empty = FrozenMap() if f.is_map else () if f.repeated else {"string": "", "bytes": b""}[f.type]
            strategy = st.one_of(st.just(empty), strategy)
        kwargs[f.name] = strategy
    for o in mi.oneofs:
        kwargs[o.name] = _oneof_values(o.members, max_depth, unknown_fields, closed)
    if unknown_fields:
        # nor the numbers of the extensions registered now: decoding reads those as extensions
        used = frozenset(f.number for f in mi.all_fields()) | frozenset(mi.extensions)
        if mi.message_set:
            # "MessageSet" wire format: group 1 is an item (type_id, message), never an unknown field
            used |= {1}
        kwargs["_pbj_unknown"] = st.one_of(st.just(b""), unknown_field_bytes(used))
    return st.fixed_dictionaries(kwargs).map(lambda kw: cls(**kw))


def _float_bits(x: Any) -> bytes:
    return struct.pack("<d", float(x))


def _same(a: Any, b: Any, unknown: bool) -> bool:
    if is_message(a) or is_message(b):
        if type(a) is not type(b):
            return False
        if unknown and a._pbj_unknown != b._pbj_unknown:
            return False
        mi = info(type(a))
        return all(_same(getattr(a, name), getattr(b, name), unknown) for name in mi.attr_order)
    if isinstance(a, float) or isinstance(b, float):
        if not isinstance(a, int | float) or not isinstance(b, int | float):
            return False
        return _float_bits(a) == _float_bits(b)
    if isinstance(a, OneOf) or isinstance(b, OneOf):
        return (isinstance(a, OneOf) and isinstance(b, OneOf) and a.which == b.which
                and _same(a.value, b.value, unknown))
    if isinstance(a, tuple | list) and isinstance(b, tuple | list):
        return len(a) == len(b) and all(_same(x, y, unknown) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(v, b[k], unknown) for k, v in a.items())
    if isinstance(a, bytes | bytearray | memoryview) and isinstance(b, bytes | bytearray | memoryview):
        return bytes(a) == bytes(b)
    return (type(a) is type(b) and a == b) or (
        isinstance(a, int) and isinstance(b, int) and not isinstance(a, bool) and not isinstance(b, bool)
        and a == b)


def equivalent(a: Any, b: Any, *, unknown_fields: bool = True) -> bool:
    """Whether two messages (or field values) hold the same values, field by field.

    Unlike ``==``, floats are compared by their IEEE 754 bit pattern (as
    binary64), so ``NaN`` equals a NaN with the same bits and ``-0.0`` differs
    from ``0.0``. Integers compare by value (an ``IntEnum`` member equals its
    number); a ``bool`` equals only a ``bool``. Repeated fields, maps and
    :class:`pbj.OneOf` values are compared element by element.

    Args:
        a, b: pbj message instances, or values of one field.
        unknown_fields: also require equal unknown fields (``pbj.unknown_fields``),
            at every level.

    Returns:
        ``True`` when every field (and, if asked, the unknown fields) match.
    """
    return _same(a, b, unknown_fields)


def unchecked(cls: type, /, **values: Any) -> Any:
    """A message of class ``cls`` holding ``values`` as given, without the constructor's checks.

    Built the way ``decode`` builds messages (through the class's hidden slots
    base), so that tests can give the writers values the constructor refuses
    (an int out of range, a ``str`` in a ``bytes`` field) and check their
    error path. Fields not given get their defaults.

    Raises:
        TypeError: ``cls`` is not a pbj message class, or a name is not one of its fields.
    """
    import attrs

    if not is_message(cls):
        raise TypeError(f"{cls!r} is not a pbj message class")
    obj = object.__new__(cls.__pbj_slots__)  # type: ignore[attr-defined]
    for a in attrs.fields(cls):
        if a.init:
            object.__setattr__(obj, a.name, values.pop(a.name, a.default))
    if values:
        raise TypeError(f"{cls.__qualname__} has no fields {sorted(values)}")
    object.__setattr__(obj, "_pbj_size", -1)
    obj.__class__ = cls
    return obj
