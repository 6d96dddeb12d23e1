"""pbj.wkt against Google's ``well_known_types`` helpers, on random values (hypothesis).

Each helper builds the same bytes as Google's (``FromDatetime``, ``FromTimedelta``,
``Pack``, ``Struct.update`` …) and reads back what Google's readers give
(``ToDatetime``, ``ToTimedelta``, ``Unpack``, ``ToJsonString`` …), on the
classes of :mod:`pbj.wellknown`, on the same types loaded from a descriptor
set, and on a class declared with the well-known full name but other
attribute names.
"""

from __future__ import annotations

import datetime
import math

import pytest
from google.protobuf import any_pb2, duration_pb2, field_mask_pb2, json_format, struct_pb2, timestamp_pb2, wrappers_pb2
from hypothesis import given
from hypothesis import strategies as st

import pbj
from pbj import wellknown as wk
from pbj import wkt
from tests.oracle import GOOGLE_PROTOS

UTC = datetime.UTC
TS_MIN, TS_MAX = -62_135_596_800, 253_402_300_799
DUR_MAX = 315_576_000_000


def _loaded():
    return pbj.load_proto([GOOGLE_PROTOS / "google" / "protobuf" / n for n in
                           ("timestamp.proto", "duration.proto", "any.proto", "struct.proto",
                            "field_mask.proto", "wrappers.proto")], include=[GOOGLE_PROTOS])


@pbj.message(full_name="google.protobuf.Timestamp")
class OtherTimestamp:
    """A Timestamp declared by a user, with attribute names of its own."""

    secs: int = pbj.field(1, "int64", name="seconds")
    frac: int = pbj.field(2, "int32", name="nanos")


def test_loaded_types_are_the_wellknown_classes():
    ns = _loaded()
    for name in ("Timestamp", "Duration", "Any", "Struct", "Value", "ListValue", "FieldMask", "Int32Value"):
        assert ns[f"google.protobuf.{name}"] is getattr(wk, name)
    ts = wkt.timestamp_from_text("2024-02-29T12:00:00.5Z", cls=ns["google.protobuf.Timestamp"])
    assert wkt.timestamp_to_datetime(ts) == datetime.datetime(2024, 2, 29, 12, 0, 0, 500_000, tzinfo=UTC)


# ------------------------------------------------------------------ Timestamp

# UTC offsets in whole minutes, as RFC 3339 writes them (Google's FromDatetime ignores seconds of an offset)
offsets = st.integers(-23 * 60 - 59, 23 * 60 + 59).map(lambda m: datetime.timezone(datetime.timedelta(minutes=m)))
datetimes = st.datetimes(min_value=datetime.datetime(2, 1, 1), max_value=datetime.datetime(9998, 12, 31),
                         timezones=st.none() | st.just(UTC) | offsets)
timestamps = st.tuples(st.integers(TS_MIN, TS_MAX), st.integers(0, 999_999_999))


@given(datetimes)
def test_timestamp_from_datetime(dt):
    g = timestamp_pb2.Timestamp()
    g.FromDatetime(dt)
    ours = wkt.timestamp_from_datetime(dt)
    assert pbj.encode(ours) == g.SerializeToString()
    assert pbj.encode(ours, reverse=True) == g.SerializeToString()
    back = wkt.timestamp_to_datetime(ours)
    assert back.tzinfo is UTC and back == (dt if dt.tzinfo else dt.replace(tzinfo=UTC))


@given(timestamps)
def test_timestamp_to_datetime_nanos_and_text(parts):
    seconds, nanos = parts
    g = timestamp_pb2.Timestamp(seconds=seconds, nanos=nanos)
    ts = pbj.decode(wk.Timestamp, g.SerializeToString())
    assert wkt.timestamp_to_datetime(ts) == g.ToDatetime(tzinfo=UTC)  # microseconds: the rest dropped
    assert wkt.timestamp_to_nanos(ts) == g.ToNanoseconds()
    assert pbj.encode(wkt.timestamp_from_nanos(g.ToNanoseconds())) == g.SerializeToString()
    text = wkt.timestamp_to_text(ts)
    assert text == g.ToJsonString()
    assert wkt.timestamp_from_text(text) == ts                    # lossless
    other = wkt.timestamp_from_text(text, cls=OtherTimestamp)
    assert (other.secs, other.frac) == (seconds, nanos) and wkt.timestamp_to_text(other) == text


@given(timestamps, st.integers(-23 * 60 - 59, 23 * 60 + 59))
def test_timestamp_text_with_an_offset(parts, minutes):
    seconds, nanos = parts
    sign, m = ("+" if minutes >= 0 else "-"), abs(minutes)
    base = timestamp_pb2.Timestamp(seconds=seconds, nanos=nanos).ToJsonString()
    text = f"{base[:-1]}{sign}{m // 60:02d}:{m % 60:02d}"
    g = timestamp_pb2.Timestamp()
    try:
        g.FromJsonString(text)
    except ValueError:
        with pytest.raises(ValueError):
            wkt.timestamp_from_text(text)
        return
    assert pbj.encode(wkt.timestamp_from_text(text)) == g.SerializeToString()


def test_timestamp_errors():
    with pytest.raises(ValueError, match=r"outside 0001-01-01\.\.9999-12-31"):
        wkt.timestamp_to_datetime(wk.Timestamp(seconds=TS_MAX + 1))
    with pytest.raises(ValueError, match="nanos -1 is outside"):
        wkt.timestamp_to_datetime(wk.Timestamp(nanos=-1))
    with pytest.raises(ValueError, match="invalid Timestamp"):
        wkt.timestamp_from_text("yesterday")
    with pytest.raises(TypeError, match=r"expected a google\.protobuf\.Timestamp message, got Duration"):
        wkt.timestamp_to_nanos(wk.Duration())
    with pytest.raises(TypeError, match=r"cls must be a google\.protobuf\.Timestamp message class"):
        wkt.timestamp_from_nanos(0, cls=wk.Duration)


@pytest.mark.parametrize("dt", [
    datetime.datetime(1, 1, 1, tzinfo=datetime.timezone(datetime.timedelta(hours=1))),
    datetime.datetime(9999, 12, 31, 23, tzinfo=datetime.timezone(datetime.timedelta(hours=-2))),
])
def test_timestamp_from_datetime_refuses_instants_its_offset_moves_out_of_range(dt):
    # in UTC these are 0000-12-31T23:00 and 10000-01-01T01:00: no Timestamp holds them
    with pytest.raises(ValueError, match=r"outside 0001-01-01\.\.9999-12-31"):
        wkt.timestamp_from_datetime(dt)
    edge = dt.replace(tzinfo=UTC)
    assert wkt.timestamp_to_datetime(wkt.timestamp_from_datetime(edge)) == edge


@pytest.mark.parametrize("make", [wkt.timestamp_from_nanos, wkt.duration_from_nanos])
@pytest.mark.parametrize("bad", [1.7, -1.5, True, "5"])
def test_nanos_must_be_an_int(make, bad):
    with pytest.raises(TypeError, match=f"nanos must be an int .*got {type(bad).__name__}"):
        make(bad)
    assert make(7).nanos == 7


def test_timestamp_now_is_close_to_the_clock():
    before = datetime.datetime.now(UTC)
    now = wkt.timestamp_to_datetime(wkt.timestamp_now())
    assert before - datetime.timedelta(seconds=5) <= now <= datetime.datetime.now(UTC) + datetime.timedelta(seconds=5)


# ------------------------------------------------------------------ Duration

timedeltas = st.timedeltas(min_value=datetime.timedelta(seconds=-DUR_MAX),
                           max_value=datetime.timedelta(seconds=DUR_MAX))
duration_nanos = st.integers(-DUR_MAX * 10**9 - 999_999_999, DUR_MAX * 10**9 + 999_999_999)


@given(timedeltas)
def test_duration_from_timedelta(td):
    g = duration_pb2.Duration()
    g.FromTimedelta(td)
    ours = wkt.duration_from_timedelta(td)
    assert pbj.encode(ours) == g.SerializeToString()
    assert wkt.duration_to_timedelta(ours) == td


@given(duration_nanos)
def test_duration_nanos_timedelta_and_text(n):
    g = duration_pb2.Duration()
    g.FromNanoseconds(n)
    d = wkt.duration_from_nanos(n)
    assert pbj.encode(d) == g.SerializeToString()
    assert wkt.duration_to_nanos(d) == g.ToNanoseconds() == n
    try:
        expected_td = g.ToTimedelta()
    except OverflowError:  # beyond timedelta's 999,999,999 days: cannot happen within the Duration range
        pytest.fail("Duration range exceeds timedelta")
    assert wkt.duration_to_timedelta(d) == expected_td
    text = wkt.duration_to_text(d)
    assert text == g.ToJsonString()
    assert wkt.duration_from_text(text) == d


def test_duration_errors():
    with pytest.raises(ValueError, match="outside"):
        wkt.duration_from_nanos((DUR_MAX + 1) * 10**9)
    with pytest.raises(ValueError, match="invalid Duration"):
        wkt.duration_from_text("5 minutes")
    with pytest.raises(TypeError, match="expected a timedelta, got int"):
        wkt.duration_from_timedelta(5)


# ------------------------------------------------------------------ Any

@given(timestamps, duration_nanos, st.sampled_from(["type.googleapis.com/", "example.com/types", "x/"]))
def test_pack_unpack_is_type_name(parts, n, prefix):
    ts_g = timestamp_pb2.Timestamp(seconds=parts[0], nanos=parts[1])
    dur_g = duration_pb2.Duration()
    dur_g.FromNanoseconds(n)
    for g, cls in ((ts_g, wk.Timestamp), (dur_g, wk.Duration)):
        msg = pbj.decode(cls, g.SerializeToString())
        ga = any_pb2.Any()
        ga.Pack(g, type_url_prefix=prefix)
        packed = wkt.pack(msg, type_url_prefix=prefix)
        assert pbj.encode(packed) == ga.SerializeToString()
        assert wkt.type_name(packed) == ga.TypeName()
        assert wkt.is_type(packed, cls) and ga.Is(g.DESCRIPTOR)
        assert not wkt.is_type(packed, wk.Empty)
        assert wkt.unpack(packed) == msg == wkt.unpack(packed, cls)


def test_unpack_resolves_loaded_schemas():
    ns = pbj.load_descriptor_set(pbj.__path__[0] + "/data/hapi-v0.55.0.binpb")
    AccountID = ns["proto.AccountID"]
    account = AccountID(realmNum=1, account=pbj.OneOf("accountNum", 98))
    a = wkt.pack(account)
    assert a.type_url == "type.googleapis.com/proto.AccountID"
    assert wkt.unpack(a) == account


def test_unpack_takes_the_last_load_of_a_name():
    first = pbj.load_descriptor_set(pbj.__path__[0] + "/data/hapi-v0.55.0.binpb")
    pbj.to_json(first["proto.AccountID"]())  # the JSON converter meets the first load's class
    last = pbj.load_descriptor_set(pbj.__path__[0] + "/data/hapi-v0.55.0.binpb")
    a = wkt.pack(first["proto.AccountID"](realmNum=2))
    assert type(wkt.unpack(a)) is last["proto.AccountID"]  # as pickles resolve
    assert wkt.unpack(a, first["proto.AccountID"]) == first["proto.AccountID"](realmNum=2)


@pbj.message(full_name="wkt.test.Registered")
class Registered:
    n: int = pbj.field(1, "int32")


def test_unpack_finds_registered_classes():
    a = wk.Any(type_url="type.googleapis.com/wkt.test.Registered", value=b"\x08\x05")
    with pytest.raises(wkt.UnknownTypeError):
        wkt.unpack(a)
    pbj.protojson.register_types(Registered)
    assert wkt.unpack(a) == Registered(n=5)


def test_unpack_errors():
    unknown = wk.Any(type_url="type.googleapis.com/no.such.Type", value=b"\x08\x01")
    with pytest.raises(wkt.UnknownTypeError, match="no message class is known for the Any type URL") as err:
        wkt.unpack(unknown)
    assert isinstance(err.value, LookupError) and err.value.type_url == unknown.type_url
    with pytest.raises(TypeError, match=r"Any holds 'google\.protobuf\.Timestamp', not 'google\.protobuf\.Duration'"):
        wkt.unpack(wkt.pack(wk.Timestamp(seconds=1)), wk.Duration)
    with pytest.raises(pbj.DecodeError):
        wkt.unpack(wk.Any(type_url="type.googleapis.com/google.protobuf.Timestamp", value=b"\x08"))
    with pytest.raises(TypeError, match="pack needs a pbj message, got dict"):
        wkt.pack({"seconds": 1})


# ------------------------------------------------------------------ Struct, Value, ListValue

json_values = st.recursive(
    st.none() | st.booleans() | st.floats(allow_nan=False, allow_infinity=False) | st.integers(-2**53, 2**53)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12)
json_objects = st.dictionaries(st.text(max_size=6), json_values, max_size=5)


def _floats(x):
    """The value as Struct holds it: every number a float."""
    if isinstance(x, bool) or x is None or isinstance(x, str):
        return x
    if isinstance(x, (int, float)):
        return float(x)
    if isinstance(x, dict):
        return {k: _floats(v) for k, v in x.items()}
    return [_floats(v) for v in x]


@given(json_objects)
def test_struct_from_dict_is_struct_update(d):
    g = struct_pb2.Struct()
    g.update(d)
    ours = wkt.struct_from_dict(d)
    assert pbj.decode(wk.Struct, g.SerializeToString()) == ours
    assert wkt.struct_to_dict(ours) == _floats(d) == json_format.MessageToDict(g)
    assert pbj.decode(wk.Struct, pbj.encode(ours, reverse=True)) == ours


@given(st.lists(json_values, max_size=5))
def test_list_value_from_list_is_list_value_extend(items):
    g = struct_pb2.ListValue()
    g.extend(items)
    ours = wkt.list_value_from_list(items)
    assert pbj.decode(wk.ListValue, g.SerializeToString()) == ours
    assert wkt.list_value_to_list(ours) == _floats(items)


@given(json_values)
def test_value_round_trip(x):
    v = wkt.value_from_python(x)
    assert wkt.value_to_python(v) == _floats(x)
    assert json_format.MessageToDict(struct_pb2.Value.FromString(pbj.encode(v))) == _floats(x)


def test_struct_errors_name_the_path():
    with pytest.raises(TypeError, match=r"set has no google.protobuf.Value form - at `\$.a\[1\].b`"):
        wkt.struct_from_dict({"a": [1, {"b": {3}}]})
    with pytest.raises(TypeError, match="a Struct key must be a str, got int 1"):
        wkt.struct_from_dict({1: 2})
    with pytest.raises(ValueError, match=r"1101-bit int is too large for a double .* at `\$.a\[0\]`"):
        wkt.struct_from_dict({"a": [2**1100]})
    cyclic: dict = {"x": [1]}
    cyclic["x"].append(cyclic)
    with pytest.raises(ValueError, match=r"a dict that contains itself .* at `\$.x\[1\]`"):
        wkt.struct_from_dict(cyclic)
    looped: list = [0]
    looped.append(looped)
    with pytest.raises(ValueError, match=r"a list that contains itself .* at `\$\[1\]`"):
        wkt.list_value_from_list(looped)
    deep = inner = {}
    for _ in range(300):
        inner["a"] = {}
        inner = inner["a"]
    with pytest.raises(ValueError, match=f"nested deeper than {wkt.structs.MAX_NESTING} levels"):
        wkt.struct_from_dict(deep)
    shared = [1.0]
    assert wkt.struct_to_dict(wkt.struct_from_dict({"p": shared, "q": shared})) == {"p": shared, "q": shared}
    assert wkt.value_to_python(wk.Value()) is None
    assert math.isnan(wkt.value_to_python(wkt.value_from_python(math.nan)))


# ------------------------------------------------------------------ wrappers

WRAPPERS = [
    (wk.Int32Value, wrappers_pb2.Int32Value, st.integers(-2**31, 2**31 - 1)),
    (wk.UInt64Value, wrappers_pb2.UInt64Value, st.integers(0, 2**64 - 1)),
    (wk.Int64Value, wrappers_pb2.Int64Value, st.integers(-2**63, 2**63 - 1)),
    (wk.BoolValue, wrappers_pb2.BoolValue, st.booleans()),
    (wk.StringValue, wrappers_pb2.StringValue, st.text(max_size=10)),
    (wk.BytesValue, wrappers_pb2.BytesValue, st.binary(max_size=10)),
    (wk.DoubleValue, wrappers_pb2.DoubleValue, st.floats(allow_nan=False)),
]


@pytest.mark.parametrize("cls, gcls, values", WRAPPERS, ids=[w[0].__name__ for w in WRAPPERS])
def test_wrap_unwrap(cls, gcls, values):
    @given(values)
    def run(x):
        w = wkt.wrap(x, cls)
        assert pbj.encode(w) == gcls(value=x).SerializeToString()
        assert wkt.unwrap(pbj.decode(cls, gcls(value=x).SerializeToString())) == x

    run()
    assert wkt.wrap(None, cls) is None and wkt.unwrap(None) is None


def test_wrap_errors():
    with pytest.raises(TypeError, match=r"is not a google\.protobuf wrapper type"):
        wkt.wrap(1, wk.Timestamp)
    with pytest.raises(TypeError, match=r"expected a google\.protobuf wrapper message, got Timestamp"):
        wkt.unwrap(wk.Timestamp())


# ------------------------------------------------------------------ FieldMask

segments = st.from_regex(r"[a-z][a-z0-9]{0,4}(_[a-z][a-z0-9]{0,3}){0,2}", fullmatch=True)
paths = st.lists(st.lists(segments, min_size=1, max_size=3).map(".".join), max_size=4)


@given(paths)
def test_field_mask_text_as_google(ps):
    g = field_mask_pb2.FieldMask(paths=ps)
    fm = wkt.field_mask(ps)
    assert pbj.encode(fm) == g.SerializeToString()
    assert wkt.field_mask_paths(fm) == tuple(ps)
    text = wkt.field_mask_to_text(fm)
    assert text == g.ToJsonString()
    back = field_mask_pb2.FieldMask()
    back.FromJsonString(text)
    assert wkt.field_mask_from_text(text) == pbj.decode(wk.FieldMask, back.SerializeToString())


def test_field_mask_errors():
    with pytest.raises(ValueError, match="has an upper-case letter"):
        wkt.field_mask_to_text(wkt.field_mask(["userName"]))
    with pytest.raises(ValueError, match="must be lowerCamelCase"):
        wkt.field_mask_from_text("user_name")
    with pytest.raises(TypeError, match="a FieldMask path must be a str, got int"):
        wkt.field_mask([1])
