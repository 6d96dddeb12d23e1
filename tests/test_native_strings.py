"""The native decoder's ASCII path for strings (``pbj/_native/read.h``, ``pbj_str_value``) against the
pure-Python engine and Google's runtime.

A string whose bytes are all below 0x80 is copied into a new ``str`` without CPython's UTF-8
decoder; the check reads a word (8 bytes) at a time, the last word overlapping the one before
it, 4 bytes at a time below 8, byte by byte below 4. So every boundary is tried: one byte of 0x7f
(still ASCII), 0x80 (a lone continuation byte: invalid UTF-8) or a two-byte character (valid, not
ASCII) at every position of strings of length 0 to 40, and at the ends of longer ones. Each input
holds the string in every place a string is read (a singular field, a repeated one, a map key and
value); the native decode must give the Python engine's value type for type (or both refuse it),
Google's runtime the same text (or refuse it too); proto2 strings keep every byte
(surrogateescape) and round-trip exactly. Empty and one-character strings stay CPython's shared
objects, as its decoder gives them.

Skipped where the extension is not built (the pure-Python install); the Google comparisons run on
the engine in use.
"""

from __future__ import annotations

import pytest
from google.protobuf.message import DecodeError as GoogleDecodeError

import pbj
from fuzz.native_checks import _python_decode, check_same, identical
from pbj import _native, api
from pbj.codec import codec_of
from tests.oracle import google_class, protoc_sources

pytestmark = [pytest.mark.once,
              pytest.mark.skipif(not _native.available(), reason="the native engine is not built")]

PROTO3 = """
syntax = "proto3";
package pbjascii;
message S { string s = 1; repeated string r = 2; map<string, string> m = 3; }
"""
PROTO2 = """
syntax = "proto2";
package pbjascii2;
message K { optional string s = 1; repeated string r = 2; map<string, string> m = 3; }
"""


@pytest.fixture(scope="module")
def classes(tmp_path_factory):
    d = tmp_path_factory.mktemp("ascii")
    paths, _ = protoc_sources(d, {"native_ascii_proto3.proto": PROTO3, "native_ascii_proto2.proto": PROTO2})
    ns = pbj.load_proto(paths, include=[d])
    return {"proto3": (ns["pbjascii.S"], google_class("pbjascii.S")),
            "proto2": (ns["pbjascii2.K"], google_class("pbjascii2.K"))}


def _len(n: int) -> bytes:
    out = bytearray()
    while True:
        out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(out)


def _field(number: int, body: bytes) -> bytes:
    return bytes([number << 3 | 2]) + _len(len(body)) + body


def _message(text: bytes) -> bytes:
    """``text`` as s, twice in r, and as a map entry's key and value."""
    entry = _field(1, text) + _field(2, text)
    return _field(1, text) + _field(2, text) + _field(2, text) + _field(3, entry)


def _strings() -> list[bytes]:
    """The strings tried: lengths 0..40 all ASCII, and each with one 0x7f, 0x80 or 'é' at each position,
    then longer ones with the odd byte first, in the middle and last."""
    out = []
    for n in range(41):
        base = bytes((ord("a") + i % 26) for i in range(n))
        out.append(base)
        for i in range(n):
            for odd in (b"\x7f", b"\x80", "é".encode()):
                out.append(base[:i] + odd + base[i + 1:])
    for n in (63, 64, 65, 127, 128, 129, 255, 256, 1000, 4096):
        base = b"x" * n
        out.append(base)
        for i in (0, n // 2, n - 1):
            for odd in (b"\x7f", b"\x80", b"\xff", "€".encode()):
                out.append(base[:i] + odd + base[i + 1:])
    bad = (b"\xc3", b"\xc3(", b"\xe2\x82", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xc0\xaf", b"\xf8\x88\x80\x80\x80")
    for b in bad:
        for pad in (0, 1, 3, 7, 8, 9, 15, 16):
            out.append(b"a" * pad + b)
            out.append(b + b"a" * pad)
    return out


STRINGS = _strings()


def _want(text: bytes, kind: str) -> str | None:
    try:
        return text.decode("utf-8")
    except UnicodeDecodeError:
        return text.decode("utf-8", "surrogateescape") if kind == "proto2" else None


@pytest.mark.parametrize("kind", ["proto3", "proto2"])
def test_every_boundary_decodes_as_the_python_engine_and_google(kind, classes):
    cls, google = classes[kind]
    refused = 0
    for text in STRINGS:
        data = _message(text)
        want = _want(text, kind)
        native = check_same(cls, data)  # the native decode is the Python engine's, value and type, or both refuse
        if want is None:
            refused += 1
            assert native is None, text
            with pytest.raises(pbj.DecodeError):
                pbj.decode(cls, data)
            with pytest.raises(GoogleDecodeError):
                google.FromString(data)
            continue
        obj = pbj.decode(cls, data)
        assert identical(obj, native), text
        assert obj.s == want and obj.r == (want, want) and dict(obj.m) == {want: want}, text
        assert type(obj.s) is str
        written = pbj.encode(obj)
        assert written == pbj.encode(obj, reverse=True) and pbj.decode(cls, written) == obj
        if text:  # (proto3 leaves an empty s unwritten)
            assert written == data
        g = google.FromString(data)
        assert g.SerializeToString() == written
        if _want(text, "proto3") is not None:  # (what upb gives for a proto2 string's invalid bytes is its own)
            assert (g.s, list(g.r), dict(g.m)) == (want, [want, want], {want: want}), text
    if kind == "proto3":
        assert refused == sum(_want(t, "proto3") is None for t in STRINGS) > 800
    else:
        assert refused == 0


@pytest.mark.parametrize("kind", ["proto3", "proto2"])
def test_short_strings_are_cpythons_shared_objects(kind, classes):
    cls, _ = classes[kind]
    codec = codec_of(cls)
    empty = _native._engine.decode(codec.native, _field(1, b""), 100)
    assert empty.s is "".join([])
    for c in (0, 0x41, 0x7F):
        one = _native._engine.decode(codec.native, _field(1, bytes([c])), 100)
        assert one.s is chr(c)
    two = _native._engine.decode(codec.native, _field(1, b"ab"), 100)
    assert two.s == "ab" and two.s.isascii()


@pytest.mark.parametrize("kind", ["proto3", "proto2"])
def test_the_bound_decoder_agrees(kind, classes):
    """decoder_of (grpcio's deserializer: a builtin whose decode runs alone once its class is known)."""
    cls, _ = classes[kind]
    dec = api.decoder_of(cls)
    for text in STRINGS[::7]:
        data = _message(text)
        python = _python_decode(cls, data)
        if isinstance(python, pbj.DecodeError):
            with pytest.raises(pbj.DecodeError) as err:
                dec(data)
            assert (str(err.value), err.value.path, err.value.offset) == (str(python), python.path, python.offset)
        else:
            assert identical(dec(data), python)
