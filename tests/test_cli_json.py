"""``pbj encode`` and ``pbj decode`` with ProtoJSON, run as users run them (``python -m pbj``).

Expected bytes and JSON come from Google's protobuf: ``json_format.Parse`` of
the same JSON text, serialized deterministically, and ``json_format.MessageToJson``
of the same bytes.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from google.protobuf import json_format

from tests.conftest import REPO
from tests.oracle import google_class, protoc

SCHEMA = """
    syntax = "proto3";
    package cli.json;
    import "google/protobuf/timestamp.proto";
    enum Kind { KIND_UNSET = 0; KIND_CREDIT = 1; }
    message Inner { string s = 1; repeated sint64 ids = 2; }
    message Outer {
      int32 a = 1;
      Inner inner = 2;
      uint64 big = 3;
      bytes raw = 4;
      Kind kind = 5;
      double ratio = 6;
      map<string, Inner> by_name = 7;
      oneof payer { string payer_name = 8; int64 payer_id = 9; }
      google.protobuf.Timestamp at = 10;
      optional bool flag = 11;
    }
"""

#: JSON inputs, canonical and not (proto names, numbers as strings, URL-safe base64, enum numbers).
INPUTS = [
    {"a": 150, "inner": {"s": "hi", "ids": ["-1", "2"]}, "big": "18446744073709551615", "raw": "AP8=",
     "kind": "KIND_CREDIT", "ratio": -0.0, "byName": {"x": {"s": "y"}}, "payerId": "42",
     "at": "1972-01-01T10:00:20.021Z", "flag": False},
    {"a": "-7", "big": 1e3, "raw": "_-8", "kind": 1, "ratio": "NaN", "payer_name": "\u00e9\U0001F600",
     "by_name": {}, "at": "2000-02-29T23:59:59.5+01:00"},
    {},
]


def _run(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pbj", *args], input=stdin, capture_output=True,
                          cwd=REPO, timeout=300)


@pytest.fixture(scope="module")
def schema(tmp_path_factory):
    """The schema as a .proto file and as a descriptor set on disk."""
    tmp = tmp_path_factory.mktemp("cli-json")
    proto = tmp / "cli_json_outer.proto"  # no other test adds this file name to the default pool
    proto.write_text(textwrap.dedent(SCHEMA))
    (tmp / "outer.binpb").write_bytes(protoc([proto], [tmp]))
    return tmp, proto


def _schema_args(schema, how: str) -> list[str]:
    tmp, proto = schema
    if how == "descriptor-set":
        return ["--descriptor-set", str(tmp / "outer.binpb")]
    return ["--proto", str(proto), "-I", str(tmp)]


@pytest.mark.parametrize("how, index", [*(("descriptor-set", i) for i in range(len(INPUTS))), ("proto", 1)])
def test_encode_json_from_stdin_gives_googles_bytes(schema, how, index):
    text = json.dumps(INPUTS[index], ensure_ascii=False)
    expected = json_format.Parse(text, google_class("cli.json.Outer")()).SerializeToString(deterministic=True)
    out = _run("encode", *_schema_args(schema, how), "--type", "cli.json.Outer", stdin=text.encode())
    assert out.returncode == 0, out.stderr.decode()
    assert out.stdout == expected
    assert out.stderr == b""


def test_encode_json_from_a_file(schema):
    tmp, _ = schema
    path = tmp / "in.json"
    path.write_text(json.dumps(INPUTS[0]))
    expected = json_format.Parse(path.read_text(), google_class("cli.json.Outer")()).SerializeToString(
        deterministic=True)
    out = _run("encode", *_schema_args(schema, "descriptor-set"), "--type", "cli.json.Outer", str(path))
    assert out.returncode == 0, out.stderr.decode()
    assert out.stdout == expected


@pytest.mark.parametrize("index", range(len(INPUTS)))
def test_decode_prints_googles_json(schema, index):
    gmsg = json_format.Parse(json.dumps(INPUTS[index]), google_class("cli.json.Outer")())
    data = gmsg.SerializeToString(deterministic=True)
    out = _run("decode", *_schema_args(schema, "descriptor-set"), "--type", "cli.json.Outer", "-", stdin=data)
    assert out.returncode == 0, out.stderr.decode()
    assert json.loads(out.stdout) == json.loads(json_format.MessageToJson(gmsg))


def test_encode_then_decode_round_trips(schema):
    args = [*_schema_args(schema, "proto"), "--type", "cli.json.Outer"]
    data = _run("encode", *args, stdin=json.dumps(INPUTS[0]).encode()).stdout
    out = _run("decode", *args, stdin=data)
    assert out.returncode == 0, out.stderr.decode()
    gmsg = json_format.Parse(json.dumps(INPUTS[0]), google_class("cli.json.Outer")())
    assert json.loads(out.stdout) == json.loads(json_format.MessageToJson(gmsg))


@pytest.mark.parametrize("text, needle", [
    ('{"a": 1.5}', "expected an integer for int32, got 1.5 - at `$.a`"),
    ('{"inner": {"ids": ["x"]}}', "at `$.inner.ids[0]`"),
    ('{"nope": 1}', "unknown field 'nope'"),
    ('{"a": 1,\n "a": 2}', "duplicate key 'a'"),
    ('{"a": ', "invalid JSON"),
    ('{"payerId": "1", "payerName": "x"}', "oneof"),
    ('{"raw": "A"}', "base64"),
    ("\xff", "invalid JSON"),
])
def test_bad_json_is_one_clear_line(schema, text, needle):
    with pytest.raises(json_format.ParseError):  # Google rejects it too
        json_format.Parse(text, google_class("cli.json.Outer")())
    out = _run("encode", *_schema_args(schema, "descriptor-set"), "--type", "cli.json.Outer",
               stdin=text.encode("latin-1"))
    assert out.returncode == 1
    assert out.stdout == b""
    lines = out.stderr.decode().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("pbj: error: cannot read - as cli.json.Outer JSON: "), lines[0]
    assert needle in lines[0], lines[0]


def test_encode_unknown_type_is_one_line(schema):
    out = _run("encode", *_schema_args(schema, "descriptor-set"), "--type", "cli.json.Nope", stdin=b"{}")
    assert out.returncode == 1
    assert out.stderr.decode().splitlines() == ["pbj: error: no message type 'cli.json.Nope' in the schema"]


def test_encode_needs_a_schema_and_a_type():
    out = _run("encode", "--type", "x.Y", stdin=b"{}")
    assert out.returncode == 2
    assert b"--descriptor-set" in out.stderr
