"""Private caches and values set by hand are never trusted for a length a writer emits.

A message's cached size (``_pbj_size``), a ``bytes`` value's ``len`` and a sub-message's class
can all be set behind the constructor's back (``object.__setattr__``). Each finding below gave
bytes that do not decode (or an overflow, or engines that disagree); each test runs every writer
on both engines (the ``engine`` fixture) against the bytes of the honest message.
:mod:`fuzz.cache_matrix` holds the whole matrix, which ``fuzz/native_asan.sh`` also runs on the
sanitized build.
"""

from __future__ import annotations

import array

import pytest

import pbj
from fuzz import cache_matrix as M
from pbj import _native
from pbj.codec import codec_of
from tests import test_writer_hardening

engine = test_writer_hardening.engine  # the fixture: each test on both engines
native_only = test_writer_hardening.native_only


GOOD = pbj.encode(M.honest())


def _every_writer(make, expected):
    """Every writer on a new forged message each: the expected bytes (which decode to the honest message)."""
    for name, write in M.WRITERS.items():
        assert write(make()) == expected, name
    assert pbj.decode(M.Top, expected) == M.honest()


def _forged(place, size, warm=True):
    def make():
        o = M.honest()
        if warm:
            pbj.encode(o)
        object.__setattr__(M.PLACES[place](o), "_pbj_size", size)
        return o
    return make


def test_the_whole_matrix_gives_the_honest_bytes_or_the_same_error(engine):
    counts = M.run(engines=(engine,))
    assert counts["cases"] > 300
    assert counts == {**counts, "undecodable": 0, "disagreements": 0}


@native_only
def test_a_huge_cached_size_on_a_map_value_is_measured_again_not_added():
    """2**63-1 cached on a map value overflowed the native size pass's sum (UBSan: encode.c len_field);
    the engine now measures the value again and writes the bytes itself (no decline)."""
    o = M.honest()
    object.__setattr__(o.by_name["k"], "_pbj_size", 2**63 - 1)
    assert _native._engine.encode(codec_of(M.Top).native, o) == GOOD
    assert o.by_name["k"]._pbj_size == len(pbj.encode(o.by_name["k"]))


@pytest.mark.parametrize("size", [-2, -100, True, 0, 2**31, 2**63 - 1, "7", None])
@pytest.mark.parametrize("place", ["many[0]", "many[2].at", "by_name[k]", "pick", "one.at"])
def test_a_cached_size_set_by_hand_on_a_sub_message(engine, place, size):
    _every_writer(_forged(place, size), GOOD)


@pytest.mark.parametrize("k", [-1, 1])
def test_a_wrong_positive_size_the_total_does_not_show(engine, k):
    """one.at's size off by one (its length byte stays one byte): the Python writer checked only the total."""
    _every_writer(_forged("one.at", None), GOOD)  # (warm-up: a size of another type)
    o = M.honest()
    pbj.encode(o)
    real = o.one.at._pbj_size

    def make():
        o = M.honest()
        pbj.encode(o)
        object.__setattr__(o.one.at, "_pbj_size", real + k)
        return o
    _every_writer(make, GOOD)


@pytest.mark.parametrize(("value", "real"), [
    (M.LyingBytes(b"abcdef", 1), b"abcdef"),
    (M.LyingBytes(b"ab", 200), b"ab"),
    (memoryview(array.array("i", [1, 2, 3])), array.array("i", [1, 2, 3]).tobytes()),
    (memoryview(b"abcdefgh")[::2], b"aceg"),
], ids=["len too small", "len too large", "array of int", "strided"])
@pytest.mark.parametrize("where", ["blob", "many[0].blob", "blobs[b]"])
def test_a_buffer_is_written_by_its_own_length(engine, value, real, where):
    put = M._BYTES_PLACES[where]
    honest = M.honest()
    put(honest, real)
    expected = pbj.encode(honest)

    def make():
        o = M.honest()
        put(o, value)
        return o
    for name, write in M.WRITERS.items():
        assert write(make()) == expected, name


@pytest.mark.parametrize("measured", [False, True])
@pytest.mark.parametrize("where", ["one", "many[1]", "by_name[k]", "pick"])
def test_a_sub_message_of_another_class_with_the_same_field_names(engine, where, measured):
    """The reverse writers wrote a LeafLike as a Leaf, dropping its extra field; every writer refuses it."""
    put, path = M._WRONG_PLACES[where]

    def make():
        o = M.honest()
        v = M.LeafLike(blob=b"ab", text="t", extra=7)
        if measured:
            pbj.encode(v)
        put(o, v)
        return o
    for name, write in M.WRITERS.items():
        with pytest.raises(pbj.EncodeError, match="needs a Leaf, got LeafLike") as err:
            write(make())
        assert err.value.path == path, name


def test_encoded_size_measures_a_size_of_another_type_again(engine):
    o = M.honest()
    object.__setattr__(o, "_pbj_size", "7")
    assert pbj.encoded_size(o) == len(GOOD)
    o = M.honest()
    object.__setattr__(o.one, "_pbj_size", None)
    assert pbj.encoded_size(o) == len(GOOD)
