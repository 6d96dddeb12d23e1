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


_I32 = (-(1 << 31), (1 << 31) - 1)
_I64 = (-(1 << 63), (1 << 63) - 1)
_F32_MAX = 3.4028234663852886e38
_text = st.text(st.characters(exclude_categories=("Cs",)), max_size=10)


def scalars() -> st.SearchStrategy[dict[str, Any]]:
    """``Scalars``: every scalar kind, each near its rule's bounds."""
    return st.fixed_dictionaries({
        "d": st.one_of(st.sampled_from([-10.5, -10.500001, 99.999, 100.0, 0.0, math.nan, math.inf, -math.inf]),
                       st.floats(allow_nan=True)),
        "f": st.one_of(st.sampled_from([0.0, 1.401298464324817e-45, 1.0, 1.0000001, -1.0, 0.5, math.nan]),
                       st.floats(-_F32_MAX, _F32_MAX, width=32)),
        "i32": _ints(-7, -6, -2, 0, 2, 6, 7, *_I32, lo=-8, hi=8),
        "i64": _ints(-10**12, -10**12 + 1, 10**12 - 1, 10**12, 0, *_I64, lo=_I64[0], hi=_I64[1]),
        "u32": _ints(0, 1, 2, 3, 4, 7, 8, (1 << 32) - 1, lo=0, hi=(1 << 32) - 1),
        "u64": _ints(0, 18446744073709551000, 18446744073709551001, (1 << 64) - 1, lo=0, hi=(1 << 64) - 1),
        "s32": _ints(-100, -99, 0, 99, 100, *_I32, lo=-101, hi=101),
        "s64": _ints(-2, -1, 0, 1, 2, *_I64, lo=-3, hi=3),
        "fx32": _ints(0, 999, 1000, (1 << 32) - 1, lo=0, hi=(1 << 32) - 1),
        "fx64": _ints(0, 4, 5, 6, 10, 11, (1 << 64) - 1, lo=0, hi=12),
        "sfx32": _ints(0, 1, 2, 3, 4, *_I32, lo=-1, hi=5),
        "sfx64": _ints(-4, -3, 3, 4, *_I64, lo=-5, hi=5),
        "flag": st.booleans(),
        "text": st.one_of(st.sampled_from(["", "a", "abcdefgh", "abcdefghi", "ABC", "\u00e9"]), _text),
        "blob": st.binary(max_size=6),
        "color": st.sampled_from([0, 1, 2, 3, 7]),
        "email": st.sampled_from(["", "a@b.co", "not-an-email", "x@", "a@b", "first.last@example.com"]),
        "uuid": st.sampled_from(["", "550e8400-e29b-41d4-a716-446655440000", "nope",
                                 "550E8400-E29B-41D4-A716-446655440000", "550e8400e29b41d4a716446655440000"]),
        "opt": st.sampled_from([None, 10, 11, -1, 0]),
        "name": st.sampled_from(["", "n"]),
    })


def items() -> st.SearchStrategy[dict[str, Any]]:
    """``Item``: a message-level CEL rule over two fields."""
    return st.fixed_dictionaries({"id": st.sampled_from(["", "a", "abc", "abcd"]),
                                  "qty": st.sampled_from([-1, 0, 3])})


def collections() -> st.SearchStrategy[dict[str, Any]]:
    """``Collections``: repeated rules (items, unique, counts) and map rules (keys, values, pairs)."""
    return st.fixed_dictionaries({
        "nums": st.lists(st.integers(-1, 3), max_size=5),
        "names": st.lists(st.sampled_from(["", "a", "ab"]), max_size=3),
        "counts": st.dictionaries(st.sampled_from(["", "a", "abcd", "abcde"]), st.sampled_from([-1, 0, 5]), max_size=4),
        "items": st.dictionaries(st.sampled_from([-1, 0, 1, 2]), items(), max_size=3),
        "list": st.lists(items(), max_size=4),
        "flags": st.dictionaries(st.booleans(), st.sampled_from(["", "x"]), max_size=2),
    })


def choices() -> st.SearchStrategy[dict[str, Any]]:
    """``Choice``: a required oneof (or none of its members), and a message oneof rule on ``a`` and ``b``."""
    member = st.one_of(
        st.just({}),
        st.builds(lambda t: {"text": t}, st.sampled_from(["", "a", "ab"])),
        st.builds(lambda n: {"number": n}, st.sampled_from([-1, 0, 1])),
        st.builds(lambda i: {"item": i}, items()),
    )
    ab = st.fixed_dictionaries({"a": st.sampled_from(["", "x"]), "b": st.sampled_from(["", "y"])})
    return st.builds(lambda m, rest: {**m, **rest}, member, ab)


def _stamp(seconds: list[int], nanos: list[int]) -> st.SearchStrategy[Any]:
    return st.one_of(st.none(), st.fixed_dictionaries({"seconds": st.sampled_from(seconds),
                                                       "nanos": st.sampled_from(nanos)}))


def roots(depth: int = 1) -> st.SearchStrategy[dict[str, Any]]:
    """``Root``: required message fields, Timestamp and Duration rules, a field CEL rule, a
    message CEL rule across two fields, and repeated ``Root`` children (``depth`` levels)."""
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
