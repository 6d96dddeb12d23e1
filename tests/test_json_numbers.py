"""Every form the JSON grammar allows for a number, read by ProtoJSON's rules for the field's type.

protobuf.dev "ProtoJSON Format", the type table: 32-bit integers are JSON
numbers, 64-bit integers decimal strings, float and double numbers or
``"NaN"``/``"Infinity"``/``"-Infinity"``; parsers take numbers *or* strings for
every one of them, exponent notation (``1e2``) quoted or not, never an empty
string. What pbj makes of each form (docs/json.md, "Numbers"):

* an integer field takes any JSON number (RFC 8259: sign, fraction, exponent)
  whose value is an integer in the type's range, as a number or as a string
  holding the same grammar: ``1e2``, ``"1e2"``, ``1.0``, ``100e-2`` are 100, 100,
  1, 1; ``1.5``, ``1e-1``, ``1e-400`` are refused (not integers), as Go's
  ``protojson`` refuses them; values are exact (``9.223372036854775807e18`` is
  ``2**63 - 1``), not rounded through a double;
* a float or double field takes any JSON number, or a string holding one, or
  the three special strings; a value beyond the type's range is refused
  (``1e39`` for float, ``1e400`` for double, quoted or not); a value below it
  becomes a (signed) zero; ``-0`` and ``-0.0`` keep their sign; a float is the
  float32 nearest to the decimal, rounded once (as Go's ``ParseFloat(s, 32)``);
* anything else is refused: ``true`` for a number, strings outside the JSON
  number grammar (``" 1"``, ``"+1"``, ``"01"``, ``"1."``, ``".5"``, ``"0x10"``,
  ``"1_0"``, ``"inf"``, ``"nan"``, ``""``).

Each row is checked on every type it names, with the field in
``TestAllTypesProto3`` (loaded by pbj, compiled for Google), against Google's
``json_format`` too: where Google's Python parser follows the spec the row
says ``GOOGLE_AGREES`` and the test asserts the same value; where it does not
(it reads number strings with Python's ``float()``/``int()`` and numbers
through a double) the row names the difference and the test asserts it, so
docs/json.md stays true.
"""

from __future__ import annotations

import math
import struct
from decimal import Decimal

import pytest
from google.protobuf import json_format
from hypothesis import given
from hypothesis import strategies as st

import pbj
from pbj import conformance
from pbj.protojson.scalar_forms import scalar_reader
from tests.oracle import google_class
from tests.test_conformance import _google

P3 = "protobuf_test_messages.proto3.TestAllTypesProto3"
S32, U32 = ("int32", "sint32", "sfixed32"), ("uint32", "fixed32")
S64, U64 = ("int64", "sint64", "sfixed64"), ("uint64", "fixed64")
INTS = S32 + U32 + S64 + U64
ALL = (*INTS, "float", "double")
E = "refused"
F32_MAX = struct.unpack("<f", struct.pack("<I", 0x7F7FFFFF))[0]

#: Google's json_format gives another answer for these (literal, type) pairs: why, in docs/json.md's words.
GOOGLE_DIFFERS = {
    "python-float-syntax": "Google reads a number string with Python's float(): spaces, '+', leading zeros, '1.', "
                           "'.5', '_' and 'inf' pass",
    "through-a-double": "Google reads a JSON number with a fraction or exponent as a double first",
    "huge-string-is-inf": "Google reads an out-of-range number string as an infinity",
    "bool-is-number": "Google reads true as 1.0 for a float or double",
    "tiny-is-zero": "Google reads 1e-400 as the integer 0 (it is 0.0 as a double)",
    "float-max-boundary": "Google refuses a float above FLT_MAX even where it rounds to FLT_MAX",
    "negative-zero-integer": "Google reads the JSON integer -0 as 0 (Python's json gives the int 0)",
}


def row(literal: str, values: dict, google: str | tuple | None = None):
    """One table row: the JSON literal, the expected value per type (E: refused), Google's difference or None.

    ``google`` is a key of :data:`GOOGLE_DIFFERS` (Google differs on the types
    :data:`GOOGLE_DIFFERS_ONLY` gives, else on all), or (key, types).
    """
    expanded = {}
    for key, value in values.items():
        for kind in (key if isinstance(key, tuple) else (key,)):
            expanded[kind] = value
    return pytest.param(literal, expanded, google, id=literal)


ROWS = [
    # plain integers, signs, zero
    row("1", {INTS: 1, "float": 1.0, "double": 1.0}),
    row("-1", {S32 + S64: -1, U32 + U64: E, "float": -1.0, "double": -1.0}),
    row("0", {INTS: 0, "float": 0.0, "double": 0.0}),
    row("-0", {INTS: 0, "float": -0.0, "double": -0.0}, ("negative-zero-integer", ("float", "double"))),
    # fraction and exponent forms of integral values
    row("1.0", {INTS: 1, "float": 1.0, "double": 1.0}),
    row("-0.0", {INTS: 0, "float": -0.0, "double": -0.0}),
    row("1e2", {INTS: 100, "float": 100.0, "double": 100.0}),
    row("1E2", {INTS: 100, "float": 100.0, "double": 100.0}),
    row("1e+2", {INTS: 100, "float": 100.0, "double": 100.0}),
    row("1.5e1", {INTS: 15, "float": 15.0, "double": 15.0}),
    row("100e-2", {INTS: 1, "float": 1.0, "double": 1.0}),
    # not integers
    row("1.5", {INTS: E, "float": 1.5, "double": 1.5}),
    row("1e-1", {INTS: E, "float": 0.10000000149011612, "double": 0.1}),
    row("-1.5", {INTS: E, "float": -1.5, "double": -1.5}),
    # huge and tiny exponents
    row("1e400", {ALL: E}),
    row("-1e400", {ALL: E}),
    row("1e-400", {INTS: E, "float": 0.0, "double": 0.0}, "tiny-is-zero"),
    row("-1e-400", {INTS: E, "float": -0.0, "double": -0.0}, "tiny-is-zero"),
    row("1e1000000000", {ALL: E}),
    # strings holding numbers
    row('"1"', {INTS: 1, "float": 1.0, "double": 1.0}),
    row('"-1"', {S32 + S64: -1, U32 + U64: E, "float": -1.0, "double": -1.0}),
    row('"-0"', {INTS: 0, "float": -0.0, "double": -0.0}),
    row('"1e2"', {INTS: 100, "float": 100.0, "double": 100.0}),
    row('"1.0"', {INTS: 1, "float": 1.0, "double": 1.0}),
    row('"1.5"', {INTS: E, "float": 1.5, "double": 1.5}),
    row('"1e400"', {ALL: E}, "huge-string-is-inf"),
    row('"1e39"', {INTS: E, "float": E, "double": 1e39}, "huge-string-is-inf"),
    # strings outside the JSON number grammar
    row('""', {ALL: E}),
    row('" 1"', {ALL: E}, ("python-float-syntax", ("float", "double"))),
    row('"1 "', {ALL: E}, ("python-float-syntax", ("float", "double"))),
    row('"+1"', {ALL: E}, "python-float-syntax"),
    row('"01"', {ALL: E}, "python-float-syntax"),
    row('"1."', {ALL: E}, "python-float-syntax"),
    row('".5"', {ALL: E}, ("python-float-syntax", ("float", "double"))),
    row('"1_0"', {ALL: E}, "python-float-syntax"),
    row('"0x10"', {ALL: E}),
    row('"inf"', {ALL: E}, ("python-float-syntax", ("float", "double"))),
    row('"nan"', {ALL: E}),
    row('"1e"', {ALL: E}),
    # the special float strings
    row('"NaN"', {INTS: E, "float": math.nan, "double": math.nan}),
    row('"Infinity"', {INTS: E, "float": math.inf, "double": math.inf}),
    row('"-Infinity"', {INTS: E, "float": -math.inf, "double": -math.inf}),
    # ranges
    row("2147483647", {S32 + U32 + S64 + U64: 2147483647, "float": 2147483648.0, "double": 2147483647.0}),
    row("2147483648", {S32: E, U32 + S64 + U64: 2147483648, "float": 2147483648.0, "double": 2147483648.0}),
    row("-2147483648", {S32 + S64: -2147483648, U32 + U64: E, "float": -2147483648.0, "double": -2147483648.0}),
    row("-2147483649", {S32 + U32 + U64: E, S64: -2147483649, "float": -2147483648.0, "double": -2147483649.0}),
    row("4294967295", {S32: E, U32 + S64 + U64: 4294967295, "float": 4294967296.0, "double": 4294967295.0}),
    row("4294967296", {S32 + U32: E, S64 + U64: 4294967296, "float": 4294967296.0, "double": 4294967296.0}),
    row("9223372036854775807", {S32 + U32: E, S64 + U64: 2**63 - 1, "float": 9.223372036854776e18,
                                "double": 9.223372036854776e18}),
    row('"9223372036854775808"', {S32 + U32 + S64: E, U64: 2**63, "float": 9.223372036854776e18,
                                  "double": 9.223372036854776e18}),
    row("9.223372036854775807e18", {S32 + U32: E, S64 + U64: 2**63 - 1, "float": 9.223372036854776e18,
                                    "double": 9.223372036854776e18}, "through-a-double"),
    row("18446744073709551615", {S32 + U32 + S64: E, U64: 2**64 - 1, "float": 1.8446744073709552e19,
                                 "double": 1.8446744073709552e19}),
    row('"18446744073709551616"', {INTS: E, "float": 1.8446744073709552e19, "double": 1.8446744073709552e19}),
    row("1e19", {S32 + U32 + S64: E, U64: 10**19, "float": 9.999999980506448e18, "double": 1e19}),
    # float32 limits: FLT_MAX as printed, the largest value rounding to it, beyond it
    row("3.402823e38", {INTS: E, "float": 3.4028230607370965e38, "double": 3.402823e38}),
    row("3.4028235e38", {INTS: E, "float": F32_MAX, "double": 3.4028235e38}, "float-max-boundary"),
    row("3.4028236e38", {INTS: E, "float": E, "double": 3.4028236e38}),
    row("-1e39", {INTS: E, "float": E, "double": -1e39}),
    row("1.7976931348623157e308", {INTS: E, "float": E, "double": 1.7976931348623157e308}),
    row("1.8e308", {ALL: E}),
    row("1e-46", {INTS: E, "float": 0.0, "double": 1e-46}),
    row("1e-45", {INTS: E, "float": 1.401298464324817e-45, "double": 1e-45}),
    # rounded once to float32, not through a double (the double is the midpoint 1 + 2**-24)
    row("1.00000005960464478", {INTS: E, "float": 1.0000001192092896, "double": 1.0000000596046448},
        "through-a-double"),
    # not numbers
    row("true", {ALL: E}, "bool-is-number"),
    row('"true"', {ALL: E}),
    row("[1]", {ALL: E}),
    row("{}", {ALL: E}),
]

#: (literal, type) pairs of the rows that differ only on some types.
GOOGLE_DIFFERS_ONLY = {
    "through-a-double": {("9.223372036854775807e18", k) for k in S64 + U64}
    | {("1.00000005960464478", "float")},
    "huge-string-is-inf": {('"1e400"', "float"), ('"1e400"', "double"), ('"1e39"', "float")},
    "bool-is-number": {("true", "float"), ("true", "double")},
    "tiny-is-zero": {(lit, k) for lit in ("1e-400", "-1e-400") for k in INTS},
    "float-max-boundary": {("3.4028235e38", "float")},
}


def _field(kind: str) -> tuple[str, str]:
    """(JSON name, attribute) of the singular field of scalar type ``kind`` in TestAllTypesProto3."""
    return "optional" + kind[0].upper() + kind[1:], "optional_" + kind


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
    return a == b and type(a) is type(b)


def _pbj_reads(kind: str, literal: str):
    key, attr = _field(kind)
    cls = conformance.schema()[P3]
    try:
        return getattr(pbj.from_json(cls, f'{{"{key}": {literal}}}'), attr)
    except pbj.JSONError:
        return E


def _google_reads(kind: str, literal: str):
    _google()
    key, attr = _field(kind)
    try:
        return getattr(json_format.Parse(f'{{"{key}": {literal}}}', google_class(P3)()), attr)
    except json_format.ParseError:
        return E


@pytest.mark.parametrize("literal, expected, google", ROWS)
def test_number_form(literal: str, expected: dict, google: str | None) -> None:
    assert set(expected) == set(ALL)
    differs = set()
    if isinstance(google, tuple):
        google, kinds = google
        differs = {(literal, k) for k in kinds}
    elif google is not None:
        differs = GOOGLE_DIFFERS_ONLY.get(google, {(literal, k) for k in ALL})
    for kind in ALL:
        got = _pbj_reads(kind, literal)
        want = expected[kind]
        assert _same(got, want), (kind, got, want)
        theirs = _google_reads(kind, literal)
        if (literal, kind) in differs:
            assert not _same(theirs, want), (kind, "Google agrees now: drop the difference", GOOGLE_DIFFERS[google])
        else:
            assert _same(theirs, want), (kind, "Google differs", theirs)


@pytest.mark.parametrize("literal, expected", [
    ("1e2", 100), ('"1e2"', 100), ("1.0", 1), ("-0", 0), ("1.5", E), ('"1.5"', E), ("1e400", E), ('""', E),
    ('"Infinity"', E), ("true", E), ("2147483648", E),
])
def test_repeated_map_value_and_wrapper_take_the_same_forms(literal, expected) -> None:
    """The same reader serves repeated elements, map values and Int32Value."""
    cls = conformance.schema()[P3]
    for text, get in [
        (f'{{"repeatedInt32": [{literal}]}}', lambda v: v.repeated_int32[0]),
        (f'{{"mapInt32Int32": {{"1": {literal}}}}}', lambda v: v.map_int32_int32[1]),
        (f'{{"optionalInt32Wrapper": {literal}}}', lambda v: v.optional_int32_wrapper.value),
    ]:
        try:
            got = get(pbj.from_json(cls, text))
        except pbj.JSONError:
            got = E
        assert got == expected, text


@pytest.mark.parametrize("key, expected", [("1", 1), ("-1", -1), ("1e2", 100), ("1.0", 1), ("1.5", E), ("", E),
                                           (" 1", E), ("2147483648", E)])
def test_int_map_keys_take_the_string_forms(key, expected) -> None:
    cls = conformance.schema()[P3]
    try:
        got = next(iter(pbj.from_json(cls, f'{{"mapInt32Int32": {{"{key}": 1}}}}').map_int32_int32))
    except pbj.JSONError:
        got = E
    assert got == expected


def test_refusals_name_the_field_and_the_value() -> None:
    cls = conformance.schema()[P3]
    with pytest.raises(pbj.JSONError) as info:
        pbj.from_json(cls, '{"optionalInt32": 1.5}')
    assert str(info.value) == "expected an integer for int32, got 1.5 - at `$.optionalInt32`"
    with pytest.raises(pbj.JSONError) as info:
        pbj.from_json(cls, '{"optionalFloat": "1e39"}')
    assert str(info.value) == "number 1e39 is out of range for float - at `$.optionalFloat`"


_F32_BITS = st.integers(0, 0x7F7FFFFE) | st.integers(0x80000000, 0xFF7FFFFE)


@given(_F32_BITS, st.fractions(min_value=-0.4999, max_value=0.4999))
def test_float_reads_the_float32_nearest_to_the_decimal(bits: int, offset) -> None:
    """A decimal within half an ulp of a float32 reads as that float32 (once rounded, not via a double)."""
    from fractions import Fraction
    f = struct.unpack("<f", struct.pack("<I", bits))[0]
    nxt = struct.unpack("<f", struct.pack("<I", (bits & 0x80000000) | ((bits & 0x7FFFFFFF) + 1)))[0]
    ulp = abs(Fraction(nxt) - Fraction(f))
    exact = Fraction(f) + offset * ulp
    text = f"{Decimal(exact.numerator) / Decimal(exact.denominator):.60g}"
    # the 60-digit decimal is within 1e-50 relative of exact: far closer to f than the half ulp allowed
    got = scalar_reader("float")(Decimal(text))
    assert struct.pack("<f", got) == struct.pack("<f", f) or (f == 0.0 and got == 0.0)
    assert scalar_reader("float")(text) == got


_LONG = "1" + "0" * 5000  # more digits than int() converts (CPython's 4,300-digit limit)


@pytest.mark.parametrize("literal, integer, floating", [
    ("1e1000000000", E, E), ('"1e1000000000"', E, E), ("-1e1000000000", E, E),
    ("1e-1000000000", E, 0.0), ('"-1e-1000000000"', E, -0.0),
    (_LONG, E, E), (f'"{_LONG}"', E, E), (f"-{_LONG}", E, E),
    ("0." + "0" * 5000 + "1", E, 0.0), (_LONG + "e-5000", 1, 1.0), (f'"{_LONG}e-5000"', 1, 1.0),
])
def test_huge_exponents_and_long_digit_runs(literal, integer, floating) -> None:
    """Read exactly, by the type's rules, as Go's protojson does: no ValueError from int()'s digit limit."""
    for kind in ALL:
        want = floating if kind in ("float", "double") else integer
        got = _pbj_reads(kind, literal)
        assert _same(got, want), (kind, literal[:20], got)
    with pytest.raises(pbj.JSONError, match=r"out of range for int32 - at `\$\.optionalInt32`"):
        pbj.from_json(conformance.schema()[P3], f'{{"optionalInt32": "{_LONG}"}}')
