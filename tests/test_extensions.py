"""Extensions (pbj.extensions): declared by hand and loaded, on the wire with both writers, in
ProtoJSON and the text format, against Google's protobuf (protobuf.dev "Language Guide (proto2)",
"Extensions"; "Encoding").

Google's Python package runs upb, which writes extensions after all the fields; C++, Java and
Google's pure-Python backend write them in field-number order among the fields, as pbj does. The
byte-exact differential therefore re-serializes pbj's bytes with the pure-Python backend (in a
subprocess) and checks upb parses them to the message Google builds.
"""

from __future__ import annotations

import enum
import json
import os
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import pbj
from pbj.codec.plan import EXTENSIONS, FIELD, build_message
from pbj.schema import info
from tests.oracle import google_class, protoc

PROTOS = Path(__file__).parent / "protos"


# ---------------------------------------------------------------- the schema, by hand

class Color(enum.IntEnum):
    RED = 0
    GREEN = 1
    BLUE = 2


Color.__pbj_closed__ = True  # type: ignore[attr-defined]  # a proto2 enum


@pbj.message(full_name="pbjext.Sub", syntax="proto2")
class Sub:
    a: int | None = pbj.field(1, "int32", optional=True)
    s: str | None = pbj.field(2, "string", optional=True)
    r: tuple[int, ...] = pbj.field(3, "int32", repeated=True, packed=False)


@pbj.message(full_name="pbjext.EGroup", syntax="proto2")
class EGroup:
    g: int | None = pbj.field(1, "int32", optional=True)


@pbj.message(full_name="pbjext.Host", syntax="proto2", extensions=[range(100, 200), range(300, 401)])
class Host:
    first: int | None = pbj.field(1, "int32", optional=True)
    last: int | None = pbj.field(200, "int32", optional=True)


E_INT = pbj.extension(Host, 100, "int32", name="pbjext.e_int")
E_PACKED = pbj.extension(Host, 101, "sint64", name="pbjext.e_packed", repeated=True, packed=True)
E_STRINGS = pbj.extension(Host, 102, "string", name="pbjext.e_strings", repeated=True)
E_SUB = pbj.extension(Host, 103, Sub, name="pbjext.e_sub")
E_GROUP = pbj.extension(Host, 104, EGroup, name="pbjext.egroup", group=True)
E_COLOR = pbj.extension(Host, 105, Color, name="pbjext.e_color")
E_DEFAULT = pbj.extension(Host, 106, "double", name="pbjext.e_default", default=2.5)
E_UNPACKED = pbj.extension(Host, 107, "fixed32", name="pbjext.e_unpacked", repeated=True)
E_BYTES = pbj.extension(Host, 300, "bytes", name="pbjext.e_bytes")
NESTED = pbj.extension(Host, 150, "string", name="pbjext.Scope.nested")

HAND = {e.full_name: e for e in (E_INT, E_PACKED, E_STRINGS, E_SUB, E_GROUP, E_COLOR, E_DEFAULT, E_UNPACKED,
                                 E_BYTES, NESTED)}

#: extension full name -> (a value, the Google-side setter)
VALUES = {
    "pbjext.e_int": -7,
    "pbjext.e_packed": (1, -2, 300),
    "pbjext.e_strings": ("a", "héllo"),
    "pbjext.e_sub": {"a": 5, "s": "x", "r": [1, 2]},
    "pbjext.egroup": {"g": 9},
    "pbjext.e_color": 2,
    "pbjext.e_default": 0.0,
    "pbjext.e_unpacked": (1, 2**32 - 1),
    "pbjext.e_bytes": b"\x00\xff",
    "pbjext.Scope.nested": "in scope",
}


# ---------------------------------------------------------------- the schema, loaded, and Google's

@cache
def _set() -> bytes:
    return protoc(["extensions.proto"], [PROTOS])


@cache
def loaded() -> pbj.Namespace:
    return pbj.load_descriptor_set(_set())


def _pbj_value(ns_or_hand, name: str, raw):
    ext = ns_or_hand[name] if isinstance(ns_or_hand, dict) else ns_or_hand.extension(name)
    if isinstance(raw, dict):
        return ext, ext.type(**{k: tuple(v) if isinstance(v, list) else v for k, v in raw.items()})
    if ext.type is Color or (isinstance(ext.type, type) and issubclass(ext.type, enum.IntEnum)):
        return ext, ext.type(raw)
    return ext, raw


def _pbj_host(source, names, first=1, last=2):
    host_cls = Host if isinstance(source, dict) else source["pbjext.Host"]
    values = dict(_pbj_value(source, n, VALUES[n]) for n in names)
    return pbj.with_extensions(host_cls(first=first, last=last), values)


def _google_host(names, first=1, last=2):
    G = google_class("pbjext.Host")
    pool = G.DESCRIPTOR.file.pool
    g = G(first=first, last=last)
    for n in names:
        ext = pool.FindExtensionByName(n)
        raw = VALUES[n]
        if isinstance(raw, dict):
            g.Extensions[ext].SetInParent()
            for k, v in raw.items():
                if isinstance(v, list):
                    getattr(g.Extensions[ext], k).extend(v)
                else:
                    setattr(g.Extensions[ext], k, v)
        elif isinstance(raw, tuple):
            g.Extensions[ext].extend(raw)
        else:
            g.Extensions[ext] = raw
    return g


_PURE_PYTHON = """
import sys, json
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
fds = descriptor_pb2.FileDescriptorSet.FromString(open(sys.argv[1], "rb").read())
pool = descriptor_pool.DescriptorPool()
for fd in fds.file:
    pool.Add(fd)
cls = message_factory.GetMessageClass(pool.FindMessageTypeByName(sys.argv[2]))
out = [cls.FromString(bytes.fromhex(h)).SerializeToString(deterministic=True).hex() for h in json.load(sys.stdin)]
from google.protobuf.internal import api_implementation
assert api_implementation.Type() == "python"
print(json.dumps(out))
"""


def pure_python_reserialize(full_name: str, payloads: list[bytes], tmp_path: Path) -> list[bytes]:
    """Google's pure-Python backend parses each payload and writes it again (deterministic)."""
    path = tmp_path / "set.binpb"
    path.write_bytes(_set())
    env = dict(os.environ, PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION="python")
    done = subprocess.run([sys.executable, "-c", _PURE_PYTHON, str(path), full_name], input=json.dumps(
        [p.hex() for p in payloads]), capture_output=True, text=True, env=env, check=True)
    return [bytes.fromhex(h) for h in json.loads(done.stdout)]


def both_writers(msg) -> bytes:
    forward, reverse = pbj.encode(msg), pbj.encode(msg, reverse=True)
    assert forward == reverse
    assert pbj.encoded_size(msg) == len(forward)
    buf = pbj.ReverseBuffer()
    assert pbj.write_reverse(msg, buf) == len(forward) and buf.to_bytes() == forward
    return forward


# ---------------------------------------------------------------- declaring

def test_the_plan_writes_each_range_where_it_falls_among_the_fields():
    plan = build_message(info(Host), 0, lambda c: -1)
    steps = [(step, plan.fields[i].number if step == FIELD else plan.extension_ranges[i]) for step, i, _ in plan.writes]
    assert steps == [(FIELD, 1), (EXTENSIONS, (100, 200)), (FIELD, 200), (EXTENSIONS, (300, 401))]
    assert plan.extension_ranges == ((100, 200), (300, 401)) and not plan.leaf
    plain = build_message(info(Sub), 0, lambda c: -1)
    assert plain.extension_ranges == () and all(step != EXTENSIONS for step, _, _ in plain.writes)
    assert "_pbj_extensions" not in Sub.__pbj_slots__.__slots__  # no cost for a class without ranges
    assert "_pbj_extensions" in Host.__pbj_slots__.__slots__


@pytest.mark.parametrize("call, message", [
    (lambda: pbj.extension(Sub, 100, "int32"), "declares no extension ranges"),
    (lambda: pbj.extension(Host, 250, "int32"), "outside the extension ranges of pbjext.Host (100 to 199, 300 to 400)"),
    (lambda: pbj.extension(Host, 100, "int32", name="pbjext.other"), "taken by the extension pbjext.e_int"),
    (lambda: pbj.extension(Host, 110, "nope"), "unknown scalar type 'nope'"),
    (lambda: pbj.extension(Host, 110, dict), "is not a scalar type name"),
    (lambda: pbj.extension(Host, 110, "string", repeated=True, packed=True), "packed applies to repeated scalars"),
    (lambda: pbj.extension(Host, 110, "int32", group=True), "only a message can be a group"),
    (lambda: pbj.extension(Host, 110, "int32", repeated=True, default=1), "a repeated extension has no default"),
    (lambda: pbj.extension(Host, 110, "int32", default="x"), "default 'x'"),
    (lambda: pbj.extension(int, 110, "int32"), "extends a @pbj.message class"),
])
def test_declaration_errors(call, message):
    with pytest.raises(pbj.SchemaError, match=message.replace("(", r"\(").replace(")", r"\)")):
        call()


@pytest.mark.parametrize("ranges, message", [
    (range(0, 5), "outside 1..536870911"), (range(5, 5), "empty"), (range(1, 10, 2), "step 1"),
    ([range(10, 20), range(15, 30)], "overlap at 15 to 19"), ("x", "must be a range"),
    (range(1, 3), "field number 1 is inside the extension range 1 to 2"),
])
def test_extension_range_errors(ranges, message):
    with pytest.raises(pbj.SchemaError, match=message):
        @pbj.message(extensions=ranges)
        class Bad:
            a: int = pbj.field(1, "int32")


# ---------------------------------------------------------------- reading and building

def test_get_has_with_and_the_mapping_view():
    host = Host(first=1)
    assert pbj.get_extension(host, E_INT) is None and not pbj.has_extension(host, E_INT)
    assert pbj.get_extension(host, E_DEFAULT) == 2.5 and pbj.get_extension(host, E_PACKED) == ()
    one = pbj.with_extensions(host, {E_INT: 0, E_PACKED: [1, 2], E_SUB: Sub(a=1)})
    assert pbj.has_extension(one, E_INT) and pbj.get_extension(one, E_INT) == 0  # a set zero is present
    assert pbj.get_extension(one, E_PACKED) == (1, 2)  # a list becomes a tuple
    assert list(pbj.extensions_of(one).items()) == [(E_INT, 0), (E_PACKED, (1, 2)), (E_SUB, Sub(a=1))]
    assert host == Host(first=1) and not pbj.extensions_of(host)  # the original is unchanged
    two = pbj.with_extensions(one, {E_INT: None, E_PACKED: ()})  # None and () clear
    assert list(pbj.extensions_of(two)) == [E_SUB]
    assert pbj.replace(two, first=5).first == 5 and pbj.get_extension(pbj.replace(two, first=5), E_SUB) == Sub(a=1)
    # extensions are part of == and hash
    assert one != host and one == pbj.with_extensions(Host(first=1), {E_SUB: Sub(a=1), E_PACKED: (1, 2), E_INT: 0})
    assert hash(one) == hash(pbj.with_extensions(Host(first=1), {E_SUB: Sub(a=1), E_PACKED: (1, 2), E_INT: 0}))
    # the constructor takes them too
    assert Host(first=1, _pbj_extensions={E_INT: 0, E_PACKED: [1, 2], E_SUB: Sub(a=1)}) == one
    with pytest.raises(TypeError, match=r"pbjext\.e_int extends pbjext\.Host, not Sub"):
        pbj.get_extension(Sub(), E_INT)
    with pytest.raises(TypeError, match="Sub has no extension ranges"):
        pbj.with_extensions(Sub(), {E_INT: 1})
    assert dict(pbj.extensions_of(Sub())) == {}


@pytest.mark.parametrize("ext, value, error, message", [
    (E_INT, "1", TypeError, "extension pbjext.e_int of pbjext.Host: int32 field needs an int, got str '1'"),
    (E_INT, 2**31, ValueError, "extension pbjext.e_int of pbjext.Host: 2147483648 is out of range for int32"),
    (E_PACKED, [1, "x"], TypeError, r"extension pbjext.e_packed\[1\] of pbjext.Host"),
    (E_SUB, EGroup(), TypeError, "extension pbjext.e_sub of pbjext.Host: message field needs a Sub"),
    (E_COLOR, 7, ValueError, "7 is not a value of closed enum Color"),
])
def test_values_are_checked_like_fields(ext, value, error, message):
    with pytest.raises(error, match=message):
        pbj.with_extensions(Host(), {ext: value})


# ---------------------------------------------------------------- the wire, by hand

def test_known_answer_both_writers():
    host = pbj.with_extensions(Host(first=1, last=2), {E_BYTES: b"\x01", E_INT: 3, E_GROUP: EGroup(g=4),
                                                     E_STRINGS: ("a", "b"), E_PACKED: (-1, 1)})
    expected = bytes.fromhex(
        "0801"          # first = 1
        "a00603"        # e_int = 3 (100)
        "aa06020102"    # e_packed = [-1, 1], packed, ZigZag (101)
        "b20601" "61" "b20601" "62"  # e_strings (102), one tag per element
        "c3060804c406"  # egroup { g: 4 } (104, wire types 3 and 4)
        "c00c02"        # last = 2 (200)
        "e2120101")     # e_bytes (300)
    assert both_writers(host) == expected
    assert pbj.decode(Host, expected) == host


def test_decode_merges_repeats_and_keeps_what_is_not_an_extension():
    data = (bytes.fromhex("ba0602" "0801")  # e_sub { a: 1 }
            + bytes.fromhex("a006 05")    # e_int = 5
            + bytes.fromhex("ba0604" "12026869")  # e_sub { s: "hi" }
            + bytes.fromhex("a006 06")    # e_int = 6: last one wins
            + bytes.fromhex("a80602" "a80601")  # e_packed unpacked: accepted
            + bytes.fromhex("f80607")     # 111: an extension number nobody declared
            + bytes.fromhex("a50601000000")  # e_int as fixed32: wrong wire type, an unknown field
            + bytes.fromhex("c80609"))    # e_color = 9: not a member of a closed enum
    host = pbj.decode(Host, data)
    assert pbj.get_extension(host, E_SUB) == Sub(a=1, s="hi")
    assert pbj.get_extension(host, E_INT) == 6 and pbj.get_extension(host, E_PACKED) == (1, -1)
    assert not pbj.has_extension(host, E_COLOR)
    assert pbj.unknown_fields(host) == bytes.fromhex("f80607") + bytes.fromhex("a50601000000") + bytes.fromhex("c80609")
    assert both_writers(host) == (bytes.fromhex("a00606" "aa06020201" "ba06060801" "12026869")
                                  + pbj.unknown_fields(host))


def test_extensions_registered_after_first_use_are_read():
    @pbj.message(syntax="proto2", extensions=range(10, 20))
    class Late:
        a: int | None = pbj.field(1, "int32", optional=True)

    data = bytes.fromhex("0801" "5005")
    assert pbj.unknown_fields(pbj.decode(Late, data)) == bytes.fromhex("5005")  # compiled, nothing registered
    late = pbj.extension(Late, 10, "uint32", name="late.x")
    value = pbj.decode(Late, data)
    assert pbj.get_extension(value, late) == 5 and pbj.unknown_fields(value) == b""
    assert both_writers(value) == data


def test_a_malformed_extension_value_is_a_decode_error_naming_it():
    with pytest.raises(pbj.DecodeError) as exc:
        pbj.decode(Host, bytes.fromhex("ba0601" "08"))  # e_sub { a: <no varint> }
    assert exc.value.path[0] == "[pbjext.e_sub]" and "truncated" in str(exc.value)
    with pytest.raises(pbj.DecodeError, match=r"pbjext\.e_packed"):
        pbj.decode(Host, bytes.fromhex("aa0601ff"))  # e_packed: the run ends inside a varint


def test_nesting_limit_counts_extension_messages():
    @pbj.message(syntax="proto2", extensions=range(2, 3))
    class Deep:
        child: Deep | None = pbj.field(1, "Deep")

    down = pbj.extension(Deep, 2, Deep, name="deep.down")
    data = b""
    for _ in range(5):
        data = b"\x12" + bytes([len(data)]) + data
    assert pbj.decode(Deep, data, max_depth=5) is not None
    with pytest.raises(pbj.DecodeError, match="too deep"):
        pbj.decode(Deep, data, max_depth=4)
    assert pbj.get_extension(pbj.get_extension(pbj.decode(Deep, data), down), down) is not None


# ---------------------------------------------------------------- against Google

ALL = list(VALUES)


@pytest.mark.parametrize("source", ["hand", "loaded"])
@pytest.mark.parametrize("names", [
    ALL, ["pbjext.e_int"], ["pbjext.e_bytes", "pbjext.egroup"], ["pbjext.e_sub"],
    ["pbjext.Scope.nested", "pbjext.e_packed"],
], ids=["all", "int", "two", "sub", "nested"])
def test_differential_against_google(source, names, tmp_path):
    ns = loaded()
    src = HAND if source == "hand" else ns
    ours = _pbj_host(src, names)
    g = _google_host(names)
    data = both_writers(ours)
    G = google_class("pbjext.Host")
    assert G.FromString(data) == g  # upb reads pbj's bytes as the message Google built
    assert pure_python_reserialize("pbjext.Host", [data], tmp_path) == [data]  # and writes the same bytes
    host_cls = Host if source == "hand" else ns["pbjext.Host"]
    back = pbj.decode(host_cls, g.SerializeToString(deterministic=True))  # upb's order: extensions last
    assert back == ours and pbj.unknown_fields(back) == b""
    pool = G.DESCRIPTOR.file.pool
    for n in names:  # each value as Google reads it
        gv = g.Extensions[pool.FindExtensionByName(n)]
        ext, value = _pbj_value(src, n, VALUES[n])
        got = pbj.get_extension(back, ext)
        if isinstance(VALUES[n], dict):
            assert got == value and G.FromString(data).Extensions[pool.FindExtensionByName(n)] == gv
        else:
            assert (tuple(gv) if isinstance(VALUES[n], tuple) else gv) == got


def test_loaded_extensions_are_listed_and_found():
    ns = loaded()
    assert sorted(ns.extensions) == sorted([*HAND, "pbjext.ItemA.ext", "pbjext.ItemB.ext"])
    assert ns.extension("[pbjext.Scope.nested]") is ns.extensions["pbjext.Scope.nested"]
    e = ns.extension("pbjext.e_default")
    assert e.default == 2.5 and e.extendee is ns["pbjext.Host"] and e.number == 106
    assert ns.extension("pbjext.e_packed").packed and not ns.extension("pbjext.e_unpacked").packed
    assert ns.extension("pbjext.egroup").group and ns.extension("pbjext.ItemA.ext").message_set
    assert ns.extension("pbjext.e_color").type is ns["pbjext.Color"]
    with pytest.raises(KeyError, match=r"did you mean 'pbjext\.e_int'"):
        ns.extension("pbjext.e_itn")
    # each load registers with its own classes
    other = pbj.load_descriptor_set(_set())
    assert other.extension("pbjext.e_int") is not ns.extension("pbjext.e_int")
    assert list(info(other["pbjext.Host"]).extensions) == list(info(ns["pbjext.Host"]).extensions)


def test_unknown_extensions_stay_unknown_byte_for_byte():
    @pbj.message(full_name="pbjext.Host", syntax="proto2", extensions=[range(100, 200), range(300, 401)])
    class Bare:
        first: int | None = pbj.field(1, "int32", optional=True)
        last: int | None = pbj.field(200, "int32", optional=True)

    data = both_writers(_pbj_host(HAND, ALL))
    bare = pbj.decode(Bare, data)
    assert not pbj.extensions_of(bare) and bare.first == 1 and bare.last == 2
    assert both_writers(bare) == bytes.fromhex("0801c00c02") + data.replace(bytes.fromhex("0801"), b"", 1).replace(
        bytes.fromhex("c00c02"), b"", 1)  # the extensions, unknown, after the fields, as they arrived


# ---------------------------------------------------------------- ProtoJSON and the text format

@pytest.mark.parametrize("source", ["hand", "loaded"])
def test_json_names_extensions_in_brackets(source):
    src = HAND if source == "hand" else loaded()
    host = _pbj_host(src, ["pbjext.e_int", "pbjext.e_packed", "pbjext.e_sub", "pbjext.e_color", "pbjext.e_bytes"])
    d = pbj.to_dict(host)
    assert d == {"first": 1, "last": 2, "[pbjext.e_int]": -7, "[pbjext.e_packed]": ["1", "-2", "300"],
                 "[pbjext.e_sub]": {"a": 5, "s": "x", "r": [1, 2]}, "[pbjext.e_color]": "BLUE",
                 "[pbjext.e_bytes]": "AP8="}
    assert pbj.from_dict(type(host), d) == host
    assert pbj.from_json(type(host), pbj.to_json(host)) == host
    from google.protobuf import json_format
    g = json_format.Parse(pbj.to_json(host), google_class("pbjext.Host")())
    assert g == _google_host(["pbjext.e_int", "pbjext.e_packed", "pbjext.e_sub", "pbjext.e_color", "pbjext.e_bytes"])
    with pytest.raises(pbj.JSONError, match="unknown field"):
        pbj.from_dict(type(host), {"[pbjext.nope]": 1})
    assert pbj.from_dict(type(host), {"[pbjext.nope]": 1, "[pbjext.e_int]": None}, ignore_unknown=True) == type(host)()
    with pytest.raises(pbj.JSONError, match=r"\$\.\[pbjext.e_int\]"):
        pbj.from_dict(type(host), {"[pbjext.e_int]": "x"})


@pytest.mark.parametrize("source", ["hand", "loaded"])
def test_text_format_names_extensions_in_brackets(source):
    src = HAND if source == "hand" else loaded()
    host = _pbj_host(src, ["pbjext.e_int", "pbjext.egroup", "pbjext.Scope.nested", "pbjext.e_bytes"])
    text = pbj.to_text(host)
    assert text == ('first: 1\n[pbjext.e_int]: -7\n[pbjext.egroup] {\n  g: 9\n}\n'
                    '[pbjext.Scope.nested]: "in scope"\nlast: 2\n[pbjext.e_bytes]: "\\000\\377"\n')
    assert pbj.from_text(type(host), text) == host
    from google.protobuf import text_format
    assert text_format.Parse(text, google_class("pbjext.Host")()) == _google_host(
        ["pbjext.e_int", "pbjext.egroup", "pbjext.Scope.nested", "pbjext.e_bytes"])


# ---------------------------------------------------------------- pickling, editions

@pytest.mark.parametrize("source", ["hand", "loaded"])
def test_pickle_keeps_extensions(source):
    import pickle
    ns = pbj.load_descriptor_set(_set())  # the last load of these names: the one pickle resolves them in
    host = _pbj_host(HAND if source == "hand" else ns, ALL)
    back = pickle.loads(pickle.dumps(host))
    assert back == host and pbj.encode(back) == pbj.encode(host)
    assert pbj.get_extension(back, next(iter(pbj.extensions_of(host)))) == -7


def test_editions_extensions_follow_their_features(tmp_path):
    (tmp_path / "ext_editions.proto").write_text(
        'edition = "2023";\n'
        "package pbjed;\n"
        "message Host { int32 a = 1; extensions 10 to 20; }\n"
        "message Inner { int32 v = 1; }\n"
        "extend Host {\n"
        "  repeated int32 nums = 10;\n"  # packed: the editions default
        "  repeated int32 loose = 11 [features.repeated_field_encoding = EXPANDED];\n"
        "  Inner delimited = 12 [features.message_encoding = DELIMITED];\n"
        "  string text = 13;\n"
        "}\n")
    ns = pbj.load_descriptor_set(protoc(["ext_editions.proto"], [tmp_path]))
    nums, loose, delimited, text = (ns.extension(f"pbjed.{n}") for n in ("nums", "loose", "delimited", "text"))
    assert nums.packed and not loose.packed and delimited.group
    host = pbj.with_extensions(ns["pbjed.Host"](a=1), {nums: [1, 2], loose: [3, 4], delimited: ns["pbjed.Inner"](v=5),
                                                       text: "é"})
    data = both_writers(host)
    assert data == bytes.fromhex("0801" "52020102" "5803" "5804" "630805" "64" "6a02c3a9")
    g = google_class("pbjed.Host").FromString(data)
    assert google_class("pbjed.Host").FromString(g.SerializeToString()) == g
    assert pbj.decode(ns["pbjed.Host"], g.SerializeToString()) == host
    with pytest.raises(pbj.DecodeError, match="UTF-8"):  # utf8_validation VERIFY, the editions default
        pbj.decode(ns["pbjed.Host"], bytes.fromhex("6a01ff"))


# ---------------------------------------------------------------- random values

@given(st.data())
def test_random_extension_values_both_writers_and_google(data):
    from pbj.testing import field_values
    loaded()  # the schema in Google's pool
    chosen = {}
    for ext in HAND.values():
        if data.draw(st.booleans(), label=ext.full_name):
            chosen[ext] = data.draw(field_values(ext.field, max_depth=2, unknown_fields=True, closed_enums=True),
                                    label=ext.full_name)
    host = pbj.with_extensions(Host(first=data.draw(st.none() | st.integers(-5, 5)), last=3), chosen)
    out = both_writers(host)
    back = pbj.decode(Host, out)
    assert both_writers(back) == out and pbj.unknown_fields(back) == b""
    assert [e.number for e in pbj.extensions_of(back)] == sorted(
        e.number for e, v in chosen.items() if v is not None and v != ())
    again = google_class("pbjext.Host").FromString(out).SerializeToString(deterministic=True)
    assert both_writers(pbj.decode(Host, again)) == out  # upb moved the extensions last; pbj puts them back
