"""Unknown fields printed by number (``pbj.to_text(print_unknown_fields=True)``, ``pbj decode --text``)
read back with ``read_unknown_fields=True`` to the same encoding; without it the error names the option."""

from __future__ import annotations

import subprocess
import sys

import pytest

import pbj
from pbj import wire
from tests.conftest import REPO


@pbj.message(full_name="tu.Small")
class Small:
    a: int = pbj.field(1, "int32")
    inner: Small | None = pbj.field(2, "Small")


def _field(number: int, wt: int, payload: bytes) -> bytes:
    return wire.tag_bytes(number, wt) + payload


UNKNOWN = b"".join([
    _field(5, wire.WIRE_VARINT, wire.encode_varint(2**64 - 1)),
    _field(6, wire.WIRE_I64, (7).to_bytes(8, "little")),
    _field(7, wire.WIRE_I32, (0xDEADBEEF).to_bytes(4, "little")),
    _field(8, wire.WIRE_LEN, wire.encode_varint(3) + b"\x00\xffz"),
    _field(9, wire.WIRE_LEN, wire.encode_varint(4) + bytes.fromhex("08011002")),  # printed as a nested block
    _field(536870911, wire.WIRE_VARINT, b"\x01"),
])


def _message() -> tuple[Small, bytes]:
    inner = pbj.decode(Small, bytes.fromhex("0803") + UNKNOWN)
    data = pbj.encode(Small(a=1, inner=inner)) + UNKNOWN
    return pbj.decode(Small, data), data


@pytest.mark.parametrize("one_line", [False, True])
def test_printed_unknown_fields_read_back_to_the_same_bytes(one_line):
    msg, data = _message()
    text = pbj.to_text(msg, print_unknown_fields=True, one_line=one_line)
    assert "5: 18446744073709551615" in text and "6: 0x0000000000000007" in text and "7: 0xdeadbeef" in text
    back = pbj.from_text(Small, text, read_unknown_fields=True)
    assert back == msg
    assert pbj.unknown_fields(back) == UNKNOWN and pbj.unknown_fields(back.inner) == UNKNOWN
    assert pbj.encode(back) == pbj.encode(back, reverse=True) == data


def test_without_the_option_the_error_names_it():
    msg, _ = _message()
    text = pbj.to_text(msg, print_unknown_fields=True)
    with pytest.raises(pbj.TextError) as err:
        pbj.from_text(Small, text)
    assert str(err.value).startswith("expected a field name, found the field number 5: unknown fields are printed "
                                     "by number (print_unknown_fields, pbj decode --text); read them back with "
                                     "read_unknown_fields=True (pbj encode --from-text --read-unknown-fields)")


@pytest.mark.parametrize("text, needle", [
    ("0: 1", "field number 0 is out of range [1, 536870911]"),
    ("536870912: 1", "field number 536870912 is out of range"),
    ("5: 18446744073709551616", "varint 18446744073709551616 is larger than 2**64 - 1"),
    ("5: 0x123", "a fixed-width value is 0x and 8 (I32) or 16 (I64) hex digits, found 0x123"),
    ("5 1", 'expected ":" or "{" after field number 5'),
    ("5: abc", "unknown field 5: expected a varint, 0x-hex, a string or {...}, found"),
    ("5 { a: 1 }", "expected a field number inside unknown field 5"),
])
def test_malformed_numbered_fields(text, needle):
    with pytest.raises(pbj.TextError, match=None) as err:
        pbj.from_text(Small, text, read_unknown_fields=True)
    assert needle in str(err.value), str(err.value)


def test_cli_round_trip_of_decode_text(tmp_path):
    schema = tmp_path / "s.binpb"
    from tests.oracle import protoc_sources
    _, data = protoc_sources(tmp_path, {"s.proto": 'syntax = "proto3"; package tu; message S { int32 a = 1; }'})
    schema.write_bytes(data)
    encoded = bytes.fromhex("0801") + UNKNOWN
    env = {"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}
    dec = subprocess.run([sys.executable, "-m", "pbj", "decode", "--descriptor-set", str(schema), "--type", "tu.S",
                          "--text", "-"], input=encoded, capture_output=True, timeout=300, env=env)
    assert dec.returncode == 0, dec.stderr
    enc = subprocess.run([sys.executable, "-m", "pbj", "encode", "--descriptor-set", str(schema), "--type", "tu.S",
                          "--from-text", "--read-unknown-fields", "-"], input=dec.stdout, capture_output=True,
                         timeout=300, env=env)
    assert enc.returncode == 0, enc.stderr
    assert enc.stdout == encoded
    off = subprocess.run([sys.executable, "-m", "pbj", "encode", "--descriptor-set", str(schema), "--type", "tu.S",
                          "--from-text", "-"], input=dec.stdout, capture_output=True, timeout=300, env=env)
    assert off.returncode == 1
    assert off.stderr.decode().startswith("pbj: error: cannot read - as tu.S text-format: expected a field name, "
                                          "found the field number 5")
    ver = subprocess.run([sys.executable, "-m", "pbj", "--version"], capture_output=True, timeout=300, env=env)
    assert ver.stdout.decode() == f"pbj {pbj.__version__}\n"
    bad = subprocess.run([sys.executable, "-m", "pbj", "decode", "--descriptor-set", str(schema), "--type", "tu.S",
                          "-"], input=b"\x0a\x05ab", capture_output=True, timeout=300, env=env)
    assert bad.stderr.decode().startswith("pbj: error: cannot decode - as tu.S:")
