"""Differential tests: pbj's two writers and its parser against Google's protobuf.

For a pbj value ``x``, the expected bytes are made independently of pbj's
writers: ``x`` is copied field by field into Google's message of the same
schema (:func:`to_google`), its unknown fields merged in as raw bytes (Google
keeps bytes of field numbers its class does not know as unknown fields), and
serialized with ``SerializeToString(deterministic=True)``. Both pbj writers
must give exactly those bytes, and decoding them must give ``x`` back
(:func:`pbj.testing.equivalent`, floats compared by bit pattern).

Map order: the deterministic order of map entries is ascending by key (what
Google's C++, Java and pure-Python runtimes write). The upb backend of the
installed ``protobuf`` does not (its map sorter writes other orders, e.g.
integer keys descending as unsigned, and a string before its own prefix; see
protocolbuffers/protobuf PR #26621), so its map order cannot be the oracle.
The tests therefore use *twin* classes: the same schemas loaded into a
separate descriptor pool with every map entry type turned into an ordinary
message whose ``key`` and ``value`` have explicit presence. A map field is then
a repeated field of entries, the same bytes on the wire; the test fills it in
ascending key order with both key and value set, and Google writes it.
"""

from __future__ import annotations

import math
import struct

import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from hypothesis import HealthCheck, given, settings

import pbj
import pbj.testing
from pbj import wellknown as wk
from pbj.schema import info
from tests import everything_classes as ec
from tests.oracle import google_class

_SETS = ec.compile_oracle()


def _twin_pool() -> descriptor_pool.DescriptorPool:
    """A pool holding the compiled files with map entries turned into plain messages (see above)."""
    pool = descriptor_pool.DescriptorPool()
    added: set[str] = set()
    for data in _SETS:
        for fd in descriptor_pb2.FileDescriptorSet.FromString(data).file:
            if fd.name in added:
                continue
            added.add(fd.name)
            stack = list(fd.message_type)
            while stack:
                msg = stack.pop()
                stack.extend(msg.nested_type)
                if not msg.options.map_entry:
                    continue
                msg.options.map_entry = False
                for entry_field in msg.field:
                    msg.oneof_decl.add(name=f"_{entry_field.name}")
                    entry_field.oneof_index = len(msg.oneof_decl) - 1
                    entry_field.proto3_optional = True
            pool.Add(fd)
    return pool


_TWINS = _twin_pool()


def twin_class(full_name: str):
    """Google's class of ``full_name`` from the twin pool (maps as repeated entries)."""
    return message_factory.GetMessageClass(_TWINS.FindMessageTypeByName(full_name))

_SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

#: One buffer reused across every example (small at first, so it grows).
BUF = pbj.ReverseBuffer(16)


# ---------------------------------------------------------------- the oracle side

def _is_message_type(t) -> bool:
    return isinstance(t, type) and pbj.is_message(t)


def _fill(g, obj) -> None:
    """Copy pbj message ``obj`` into the (empty) Google message ``g``."""
    mi = info(type(obj))
    for f in mi.fields:
        value = getattr(obj, f.name)
        name = f.proto_name
        if f.is_map:
            entries = getattr(g, name)
            for k, v in sorted(value.items(), key=lambda kv: kv[0]):
                entry = entries.add()
                entry.key = k
                if _is_message_type(f.map_value):
                    entry.value.SetInParent()
                    _fill(entry.value, v)
                else:
                    entry.value = v
        elif f.repeated:
            if f.kind == "message":
                for v in value:
                    _fill(getattr(g, name).add(), v)
            else:
                getattr(g, name).extend(value)
        elif f.kind == "message":
            if value is not None:
                sub = getattr(g, name)
                sub.SetInParent()
                _fill(sub, value)
        elif value is not None:
            setattr(g, name, value)
    for o in mi.oneofs:
        value = getattr(obj, o.name)
        if value is None:
            continue
        member = next(m for m in o.members if m.name == value.which)
        if member.kind == "message":
            sub = getattr(g, member.proto_name)
            sub.SetInParent()
            _fill(sub, value.value)
        else:
            setattr(g, member.proto_name, value.value)
    unknown = pbj.unknown_fields(obj)
    if unknown:
        g.MergeFromString(unknown)


def to_google(obj):
    """Google's message holding the same values (and unknown fields) as pbj message ``obj``."""
    g = twin_class(info(type(obj)).full_name)()
    _fill(g, obj)
    return g


def expected_bytes(obj) -> bytes:
    """Google's deterministic encoding of ``obj``'s values."""
    return to_google(obj).SerializeToString(deterministic=True)


def check(obj) -> None:
    """Both writers and the reused buffer give Google's bytes; decoding gives ``obj`` back."""
    cls = type(obj)
    expected = expected_bytes(obj)
    assert pbj.encode(obj) == expected
    assert pbj.encode(obj, reverse=True) == expected
    assert pbj.encoded_size(obj) == len(expected)
    with BUF:
        assert pbj.write_reverse(obj, BUF) == len(expected)
        assert BUF.to_bytes() == expected
    back = pbj.decode(cls, expected)
    assert pbj.testing.equivalent(back, obj), (back, obj)


# ---------------------------------------------------------------- the schemas agree

_GOOGLE_SCALAR = {
    1: "double", 2: "float", 3: "int64", 4: "uint64", 5: "int32", 6: "fixed64", 7: "fixed32", 8: "bool",
    9: "string", 12: "bytes", 13: "uint32", 15: "sfixed32", 16: "sfixed64", 17: "sint32", 18: "sint64",
}
_ALL = [ec.Everything, ec.InnerEverything, ec.TimestampTest, ec.Leaf, ec.Presence, ec.Unpacked, ec.Maps,
        ec.Node, ec.Choice]


def _type_name(t) -> str:
    if isinstance(t, str):
        return t
    if _is_message_type(t):
        return info(t).full_name
    return t.__name__


def _google_type_name(fd) -> str:
    if fd.message_type is not None:
        return fd.message_type.full_name
    if fd.enum_type is not None:
        return fd.enum_type.name
    return _GOOGLE_SCALAR[fd.type]


@pytest.mark.parametrize("cls", _ALL, ids=lambda c: c.__name__)
def test_declarations_match_protoc(cls):
    """Each hand declaration has protoc's field numbers, names, types, labels and oneofs."""
    desc = google_class(info(cls).full_name).DESCRIPTOR
    proto = descriptor_pb2.DescriptorProto()
    desc.CopyToProto(proto)
    synthetic = {fp.number: fp.proto3_optional for fp in proto.field}
    pbj_fields = {f.number: f for f in pbj.fields(cls)}
    assert sorted(pbj_fields) == sorted(fd.number for fd in desc.fields)
    for fd in desc.fields:
        f = pbj_fields[fd.number]
        assert f.proto_name == fd.name
        assert f.json_name == fd.json_name
        if fd.message_type is not None and fd.message_type.GetOptions().map_entry:
            key, value = fd.message_type.fields_by_name["key"], fd.message_type.fields_by_name["value"]
            assert (f.map_key, _type_name(f.map_value)) == (_google_type_name(key), _google_type_name(value))
            continue
        assert _type_name(f.type) == _google_type_name(fd)
        assert f.repeated == fd.is_repeated
        if fd.is_repeated:
            assert f.packed == fd.is_packed
        else:
            assert f.optional == fd.has_presence
        real_oneof = fd.containing_oneof is not None and not synthetic[fd.number]
        assert (f.oneof is not None) == real_oneof


def test_wellknown_match_protoc():
    """pbj.wellknown has the field numbers, names and types of google/protobuf/*.proto."""
    for full_name, cls in wk.WELL_KNOWN.items():
        if not pbj.is_message(cls):
            continue
        desc = google_class(full_name).DESCRIPTOR
        got = {(f.number, f.proto_name, _type_name(f.map_value) if f.is_map else _type_name(f.type), f.repeated)
               for f in pbj.fields(cls)}
        want = set()
        for fd in desc.fields:
            if fd.message_type is not None and fd.message_type.GetOptions().map_entry:
                want.add((fd.number, fd.name, _google_type_name(fd.message_type.fields_by_name["value"]), True))
            else:
                want.add((fd.number, fd.name, _google_type_name(fd), fd.is_repeated))
        assert got == want, full_name


# ---------------------------------------------------------------- properties
# max_depth=2 reaches every class of everything.proto (Everything > InnerEverything > TimestampTest or a
# wrapper). Generating an Everything costs hypothesis ~50 ms of CPU here: the default selection runs 300
# examples (~15 s), the slow one 20,000.

@settings(max_examples=300, **_SETTINGS)
@given(pbj.testing.values(ec.Everything, max_depth=2))
def test_everything_matches_google(x):
    check(x)


@pytest.mark.slow
@settings(max_examples=20000, **_SETTINGS)
@given(pbj.testing.values(ec.Everything, max_depth=2))
def test_everything_matches_google_long(x):
    check(x)


@pytest.mark.parametrize("cls", [ec.Presence, ec.Unpacked, ec.Maps, ec.Node, ec.Choice, wk.Struct, wk.Value,
                                 wk.Any, wk.FieldMask, wk.Duration, wk.Empty], ids=lambda c: c.__name__)
def test_feature_messages_match_google(cls):
    @settings(max_examples=100, **_SETTINGS)
    @given(pbj.testing.values(cls))
    def run(x):
        check(x)
    run()


@pytest.mark.slow
@pytest.mark.parametrize("cls", [ec.Presence, ec.Unpacked, ec.Maps, ec.Node, ec.Choice, wk.Struct],
                         ids=lambda c: c.__name__)
def test_feature_messages_match_google_long(cls):
    @settings(max_examples=5000, **_SETTINGS)
    @given(pbj.testing.values(cls))
    def run(x):
        check(x)
    run()


# ---------------------------------------------------------------- explicit edge values

def _bits(x: float) -> bytes:
    return struct.pack("<d", x)


@pytest.mark.parametrize("value", [-0.0, math.nan, -math.nan, math.inf, -math.inf, 5e-324, 1.7976931348623157e308],
                         ids=["-0.0", "nan", "-nan", "inf", "-inf", "subnormal", "max"])
def test_double_and_float_edges(value):
    f32 = struct.unpack("<f", struct.pack("<f", value))[0] if math.isinf(value) or math.isnan(value) or value == 0 \
        else 1.401298464324817e-45
    obj = ec.Everything(doubleNumber=value, floatNumber=f32, doubleNumberList=(value, 0.0),
                        floatNumberList=(f32,), oneofExample=pbj.OneOf("doubleNumberOneOf", value),
                        mapBoolToDouble={True: value}, doubleBoxed=wk.DoubleValue(value=value))
    check(obj)
    back = pbj.decode(ec.Everything, pbj.encode(obj))
    assert _bits(back.doubleNumber) == _bits(value)


def test_negative_zero_is_written():
    """An implicit-presence double of -0.0 is not the default: it is written (sign bit set)."""
    obj = ec.Everything(doubleNumber=-0.0, floatNumber=-0.0)
    expected = expected_bytes(obj)
    assert expected == bytes.fromhex("3500000080") + bytes.fromhex("610000000000000080")
    assert pbj.encode(obj) == expected
    assert pbj.encode(obj, reverse=True) == expected


@pytest.mark.parametrize("value", [1 << 63, (1 << 64) - 1, (1 << 63) - 1, 0])
def test_uint64_fixed64_high_values(value):
    check(ec.Everything(uint64Number=value, fixed64Number=value, uint64NumberList=(value,),
                        fixed64NumberList=(value, 1), mapUInt64ToBytes={value: b"v"},
                        uint64Boxed=wk.UInt64Value(value=value)))


def test_int32_min_and_sint64_limits():
    lo32, lo64, hi64 = -(1 << 31), -(1 << 63), (1 << 63) - 1
    obj = ec.Everything(int32Number=lo32, sint64Number=lo64, sint32Number=lo32, int32NumberList=(lo32, -1),
                        sint64NumberList=(lo64, hi64, -1, 0), mapInt32ToString={lo32: "min"},
                        oneofExample=pbj.OneOf("sint64NumberOneOf", hi64))
    expected = expected_bytes(obj)
    assert expected.startswith(bytes.fromhex("0880808080f8ffffffff01"))  # int32 min: 10-byte varint
    check(obj)
    check(ec.Everything(sint64Number=hi64, int64Number=lo64))


@pytest.mark.parametrize("n", [0, 1, 127, 128, 16383, 16384])
def test_length_prefix_edges(n):
    """Strings, bytes and sub-messages whose encoding is exactly ``n`` bytes long."""
    text = "x" * n
    check(ec.Everything(text=text, bytesField=b"\xff" * n, textList=(text, ""), bytesExampleList=(b"b" * n,),
                        stringBoxed=wk.StringValue(value=text), oneofExample=pbj.OneOf("textOneOf", text)))
    if n >= 2:
        # A sub-message of exactly n bytes: Leaf(s=...) is tag (1) + length + text.
        body = n - 1 - (1 if n - 3 < 128 else 2 if n - 4 < 16384 else 3)
        leaf = ec.Leaf(s="y" * body)
        assert pbj.encoded_size(leaf) == n
        check(ec.Maps(string_to_message={"k": leaf}))
        check(ec.Node(children=(ec.Node(name="y" * body),), parent=ec.Node(name="z" * body)))


def test_empty_packed_lists_write_nothing():
    obj = ec.Everything(int32NumberList=(), doubleNumberList=(), enumSuitList=(), booleanList=())
    expected = expected_bytes(obj)
    assert expected == b""
    assert pbj.encode(obj) == expected
    assert pbj.encode(obj, reverse=True) == expected
    check(ec.Unpacked(i32=(), sign=(), packed_sign=()))


@pytest.mark.parametrize("number", [4, 127, 128, -1, -(1 << 31), (1 << 31) - 1])
def test_unknown_enum_numbers(number):
    check(ec.Everything(enumSuit=number, enumSuitList=(number, ec.Suit.CLUBS, number),
                        oneofExample=pbj.OneOf("enumSuitOneOf", number)))
    check(ec.Choice(sign=number, signs=(number,), pick=pbj.OneOf("sign_pick", number)))
    check(ec.Unpacked(sign=(number, -1), packed_sign=(number,)))
    check(ec.Maps(uint32_key={1: number}, string_to_enum={"": number}))


def test_negative_enum_values():
    obj = ec.Choice(sign=ec.Sign.SIGN_NEG, signs=(ec.Sign.SIGN_MIN, ec.Sign.SIGN_NEG, ec.Sign.SIGN_MAX))
    expected = expected_bytes(obj)
    assert expected[:11] == bytes.fromhex("30ffffffffffffffffff01")  # -1 as a 10-byte varint
    check(obj)


def test_explicit_presence_set_zero():
    obj = ec.Presence(i32=0, i64=0, u32=0, u64=0, s32=0, s64=0, f32=0, f64=0, sf32=0, sf64=0, fl=0.0, db=0.0,
                      b=False, s="", by=b"", sign=ec.Sign.SIGN_ZERO, plain=0)
    expected = expected_bytes(obj)
    assert len(expected) > 16  # every set zero is written
    check(obj)
    check(ec.Presence())
    assert expected_bytes(ec.Presence()) == b""


def test_oneof_same_type_members_stay_distinct():
    for which in ("first", "second"):
        check(ec.Choice(pick=pbj.OneOf(which, "")))
    for which in ("leaf_a", "leaf_b"):
        check(ec.Choice(pick=pbj.OneOf(which, ec.Leaf())))
        back = pbj.decode(ec.Choice, pbj.encode(ec.Choice(pick=pbj.OneOf(which, ec.Leaf(n=1)))))
        assert back.pick.which == which


def test_map_entries_ascending_by_key():
    """Map entries are written in ascending key order ("Maps" in the Encoding spec: a map is a
    repeated entry message; deterministic order sorts by key): signed keys by value, unsigned keys
    by value, strings by UTF-8 bytes (a prefix first). Expected bytes built from the spec by hand:
    entry = tag 0x0a | 0x62, length, key (field 1), value (field 2)."""
    ints = ec.Maps(int32_key={1: "", -1: "", 0: ""})
    minus_one = bytes.fromhex("08ffffffffffffffffff01")
    expected = (b"\x0a\x0d" + minus_one + b"\x12\x00" + bytes.fromhex("0a0408001200") + bytes.fromhex("0a0408011200"))
    strings = ec.Maps(string_to_bytes={"b": b"", "ab": b"", "": b"", "a": b""})

    def entry(key: bytes) -> bytes:
        body = b"\x0a" + bytes([len(key)]) + key + b"\x12\x00"
        return b"\x72" + bytes([len(body)]) + body

    expected_strings = entry(b"") + entry(b"a") + entry(b"ab") + entry(b"b")
    unsigned = ec.Maps(fixed32_key={(1 << 32) - 1: False, 0: False, 1 << 31: False})
    expected_unsigned = b"".join(b"\x3a\x07\x0d" + k.to_bytes(4, "little") + b"\x10\x00"
                                 for k in (0, 1 << 31, (1 << 32) - 1))
    for obj, want in ((ints, expected), (strings, expected_strings), (unsigned, expected_unsigned)):
        assert expected_bytes(obj) == want  # the twin oracle agrees with the spec order
        assert pbj.encode(obj) == want
        assert pbj.encode(obj, reverse=True) == want


def test_equivalent_compares_floats_by_bits():
    nan = ec.Everything(doubleNumber=math.nan, floatNumberList=(math.nan,))
    assert pbj.testing.equivalent(nan, ec.Everything(doubleNumber=math.nan, floatNumberList=(math.nan,)))
    assert not pbj.testing.equivalent(ec.Everything(doubleNumber=-0.0), ec.Everything(doubleNumber=0.0))
    assert not pbj.testing.equivalent(ec.Leaf(_pbj_unknown=b"\x18\x01"), ec.Leaf())
    assert pbj.testing.equivalent(ec.Leaf(_pbj_unknown=b"\x18\x01"), ec.Leaf(), unknown_fields=False)
