"""A first round trip through every writer and the parser."""

import pbj


@pbj.message
class Ts:
    seconds: int = pbj.field(1, "int64")
    nanos: int = pbj.field(2, "int32")


def test_round_trip_both_writers():
    value = Ts(seconds=150, nanos=-1)
    expected = bytes.fromhex("089601") + bytes.fromhex("10ffffffffffffffffff01")
    assert pbj.encode(value) == expected
    assert pbj.encode(value, reverse=True) == expected
    assert pbj.decode(Ts, expected) == value
