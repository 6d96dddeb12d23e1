"""Editions features stated on hand-declared classes give the loaded class's schema, bytes and behaviour.

``@pbj.message(edition=..., features=...)``, ``pbj.field(..., features=...)`` and
``@pbj.enum_features`` against the same schema compiled by protoc (pbj's loader and Google's runtime).
"""

from __future__ import annotations

import enum

import pytest

import pbj
from pbj.errors import SchemaError
from tests.oracle import google_class, protoc_sources

EDITIONS = """
edition = "2023";
package pbjfeat;
option features.field_presence = IMPLICIT;
enum Closed { option features.enum_type = CLOSED; C_ONE = 1; C_TWO = 2; }
message Sub { int32 x = 1; }
message F {
  int32 imp = 1;
  int32 exp = 2 [features.field_presence = EXPLICIT];
  int32 req = 3 [features.field_presence = LEGACY_REQUIRED];
  repeated int32 packed = 4;
  repeated int32 expanded = 5 [features.repeated_field_encoding = EXPANDED];
  string raw = 6 [features.utf8_validation = NONE];
  string checked = 7;
  Sub delim = 8 [features.message_encoding = DELIMITED];
  Sub plain = 9;
  Closed c = 10 [features.field_presence = EXPLICIT];
  map<string, string> m = 11 [features.utf8_validation = NONE];
  int32 d = 12 [features.field_presence = EXPLICIT, default = 9];
  oneof o { Sub od = 13 [features.message_encoding = DELIMITED]; string os = 14; }
}
"""


@pbj.enum_features(enum_type="CLOSED")
class Closed(enum.IntEnum):
    C_ONE = 1
    C_TWO = 2


@pbj.message(full_name="pbjfeat.Sub", edition="2023", features={"field_presence": "IMPLICIT"})
class Sub:
    x: int = pbj.field(1, "int32")


@pbj.message(full_name="pbjfeat.F", edition="2023", features={"field_presence": "IMPLICIT"})
class F:
    imp: int = pbj.field(1, "int32")
    exp: int | None = pbj.field(2, "int32", features={"field_presence": "EXPLICIT"})
    req: int | None = pbj.field(3, "int32", features={"field_presence": "LEGACY_REQUIRED"})
    packed: tuple[int, ...] = pbj.field(4, "int32", repeated=True)
    expanded: tuple[int, ...] = pbj.field(5, "int32", repeated=True,
                                          features={"repeated_field_encoding": "EXPANDED"})
    raw: str = pbj.field(6, "string", features={"utf8_validation": "NONE"})
    checked: str = pbj.field(7, "string")
    delim: Sub | None = pbj.field(8, Sub, features={"message_encoding": "DELIMITED"})
    plain: Sub | None = pbj.field(9, Sub)
    c: Closed | None = pbj.field(10, Closed, features={"field_presence": "EXPLICIT"})
    m: pbj.FrozenMap[str, str] = pbj.map_field(11, "string", "string", features={"utf8_validation": "NONE"})
    d: int = pbj.field(12, "int32", features={"field_presence": "EXPLICIT"}, default=9)
    o: pbj.OneOf | None = pbj.oneof(od=(13, Sub, {"features": {"message_encoding": "DELIMITED"}}),
                                    os=(14, "string"))


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    d = tmp_path_factory.mktemp("feat")
    paths, _ = protoc_sources(d, {"f.proto": EDITIONS})
    return pbj.load_proto(paths, include=[d])


_ATTRS = ("name", "number", "repeated", "packed", "optional", "required", "group", "utf8", "default", "oneof")


def test_declared_schema_is_the_loaded_schema(loaded):
    mine = {f.name: f for f in pbj.fields(F)}
    theirs = {f.name: f for f in pbj.fields(loaded["pbjfeat.F"])}
    assert mine.keys() == theirs.keys()
    for name, f in mine.items():
        assert {a: getattr(f, a) for a in _ATTRS} == {a: getattr(theirs[name], a) for a in _ATTRS}, name
    assert getattr(loaded["pbjfeat.Closed"], "__pbj_closed__", False) is Closed.__pbj_closed__ is True


def _value(kind, loaded):
    cls, sub = (F, Sub) if kind == "declared" else (loaded["pbjfeat.F"], loaded["pbjfeat.Sub"])
    return cls(imp=0, exp=0, req=7, packed=[1, 2], expanded=[3, 4], raw="\udcff", checked="ok",
               delim=sub(x=1), plain=sub(x=2), c=2, m={"k": "v"}, o=pbj.OneOf("od", sub(x=3)))


@pytest.mark.parametrize("kind", ["declared", "loaded"])
def test_same_bytes_as_google(kind, loaded):
    g = google_class("pbjfeat.F")(imp=0, exp=0, req=7, packed=[1, 2], expanded=[3, 4], checked="ok", c=2,
                                  m={"k": "v"})
    g.delim.x, g.plain.x, g.od.x = 1, 2, 3
    g.raw = "x"  # Google's Python refuses non-UTF-8 str: patch the bytes in below
    want = g.SerializeToString().replace(b"\x32\x01x", b"\x32\x01\xff")
    obj = _value(kind, loaded)
    assert pbj.encode(obj) == pbj.encode(obj, reverse=True) == want
    assert b"\x43\x08\x01\x44" in want and b"\x10\x00" in want and b"\x08" not in want[:2]  # group, exp=0
    assert pbj.decode(type(obj), want) == obj


@pytest.mark.parametrize("kind", ["declared", "loaded"])
def test_same_behaviour(kind, loaded):
    cls = F if kind == "declared" else loaded["pbjfeat.F"]
    unset = cls(req=1)
    assert unset.exp is None and unset.imp == 0 and unset.d == 9 and not pbj.has(unset, "d")
    with pytest.raises(ValueError, match="closed enum"):
        cls(req=1, c=5)
    kept = pbj.decode(cls, b"\x18\x01\x50\x05")  # c = 5: not a member of the closed enum
    assert kept.c is None and pbj.unknown_fields(kept) == b"\x50\x05"
    with pytest.raises(pbj.EncodeError, match=r"\$\.req"):
        pbj.encode(cls())
    with pytest.raises(pbj.DecodeError, match="invalid UTF-8"):
        pbj.decode(cls, b"\x18\x01\x3a\x01\xff")  # checked is VERIFY
    assert pbj.decode(cls, b"\x18\x01\x5a\x06\x0a\x01\xff\x12\x01\xfe").m == {"\udcff": "\udcfe"}


def _declare(message_kw, field_kw):
    field_kw = dict(field_kw)
    body = {"__annotations__": {"a": "Any"}, "a": pbj.field(1, field_kw.pop("type", "int32"), **field_kw)}
    return pbj.message(type("Bad", (), body), **{"edition": "2023", **message_kw})


@pytest.mark.parametrize(("message_kw", "field_kw", "match"), [
    ({"edition": None, "features": {"field_presence": "IMPLICIT"}}, {}, "features need an edition"),
    ({"edition": None}, {"features": {"utf8_validation": "NONE"}}, "features need an edition"),
    ({"edition": "2020"}, {}, "edition '2020' is not supported"),
    ({"features": {"no_such": "X"}}, {}, "unknown feature 'no_such'"),
    ({"features": {"field_presence": "SOMETIMES"}}, {}, "must be one of"),
    ({"features": {"enum_type": "CLOSED"}}, {}, "enum_type is a feature of the enum"),
    ({}, {"features": {"field_presence": "IMPLICIT"}, "optional": True}, "contradict field_presence"),
    ({}, {"features": {"field_presence": "IMPLICIT"}, "type": Sub}, "cannot have implicit presence"),
    ({}, {"features": {"field_presence": "EXPLICIT"}, "repeated": True}, "no presence to set"),
    ({}, {"features": {"field_presence": "IMPLICIT"}, "default": 3}, "needs explicit presence"),
])
def test_bad_features_are_schema_errors(message_kw, field_kw, match):
    with pytest.raises(SchemaError, match=match):
        _declare(message_kw, field_kw)


def test_enum_features_checks_its_enum():
    with pytest.raises(SchemaError, match="IntEnum"):
        pbj.enum_features(int, enum_type="CLOSED")
    with pytest.raises(SchemaError, match="first value of an open enum must be zero"):
        pbj.enum_features(enum.IntEnum("Odd", {"A": 1}), enum_type="OPEN")
    with pytest.raises(SchemaError, match="must be one of"):
        pbj.enum_features(enum_type="AJAR")


def test_message_level_delimited_applies_to_message_fields_only():
    @pbj.message(edition="2023", features={"message_encoding": "DELIMITED"})
    class Mixed:
        sub: Sub | None = pbj.field(1, Sub)
        o: pbj.OneOf | None = pbj.oneof(e=(2, Closed), s=(3, "string"), m=(4, Sub))
        kv: pbj.FrozenMap[int, Sub] = pbj.map_field(5, "int32", Sub)

    groups = {f.name: f.group for f in pbj.fields(Mixed)}
    assert groups == {"sub": True, "e": False, "s": False, "m": True, "kv": False}
    obj = Mixed(sub=Sub(x=1), o=pbj.OneOf("e", Closed.C_TWO), kv={1: Sub(x=2)})
    assert pbj.encode(obj) == pbj.encode(obj, reverse=True) == bytes.fromhex("0b0801 0c 1002 2a06 0801 12020802")
