"""Limits on hostile input: nesting depth, huge declared lengths, input size, time and memory.

* Depth: ``decode(..., max_depth=N)`` accepts N levels of nested messages
  (or groups) below the top-level message and refuses N+1 with one
  ``DecodeError``, for every way of nesting: a singular, repeated or oneof
  sub-message, a map value, a proto2 group, an unknown group, and a
  sub-message merged from duplicate occurrences. At the default (100), pbj
  accepts whatever Google's protobuf (upb) accepts. Far deeper inputs end in
  a ``DecodeError`` too, never a ``RecursionError`` or a crash.
* Huge declared lengths and element counts fail at once, without
  allocating anything near the declared size (tracemalloc's peak).
* ``max_size`` refuses a longer input before reading it.
* Work is linear in the input: many tiny repeated fields, thousands of
  duplicate occurrences of a singular sub-message, group or oneof member
  (merged), unknown fields of every wire type, a long packed run. Work is
  counted, not timed, so a loaded machine cannot fail these tests and a
  fast one cannot hide a quadratic path (``tests/work_counts.py``): bytecode
  instructions executed (``sys.settrace``), and bytes asked of the C
  allocator (memray), which shows copying that grows with the input (a
  tuple or ``bytes`` rebuilt at every element). Each is counted at sizes N
  and 4N: linear work gives a ratio of 4 and a quadratic path 16; the
  bounds are 4.5 for steps (exact counts) and 6 for bytes (the allocator's
  size steps).
* ``max_size`` refuses an over-long input with the same work whatever its
  length.
* Peak memory while decoding (memray, every allocation traced) stays within
  the memory the result keeps plus twice the input plus 1 MB.

Inputs are built here from the wire-format rules (protobuf.dev "Encoding"),
never by pbj's writers.
"""

from __future__ import annotations

import gc
import os
import time
import tracemalloc

import pytest

import pbj
from fuzz import targets as T
from tests.work_counts import bytecode_steps, system_bytes


def varint(n: int) -> bytes:
    """A varint written from the spec's rule (7 bits a byte, low group first)."""
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def ld(tag: int, payload: bytes) -> bytes:
    """A LEN record with a one-byte tag."""
    return bytes([tag]) + varint(len(payload)) + payload


def chain(levels: int, tag: int, inner: bytes = b"") -> bytes:
    """``levels`` LEN records of ``tag`` inside one another, built in linear time."""
    sizes = [len(inner)]
    for _ in range(levels):
        sizes.append(sizes[-1] + 1 + len(varint(sizes[-1])))
    heads = [bytes([tag]) + varint(sizes[i]) for i in range(levels - 1, -1, -1)]
    return b"".join(heads) + inner


def accepts(cls, data: bytes, **kw) -> bool:
    """Whether pbj decodes ``data``; any failure other than DecodeError fails the test."""
    try:
        pbj.decode(cls, data, **kw)
    except pbj.DecodeError as err:
        assert "too deep" in err.reason or "nested too deeply" in err.reason, err
        return False
    return True


def google_accepts(t, data: bytes) -> bool:
    from google.protobuf.message import DecodeError

    try:
        t.google.FromString(data)
    except DecodeError:
        return False
    return True


# ---------------------------------------------------------------- depth

def _node_named(levels: int) -> bytes:
    data = b""
    for _ in range(levels):
        data = ld(0x22, ld(0x0A, b"k") + ld(0x12, data))
    return data


def _node_merged(levels: int) -> bytes:
    """Each level's ``parent`` arrives twice: an empty occurrence, then the one that goes deeper."""
    data = b""
    for _ in range(levels):
        data = b"\x1a\x00" + ld(0x1A, data)
    return data


def _groups(levels: int, number: int, inner: bytes = b"") -> bytes:
    start, end = varint(number << 3 | 3), varint(number << 3 | 4)
    return start * levels + inner + end * levels


def _p2_group_inner(levels: int) -> bytes:
    """P2.G (a group, odd levels from the top) and G.inner (a P2, even levels) in turn."""
    data = b""
    for j in range(levels, 0, -1):
        data = b"\x2b" + data + b"\x2c" if j % 2 else ld(0x42, data)
    return data


def _kids(levels: int) -> bytes:
    """P2.kids (field 18, a two-byte tag) nested ``levels`` deep."""
    data = b""
    for _ in range(levels):
        data = b"\x92\x01" + varint(len(data)) + data
    return data


NESTINGS = {
    "parent": ("node", lambda k: chain(k, 0x1A)),
    "children": ("node", lambda k: chain(k, 0x12)),
    "map value": ("node", _node_named),
    "merged duplicates": ("node", _node_merged),
    "unknown group": ("node", lambda k: _groups(k, 100)),
    "proto2 child": ("proto2", lambda k: chain(k, 0x6A)),
    "oneof member": ("proto2", lambda k: chain(k, 0x7A)),
    "repeated message": ("proto2", _kids),
}


@pytest.mark.parametrize("kind", list(NESTINGS))
@pytest.mark.parametrize("limit", [0, 1, 7, pbj.DEFAULT_MAX_DEPTH])
def test_depth_under_at_and_over_the_limit(kind, limit):
    name, make = NESTINGS[kind]
    t = T.target(name)
    kw = {} if limit == pbj.DEFAULT_MAX_DEPTH else {"max_depth": limit}
    if limit:
        assert accepts(t.cls, make(limit - 1), **kw)
    assert accepts(t.cls, make(limit), **kw)
    assert not accepts(t.cls, make(limit + 1), **kw)
    with pytest.raises(pbj.DecodeError) as info:
        pbj.decode(t.cls, make(limit + 1), **kw)
    err = info.value
    assert isinstance(err.offset, int)
    if kind not in ("unknown group", "map value"):
        assert len(err.path) >= limit + 1          # one path element per level at least


@pytest.mark.parametrize("kind", list(NESTINGS))
def test_depth_agrees_with_google(kind):
    """At the default limit pbj accepts everything upb accepts (upb counts a map entry as a level too)."""
    name, make = NESTINGS[kind]
    t = T.target(name)
    for levels in (50, 51, 99, 100, 101, 102):
        data = make(levels)
        if google_accepts(t, data):
            assert accepts(t.cls, data), levels
        else:
            assert kind == "map value" or not accepts(t.cls, data), levels
        T.check_decode(t, data)


def test_proto2_groups_nest_like_messages():
    t = T.target("proto2")
    for levels in range(96, 104):
        data = _p2_group_inner(levels)
        assert google_accepts(t, data) == accepts(t.cls, data) == (levels <= 100), levels


@pytest.mark.parametrize("kind", ["parent", "children", "merged duplicates", "unknown group", "proto2 child"])
def test_far_too_deep_is_a_decode_error(kind):
    """20,000 levels: refused by the depth limit, and with the limit lifted by Python's recursion limit."""
    name, make = NESTINGS[kind]
    t = T.target(name)
    data = make(20_000)
    for kw in ({}, {"max_depth": 10**9}):
        with pytest.raises(pbj.DecodeError) as info:
            pbj.decode(t.cls, data, **kw)
        assert "deep" in info.value.reason
    T.check_decode(t, data)


def test_self_recursive_message_of_every_field_kind():
    """A Node tree mixing parent, children, map values and merged duplicates, 100 levels in all."""
    t = T.target("node")
    parts = [lambda d: ld(0x1A, d), lambda d: ld(0x12, d), lambda d: ld(0x22, ld(0x0A, b"") + ld(0x12, d)),
             lambda d: b"\x1a\x02\x0a\x00" + ld(0x1A, d)]
    data = b"\x0a\x01x"
    for i in range(100):
        data = parts[i % 4](data) + b"\x0a\x01y"
    assert accepts(t.cls, data)
    assert not accepts(t.cls, ld(0x1A, data))
    obj = T.check_decode(t, data)
    depth = 0
    while obj is not None:
        depth += 1
        obj = obj.parent or (obj.children[0] if obj.children else None) or next(iter(obj.named.values()), None)
    assert depth == 101


# ---------------------------------------------------------------- huge declared lengths and counts

HUGE = [2**31 - 1, 2**31, 2**32 + 5, 2**62, 2**63 - 1, 2**63, 2**64 - 1]
#: (target, tag bytes of a LEN field): string, bytes, sub-message, packed varint and fixed runs, map
#: entry, unknown field, repeated message, a LEN field inside a group, a map value inside an entry.
LEN_FIELDS = [
    ("node", b"\x0a"), ("node", b"\x12"), ("node", b"\x1a"), ("node", b"\x22"), ("node", b"\xfa\x01"),
    ("unpacked", b"\x0a"), ("unpacked", b"\x3a"), ("unpacked", b"\x62"), ("unpacked", b"\x7a"),
    ("proto2", b"\x12"), ("proto2", b"\x22"), ("proto2", b"\x2b\x3a"), ("proto2", b"\x82\x01"),
    ("proto2", b"\x82\x01\x10\x08\x01\x12"), ("maps", b"\x62\x10\x0a\x01a\x12"), ("everything", b"\x0a"),
]


@pytest.mark.parametrize("length", HUGE)
@pytest.mark.parametrize("where", LEN_FIELDS, ids=lambda w: f"{w[0]}-{w[1].hex()}")
def test_huge_declared_length_fails_fast(where, length):
    name, tag = where
    t = T.target(name)
    data = tag + varint(length) + b"\x08\x01" * 8
    with pytest.raises(pbj.DecodeError):
        pbj.decode(t.cls, data)  # once before measuring: the Python code that explains errors is compiled on first need
    tracemalloc.start()
    try:
        with pytest.raises(pbj.DecodeError) as info:
            pbj.decode(t.cls, data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 256 * 1024, peak            # nothing near the declared size was allocated
    assert 0 <= info.value.offset < len(data)
    assert "truncated" in info.value.reason or "past" in info.value.reason or "overruns" in info.value.reason \
        or "group" in info.value.reason or "longer than 5 bytes" in info.value.reason \
        or "above the maximum 2147483647" in info.value.reason, info.value.reason  # pbj.wire.read_size
    T.check_decode(t, data)


@pytest.mark.parametrize("count", [2**20, 2**28, 2**40])
def test_packed_run_declaring_a_huge_element_count(count):
    """A packed fixed64 run claiming ``count`` elements (8 bytes each) with 16 bytes present."""
    t = T.target("unpacked")
    data = b"\x42" + varint(8 * count) + bytes(16)
    tracemalloc.start()
    try:
        with pytest.raises(pbj.DecodeError):
            pbj.decode(t.cls, data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 256 * 1024
    T.check_decode(t, data)


def test_many_elements_that_are_present_decode():
    """The converse: 200,000 packed varints that are all there are accepted."""
    t = T.target("everything")
    run = b"\x01" * 100_000 + b"\x80\x01" * 50_000
    obj = pbj.decode(t.cls, b"\xa2\x06" + varint(len(run)) + run)   # field 100: repeated int32, packed
    values = obj.int32NumberList
    assert len(values) == 150_000 and values[0] == 1 and values[-1] == 128


def test_max_size_under_at_and_over():
    t = T.target("node")
    data = chain(5, 0x1A)
    assert accepts(t.cls, data, max_size=len(data) + 1)
    assert accepts(t.cls, data, max_size=len(data))
    with pytest.raises(pbj.DecodeError) as info:
        pbj.decode(t.cls, data, max_size=len(data) - 1)
    err = info.value
    assert err.offset == 0 and err.path == [] and "max_size" in err.reason


def test_max_size_refuses_before_reading():
    """A 50 MB input over max_size is refused at once: no parsing, no copy of bytes input."""
    t = T.target("node")
    data = b"\x12\x00" * 25_000_000
    tracemalloc.start()
    try:
        with pytest.raises(pbj.DecodeError):
            pbj.decode(t.cls, data, max_size=1000)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 * 1024

    def refuse(blob: bytes) -> None:
        with pytest.raises(pbj.DecodeError):
            pbj.decode(t.cls, blob, max_size=1000)

    refuse(data[:2000])                                   # warm up: compile the codec
    # the same steps for 2 KB as for 50 MB: nothing of the input was read (parsing it is 25M fields)
    assert bytecode_steps(refuse, data) == bytecode_steps(refuse, data[:2000]) < 5000


# ---------------------------------------------------------------- work: linear in the input size

#: Bound on work(4N) / work(N) in bytecode steps: exact counts, linear gives 4 at most, a quadratic
#: term worth 4% of the linear work at N already passes it.
STEPS_BOUND = 4.5
#: The same in bytes asked of the C allocator: lists grow by size steps, so linear gives 3.7-4.4 here.
BYTES_BOUND = 6.0

KID = b"\x12\x08\x0a\x06abcdef"                  # Node.children: one child named "abcdef" (10 bytes)

#: case -> (fuzz target, make(n) -> input, n). Steps are counted at n // 5 (tracing every bytecode
#: instruction is slow), bytes at n.
LINEAR_CASES = {
    # 100,000 tiny repeated fields make 1 MB
    "100k repeated sub-messages": ("node", lambda n: KID * n, 25_000),
    # 10,000 occurrences of Node.parent, each adding a child: one merged parent with 10,000 children
    "10k duplicate sub-messages": ("node", lambda n: (b"\x1a\x0a" + KID) * n, 2_500),
    # the same two levels down: parent.parent occurs 10,000 times (merge of merges)
    "10k duplicates two levels down": ("node", lambda n: (b"\x1a\x0e\x1a\x0c\x0a\x0aabcdefghij") * n, 2_500),
    # proto2: a group and a oneof member, 10,000 occurrences each
    "10k duplicate groups": ("proto2", lambda n: b"\x2b\x30\x05\x3a\x02ab\x2c" * n, 2_500),
    "10k duplicate oneof members": ("proto2", lambda n: b"\x7a\x04\x1a\x02\x08\x01" * n, 2_500),
    # 100,000 unknown fields of each wire type in turn
    "100k unknown fields": ("node", lambda n: (b"\x28\x01\x31" + bytes(8) + b"\x3a\x01x\x45" + bytes(4)) * (n // 4),
                            25_000),
    # one packed run of 400,000 two-byte varints
    "long packed run": ("unpacked", lambda n: b"\x7a" + varint(2 * n) + b"\x81\x01" * n, 100_000),
}


def _work_ratio(count, cls, make, n: int) -> float:
    """``count`` (a function of :mod:`tests.work_counts`) of decoding ``make(4n)`` over that of ``make(n)``."""
    small, large = make(n), make(4 * n)
    assert len(large) >= 4 * len(small) - 16
    pbj.decode(cls, small)         # warm up: compile the codec
    return count(pbj.decode, cls, large) / count(pbj.decode, cls, small)


@pytest.mark.parametrize("case", list(LINEAR_CASES))
def test_bytecode_steps_are_linear(case, python_engine):  # counts the generated Python parser's bytecode
    name, make, n = LINEAR_CASES[case]
    t = T.target(name)
    n //= 5
    assert len(make(4 * n)) >= 10_000
    assert T.check_decode(t, make(n)) is not None
    ratio = _work_ratio(bytecode_steps, t.cls, make, n)
    assert 3 < ratio < STEPS_BOUND, f"{case}: decoding 4x the input took {ratio:.2f}x the bytecode steps"


@pytest.mark.parametrize("case", list(LINEAR_CASES))
def test_allocated_bytes_are_linear(case):
    pytest.importorskip("memray")
    name, make, n = LINEAR_CASES[case]
    t = T.target(name)
    assert len(make(4 * n)) >= 50_000
    ratio = _work_ratio(system_bytes, t.cls, make, n)
    assert 3 < ratio < BYTES_BOUND, f"{case}: decoding 4x the input asked {ratio:.2f}x the bytes of the allocator"


def test_merged_duplicates_keep_every_value():
    """10,000 occurrences of a singular sub-message merge into one (protobuf.dev "Last One Wins")."""
    t = T.target("node")
    obj = pbj.decode(t.cls, (b"\x1a\x0a" + KID) * 10_000 + b"\x1a\x03\x0a\x01z")
    assert len(obj.parent.children) == 10_000 and obj.parent.name == "z"
    expected = t.google.FromString((b"\x1a\x0a" + KID) * 10_000 + b"\x1a\x03\x0a\x01z")
    assert len(expected.parent.children) == 10_000


# ---------------------------------------------------------------- memory

memray = pytest.importorskip("memray")


def _peak_and_kept(cls, data: bytes, tmp_path) -> tuple[int, int, object]:
    """Peak heap while decoding, and the bytes still held at the end (the result), from memray."""
    path = tmp_path / f"decode-{time.monotonic_ns()}.bin"
    gc.collect()
    try:
        with memray.Tracker(path, trace_python_allocators=True):
            result = pbj.decode(cls, data)
    except Exception as exc:  # pragma: no cover - depends on the environment
        pytest.skip(f"memray cannot trace here: {type(exc).__name__}: {exc}")
    with memray.FileReader(path) as reader:
        peak = reader.metadata.peak_memory
        kept = sum(r.size for r in reader.get_leaked_allocation_records(merge_threads=True))
    os.unlink(path)
    return peak, kept, result


MEMORY_CASES = {
    "1 MB of repeated sub-messages": ("node", lambda: KID * 100_000),
    "10k duplicate sub-messages": ("node", lambda: (b"\x1a\x0a" + KID) * 10_000),
    "100k unknown fields": ("node", lambda: (b"\x28\x01\x3a\x01x") * 100_000),
    # packed varints are read into the tuple the field keeps, with no list in between
    "400k packed 1-byte varints": ("unpacked", lambda: b"\x7a" + varint(400_000) + b"\x05" * 400_000),
    "200k packed 2-byte varints": ("unpacked", lambda: b"\x7a" + varint(400_000) + b"\x81\x04" * 200_000),
    "300 real block items": ("block", lambda: b"".join(b"\x0a" + varint(len(i)) + i for i in T.block_items()[:300])),
}


@pytest.mark.parametrize("case", list(MEMORY_CASES))
def test_peak_memory_within_input_plus_result(case, tmp_path):
    name, make = MEMORY_CASES[case]
    if name == "block":
        cls = pbj.load_descriptor_set(T.hapi_set())["com.hedera.hapi.block.stream.Block"]
    else:
        cls = T.target(name).cls
    data = make()
    pbj.decode(cls, b"")      # compile the codecs outside the measurement
    peak, kept, result = _peak_and_kept(cls, data, tmp_path)
    assert result is not None and kept > 0
    print(f"\n{case}: input {len(data)} B, peak {peak} B, result {kept} B")
    assert peak <= kept + 2 * len(data) + 1024 * 1024, (peak, kept, len(data))
