"""Enum values the loader renames to make Python member names keep their schema names in ProtoJSON and text.

``value`` -> ``value_``, ``name`` -> ``name_``, ``mro`` -> ``mro_``, ``_X`` -> ``V_X``
(:func:`pbj.loader.names.enum_member_names`): the class lists them in
``__pbj_proto_names__``, and both text forms write and read the schema's name,
as Google's ``json_format`` and ``text_format`` (the oracle) do.
"""

from __future__ import annotations

import pytest
from google.protobuf import json_format, text_format

import pbj
from tests.oracle import google_class, protoc_sources

PROTO = """
syntax = "proto3";
package pbjenumnames;
enum Odd {
  option allow_alias = true;
  value = 0;
  _X = 1;
  name = 2;
  mro = 3;
  PLAIN = 4;
  ALSO_PLAIN = 4;
  _ = 5;
}
message Holder {
  Odd odd = 1;
  repeated Odd many = 2;
  map<string, Odd> by_key = 3;
}
"""

SCHEMA_NAMES = ["value", "_X", "name", "mro", "PLAIN", "_"]


@pytest.fixture(scope="module")
def holder(tmp_path_factory):
    ns = pbj.load_descriptor_set(protoc_sources(tmp_path_factory.mktemp("enumnames"), {"enumnames.proto": PROTO})[1])
    return ns["pbjenumnames.Holder"], google_class("pbjenumnames.Holder")


def test_the_loader_lists_the_names_it_changed(holder):
    cls, _ = holder
    odd = pbj.fields(cls)[0].type
    assert odd.__pbj_proto_names__ == {"value_": "value", "V_X": "_X", "name_": "name", "mro_": "mro", "V_": "_"}
    assert odd.value_ == 0 and odd.V_X == 1


@pytest.mark.parametrize("number", range(6))
def test_json_writes_and_reads_the_schema_name(holder, number):
    cls, google = holder
    odd = pbj.fields(cls)[0].type
    name = SCHEMA_NAMES[number]
    obj = cls(odd=odd(number), many=(odd(number), odd(0)), by_key={"k": odd(number)})
    g = google.FromString(pbj.encode(obj))
    want = json_format.MessageToDict(g, always_print_fields_with_no_presence=False)
    assert pbj.to_dict(obj) == want
    assert pbj.to_dict(obj)["many"] == [name, "value"]
    assert pbj.from_json(cls, pbj.to_json(obj)) == obj
    assert pbj.from_dict(cls, {"odd": name}).odd == number
    with pytest.raises(pbj.JSONError, match="unknown name"):
        pbj.from_dict(cls, {"odd": {"value": "value_", "_X": "V_X"}.get(name, name + "_py")})


@pytest.mark.parametrize("number", range(6))
def test_text_writes_and_reads_the_schema_name(holder, number):
    cls, google = holder
    odd = pbj.fields(cls)[0].type
    name = SCHEMA_NAMES[number]
    # (a map value at 0: pbj prints it, as C++ does; upb's Python printer leaves it out)
    obj = cls(odd=odd(number), many=(odd(number),), by_key={"k": odd(number)} if number else {})
    g = google.FromString(pbj.encode(obj))
    assert pbj.to_text(obj) == text_format.MessageToString(g)
    assert f"many: {name}\n" in pbj.to_text(obj)
    assert pbj.from_text(cls, pbj.to_text(obj)) == obj
    assert pbj.from_text(cls, f"odd: {name}").odd == number
    text_format.Parse(f"odd: {name}", google())  # Google reads the same text


def test_the_alias_is_read_under_its_schema_name(holder):
    cls, _ = holder
    assert pbj.from_dict(cls, {"odd": "ALSO_PLAIN"}).odd == 4
    assert pbj.from_text(cls, "odd: ALSO_PLAIN").odd == 4
    assert pbj.to_dict(cls(odd=4)) == {"odd": "PLAIN"}
