"""The writers when Python code runs in the middle of a write, or an object changed behind the constructor's back.

Issue 20's items 1-4 and 9, each under both engines (the ``engine`` fixture):
Python code that runs while a writer holds a message (a reverse buffer's
growth, a map key's ``<``) may replace any field with ``object.__setattr__``;
the writers must still write the values they started with (never freed memory),
let what that code raises leave unchanged (``KeyboardInterrupt``,
``MemoryError``), and never write invalid bytes for an object whose cached
sizes no longer match its values. The two use-after-free reproducers live in
:mod:`fuzz.native_checks`, which ``fuzz/native_asan.sh`` also runs on the
AddressSanitizer build.
"""

from __future__ import annotations

import sys

import pytest

import pbj
from fuzz import native_checks as NC
from pbj import _native
from pbj.codec import codec_of

native_only = pytest.mark.skipif(not _native.available(), reason="the native engine is not built")


@pytest.fixture(params=["native", "python"])
def engine(request):
    if request.param == "native" and not _native.available():
        pytest.skip("the native engine is not built")
    before = pbj.engine()
    pbj.use_engine(request.param)
    yield request.param
    pbj.use_engine(before)


# ------------------------------------------------ item 1: a field replaced during the buffer's growth

@native_only
def test_the_sanitizer_reproducer_of_growth():
    """The reproducer fuzz/native_asan.sh runs: native and Python reverse writers, all twelve cases (five
    of them strings that keep bytes that are not UTF-8, which the native writer writes itself)."""
    assert NC.replaced_while_growing() == 12


@pytest.mark.parametrize("case", [label for label, _ in NC._held_cases()])
def test_a_field_replaced_while_the_buffer_grows_is_written_as_it_was(engine, case):
    build = dict(NC._held_cases())[case]
    o, _ = build()
    expected = pbj.encode(o)             # the message as it was, before any change
    o, swap = build()
    buf = NC.SwapOnGrow(16, swap)
    buf.write_bytes(b"tail")
    assert pbj.write_reverse(o, buf) == len(expected)
    assert buf.grown >= 1 and buf.swap is None  # the change did run, in the first growth
    assert buf.to_bytes() == expected + b"tail"
    assert pbj.decode(type(o), expected) == build()[0]


# ------------------------------------------------ item 2: a map key whose < replaces the map

@native_only
def test_the_sanitizer_reproducer_of_map_keys():
    """Both native writers decline an int-subclass key before comparing anything (no __lt__ call)."""
    assert NC.map_replaced_by_key_compare() == 2


@pytest.mark.parametrize("reverse", [False, True])
def test_a_key_replacing_its_map_while_sorted_gives_the_maps_bytes(engine, reverse):
    expected = pbj.encode(NC.Keyed(m={i: NC._text(40 + i) for i in range(8)}))

    def keyed():
        o = NC.Keyed()
        object.__setattr__(o, "m", pbj.FrozenMap({NC.ReplacingKey(i): NC._text(40 + i) for i in reversed(range(8))}))
        return o

    NC.ReplacingKey.calls = 0
    pbj.use_engine("python")
    assert pbj.encode(keyed(), reverse=reverse) == expected
    pbj.use_engine(engine)
    one_write = NC.ReplacingKey.calls  # the key comparisons of one Python write (its sort, its range checks)
    o = keyed()
    NC.ReplacingKey.hook = lambda: object.__setattr__(o, "m", pbj.FrozenMap())
    NC.ReplacingKey.calls = 0
    try:
        got = pbj.encode(o, reverse=reverse)
    finally:
        NC.ReplacingKey.hook = None
    assert one_write > 0 and NC.ReplacingKey.calls == one_write  # the native writers compared none, declined once
    assert got == expected
    assert o.m == {}                  # the replacement happened


@native_only
def test_map_keys_are_sorted_on_their_values_in_c():
    """Exact keys of every key type come out in the Python writer's order (ints signed or unsigned)."""
    @pbj.message(full_name="pbj_hardening.AllKeys")
    class AllKeys:
        i32: pbj.FrozenMap[int, int] = pbj.map_field(1, "int32", "int32")
        u64: pbj.FrozenMap[int, int] = pbj.map_field(2, "uint64", "int32")
        s64: pbj.FrozenMap[int, int] = pbj.map_field(3, "sint64", "int32")
        sf32: pbj.FrozenMap[int, int] = pbj.map_field(4, "sfixed32", "int32")
        b: pbj.FrozenMap[bool, int] = pbj.map_field(5, "bool", "int32")
        s: pbj.FrozenMap[str, int] = pbj.map_field(6, "string", "int32")

    ints = [0, -1, 1, -(2**31), 2**31 - 1, 5, -7, 300]
    o = AllKeys(i32={k: 1 for k in ints}, u64={k: 1 for k in (0, 2**64 - 1, 2**63, 2**63 - 1, 1, 128)},
                s64={k: 1 for k in (-(2**63), 2**63 - 1, 0, -1, 1)}, sf32={k: 1 for k in ints},
                b={True: 1, False: 2},
                s={k: 1 for k in ("", "b", "a", "ab", "\u00e9", "\U0001f600", "\uffff", "z" * 300)})
    plan = codec_of(AllKeys).native
    expected = NC._encode_python(o)
    fresh = NC._python_decode(AllKeys, expected)
    assert _native._engine.encode(plan, fresh) == expected
    buf = pbj.ReverseBuffer(1)
    end = _native._engine.write_reverse(plan, fresh, buf, buf.writer_begin())
    assert end is not None
    buf.writer_commit(end)
    assert buf.to_bytes() == expected


# ------------------------------------------------ items 3 and 4: exceptions leave unchanged, no retries

class _RaiseOnGrow(pbj.ReverseBuffer):
    __slots__ = ("exc", "grown")

    def __init__(self, exc: BaseException) -> None:
        super().__init__(16)
        self.exc, self.grown = exc, 0

    def writer_grow(self, pos: int, need: int) -> int:
        self.grown += 1
        if self.grown == 1:  # once: a write started again after it would succeed
            raise self.exc
        return super().writer_grow(pos, need)


@pytest.mark.parametrize("exc", [KeyboardInterrupt(), MemoryError(), RecursionError("the buffer's own")],
                         ids=["KeyboardInterrupt", "MemoryError", "RecursionError"])
def test_what_growth_raises_leaves_unchanged_and_the_write_is_not_started_again(engine, exc):
    o = NC.Held(blob=NC._big(5000, 7), name="n")
    buf = _RaiseOnGrow(exc)
    buf.write_bytes(b"tail")
    with pytest.raises(type(exc)) as err:
        pbj.write_reverse(o, buf)
    assert err.value is exc
    assert buf.grown == 1             # no second write swallowed it
    assert buf.to_bytes() == b"tail"  # nothing added
    buf.write_bytes(b"!")             # and the buffer is free again
    assert buf.to_bytes() == b"!tail"


class _CountGrowths(pbj.ReverseBuffer):
    __slots__ = ("grown",)

    def __init__(self, capacity: int) -> None:
        super().__init__(capacity)
        self.grown = 0

    def writer_grow(self, pos: int, need: int) -> int:
        self.grown += 1
        return super().writer_grow(pos, need)


class _InterruptAt(_CountGrowths):
    """Raises ``KeyboardInterrupt`` in its ``at``-th growth only: a write started again would succeed."""

    __slots__ = ("at",)

    def __init__(self, capacity: int) -> None:
        super().__init__(capacity)
        self.at = 0

    def writer_grow(self, pos: int, need: int) -> int:
        if self.grown + 1 == self.at:
            self.grown += 1
            raise KeyboardInterrupt
        return super().writer_grow(pos, need)


def test_every_keyboard_interrupt_in_growth_reaches_the_caller(engine):
    """1000 reverse writes (every kind of value of ``Held``, buffers of 1 to 200 bytes), each
    interrupted in one of its growths, first to last: every interrupt reaches the caller and leaves
    the buffer as it was (the native reverse writer swallowed 721 of 997 and wrote again)."""
    messages = [build()[0] for _, build in NC._held_cases()]
    reached = interrupted_at_later_growth = 0
    for i in range(1000):
        o = messages[i % len(messages)]
        capacity = 1 + (i * 37) % 200
        dry = _CountGrowths(capacity)
        dry.write_bytes(b"tail")
        dry.grown = 0
        pbj.write_reverse(o, dry)                   # how many growths this write makes
        buf = _InterruptAt(capacity)
        buf.write_bytes(b"tail")
        buf.grown, buf.at = 0, 1 + (i // len(messages)) % dry.grown
        try:
            pbj.write_reverse(o, buf)
        except KeyboardInterrupt:
            reached += 1
        assert buf.grown == buf.at and buf.to_bytes() == b"tail", i  # stopped there, nothing added
        interrupted_at_later_growth += buf.at > 1
    assert reached == 1000
    assert interrupted_at_later_growth > 100    # not only the first growth (a sub-message, a map entry)


def test_a_user_error_in_growth_leaves_the_writer_unchanged(engine):
    """Both reverse writers raise a buffer subclass's error as it is: no field explains it, so it is not pbj's."""
    exc = ValueError("from the buffer")
    buf = _RaiseOnGrow(exc)
    with pytest.raises(ValueError) as err:
        pbj.write_reverse(NC.Held(blob=NC._big(5000, 8)), buf)
    assert err.value is exc and buf.grown == 1


class _RecursingGrowth(pbj.ReverseBuffer):
    __slots__ = ()

    def writer_grow(self, pos: int, need: int) -> int:
        return self.writer_grow(pos, need)  # recurses until Python's limit: a RecursionError of its own


def test_a_recursion_error_of_the_buffers_own_code_is_not_called_a_deep_message(engine):
    """A ``RecursionError`` raised inside user code is that code's: both engines raise it as it is
    (the Python engine called it "the message is nested 1 levels deep"); a message too deep for
    the limit is still pbj's EncodeError."""
    buf = _RecursingGrowth(16)
    with pytest.raises(RecursionError) as err:
        pbj.write_reverse(NC.Held(blob=NC._big(100, 9)), buf)
    assert err.type is RecursionError and err.traceback[-1].name == "writer_grow"
    assert buf.to_bytes() == b""
    deep = NC.Held(name="x")
    for _ in range(sys.getrecursionlimit() + 10):
        deep = NC.Held(child=deep)
    with pytest.raises(pbj.EncodeError, match=r"more than pbj\.write_reverse can follow"):
        pbj.write_reverse(deep, _CountGrowths(1 << 16))


class _EncodingKey(int):
    """A map key whose ``<`` encodes the message it is a key of (issue 20, item 4)."""

    target: object = None
    reverse = False
    calls = 0

    def __lt__(self, other):
        type(self).calls += 1
        if type(self).calls > 20_000:
            raise RuntimeError("runaway")
        pbj.encode(type(self).target, reverse=type(self).reverse)
        return int(self) < int(other)


@pytest.mark.parametrize("reverse", [False, True])
def test_a_key_that_encodes_its_message_ends_after_one_pass_down(engine, reverse):
    o = NC.Keyed()
    object.__setattr__(o, "m", pbj.FrozenMap({_EncodingKey(i): "v" for i in (3, 1, 2)}))
    _EncodingKey.target, _EncodingKey.reverse, _EncodingKey.calls = o, reverse, 0
    try:
        # the limit is met in pbj's writer (its depth error) or in the key's __lt__ (the key's
        # RecursionError, as it is): which one depends on the frame where the stack runs out
        with pytest.raises((pbj.EncodeError, RecursionError)) as err:
            pbj.encode(o, reverse=reverse)
    finally:
        _EncodingKey.target = None
    assert err.type is RecursionError or "more than pbj.encode can follow" in str(err.value)
    # one comparison per level down to the recursion limit, none after the error started up
    assert 0 < _EncodingKey.calls <= sys.getrecursionlimit()


# ------------------------------------------------ item 4: cached_size's error check

@pytest.mark.parametrize("size", [2**70, -(2**70), -5])
def test_a_cached_size_no_writer_wrote_is_not_trusted(engine, size):
    o = NC.Held(name="abc", child=NC.Held(blob=b"xyz"))
    expected = pbj.encode(NC.Held(name="abc", child=NC.Held(blob=b"xyz")))
    object.__setattr__(o, "_pbj_size", size)
    if engine == "native":  # measured again (no size a writer cached), no error left set
        assert _native._engine.encode(codec_of(NC.Held).native, o) == expected
        assert o._pbj_size == len(expected)
        object.__setattr__(o, "_pbj_size", size)
    assert pbj.encode(o) == expected == pbj.encode(o, reverse=True)


@pytest.mark.parametrize("size", [2**31 - 1, 2**40])
def test_a_sub_message_whose_cached_size_passes_2_gib(engine, size):
    # the parent would pass protobuf's 2 GiB limit: the native size pass declines it (no error
    # left set, nothing allocated) and the Python writer writes the message
    child = NC.Held(blob=b"xyz")
    o = NC.Held(name="abc", child=child)
    expected = pbj.encode(NC.Held(name="abc", child=NC.Held(blob=b"xyz")))
    object.__setattr__(child, "_pbj_size", size)
    if engine == "native":
        assert _native._engine.encode(codec_of(NC.Held).native, o) is None
        object.__setattr__(child, "_pbj_size", size)
    assert pbj.encode(o) == expected == pbj.encode(o, reverse=True)


# ------------------------------------------------ item 9: changed after its size was cached

@pbj.message(full_name="pbj_hardening.Inner")
class Inner:
    blob: bytes = pbj.field(1, "bytes")


@pbj.message(full_name="pbj_hardening.Other")
class Other:
    blob: bytes = pbj.field(1, "bytes")
    x: int = pbj.field(2, "int32")


@pbj.message(full_name="pbj_hardening.Outer")
class Outer:
    inner: Inner | None = pbj.field(1, Inner)
    n: int = pbj.field(2, "int32")
    more: tuple[Inner, ...] = pbj.field(3, Inner, repeated=True)


def test_a_bytearray_grown_after_its_size_was_cached(engine):
    ba = bytearray(b"abc")
    inner = Inner(blob=b"abc")
    o = Outer(inner=inner, n=1)
    assert pbj.encode(o) == bytes.fromhex("0a050a036162631001")  # sizes cached
    object.__setattr__(inner, "blob", ba)
    ba.extend(b"zzzz")
    expected = pbj.encode(Outer(inner=Inner(blob=b"abczzzz"), n=1))
    assert expected == bytes.fromhex("0a090a076162637a7a7a7a1001")
    assert pbj.encode(o) == expected == pbj.encode(o, reverse=True)
    assert o._pbj_size == len(expected) and inner._pbj_size == 9  # measured again, cached again
    assert pbj.encode(o) == expected


def test_a_sub_message_of_another_class_with_a_cached_size(engine):
    o = Outer(inner=Inner(blob=b"abc"), n=1)
    pbj.encode(o)
    other = Other(blob=b"q", x=300)
    pbj.encode(other)
    object.__setattr__(o, "inner", other)
    with pytest.raises(pbj.EncodeError, match="needs an Inner, got Other") as err:
        pbj.encode(o)
    assert err.value.path == ["inner"]


def test_one_in_a_repeated_field_changed_after_measuring(engine):
    kids = (Inner(blob=b"a"), Inner(blob=b"bb"))
    o = Outer(more=kids)
    pbj.encode(o)
    object.__setattr__(kids[1], "blob", b"ccccc")
    expected = pbj.encode(Outer(more=(Inner(blob=b"a"), Inner(blob=b"ccccc"))))
    assert pbj.encode(o) == expected == pbj.encode(o, reverse=True)


@native_only
def test_changes_that_keep_the_total_are_found_by_the_native_writer():
    """Two sub-messages, one grown and one shrunk by as much: the total size is right, the lengths are
    not. The native writer checks each sub-message's length and reports it (NotImplemented); then
    every size is measured again. (The Python engine alone checks the total size only, so it cannot
    see this change.)"""
    pbj.use_engine("native")
    kids = (Inner(blob=b"aaaa"), Inner(blob=b"bb"))
    o = Outer(more=kids)
    pbj.encode(o)
    object.__setattr__(kids[0], "blob", b"aaa")
    object.__setattr__(kids[1], "blob", b"bbb")
    assert _native._engine.encode(codec_of(Outer).native, o) is NotImplemented
    expected = pbj.encode(Outer(more=(Inner(blob=b"aaa"), Inner(blob=b"bbb"))))
    assert pbj.encode(o) == expected
    assert pbj.decode(Outer, expected).more == (Inner(blob=b"aaa"), Inner(blob=b"bbb"))


# ------------------------------------------------ issue 23: oneof membership by identity, by value after

class _Name(str):
    pass


@pytest.mark.parametrize(("make", "same"), [(sys.intern, True), (lambda s: "".join(list(s)), False), (_Name, False)],
                         ids=["interned", "equal-not-identical", "str-subclass"])
def test_a_oneof_member_is_found_by_identity_or_else_by_value(engine, make, same):
    """The writers find the set member by the name object first; an equal name that is another object
    (a loaded schema's plan names are not interned) is still found by its characters."""
    name = make("pick_blob")
    assert name == "pick_blob" and (name is sys.intern("pick_blob")) is same
    o = NC.Held(choice=pbj.OneOf(name, b"\x01\x02"), name="n")
    expected = bytes.fromhex("0a016e") + bytes.fromhex("3a020102")
    assert pbj.encode(o) == expected == pbj.encode(o, reverse=True)
    if engine == "native":
        plan = codec_of(NC.Held).native
        fresh = NC._python_decode(NC.Held, expected)
        object.__setattr__(fresh, "choice", pbj.OneOf(name, b"\x01\x02"))
        assert _native._engine.encode(plan, fresh) == expected
