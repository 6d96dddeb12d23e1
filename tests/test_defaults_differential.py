"""Random presence against Google: any subset of defaulted fields set, to any value (its default included).

For hand-declared and loaded classes of ``tests/test_defaults.py``'s schema: the values read, the
presence (``pbj.has`` / ``HasField``), both writers' bytes and decoding Google's bytes agree.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

import pbj
from tests.oracle import google_class
from tests.test_defaults import VALUES, Defaults, loaded  # noqa: F401 (the module-scoped fixture)

_I32, _I64 = st.integers(-2**31, 2**31 - 1), st.integers(-2**63, 2**63 - 1)
_U32, _U64 = st.integers(0, 2**32 - 1), st.integers(0, 2**64 - 1)
STRATEGIES = {
    "i32": _I32, "i64": _I64, "u32": _U32, "u64": _U64, "s32": _I32, "s64": _I64, "f32": _U32, "f64": _U64,
    "sf32": _I32, "sf64": _I64, "fl": st.floats(width=32, allow_nan=False), "db": st.floats(allow_nan=False),
    "b": st.booleans(), "s": st.text(), "by": st.binary(), "c": st.sampled_from([1, 2, 3]),
    "inf": st.floats(allow_nan=False), "ninf": st.floats(allow_nan=False),
    "nan": st.floats(width=32, allow_nan=False), "hex": _I32,
}


def _setting():
    """Each field: absent, its declared default, or any value of its type."""
    return st.fixed_dictionaries({}, optional={
        name: st.one_of(st.just(VALUES[name][0]), strat) for name, strat in STRATEGIES.items()})


@given(values=_setting(), declared=st.booleans())
def test_random_presence_matches_google(loaded, values, declared):  # noqa: F811
    cls = Defaults if declared else loaded["pbjdefaults.Defaults"]
    obj, g = cls(req=1, **values), google_class("pbjdefaults.Defaults")(req=1, **values)
    want = g.SerializeToString()
    assert pbj.encode(obj) == pbj.encode(obj, reverse=True) == want
    back = pbj.decode(cls, want)
    for name in STRATEGIES:
        assert pbj.has(obj, name) is pbj.has(back, name) is g.HasField(name) is (name in values), name
        mine, theirs = getattr(back, name), getattr(g, name)
        assert mine == theirs or (mine != mine and theirs != theirs), name
