"""Editions features a hand-declared class states where they cannot apply, or that a legacy
keyword contradicts, are SchemaErrors, as protoc refuses the same ``.proto`` ("Feature Settings
for Editions"). Each case is compiled with protoc too, which must refuse it.
"""

from __future__ import annotations

from typing import Any

import pytest

import pbj
from tests.oracle import protoc

#: (field kwargs, its .proto field, pbj's message) -- protoc refuses each .proto field
CASES = {
    "PACKED on a repeated string": (
        {"type": "string", "repeated": True, "features": {"repeated_field_encoding": "PACKED"}},
        "repeated string s = 1 [features.repeated_field_encoding = PACKED];", "can be PACKED"),
    "repeated_field_encoding on a singular field": (
        {"features": {"repeated_field_encoding": "EXPANDED"}},
        "int32 s = 1 [features.repeated_field_encoding = EXPANDED];", "only repeated fields"),
    "DELIMITED on an int32": (
        {"features": {"message_encoding": "DELIMITED"}},
        "int32 s = 1 [features.message_encoding = DELIMITED];", "only message fields"),
    "utf8_validation on an int32": (
        {"features": {"utf8_validation": "NONE"}},
        "int32 s = 1 [features.utf8_validation = NONE];", "only string fields"),
}


def _declare(**kw):
    ptype = kw.pop("type", "int32")
    body = {"__annotations__": {"s": Any}, "s": pbj.field(1, ptype, **kw)}
    return pbj.message(edition="2023")(type("Z", (), body))


@pytest.mark.parametrize("name", list(CASES))
def test_a_feature_that_does_not_apply_is_refused_as_protoc_does(name, tmp_path):
    kw, proto_field, message = CASES[name]
    with pytest.raises(pbj.SchemaError, match=message):
        _declare(**kw)
    (tmp_path / "bad.proto").write_text(f'edition = "2023";\npackage pbjbad;\nmessage Z {{ {proto_field} }}\n')
    with pytest.raises(RuntimeError, match="protoc failed"):
        protoc(["bad.proto"], [tmp_path])


def test_a_oneof_member_cannot_set_field_presence(tmp_path):
    with pytest.raises(pbj.SchemaError, match="oneof member cannot set field_presence"):
        pbj.message(edition="2023")(type("Z", (), {
            "__annotations__": {"o": Any},
            "o": pbj.oneof(a=(1, "int32", {"features": {"field_presence": "EXPLICIT"}}))}))
    (tmp_path / "bad.proto").write_text('edition = "2023";\npackage pbjbad2;\n'
                                        "message Z { oneof o { int32 a = 1 [features.field_presence = EXPLICIT]; } }\n")
    with pytest.raises(RuntimeError, match="protoc failed"):
        protoc(["bad.proto"], [tmp_path])


@pytest.mark.parametrize(("packed", "encoding"), [(True, "EXPANDED"), (False, "PACKED")])
def test_packed_contradicting_repeated_field_encoding_is_refused(packed, encoding):
    with pytest.raises(pbj.SchemaError, match=f"packed={packed} contradicts repeated_field_encoding {encoding}"):
        _declare(repeated=True, packed=packed, features={"repeated_field_encoding": encoding})
    agreeing = _declare(repeated=True, packed=not packed, features={"repeated_field_encoding": encoding})
    data = pbj.encode(agreeing(s=(1, 2)))
    assert data == pbj.encode(agreeing(s=(1, 2)), reverse=True)
    assert data == bytes.fromhex("0801 0802" if encoding == "EXPANDED" else "0a020102")


def test_group_contradicting_message_encoding_is_refused():
    @pbj.message(edition="2023")
    class Inner:
        v: int = pbj.field(1, "int32")

    with pytest.raises(pbj.SchemaError, match="group=True contradicts message_encoding LENGTH_PREFIXED"):
        pbj.message(edition="2023")(type("Z", (), {"__annotations__": {"m": Any}, "m": pbj.field(
            1, Inner, group=True, features={"message_encoding": "LENGTH_PREFIXED"})}))


@pytest.mark.parametrize("syntax", ["proto3", "proto2"])
def test_an_edition_with_a_syntax_is_refused(syntax, tmp_path):
    with pytest.raises(pbj.SchemaError, match="a syntax or an edition, not both"):
        pbj.message(edition="2023", syntax=syntax)(type("Y", (), {"__annotations__": {"a": int},
                                                                   "a": pbj.field(1, "int32")}))
    with pytest.raises(pbj.SchemaError, match="'proto4'"):
        pbj.message(syntax="proto4")(type("Y", (), {}))
    (tmp_path / "both.proto").write_text(f'syntax = "{syntax}";\nedition = "2023";\nmessage Y {{ int32 a = 1; }}\n')
    with pytest.raises(RuntimeError, match="protoc failed"):
        protoc(["both.proto"], [tmp_path])
