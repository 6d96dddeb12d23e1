"""Known-answer vectors of protobuf's wire format (protobuf.dev, "Encoding").

The expected bytes are the worked examples of the encoding spec ("Base 128
Varints", "Signed Integers", "Non-varint Numbers", "Length-Delimited Records",
"Submessages", "Packed Repeated Fields", "Message Structure"), checked on the
primitives of :mod:`pbj.wire` and, through messages, on both writers; Google's
protobuf confirms the message bytes.
"""

from __future__ import annotations

import pytest

import pbj
from pbj import wire
from tests.oracle import google_class, protoc

# ---------------------------------------------------------------- oracle schema

PROTO = """
syntax = "proto3";
package a2wire;
message Test1 { int32 a = 1; }
message Test2 { string b = 2; }
message Test3 { Test1 c = 3; }
message Test4 { string d = 4; repeated int32 e = 6; }
message Signed {
  int32 i32 = 1; int64 i64 = 2; sint32 s32 = 3; sint64 s64 = 4; uint64 u64 = 5;
  fixed32 f32 = 6; fixed64 f64 = 7; sfixed32 sf32 = 8; sfixed64 sf64 = 9;
  float fl = 10; double db = 11; bool b = 12;
}
message Far { int32 f15 = 15; int32 f16 = 16; int32 f2047 = 2047; int32 f2048 = 2048; int32 fmax = 536870911; }
"""


@pytest.fixture(scope="module")
def google(tmp_path_factory):
    """Google's message classes for the schema above, by short name."""
    d = tmp_path_factory.mktemp("a2wire")
    (d / "a2_wire.proto").write_text(PROTO)
    protoc([d / "a2_wire.proto"], [d])
    return lambda name: google_class(f"a2wire.{name}")


@pbj.message(full_name="a2wire.Test1")
class Ex1:
    a: int = pbj.field(1, "int32")


@pbj.message(full_name="a2wire.Test2")
class Ex2:
    b: str = pbj.field(2, "string")


@pbj.message(full_name="a2wire.Test3")
class Ex3:
    c: Ex1 | None = pbj.field(3, Ex1)


@pbj.message(full_name="a2wire.Test4")
class Ex4:
    d: str = pbj.field(4, "string")
    e: tuple[int, ...] = pbj.field(6, "int32", repeated=True)


@pbj.message
class Signed:
    i32: int = pbj.field(1, "int32")
    i64: int = pbj.field(2, "int64")
    s32: int = pbj.field(3, "sint32")
    s64: int = pbj.field(4, "sint64")
    u64: int = pbj.field(5, "uint64")
    f32: int = pbj.field(6, "fixed32")
    f64: int = pbj.field(7, "fixed64")
    sf32: int = pbj.field(8, "sfixed32")
    sf64: int = pbj.field(9, "sfixed64")
    fl: float = pbj.field(10, "float")
    db: float = pbj.field(11, "double")
    b: bool = pbj.field(12, "bool")


@pbj.message
class Far:
    f15: int = pbj.field(15, "int32")
    f16: int = pbj.field(16, "int32")
    f2047: int = pbj.field(2047, "int32")
    f2048: int = pbj.field(2048, "int32")
    fmax: int = pbj.field(536870911, "int32")


def both_writers(obj) -> tuple[bytes, bytes]:
    """The bytes of the forward and of the reverse writer."""
    return pbj.encode(obj), pbj.encode(obj, reverse=True)


def h(text: str) -> bytes:
    """Bytes from the spec's spaced hex notation."""
    return bytes.fromhex(text)


# ---------------------------------------------------------------- varints

VARINTS = [
    (0, "00"),
    (1, "01"),
    (127, "7f"),
    (128, "80 01"),
    (150, "96 01"),                 # the spec's first example
    (300, "ac 02"),
    (16383, "ff 7f"),
    (16384, "80 80 01"),
    (2**32 - 1, "ff ff ff ff 0f"),
    (2**63 - 1, "ff ff ff ff ff ff ff ff 7f"),
    (2**64 - 1, "ff ff ff ff ff ff ff ff ff 01"),
]


@pytest.mark.parametrize(("value", "hexed"), VARINTS)
def test_encode_varint_known_answers(value, hexed):
    assert wire.encode_varint(value) == h(hexed)


@pytest.mark.parametrize(("value", "hexed"), VARINTS)
def test_varint_size_known_answers(value, hexed):
    assert wire.varint_size(value) == len(h(hexed))


@pytest.mark.parametrize(("value", "hexed"), VARINTS)
def test_read_varint_known_answers(value, hexed):
    data = b"\xaa" + h(hexed) + b"\xbb"   # read in the middle of other bytes
    assert wire.read_varint(data, 1) == (value, 1 + len(h(hexed)))


@pytest.mark.parametrize("kind", ["int32", "int64", "enum"])
def test_negative_int_is_sign_extended_to_ten_bytes(kind):
    # "Signed Integers": a negative int32/int64 is always 10 bytes
    assert wire.encode_varint(-1, kind) == h("ff ff ff ff ff ff ff ff ff 01")
    assert wire.encode_varint(-2, kind) == h("fe ff ff ff ff ff ff ff ff 01")
    assert wire.varint_size(-1, kind) == 10


def test_int32_min_is_ten_bytes():
    assert wire.encode_varint(-(2**31), "int32") == h("80 80 80 80 f8 ff ff ff ff 01")


@pytest.mark.parametrize(("value", "kind"), [(-1, "uint64"), (2**64, "uint64"), (2**32, "uint32"),
                                              (2**31, "int32"), (-(2**31) - 1, "int32"), (2**63, "int64")])
def test_encode_varint_out_of_range(value, kind):
    with pytest.raises(pbj.EncodeError, match="out of range"):
        wire.encode_varint(value, kind)
    with pytest.raises(pbj.EncodeError):
        wire.varint_size(value, kind)


def test_read_varint_accepts_redundant_continuation_bytes():
    # "80 00" is a valid (non-canonical) encoding of 0; parsers accept it
    assert wire.read_varint(h("80 00"), 0) == (0, 2)
    assert wire.read_varint(h("ff ff ff ff ff ff ff ff ff 01"), 0) == (2**64 - 1, 10)


def test_read_varint_rejects_eleven_bytes_and_overflowing_tenth():
    with pytest.raises(pbj.DecodeError, match="longer than 10 bytes"):
        wire.read_varint(h("ff" * 10 + "01"), 0)
    with pytest.raises(pbj.DecodeError, match="overflows 64 bits"):
        wire.read_varint(h("ff" * 9 + "02"), 0)


def test_read_varint_truncated_is_index_error():
    # the contract: truncation surfaces as IndexError, which the parser converts
    with pytest.raises(IndexError):
        wire.read_varint(h("96"), 0)


# ---------------------------------------------------------------- ZigZag

ZIGZAG = [(0, 0), (-1, 1), (1, 2), (-2, 3), (2147483647, 4294967294), (-2147483648, 4294967295)]


@pytest.mark.parametrize(("signed", "zz"), ZIGZAG)
def test_zigzag_table(signed, zz):
    assert wire.zigzag32(signed) == zz
    assert wire.zigzag64(signed) == zz
    assert wire.unzigzag(zz) == signed


def test_zigzag64_extremes():
    assert wire.zigzag64(2**63 - 1) == 2**64 - 2
    assert wire.zigzag64(-(2**63)) == 2**64 - 1
    assert wire.unzigzag(2**64 - 1) == -(2**63)


def test_zigzag_out_of_range():
    with pytest.raises(pbj.EncodeError):
        wire.zigzag32(2**31)
    with pytest.raises(pbj.EncodeError):
        wire.zigzag64(-(2**63) - 1)


# ---------------------------------------------------------------- tags

@pytest.mark.parametrize(("number", "wire_type", "hexed"), [
    (1, 0, "08"), (2, 2, "12"), (3, 2, "1a"), (1, 1, "09"), (1, 5, "0d"), (1, 3, "0b"), (1, 4, "0c"),
    (15, 0, "78"), (16, 0, "80 01"), (2047, 0, "f8 7f"), (2048, 0, "80 80 01"),
    (2**29 - 1, 0, "f8 ff ff ff 0f"), (2**29 - 1, 5, "fd ff ff ff 0f"),
])
def test_tags(number, wire_type, hexed):
    assert wire.make_tag(number, wire_type) == (number << 3) | wire_type
    assert wire.tag_bytes(number, wire_type) == h(hexed)
    assert wire.read_tag(h(hexed), 0) == ((number << 3) | wire_type, len(h(hexed)))


def test_read_tag_rejects_field_number_above_max():
    # field number 2**29 with wire type 0
    with pytest.raises(pbj.DecodeError, match="above the maximum"):
        wire.read_tag(h("80 80 80 80 10"), 0)


# ---------------------------------------------------------------- skip_field

@pytest.mark.parametrize(("record", "rest"), [
    ("08 96 01", ""),                                   # VARINT
    ("09 01 02 03 04 05 06 07 08", ""),                 # I64
    ("12 07 74 65 73 74 69 6e 67", ""),                 # LEN
    ("0d 01 02 03 04", ""),                             # I32
    ("0b 08 01 12 00 0c", ""),                          # SGROUP ... EGROUP of field 1
    ("0b 13 08 01 14 0c", ""),                          # a group inside a group
    ("08 01", "10 02"),                                 # stops at the next field
])
def test_skip_field_known_records(record, rest):
    data = h(record) + h(rest)
    tag, pos = wire.read_tag(data, 0)
    assert wire.skip_field(data, pos, tag, len(data), 100) == len(h(record))


@pytest.mark.parametrize(("data", "message"), [
    ("0e 00", "wire type 6"),
    ("0f 00", "wire type 7"),
    ("0c", "end-group tag"),
    ("00 00", "field number 0"),
    ("0b 08 01", "no end tag"),
    ("0b 14", "ended by the end tag of field 2"),
    ("12 05 01", "past the end"),
    ("09 01 02", "past the end"),
])
def test_skip_field_errors(data, message):
    raw = h(data)
    tag = raw[0]
    with pytest.raises(pbj.DecodeError, match=message):
        wire.skip_field(raw, 1, tag, len(raw), 100)


def test_skip_field_group_depth():
    raw = h("0b 0b 0c 0c")
    assert wire.skip_field(raw, 1, 0x0B, len(raw), 2) == 4
    with pytest.raises(pbj.DecodeError, match="nested too deeply"):
        wire.skip_field(raw, 1, 0x0B, len(raw), 1)


# ---------------------------------------------------------------- through messages

SPEC_MESSAGES = [
    (Ex1(a=150), "08 96 01"),
    (Ex2(b="testing"), "12 07 74 65 73 74 69 6e 67"),
    (Ex3(c=Ex1(a=150)), "1a 03 08 96 01"),
    (Ex4(d="hello", e=(1, 2, 3)), "22 05 68 65 6c 6c 6f 32 03 01 02 03"),
    (Ex4(e=(3, 270, 86942)), "32 06 03 8e 02 9e a7 05"),
    (Ex1(a=-1), "08 ff ff ff ff ff ff ff ff ff 01"),
    (Ex1(), ""),
    (Ex3(c=Ex1()), "1a 00"),
]


@pytest.mark.parametrize(("obj", "hexed"), SPEC_MESSAGES)
def test_spec_messages_both_writers(obj, hexed, google):
    expected = h(hexed)
    g = google(pbj.schema.info(type(obj)).full_name.split(".")[-1]).FromString(expected)
    assert g.SerializeToString(deterministic=True) == expected  # the oracle agrees with the spec
    fwd, rev = both_writers(obj)
    assert fwd == expected
    assert rev == expected
    assert pbj.encoded_size(obj) == len(expected)
    assert pbj.decode(type(obj), expected) == obj


def test_unpacked_repeated_accepted_on_decode(google):
    # "Packed Repeated Fields": parsers accept both forms
    unpacked = h("30 03 30 8e 02 30 9e a7 05")
    assert pbj.decode(Ex4, unpacked).e == (3, 270, 86942)
    assert tuple(google("Test4").FromString(unpacked).e) == (3, 270, 86942)


def test_last_one_wins(google):
    data = h("08 01 08 02")
    assert pbj.decode(Ex1, data).a == google("Test1").FromString(data).a == 2


SIGNED_CASES = [
    dict(s32=-1, s64=-2),
    dict(s32=2147483647, s64=-2147483648),
    dict(i32=-(2**31), i64=-(2**63), u64=2**64 - 1),
    dict(f32=2**32 - 1, f64=2**64 - 1, sf32=-(2**31), sf64=-(2**63)),
    dict(fl=1.5, db=-0.25, b=True),
    dict(i32=150, i64=300, s32=150, f32=150, sf32=-150),
]


@pytest.mark.parametrize("values", SIGNED_CASES)
def test_signed_and_fixed_types_match_google(values, google):
    expected = google("Signed")(**values).SerializeToString(deterministic=True)
    obj = Signed(**values)
    fwd, rev = both_writers(obj)
    assert fwd == expected
    assert rev == expected
    assert pbj.decode(Signed, expected) == obj


def test_zigzag_through_a_message():
    # sint32 -1 -> ZigZag 1; sint64 -2 -> ZigZag 3 ("Signed Integers")
    expected = h("18 01 20 03")
    assert both_writers(Signed(s32=-1, s64=-2)) == (expected, expected)


def test_fixed_width_little_endian():
    # "Non-varint Numbers": fixed32/sfixed32/float are 4 bytes, fixed64/double 8, little-endian
    expected = h("35 01 00 00 00 39 02 00 00 00 00 00 00 00 45 ff ff ff ff 55 00 00 c0 3f")
    obj = Signed(f32=1, f64=2, sf32=-1, fl=1.5)
    assert both_writers(obj) == (expected, expected)


@pytest.mark.parametrize(("name", "hexed"), [
    ("f15", "78 01"), ("f16", "80 01 01"), ("f2047", "f8 7f 01"), ("f2048", "80 80 01 01"),
    ("fmax", "f8 ff ff ff 0f 01"),
])
def test_tag_sizes_through_messages(name, hexed, google):
    obj = Far(**{name: 1})
    expected = h(hexed)
    assert google("Far")(**{name: 1}).SerializeToString(deterministic=True) == expected
    assert both_writers(obj) == (expected, expected)
    assert pbj.decode(Far, expected) == obj


def test_varint_tables_are_made_on_first_use_and_hold_every_short_varint():
    """``import pbj.wire`` builds no table (the native engine needs none); read, they hold the
    1- and 2-byte varints and the 2-byte low parts of longer ones."""
    import subprocess
    import sys
    code = "import pbj, pbj.wire as w; print(len(w._TABLES)); w.VARINT_BYTES; print(len(w._TABLES))"
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True,
                         env={**__import__("os").environ, "PBJ_ENGINE": "native"}).stdout.split()
    assert out == ["0", "2"]
    from pbj.wire import VARINT_BYTES, VARINT_MORE, _varint_slow
    assert len(VARINT_BYTES) == len(VARINT_MORE) == 1 << 14
    assert all(VARINT_BYTES[i] == _varint_slow(i) for i in range(1 << 14))
    assert all(VARINT_MORE[i] == _varint_slow(i | (1 << 14))[:2] for i in range(1 << 14))
