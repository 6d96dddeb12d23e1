"""Declared defaults and presence (proto2 ``[default = ...]``, editions ``EXPLICIT``), against Google.

A field with a declared default reads its default when unset; ``pbj.has`` tells presence; an
unset field is never written (both writers), printed in ProtoJSON or in the text format; equality
compares presence, as Google's runtimes do. Hand-declared and loaded classes alike.
"""

from __future__ import annotations

import enum
import math
import pickle

import pytest
from google.protobuf import json_format

import pbj
from pbj.errors import EncodeError, SchemaError
from tests.oracle import google_class, protoc_sources

PROTO2 = r"""
syntax = "proto2";
package pbjdefaults;
enum Color { RED = 1; GREEN = 2; BLUE = 3; }
message Defaults {
  optional int32 i32 = 1 [default = -5];
  optional int64 i64 = 2 [default = 9000000000];
  optional uint32 u32 = 3 [default = 4000000000];
  optional uint64 u64 = 4 [default = 18446744073709551615];
  optional sint32 s32 = 5 [default = -7];
  optional sint64 s64 = 6 [default = -8];
  optional fixed32 f32 = 7 [default = 7];
  optional fixed64 f64 = 8 [default = 8];
  optional sfixed32 sf32 = 9 [default = -9];
  optional sfixed64 sf64 = 10 [default = -10];
  optional float fl = 11 [default = 1.1];
  optional double db = 12 [default = -2.5e300];
  optional bool b = 13 [default = true];
  optional string s = 14 [default = "h\303\251llo \"q\"\n"];
  optional bytes by = 15 [default = "\000\001\377a\"\\"];
  optional Color c = 16 [default = BLUE];
  optional double inf = 17 [default = inf];
  optional double ninf = 18 [default = -inf];
  optional float nan = 19 [default = nan];
  optional int32 hex = 20 [default = 0x1F];
  optional int32 plain = 21;
  required int32 req = 22 [default = 42];
  optional Inner inner = 23;
  oneof choice { int32 one = 24 [default = 3]; string two = 25; }
  repeated int32 many = 26;
}
message Inner { optional string name = 1 [default = "x"]; }
"""

EDITIONS = r"""
edition = "2023";
package pbjdefaults.ed;
message Ed {
  int32 a = 1 [default = 11];
  string s = 2 [default = "e"];
  int32 implicit = 3 [features.field_presence = IMPLICIT];
  int32 req = 4 [default = 4, features.field_presence = LEGACY_REQUIRED];
}
"""

#: Field name -> (the declared default as Google reads it, another value).
VALUES = {
    "i32": (-5, 1), "i64": (9000000000, -1), "u32": (4000000000, 0), "u64": (2**64 - 1, 5),
    "s32": (-7, 7), "s64": (-8, 8), "f32": (7, 0), "f64": (8, 1), "sf32": (-9, 9), "sf64": (-10, 10),
    "fl": (1.100000023841858, 2.5), "db": (-2.5e300, 0.0), "b": (True, False),
    "s": ('héllo "q"\n', ""), "by": (b'\x00\x01\xffa"\\', b""), "c": (3, 1),
    "inf": (math.inf, 1.0), "ninf": (-math.inf, 1.0), "nan": (math.nan, 0.0), "hex": (31, 0),
}


class Color(enum.IntEnum):
    RED = 1
    GREEN = 2
    BLUE = 3


Color.__pbj_closed__ = True  # proto2 enums are closed


@pbj.message(full_name="pbjdefaults.Inner", syntax="proto2")
class Inner:
    name: str = pbj.field(1, "string", optional=True, default="x")


@pbj.message(full_name="pbjdefaults.Defaults", syntax="proto2")
class Defaults:
    i32: int = pbj.field(1, "int32", optional=True, default=-5)
    i64: int = pbj.field(2, "int64", optional=True, default=9000000000)
    u32: int = pbj.field(3, "uint32", optional=True, default=4000000000)
    u64: int = pbj.field(4, "uint64", optional=True, default=2**64 - 1)
    s32: int = pbj.field(5, "sint32", optional=True, default=-7)
    s64: int = pbj.field(6, "sint64", optional=True, default=-8)
    f32: int = pbj.field(7, "fixed32", optional=True, default=7)
    f64: int = pbj.field(8, "fixed64", optional=True, default=8)
    sf32: int = pbj.field(9, "sfixed32", optional=True, default=-9)
    sf64: int = pbj.field(10, "sfixed64", optional=True, default=-10)
    fl: float = pbj.field(11, "float", optional=True, default=1.100000023841858)
    db: float = pbj.field(12, "double", optional=True, default=-2.5e300)
    b: bool = pbj.field(13, "bool", optional=True, default=True)
    s: str = pbj.field(14, "string", optional=True, default='héllo "q"\n')
    by: bytes = pbj.field(15, "bytes", optional=True, default=b'\x00\x01\xffa"\\')
    c: Color = pbj.field(16, Color, optional=True, default=Color.BLUE)
    inf: float = pbj.field(17, "double", optional=True, default=math.inf)
    ninf: float = pbj.field(18, "double", optional=True, default=-math.inf)
    nan: float = pbj.field(19, "float", optional=True, default=math.nan)
    hex: int = pbj.field(20, "int32", optional=True, default=0x1F)
    plain: int | None = pbj.field(21, "int32", optional=True)
    req: int = pbj.field(22, "int32", required=True, default=42)
    inner: Inner | None = pbj.field(23, Inner)
    choice: pbj.OneOf | None = pbj.oneof(one=(24, "int32", {"default": 3}), two=(25, "string"))
    many: tuple[int, ...] = pbj.field(26, "int32", repeated=True)


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    d = tmp_path_factory.mktemp("defaults")
    paths, _ = protoc_sources(d, {"d.proto": PROTO2, "ed.proto": EDITIONS})
    return pbj.load_proto(paths, include=[d])


KINDS = ["declared", "loaded"]


def _cls(kind, loaded, name="Defaults"):
    return {"Defaults": Defaults, "Inner": Inner}[name] if kind == "declared" else loaded[f"pbjdefaults.{name}"]


def _same(a, b):
    return a == b or (isinstance(a, float) and math.isnan(a) and math.isnan(b))


def _both_writers(obj):
    fwd, rev = pbj.encode(obj), pbj.encode(obj, reverse=True)
    assert fwd == rev
    return fwd


@pytest.mark.parametrize("kind", KINDS)
def test_unset_fields_read_the_declared_default_as_google_does(kind, loaded):
    cls, g = _cls(kind, loaded), google_class("pbjdefaults.Defaults")(req=1)
    obj = cls(req=1)
    for name, (default, _) in VALUES.items():
        assert _same(getattr(obj, name), default), name
        assert _same(getattr(g, name), default), name
        assert pbj.has(obj, name) is False is g.HasField(name)
    assert type(obj.c) is type(cls(c=3).c)  # the enum member, not a bare int
    assert obj.plain is None  # no declared default: None, as for proto3 ``optional``
    assert obj.inner is None and not pbj.has(obj, "inner")
    assert _both_writers(obj) == g.SerializeToString() == b"\xb0\x01\x01"


@pytest.mark.parametrize("kind", KINDS)
def test_a_field_set_to_its_default_is_present_and_written(kind, loaded):
    cls, gcls = _cls(kind, loaded), google_class("pbjdefaults.Defaults")
    for name, (default, other) in VALUES.items():
        for value in (default, other):
            obj, g = cls(req=1, **{name: value}), gcls(req=1, **{name: value})
            assert pbj.has(obj, name) and g.HasField(name), name
            assert _same(getattr(obj, name), getattr(g, name)), name
            data = _both_writers(obj)
            assert data == g.SerializeToString(), name
            back = pbj.decode(cls, data)
            assert pbj.has(back, name) and _same(getattr(back, name), value), name
            assert back == obj or name == "nan"  # NaN is not equal to itself


@pytest.mark.parametrize("kind", KINDS)
def test_decode_keeps_presence_of_google_bytes(kind, loaded):
    cls, gcls = _cls(kind, loaded), google_class("pbjdefaults.Defaults")
    g = gcls(req=42, i32=-5, s="", c=1)
    obj = pbj.decode(cls, g.SerializeToString())
    for name in [*VALUES, "plain", "req", "inner"]:
        assert pbj.has(obj, name) is g.HasField(name), name
    assert obj.i32 == -5 and obj.s == "" and obj.c == 1 and obj.u64 == 2**64 - 1
    assert _both_writers(obj) == g.SerializeToString()


@pytest.mark.parametrize("kind", KINDS)
def test_equality_hash_repr_and_pickle_keep_presence(kind, loaded):
    cls = _cls(kind, loaded)
    unset, set_ = cls(req=1), cls(req=1, i32=-5)
    assert unset.i32 == set_.i32 == -5
    assert unset != set_ and not (unset == set_)  # Google compares presence too
    gcls = google_class("pbjdefaults.Defaults")
    assert gcls(req=1) != gcls(req=1, i32=-5)
    assert unset == cls(req=1) and hash(unset) == hash(cls(req=1))
    assert "i32=None" in repr(unset) and "i32=-5" in repr(set_)
    for obj in (unset, set_):
        back = pickle.loads(pickle.dumps(obj))
        assert back == obj and pbj.has(back, "i32") is pbj.has(obj, "i32")


def test_repr_evaluates_back_to_an_equal_message():
    obj = Defaults(req=1, s="set", choice=pbj.OneOf("two", "t"))
    assert eval(repr(obj), {"Defaults": Defaults, "OneOf": pbj.OneOf, "Color": Color}) == obj


@pytest.mark.parametrize("kind", KINDS)
def test_replace_keeps_presence_and_none_unsets(kind, loaded):
    cls = _cls(kind, loaded)
    obj = cls(req=1, s="a")
    changed = pbj.replace(obj, i32=2)
    assert pbj.has(changed, "s") and changed.s == "a"
    assert not pbj.has(changed, "b") and changed.b is True  # still unset, reads its default
    assert pbj.has(changed, "i32") and changed.i32 == 2
    cleared = pbj.replace(changed, s=None)
    assert not pbj.has(cleared, "s") and cleared.s == 'héllo "q"\n'
    assert _both_writers(cleared) == b"\x08\x02\xb0\x01\x01"


@pytest.mark.parametrize("kind", KINDS)
def test_has_for_messages_oneofs_and_members(kind, loaded):
    cls, inner = _cls(kind, loaded), _cls(kind, loaded, "Inner")
    obj = cls(req=1, inner=inner(), choice=pbj.OneOf("two", "t"))
    assert pbj.has(obj, "inner") and not pbj.has(obj.inner, "name") and obj.inner.name == "x"
    assert pbj.has(obj, "choice") and pbj.has(obj, "two") and not pbj.has(obj, "one")
    assert not pbj.has(cls(req=1), "choice") and not pbj.has(cls(req=1), "one")
    g = google_class("pbjdefaults.Defaults")(req=1, two="t")
    assert g.HasField("two") and not g.HasField("one")


@pytest.mark.parametrize("kind", KINDS)
def test_has_refuses_fields_without_presence(kind, loaded):
    cls = _cls(kind, loaded)
    with pytest.raises(ValueError, match=r"Defaults\.many has no presence \(repeated\)"):
        pbj.has(cls(req=1), "many")
    with pytest.raises(ValueError, match="no field, oneof or oneof member named 'nope'"):
        pbj.has(cls(req=1), "nope")
    with pytest.raises(TypeError):
        pbj.has(cls, "i32")
    ed = loaded["pbjdefaults.ed.Ed"]
    with pytest.raises(ValueError, match=r"Ed\.implicit has no presence \(implicit presence\)"):
        pbj.has(ed(req=4), "implicit")


@pytest.mark.parametrize("kind", KINDS)
def test_a_required_field_with_a_default_is_still_missing_when_unset(kind, loaded):
    cls = _cls(kind, loaded)
    obj = cls()
    assert obj.req == 42 and not pbj.has(obj, "req")
    with pytest.raises(EncodeError, match=r"\$\.req"):
        pbj.encode(obj)
    assert pbj.encode(obj, allow_partial=True) == b""


@pytest.mark.parametrize("kind", KINDS)
def test_protojson_prints_set_fields_only(kind, loaded):
    cls, gcls = _cls(kind, loaded), google_class("pbjdefaults.Defaults")
    obj, g = cls(req=1, i32=-5, s="x"), gcls(req=1, i32=-5, s="x")
    assert pbj.to_dict(obj) == json_format.MessageToDict(g) == {"i32": -5, "s": "x", "req": 1}
    back = pbj.from_dict(cls, {"req": 1})
    assert not pbj.has(back, "i32") and back.i32 == -5 and back == cls(req=1)


@pytest.mark.parametrize("kind", KINDS)
def test_text_format_prints_set_fields_only(kind, loaded):
    cls = _cls(kind, loaded)
    assert pbj.to_text(cls(req=1)) == "req: 1\n"
    assert pbj.to_text(cls(req=1, b=True)) == "b: true\nreq: 1\n"
    back = pbj.from_text(cls, "req: 1")
    assert back == cls(req=1) and not pbj.has(back, "b") and back.b is True


def test_editions_explicit_fields_with_defaults(loaded):
    ed, g = loaded["pbjdefaults.ed.Ed"], google_class("pbjdefaults.ed.Ed")
    obj = ed()
    assert (obj.a, obj.s, obj.implicit, obj.req) == (g().a, g().s, g().implicit, g().req) == (11, "e", 0, 4)
    assert not pbj.has(obj, "a") and not g().HasField("a")
    assert _both_writers(ed(req=4, a=11)) == g(req=4, a=11).SerializeToString() == b"\x08\x0b\x20\x04"


def test_loaded_annotations_are_not_optional_for_fields_with_a_default(loaded):
    ann = loaded["pbjdefaults.Defaults"].__annotations__
    assert ann["i32"] is int and ann["s"] is str
    assert ann["plain"] == int | None


def test_stubs_type_a_field_with_a_default_without_none(loaded, tmp_path):
    from pbj.stubs import write_stubs

    write_stubs(loaded, tmp_path, "dstubs")
    text = next(tmp_path.rglob("pbjdefaults/__init__.pyi")).read_text()
    assert "def i32(_pbj_self) -> _pbj_b.int:" in text
    assert "def plain(_pbj_self) -> _pbj_b.int | None:" in text
    assert "i32: _pbj_b.int | None = ..." in text  # the constructor still takes None (unset)


def test_classes_without_declared_defaults_pay_nothing():
    @pbj.message
    class P3:
        a: int | None = pbj.field(1, "int32", optional=True)

    assert P3.__pbj_defaults__ == {} and type(P3.__dict__["a"]).__name__ == "member_descriptor"
    assert "raw_attr" not in pbj.source_of(P3) and "raw_attr" in pbj.source_of(Defaults)


@pytest.mark.parametrize(("spec", "match"), [
    (lambda: pbj.field(1, "int32", repeated=True, default=1), "singular scalar or enum"),
    (lambda: pbj.field(1, Inner, default=Inner()), "singular scalar or enum"),
    (lambda: pbj.field(1, "int32", default=1), "needs explicit presence"),
    (lambda: pbj.field(1, "int32", optional=True, default="x"), "does not fit"),
    (lambda: pbj.field(1, "uint32", optional=True, default=-1), "does not fit"),
])
def test_bad_declared_defaults_are_schema_errors(spec, match):
    with pytest.raises(SchemaError, match=match):
        pbj.message(type("Bad", (), {"__annotations__": {"a": "int"}, "a": spec()}))


def test_a_float_default_reads_its_float32_value_as_the_loaded_class_does(loaded):
    @pbj.message(full_name="pbjdefaults.Defaults", syntax="proto2")
    class Written:  # default=1.1 as the .proto writes it, not pre-rounded
        fl: float = pbj.field(11, "float", optional=True, default=1.1)

    google = google_class("pbjdefaults.Defaults")(req=1)
    assert Written().fl == loaded["pbjdefaults.Defaults"](req=1).fl == google.fl == 1.100000023841858
    assert pbj.fields(Written)[0].default == 1.100000023841858
    assert not pbj.has(Written(), "fl") and _both_writers(Written()) == b""
