"""The reverse writer's buffer (:class:`pbj.ReverseBuffer`) and the reverse writer at its edges.

The first half tests the buffer's own API as its docstring describes it. The
second half writes messages whose nested lengths sit on the varint size
boundaries (127/128 and 16383/16384 bytes, "Base 128 Varints"), messages that
make the buffer grow mid-write, and unknown fields of every wire type; the
expected bytes come from Google's protobuf, and both writers must produce them.
"""

from __future__ import annotations

import pytest

import pbj
from pbj.testing import unchecked
from tests.oracle import google_class, protoc

# ---------------------------------------------------------------- the buffer API


def test_capacity_and_empty_state():
    buf = pbj.ReverseBuffer(100)
    assert buf.capacity == 100
    assert len(buf) == 0
    assert buf.to_bytes() == b""
    assert bytes(buf.bytes()) == b""
    assert pbj.ReverseBuffer().capacity == 4096
    assert pbj.ReverseBuffer(1).capacity == 1


@pytest.mark.parametrize("capacity, error", [(0, ValueError), (-1, ValueError), (2.5, TypeError),
                                             (True, TypeError), ("8", TypeError), (None, TypeError)])
def test_capacity_that_is_not_a_positive_int_is_refused(capacity, error):
    with pytest.raises(error, match=r"ReverseBuffer: capacity must be a positive int"):
        pbj.ReverseBuffer(capacity)


@pbj.message(full_name="rb.One")
class _One:
    a: int = pbj.field(1, "int32")


@pytest.mark.parametrize("reverse", ["yes", 1, 0, None, "False"])
def test_encode_reverse_must_be_a_bool(reverse):
    msg = _One(a=1)
    with pytest.raises(TypeError, match=r"pbj\.encode: reverse must be a bool .*got " + repr(reverse)):
        pbj.encode(msg, reverse=reverse)
    assert pbj.encode(msg, reverse=True) == pbj.encode(msg, reverse=False) == bytes.fromhex("0801")


def test_primitives_write_backwards():
    buf = pbj.ReverseBuffer(64)
    buf.write_bytes(b"testing")
    buf.write_varint(7)
    buf.write_tag(2, 2)
    # the spec's string example, field 2 = "testing"
    assert buf.to_bytes() == bytes.fromhex("12 07 74 65 73 74 69 6e 67")
    buf.write_varint(150)
    buf.write_tag(1, 0)
    assert buf.to_bytes()[:3] == bytes.fromhex("08 96 01")
    assert len(buf) == 12


@pytest.mark.parametrize(("value", "hexed"), [(0, "00"), (127, "7f"), (128, "80 01"), (300, "ac 02"),
                                              (2**64 - 1, "ff ff ff ff ff ff ff ff ff 01")])
def test_write_varint(value, hexed):
    buf = pbj.ReverseBuffer(1)
    buf.write_varint(value)
    assert buf.to_bytes() == bytes.fromhex(hexed)


@pytest.mark.parametrize("value", [-1, 2**64])
def test_write_varint_out_of_range(value):
    buf = pbj.ReverseBuffer(16)
    with pytest.raises(pbj.EncodeError):
        buf.write_varint(value)
    assert len(buf) == 0


@pytest.mark.parametrize(("number", "wire_type"), [(0, 0), (2**29, 0), (1, 6), (1, 7), (-1, 0)])
def test_write_tag_invalid(number, wire_type):
    buf = pbj.ReverseBuffer(16)
    with pytest.raises(pbj.EncodeError):
        buf.write_tag(number, wire_type)
    assert len(buf) == 0


def test_write_tag_known():
    buf = pbj.ReverseBuffer(16)
    buf.write_tag(2**29 - 1, 5)
    buf.write_tag(16, 0)
    assert buf.to_bytes() == bytes.fromhex("80 01 fd ff ff ff 0f")


def test_mark_and_length_since_write_a_length_prefix():
    buf = pbj.ReverseBuffer(64)
    m = buf.mark()
    assert m == 0
    buf.write_varint(150)
    buf.write_tag(1, 0)
    buf.length_since(m)
    buf.write_tag(3, 2)
    # the spec's sub-message example: field 3 holding {1: 150}
    assert buf.to_bytes() == bytes.fromhex("1a 03 08 96 01")


def test_marks_survive_growth():
    buf = pbj.ReverseBuffer(4)
    buf.write_bytes(b"tail")
    m = buf.mark()
    assert m == 4
    buf.write_bytes(b"x" * 300)           # grows the storage several times
    assert buf.capacity >= 304
    buf.length_since(m)
    assert buf.to_bytes() == bytes.fromhex("ac 02") + b"x" * 300 + b"tail"


def test_length_since_a_future_mark():
    buf = pbj.ReverseBuffer(8)
    with pytest.raises(ValueError):
        buf.length_since(5)


def test_bytes_is_a_zero_copy_view():
    buf = pbj.ReverseBuffer(32)
    buf.write_bytes(b"abc")
    view = buf.bytes()
    assert isinstance(view, memoryview)
    assert view == b"abc"
    assert view.obj is buf.bytes().obj     # the same storage, not a copy


def test_to_bytes_is_a_copy():
    buf = pbj.ReverseBuffer(32)
    buf.write_bytes(b"abc")
    copy = buf.to_bytes()
    buf.reset()
    buf.write_bytes(b"xyz")
    assert type(copy) is bytes and copy == b"abc"


def test_held_view_across_growth_keeps_the_old_content():
    buf = pbj.ReverseBuffer(4)
    buf.write_bytes(b"ab")
    view = buf.bytes()
    buf.write_bytes(b"0123456789")        # grows: new storage
    assert bytes(view) == b"ab"
    assert buf.to_bytes() == b"0123456789ab"


def test_held_view_across_reset_sees_new_writes():
    buf = pbj.ReverseBuffer(16)
    buf.write_bytes(b"ab")
    view = buf.bytes()
    buf.reset()
    buf.write_bytes(b"xy")
    assert bytes(view) == b"xy"


def test_copy_to():
    buf = pbj.ReverseBuffer(8)
    buf.write_bytes(b"hello")
    target = bytearray(b"..........")
    assert buf.copy_to(target) == 5
    assert target == bytearray(b"hello.....")
    assert buf.copy_to(target, 5) == 5
    assert target == bytearray(b"hellohello")
    mv_target = memoryview(bytearray(7))
    assert buf.copy_to(mv_target, 2) == 5
    assert mv_target.tobytes() == b"\x00\x00hello"


@pytest.mark.parametrize(("size", "offset"), [(4, 0), (5, 1), (10, 6), (10, -1)])
def test_copy_to_too_small(size, offset):
    buf = pbj.ReverseBuffer(8)
    buf.write_bytes(b"hello")
    target = bytearray(size)
    with pytest.raises(ValueError):
        buf.copy_to(target, offset)
    assert target == bytearray(size)      # nothing copied


def test_reset_keeps_capacity():
    buf = pbj.ReverseBuffer(2)
    buf.write_bytes(b"x" * 1000)
    cap = buf.capacity
    assert cap >= 1000
    buf.reset()
    assert len(buf) == 0 and buf.capacity == cap
    buf.write_bytes(b"y")
    assert buf.to_bytes() == b"y"


def test_context_manager_gives_an_empty_buffer():
    buf = pbj.ReverseBuffer(16)
    buf.write_bytes(b"left over")
    with buf as b:
        assert b is buf
        assert len(b) == 0
        b.write_bytes(b"new")
        assert b.to_bytes() == b"new"
    with pbj.ReverseBuffer(8) as fresh:
        assert len(fresh) == 0 and fresh.capacity == 8


def test_len_and_repr():
    buf = pbj.ReverseBuffer(16)
    buf.write_bytes(b"abc")
    assert len(buf) == 3
    assert "3 bytes" in repr(buf)


# ---------------------------------------------------------------- the reverse writer

PROTO = """
syntax = "proto3";
package a2rev;
message Inner { bytes data = 1; }
message Mid { Inner inner = 1; bytes pad = 2; }
message Outer { Mid mid = 1; repeated Mid mids = 2; string note = 3; }
message Known { int32 a = 1; }
message Ts { int64 seconds = 1; int32 nanos = 2; }
"""


@pbj.message(full_name="a2rev.Inner")
class Inner:
    data: bytes = pbj.field(1, "bytes")


@pbj.message(full_name="a2rev.Mid")
class Mid:
    inner: Inner | None = pbj.field(1, Inner)
    pad: bytes = pbj.field(2, "bytes")


@pbj.message(full_name="a2rev.Outer")
class Outer:
    mid: Mid | None = pbj.field(1, Mid)
    mids: tuple[Mid, ...] = pbj.field(2, Mid, repeated=True)
    note: str = pbj.field(3, "string")


@pbj.message(full_name="a2rev.Known")
class Known:
    a: int = pbj.field(1, "int32")


@pbj.message(full_name="a2rev.Ts")
class Ts:
    seconds: int = pbj.field(1, "int64")
    nanos: int = pbj.field(2, "int32")


@pytest.fixture(scope="module")
def google(tmp_path_factory):
    d = tmp_path_factory.mktemp("a2rev")
    (d / "a2_rev.proto").write_text(PROTO)
    protoc([d / "a2_rev.proto"], [d])
    return lambda name: google_class(f"a2rev.{name}")


def to_google(obj, google):
    """The Google message equal to a pbj message of this file (built field by field)."""
    name = type(obj).__name__
    g = google(name)()
    if name == "Inner":
        g.data = obj.data
    elif name == "Mid":
        if obj.inner is not None:
            g.inner.CopyFrom(to_google(obj.inner, google))
        g.pad = obj.pad
    elif name == "Outer":
        if obj.mid is not None:
            g.mid.CopyFrom(to_google(obj.mid, google))
        for m in obj.mids:
            g.mids.add().CopyFrom(to_google(m, google))
        g.note = obj.note
    elif name == "Ts":
        g.seconds, g.nanos = obj.seconds, obj.nanos
    else:
        g.a = obj.a
    return g


def expected_bytes(obj, google) -> bytes:
    return to_google(obj, google).SerializeToString(deterministic=True)


def check_all_writers(obj, expected: bytes, capacity: int = 16) -> None:
    """Both writers, and write_reverse into a fresh small buffer, give ``expected``."""
    assert pbj.encode(obj) == expected
    assert pbj.encode(obj, reverse=True) == expected
    buf = pbj.ReverseBuffer(capacity)
    assert pbj.write_reverse(obj, buf) == len(expected)
    assert buf.to_bytes() == expected
    assert pbj.encoded_size(obj) == len(expected)


def inner_of_size(total: int) -> Inner:
    """An Inner whose encoding is exactly ``total`` bytes (tag, length varint, data)."""
    for n in range(total, -1, -1):
        size = 1 + len(pbj.wire.encode_varint(n)) + n
        if size == total:
            return Inner(data=b"\xab" * n)
    raise AssertionError(total)


def mid_of_size(total: int) -> Mid:
    """A Mid whose encoding is exactly ``total`` bytes (its inner message plus padding)."""
    inner = inner_of_size(total // 2)
    rest = total - (1 + len(pbj.wire.encode_varint(total // 2)) + total // 2)
    for n in range(rest, -1, -1):
        if 1 + len(pbj.wire.encode_varint(n)) + n == rest:
            return Mid(inner=inner, pad=b"\xcd" * n)
    raise AssertionError(total)


BOUNDARIES = [127, 128, 16383, 16384]


@pytest.mark.parametrize("size", BOUNDARIES)
def test_length_prefix_at_the_inner_level(size, google):
    inner = inner_of_size(size)
    assert len(expected_bytes(inner, google)) == size
    obj = Outer(mid=Mid(inner=inner))
    check_all_writers(obj, expected_bytes(obj, google))


@pytest.mark.parametrize("size", BOUNDARIES)
def test_length_prefix_at_the_outer_level(size, google):
    mid = mid_of_size(size)
    assert len(expected_bytes(mid, google)) == size
    obj = Outer(mid=mid, note="n")
    check_all_writers(obj, expected_bytes(obj, google))


@pytest.mark.parametrize("outer", [16383, 16384])
@pytest.mark.parametrize("inner", [127, 128])
def test_length_prefixes_at_both_levels(outer, inner, google):
    # mid's inner message is ``inner`` bytes and mid itself ``outer`` bytes
    rest = outer - (1 + len(pbj.wire.encode_varint(inner)) + inner)
    pad_len = next(n for n in range(rest, -1, -1) if 1 + len(pbj.wire.encode_varint(n)) + n == rest)
    mid = Mid(inner=inner_of_size(inner), pad=b"p" * pad_len)
    assert len(expected_bytes(mid, google)) == outer
    assert len(expected_bytes(mid.inner, google)) == inner
    obj = Outer(mid=mid, mids=(mid, Mid()))
    check_all_writers(obj, expected_bytes(obj, google))


def test_growth_in_the_middle_of_nested_messages(google):
    mids = tuple(Mid(inner=Inner(data=bytes([i]) * (i * 37 % 300)), pad=b"x" * i) for i in range(40))
    obj = Outer(mid=mids[5], mids=mids, note="é" * 50)
    expected = expected_bytes(obj, google)
    for capacity in (1, 16, 100, 1000):
        check_all_writers(obj, expected, capacity)


def test_sixteen_byte_initial_buffer(google):
    obj = Outer(mid=Mid(inner=Inner(data=b"0123456789abcdef" * 3)), note="a note longer than sixteen bytes")
    buf = pbj.ReverseBuffer(16)
    assert buf.capacity == 16
    n = pbj.write_reverse(obj, buf)
    assert buf.capacity > 16
    assert buf.to_bytes() == expected_bytes(obj, google)
    assert n == len(buf)


UNKNOWN = bytes.fromhex(
    "18 96 01"                        # field 3 VARINT
    "21 01 02 03 04 05 06 07 08"      # field 4 I64
    "2a 05 68 65 6c 6c 6f"            # field 5 LEN
    "35 01 02 03 04"                  # field 6 I32
    "3b 08 01 12 02 68 69 3c"         # field 7 group (SGROUP ... EGROUP) with two fields inside
    "80 01 ff ff ff ff ff ff ff ff ff 01"   # field 16 VARINT, a 10-byte value
)


def test_unknown_fields_of_every_wire_type_into_a_small_buffer(google):
    data = UNKNOWN[:3] + bytes.fromhex("08 07") + UNKNOWN[3:]
    expected = google("Known").FromString(data).SerializeToString(deterministic=True)
    assert expected == bytes.fromhex("08 07") + UNKNOWN
    obj = pbj.decode(Known, data)
    assert obj == Known(a=7)
    assert pbj.unknown_fields(obj) == UNKNOWN
    check_all_writers(obj, expected, 16)


def test_unknown_fields_nested_into_a_small_buffer(google):
    inner = bytes.fromhex("0a 02 68 69") + UNKNOWN
    data = bytes.fromhex("0a") + bytes([len(inner) + 2]) + bytes.fromhex("0a") + bytes([len(inner)]) + inner
    expected = google("Outer").FromString(data).SerializeToString(deterministic=True)
    obj = pbj.decode(Outer, data)
    assert pbj.unknown_fields(obj.mid.inner) == UNKNOWN
    check_all_writers(obj, expected, 16)


def test_several_messages_in_turn_come_out_in_reverse_order(google):
    msgs = [Ts(seconds=1, nanos=2), Outer(note="second"), Ts(seconds=-5), Known(a=300)]
    buf = pbj.ReverseBuffer(16)
    counts = [pbj.write_reverse(m, buf) for m in msgs]
    expected = [expected_bytes(m, google) for m in msgs]
    assert counts == [len(e) for e in expected]
    assert buf.to_bytes() == b"".join(reversed(expected))
    assert len(buf) == sum(counts)


def test_write_reverse_returns_zero_for_an_empty_message():
    buf = pbj.ReverseBuffer(16)
    assert pbj.write_reverse(Ts(), buf) == 0
    assert len(buf) == 0


def test_encode_error_adds_nothing(google):
    buf = pbj.ReverseBuffer(16)
    pbj.write_reverse(Ts(seconds=150), buf)
    before = buf.to_bytes()
    assert before == expected_bytes(Ts(seconds=150), google)
    with pytest.raises(pbj.EncodeError) as info:
        pbj.write_reverse(unchecked(Ts, seconds=2**63), buf)
    assert info.value.path == ["seconds"]
    assert buf.to_bytes() == before and len(buf) == len(before)


def test_encode_error_after_growth_adds_nothing(google):
    # the big pad is written first (fields go in descending number), grows the buffer, then inner fails
    buf = pbj.ReverseBuffer(16)
    pbj.write_reverse(Ts(seconds=150), buf)
    before = buf.to_bytes()
    bad = Outer(mid=Mid(inner=unchecked(Inner, data="not bytes"), pad=b"z" * 500), note="x" * 200)
    with pytest.raises(pbj.EncodeError) as info:
        pbj.write_reverse(bad, buf)
    assert info.value.path == ["mid", "inner", "data"]
    assert buf.to_bytes() == before and len(buf) == len(before)
    # the buffer still works afterwards
    good = Known(a=1)
    pbj.write_reverse(good, buf)
    assert buf.to_bytes() == expected_bytes(good, google) + before


def test_encode_reverse_after_an_error_is_clean(google):
    with pytest.raises(pbj.EncodeError):
        pbj.encode(unchecked(Outer, mid=Mid(pad=b"q" * 100_000), note=b"not a str"), reverse=True)
    obj = Ts(seconds=1)
    assert pbj.encode(obj, reverse=True) == expected_bytes(obj, google)
