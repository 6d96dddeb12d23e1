"""The command line, run as users run it: ``python -m pbj ...`` in a subprocess."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from tests.conftest import REPO
from tests.oracle import google_class, protoc

SCHEMA = """
    syntax = "proto3";
    package cli.test;
    message Inner { string s = 1; }
    message Outer {
      int32 a = 1;
      Inner inner = 2;
      repeated int64 xs = 3;
      fixed64 f = 4;
      fixed32 g = 5;
      bytes raw = 6;
    }
"""


def _run(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pbj", *args], input=stdin, capture_output=True,
                          cwd=REPO, timeout=300)


@pytest.fixture(scope="module")
def schema(tmp_path_factory):
    """The test schema on disk, its descriptor set, and an encoding made by Google's protobuf."""
    tmp = tmp_path_factory.mktemp("cli")
    proto = tmp / "outer.proto"
    proto.write_text(textwrap.dedent(SCHEMA))
    data = protoc([proto], [tmp])
    (tmp / "outer.binpb").write_bytes(data)
    msg = google_class("cli.test.Outer")(a=150, inner={"s": "hi"}, xs=[1, 2], f=7, g=9, raw=b"\x00\xff")
    payload = msg.SerializeToString(deterministic=True)
    (tmp / "msg.bin").write_bytes(payload)
    return tmp, proto, payload


def test_demo():
    out = _run("demo")
    assert out.returncode == 0, out.stderr.decode()
    text = out.stdout.decode()
    assert "byte-exact: yes" in text
    assert "4,176,227 bytes" in text and "2,442 items" in text
    counts = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].replace(",", "").isdigit():
            counts[parts[0]] = int(parts[1].replace(",", ""))
    assert counts == {"state_changes": 814, "event_transaction": 812, "transaction_result": 812,
                      "block_header": 1, "event_header": 1, "round_header": 1, "block_proof": 1}
    for label in ("decode", "encode forward", "encode reverse"):
        assert any(line.startswith(label) and line.rstrip().endswith("MB/s") for line in text.splitlines())
    assert b"100%" in out.stderr  # the progress bar ran to the end


def test_decode_with_descriptor_set(schema):
    tmp, _, _ = schema
    out = _run("decode", "--descriptor-set", str(tmp / "outer.binpb"), "--type", "cli.test.Outer", "--text",
               str(tmp / "msg.bin"))
    assert out.returncode == 0, out.stderr.decode()
    lines = out.stdout.decode().splitlines()
    assert lines == ["a: 150", "inner {", '  s: "hi"', "}", "xs: 1", "xs: 2", "f: 7", "g: 9",
                     'raw: "\\000\\377"']


def test_decode_with_proto_from_stdin(schema):
    tmp, proto, payload = schema
    out = _run("decode", "--proto", str(proto), "-I", str(tmp), "--type", "cli.test.Outer", "--text", "-",
               stdin=payload)
    assert out.returncode == 0, out.stderr.decode()
    assert out.stdout.decode().splitlines()[0] == "a: 150"


def test_decode_default_output(schema):
    """JSON when pbj has it, otherwise the text form; either way the values appear."""
    tmp, _, _ = schema
    out = _run("decode", "--descriptor-set", str(tmp / "outer.binpb"), "--type", "cli.test.Outer",
               str(tmp / "msg.bin"))
    assert out.returncode == 0, out.stderr.decode()
    assert "150" in out.stdout.decode() and "hi" in out.stdout.decode()


def test_decode_raw(schema):
    tmp, _, _ = schema
    out = _run("decode-raw", str(tmp / "msg.bin"))
    assert out.returncode == 0, out.stderr.decode()
    # What `protoc --decode_raw` prints for these bytes (varints decimal, fixed values hex,
    # LEN values as nested messages or strings).
    assert out.stdout.decode().splitlines() == [
        "1: 150", "2 {", '  1: "hi"', "}", '3: "\\001\\002"', "4: 0x0000000000000007", "5: 0x00000009",
        '6: "\\000\\377"']


def test_decode_raw_matches_protoc():
    """Same text as `protoc --decode_raw` (the one grpcio-tools ships) on a Google-made encoding."""
    msg = google_class("cli.test.Outer")(a=-3, inner={"s": "hello, world"}, xs=[1, 300], f=2**64 - 1, g=1,
                                         raw=b"\x00\x01\x80")
    payload = msg.SerializeToString(deterministic=True)
    ours = _run("decode-raw", "-", stdin=payload)
    theirs = subprocess.run([sys.executable, "-m", "grpc_tools.protoc", "--decode_raw"], input=payload,
                            capture_output=True, check=True)
    assert ours.returncode == 0, ours.stderr.decode()
    assert ours.stdout.decode().splitlines() == theirs.stdout.decode().splitlines()


def test_decode_raw_groups():
    data = bytes.fromhex("0b" "1005" "0c" "1801")  # group 1 { 2: 5 } then 3: 1
    out = _run("decode-raw", "-", stdin=data)
    assert out.returncode == 0, out.stderr.decode()
    assert out.stdout.decode().splitlines() == ["1 {", "  2: 5", "}", "3: 1"]


@pytest.mark.parametrize("args, stdin, needle", [
    (["decode-raw", "-"], b"\x0a\x05ab", "truncated"),
    (["decode-raw", "/nonexistent/file.bin"], b"", "cannot read"),
    (["decode-raw", "-"], b"\x0f", "wire type"),
])
def test_decode_raw_errors(args, stdin, needle):
    out = _run(*args, stdin=stdin)
    assert out.returncode == 1
    err = out.stderr.decode()
    assert needle in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_decode_errors(schema):
    tmp, _, _ = schema
    cases = [
        (["--descriptor-set", str(tmp / "outer.binpb"), "--type", "cli.test.Nope", str(tmp / "msg.bin")], b"",
         "no message type"),
        (["--descriptor-set", str(tmp / "missing.binpb"), "--type", "cli.test.Outer"], b"", "cannot read"),
        (["--proto", str(tmp / "missing.proto"), "--type", "cli.test.Outer"], b"", "no such .proto file"),
        (["--descriptor-set", str(tmp / "outer.binpb"), "--type", "cli.test.Outer", "-"], b"\x12\x05ab",
         "cannot decode"),
        (["--descriptor-set", str(tmp / "msg.bin"), "--type", "cli.test.Outer", "-"], b"", "no message type"),
    ]
    for args, stdin, needle in cases:
        out = _run("decode", *args, stdin=stdin)
        err = out.stderr.decode()
        assert out.returncode == 1, args
        assert needle in err and "Traceback" not in err, err
        assert len(err.strip().splitlines()) == 1, err
