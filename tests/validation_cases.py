"""The schema of ``tests/protos/validate_cases.proto`` loaded in pbj and compiled for Google, and
hypothesis strategies of its ``Root`` message in the Python form of :func:`pbj.from_python`
(attribute names -> values), with values at and around the bounds of each rule, so that both
sides of every rule are met often.

One value builds both messages: ``pbj.from_python(Root, value)`` and Google's
``Root(**google_kwargs(value))``; pbj.validate's violations of the first are compared with
protovalidate's of the second (tests/test_validation.py).
"""

from __future__ import annotations

import math
from functools import cache
from typing import Any

from hypothesis import strategies as st

import pbj
from pbj.validation import PROTO_INCLUDE
from tests.everything_classes import PROTOS
from tests.oracle import GOOGLE_PROTOS, google_class, protoc

PKG = "pbjtest.validate"


@cache
def namespace() -> Any:
    """The pbj namespace of validate_cases.proto (its imports included; compiled once)."""
    return pbj.load_descriptor_set(protoc([PROTOS / "validate_cases.proto"], [PROTOS, PROTO_INCLUDE, GOOGLE_PROTOS]))


def google_root() -> Any:
    """Google's class of ``pbjtest.validate.Root`` (the same compilation, in the default pool)."""
    namespace()
    return google_class(f"{PKG}.Root")


def google_kwargs(value: Any) -> Any:
    """The Python form with ``None`` (unset) left out, as Google's constructors take it."""
    if isinstance(value, dict):
        return {k: google_kwargs(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [google_kwargs(v) for v in value]
    return value


def _ints(*edges: int, lo: int, hi: int) -> st.SearchStrategy[int]:
    return st.one_of(st.sampled_from(edges), st.integers(lo, hi))


def _pick(clean: bool, valid: st.SearchStrategy[Any], other: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """A field's values: only ``valid`` ones in a clean message, else valid ones, edges and anything."""
    return valid if clean else st.one_of(valid, other)


def _mixed(build: Any) -> Any:
    """A message strategy drawing a clean message (every rule kept) or a mixed one, half and half.

    ``build`` is cached, so each draw reuses the same two strategy objects: hypothesis validates
    a strategy once per object, and a strategy tree built anew at each draw cost ~90% of the
    differential run's time (validation, not the rules)."""
    return lambda: st.booleans().flatmap(build)


_I32 = (-(1 << 31), (1 << 31) - 1)
_I64 = (-(1 << 63), (1 << 63) - 1)
_F32_MAX = 3.4028234663852886e38
_text = st.text(st.characters(exclude_categories=("Cs",)), max_size=10)
_lower = st.text(st.characters(min_codepoint=97, max_codepoint=122), min_size=1, max_size=8)


@cache
def _scalars(clean: bool) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({
        "d": _pick(clean, st.one_of(st.sampled_from([-10.5, 0.0, 99.999]), st.floats(-10.5, 99.99)),
                   st.one_of(st.sampled_from([-10.500001, 100.0, math.nan, math.inf, -math.inf]),
                             st.floats(allow_nan=True))),
        "f": _pick(clean, st.sampled_from([1.401298464324817e-45, 0.5, 1.0]),
                   st.one_of(st.sampled_from([0.0, 1.0000001, -1.0, math.nan]),
                             st.floats(-_F32_MAX, _F32_MAX, width=32))),
        "i32": _pick(clean, st.sampled_from([-6, -4, -2, 2, 4, 6]), _ints(-7, 0, 7, 3, *_I32, lo=-8, hi=8)),
        "i64": _pick(clean, st.integers(-10**12 + 1, 10**12 - 1),
                     _ints(-10**12, 10**12, *_I64, lo=_I64[0], hi=_I64[1])),
        "u32": _pick(clean, st.sampled_from([0, 1, 2, 3, 7]), _ints(4, 8, (1 << 32) - 1, lo=0, hi=(1 << 32) - 1)),
        "u64": _pick(clean, st.integers(0, 18446744073709551000),
                     _ints(18446744073709551001, (1 << 64) - 1, lo=0, hi=(1 << 64) - 1)),
        "s32": _pick(clean, st.integers(-99, 99), _ints(-100, 100, *_I32, lo=-101, hi=101)),
        "s64": _pick(clean, st.integers(-1, 1), _ints(-2, 2, *_I64, lo=-3, hi=3)),
        "fx32": _pick(clean, st.integers(0, 999), _ints(1000, (1 << 32) - 1, lo=0, hi=(1 << 32) - 1)),
        "fx64": _pick(clean, st.sampled_from([0, 4, 11, (1 << 64) - 1]), _ints(5, 6, 10, lo=0, hi=12)),
        "sfx32": _pick(clean, st.sampled_from([0, 4, -1, 5]), _ints(1, 2, 3, *_I32, lo=-1, hi=5)),
        "sfx64": _pick(clean, st.integers(-3, 3), _ints(-4, 4, *_I64, lo=-5, hi=5)),
        "flag": _pick(clean, st.just(True), st.just(False)),
        "text": _pick(clean, _lower, st.one_of(st.sampled_from(["", "abcdefghi", "ABC", "\u00e9"]), _text)),
        "blob": _pick(clean, st.binary(min_size=1, max_size=4), st.binary(max_size=6)),
        "color": _pick(clean, st.sampled_from([0, 1, 2]), st.sampled_from([3, 7])),
        "email": _pick(clean, st.sampled_from(["", "a@b.co", "first.last@example.com"]),
                       st.sampled_from(["not-an-email", "x@", "a@b c"])),
        "uuid": _pick(clean, st.sampled_from(["", "550e8400-e29b-41d4-a716-446655440000",
                                              "550E8400-E29B-41D4-A716-446655440000"]),
                      st.sampled_from(["nope", "550e8400e29b41d4a716446655440000"])),
        "opt": _pick(clean, st.sampled_from([None, 11]), st.sampled_from([10, -1, 0])),
        "name": _pick(clean, st.just("n"), st.just("")),
    })


@cache
def _items(clean: bool) -> st.SearchStrategy[dict[str, Any]]:
    valid = st.one_of(st.just({"id": "", "qty": 0}),
                      st.fixed_dictionaries({"id": st.sampled_from(["a", "abc"]), "qty": st.sampled_from([0, 3])}))
    other = st.fixed_dictionaries({"id": st.sampled_from(["", "a", "abcd"]), "qty": st.sampled_from([-1, 0, 3])})
    return _pick(clean, valid, other)


@cache
def _collections(clean: bool) -> st.SearchStrategy[dict[str, Any]]:
    item = items() if not clean else _items(True)
    return st.fixed_dictionaries({
        "nums": _pick(clean, st.lists(st.integers(0, 100), min_size=1, max_size=4, unique=True),
                      st.lists(st.integers(-1, 3), max_size=5)),
        "names": _pick(clean, st.lists(st.sampled_from(["ab", "abc"]), max_size=3),
                       st.lists(st.sampled_from(["", "a", "ab"]), max_size=3)),
        "counts": _pick(clean, st.dictionaries(st.sampled_from(["a", "ab", "abcd"]), st.sampled_from([0, 5]),
                                               max_size=3),
                        st.dictionaries(st.sampled_from(["", "a", "abcd", "abcde"]), st.sampled_from([-1, 0, 5]),
                                        max_size=4)),
        "items": st.dictionaries(st.sampled_from([1, 2]) if clean else st.sampled_from([-1, 0, 1, 2]), item,
                                 max_size=3),
        "list": st.lists(item, max_size=3 if clean else 4),
        "flags": st.dictionaries(st.booleans(), st.just("x") if clean else st.sampled_from(["", "x"]), max_size=2),
    })


@cache
def _choices(clean: bool) -> st.SearchStrategy[dict[str, Any]]:
    item = _items(True) if clean else items()
    valid_member = st.one_of(st.builds(lambda t: {"text": t}, st.sampled_from(["ab", "abc"])),
                             st.builds(lambda n: {"number": n}, st.sampled_from([1, 5])),
                             st.builds(lambda i: {"item": i}, item))
    member = _pick(clean, valid_member, st.one_of(
        st.just({}), st.builds(lambda t: {"text": t}, st.sampled_from(["", "a"])),
        st.builds(lambda n: {"number": n}, st.sampled_from([-1, 0]))))
    ab = _pick(clean, st.sampled_from([{"a": "", "b": ""}, {"a": "x", "b": ""}, {"a": "", "b": "y"}]),
               st.just({"a": "x", "b": "y"}))
    return st.builds(lambda m, rest: {**m, **rest}, member, ab)


def _stamp(seconds: list[int], nanos: list[int]) -> st.SearchStrategy[Any]:
    return st.one_of(st.none(), st.fixed_dictionaries({"seconds": st.sampled_from(seconds),
                                                       "nanos": st.sampled_from(nanos)}))


@cache
def _root(clean: bool, depth: int) -> st.SearchStrategy[dict[str, Any]]:
    if clean:
        children = st.lists(_root(True, depth - 1), max_size=2) if depth > 0 else st.just([])
        return st.builds(lambda d, lo_hi: {**d, "lo": min(lo_hi), "hi": max(lo_hi)}, st.fixed_dictionaries({
            "scalars": _scalars(True), "collections": st.one_of(st.none(), _collections(True)),
            "choice": _choices(True), "at": _stamp([1, 5], [0, 1]), "wait": _stamp([0, 59, 60], [0]),
            "code": st.sampled_from(["", "ab", "abcd"]), "children": children}), st.tuples(st.integers(-1, 2),
                                                                                        st.integers(-1, 2)))
    children = st.lists(roots(depth - 1), max_size=3) if depth > 0 else st.just([])
    return st.fixed_dictionaries({
        "scalars": st.one_of(st.none(), scalars()),
        "collections": st.one_of(st.none(), collections()),
        "choice": st.one_of(st.none(), choices()),
        "at": _stamp([-1, 0, 1], [0, 1]),
        "wait": _stamp([0, 59, 60, 61], [0, 1]),
        "lo": st.integers(-1, 2),
        "hi": st.integers(-1, 2),
        "code": st.sampled_from(["", "a", "ab", "abc"]),
        "children": children,
    })


#: ``Scalars``: every scalar kind, each near its rule's bounds (clean: every rule kept).
scalars = _mixed(_scalars)
#: ``Item``: a message-level CEL rule over two fields.
items = _mixed(_items)
#: ``Collections``: repeated rules (items, unique, counts) and map rules (keys, values, pairs).
collections = _mixed(_collections)
#: ``Choice``: a required oneof (or none of its members), and a message oneof rule on ``a`` and ``b``.
choices = _mixed(_choices)


@cache
def roots(depth: int = 1) -> st.SearchStrategy[dict[str, Any]]:
    """``Root``: required message fields, Timestamp and Duration rules, a field CEL rule, a
    message CEL rule across two fields, and repeated ``Root`` children (``depth`` levels); half of
    them clean (every rule of the whole tree kept), half mixed."""
    return st.booleans().flatmap(lambda clean: _root(clean, depth))
