"""The native engine runs every class (issue 23, "No declined class"): extension ranges and known
extensions, message sets, groups, singular sub-messages and map values that merge, closed-enum
non-members, proto2 strings that are not UTF-8: each decoded in C (never handed to Python) to the
value the pure-Python parser gives, type for type, extensions and unknown fields included, and
written by both C writers to the bytes the Python writer gives.

Under ``PBJ_ENGINE=python`` the same inputs run through ``pbj.decode``/``pbj.encode`` and are
checked against the same expected values, so the suite holds for both engines.

Skipped parts where the extension is not built (the pure-Python install).
"""

from __future__ import annotations

import enum

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pbj
from fuzz import targets as T
from fuzz.native_checks import _encode_python, _python_decode, check_writers, identical, native_decode, same_error
from pbj import _native, wire
from pbj.codec import codec_of
from tests import test_extensions as X
from tests import test_extensions_message_set as MS
from tests.test_native_writers import count_python_writers

pytestmark = pytest.mark.once

native_only = pytest.mark.skipif(not _native.available(), reason="the native engine is not built")
_SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def in_c(cls, data: bytes, max_depth: int = pbj.DEFAULT_MAX_DEPTH):
    """Decode ``data`` with both engines: the native one must decode it itself (no decline) to the
    Python parser's value, and all writers must give the Python writer's bytes (the C writers
    themselves: a hand-over to the Python writer would be ``None``). Returns the value.

    With the pure-Python engine in use (or not built), ``pbj.decode`` and both writers are checked
    against the Python parser and writer alone.
    """
    python = _python_decode(cls, data)
    assert not isinstance(python, pbj.DecodeError), python
    if _native.available() and pbj.engine() == "native":
        codec = codec_of(cls)
        assert codec.native is not None, pbj.explain_engine(cls)
        native = native_decode(cls, data, max_depth)
        assert native is not None, "declined: handed to Python"
        assert not isinstance(native, pbj.DecodeError), f"refused what Python accepts: {native}"
        assert identical(native, python), (native, python)
        check_writers(cls, data)
        # the C writers on the C-decoded value, fresh and with sizes cached, and the reverse one
        expected = _encode_python(_python_decode(cls, data))
        assert _native._engine.encode(codec.native, native) == expected
        assert _native._engine.encode(codec.native, native) == expected
        assert _native._engine.write_reverse(codec.native, native) == expected
    got = pbj.decode(cls, data, max_depth=max_depth)
    assert identical(got, python)
    expected = _encode_python(_python_decode(cls, data))
    assert pbj.encode(got) == pbj.encode(got, reverse=True) == expected
    return got


# ---------------------------------------------------------------- extensions

def test_extension_ranges_run_natively():
    for cls in (X.Host, X.loaded()["pbjext.Host"], MS.Set, X.loaded()["pbjext.Set"]):
        choice = pbj.explain_engine(cls)
        if _native.available() and pbj.engine() == "native":
            assert choice.engine == "native", choice
            assert codec_of(cls).native is not None
        else:
            assert choice.engine == "python"


def test_known_answer_in_c():
    data = bytes.fromhex("0801" "a00603" "aa06020102" "b2060161" "b2060162" "c3060804c406" "c00c02" "e2120101")
    host = in_c(X.Host, data)
    assert pbj.get_extension(host, X.E_GROUP) == X.EGroup(g=4)
    assert pbj.get_extension(host, X.E_PACKED) == (-1, 1) and pbj.get_extension(host, X.E_BYTES) == b"\x01"
    assert [h.__pbj_extension__.number for h in host._pbj_extensions] == [100, 101, 102, 104, 300]
    assert pbj.encode(host) == data


def test_repeats_merge_and_what_is_not_an_extension_stays_unknown_in_c():
    data = (bytes.fromhex("ba0602" "0801") + bytes.fromhex("a00605") + bytes.fromhex("ba0604" "12026869")
            + bytes.fromhex("a00606") + bytes.fromhex("a80602" "a80601") + bytes.fromhex("f80607")
            + bytes.fromhex("a50601000000") + bytes.fromhex("c80609"))
    for cls in (X.Host, X.loaded()["pbjext.Host"]):
        host = in_c(cls, data)
        ns = X.HAND if cls is X.Host else {n: X.loaded().extension(n) for n in X.HAND}
        assert pbj.get_extension(host, ns["pbjext.e_sub"]) == ns["pbjext.e_sub"].type(a=1, s="hi")
        assert pbj.get_extension(host, ns["pbjext.e_int"]) == 6
        assert pbj.get_extension(host, ns["pbjext.e_packed"]) == (1, -1)
        # unknown fields in arrival order: an unregistered number, a wrong wire type, a closed enum's non-member
        assert pbj.unknown_fields(host) == bytes.fromhex("f80607" "a50601000000" "c80609")


@pytest.mark.parametrize("hex_in", [
    "c80609",                      # a closed enum's non-member: unknown, where it arrived
    "c80601" "c80605" "c80602",    # members around a non-member: last member wins, the non-member stays
    "0801" "c80607" "c00c03",      # between fields
    "f80601" "c80608" "f80602",    # between unknown fields: arrival order
])
def test_closed_enum_extension_non_members_in_c(hex_in):
    data = bytes.fromhex(hex_in)
    in_c(X.Host, data)


def test_every_extension_value_in_c():
    for source in (X.HAND, X.loaded()):
        host = X._pbj_host(source, list(X.VALUES))
        data = _encode_python(host)
        back = in_c(type(host), data)
        assert back == host and pbj.encode(back) == data


def test_extensions_registered_after_compiling_are_read_in_c():
    @pbj.message(syntax="proto2", extensions=range(10, 20))
    class LateHost:
        a: int | None = pbj.field(1, "int32", optional=True)

    data = bytes.fromhex("0801" "5005" "5a0161")
    assert pbj.unknown_fields(in_c(LateHost, data)) == bytes.fromhex("5005" "5a0161")
    x = pbj.extension(LateHost, 10, "uint32", name="latehost.x")
    y = pbj.extension(LateHost, 11, "string", name="latehost.y")
    assert x.holder.__dict__.get("__pbj_codec__") is None  # the engine compiles the holder when it meets it
    value = in_c(LateHost, data)
    assert pbj.get_extension(value, x) == 5 and pbj.get_extension(value, y) == "a"
    assert pbj.unknown_fields(value) == b""


@native_only
def test_writers_run_extensions_in_c():
    host = X._pbj_host(X.HAND, list(X.VALUES))
    plan = codec_of(X.Host).native
    fresh = X._pbj_host(X.HAND, list(X.VALUES))
    out = _native._engine.encode(plan, fresh)
    assert out is not None and out == _encode_python(host)
    assert _native._engine.encode(plan, fresh) == out  # sizes cached
    buf = pbj.ReverseBuffer(3)
    pos = buf.writer_begin()
    end = _native._engine.write_reverse(plan, X._pbj_host(X.HAND, list(X.VALUES)), buf, pos)
    assert end is not None
    buf.writer_commit(end)
    assert buf.to_bytes() == out


def _fresh_extended(tag: str):
    """A new class with an extension range and a new int32 extension 5 of it (its holder never compiled)."""
    @pbj.message(full_name=f"fresh.{tag}", syntax="proto2", extensions=range(5, 9))
    class Fresh:
        a: int | None = pbj.field(1, "int32", optional=True)

    e = pbj.extension(Fresh, 5, "int32", name=f"fresh.{tag}_e")
    assert e.holder.__dict__.get("__pbj_codec__") is None
    return Fresh, e


FRESH_BYTES = bytes.fromhex("0801" "2807")  # a = 1 (field 1, varint), the extension = 7 (field 5, varint)


@pytest.mark.parametrize("writer", ["fresh", "cached", "reverse", "buffer", "message set"])
def test_the_first_write_of_an_extension_never_compiled_is_the_native_writers(writer, monkeypatch):
    """A holder's class is compiled when a value is attached (pbj.with_extensions, the constructor,
    a message set's decode), so the native writers write the first holder of a new extension
    themselves: each writer, on an object no writer has seen, the same bytes, no Python writer call."""
    Fresh, e = _fresh_extended(f"first_{writer.replace(' ', '_')}")
    if writer == "message set":  # a message set's holder, made by the Python decoder
        @pbj.message(full_name="fresh.FirstSet", syntax="proto2", message_set=True)
        class FirstSet:
            pass

        item = pbj.extension(FirstSet, 1000, Fresh, name="fresh.first_set_item")
        assert item.holder.__dict__.get("__pbj_codec__") is None
        cls, expected = FirstSet, bytes.fromhex("0b" "10e807" "1a02" "0803" "0c")  # item: type_id, message
        obj = _python_decode(FirstSet, expected)
        assert item.holder.__dict__.get("__pbj_codec__") is not None  # compiled when the decoder made it
    else:
        cls, obj, expected = Fresh, pbj.with_extensions(Fresh(a=1), {e: 7}), FRESH_BYTES
        assert e.holder.__dict__.get("__pbj_codec__") is not None  # compiled when the value was attached
    calls = count_python_writers(monkeypatch, cls, *(type(h) for h in obj._pbj_extensions))
    before = pbj.engine()
    try:
        if _native.available():
            pbj.use_engine("native")
        if writer == "reverse":
            got = pbj.encode(obj, reverse=True)
        elif writer == "buffer":
            buf = pbj.ReverseBuffer(1)
            assert pbj.write_reverse(obj, buf) == len(expected)
            got = buf.to_bytes()
        else:
            got = pbj.encode(obj)
            if writer == "cached":
                assert obj._pbj_size == len(expected)
                got = pbj.encode(obj)
    finally:
        pbj.use_engine(before)
    assert got == expected
    if _native.available():
        assert calls == []
        plan = codec_of(cls).native
        assert _native._engine.encode(plan, obj) == expected == _native._engine.write_reverse(plan, obj)
    assert pbj.encode(obj) == pbj.encode(obj, reverse=True) == _encode_python(obj) == expected


@native_only
def test_a_holder_made_behind_the_api_without_a_plan_is_declined_not_misread():
    """A holder instance made by calling its hidden class (no value attached through the API, so its
    class has no codec) put in behind the constructor's back: the native writers decline it, the
    Python writer writes it (same bytes)."""
    Fresh, e = _fresh_extended("behind")
    obj = Fresh(a=1)
    object.__setattr__(obj, "_pbj_extensions", (e.holder(value=7),))
    assert e.holder.__dict__.get("__pbj_codec__") is None
    plan = codec_of(Fresh).native
    assert _native._engine.encode(plan, obj) is None and _native._engine.write_reverse(plan, obj) is None
    assert pbj.encode(obj) == pbj.encode(obj, reverse=True) == FRESH_BYTES
    assert _native._engine.encode(plan, obj) == FRESH_BYTES  # compiled by the Python writer meanwhile


@pytest.mark.parametrize("source", ["hand", "loaded"])
@pytest.mark.parametrize("name", list(MS.CASES))
def test_message_sets_in_c(source, name):
    cls = MS.Set if source == "hand" else X.loaded()["pbjext.Set"]
    in_c(cls, MS.CASES[name])


def test_message_set_items_merge_in_c():
    data = MS.item(MS.tid(1000), MS.msg(MS.A1)) + MS.item(MS.tid(2000), MS.msg(MS.B1)) \
        + MS.item(MS.msg(MS.A2), MS.tid(1000)) + MS.item(MS.tid(999), MS.msg(b"\x08\x05"))
    value = in_c(MS.Set, data)
    assert pbj.get_extension(value, MS.A) == MS.ItemA(x=1, z=2)
    assert pbj.get_extension(value, MS.B) == MS.ItemB(y="hi")
    assert pbj.unknown_fields(value) == MS.item(MS.tid(999), MS.msg(b"\x08\x05"))


def test_nesting_limit_counts_extension_messages_in_c():
    @pbj.message(syntax="proto2", extensions=range(2, 3))
    class DeepX:
        child: DeepX | None = pbj.field(1, "DeepX")

    pbj.extension(DeepX, 2, DeepX, name="deepx.down")
    data = b""
    for _ in range(5):
        data = b"\x12" + bytes([len(data)]) + data
    in_c(DeepX, data, max_depth=5)
    if _native.available():
        refused = native_decode(DeepX, data, 4)  # an error, raised from C as Python raises it
        assert isinstance(refused, pbj.DecodeError) and same_error(refused, _python_decode(DeepX, data, 4))
    with pytest.raises(pbj.DecodeError, match="too deep"):
        pbj.decode(DeepX, data, max_depth=4)


@settings(max_examples=150, **_SETTINGS)
@given(st.binary(max_size=48), st.sampled_from(["host", "set"]))
def test_random_bytes_never_declined(raw, which):
    """Random input for a class with extensions: C decodes it or refuses it, never hands it over."""
    cls = X.Host if which == "host" else MS.Set
    prefix = bytes.fromhex("a00601") if which == "host" else MS.item(MS.tid(1000), MS.msg(MS.A1))
    for data in (raw, prefix + raw):
        python = _python_decode(cls, data)
        if not (_native.available() and pbj.engine() == "native"):
            continue
        native = native_decode(cls, data)
        assert native is not None
        if isinstance(python, pbj.DecodeError):
            assert isinstance(native, pbj.DecodeError) and same_error(native, python)
        else:
            assert identical(native, python)
            check_writers(cls, data)


# ---------------------------------------------------------------- merges

@pbj.message(full_name="natmerge.Leaf", syntax="proto2")
class Leaf:
    a: int | None = pbj.field(1, "int32", optional=True)
    b: str | None = pbj.field(2, "string", optional=True)
    r: tuple[int, ...] = pbj.field(3, "int32", repeated=True)


@pbj.message(full_name="natmerge.Node", syntax="proto2")
class Node:
    one: Leaf | None = pbj.field(1, Leaf)
    grp: Leaf | None = pbj.field(2, Leaf, group=True)
    kids: tuple[Leaf, ...] = pbj.field(3, Leaf, repeated=True)
    m: pbj.FrozenMap[str, Leaf] = pbj.map_field(4, "string", Leaf)
    choice: pbj.OneOf[Leaf | int] | None = pbj.oneof(x=(5, Leaf), y=(6, "int32"), z=(7, Leaf))


def _len(number: int, body: bytes) -> bytes:
    return wire.tag_bytes(number, wire.WIRE_LEN) + wire.encode_varint(len(body)) + body


def _grp(number: int, body: bytes) -> bytes:
    return wire.tag_bytes(number, wire.WIRE_SGROUP) + body + wire.tag_bytes(number, wire.WIRE_EGROUP)


A1, B2, R3, R4 = b"\x08\x01", b"\x12\x01q", b"\x18\x03", b"\x18\x04"

MERGES = {
    "twice": _len(1, A1 + R3) + _len(1, B2 + R4),
    "three times, around others": _len(1, A1) + _len(3, A1) + _len(1, B2) + b"\x30\x05"[:0] + _len(1, R3 + b"\x08\x09"),
    "a group twice": _grp(2, A1 + R3) + _grp(2, B2 + R4),
    "a group three times": _grp(2, A1) + _grp(2, R3) + _grp(2, B2 + b"\x08\x07"),
    "a oneof member twice": _len(5, A1) + _len(5, B2),
    "a member, replaced, back": _len(5, A1) + _len(5, B2) + b"\x30\x05" + _len(5, R3),
    "a member, replaced at the end": _len(5, A1) + _len(5, B2) + b"\x30\x05",
    "another member between": _len(5, A1) + _len(7, B2) + _len(5, R3) + _len(5, R4),
    "a map value twice": _len(4, b"\x0a\x01k" + _len(2, A1 + R3) + _len(2, B2 + R4)),
    "a map value twice, key last": _len(4, _len(2, A1) + _len(2, B2) + b"\x0a\x01k"),
    "a map value twice in an entry kept unknown": _len(4, b"\x0a\x01k" + _len(2, A1) + _len(2, B2) + b"\x18\x01"),
    "nested merges": _len(1, A1) + _len(1, B2) + _len(5, A1) + _len(5, R3) + _grp(2, A1) + _grp(2, R4),
}


@pytest.mark.parametrize("name", list(MERGES))
def test_merges_in_c(name):
    in_c(Node, MERGES[name])


def test_a_merge_gives_the_spec_value():
    value = in_c(Node, MERGES["twice"])
    assert value.one == Leaf(a=1, b="q", r=(3, 4))
    assert in_c(Node, MERGES["a group twice"]).grp == Leaf(a=1, b="q", r=(3, 4))
    assert in_c(Node, MERGES["a member, replaced, back"]).choice == ("x", Leaf(r=(3,)))
    assert in_c(Node, MERGES["another member between"]).choice == ("x", Leaf(r=(3, 4)))
    assert in_c(Node, MERGES["a map value twice"]).m == {"k": Leaf(a=1, b="q", r=(3, 4))}


@pytest.mark.parametrize("bad", [
    _len(1, A1) + _len(1, b"\x08"),               # a later occurrence is malformed
    _len(5, A1) + _len(5, b"\x08") + b"\x30\x05",  # a superseded occurrence is malformed: still checked
    _len(4, b"\x0a\x01k" + _len(2, A1) + _len(2, b"\x12\x05"))])
def test_a_malformed_later_occurrence_is_the_python_engines_error(bad):
    assert isinstance(_python_decode(Node, bad), pbj.DecodeError)
    if _native.available():
        refused = native_decode(Node, bad, 100)
        assert isinstance(refused, pbj.DecodeError) and same_error(refused, _python_decode(Node, bad))
    with pytest.raises(pbj.DecodeError):
        pbj.decode(Node, bad)


@settings(max_examples=150, **_SETTINGS)
@given(st.lists(st.sampled_from(list(MERGES.values())), min_size=1, max_size=4))
def test_merged_concatenations_in_c(parts):
    """Concatenated encodings are a merge ("Encoding"): any concatenation decodes in C as in Python."""
    in_c(Node, b"".join(parts))


# ---------------------------------------------------------------- closed enums, strings that keep any bytes

class Shade(enum.IntEnum):
    DARK = 0
    LIGHT = 1
    MID = 5


Shade.__pbj_closed__ = True  # type: ignore[attr-defined]  # a proto2 enum


@pbj.message(full_name="natenum.E", syntax="proto2")
class Closed:
    one: Shade | None = pbj.field(1, Shade, optional=True)
    many: tuple[Shade, ...] = pbj.field(2, Shade, repeated=True)
    packed: tuple[Shade, ...] = pbj.field(3, Shade, repeated=True, packed=True)
    pick: pbj.OneOf[Shade | str] | None = pbj.oneof(e=(4, Shade), s=(5, "string"))
    text: str | None = pbj.field(6, "string", optional=True)
    texts: tuple[str, ...] = pbj.field(7, "string", repeated=True)
    names: pbj.FrozenMap[str, str] = pbj.map_field(8, "string", "string")


@pytest.mark.parametrize("hex_in", [
    "0807", "0801" "0807", "0807" "0805",            # singular: the non-member unknown, the member kept
    "08ffffffffffffffffff01",                         # -1 as ten bytes: kept as it arrived
    "1001" "1007" "1005",                             # unpacked elements
    "1a0401070509", "1a03" "ff ff 03",                # packed: each non-member a varint field of its own
    "1a0b01ffffffffffffffffff01",                     # packed -1: the canonical varint of its 64 bits
    "1001" "1a020107" "1009",                         # packed and unpacked runs mixed
    "2007", "2001" "2007", "2a0161" "2009",           # a oneof member: a non-member leaves the oneof as it was
])
def test_closed_enum_non_members_in_c(hex_in):
    value = in_c(Closed, bytes.fromhex(hex_in.replace(" ", "")))
    assert all(isinstance(v, Shade) for v in (*value.many, *value.packed))


@pytest.mark.parametrize("hex_in", [
    "3201ff", "3203c328ff", "3a0161" "3a02fffe" "3a00",   # singular and repeated
    "3203eda080",                                        # an encoded surrogate: bytes kept as they are
    "420a" "0a02ff61" "1204c3a9ff00",                    # map key and value
    "2a02c0af",                                          # a oneof member (proto2: any bytes)
])
def test_strings_that_keep_any_bytes_in_c(hex_in):
    data = bytes.fromhex(hex_in.replace(" ", ""))
    value = in_c(Closed, data)
    assert pbj.encode(value) == pbj.encode(value, reverse=True) == data


def test_a_string_that_keeps_any_bytes_holds_surrogates():
    value = in_c(Closed, bytes.fromhex("3201ff"))
    assert value.text == "\udcff"


def test_every_shipped_proto2_target_in_c():
    """The fuzz targets' proto2 schema (groups, closed enums, extensions-free): valid encodings in C."""
    t = T.target("proto2")
    assert pbj.explain_engine(t.cls).engine == ("native" if _native.available() and pbj.engine() == "native"
                                                else "python")


# ---------------------------------------------------------------- the fuzz harness's targets

@native_only
@settings(max_examples=300, **_SETTINGS)
@given(st.data())
def test_mutated_extension_targets_are_decoded_in_c(data):
    """Mutations of valid encodings of fuzz/targets.py's extension and message-set targets (every
    extension kind, closed enums, merges): C decodes or refuses each, never hands one to Python,
    and agrees with Python value for value and byte for byte (fuzz.native_checks.check_same)."""
    from fuzz.native_checks import check_same

    targets, seeds = T.native_targets(), T.native_seeds()
    t = data.draw(st.sampled_from(targets))
    seed = data.draw(st.sampled_from(seeds[t.name]))
    ops = data.draw(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 1 << 24), st.binary(max_size=9)),
                             max_size=4))
    message = T.mutate(seed, ops)
    assert native_decode(t.cls, message) is not None
    check_same(t.cls, message)


def test_an_extension_string_that_keeps_other_bytes_is_written_by_the_native_writers():
    """Found by the sanitizer run of the merged engine: an extension string holding a byte that is not
    UTF-8 (0xa8) decodes in C (surrogateescape); the native writers write that object themselves (no
    hand-over to the Python writer), and pbj.encode gives the input's fields back in canonical order."""
    from fuzz.native_checks import check_same, keeps_other_bytes

    x = next(t for t in T.native_targets() if t.name == "x")
    data = (b'\x08\x01\x10\x05\x18\x00\x18\x01"\x02\x05\x01*\x01t2\x07\n\x01k\x12\x02\x08\x03:\x02\x08\x02'
            b'\n\x02\x08\x06\xea\x12\x02\x08\n\xe2\x12\x01\xa8\xc3\x06\xc8\x06\t\xc4\x06\xba\x06\x02\x01\x04'
            b'\xb0\x06\x01\xb0\x06\x05\xaa\x06\x02\x08\x08\xa0\x06\x07')
    value = _native._engine.decode(codec_of(x.cls).native, data, pbj.DEFAULT_MAX_DEPTH)
    assert type(value) is x.cls and keeps_other_bytes(value)
    expected = _encode_python(_python_decode(x.cls, data))
    assert _native._engine.encode(codec_of(x.cls).native, value) == expected
    assert _native._engine.write_reverse(codec_of(x.cls).native, value) == expected
    assert check_same(x.cls, data) is not None
    assert sorted(pbj.encode(value)) == sorted(data)  # the same bytes, fields in canonical order
    assert pbj.decode(x.cls, pbj.encode(value)) == value
