"""The native writers of issue 23 ("Writers that do one pass"): every writer, the same bytes.

Each case is written by every writer there is and compared with the same expected bytes: the
pure-Python writer (the reference; fresh and with sizes cached), the native forward writer
(fresh: one size pass onto its tape of lengths; with sizes cached; with some sizes cached and
some not), the native reverse writer into a ``ReverseBuffer`` that must grow at every point,
the native reverse writer into its own per-thread storage (what ``pbj.encode(obj,
reverse=True)`` calls), and ``pbj.encode`` / ``pbj.encode(reverse=True)`` on both engines.
The cases aim at what the writers do in C: ints at the edges of the fast path (one and two
30-bit digits, and past them), packed runs longer than the reverse writer's 256-value chunks and
runs that end the output (the forward writer's checked loop), tapes longer than their first 128
entries, map keys in order by insertion (up to 16) and by qsort (more), strings that share a
long prefix.
"""

from __future__ import annotations

import threading

import pytest

import pbj
from fuzz import native_checks as NC
from pbj import _native
from pbj.codec import codec_of

pytestmark = pytest.mark.once

native_only = pytest.mark.skipif(not _native.available(), reason="the native engine is not built")


@pbj.message(full_name="pbj_writers.Ints")
class Ints:
    i32: int = pbj.field(1, "int32")
    i64: int = pbj.field(2, "int64")
    u32: int = pbj.field(3, "uint32")
    u64: int = pbj.field(4, "uint64")
    s32: int = pbj.field(5, "sint32")
    s64: int = pbj.field(6, "sint64")
    f32: int = pbj.field(7, "fixed32")
    f64: int = pbj.field(8, "fixed64")
    sf32: int = pbj.field(9, "sfixed32")
    sf64: int = pbj.field(10, "sfixed64")
    b: bool = pbj.field(11, "bool")


@pbj.message(full_name="pbj_writers.Packed")
class Packed:
    i64: tuple[int, ...] = pbj.field(1, "int64", repeated=True)
    s32: tuple[int, ...] = pbj.field(2, "sint32", repeated=True)
    d: tuple[float, ...] = pbj.field(3, "double", repeated=True)
    f: tuple[float, ...] = pbj.field(4, "float", repeated=True)
    u64: tuple[int, ...] = pbj.field(5, "uint64", repeated=True)
    b: tuple[bool, ...] = pbj.field(6, "bool", repeated=True)
    last: tuple[int, ...] = pbj.field(7, "uint32", repeated=True)  # ends the output


@pbj.message(full_name="pbj_writers.Node")
class Node:
    n: int = pbj.field(1, "int32")
    kids: tuple[Node, ...] = pbj.field(2, "Node", repeated=True)
    child: Node | None = pbj.field(3, "Node")
    names: pbj.FrozenMap[str, Node] = pbj.map_field(4, "string", "Node")
    text: str = pbj.field(5, "string")


@pbj.message(full_name="pbj_writers.Keys")
class Keys:
    s: pbj.FrozenMap[str, int] = pbj.map_field(1, "string", "int64")
    i: pbj.FrozenMap[int, str] = pbj.map_field(2, "sint64", "string")


def _python_bytes(obj) -> bytes:
    """The reference: the pure-Python writer of a fresh copy (no size cached)."""
    fresh = NC._python_decode(type(obj), NC._encode_python(obj))
    return NC._encode_python(fresh)


def every_writer(obj) -> dict[str, bytes]:
    """``obj``'s bytes from every writer (each on an object in the state it needs)."""
    cls = type(obj)
    data = NC._encode_python(NC._python_decode(cls, NC._encode_python(obj)))
    out = {"python fresh": data}
    cached = NC._python_decode(cls, data)
    NC._encode_python(cached)
    out["python cached"] = NC._encode_python(cached)
    before = pbj.engine()
    try:
        for engine in ["python", "native"] if _native.available() else ["python"]:
            pbj.use_engine(engine)
            out[f"{engine} pbj.encode fresh"] = pbj.encode(NC._python_decode(cls, data))
            out[f"{engine} pbj.encode reverse"] = pbj.encode(NC._python_decode(cls, data), reverse=True)
    finally:
        pbj.use_engine(before)
    if _native.available():
        plan = codec_of(cls).native
        assert plan is not None
        fresh = NC._python_decode(cls, data)
        out["native fresh"] = _native._engine.encode(plan, fresh)
        out["native cached"] = _native._engine.encode(plan, fresh)
        out["native reverse scratch"] = _native._engine.write_reverse(plan, NC._python_decode(cls, data))
        for capacity in (1, 4096):
            buf = pbj.ReverseBuffer(capacity)
            buf.write_bytes(b"tail")
            end = _native._engine.write_reverse(plan, NC._python_decode(cls, data), buf, buf.writer_begin())
            assert end is not None
            buf.writer_commit(end)
            got = buf.to_bytes()
            assert got.endswith(b"tail")
            out[f"native reverse buffer {capacity}"] = got[:-4]
    return out


def assert_all(obj, expected: bytes | None = None) -> bytes:
    got = every_writer(obj)
    want = got["python fresh"] if expected is None else expected
    assert {k: v for k, v in got.items() if v != want} == {}
    assert pbj.decode(type(obj), want) == obj
    return want


# the edges of the ints' fast path: 0, one 30-bit digit, two, and past two (CPython's own conversion)
EDGES = [0, 1, -1, 2**30 - 1, 2**30, -(2**30), 2**31 - 1, -(2**31), 2**32 - 1, 2**60 - 1, 2**60, -(2**60),
         2**62, 2**63 - 1, -(2**63)]


@pytest.mark.parametrize("value", EDGES)
def test_ints_at_the_edges_of_the_fast_path(value):
    fields = {}
    for name, lo, hi in [("i32", -(2**31), 2**31 - 1), ("i64", -(2**63), 2**63 - 1), ("u32", 0, 2**32 - 1),
                         ("u64", 0, 2**64 - 1), ("s32", -(2**31), 2**31 - 1), ("s64", -(2**63), 2**63 - 1),
                         ("f32", 0, 2**32 - 1), ("f64", 0, 2**64 - 1), ("sf32", -(2**31), 2**31 - 1),
                         ("sf64", -(2**63), 2**63 - 1)]:
        if lo <= value <= hi:
            fields[name] = value
    fields["b"] = value != 0
    assert_all(Ints(**fields))


def test_known_bytes_of_ints():
    """Hand-checked against the encoding spec (varints, ZigZag, little-endian fixed widths)."""
    o = Ints(i32=-1, i64=2**30, u64=2**64 - 1, s32=-2**31, s64=2**63 - 1, f32=1, sf64=-2, b=True)
    expected = (bytes.fromhex("08ffffffffffffffffff01") + bytes.fromhex("1080808080 04".replace(" ", ""))
                + bytes.fromhex("20ffffffffffffffffff01") + bytes.fromhex("28ffffffff0f")
                + bytes.fromhex("30feffffffffffffffff01") + bytes.fromhex("3d01000000")
                + bytes.fromhex("51feffffffffffffff") + bytes.fromhex("5801"))
    assert assert_all(o, expected) == expected


def test_uint64_past_the_fast_path_and_a_decline():
    assert_all(Ints(u64=2**63), bytes.fromhex("20") + bytes.fromhex("80808080808080808001"))
    if _native.available():
        o = NC._python_decode(Ints, b"")
        object.__setattr__(o, "u64", -5)  # behind the constructor's back: the native writers decline
        plan = codec_of(Ints).native
        assert _native._engine.encode(plan, o) is None
        assert _native._engine.write_reverse(plan, o) is None


@pytest.mark.parametrize("n", [1, 255, 256, 257, 600])
def test_packed_runs_across_chunks(n):
    vals = [EDGES[i % len(EDGES)] for i in range(n)]
    o = Packed(i64=tuple(vals), s32=tuple(max(-(2**31), min(2**31 - 1, v)) for v in vals),
               d=tuple(float(i) - 0.5 for i in range(n)), f=tuple(float(i) * 0.25 for i in range(n)),
               u64=tuple(abs(v) for v in vals), b=tuple(i % 3 == 0 for i in range(n)),
               last=tuple((i * 2654435761) % 2**32 for i in range(n)))
    data = assert_all(o)
    assert len(data) > n * 10


def test_a_packed_run_that_ends_the_output_is_written_value_by_value():
    """The last run's values take fewer than 10 bytes each: the forward writer's checked loop."""
    o = Packed(last=tuple(range(50)))
    assert assert_all(o) == bytes([0x3a, 50]) + bytes(range(50))


def _tree(depth: int, width: int, seed: int = 0) -> Node:
    if depth == 0:
        return Node(n=seed, text="leaf" * (seed % 3))
    kids = tuple(_tree(depth - 1, width, seed * width + i + 1) for i in range(width))
    return Node(n=seed, kids=kids, child=Node(n=-seed), names={f"k{i}": Node(n=i) for i in range(2)},
                text="x" * seed)


def test_more_sub_messages_than_the_tape_starts_with():
    o = _tree(4, 4)  # hundreds of sub-messages: the tape grows past its 128 first entries
    assert_all(o)


def test_a_fresh_encode_with_some_sizes_cached_takes_them_as_cached():
    if not _native.available():
        pytest.skip("the native engine is not built")
    inner = NC._python_decode(Node, NC._encode_python(_tree(2, 3, 5)))
    expected = NC._encode_python(Node(n=1, kids=(_tree(2, 3, 5), Node(n=2)), child=_tree(2, 3, 5)))
    assert pbj.encode(inner) and inner._pbj_size > 0  # cached, and so are its descendants'
    o = Node(n=1, kids=(inner, Node(n=2)), child=inner)
    assert o._pbj_size == -1
    plan = codec_of(Node).native
    assert _native._engine.encode(plan, o) == expected
    assert o._pbj_size == len(expected)


def test_a_sub_message_without_a_size_inside_a_cached_one_is_measured_then():
    if not _native.available():
        pytest.skip("the native engine is not built")
    o = Node(n=1, child=Node(n=2))
    pbj.encode(o)
    fresh_child = Node(n=3, child=Node(n=4))
    object.__setattr__(o.child, "child", fresh_child)  # the cached sizes above it now lie
    expected = NC._encode_python(Node(n=1, child=Node(n=2, child=Node(n=3, child=Node(n=4)))))
    assert pbj.encode(o) == expected == pbj.encode(o, reverse=True)


@pytest.mark.parametrize("n", [2, 16, 17, 40])
def test_map_keys_in_order_by_insertion_and_by_qsort(n):
    prefix = "shared-prefix-"  # longer than the 8 bytes compared without a call
    keys = [f"{prefix}{(i * 7919) % 1000:04d}" for i in range(n)] + ["", "a", "\u00e9t\u00e9", "\U0001f600"]
    o = Keys(s={k: i - 5 for i, k in enumerate(reversed(keys))},
             i={(-1) ** i * (i * 2**40): str(i) for i in range(n)})
    data = assert_all(o)
    back = pbj.decode(Keys, data)
    assert list(back.s) == sorted(keys, key=lambda k: k.encode())
    assert list(back.i) == sorted(o.i)


@native_only
def test_encode_reverse_uses_the_engines_own_storage_per_thread():
    """pbj.encode(reverse=True) on the native engine: one C call into a per-thread storage that
    grows for a large message and stays right afterwards, in every thread at once."""
    before = pbj.engine()
    pbj.use_engine("native")
    try:
        big = Node(n=1, text="y" * 200_000, kids=tuple(Node(n=i, text="z" * i) for i in range(300)))
        small = Node(n=7, text="s")
        expected_big, expected_small = _python_bytes(big), _python_bytes(small)
        assert pbj.encode(small, reverse=True) == expected_small
        assert pbj.encode(big, reverse=True) == expected_big      # grows the storage past 64 KiB
        assert pbj.encode(small, reverse=True) == expected_small  # and the old bytes do not show
        results: list[bool] = []

        def work():
            results.append(all(pbj.encode(big if i % 2 else small, reverse=True)
                               == (expected_big if i % 2 else expected_small) for i in range(20)))

        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert results == [True] * 4
    finally:
        pbj.use_engine(before)


@native_only
def test_a_warm_scratch_allocates_nothing_but_the_result():
    """tracemalloc sees PyMem allocations: writes of a warm storage leave nothing behind but the
    bytes returned (all freed here), so the traced memory does not grow with the number of writes."""
    import tracemalloc

    plan = codec_of(Node).native
    o = NC._python_decode(Node, NC._encode_python(_tree(3, 3)))
    _native._engine.write_reverse(plan, o)  # warm
    tracemalloc.start()
    try:
        base, _ = tracemalloc.get_traced_memory()
        for _ in range(200):
            _native._engine.write_reverse(plan, o)
        now, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    size = len(NC._encode_python(o))
    assert now - base < 1024                # nothing kept
    assert peak - base < size + 1024        # at most one result at a time, no growth of the storage


@native_only
@pytest.mark.parametrize("n", [0, 1, 5, 127, 128, 300, 70000, -1, -300])
def test_the_reverse_writer_writes_in_place_when_the_size_is_cached(n):
    """Sizes cached: the bytes returned are written back to front themselves (the first fields, for
    which a room check asks more than is left, go through the scratch and are copied to the front)."""
    o = _tree(2, 2)
    object.__setattr__(o, "n", n)
    object.__setattr__(o, "text", "t" * abs(n))
    plan = codec_of(Node).native
    expected = NC._encode_python(NC._python_decode(Node, NC._encode_python(o)))
    assert _native._engine.encode(plan, o) == expected  # every size cached
    for _ in range(3):
        assert _native._engine.write_reverse(plan, o) == expected
    object.__setattr__(o, "_pbj_size", len(expected) + 1)  # a size that lies: the scratch writes it
    assert _native._engine.write_reverse(plan, o) == expected
    object.__setattr__(o, "_pbj_size", len(expected) - 1)
    assert _native._engine.write_reverse(plan, o) == expected


# ---------------------------------------------------------------- strings that keep any bytes (issue 23)
#
# A proto2 string (or editions' utf8_validation = NONE) keeps bytes that are not UTF-8 as the lone
# surrogates U+DC80..U+DCFF (docs/usage-guide.md, "Strings that keep any bytes"). The native writers
# write them themselves, as the bytes they stand for: no hand-over to the Python writer.

KEPT = "a\udcff\udc80\u00e9\u4e00"   # a, the bytes ff 80 (not UTF-8), then two characters (UTF-8)
KEPT_BYTES = b"a\xff\x80\xc3\xa9\xe4\xb8\x80"
KEPT2 = "\udce9t\udce9"             # e9 74 e9: a 3-byte sequence's start, cut short twice


@pbj.message(full_name="pbj_writers.Raw", edition="2023", features={"field_presence": "IMPLICIT"})
class Raw:
    """Editions: an implicit-presence string without UTF-8 validation, and a validated one."""

    raw: str = pbj.field(1, "string", features={"utf8_validation": "NONE"})
    checked: str = pbj.field(2, "string")
    raws: tuple[str, ...] = pbj.field(3, "string", repeated=True, features={"utf8_validation": "NONE"})


@pbj.message(full_name="pbj_writers.Strict")
class Strict:
    """proto3: every string must be valid UTF-8."""

    s: str = pbj.field(1, "string")
    r: tuple[str, ...] = pbj.field(2, "string", repeated=True)
    m: pbj.FrozenMap[str, str] = pbj.map_field(3, "string", "string")


KEPT_PROTO = """syntax = "proto2";
package pbj_hardening;
message Kept {
  optional string name = 1;
  repeated string names = 2;
  map<string, string> texts = 3;
  oneof choice { string pick_text = 4; int32 pick_number = 5; }
  extensions 100 to 199;
}
extend Kept { optional string kept_note = 100; }
"""

KEPT_CASES = {
    "field": lambda: NC.Kept(name=KEPT),
    "repeated": lambda: NC.Kept(names=(KEPT, "plain", KEPT2, "")),
    "map key and value": lambda: NC.Kept(texts={KEPT: KEPT2, "b": "c", KEPT2: "d", "\udcff": KEPT}),
    "oneof": lambda: NC.Kept(choice=pbj.OneOf("pick_text", KEPT)),
    "extension": lambda: pbj.with_extensions(NC.Kept(), {NC.KEPT_NOTE: KEPT2}),
    "everything": lambda: pbj.with_extensions(
        NC.Kept(name=KEPT2, names=(KEPT,), texts={KEPT2: KEPT}, choice=pbj.OneOf("pick_text", KEPT2)),
        {NC.KEPT_NOTE: KEPT}),
    "editions": lambda: Raw(raw=KEPT, checked="\u00e9", raws=(KEPT2, "x")),
}


@pytest.fixture(scope="module")
def google_kept(tmp_path_factory):
    """Google's class of the same schema as fuzz.native_checks.Kept (upb, through protobuf)."""
    from tests.oracle import google_class, protoc_sources

    protoc_sources(tmp_path_factory.mktemp("kept"), {"pbj_native_writers_kept.proto": KEPT_PROTO})
    return google_class("pbj_hardening.Kept")


def _counted(f, label: str, calls: list[str]):
    def counted(*args):
        calls.append(label)
        return f(*args)
    return counted


def count_python_writers(monkeypatch, *classes) -> list[str]:
    """A list that gets ``Class.function`` for each call of the Python writer's functions (size,
    write, write_fresh, write_reverse) of ``classes``' codecs: each one a hand-over from the native
    writers, so it stays empty while only C writes."""
    calls: list[str] = []
    for cls in classes:
        codec = codec_of(cls)
        for name in ("size", "write", "write_fresh", "write_reverse"):
            monkeypatch.setattr(codec, name, _counted(getattr(codec, name), f"{cls.__name__}.{name}", calls))
    return calls


@pytest.fixture
def python_writer_calls(monkeypatch):
    """The Python writer's calls on Kept, Raw and the extension's holder (count_python_writers)."""
    return count_python_writers(monkeypatch, NC.Kept, Raw, NC.KEPT_NOTE.holder)


@pytest.mark.parametrize("case", list(KEPT_CASES))
def test_strings_that_keep_other_bytes_the_same_bytes_from_every_writer(case, google_kept):
    make = KEPT_CASES[case]
    expected = assert_all(make())
    assert NC.keeps_other_bytes(pbj.decode(type(make()), expected))
    if type(make()) is NC.Kept:  # Google's runtime reads and writes back the same bytes
        assert google_kept.FromString(expected).SerializeToString(deterministic=True) == expected


def test_known_bytes_of_strings_that_keep_other_bytes():
    """Hand-checked: tag, length, then the bytes the surrogates stand for, beside the other characters' UTF-8."""
    assert assert_all(NC.Kept(name=KEPT)) == b"\x0a\x08" + KEPT_BYTES
    assert assert_all(Raw(raw=KEPT2)) == b"\x0a\x03\xe9t\xe9"
    # map keys in code-point order, as Python's sorted: KEPT ("a..."), "b", "\udcff" (the byte ff)
    o = NC.Kept(texts={"\udcff": "1", "b": "2", KEPT: "3"})
    assert assert_all(o) == (b"\x1a\x0d\x0a\x08" + KEPT_BYTES + b"\x12\x013" + b"\x1a\x06\x0a\x01b\x12\x012"
                             + b"\x1a\x06\x0a\x01\xff\x12\x011")


@native_only
@pytest.mark.parametrize("case", list(KEPT_CASES))
def test_strings_that_keep_other_bytes_are_never_handed_to_the_python_writer(case, python_writer_calls):
    """pbj.encode (fresh, sizes cached, reverse=True) and pbj.write_reverse into a ReverseBuffer that
    grows, on the native engine: the right bytes, and no call of the Python writer's functions."""
    make = KEPT_CASES[case]
    expected = NC._encode_python(make())
    python_writer_calls.clear()
    before = pbj.engine()
    pbj.use_engine("native")
    try:
        o = make()
        assert pbj.encode(o) == expected   # fresh
        assert o._pbj_size == len(expected)
        assert pbj.encode(o) == expected   # sizes cached
        assert pbj.encode(make(), reverse=True) == expected
        buf = pbj.ReverseBuffer(1)
        assert pbj.write_reverse(make(), buf) == len(expected) and buf.to_bytes() == expected
        plan = codec_of(type(o)).native
        assert _native._engine.encode(plan, make()) == expected
        assert _native._engine.write_reverse(plan, make()) == expected
    finally:
        pbj.use_engine(before)
    assert python_writer_calls == []


@pytest.mark.parametrize("reverse", [False, True])
def test_a_validated_string_holding_surrogates_is_refused_as_the_python_engine_refuses_it(reverse):
    """proto3 (utf8 VERIFY): the constructor refuses lone surrogates; put in behind its back, the
    native writers decline them (an error to explain) and pbj.encode raises the Python writer's error."""
    from pbj import api

    with pytest.raises(ValueError, match="surrogates not allowed"):
        Strict(s="\udcff")
    errors = []
    for field, value in (("s", "\udcff"), ("r", ("ok", "x\udc80")), ("m", pbj.FrozenMap({"\udcff": "v"})),
                         ("m", pbj.FrozenMap({"k": "\udcff"}))):
        o = Strict()
        object.__setattr__(o, field, value)
        if _native.available():
            plan = codec_of(Strict).native
            assert _native._engine.encode(plan, o) is None and _native._engine.write_reverse(plan, o) is None
        got = []
        for engine in ["python", "native"] if _native.available() else ["python"]:
            before = pbj.engine()
            pbj.use_engine(engine)
            try:
                with pytest.raises(pbj.EncodeError) as exc:
                    pbj.encode(o, reverse=reverse)
                got.append((str(exc.value), tuple(exc.value.path)))
            finally:
                pbj.use_engine(before)
        with pytest.raises(pbj.EncodeError) as exc:
            api.python_encode(o)
        assert set(got) == {(str(exc.value), tuple(exc.value.path))}
        assert "surrogates not allowed" in str(exc.value)
        errors.append(got[0])
    assert len(set(errors)) == 4  # each names its own field


@native_only
def test_a_surrogate_that_stands_for_no_byte_is_declined_and_explained():
    """U+D800 is no byte's escape: even a string that keeps any bytes cannot hold it (the native
    writers decline; the Python writer raises with the path)."""
    o = NC.Kept()
    object.__setattr__(o, "name", "x\ud800")
    plan = codec_of(NC.Kept).native
    assert _native._engine.encode(plan, o) is None and _native._engine.write_reverse(plan, o) is None
    with pytest.raises(pbj.EncodeError, match="surrogates not allowed"):
        pbj.encode(o)


@native_only
def test_a_kept_string_replaced_while_the_buffer_grows_is_written_as_it_was(python_writer_calls):
    """A ReverseBuffer whose growth (in the middle of writing the string: its room check) replaces the
    field with object.__setattr__, dropping the str: the native writer copies from the bytes it made
    and holds, so the bytes are the message's as it was, and the Python writer is not called."""
    for label in ("kept name", "kept names", "kept texts", "kept choice", "kept extension"):
        build = dict(NC._held_cases())[label]
        o, _ = build()
        expected = NC._encode_python(o)
        python_writer_calls.clear()
        o, swap = build()
        buf = NC.SwapOnGrow(16, swap)
        buf.write_bytes(b"tail")
        pos = buf.writer_begin()
        end = _native._engine.write_reverse(codec_of(type(o)).native, o, buf, pos)
        assert end is not None, label
        buf.writer_commit(end)
        assert buf.grown >= 1 and buf.swap is None, label  # the change ran, inside the write
        assert buf.to_bytes() == expected + b"tail", label
        assert python_writer_calls == [], label


@native_only
def test_equal_sizes_above_256_are_one_int_and_colliding_sizes_stay_exact():
    # 40 siblings of 300 bytes each (past CPython's shared small ints), 2 of them 556 bytes (300 + 256:
    # the same slot of the engine's table of size ints): every size exact, and one int per run of
    # equal sizes between two of the other (38 ints of 300 and 2 of 556 before)
    def node(n: int) -> Node:
        return Node(n=1, text="x" * (n - 5))  # n: 2 bytes, text: tag, a 2-byte length, n - 5
    kids = tuple(node(556 if i in (7, 30) else 300) for i in range(40))
    data = NC._encode_python(Node(kids=kids))
    for reverse in (False, True):  # every writer test runs both writers
        fresh = pbj.decode(Node, data)
        assert pbj.encode(fresh, reverse=reverse) == data
    fresh = NC._python_decode(Node, data)
    assert _native._engine.encode(codec_of(Node).native, fresh) == data  # the native forward writer
    sizes = [k._pbj_size for k in fresh.kids]
    assert sizes == [556 if i in (7, 30) else 300 for i in range(40)]
    assert len({id(s) for s in sizes if s == 300}) == 3 and len({id(s) for s in sizes if s == 556}) == 2
    assert pbj.encode(fresh) == data == pbj.encode(fresh, reverse=True)  # sizes cached: the same bytes
