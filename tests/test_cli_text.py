"""``pbj decode --text`` and ``pbj encode --from-text``, run as users run them, against protoc and Google."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import grpc_tools
import pytest
from google.protobuf import text_format

from tests.conftest import REPO
from tests.oracle import google_class, protoc

SCHEMA = """
    syntax = "proto3";
    package cli.text;
    import "google/protobuf/any.proto";
    message Inner { string s = 1; repeated Inner kids = 2; }
    message Outer {
      int32 a = 1;
      Inner inner = 2;
      repeated double xs = 3;
      map<string, float> weights = 4;
      bytes raw = 5;
      google.protobuf.Any any = 6;
      oneof pick { string word = 7; uint64 big = 8; }
    }
"""
BUILTIN = Path(grpc_tools.__file__).parent / "_proto"


def _run(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pbj", *args], input=stdin, capture_output=True,
                          cwd=REPO, timeout=300)


@pytest.fixture(scope="module")
def schema(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cli-text")
    proto = tmp / "cli_text_outer.proto"  # a file name of its own in Google's default pool
    proto.write_text(textwrap.dedent(SCHEMA))
    (tmp / "outer.binpb").write_bytes(protoc([proto], [tmp]))
    return tmp, proto


def _payload() -> bytes:
    g = google_class("cli.text.Outer")(a=-7, xs=[0.1, -0.0, 1e300, float("inf")], raw=b"\x00\xffz", big=2**64 - 1)
    g.inner.s = "h\u00e9llo \"you\""
    g.inner.kids.add().s = "kid"
    g.weights["b"] = 4294967296.0
    g.weights["a"] = 0.0
    g.any.Pack(google_class("cli.text.Inner")(s="packed"))
    # unknown fields: a varint, a fixed32 and a nested message (fields 100, 101, 102)
    return g.SerializeToString(deterministic=True) + bytes.fromhex("a00601ad0601000000b2060308ac02")


def test_decode_text_is_protoc_decode(schema):
    tmp, proto = schema
    payload = _payload()
    ours = _run("decode", "--descriptor-set", str(tmp / "outer.binpb"), "--type", "cli.text.Outer", "--text", "-",
                stdin=payload)
    assert ours.returncode == 0, ours.stderr.decode()
    theirs = subprocess.run([sys.executable, "-m", "grpc_tools.protoc", f"-I{tmp}", f"-I{BUILTIN}",
                             "--decode=cli.text.Outer", str(proto)], input=payload, capture_output=True, check=True)
    assert ours.stdout.decode() == theirs.stdout.decode()
    assert "100: 1\n" in ours.stdout.decode() and "weights {" in ours.stdout.decode()


def test_encode_from_text_is_googles_parse(schema):
    tmp, _ = schema
    text = textwrap.dedent("""\
        # a comment
        a: 0x10
        inner < s: 'one' "two" kids [{s: "k1"}, {}] >
        xs: [1, -inf, .5e1]
        weights { key: "w" value: 1.5f }
        raw: "\\001\\x02\\u00e9"
        any { [type.googleapis.com/cli.text.Inner] { s: "in any" } }
        word: "w";
        """)
    out = _run("encode", "--descriptor-set", str(tmp / "outer.binpb"), "--type", "cli.text.Outer", "--from-text",
               stdin=text.encode())
    assert out.returncode == 0, out.stderr.decode()
    expected = text_format.Parse(text, google_class("cli.text.Outer")())
    assert google_class("cli.text.Outer").FromString(out.stdout) == expected


def test_text_round_trip_through_both_commands(schema):
    tmp, _ = schema
    args = ["--descriptor-set", str(tmp / "outer.binpb"), "--type", "cli.text.Outer"]
    payload = _payload()
    text = _run("decode", *args, "--text", "-", stdin=payload).stdout
    # the unknown fields (written last) are shown but cannot be read back ("Unknown Fields"): drop them
    known, unknown = text.split(b"\n100: ")
    assert unknown.startswith(b"1\n101: 0x00000001\n102 {")
    again = _run("encode", *args, "--from-text", "-", stdin=known)
    assert again.returncode == 0, again.stderr.decode()
    outer = google_class("cli.text.Outer")
    original = outer.FromString(payload)
    original.DiscardUnknownFields()
    assert outer.FromString(again.stdout) == original


@pytest.mark.parametrize("text, needle", [
    (b"a: 1\nb: 2", 'no field named "b" in message cli.text.Outer - at `$` (line 2, column 1)'),
    (b"inner { s: 5 }", 'expected a string for string, found "5" - at `$.inner.s` (line 1, column 12)'),
    (b"a: \xff", "not valid UTF-8"),
])
def test_bad_text_is_one_clear_line(schema, text, needle):
    tmp, _ = schema
    out = _run("encode", "--descriptor-set", str(tmp / "outer.binpb"), "--type", "cli.text.Outer", "--from-text",
               stdin=text)
    assert out.returncode == 1
    err = out.stderr.decode()
    assert err.startswith("pbj: error: cannot read - as cli.text.Outer text-format: ")
    assert needle in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_a_message_missing_a_required_field_is_printed_and_written_with_a_warning(tmp_path, capsys):
    # protoc --decode and --encode print / write such a message, with "warning:  Input message is missing
    # required fields:  req" on stderr; pbj decode and encode refused it ("required field not set")
    from pbj import cli

    (tmp_path / "req.proto").write_text('syntax = "proto2"; package cli.req; message Leaf { optional int32 a = 1; }\n'
                                        'message M { optional int32 p = 1; required Leaf req = 2; }\n')
    schema = ["--proto", str(tmp_path / "req.proto"), "-I", str(tmp_path), "--type", "cli.req.M"]
    (tmp_path / "partial.bin").write_bytes(b"\x08\x01")
    warning = "pbj: warning: the message is incomplete: required field not set: $.req\n"
    for extra, printed in ((["--text"], "p: 1\n"), ([], '{\n  "p": 1\n}\n')):
        assert cli.main(["decode", *schema, *extra, str(tmp_path / "partial.bin")]) == 0
        assert capsys.readouterr() == (printed, warning)
        (tmp_path / "in.txt").write_text(printed)
        out = tmp_path / "out.bin"
        assert cli.main(["encode", *schema, *(["--from-text"] if extra else []), "-o", str(out),
                         str(tmp_path / "in.txt")]) == 0
        assert out.read_bytes() == b"\x08\x01" and capsys.readouterr() == ("", warning)
    (tmp_path / "whole.bin").write_bytes(b"\x08\x01\x12\x00")  # complete: no warning
    assert cli.main(["decode", *schema, "--text", str(tmp_path / "whole.bin")]) == 0
    assert capsys.readouterr() == ("p: 1\nreq {\n}\n", "")
