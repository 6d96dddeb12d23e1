"""``pbj.from_text`` on hostile text: it returns a message or raises ``pbj.TextError``, nothing else.

Inputs: random text, random bytes (so invalid UTF-8 too), and valid
``pbj.to_text`` output of ``pbj.testing.values`` examples with characters
deleted, inserted, duplicated and truncated. Whatever is accepted must encode,
print and parse again to the same message. Nesting far deeper than Python's
stack allows is refused with a ``TextError``.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pbj
from pbj import conformance
from pbj.testing import values
from tests.test_text_differential import same

pytestmark = pytest.mark.once

_SETTINGS = dict(deadline=None, database=None,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                        HealthCheck.filter_too_much])
P3 = "protobuf_test_messages.proto3.TestAllTypesProto3"
P2 = "protobuf_test_messages.proto2.TestAllTypesProto2"
_PIECES = ["{", "}", "<", ">", "[", "]", ":", ",", ";", "-", "'", '"', "\\", "#", "\n", " ", "0x", "1e9", "inf",
           "optional_int32", "repeated_string", "optional_nested_message", "map_string_string", "key", "value",
           "[type.googleapis.com/", "Data", "\\u00", "\\377", "\u00e9", "\x00"]


def _check(cls, text, ns) -> None:
    try:
        value = pbj.from_text(cls, text, extensions=ns, allow_partial=True)
    except pbj.TextError as exc:
        assert exc.line >= 1 and exc.column >= 1 and isinstance(exc.path, list)
        return
    again = pbj.from_text(cls, pbj.to_text(value, extensions=ns), extensions=ns, allow_partial=True)
    assert same(again, value)
    assert same(pbj.decode(cls, pbj.encode(value)), value)


@pytest.mark.parametrize("name", [P3, P2])
def test_random_text(name):
    ns = conformance.schema()
    cls = ns[name]

    @settings(max_examples=150, **_SETTINGS)
    @given(st.one_of(st.text(max_size=60), st.lists(st.sampled_from(_PIECES), max_size=25).map("".join),
                     st.binary(max_size=40)))
    def run(text):
        _check(cls, text, ns)

    run()


@pytest.mark.parametrize("name", [P3, P2])
def test_mutated_valid_text(name):
    ns = conformance.schema()
    cls = ns[name]
    edits = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 1 << 16), st.sampled_from(_PIECES)),
                     min_size=1, max_size=4)

    @settings(max_examples=20, **_SETTINGS)  # (about 20 s of CPU at 40 on CI's machine: the suite's budget)
    @given(values(cls, max_depth=2, unknown_fields=False), edits, st.booleans())
    def run(x, ops, one_line):
        text = pbj.to_text(x, one_line=one_line, extensions=ns)
        for op, where, piece in ops:
            at = where % (len(text) + 1)
            if op == 0:
                text = text[:at] + text[at + 1:]
            elif op == 1:
                text = text[:at] + piece + text[at:]
            elif op == 2:
                text = text[:at] + text[at:at + 8] + text[at:]
            else:
                text = text[:at]
        _check(cls, text, ns)

    run()


@pytest.mark.parametrize("text", [
    "recursive_message {" * 100_000,
    "recursive_message <" * 50_000 + ">" * 50_000,
    "reserved_field {" + " a {" * 100_000,
    "reserved_field: " + "[" * 100_000,
    "optional_any { [type.googleapis.com/protobuf_test_messages.proto3.TestAllTypesProto3] {" * 20_000,
])
def test_deep_nesting_is_a_text_error(text):
    with pytest.raises(pbj.TextError, match="nested deeper than max_depth"):
        pbj.from_text(conformance.schema()[P3], text)


def test_long_inputs():
    cls = conformance.schema()[P3]
    value = pbj.from_text(cls, "repeated_int32: [" + "1," * 200_000 + "2]")
    assert len(value.repeated_int32) == 200_001
    value = pbj.from_text(cls, "optional_bytes: '" + "\\377" * 100_000 + "'")
    assert value.optional_bytes == b"\xff" * 100_000
    with pytest.raises(pbj.TextError, match="out of range"):
        pbj.from_text(cls, "optional_int32: " + "9" * 100_000)
    assert pbj.from_text(cls, "optional_double: " + "9" * 100_000).optional_double == float("inf")
