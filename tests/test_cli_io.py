"""The command line's input and output edges, run as users run them (``python -m pbj`` in a subprocess).

Gzip input read as its contents, the count of unknown fields JSON leaves out,
and ``pbj encode`` refusing to write binary to a terminal.
"""

from __future__ import annotations

import gzip
import json
import os
import pty
import subprocess
import sys
import textwrap

import pytest

from tests.conftest import REPO
from tests.oracle import google_class, protoc

DATA = REPO / "pbj" / "data"
BLOCK_GZ = DATA / "000000000000000000000000000000497558.blk.gz"
HAPI = DATA / "hapi-v0.55.0.binpb"
BLOCK = "com.hedera.hapi.block.stream.Block"

SCHEMA = """
    syntax = "proto3";
    package cli.io;
    message Inner { string s = 1; }
    message Outer { int32 a = 1; Inner inner = 2; repeated int64 xs = 3; }
"""


def _run(*args: str, stdin: bytes = b"", **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pbj", *args], input=stdin, capture_output=True,
                          cwd=REPO, timeout=300, **kw)


@pytest.fixture(scope="module")
def schema(tmp_path_factory):
    """The schema's descriptor set on disk, a payload made by Google's protobuf, and the same gzipped."""
    tmp = tmp_path_factory.mktemp("cli_io")
    proto = tmp / "cli_io_outer.proto"
    proto.write_text(textwrap.dedent(SCHEMA))
    (tmp / "outer.binpb").write_bytes(protoc([proto], [tmp]))
    payload = google_class("cli.io.Outer")(a=150, inner={"s": "hi"}, xs=[1, 2]).SerializeToString()
    (tmp / "msg.bin").write_bytes(payload)
    (tmp / "msg.bin.gz").write_bytes(gzip.compress(payload))
    return tmp, payload


@pytest.mark.parametrize("command", ["decode", "decode-raw"])
@pytest.mark.parametrize("source", ["file", "stdin"])
def test_gzip_input_reads_as_its_contents(schema, command, source):
    tmp, payload = schema
    args = [command] + (["--descriptor-set", str(tmp / "outer.binpb"), "--type", "cli.io.Outer"]
                        if command == "decode" else [])
    plain = _run(*args, str(tmp / "msg.bin"))
    assert plain.returncode == 0, plain.stderr.decode()
    if source == "file":
        zipped = _run(*args, str(tmp / "msg.bin.gz"))
    else:
        zipped = _run(*args, "-", stdin=gzip.compress(payload))
    assert zipped.returncode == 0, zipped.stderr.decode()
    assert zipped.stdout == plain.stdout
    assert b"150" in zipped.stdout


def test_broken_gzip_is_one_clear_line(schema):
    _, payload = schema
    out = _run("decode-raw", "-", stdin=gzip.compress(payload)[:12])
    assert out.returncode == 1
    err = out.stderr.decode().strip()
    assert err.startswith("pbj: error: cannot read -: it starts as gzip data") and "\n" not in err


@pytest.mark.long
def test_decode_to_json_reports_the_unknown_fields_it_leaves_out(tmp_path):
    """The shipped block: 461 bytes of unknown fields inside BlockStreamInfo do not survive JSON."""
    out = _run("decode", "--descriptor-set", str(HAPI), "--type", BLOCK, str(BLOCK_GZ))
    assert out.returncode == 0, out.stderr.decode()
    err = out.stderr.decode()
    assert "19 unknown fields (461 bytes) left out" in err, err
    assert "com.hedera.hapi.node.state.blockstream.BlockStreamInfo (461 bytes)" in err
    assert len(json.loads(out.stdout)["items"]) == 2442
    # and indeed: JSON -> encode loses exactly those bytes
    (tmp_path / "block.json").write_bytes(out.stdout)
    back = _run("encode", "--descriptor-set", str(HAPI), "--type", BLOCK, str(tmp_path / "block.json"),
                "-o", str(tmp_path / "block.bin"))
    assert back.returncode == 0, back.stderr.decode()
    raw = gzip.decompress(BLOCK_GZ.read_bytes())
    assert len(raw) - (tmp_path / "block.bin").stat().st_size == 461


def test_decode_without_unknown_fields_warns_nothing(schema):
    tmp, _ = schema
    out = _run("decode", "--descriptor-set", str(tmp / "outer.binpb"), "--type", "cli.io.Outer",
               str(tmp / "msg.bin"))
    assert out.returncode == 0 and out.stderr == b""


def _encode_to_terminal(tmp, *extra: str) -> tuple[int, bytes, bytes]:
    """Run ``pbj encode`` with stdout on a pseudo-terminal; return status, terminal bytes, stderr."""
    master, slave = pty.openpty()
    try:
        proc = subprocess.run([sys.executable, "-m", "pbj", "encode", "--descriptor-set", str(tmp / "outer.binpb"),
                               "--type", "cli.io.Outer", *extra], input=b'{"a": 150}', stdout=slave,
                              stderr=subprocess.PIPE, cwd=REPO, timeout=300)
        os.close(slave)
        slave = -1
        seen = b""
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: the terminal's other side is closed
                break
            if not chunk:
                break
            seen += chunk
    finally:
        if slave != -1:
            os.close(slave)
        os.close(master)
    return proc.returncode, seen, proc.stderr


def test_encode_refuses_binary_to_a_terminal(schema):
    tmp, _ = schema
    status, seen, err = _encode_to_terminal(tmp)
    assert status == 1
    assert err.decode().strip() == ("pbj: error: refusing to write binary data to a terminal: "
                                    "give -o FILE, redirect stdout, or --force")
    assert seen == b""


def test_encode_to_a_terminal_with_force(schema):
    tmp, _ = schema
    status, seen, err = _encode_to_terminal(tmp, "--force")
    assert status == 0, err.decode()
    assert seen == b"\x08\x96\x01"


def test_encode_with_output_file(schema, tmp_path):
    tmp, _ = schema
    status, seen, err = _encode_to_terminal(tmp, "-o", str(tmp_path / "out.bin"))
    assert status == 0, err.decode()
    assert seen == b""
    assert (tmp_path / "out.bin").read_bytes() == b"\x08\x96\x01"


def test_read_unknown_fields_without_from_text_is_a_bad_argument(capsys):
    """``--read-unknown-fields`` only changes how the text format is read: with JSON input it was
    silently ignored; it is refused as a bad argument (status 2) before anything is read."""
    from pbj import cli

    with pytest.raises(SystemExit) as stop:
        cli.main(["encode", "--descriptor-set", "unread.binpb", "--type", "a.B", "--read-unknown-fields"])
    assert stop.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "pbj encode: error: --read-unknown-fields reads the text format: give it with --from-text")


@pytest.mark.parametrize("where, interrupted", [
    ("_doctor", lambda args: (_ for _ in ()).throw(KeyboardInterrupt)),  # while the command runs
    ("_parser", lambda: (_ for _ in ()).throw(KeyboardInterrupt)),       # while the parser is built (it imports)
], ids=["running", "loading"])
def test_ctrl_c_is_one_line_and_status_130(monkeypatch, capsys, where, interrupted):
    """Ctrl-C in the command line prints one line, no traceback, and exits 130 (128 + SIGINT), also while
    the parser is built (it imports the commands' modules: that gave a traceback); a caller that gives
    ``argv`` (Python code running the command) gets the KeyboardInterrupt."""
    from pbj import cli

    monkeypatch.setattr(cli, where, interrupted)
    monkeypatch.setattr(sys, "argv", ["pbj", "doctor"])
    assert cli.main() == 130
    assert capsys.readouterr().err == "pbj: interrupted\n"
    with pytest.raises(KeyboardInterrupt):
        cli.main(["doctor"])


def test_ctrl_c_while_the_pbj_command_imports_its_cli_is_one_line(monkeypatch, capsys):
    """The ``pbj`` command (``pbj.__main__:run``) imports pbj.cli inside its own try: a Ctrl-C there gave a
    traceback."""
    import builtins

    from pbj import __main__ as entry

    real_import = builtins.__import__

    def import_interrupted(name, *args, **kwargs):
        if name == "pbj.cli":
            raise KeyboardInterrupt
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", import_interrupted)
    assert entry.run() == 130
    assert capsys.readouterr().err == "pbj: interrupted\n"
