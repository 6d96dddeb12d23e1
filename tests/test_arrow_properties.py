"""``from_arrow(to_arrow(ms)) == ms`` for every message class of ../shared/protos and the conformance messages.

The values are ``pbj.testing.values`` examples, with what the mapping
documents as lost taken out first (docs/arrow.md): unknown fields (not
columns), and ``Timestamp``/``Duration`` values Arrow's ``timestamp[ns]`` /
``duration[ns]`` cannot hold (made normalized and in range). The comparison is
``pbj.testing.equivalent`` (NaN-aware) and the encodings of both sides (which
also compares presence). The CI selection draws a few examples per class; the
``slow`` run draws many.
"""

from __future__ import annotations

from functools import cache

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pbj
import pbj.arrow
from pbj.schema import info
from pbj.testing import equivalent, values
from tests.oracle import suite_message_names, suite_set

SUITES = ("hapi", "pbj-it", "proto3", "proto2")


@cache
def namespace(suite: str) -> pbj.Namespace:
    return pbj.load_descriptor_set(suite_set(suite))


CASES = [(suite, name) for suite in SUITES for name in suite_message_names(suite, skip_google=suite == "hapi")]
_NANOS = 10**9
_TS_SECONDS = (-9_223_372_036, 9_223_372_035)  # whole seconds timestamp[ns] holds with any nanos


def holdable(value):
    """``value`` without what the mapping cannot hold: unknown fields, and Timestamps/Durations out of range."""
    if isinstance(value, pbj.OneOf):  # a tuple too
        return pbj.OneOf(value.which, holdable(value.value))
    if isinstance(value, tuple):
        return tuple(holdable(v) for v in value)
    if isinstance(value, dict):
        return pbj.FrozenMap({k: holdable(v) for k, v in value.items()})
    if not pbj.is_message(value):
        return value
    cls = type(value)
    mi = info(cls)
    by_proto = {f.proto_name: f.name for f in mi.fields}
    if mi.full_name == "google.protobuf.Timestamp":
        lo, hi = _TS_SECONDS
        s, n = getattr(value, by_proto["seconds"]), getattr(value, by_proto["nanos"])
        return cls(**{by_proto["seconds"]: lo + (s - lo) % (hi - lo), by_proto["nanos"]: n % _NANOS})
    if mi.full_name == "google.protobuf.Duration":
        s, n = getattr(value, by_proto["seconds"]), getattr(value, by_proto["nanos"])
        s = s % _TS_SECONDS[1]
        return cls(**{by_proto["seconds"]: s, by_proto["nanos"]: abs(n) % _NANOS})
    from pbj.schema import stored

    return cls(**{a.alias: holdable(stored(value, a.name)) for a in attrs.fields(cls)
                  if a.init and not a.name.startswith("_pbj_")})


def check_round_trip(cls, messages) -> None:
    kept = [holdable(m) for m in messages]
    table = pbj.arrow.to_arrow(kept, cls)
    assert table.num_rows == len(kept)
    assert table.schema.equals(pbj.arrow.arrow_schema(cls))
    back = pbj.arrow.from_arrow(table, cls)
    assert equivalent(back, kept, unknown_fields=False)
    assert [pbj.encode(m, allow_partial=True) for m in back] == [pbj.encode(m, allow_partial=True) for m in kept]
    numbers = pbj.arrow.to_arrow(kept, cls, enums="number")
    assert equivalent(pbj.arrow.from_arrow(numbers, cls, enums="number"), kept, unknown_fields=False)


def run(suite: str, name: str, examples: int) -> None:
    cls = namespace(suite)[name]

    @settings(max_examples=examples, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                     HealthCheck.filter_too_much])
    @given(st.lists(values(cls, max_depth=2), min_size=1, max_size=3))
    def prop(messages):
        check_round_trip(cls, messages)

    prop()


#: The CI selection: a few examples per class (the conformance messages are large: 2 each), HAPI's 1.
CI_EXAMPLES = {"hapi": 1, "pbj-it": 4, "proto3": 2, "proto2": 2}


#: HAPI's classes in the CI selection: every 8th (all of them run under ``-m slow``; BlockItem, the
#: largest, also runs in test_arrow_block.py on the real block).
CI_CASES = [c for c in CASES if c[0] != "hapi"] + [c for c in CASES if c[0] == "hapi"][::16]


@pytest.mark.parametrize("suite, name", CI_CASES, ids=[f"{s}:{n}" for s, n in CI_CASES])
def test_round_trip(suite, name):
    run(suite, name, CI_EXAMPLES[suite])


@pytest.mark.slow
@pytest.mark.parametrize("suite, name", CASES, ids=[f"{s}:{n}" for s, n in CASES])
def test_round_trip_many(suite, name):
    run(suite, name, 60)


def test_every_suite_has_classes():
    counts = {suite: sum(1 for s, _ in CASES if s == suite) for suite in SUITES}
    assert counts["proto3"] >= 5 and counts["proto2"] >= 5 and counts["pbj-it"] >= 20 and counts["hapi"] > 300
