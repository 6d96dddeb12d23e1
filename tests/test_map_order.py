"""What docs/usage-guide.md ("Which bytes") says about map order, checked against the installed
``protobuf``: Google's pure-Python backend gives pbj's bytes; upb (the default backend) orders the
entries of a map of two or more entries otherwise, as described there."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import pbj
from pbj.textformat.raw import walk_fields
from tests.conftest import REPO
from tests.oracle import protoc_sources

SOURCE = """
syntax = "proto3";
package mo;
message M {
  map<int32, int32> i = 1;
  map<string, int32> s = 2;
  map<uint64, int32> u = 3;
  map<bool, int32> b = 4;
  map<sint64, int32> z = 5;
}
"""
KEYS = {"i": [1, -1, 5, 0, 2**31 - 1], "s": ["z", "aa", "b", "abc", "", "ba", "a", "é"],
        "u": [3, 2**64 - 1, 0], "b": [True, False], "z": [-2, 3, 0]}
PBJ_ORDER = {"i": [-1, 0, 1, 5, 2**31 - 1], "s": ["", "a", "aa", "abc", "b", "ba", "z", "é"],
             "u": [0, 3, 2**64 - 1], "b": [False, True], "z": [-2, 0, 3]}
UPB_ORDER = {"i": [-1, 2**31 - 1, 5, 1, 0], "s": ["aa", "abc", "a", "ba", "b", "z", "é", ""],
             "u": [2**64 - 1, 3, 0], "b": [True, False], "z": [-2, 3, 0]}

#: Builds the message with Google's classes and prints the hex of its deterministic encoding.
GOOGLE = """
import sys
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.internal import api_implementation
pool = descriptor_pool.DescriptorPool()
for f in descriptor_pb2.FileDescriptorSet.FromString(bytes.fromhex(sys.argv[1])).file:
    pool.Add(f)
M = message_factory.GetMessageClass(pool.FindMessageTypeByName("mo.M"))
m = M()
for name, keys in KEYS.items():
    for k in keys:
        getattr(m, name)[k] = 7
print(api_implementation.Type(), m.SerializeToString(deterministic=True).hex())
"""


@pytest.fixture(scope="module")
def schema(tmp_path_factory):
    _, data = protoc_sources(tmp_path_factory.mktemp("maporder"), {"mo.proto": SOURCE})
    return data, pbj.load_descriptor_set(data)["mo.M"]


def _google(data: bytes, backend: str) -> tuple[str, bytes]:
    env = dict(os.environ, PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=backend)
    out = subprocess.run([sys.executable, "-c", f"KEYS = {KEYS!r}\n{GOOGLE}", data.hex()], capture_output=True,
                         text=True, env=env, cwd=REPO, timeout=300, check=True)
    kind, hexed = out.stdout.split()
    return kind, bytes.fromhex(hexed)


def _order(M: type, data: bytes) -> dict[str, list]:
    out: dict[str, list] = {name: [] for name in KEYS}
    for _number, _wt, start, stop, _v in walk_fields(data):
        entry = pbj.decode(M, data[start:stop])
        for name in KEYS:
            out[name] += list(getattr(entry, name))
    return out


def test_pbj_sorts_keys_ascending(schema):
    _, M = schema
    msg = M(**{name: {k: 7 for k in keys} for name, keys in KEYS.items()})
    data = pbj.encode(msg)
    assert data == pbj.encode(msg, reverse=True)
    assert _order(M, data) == PBJ_ORDER


def test_googles_pure_python_backend_gives_pbjs_bytes(schema):
    data, M = schema
    kind, google = _google(data, "python")
    assert kind == "python"
    assert google == pbj.encode(pbj.decode(M, google)) == pbj.encode(pbj.decode(M, google), reverse=True)


def test_upb_orders_map_entries_as_documented(schema):
    data, M = schema
    kind, google = _google(data, "upb")
    assert kind == "upb"
    assert _order(M, google) == UPB_ORDER
    assert pbj.decode(M, google) == pbj.decode(M, pbj.encode(pbj.decode(M, google)))  # same message either way
    assert google != pbj.encode(pbj.decode(M, google))
