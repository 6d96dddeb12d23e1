"""The native engine (pbj/_native) against the pure-Python engine: same values, same bytes, same errors.

Both engines run on the same input in the same process: the native decode
(``_engine.decode``) and the generated Python parser (``codec.parse``) must
give the same value, type for type (an enum member stays a member, a float
keeps its bits, unknown fields are the same bytes), or the native one must
decline an input the Python one refuses. Every value either engine decodes is
encoded by both writers and the bytes compared, with sizes fresh and cached.

Inputs: random bytes, mutations of valid encodings of ``pbj.testing.values``
and of the real block's ``BlockItem`` encodings (:mod:`fuzz.targets`).

Skipped where the extension is not built (the pure-Python install).
"""

from __future__ import annotations

import enum
import math
import os
import struct
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pbj
import pbj.testing
from fuzz import targets as T
from fuzz.native_checks import _encode_python, _python_decode, check_same, identical, native_decode, same_error
from pbj import _native
from pbj.codec import codec_of
from pbj.schema import info
from tests.native_switches import engine_with

pytestmark = [pytest.mark.once,
              pytest.mark.skipif(not _native.available(), reason="the native engine is not built")]

_SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                                       HealthCheck.filter_too_much])
_TARGETS = ["everything", "maps", "node", "choice", "presence", "unpacked", "proto2", "blockitem"]


@pytest.fixture(scope="module", params=_TARGETS)
def target(request):
    return T.target(request.param)


def _ops() -> st.SearchStrategy[list[tuple[int, int, bytes]]]:
    return st.lists(st.tuples(st.integers(0, 6), st.integers(0, 1 << 24), st.binary(max_size=9)),
                    min_size=1, max_size=4)


def test_random_bytes(target):
    @settings(max_examples=200, **_SETTINGS)
    @given(st.binary(max_size=64))
    def run(data):
        check_same(target.cls, data)
    run()


def test_valid_and_mutated_encodings(target):
    @settings(max_examples=60, **_SETTINGS)
    @given(pbj.testing.values(target.cls, max_depth=2), _ops())
    def run(x, ops):
        data = _encode_python(x)
        # a writer's output has no repeated singular sub-message: the engine decodes it itself
        assert type(_native._engine.decode(codec_of(target.cls).native, data, 100)) is target.cls
        assert check_same(target.cls, data) is not None
        check_same(target.cls, T.mutate(data, ops))
    run()


@settings(max_examples=200, **_SETTINGS)
@given(st.data())
def test_block_item_mutations(data):
    items = T.block_items()
    item = items[data.draw(st.integers(0, len(items) - 1))]
    if data.draw(st.booleans()):
        i = data.draw(st.integers(0, len(item)))
        raw = item[i:data.draw(st.integers(i, len(item)))]
    else:
        raw = T.mutate(item, data.draw(_ops()))
    check_same(T.target("blockitem").cls, raw)


def test_every_block_item_decodes_natively_and_round_trips():
    """Every item decoded and written back by the engine; every 3rd also against the Python parser and both
    engines' writers (check_same; the whole block against the Python parser is the `long` test below)."""
    cls = T.target("blockitem").cls
    items = T.block_items()
    for i, item in enumerate(items):
        obj = check_same(cls, item) if i % 3 == 0 else native_decode(cls, item)
        assert obj is not None and not isinstance(obj, pbj.DecodeError), i
        assert _native._engine.encode(codec_of(cls).native, obj) == item
    assert len(items) == 2442


@pytest.mark.long  # every item of the block is checked one by one above, in the default selection
def test_the_whole_block():
    block_cls = pbj.load_descriptor_set(T.hapi_set())["com.hedera.hapi.block.stream.Block"]
    raw = T.block_bytes()
    obj = check_same(block_cls, raw)
    assert obj is not None and len(obj.items) == 2442
    assert _native._engine.encode(codec_of(block_cls).native, obj) == raw


def test_duplicate_sub_message_is_merged_in_the_engine():
    """A singular sub-message twice on the wire is merged ("Last One Wins"), in C, as Python merges it."""
    cls = T.target("node").cls
    t = T.target("node")
    data = b"\x1a\x03\x0a\x01a" + b"\x1a\x03\x0a\x01z"
    codec = codec_of(cls)
    native = _native._engine.decode(codec.native, data, 100)
    assert type(native) is cls and identical(native, _python_decode(cls, data))
    assert pbj.decode(cls, data) == _python_decode(cls, data)
    assert pbj.encode(pbj.decode(cls, data)) == t.google.FromString(data).SerializeToString()


def test_errors_are_the_python_engines(target):
    """pbj.decode raises the same DecodeError (text, path, offset) whichever engine is in use."""
    data = b"\x0a\x05abc"  # a length past the end
    before = pbj.engine()
    try:
        pbj.use_engine("python")
        with pytest.raises(pbj.DecodeError) as want:
            pbj.decode(target.cls, data)
        pbj.use_engine("native")
        with pytest.raises(pbj.DecodeError) as got:
            pbj.decode(target.cls, data)
    finally:
        pbj.use_engine(before)
    assert (str(got.value), got.value.path, got.value.offset) == (str(want.value), want.value.path, want.value.offset)


@pbj.message(syntax="proto2")
class Deep:
    child: Deep | None = pbj.field(1, "Deep")
    group: Deep | None = pbj.field(2, "Deep", group=True)
    kids: tuple[Deep, ...] = pbj.field(3, "Deep", repeated=True)


def _nested(levels: int, kind: int) -> bytes:
    data = b""
    for _ in range(levels):
        if kind == 0:
            data = b"\x0a" + pbj.wire.encode_varint(len(data)) + data
        elif kind == 1:
            data = b"\x13" + data + b"\x14"
        else:
            data = b"\x1a" + pbj.wire.encode_varint(len(data)) + data
    return data


@pytest.mark.parametrize("kind", [0, 1, 2])
def test_depth_limit_is_the_same(kind):
    """Nesting up to and past max_depth: the same value or the same refusal; past 200 levels, Python decides."""
    for levels in (0, 1, 2, 50, 99, 100, 101, 150, 199, 200, 201, 300):
        data = _nested(levels, kind)
        for limit in (0, 1, 2, 50, 100, 150, 1000):
            native = native_decode(Deep, data, limit)
            try:
                python = codec_of(Deep).parse(data, 0, len(data), limit, None)
            except pbj.DecodeError as exc:
                python = exc
            if native is None:
                assert levels >= 200
                continue
            assert isinstance(native, pbj.DecodeError) == isinstance(python, pbj.DecodeError), (kind, levels, limit)
            if isinstance(native, pbj.DecodeError):
                assert same_error(native, python)
                native = python = None
            if native is not None:
                assert identical(native, python) if levels <= 50 else _encode_python(native) == data
            assert (python is None) == (levels > limit)


def test_engine_selection():
    assert pbj.engine() in ("native", "python")
    with pytest.raises(ValueError):
        pbj.use_engine("fast")
    env = dict(os.environ, PBJ_ENGINE="python")
    out = subprocess.run([sys.executable, "-c", "import pbj; print(pbj.engine())"], env=env,
                         capture_output=True, text=True, check=True).stdout.strip()
    assert out == "python"
    env["PBJ_ENGINE"] = "native"
    out = subprocess.run([sys.executable, "-c", "import pbj; print(pbj.engine())"], env=env,
                         capture_output=True, text=True, check=True).stdout.strip()
    assert out == "native"


def test_float_bits_survive():
    cls = T.target("everything").cls
    mi = info(cls)
    names = [f.name for f in mi.fields if f.type == "double" and not f.repeated and not f.optional]
    assert names
    for x in (math.nan, -0.0, math.inf, -math.inf, 5e-324, 1.7976931348623157e308):
        obj = pbj.testing.unchecked(cls, **{names[0]: x})
        data = _encode_python(obj)
        got = check_same(cls, data)
        assert got is not None and struct.pack("<d", getattr(got, names[0])) == struct.pack("<d", x)


def test_untracked_decode_is_opt_in_and_equal():
    """Decoded messages are tracked by the cyclic GC unless asked (docs/performance.md: a class
    attribute holding a decoded instance would make a cycle the collector could not see)."""
    import gc

    cls = T.target("blockitem").cls
    item = T.block_items()[0]
    plan = codec_of(cls).native
    tracked = _native._engine.decode(plan, item, 100)
    assert gc.is_tracked(tracked)
    untracked = engine_with(untrack=1).decode(plan, item, 100)  # PBJ_NATIVE_UNTRACK=1 (read at import)
    assert not gc.is_tracked(untracked) and not hasattr(_native._engine, "set_untrack")
    assert identical(tracked, untracked) and pbj.encode(untracked) == item


@pbj.message
class Wide:
    d: float = pbj.field(1, "double")
    blob: bytes = pbj.field(2, "bytes")
    kids: tuple[Wide, ...] = pbj.field(3, "Wide", repeated=True)


def test_a_declined_write_falls_back_after_the_buffer_grew():
    """The reverse writer declines a value it does not know (an int in a double field) after it grew
    the buffer: the Python writer starts again where the write began and the bytes are right."""
    odd = pbj.testing.unchecked(Wide, d=3, blob=b"x" * 10_000)  # struct.pack("<d", 3) works in Python
    expected = pbj.encode(Wide(d=3.0, blob=b"x" * 10_000))
    nested = pbj.testing.unchecked(Wide, kids=(odd, Wide(blob=b"y" * 5_000)))
    nested_expected = pbj.encode(Wide(kids=(Wide(d=3.0, blob=b"x" * 10_000), Wide(blob=b"y" * 5_000))))
    plan = codec_of(Wide).native
    assert _native._engine.encode(plan, odd) is None                # the forward writer declines too
    for obj, want in ((odd, expected), (nested, nested_expected)):
        buf = pbj.ReverseBuffer(16)
        buf.write_bytes(b"tail")
        assert pbj.write_reverse(obj, buf) == len(want)
        assert buf.to_bytes() == want + b"tail"
        assert pbj.encode(obj, reverse=True) == want == pbj.encode(obj)


def test_a_refused_write_leaves_the_buffer_as_it_was():
    bad = pbj.testing.unchecked(Wide, d="not a number", blob=b"z" * 10_000)
    buf = pbj.ReverseBuffer(16)
    buf.write_bytes(b"tail")
    with pytest.raises(pbj.EncodeError) as err:
        pbj.write_reverse(bad, buf)
    assert err.value.path == ["d"]
    assert buf.to_bytes() == b"tail"
    with pytest.raises(pbj.EncodeError):
        pbj.encode(bad)


# ----------------------------------------------------- issue 12's wire rules, in the engine

@pbj.message(full_name="nat12.V")
class _V:
    c: int = pbj.field(1, "int32")
    d: int = pbj.field(2, "int32")


@pbj.message(full_name="nat12.M")
class _M:
    m: pbj.FrozenMap[int, _V] = pbj.map_field(1, "int32", _V)


@pbj.message(full_name="nat12.F")
class _F:
    f: float = pbj.field(1, "float")
    fs: tuple[float, ...] = pbj.field(2, "float", repeated=True)


def _f32_bits(x: float) -> int:
    from pbj.codec.float32 import nan_bits
    return nan_bits(x) if x != x else struct.unpack("<I", struct.pack("<f", x))[0]


@pytest.mark.parametrize("bits", [0x7F800001, 0xFF800001, 0x7FC00000, 0x7FBFFFFF, 0xFFFFFFFF, 0x7F812345])
def test_float_nan_bits_in_the_engine(bits):
    """A float NaN decoded in C keeps its bits (signalling ones too) and both C writers put them back."""
    four = struct.pack("<I", bits)
    data = b"\x0d" + four + b"\x12\x08" + four + four
    codec = codec_of(_F)
    native = _native._engine.decode(codec.native, data, 100)
    assert native is not None  # decoded in C, not handed over
    assert _f32_bits(native.f) == bits and [_f32_bits(v) for v in native.fs] == [bits, bits]
    assert identical(native, _python_decode(_F, data))
    assert _native._engine.encode(codec.native, native) == data == _encode_python(native)
    assert pbj.encode(native, reverse=True) == data


def test_map_value_twice_is_merged_in_the_engine():
    """A map entry whose message value occurs twice is merged (it is a message), in C."""
    data = bytes.fromhex("0a0a08011202080112021002")
    codec = codec_of(_M)
    native = _native._engine.decode(codec.native, data, 100)
    assert native == _M(m={1: _V(c=1, d=2)}) and identical(native, _python_decode(_M, data))
    assert pbj.decode(_M, data) == _M(m={1: _V(c=1, d=2)})
    assert pbj.encode(pbj.decode(_M, data)) == bytes.fromhex("0a080801120408011002")


class _E(enum.IntEnum):
    A = 0
    B = 1


_E.__pbj_closed__ = True  # type: ignore[attr-defined]  # a proto2 enum


@pbj.message(full_name="nat12.C", syntax="proto2")
class _C:
    e: _E | None = pbj.field(1, _E, optional=True)


@pytest.mark.parametrize("hex_in", ["088080808008", "08cd8000", "088780808010"])
def test_closed_enum_non_member_keeps_its_bytes_in_the_engine(hex_in):
    """A closed enum's non-member is kept as it arrived (an unknown field), in C as in Python."""
    data = bytes.fromhex(hex_in)
    native = _native._engine.decode(codec_of(_C).native, data, 100)
    assert type(native) is _C and native.e is None and pbj.unknown_fields(native) == data
    assert identical(native, _python_decode(_C, data))
    back = pbj.decode(_C, data)
    assert back.e is None and pbj.unknown_fields(back) == data
    assert pbj.encode(back) == pbj.encode(back, reverse=True) == data
