"""ProtoJSON key order: fields in field-number order, a set oneof member where its number falls.

That is the order Google's ``json_format`` prints (it walks ``ListFields()``,
sorted by field number), so pbj's JSON and Google's can be diffed line by line.
Checked on a schema with the field numbers of googleapis' ``HttpRule`` (its
oneof ``pattern`` is interleaved with ``body = 7``), and on random values of
every message of the loaded schemas (HAPI, ``pbj-it``, ``test_messages_proto3``).
"""

from __future__ import annotations

import json
import textwrap

import pytest
from google.protobuf import json_format

import pbj
from tests.oracle import google_class, protoc
from tests.test_loaded_differential import CASES, DEFAULT_CASES, _multi_entry_map, _run

# The field numbers of googleapis' google/api/http.proto HttpRule (written here, not copied).
HTTP = """
    syntax = "proto3";
    package order.api;
    message CustomPattern { string kind = 1; string path = 2; }
    message HttpRule {
      string selector = 1;
      oneof pattern {
        string get = 2;
        string put = 3;
        string post = 4;
        string delete = 5;
        string patch = 6;
        CustomPattern custom = 8;
      }
      string body = 7;
      string response_body = 12;
      repeated HttpRule additional_bindings = 11;
    }
    message Split {
      oneof a { int32 a1 = 1; int32 a9 = 9; }
      int32 middle = 5;
      oneof b { int32 b2 = 2; int32 b3 = 3; }
      int32 last = 10;
    }
"""


@pytest.fixture(scope="module")
def http(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("order")
    (tmp / "order_http.proto").write_text(textwrap.dedent(HTTP))
    return pbj.load_descriptor_set(protoc(["order_http.proto"], [tmp]))


def _pairs(text: str):
    """JSON text as nested lists of (key, value) pairs: key order kept and compared."""
    return json.loads(text, object_pairs_hook=list)


RULES = [
    {"selector": "a.B.Get", "get": "/v1/{name=items/*}",
     "additional_bindings": [{"post": "/v1/items", "body": "*"}], "response_body": "item"},
    {"custom": {"kind": "HEAD", "path": "/v1/x"}, "body": "b", "selector": "s"},
    {"patch": "/v1/p", "body": "*", "additional_bindings": [{"custom": {"kind": "K"}, "response_body": "r"}]},
    {"body": "only"},
]


@pytest.mark.parametrize("index", range(len(RULES)))
@pytest.mark.parametrize("proto_names", [False, True])
def test_http_rule_prints_as_google_prints_it(http, index, proto_names):
    g = google_class("order.api.HttpRule")(**RULES[index])
    x = pbj.decode(http["order.api.HttpRule"], g.SerializeToString())
    expected = json_format.MessageToJson(g, preserving_proto_field_name=proto_names, indent=2)
    assert pbj.to_json(x, proto_names=proto_names, indent=2) == expected


def test_a_set_oneof_member_sits_where_its_number_falls(http):
    Split = http["order.api.Split"]
    for a, b in [("a1", "b2"), ("a9", "b3")]:
        x = Split(a=pbj.OneOf(a, 1), b=pbj.OneOf(b, 2), middle=3, last=4)
        g = google_class("order.api.Split").FromString(pbj.encode(x))
        keys = [k for k, _ in _pairs(pbj.to_json(x))]
        assert keys == [k for k, _ in _pairs(json_format.MessageToJson(g))]
        assert keys == sorted(keys, key=lambda k: {"a1": 1, "b2": 2, "b3": 3, "middle": 5, "a9": 9, "last": 10}[k])


def test_get_comes_before_additional_bindings(http):
    x = pbj.from_json(http["order.api.HttpRule"], '{"additionalBindings": [{}], "get": "/x", "selector": "s"}')
    assert list(json.loads(pbj.to_json(x))) == ["selector", "get", "additionalBindings"]


def _same_order(cls, gcls, x) -> None:
    g = gcls.FromString(pbj.encode(x))
    try:
        expected = json_format.MessageToJson(g)
    except Exception:  # Google cannot print it (an Any of an unknown type ...): test_json_loaded checks that
        return
    mine = pbj.to_json(x)
    if _multi_entry_map(x):  # upb prints map entries in an order of its own
        assert json.loads(mine) == json.loads(expected)
    else:
        assert _pairs(mine) == _pairs(expected), (mine, expected)


@pytest.mark.parametrize("suite, name", DEFAULT_CASES, ids=[f"{s}:{n}" for s, n in DEFAULT_CASES])
def test_key_order_matches_google(suite, name):
    _run(suite, name, 2, _same_order)


@pytest.mark.slow
@pytest.mark.parametrize("suite, name", CASES, ids=[f"{s}:{n}" for s, n in CASES])
def test_key_order_matches_google_long(suite, name):
    _run(suite, name, 20, _same_order)
