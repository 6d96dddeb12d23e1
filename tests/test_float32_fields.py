"""A ``float`` field holds a binary32 value: the constructor, ``pbj.replace`` and the
JSON and text readers round what they are given to the nearest binary32 value, as
Google's runtimes do when a float field is set, so ``decode(encode(m)) == m``."""

from __future__ import annotations

import math
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

import pbj
from pbj.codec.float32 import nan_bits, nan_from_bits

F32 = struct.Struct("<f")


def f32(x: float) -> float:
    return F32.unpack(F32.pack(x))[0]


@pbj.message(full_name="edges.Customer")
class Customer:
    weight: float = pbj.field(1, "float")
    score: float = pbj.field(2, "double")
    weights: tuple[float, ...] = pbj.field(3, "float", repeated=True)
    by_name: pbj.FrozenMap = pbj.map_field(4, "string", "float")
    maybe: float | None = pbj.field(5, "float", optional=True)
    pick: pbj.OneOf | None = pbj.oneof(picked=(6, "float"), label=(7, "string"))


def test_customer_weight_round_trips_equal():
    c = Customer(weight=0.1)
    assert c.weight == 0.10000000149011612 == f32(0.1)
    assert pbj.decode(Customer, pbj.encode(c)) == c
    assert pbj.decode(Customer, pbj.encode(c, reverse=True)) == c


def test_every_place_a_float_value_is_given_is_rounded():
    c = Customer(weight=0.1, score=0.1, weights=[0.1, 0.5, 1 / 3], by_name={"a": 0.2}, maybe=0.3,
                 pick=pbj.OneOf("picked", 0.7))
    assert c.score == 0.1  # double: as given
    assert c.weights == (f32(0.1), 0.5, f32(1 / 3))
    assert c.by_name == {"a": f32(0.2)}
    assert c.maybe == f32(0.3)
    assert c.pick == pbj.OneOf("picked", f32(0.7))
    assert pbj.decode(Customer, pbj.encode(c)) == c
    r = pbj.replace(Customer(), weight=0.1, weights=(2 / 3,))
    assert (r.weight, r.weights) == (f32(0.1), (f32(2 / 3),))
    assert Customer(weight=3).weight == 3.0 and type(Customer(weight=3).weight) is float


def test_json_and_text_readers_give_the_same_binary32_values():
    c = pbj.from_json(Customer, '{"weight": 0.1, "weights": [0.1, 0.2], "maybe": 1e-40}')
    assert (c.weight, c.weights, c.maybe) == (f32(0.1), (f32(0.1), f32(0.2)), f32(1e-40))
    assert pbj.decode(Customer, pbj.encode(c)) == c
    t = pbj.from_text(Customer, "weight: 0.1 weights: [0.1, 0.2]")
    assert (t.weight, t.weights) == (f32(0.1), (f32(0.1), f32(0.2)))
    assert pbj.from_json(Customer, pbj.to_json(Customer(weight=0.1))) == Customer(weight=0.1)


def test_subnormals_limits_and_specials():
    tiny = 1e-45  # rounds to the smallest binary32 subnormal
    assert Customer(weight=tiny).weight == f32(tiny) == 2.0**-149
    assert Customer(weight=2.0**-160).weight == 0.0  # below half the smallest subnormal
    assert Customer(weight=3.4028234663852886e38).weight == 3.4028234663852886e38
    assert Customer(weight=-0.0).weight == 0.0 and math.copysign(1, Customer(weight=-0.0).weight) < 0
    assert Customer(weight=math.inf).weight == math.inf
    with pytest.raises(ValueError, match=r"Customer\.weight: 1e\+39 is out of range for float"):
        Customer(weight=1e39)


def test_nan_bits_are_kept_as_given():
    signalling = nan_from_bits(0x7F800001)
    c = Customer(weight=signalling, weights=[signalling])
    assert nan_bits(c.weight) == 0x7F800001 and c.weight is signalling
    assert pbj.encode(c)[1:5] == struct.pack("<I", 0x7F800001)
    assert pbj.encode(c, reverse=True) == pbj.encode(c)


@given(st.floats(allow_nan=False, allow_infinity=False, width=64, min_value=-3.4028234663852886e38,
                 max_value=3.4028234663852886e38))
def test_stored_value_is_the_nearest_binary32(x):
    for c in (Customer(weight=x), pbj.replace(Customer(), weight=x)):
        assert c.weight == f32(x)
        assert pbj.decode(Customer, pbj.encode(c)).weight == c.weight


@given(st.floats(width=32, allow_nan=False))
def test_binary32_values_are_stored_unchanged(x):
    stored = Customer(weight=x).weight
    assert stored == x and math.copysign(1, stored) == math.copysign(1, x)
    if 2.0**-126 <= abs(x) <= 3.4028234663852886e38:
        assert stored is x  # a binary32 normal takes the constructor's fast test: the very object given
