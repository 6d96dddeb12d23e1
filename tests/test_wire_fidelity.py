"""The differences from Google's runtimes found by fuzzing real payloads (issue 12), each with its input.

Every input is decoded by a hand-declared class and by the class loaded from
the same schema compiled by protoc, written by both writers, and compared
with the bytes Google's protobuf (upb) writes for it:

* a map entry whose message value occurs twice merges the two ("Maps": an
  entry is a message; "Last One Wins" in "Encoding");
* a closed enum's non-member number moves to the unknown fields with the
  bytes upb keeps ("Enum Behavior"): as it arrived for a field of its own,
  re-encoded from its 64-bit value for an element of a packed run;
* a malformed occurrence that a later one supersedes is still refused
  (oneof members, singular sub-messages, repeated sub-messages);
* every ``float`` and ``double`` NaN bit pattern comes back as it arrived
  (:mod:`pbj.codec.float32`).
"""

from __future__ import annotations

import enum
import math
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

import pbj
from tests.oracle import google_class, protoc_sources

PROTO = """
syntax = "proto2";
package pbjwire;
enum E { A = 0; B = 1; }
message V { optional int32 c = 1; optional int32 d = 2; }
message M {
  map<int32, V> m = 1;
  optional E e = 2;
  repeated E r = 3;
  repeated E p = 4 [packed = true];
  map<int32, E> me = 5;
  oneof o { E oe = 6; V ov = 7; V ow = 8; }
  optional float f = 9;
  optional double g = 10;
  repeated float rf = 11 [packed = true];
  repeated double rd = 12 [packed = true];
  repeated float uf = 13;
  optional V v = 14;
  repeated V rv = 15;
  map<int32, float> mf = 16;
}
"""


class E(enum.IntEnum):
    """``pbjwire.E``, closed (proto2)."""

    A = 0
    B = 1


E.__pbj_closed__ = True  # type: ignore[attr-defined]


@pbj.message(full_name="pbjwire.V", syntax="proto2")
class V:
    """``pbjwire.V``."""

    c: int | None = pbj.field(1, "int32", optional=True)
    d: int | None = pbj.field(2, "int32", optional=True)


@pbj.message(full_name="pbjwire.M", syntax="proto2")
class M:
    """``pbjwire.M``, declared by hand."""

    m: pbj.FrozenMap = pbj.map_field(1, "int32", V)
    e: E | None = pbj.field(2, E, optional=True)
    r: tuple[E, ...] = pbj.field(3, E, repeated=True, packed=False)
    p: tuple[E, ...] = pbj.field(4, E, repeated=True, packed=True)
    me: pbj.FrozenMap = pbj.map_field(5, "int32", E)
    o: pbj.OneOf | None = pbj.oneof(oe=(6, E), ov=(7, V), ow=(8, V))
    f: float | None = pbj.field(9, "float", optional=True)
    g: float | None = pbj.field(10, "double", optional=True)
    rf: tuple[float, ...] = pbj.field(11, "float", repeated=True, packed=True)
    rd: tuple[float, ...] = pbj.field(12, "double", repeated=True, packed=True)
    uf: tuple[float, ...] = pbj.field(13, "float", repeated=True, packed=False)
    v: V | None = pbj.field(14, V, optional=True)
    rv: tuple[V, ...] = pbj.field(15, V, repeated=True)
    mf: pbj.FrozenMap = pbj.map_field(16, "int32", "float")


@pytest.fixture(scope="module")
def classes(tmp_path_factory):
    """The hand-declared ``M``, the loaded ``pbjwire.M`` and Google's class of it."""
    ns = pbj.load_descriptor_set(protoc_sources(tmp_path_factory.mktemp("wire"), {"wire.proto": PROTO})[1])
    return {"hand": M, "loaded": ns["pbjwire.M"]}, google_class("pbjwire.M")


def _both_writers(obj) -> bytes:
    forward, reverse = pbj.encode(obj), pbj.encode(obj, reverse=True)
    assert forward == reverse
    return forward


def _same_as_google(classes, data: bytes, expected: bytes | None = None):
    """Decode ``data`` with both pbj classes; both writers give Google's bytes (and ``expected``)."""
    ours, google = classes
    want = google.FromString(data).SerializeToString()
    if expected is not None:
        assert want == expected, "the oracle changed"
    results = {}
    for how, cls in ours.items():
        obj = pbj.decode(cls, data)
        assert _both_writers(obj) == want, how
        results[how] = obj
    return results


# ---------------------------------------------------------------- map entry merge

def test_a_map_entry_value_that_occurs_twice_is_merged(classes):
    got = _same_as_google(classes, bytes.fromhex("0a0a08011202080112021002"),
                          bytes.fromhex("0a080801120408011002"))
    assert got["hand"].m == {1: V(c=1, d=2)}
    assert pbj.to_dict(got["loaded"]) == {"m": {"1": {"c": 1, "d": 2}}}


def test_a_map_entry_value_three_times_merges_in_order(classes):
    # V{c=1}, V{d=2}, V{c=3}: c=3 wins, d=2 stays
    data = bytes.fromhex("0a0e0801120208011202100212020803")
    got = _same_as_google(classes, data)
    assert got["hand"].m == {1: V(c=3, d=2)}


# ---------------------------------------------------------------- closed enums

NON_MEMBERS = ["8080808008", "cd8000", "8780808010", "ffffffff0f", "ffffffffffffffffff01", "02", "ff7f"]


@pytest.mark.parametrize("varint", NON_MEMBERS)
def test_a_closed_enum_non_member_keeps_its_varint(classes, varint):
    """Singular, repeated and oneof: the field goes to the unknown fields as it arrived."""
    for tag in ("10", "18", "30", "9000", "9800", "b000"):
        data = bytes.fromhex(tag + varint)
        got = _same_as_google(classes, data, data)
        for obj in got.values():
            assert pbj.unknown_fields(obj) == data
            assert obj.e is None and obj.r == () and obj.o is None


@pytest.mark.parametrize("varint", NON_MEMBERS)
def test_a_closed_enum_non_member_in_a_packed_run(classes, varint):
    """upb moves it out of the run as a varint field of its own, re-encoded from its 64-bit value."""
    raw = bytes.fromhex("01" + varint + "00")
    data = b"\x22" + bytes([len(raw)]) + raw
    value = pbj.wire.read_varint(raw, 1)[0]
    expected = bytes.fromhex("22020100") + b"\x20" + pbj.wire.encode_varint(value)
    got = _same_as_google(classes, data, expected)
    for obj in got.values():
        assert obj.p == (E.B, E.A)
        assert pbj.unknown_fields(obj) == b"\x20" + pbj.wire.encode_varint(value)


@pytest.mark.parametrize("varint", NON_MEMBERS)
def test_a_closed_enum_non_member_as_a_map_value(classes, varint):
    entry = bytes.fromhex("0801") + b"\x10" + bytes.fromhex(varint)
    data = b"\x2a" + bytes([len(entry)]) + entry
    got = _same_as_google(classes, data, data)
    for obj in got.values():
        assert obj.me == {}


def test_members_still_decode_from_over_long_varints(classes):
    data = bytes.fromhex("108180808000")  # B in 5 bytes
    got = _same_as_google(classes, data, bytes.fromhex("1001"))
    assert got["hand"].e is E.B


# ---------------------------------------------------------------- superseded occurrences

BLOCK_ITEM_INPUT = "4dbb061013bd033a220a060a0210160a040a03180a120318d30e"


def test_a_superseded_block_header_is_still_checked():
    from fuzz import targets as T

    t = T.target("blockitem")
    data = bytes.fromhex(BLOCK_ITEM_INPUT)
    with pytest.raises(Exception, match="corrupt"):
        t.google.FromString(data)
    with pytest.raises(pbj.DecodeError) as err:
        pbj.decode(t.cls, data)
    assert err.value.path[:1] == ["block_header"]
    assert err.value.offset == 17


# a malformed V: "08 0a 12", field 1 = 10, then field 2 as LEN with no length
SUPERSEDED = {
    # oneof member ov, ov again (malformed), then ow
    "oneof, then another member": "3a020801" + "3a03" + "080a12" + "42020802",
    # ov, ov (malformed), ow, then ov again: the first run is checked when ov starts anew
    "oneof, member back again": "3a020801" + "3a03" + "080a12" + "42020802" + "3a020803",
    # the malformed occurrence first, then a scalar member
    "oneof, then a scalar member": "3a020801" + "3a03" + "080a12" + "3000",
    # singular sub-message twice (merged)
    "singular": "72020801" + "7203" + "080a12",
    # repeated sub-message
    "repeated": "7a020801" + "7a03" + "080a12",
    # map value twice
    "map value": "0a0b" + "0801" + "12020801" + "1203" + "080a12",
}


@pytest.mark.parametrize("name", list(SUPERSEDED))
def test_a_malformed_occurrence_is_refused_even_when_superseded(classes, name):
    data = bytes.fromhex(SUPERSEDED[name])
    ours, google = classes
    with pytest.raises(Exception, match="corrupt"):
        google.FromString(data)
    for cls in ours.values():
        with pytest.raises(pbj.DecodeError, match="truncated"):
            pbj.decode(cls, data)


def test_well_formed_superseded_occurrences_still_decode_as_google(classes):
    for data in ("3a020801" "3a021002" "42020803", "3a020801" "3a021002" "42020803" "3a020804",
                 "3a020801" "3a021002" "3001"):
        _same_as_google(classes, bytes.fromhex(data))
    got = _same_as_google(classes, bytes.fromhex("3a020801" "3a021002" "42020803" "3a020804"))
    assert got["hand"].o == pbj.OneOf("ov", V(c=4))


# ---------------------------------------------------------------- NaN bits

def _f32(bits: int) -> bytes:
    return struct.pack("<I", bits)


def _f64(bits: int) -> bytes:
    return struct.pack("<Q", bits)


FLOAT_NANS = [0x7F800001, 0x7FBFFFFF, 0xFF800001, 0x7FC00000, 0xFFC00000, 0x7FC00001, 0x7FFFFFFF, 0xFFFFFFFF,
              0x7FA00000, 0xFF955555]
DOUBLE_NANS = [0x7FF0000000000001, 0x7FF7FFFFFFFFFFFF, 0xFFF0000000000001, 0x7FF8000000000000,
               0xFFF8000000000000, 0x7FFFFFFFFFFFFFFF, 0x7FF0000020000000]


def _float_inputs(bits: int) -> list[bytes]:
    one = _f32(bits)
    return [b"\x4d" + one,  # optional float
            b"\x5a\x08" + one + _f32(0x3F800000),  # packed float, with 1.0
            b"\x6d" + one,  # unpacked repeated float
            b"\x82\x01\x07\x08\x01\x15" + one]  # map<int32, float> value


@pytest.mark.parametrize("bits", FLOAT_NANS, ids=hex)
def test_float_nan_bits_round_trip(classes, bits):
    for data in _float_inputs(bits):
        got = _same_as_google(classes, data, data)
        for obj in got.values():
            assert _both_writers(obj) == data


@pytest.mark.parametrize("bits", DOUBLE_NANS, ids=hex)
def test_double_nan_bits_round_trip(classes, bits):
    for data in (b"\x51" + _f64(bits), b"\x62\x10" + _f64(bits) + _f64(0)):
        _same_as_google(classes, data, data)


@given(st.integers(0, 0x7FFFFF).filter(bool), st.booleans())
def test_every_float_nan_pattern_round_trips(payload, negative):
    bits = (0x80000000 if negative else 0) | 0x7F800000 | payload
    data = b"\x4d" + _f32(bits)
    for cls in (M,):
        obj = pbj.decode(cls, data)
        assert math.isnan(obj.f)
        assert _both_writers(obj) == data
    packed = b"\x5a\x04" + _f32(bits)
    assert _both_writers(pbj.decode(M, packed)) == packed


def test_a_nan_built_in_python_is_written_as_the_hardware_narrows_it():
    for value, bits in ((math.nan, 0x7FC00000), (-math.nan, 0xFFC00000),
                        (struct.unpack("<d", _f64(0x7FF0000000000001))[0], 0x7FC00000),
                        (struct.unpack("<d", _f64(0x7FF8000020000000))[0], 0x7FC00001)):
        obj = M(f=value, rf=(value, 2.5), uf=(value,))
        assert _both_writers(obj) == (b"\x4d" + _f32(bits) + b"\x5a\x08" + _f32(bits) + _f32(0x40200000)
                                      + b"\x6d" + _f32(bits))


def test_finite_floats_and_infinities_are_unchanged():
    values = (0.0, -0.0, 1.5, -3.25, math.inf, -math.inf, 3.4028234663852886e38, 1.401298464324817e-45)
    obj = M(f=1.5, rf=values, uf=values, g=-0.0)
    back = pbj.decode(M, _both_writers(obj))
    assert [struct.pack("<f", x) for x in back.rf] == [struct.pack("<f", x) for x in values]
    assert back == obj
