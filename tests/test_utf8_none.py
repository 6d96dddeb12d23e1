"""Strings that are not UTF-8-validated (proto2, editions ``utf8_validation = NONE``) keep any bytes.

C++, Java, Go and upb do not check proto2 strings; pbj decodes them with ``surrogateescape`` and
encodes them back the same way, so invalid bytes round-trip exactly (both writers, the text format),
for loaded and hand-declared classes. ProtoJSON cannot hold such bytes and refuses them.
"""

from __future__ import annotations

import pytest

import pbj
from tests.oracle import google_class, protoc_sources

PROTO = """
syntax = "proto2";
package pbjutf8;
message U {
  optional string s = 1;
  repeated string r = 2;
  map<string, string> m = 3;
  oneof o { string w = 4; }
}
"""
EDITIONS = """
edition = "2023";
package pbjutf8.ed;
message V {
  string raw = 1 [features.utf8_validation = NONE];
  string checked = 2;
}
"""


@pbj.message(full_name="pbjutf8.U", syntax="proto2")
class U:
    s: str | None = pbj.field(1, "string", optional=True)
    r: tuple[str, ...] = pbj.field(2, "string", repeated=True)
    m: pbj.FrozenMap[str, str] = pbj.map_field(3, "string", "string")
    o: pbj.OneOf | None = pbj.oneof(w=(4, "string"))


@pbj.message(full_name="pbjutf8.ed.V", edition="2023")
class V:
    raw: str | None = pbj.field(1, "string", features={"utf8_validation": "NONE"})
    checked: str | None = pbj.field(2, "string")


@pbj.message
class P3:
    s: str = pbj.field(1, "string")


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    d = tmp_path_factory.mktemp("utf8")
    paths, _ = protoc_sources(d, {"u.proto": PROTO, "v.proto": EDITIONS})
    return pbj.load_proto(paths, include=[d])


BAD = b"\xff\xc3(\xed\xa0\x80\xf4\x90\x80\x80"  # invalid start byte, truncated, a surrogate, above U+10FFFF
#: every string position of U holding invalid UTF-8: s, r[0], a map key and value, the oneof member
DATA = (b"\x0a" + bytes([len(BAD)]) + BAD + b"\x12\x01\x80" + b"\x1a\x08\x0a\x02\xc0\xaf\x12\x02\xfe\xff"
        + b"\x22\x01\xff")


def _u(kind, loaded):
    return U if kind == "declared" else loaded["pbjutf8.U"]


@pytest.mark.parametrize("kind", ["declared", "loaded"])
def test_invalid_bytes_round_trip_exactly_under_both_writers(kind, loaded):
    cls = _u(kind, loaded)
    obj = pbj.decode(cls, DATA)
    assert obj.s == BAD.decode("utf-8", "surrogateescape") and obj.r == ("\udc80",)
    assert obj.m == {"\udcc0\udcaf": "\udcfe\udcff"} and obj.o == pbj.OneOf("w", "\udcff")
    assert pbj.encode(obj) == pbj.encode(obj, reverse=True) == DATA
    g = google_class("pbjutf8.U").FromString(DATA)  # Google's runtime does not check proto2 strings either
    assert g.SerializeToString() == DATA


@pytest.mark.parametrize("kind", ["declared", "loaded"])
def test_valid_utf8_reads_as_plain_text(kind, loaded):
    cls = _u(kind, loaded)
    g = google_class("pbjutf8.U")(s="héllo", r=["ü"], w="€")
    obj = pbj.decode(cls, g.SerializeToString())
    assert (obj.s, obj.r, obj.o) == ("héllo", ("ü",), pbj.OneOf("w", "€"))
    assert pbj.encode(obj) == pbj.encode(obj, reverse=True) == g.SerializeToString()
    assert pbj.from_json(cls, pbj.to_json(obj)) == obj


@pytest.mark.parametrize("kind", ["declared", "loaded"])
def test_text_format_writes_the_bytes_escaped_and_reads_them_back(kind, loaded):
    cls = _u(kind, loaded)
    obj = pbj.decode(cls, DATA)
    text = pbj.to_text(obj)
    assert text.startswith('s: "\\377\\303(\\355\\240\\200\\364\\220\\200\\200"\nr: "\\200"\n')
    back = pbj.from_text(cls, text)
    assert back == obj and pbj.encode(back) == DATA


@pytest.mark.parametrize("kind", ["declared", "loaded"])
def test_protojson_refuses_bytes_that_are_not_utf8(kind, loaded):
    cls = _u(kind, loaded)
    with pytest.raises(pbj.EncodeError, match="not valid UTF-8") as err:
        pbj.to_json(cls(s="\udcff"))
    assert err.value.path == ["s"]
    with pytest.raises(pbj.EncodeError, match="not valid UTF-8"):
        pbj.to_dict(cls(m={"k": "\udc80"}))


@pytest.mark.parametrize("kind", ["declared", "loaded"])
def test_the_constructor_takes_escaped_bytes_but_no_other_lone_surrogate(kind, loaded):
    cls = _u(kind, loaded)
    assert pbj.encode(cls(s="a\udcff")) == b"\x0a\x02a\xff"
    with pytest.raises(ValueError, match="cannot be encoded as UTF-8"):
        cls(s="\ud800")


@pytest.mark.parametrize("kind", ["declared", "loaded"])
@pytest.mark.parametrize("field", ["s", "r", "m", "w"])
def test_the_constructor_refuses_escaped_bytes_that_spell_valid_utf8(kind, loaded, field):
    cls = _u(kind, loaded)
    spelled = "\udcc3\udca9"  # the bytes c3 a9: "é", which decoding gives back as "é"
    value = {"s": spelled, "r": ("x", spelled), "m": {"k": spelled}, "w": pbj.OneOf("w", spelled)}[field]
    with pytest.raises(ValueError, match="spell valid UTF-8") as err:
        cls(**{"o" if field == "w" else field: value})
    assert "U." in str(err.value)  # names class and field
    # escapes of invalid UTF-8 next to valid text round-trip, as Google keeps the bytes
    ok = cls(s="é\udcc3(")
    data = pbj.encode(ok)
    assert data == pbj.encode(ok, reverse=True) == b"\x0a\x04\xc3\xa9\xc3("
    assert google_class("pbjutf8.U").FromString(data).SerializeToString() == data
    assert pbj.decode(cls, data) == ok


@pytest.mark.parametrize("kind", ["declared", "loaded"])
def test_editions_utf8_validation_none_and_verify(kind, loaded):
    cls = V if kind == "declared" else loaded["pbjutf8.ed.V"]
    data = b"\x0a\x02\xc3\x28"
    obj = pbj.decode(cls, data)
    assert obj.raw == "\udcc3(" and pbj.encode(obj) == pbj.encode(obj, reverse=True) == data
    assert google_class("pbjutf8.ed.V").FromString(data).SerializeToString() == data
    with pytest.raises(pbj.DecodeError, match="invalid UTF-8"):
        pbj.decode(cls, b"\x12\x02\xc3\x28")  # the VERIFY field
    with pytest.raises(ValueError, match="cannot be encoded as UTF-8"):
        cls(checked="\udcc3")


def test_proto3_strings_are_still_validated():
    with pytest.raises(pbj.DecodeError, match="invalid UTF-8"):
        pbj.decode(P3, b"\x0a\x01\xff")
    with pytest.raises(ValueError, match="cannot be encoded as UTF-8"):
        P3(s="\udcff")
    assert "surrogateescape" not in pbj.source_of(P3) and "surrogateescape" in pbj.source_of(U)
