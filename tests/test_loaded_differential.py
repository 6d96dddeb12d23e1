"""Differential test of loaded schemas against Google's protobuf.

For every message of the HAPI v0.55.0 schemas, of ``pbj-it`` and of
``test_messages_proto3.proto``, loaded by pbj (``load_descriptor_set`` on the
set protoc writes) and by Google (the same set, in its default pool):
``pbj.testing.values`` examples encode, with both writers, to Google's
deterministic bytes (Google parses pbj's encoding and writes it again), and
pbj decodes Google's bytes back to an equivalent value.
"""

from __future__ import annotations

from functools import cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pbj
from pbj.testing import equivalent, values
from tests.oracle import google_class, suite_message_names, suite_set

SUITES = ("hapi", "pbj-it", "proto3")
EXAMPLES = 10


@cache
def _namespace(suite: str) -> pbj.Namespace:
    return pbj.load_descriptor_set(suite_set(suite))


CASES = [(suite, name) for suite in SUITES for name in suite_message_names(suite)]
#: The default selection's cases: every message of pbj-it and proto3, and one HAPI message in three
#: (353 messages, most of them transaction bodies of the same few shapes; the same one in three on every
#: run). The ``slow`` tests run every case with more examples; ``test_same_text_as_protoc`` reads every
#: HAPI message in the default selection.
DEFAULT_CASES = [case for i, case in enumerate(CASES) if case[0] != "hapi" or i % 3 == 0]


def _multi_entry_map(value) -> bool:
    """Whether ``value`` holds, at any depth, a map with two or more entries."""
    for f in pbj.fields(type(value)):
        v = getattr(value, f.oneof or f.name)
        if f.oneof is not None:
            items = [v.value] if v is not None and v.which == f.name else []
        elif f.is_map:
            if len(v) > 1:
                return True
            items = list(v.values())
        else:
            items = list(v) if f.repeated else [v]
        if any(pbj.is_message(x) and _multi_entry_map(x) for x in items):
            return True
    return False


def _check(cls, gcls, value) -> None:
    ours = pbj.encode(value)
    assert pbj.encode(value, reverse=True) == ours
    expected = gcls.FromString(ours).SerializeToString(deterministic=True)
    if ours != expected and _multi_entry_map(value):
        # upb (protobuf 7.x) writes map entries in an order of its own, not ascending by key;
        # Google's pure-Python backend sorts them as pbj does (test_map_order_* below).
        # Here the two encodings must hold the same message, entry for entry.
        assert len(ours) == len(expected)
        assert gcls.FromString(ours) == gcls.FromString(expected)
    else:
        assert ours == expected
    back = pbj.decode(cls, expected)
    assert equivalent(back, value)


def _run(suite: str, name: str, examples: int, check=None) -> None:
    """Run ``check(pbj_class, google_class, value)`` (default: the binary check) on ``examples``
    pbj.testing values of message ``name`` of ``suite``; also used by test_json_loaded."""
    cls = _namespace(suite)[name]
    gcls = google_class(name)
    check = check or _check

    @settings(max_examples=examples, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                     HealthCheck.filter_too_much])
    @given(st.data())
    def run(data):
        check(cls, gcls, data.draw(values(cls, max_depth=2)))

    run()


@pytest.mark.parametrize("suite, name", DEFAULT_CASES, ids=[f"{s}:{n}" for s, n in DEFAULT_CASES])
def test_matches_google(suite, name):
    _run(suite, name, EXAMPLES)


@pytest.mark.slow
@pytest.mark.parametrize("suite, name", CASES, ids=[f"{s}:{n}" for s, n in CASES])
def test_matches_google_long(suite, name):
    _run(suite, name, 300)


def test_every_message_is_covered():
    for suite in SUITES:
        assert set(suite_message_names(suite)) == set(_namespace(suite).messages)


_PURE_PYTHON = """
import sys
from tests.oracle import PBJ_IT, google_class, protoc
from google.protobuf.internal import api_implementation
assert api_implementation.Type() == "python"
protoc(sorted(p.name for p in PBJ_IT.glob("*.proto")), [PBJ_IT])
cls = google_class("proto.Everything")
sys.stdout.write(cls.FromString(sys.stdin.buffer.read()).SerializeToString(deterministic=True).hex())
"""


def test_map_order_matches_google_pure_python():
    """Map entries ascending by key, as Google's pure-Python backend writes them deterministically."""
    import os
    import subprocess
    import sys

    from tests.conftest import REPO

    cls = _namespace("pbj-it")["proto.Everything"]
    inner = _namespace("pbj-it")["proto.InnerEverything"]
    value = cls(mapInt32ToString={3: "c", -1: "m", 1: "a", 2**31 - 1: "z"},
                mapInt64ToBool={-(2**63): True, 5: False, -2: True, 2**40: True},
                mapUInt64ToBytes={2**64 - 1: b"x", 0: b"", 7: b"y"},
                mapBoolToDouble={True: 1.5, False: -0.0},
                mapStringToMessage={"b": inner(), "ab": inner(text="t"), "a": inner(), "\u00e9": inner()})
    ours = pbj.encode(value)
    env = {**os.environ, "PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION": "python"}
    out = subprocess.run([sys.executable, "-c", _PURE_PYTHON], input=ours, capture_output=True, env=env,
                         cwd=REPO, check=True)
    expected = bytes.fromhex(out.stdout.decode())
    assert ours == expected
    assert pbj.encode(value, reverse=True) == expected
