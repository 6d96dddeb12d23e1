"""Fuzz properties on hostile input, sized for CI (the long runs are ``fuzz/``, see ``fuzz/README.md``).

Every input goes through one check of :mod:`fuzz.targets`:

* decoding (:func:`fuzz.targets.check_decode`): ``pbj.decode`` returns or
  raises ``pbj.DecodeError`` only; when Google's protobuf (upb, the same
  schema compiled by protoc) accepts the bytes, pbj accepts them and both
  re-encode to the same bytes; whatever pbj accepts re-encodes (both writers
  alike) and decodes again to an equivalent value;
* JSON (:func:`fuzz.targets.check_json`): ``pbj.from_json`` returns or raises
  ``pbj.DecodeError`` (``pbj.JSONError``) only;
* loading (:func:`fuzz.targets.check_loader`): ``pbj.load_descriptor_set``
  returns a namespace whose every class works, or raises ``SchemaError`` or
  ``DecodeError`` and registers nothing.

Inputs: random bytes; valid encodings of ``pbj.testing.values`` with bytes
flipped, inserted, deleted, duplicated, truncated and huge varints (declared
lengths and counts) inserted; slices and mutations of the real block's
``BlockItem`` encodings; random and mutated JSON text; corrupt descriptor sets
(byte edits and structured edits of the descriptors). Deep nesting, huge
lengths, time and memory are in ``tests/test_hostile_limits.py``.

Measured on the 2-core machine: about 2 minutes for the whole module when the machine is quiet, up to 4 when it is busy.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import pbj
import pbj.testing
from fuzz import targets as T

_SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                                       HealthCheck.filter_too_much])
_SMALL = ["everything", "maps", "node", "choice", "presence", "unpacked", "proto2"]


def _ops() -> st.SearchStrategy[list[tuple[int, int, bytes]]]:
    """Edit operations for :func:`fuzz.targets.mutate`."""
    return st.lists(st.tuples(st.integers(0, 6), st.integers(0, 1 << 24), st.binary(max_size=9)),
                    min_size=1, max_size=4)


@pytest.fixture(scope="module", params=_SMALL)
def target(request):
    return T.target(request.param)


# ---------------------------------------------------------------- decode

def test_targets_agree_with_google_on_valid_input(target):
    """The harness itself: a valid encoding is accepted by both sides, with the same bytes."""
    @settings(max_examples=20, **_SETTINGS)
    @given(pbj.testing.values(target.cls, max_depth=2))
    def run(x):
        data = target.google.FromString(pbj.encode(x)).SerializePartialToString(deterministic=True)
        assert T.check_decode(target, data) is not None
    run()


def test_random_bytes(target):
    @settings(max_examples=300, **_SETTINGS)
    @given(st.binary(max_size=64))
    def run(data):
        T.check_decode(target, data)
    run()


def test_mutated_valid_encodings(target):
    examples = 40 if target.name == "everything" else 70

    @settings(max_examples=examples, **_SETTINGS)
    @given(pbj.testing.values(target.cls, max_depth=2), _ops())
    def run(x, ops):
        data = pbj.encode(x)
        T.check_decode(target, data)
        T.check_decode(target, T.mutate(data, ops))
    run()


def test_every_truncation_of_a_valid_encoding(target):
    @settings(max_examples=15, **_SETTINGS)
    @given(pbj.testing.values(target.cls, max_depth=2))
    def run(x):
        data = pbj.encode(x)
        for n in range(0, len(data), max(1, len(data) // 64)):
            T.check_decode(target, data[:n])
    run()


@settings(max_examples=300, **_SETTINGS)
@given(st.data())
def test_block_item_slices_and_mutations(data):
    items = T.block_items()
    item = items[data.draw(st.integers(0, len(items) - 1))]
    if data.draw(st.booleans()):
        i = data.draw(st.integers(0, len(item)))
        j = data.draw(st.integers(i, len(item)))
        raw = item[i:j]
    else:
        raw = T.mutate(item, data.draw(_ops()))
    T.check_decode(T.target("blockitem"), raw)


def test_every_kind_of_block_item_truncated_everywhere():
    """Each kind of block item (first of its kind), cut at 64 points along its length."""
    t = T.target("blockitem")
    seen: set[str] = set()
    for item in T.block_items():
        obj = T.check_decode(t, item)
        assert obj is not None
        if obj.item.which in seen:
            continue
        seen.add(obj.item.which)
        for n in range(0, len(item), max(1, len(item) // 64)):
            T.check_decode(t, item[:n])
    assert len(seen) == 7


# ---------------------------------------------------------------- JSON

_JSON_TEXT = st.one_of(
    st.text(max_size=40),
    st.binary(max_size=40),
    st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=6)),
                 lambda inner: st.one_of(st.lists(inner, max_size=3),
                                         st.dictionaries(st.text(max_size=8), inner, max_size=3)),
                 max_leaves=8).map(lambda v: __import__("json").dumps(v)),
)


def test_json_random_text(target):
    @settings(max_examples=150, **_SETTINGS)
    @given(_JSON_TEXT)
    def run(text):
        T.check_json(target.cls, text)
    run()


def test_json_mutated_valid_text(target):
    examples = 40 if target.name == "everything" else 80

    @settings(max_examples=examples, **_SETTINGS)
    @given(pbj.testing.values(target.cls, max_depth=2, unknown_fields=False), _ops())
    def run(x, ops):
        text = pbj.to_json(x).encode()
        assert T.check_json(target.cls, text) is not None
        T.check_json(target.cls, T.mutate(text, ops))
    run()


@pytest.mark.parametrize("depth", [99, 100, 101, 5000])
def test_json_deep_nesting(depth):
    node = T.target("node").cls
    nested = '{"parent":' * depth + "{}" + "}" * depth
    T.check_json(node, nested)
    T.check_json(node, "[" * depth)
    T.check_json(node, '{"children":[' * depth)


# ---------------------------------------------------------------- loader

def _loader_sets():
    return T.small_sets()[:2]


@settings(max_examples=40, **_SETTINGS)
@given(st.integers(0, 1), st.binary(min_size=3, max_size=15))
@example(0, b"\x00\xd1\xa6")   # makes P2.fl required: b"" is then refused, naming it (found by seed 7)
def test_loader_structured_edits(which, choices):
    T.check_loader(T.mutate_descriptor(_loader_sets()[which], choices))


@settings(max_examples=40, **_SETTINGS)
@given(st.integers(0, 1), _ops())
def test_loader_byte_edits(which, ops):
    T.check_loader(T.mutate(_loader_sets()[which], ops))


@settings(max_examples=100, **_SETTINGS)
@given(st.binary(max_size=64))
def test_loader_random_bytes(data):
    T.check_loader(data)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 9, 17, 100, 1000, 10_000, 100_000])
def test_loader_truncated_hapi(n):
    """The shipped HAPI set cut short: DecodeError (or a smaller, complete schema), never half-built."""
    data = T.hapi_set()
    T.check_loader(data[:len(data) - n])


# ---------------------------------------------------------------- determinism

def test_ci_runs_every_property_test_deterministically():
    """CI's hypothesis profile draws the same examples every run and keeps no example database (a
    failure of one seed cannot come back on its own, as test_loader_structured_edits once did);
    CI selects it, and no test sets a seed or turns derandomizing off around itself."""
    import re

    from tests.conftest import REPO
    ci = settings.get_profile("ci")
    assert ci.derandomize is True and ci.database is None
    assert re.search(r"^export HYPOTHESIS_PROFILE=ci$", (REPO / ".ci" / "run").read_text(), re.M)
    forcing = ["@" + "seed(", "derandomize" + "=False", "HYPOTHESIS" + "_SEED", "--hypothesis" + "-seed"]
    for path in sorted((REPO / "tests").glob("*.py")):
        text = path.read_text(encoding="utf-8")
        assert not [f for f in forcing if f in text], path.name


def test_native_harness_refuses_a_build_that_is_not_the_sanitized_one(monkeypatch):
    """fuzz/native_asan.sh names its sanitized copy (PBJ_FUZZ_SANITIZED); the harness stops on any other
    build (it once fuzzed the repository's own build: the copy was never imported)."""
    from fuzz.fuzz_native import check_engine
    from pbj import _native

    if not _native.available():
        pytest.skip("the native engine is not built")
    monkeypatch.setenv("PBJ_FUZZ_SANITIZED", "/nowhere/pbj/_native/")
    with pytest.raises(SystemExit, match="not the sanitized build in /nowhere"):
        check_engine()
    monkeypatch.setenv("PBJ_FUZZ_SANITIZED", str(_native._engine.__file__).rsplit("/", 1)[0] + "/")
    check_engine()


def test_native_lean_checks_run_the_native_engine_alone():
    """check_native (every input of the lean mode) decodes and writes with the native engine only:
    no generated Python parser or writer runs, and it agrees with check_same on what it saw."""
    from fuzz.native_checks import NATIVE_STATS, check_native
    from pbj import _native
    from pbj.codec import codec_of

    if not _native.available():
        pytest.skip("the native engine is not built")
    t = T.target("node")
    value = t.cls(name="a", children=(t.cls(name="b"), t.cls(name="b")))
    data = pbj.encode(value)
    codec = codec_of(t.cls)
    before = dict(NATIVE_STATS)
    parse, write, write_fresh = codec.parse, codec.write, codec.write_fresh
    def refuse(*args):
        raise AssertionError("a Python parser or writer ran")
    engine = pbj.engine()
    try:
        pbj.use_engine("native")  # pbj.decode too, whatever engine the suite runs on
        codec.parse = codec.write = codec.write_fresh = refuse
        assert check_native(t.cls, data) == value
        assert isinstance(check_native(t.cls, data + b"\xff"), pbj.DecodeError)
    finally:
        codec.parse, codec.write, codec.write_fresh = parse, write, write_fresh
        pbj.use_engine(engine)
    assert NATIVE_STATS["value"] == before["value"] + 1 and NATIVE_STATS["error"] == before["error"] + 1


# ---------------------------------------------------------------- long runs

@pytest.mark.slow
def test_long_decode_run():
    """A long hypothesis run of every decode property (``pytest -m slow``); atheris is faster."""
    for name in [*_SMALL, "blockitem"]:
        t = T.target(name)

        @settings(max_examples=20_000, **_SETTINGS)
        @given(st.binary(max_size=200), _ops())
        def run(data, ops, t=t):
            T.check_decode(t, data)
            T.check_decode(t, T.mutate(data, ops))
        run()
