"""Every kind of invalid input gives one ``pbj.DecodeError`` with its field path and byte offset.

For each kind of malformed encoding (protobuf.dev "Encoding"), the tests check
that ``pbj.decode`` raises :class:`pbj.DecodeError` and nothing else, that
``err.path`` names the failing field from the top-level message
(``["transfers", 3, "amount"]``), that ``err.offset`` is the byte offset of
the failing field's tag in the top-level input, and that ``str(err)`` renders
the path as ``$.transfers[3].amount``. Inputs are built by hand from the
wire-format rules, never by pbj's writers.
"""

from __future__ import annotations

import enum
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pbj
from tests.oracle import google_class, protoc


@pbj.message
class Transfer:
    account: str = pbj.field(1, "string")
    amount: int = pbj.field(2, "int64")
    f32: int = pbj.field(3, "fixed32")
    f64: int = pbj.field(4, "fixed64")
    blob: bytes = pbj.field(5, "bytes")
    nums: tuple[int, ...] = pbj.field(6, "fixed32", repeated=True)


@pbj.message
class Group:
    transfers: tuple[Transfer, ...] = pbj.field(1, Transfer, repeated=True)


@pbj.message
class Body:
    transfers: tuple[Transfer, ...] = pbj.field(1, Transfer, repeated=True)
    memo: str = pbj.field(2, "string")
    tags: tuple[str, ...] = pbj.field(3, "string", repeated=True)
    by_name: pbj.FrozenMap = pbj.map_field(4, "string", Group)
    labels: pbj.FrozenMap = pbj.map_field(5, "string", "string")
    child: Body | None = pbj.field(6, "Body")
    by_id: pbj.FrozenMap = pbj.map_field(7, "sint32", Group)


def h(text: str) -> bytes:
    return bytes.fromhex(text)


def varint(n: int) -> bytes:
    """A varint written here from the spec's rule (7 bits a byte, low group first)."""
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def ld(tag: int, payload: bytes) -> bytes:
    """A LEN record: tag byte, length, payload."""
    return bytes([tag]) + varint(len(payload)) + payload


# Three good transfers ("10 01" = amount 1), 4 bytes each, so transfers[3] starts at byte 12.
THREE = ld(0x0A, h("10 01")) * 3


def with_fourth(content: bytes, tail: bytes = b"") -> tuple[bytes, int]:
    """Body bytes whose transfers[3] holds ``content``; returns (data, offset of content)."""
    head = len(THREE) + 1 + len(varint(len(content)))
    return THREE + ld(0x0A, content) + tail, head


def decode_error(cls, data: bytes, **kw) -> pbj.DecodeError:
    """Decode and return the DecodeError; any other outcome fails the test."""
    with pytest.raises(pbj.DecodeError) as info:
        pbj.decode(cls, data, **kw)
    assert type(info.value) is pbj.DecodeError
    assert isinstance(info.value, pbj.PbjError) and isinstance(info.value, ValueError)
    return info.value


def check(err: pbj.DecodeError, path: list, offset: int, rendered: str, reason: str | None = None) -> None:
    assert err.path == path
    assert err.offset == offset
    assert f"`{rendered}`" in str(err)
    assert f"at byte {offset}" in str(err)
    if reason is not None:
        assert reason in err.reason


# ---------------------------------------------------------------- truncation

def test_truncated_inside_a_varint():
    # amount's varint has its continuation bit set, then the input ends
    data, at = with_fourth(h("10 96"))
    assert at == 14
    err = decode_error(Body, data)
    check(err, ["transfers", 3, "amount"], 14, "$.transfers[3].amount", "truncated")


def test_truncated_varint_at_top_level():
    err = decode_error(Transfer, h("0a 00 10 ff ff"))
    check(err, ["amount"], 2, "$.amount", "truncated")


@pytest.mark.parametrize(("content", "name"), [
    (h("1d 01 02"), "f32"),                    # fixed32 with 2 of its 4 bytes
    (h("21 01 02 03 04 05 06 07"), "f64"),     # fixed64 with 7 of its 8 bytes
])
def test_truncated_inside_fixed(content, name):
    data, at = with_fourth(content)   # the sub-message and the input end inside the value
    err = decode_error(Body, data)
    check(err, ["transfers", 3, name], at, f"$.transfers[3].{name}", "truncated")


def test_truncated_fixed_inside_a_shorter_submessage():
    # the sub-message ends inside the fixed32; more input follows in the parent
    data, at = with_fourth(h("1d 01 02"), tail=h("12 00"))
    err = decode_error(Body, data)
    check(err, ["transfers", 3, "f32"], at, "$.transfers[3].f32", "truncated")


def test_truncated_inside_a_length_delimited_value():
    data, at = with_fourth(h("2a 05 01 02"))   # blob says 5 bytes, 2 follow, input ends
    err = decode_error(Body, data)
    check(err, ["transfers", 3, "blob"], at, "$.transfers[3].blob", "truncated")


def test_submessage_length_past_the_end_of_input():
    data = THREE + h("0a 05") + h("10 01")   # transfers[3] says 5 bytes, 2 follow
    err = decode_error(Body, data)
    check(err, ["transfers", 3], 12, "$.transfers[3]", "truncated")


@pytest.mark.parametrize("tag_start", [h("80"), h("80 80"), h("f8 ff ff")])
def test_truncated_inside_a_tag(tag_start):
    data = THREE + h("0a") + varint(len(tag_start)) + tag_start
    err = decode_error(Body, data)
    check(err, ["transfers", 3], 14, "$.transfers[3]", "truncated")


def test_truncated_tag_whose_first_byte_matches_a_known_one_byte_form():
    # 0x80 alone is also the low byte of tag 128 (field 16, VARINT); the path must not name field 16

    @pbj.message
    class Sixteen:
        s: int = pbj.field(16, "int32")

    err = decode_error(Sixteen, h("80"))
    check(err, [], 0, "$", "truncated")
    err = decode_error(Sixteen, h("80 01 ff"))
    check(err, ["s"], 0, "$.s", "truncated")


def test_empty_input_is_the_empty_message():
    assert pbj.decode(Body, b"") == Body()


# ---------------------------------------------------------------- lengths

def test_length_past_the_end_of_the_parent():
    # transfers[3] is 4 bytes long; blob inside it claims 5, though the input goes on
    data, at = with_fourth(h("2a 05 01 02"), tail=h("12 03 61 62 63"))
    err = decode_error(Body, data)
    check(err, ["transfers", 3, "blob"], at, "$.transfers[3].blob", "past the end")


# a length prefix is an int32 varint (pbj.wire.read_size): 5 bytes at most, 2**31-1 at most
_TOO_LONG = {2**31: "above the maximum 2147483647", 2**32 - 1: "above the maximum 2147483647",
             2**63: "longer than 5 bytes", 2**64 - 1: "longer than 5 bytes"}


@pytest.mark.parametrize("length", [2**31, 2**32 - 1, 2**63, 2**64 - 1])
def test_negative_length(length):
    # a length that a signed 32- or 64-bit reader would take as negative
    data, at = with_fourth(h("2a") + varint(length) + h("01 02"))
    err = decode_error(Body, data)
    check(err, ["transfers", 3, "blob"], at, "$.transfers[3].blob", _TOO_LONG[length])


@pytest.mark.parametrize("length", [2**31, 2**63, 2**64 - 1])
def test_negative_length_of_a_submessage(length):
    err = decode_error(Body, THREE + h("0a") + varint(length) + h("10 01"))
    check(err, ["transfers", 3], 12, "$.transfers[3]", _TOO_LONG[length])


def test_submessage_overrunning_its_parent():
    # child (4 bytes) holds transfers[0] claiming 10 bytes; the input has more after child
    data = h("32 04 0a 0a 10 01") + h("12 02 68 69") + bytes(10)
    err = decode_error(Body, data)
    check(err, ["child", "transfers", 0], 2, "$.child.transfers[0]", "past the end")


# ---------------------------------------------------------------- tags

@pytest.mark.parametrize("wire_type", [6, 7])
def test_invalid_wire_types(wire_type):
    data, at = with_fourth(bytes([(2 << 3) | wire_type]) + h("01"))
    err = decode_error(Body, data)
    check(err, ["transfers", 3], at, "$.transfers[3]", f"wire type {wire_type}")


@pytest.mark.parametrize("tag", [h("00"), h("02"), h("80 00"), h("85 00")])
def test_field_number_zero(tag):
    data, at = with_fourth(h("10 01") + tag + h("01 01"))
    err = decode_error(Body, data)
    check(err, ["transfers", 3], at + 2, "$.transfers[3]", "field number 0")


@pytest.mark.parametrize("number", [2**29, 2**32 - 1])
def test_field_number_above_max(number):
    data, at = with_fourth(varint(number << 3) + h("01"))
    err = decode_error(Body, data)
    check(err, ["transfers", 3], at, "$.transfers[3]", "above the maximum")


def test_field_number_max_is_accepted_as_unknown():
    record = varint(((2**29 - 1) << 3) | 0) + h("01")
    data, _ = with_fourth(record)
    assert pbj.unknown_fields(pbj.decode(Body, data).transfers[3]) == record


def test_end_group_without_start():
    err = decode_error(Body, h("12 00 0c"))
    check(err, [], 2, "$", "end-group")
    data, at = with_fourth(h("3c"))
    err = decode_error(Body, data)
    check(err, ["transfers", 3], at, "$.transfers[3]", "end-group")


def test_group_without_end():
    data, at = with_fourth(h("3b 08 01"))
    err = decode_error(Body, data)
    check(err, ["transfers", 3], at, "$.transfers[3]", "no end tag")


# ---------------------------------------------------------------- varints

def test_varint_longer_than_ten_bytes():
    data, at = with_fourth(h("10") + h("ff") * 10 + h("01"))
    err = decode_error(Body, data)
    check(err, ["transfers", 3, "amount"], at, "$.transfers[3].amount", "longer than 10 bytes")


def test_tenth_varint_byte_above_one():
    data, at = with_fourth(h("10") + h("ff") * 9 + h("02"))
    err = decode_error(Body, data)
    check(err, ["transfers", 3, "amount"], at, "$.transfers[3].amount", "overflows 64 bits")


def test_tenth_varint_byte_one_is_fine():
    data, _ = with_fourth(h("10") + h("ff") * 9 + h("01"))
    assert pbj.decode(Body, data).transfers[3].amount == -1


def test_overlong_length_varint():
    data, at = with_fourth(h("2a") + h("80") * 10 + h("00"))
    err = decode_error(Body, data)
    check(err, ["transfers", 3, "blob"], at, "$.transfers[3].blob", "longer than 10 bytes")


# ---------------------------------------------------------------- UTF-8

BAD_UTF8 = [h("ff"), h("c3"), h("ed a0 80"), h("f4 90 80 80"), h("c0 af")]


@pytest.mark.parametrize("bad", BAD_UTF8)
def test_invalid_utf8_in_string(bad):
    data, at = with_fourth(ld(0x0A, b"ok" + bad))
    err = decode_error(Body, data)
    check(err, ["transfers", 3, "account"], at, "$.transfers[3].account", "UTF-8")


@pytest.mark.parametrize("bad", BAD_UTF8)
def test_invalid_utf8_in_repeated_string(bad):
    data = ld(0x1A, b"a") + ld(0x1A, b"b") + ld(0x1A, bad)
    err = decode_error(Body, data)
    check(err, ["tags", 2], 6, "$.tags[2]", "UTF-8")


def test_invalid_utf8_in_map_key():
    data = ld(0x2A, ld(0x0A, b"k") + ld(0x12, b"v")) + ld(0x2A, ld(0x0A, h("ff fe")) + ld(0x12, b"v"))
    err = decode_error(Body, data)
    check(err, ["labels"], 8, "$.labels", "UTF-8")


def test_invalid_utf8_in_map_value_names_the_key():
    data = ld(0x12, b"memo") + ld(0x2A, ld(0x0A, b"k") + ld(0x12, h("ff")))
    err = decode_error(Body, data)
    check(err, ["labels", ("k",)], 6, "$.labels['k']", "UTF-8")


def test_valid_utf8_edge_cases_decode():
    text = "\u0000\u007f\u0080\u07ff\u0800\uffff\U00010000\U0010ffff"
    assert pbj.decode(Body, ld(0x12, text.encode())).memo == text


# ---------------------------------------------------------------- depth

def nest(levels: int) -> tuple[bytes, list[int]]:
    """``levels`` child messages inside one another; returns data and the offset of each child tag."""
    data = h("12 01 78")   # innermost: memo "x"
    for _ in range(levels):
        data = ld(0x32, data)
    offsets, pos = [], 0
    for _ in range(levels):
        offsets.append(pos)
        _, n = pbj.wire.read_varint(data, pos + 1)
        pos = n
    return data, offsets


def test_depth_default_limit():
    ok, _ = nest(pbj.DEFAULT_MAX_DEPTH)
    inner = pbj.decode(Body, ok)
    for _ in range(pbj.DEFAULT_MAX_DEPTH):
        inner = inner.child
    assert inner.memo == "x"
    assert pbj.DEFAULT_MAX_DEPTH == 100
    data, offsets = nest(101)
    err = decode_error(Body, data)
    check(err, ["child"] * 101, offsets[100], "$" + ".child" * 101, "too deep")


def test_depth_default_matches_google(tmp_path):
    (tmp_path / "a2_depth.proto").write_text(
        'syntax = "proto3"; package a2depth; message R { string memo = 2; R child = 6; }')
    protoc([tmp_path / "a2_depth.proto"], [tmp_path])
    google = google_class("a2depth.R")
    google.FromString(nest(100)[0])
    with pytest.raises(Exception):  # noqa: B017 - Google's DecodeError type depends on its backend
        google.FromString(nest(101)[0])
    pbj.decode(Body, nest(100)[0])
    decode_error(Body, nest(101)[0])


@pytest.mark.parametrize("limit", [0, 1, 5, 30])
def test_depth_per_call(limit):
    under, _ = nest(limit - 1) if limit else (b"", [])
    assert pbj.decode(Body, under, max_depth=limit) is not None
    at, _ = nest(limit)
    assert pbj.decode(Body, at, max_depth=limit) is not None
    over, offsets = nest(limit + 1)
    err = decode_error(Body, over, max_depth=limit)
    check(err, ["child"] * (limit + 1), offsets[limit], "$" + ".child" * (limit + 1), "too deep")


def test_depth_counts_map_values_and_repeated():
    # by_name value (Group) is one level, its transfers[0] another
    data = ld(0x22, ld(0x0A, b"k") + ld(0x12, ld(0x0A, h("10 01"))))
    assert pbj.decode(Body, data, max_depth=2).by_name["k"].transfers[0].amount == 1
    err = decode_error(Body, data, max_depth=1)
    check(err, ["by_name", ("k",), "transfers", 0], 7, "$.by_name['k'].transfers[0]", "too deep")


def test_depth_of_a_deep_chain_does_not_crash():
    data, _ = nest(5000)
    err = decode_error(Body, data)
    assert err.path[:3] == ["child"] * 3 and "too deep" in err.reason
    err = decode_error(Body, data, max_depth=10**6)   # limited by Python's recursion instead
    assert err.path[:3] == ["child"] * 3


# ---------------------------------------------------------------- packed runs, sizes

@pytest.mark.parametrize("n", [1, 3, 5, 7])
def test_packed_fixed_run_with_wrong_length(n):
    data, at = with_fourth(h("35 01 00 00 00") + ld(0x32, bytes(n)))
    err = decode_error(Body, data)
    check(err, ["transfers", 3, "nums", 1], at + 5, "$.transfers[3].nums[1]", "not a multiple of 4")


def test_max_size():
    data = THREE
    assert len(pbj.decode(Body, data, max_size=len(data)).transfers) == 3
    err = decode_error(Body, data, max_size=len(data) - 1)
    check(err, [], 0, "$", "max_size")


# ---------------------------------------------------------------- at depth

def test_error_deep_inside_map_value_gives_full_path():
    fourth = h("10") + h("ff") * 10 + h("01")       # transfers[3].amount: an 11-byte varint
    group = THREE + ld(0x0A, fourth)
    entry = ld(0x0A, b"acct") + ld(0x12, group)
    data = ld(0x12, b"memo") + ld(0x22, ld(0x0A, b"a") + ld(0x12, b"")) + ld(0x22, entry)
    entry_at = 6 + 7
    fourth_at = entry_at + 2 + 6 + 2 + len(THREE) + 2
    err = decode_error(Body, data)
    check(err, ["by_name", ("acct",), "transfers", 3, "amount"], fourth_at,
          "$.by_name['acct'].transfers[3].amount", "longer than 10 bytes")


def test_error_in_map_value_when_key_comes_last():
    group = ld(0x0A, h("2a 09 01"))
    data = ld(0x22, ld(0x12, group) + ld(0x0A, b"z"))
    err = decode_error(Body, data)
    check(err, ["by_name", ("z",), "transfers", 0, "blob"], 6, "$.by_name['z'].transfers[0].blob")


def test_error_in_map_with_integer_keys():
    data = ld(0x3A, h("08 03") + ld(0x12, ld(0x0A, h("1d 00"))))   # sint32 key 3 -> ZigZag 3 = -2
    err = decode_error(Body, data)
    check(err, ["by_id", (-2,), "transfers", 0, "f32"], 8, "$.by_id[-2].transfers[0].f32", "truncated")


def test_error_under_child_and_repeated():
    inner = THREE + ld(0x0A, h("0a 01 ff"))
    data = ld(0x12, b"hi") + ld(0x32, inner)
    err = decode_error(Body, data)
    check(err, ["child", "transfers", 3, "account"], 4 + 2 + len(THREE) + 2, "$.child.transfers[3].account")


# ---------------------------------------------------------------- nothing else escapes

class Color(enum.IntEnum):
    RED = 0
    GREEN = 1


@pbj.message
class Leaf:
    x: int = pbj.field(1, "int32")
    s: str = pbj.field(2, "string")


@pbj.message
class Every:
    f_double: float = pbj.field(1, "double")
    f_float: float = pbj.field(2, "float")
    f_int32: int = pbj.field(3, "int32")
    f_int64: int = pbj.field(4, "int64")
    f_uint32: int = pbj.field(5, "uint32")
    f_uint64: int = pbj.field(6, "uint64")
    f_sint32: int = pbj.field(7, "sint32")
    f_sint64: int = pbj.field(8, "sint64")
    f_fixed32: int = pbj.field(9, "fixed32")
    f_fixed64: int = pbj.field(10, "fixed64")
    f_sfixed32: int = pbj.field(11, "sfixed32")
    f_sfixed64: int = pbj.field(12, "sfixed64")
    f_bool: bool = pbj.field(13, "bool")
    f_string: str = pbj.field(14, "string")
    f_bytes: bytes = pbj.field(15, "bytes")
    f_enum: Color = pbj.field(16, Color)
    f_leaf: Leaf | None = pbj.field(17, Leaf)
    r_int32: tuple[int, ...] = pbj.field(18, "int32", repeated=True)
    r_sint64: tuple[int, ...] = pbj.field(19, "sint64", repeated=True, packed=False)
    r_string: tuple[str, ...] = pbj.field(20, "string", repeated=True)
    r_bytes: tuple[bytes, ...] = pbj.field(21, "bytes", repeated=True)
    r_leaf: tuple[Leaf, ...] = pbj.field(22, Leaf, repeated=True)
    r_enum: tuple[Color, ...] = pbj.field(23, Color, repeated=True)
    r_double: tuple[float, ...] = pbj.field(24, "double", repeated=True)
    m_leaf: pbj.FrozenMap = pbj.map_field(25, "string", Leaf)
    m_enum: pbj.FrozenMap = pbj.map_field(26, "int32", Color)
    m_bytes: pbj.FrozenMap = pbj.map_field(27, "bool", "bytes")
    choice: pbj.OneOf | None = pbj.oneof(c_str=(28, "string"), c_leaf=(29, Leaf), c_u64=(30, "uint64"))
    opt: int | None = pbj.field(31, "int32", optional=True)
    grp: Leaf | None = pbj.field(32, Leaf, group=True)
    child: Every | None = pbj.field(33, "Every")
    r_fixed32: tuple[int, ...] = pbj.field(34, "fixed32", repeated=True)


SAMPLE = Every(
    f_double=1.5, f_float=-2.0, f_int32=-3, f_int64=2**40, f_uint32=300, f_uint64=2**64 - 1, f_sint32=-7,
    f_sint64=-(2**50), f_fixed32=9, f_fixed64=10, f_sfixed32=-11, f_sfixed64=-12, f_bool=True, f_string="héllo",
    f_bytes=b"\x00\xff", f_enum=Color.GREEN, f_leaf=Leaf(x=1, s="a"), r_int32=(1, -1, 300), r_sint64=(-5, 5),
    r_string=("x", "yz"), r_bytes=(b"",), r_leaf=(Leaf(x=2), Leaf(s="b")), r_enum=(Color.RED, 5),
    r_double=(0.5,), m_leaf={"k": Leaf(x=3)}, m_enum={-1: Color.GREEN}, m_bytes={True: b"t"},
    choice=pbj.OneOf("c_leaf", Leaf(x=4)), opt=0, grp=Leaf(x=5), child=Every(f_int32=6), r_fixed32=(1, 2),
)
SAMPLE_BYTES = pbj.encode(SAMPLE)


def decode_only_decode_errors(data: bytes) -> None:
    """Decode ``data``; a DecodeError (with a list path and an int offset) is the only allowed failure."""
    try:
        obj = pbj.decode(Every, data)
    except pbj.DecodeError as err:
        assert isinstance(err.path, list)
        assert isinstance(err.offset, int) and 0 <= err.offset <= len(data)
        assert str(err).startswith(err.reason)
        return
    assert isinstance(obj, Every)
    # anything that decodes re-encodes, with both writers alike
    assert pbj.encode(obj) == pbj.encode(obj, reverse=True)


def test_sample_round_trips():
    assert pbj.decode(Every, SAMPLE_BYTES) == SAMPLE


@settings(max_examples=1000)
@given(st.binary(max_size=80))
def test_random_bytes_raise_only_decode_error(data):
    decode_only_decode_errors(data)


@settings(max_examples=300)
@given(st.data())
def test_mutated_encodings_raise_only_decode_error(data):
    raw = bytearray(SAMPLE_BYTES)
    for _ in range(data.draw(st.integers(1, 4))):
        op = data.draw(st.sampled_from(["flip", "cut", "insert", "delete"]))
        i = data.draw(st.integers(0, max(len(raw) - 1, 0)))
        if op == "flip" and raw:
            raw[i] = data.draw(st.integers(0, 255))
        elif op == "cut":
            del raw[i:]
        elif op == "insert":
            raw[i:i] = data.draw(st.binary(min_size=1, max_size=4))
        elif raw:
            del raw[i]
    decode_only_decode_errors(bytes(raw))


def test_every_truncation_and_byte_of_the_sample():
    for n in range(len(SAMPLE_BYTES)):
        decode_only_decode_errors(SAMPLE_BYTES[:n])
    rng = random.Random(1234)
    for _ in range(3000):
        raw = bytearray(SAMPLE_BYTES)
        for _ in range(rng.randint(1, 3)):
            i = rng.randrange(len(raw))
            if rng.random() < 0.8:
                raw[i] = rng.randrange(256)
            else:
                raw[i:i] = rng.randbytes(rng.randint(1, 3))
        decode_only_decode_errors(bytes(raw))


# ---------------------------------------------------------------- mismatched wire types

MIXED_PROTO = """
syntax = "proto3";
package a2decode;
message Mixed { int32 a = 1; int64 b = 2; string c = 3; repeated int32 d = 4; Mixed sub = 5; fixed32 e = 6; }
"""


@pbj.message(full_name="a2decode.Mixed")
class Mixed:
    a: int = pbj.field(1, "int32")
    b: int = pbj.field(2, "int64")
    c: str = pbj.field(3, "string")
    d: tuple[int, ...] = pbj.field(4, "int32", repeated=True)
    sub: Mixed | None = pbj.field(5, "Mixed")
    e: int = pbj.field(6, "fixed32")


@pytest.fixture(scope="module")
def google_mixed(tmp_path_factory):
    d = tmp_path_factory.mktemp("a2decode")
    (d / "a2_decode.proto").write_text(MIXED_PROTO)
    protoc([d / "a2_decode.proto"], [d])
    return google_class("a2decode.Mixed")


MISMATCHED = [
    h("15 01 02 03 04"),                     # b (VARINT) as I32
    h("1d aa bb cc dd"),                     # c (LEN) as I32
    h("2d 00 00 00 00"),                     # sub (LEN) as I32
    h("25 01 00 00 00"),                     # d (VARINT or packed LEN) as I32
    h("09 01 02 03 04 05 06 07 08"),         # a (VARINT) as I64
    h("30 05"),                              # e (I32) as VARINT
    h("1b 08 01 1c"),                        # c as a group
]


@pytest.mark.parametrize("record", MISMATCHED)
def test_mismatched_wire_type_is_an_unknown_field(record, google_mixed):
    data = record + h("08 07 1a 01 78 22 02 01 02")
    expected = google_mixed.FromString(data).SerializeToString(deterministic=True)
    obj = pbj.decode(Mixed, data)
    assert obj == Mixed(a=7, c="x", d=(1, 2))
    assert pbj.unknown_fields(obj) == record
    assert pbj.encode(obj) == expected
    assert pbj.encode(obj, reverse=True) == expected
    assert expected == h("08 07 1a 01 78 22 02 01 02") + record   # known fields first, then unknown


def test_mismatched_wire_types_keep_arrival_order(google_mixed):
    data = b"".join(MISMATCHED) + h("08 07")
    sub = ld(0x2A, h("15 09 09 09 09 10 01"))
    data += sub
    expected = google_mixed.FromString(data).SerializeToString(deterministic=True)
    obj = pbj.decode(Mixed, data)
    assert pbj.unknown_fields(obj) == b"".join(MISMATCHED)
    assert pbj.unknown_fields(obj.sub) == h("15 09 09 09 09")
    assert pbj.encode(obj) == expected
    assert pbj.encode(obj, reverse=True) == expected
