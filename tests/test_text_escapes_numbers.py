"""The text format's building blocks: C escapes both ways, float formatting and narrowing, the tokenizer."""

from __future__ import annotations

import math
import struct
from fractions import Fraction

import pytest
from google.protobuf import text_encoding
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pbj.textformat.escapes import EscapeError, escape_bytes, escape_text, unescape
from pbj.textformat.numbers import FLOAT32_MAX, _read_float32, format_double, format_float, to_float32
from pbj.textformat.tokenizer import TOKEN

# ---------------------------------------------------------------- escapes


@given(st.binary(max_size=64))
@example(bytes(range(256)))
def test_escape_bytes_is_googles_cescape(data):
    assert escape_bytes(data) == text_encoding.CEscape(data, False)


@given(st.binary(max_size=64))
def test_unescape_reads_escape_bytes(data):
    assert unescape(escape_bytes(data)) == data


@given(st.text(st.characters(codec="utf-8"), max_size=32))
@example("h\u00e9\x00'\"\\\x7f\U0010ffff")
def test_escape_text_round_trip(text):
    assert unescape(escape_text(text)) == text.encode()
    assert unescape(escape_text(text, utf8=True)) == text.encode()
    assert escape_text(text) == text_encoding.CEscape(text.encode(), False)
    assert not any(c < " " or c == "\x7f" for c in escape_text(text, utf8=True))


@given(st.lists(st.one_of(
    st.sampled_from([r"\a", r"\b", r"\f", r"\n", r"\r", r"\t", r"\v", r"\\", r"\'", r"\"", "x", " "]),
    st.integers(0, 0o377).map(lambda n: f"\\{n:o}"),
    st.integers(0, 0xFF).map(lambda n: f"\\x{n:x}"),
    st.integers(0, 0xFF).map(lambda n: f"\\x{n:02X}"),
), max_size=12).map("".join))
def test_unescape_agrees_with_google(body):
    assert unescape(body) == text_encoding.CUnescape(body)


@pytest.mark.parametrize("body, value", [
    (r"\?", b"?"), (r"\1234", b"S4"), (r"\5Hello", b"\x05Hello"), (r"\x213", b"!3"), (r"\xFHello", b"\x0fHello"),
    (r"\u00e9", "\u00e9".encode()), (r"\U0010FFFF", "\U0010ffff".encode()), ("\u00e9", "\u00e9".encode()),
])
def test_unescape_spec_examples(body, value):
    # "String Literals": octal escapes take up to three digits, hex escapes up to two
    assert unescape(body) == value


@pytest.mark.parametrize("body, index, words", [
    (r"ab\q", 2, r"unknown escape \q"), ("a\\", 1, "a backslash ends the string"),
    (r"\x", 0, r"\x needs one or two hex digits"), (r"\u12", 0, r"\u needs four hex digits"),
    (r"\U0000123", 0, r"\U needs eight hex digits"), (r"\U00110000", 0, "above"), (r"x\uDC00", 1, "surrogate"),
    (r"\ud801\udc37", 0, "surrogate"), (r"\400", 0, r"above \377"), ("a\ud800", 1, "lone surrogate"),
])
def test_unescape_errors(body, index, words):
    with pytest.raises(EscapeError) as info:
        unescape(body)
    assert words in info.value.reason
    assert info.value.index == index


# ---------------------------------------------------------------- numbers

def _nearest_float32(q: Fraction) -> float:
    """The binary32 value nearest the exact rational ``q`` (ties to even), computed exactly."""
    if q == 0:
        return 0.0
    sign = -1.0 if q < 0 else 1.0
    q = abs(q)
    e = q.numerator.bit_length() - q.denominator.bit_length()
    if Fraction(2) ** e > q:
        e -= 1
    scale = Fraction(2) ** (23 - max(e, -126))  # 24 significant bits; fixed spacing below the normals
    m = q * scale
    whole = math.floor(m)
    rest = m - whole
    if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and whole % 2):
        whole += 1
    value = whole / scale
    return sign * (math.inf if value > FLOAT32_MAX else float(value))


@given(st.floats(width=32, allow_nan=False, allow_infinity=False), st.integers(4, 12))
def test_read_float32_rounds_once(x, digits):
    text = f"{x:.{digits}g}"
    assert _read_float32(text) == _nearest_float32(Fraction(text))


@pytest.mark.parametrize("text", [
    # decimals that a double reading lands exactly halfway between two floats
    "1.00000005960464477550", "1.0000000596046447753906249", "1.00000005960464477539062501",
    "16777217.0000000000001", "16777216.9999999999999", "3.4028235677973366e38",
])
def test_read_float32_near_halfway(text):
    assert _read_float32(text) == _nearest_float32(Fraction(text))


@given(st.floats(width=32))
@example(1.401298464324817e-45)
@example(FLOAT32_MAX)
def test_format_float_reads_back(x):
    text = format_float(x)
    back = float(text)
    assert to_float32(back) == x or (math.isnan(x) and math.isnan(back))
    assert len(text) <= 15


@given(st.floats())
@example(5e-324)
@example(0.1 + 0.2)
def test_format_double_reads_back(x):
    text = format_double(x)
    back = float(text)
    assert back == x or (math.isnan(x) and math.isnan(back))
    if math.isfinite(x):
        assert text in (f"{x:.15g}", f"{x:.17g}")


def test_to_float32_overflow_as_cpp():
    # io::SafeDoubleToFloat: beyond FLT_MAX is infinite, except what rounds down to FLT_MAX
    assert to_float32(3.4028235e38) == FLOAT32_MAX
    assert to_float32(3.4028235677973366e38) == FLOAT32_MAX
    assert to_float32(3.402823567797337e38) == math.inf
    assert to_float32(-1e39) == -math.inf
    assert to_float32(1e-50) == 0.0
    assert struct.pack("<f", to_float32(0.1)) == struct.pack("<f", 0.1)


# ---------------------------------------------------------------- tokenizer

def _tokens(text: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    while True:
        m = TOKEN(text, pos)
        kind = m.lastgroup
        out.append((kind, m.group(kind)))
        if kind == "end" or pos == m.end():
            return out
        pos = m.end()


@pytest.mark.parametrize("text, tokens", [
    ("value: 10", [("ident", "value"), ("sym", ":"), ("dec", "10")]),
    ("value: 10f", [("ident", "value"), ("sym", ":"), ("float", "10f")]),  # the longest match wins
    ("foo: 10 bar: 20", [("ident", "foo"), ("sym", ":"), ("dec", "10"), ("ident", "bar"), ("sym", ":"),
                         ("dec", "20")]),
    ("foo: 10,bar", [("ident", "foo"), ("sym", ":"), ("dec", "10"), ("sym", ","), ("ident", "bar")]),
    ("10[com]", [("dec", "10"), ("sym", "["), ("ident", "com"), ("sym", "]")]),
    ("foo: 10bar: 20", [("ident", "foo"), ("sym", ":"), ("badnum", "10bar"), ("sym", ":"), ("dec", "20")]),
    ("-2.0 - 2.0 -\n# c\n2.0", [("sym", "-"), ("float", "2.0"), ("sym", "-"), ("float", "2.0"), ("sym", "-"),
                               ("float", "2.0")]),
    ("0x1F 017 0 .5e+3 1e-2F 5.", [("hex", "0x1F"), ("oct", "017"), ("dec", "0"), ("float", ".5e+3"),
                                   ("float", "1e-2F"), ("float", "5.")]),
    ("'a\\'b' \"c\\\"\" '", [("str", "'a\\'b'"), ("str", '"c\\""'), ("badstr", "'")]),
    ("\t\v\f\r\n# only a comment", []),
    ("a\u00e9", [("ident", "a\u00e9")]),  # a Python identifier (a declared class's field name) reads back
    ("a\u00a7", [("ident", "a"), ("bad", "\u00a7")]),  # a character no identifier holds
    ("10\u00e9", [("badnum", "10\u00e9")]),  # a number may not run into any identifier
])
def test_tokens(text, tokens):
    assert _tokens(text) == [*tokens, ("end", "")]


@settings(max_examples=200)
@given(st.text(max_size=40))
def test_tokenizer_matches_everywhere(text):
    # Every position starts a token (possibly an error token), and the end is always reached.
    assert _tokens(text)[-1] == ("end", "")
