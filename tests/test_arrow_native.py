"""decode_to_arrow on the native engine (pbj/_native/arrow.c): the table of to_arrow(decode(...)), no message objects.

Every test compares the native table with the one the Python path gives for
the same payloads (``to_arrow([decode(cls, p) ...])``): schema and metadata,
values, nulls, dictionaries. The inputs the C walker declines must still give
that table (or the decoder's error), through the fallback; the counting tests
show that the native path builds no message object and calls no decoder.
"""

from __future__ import annotations

import enum
import gzip
import math
import struct
from importlib import resources

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pbj
import pbj.arrow
from pbj import wellknown as wk
from pbj.arrow import native
from pbj.arrow.mapping import Options
from pbj.testing import values
from tests.test_arrow import ROWS, Colour, Knob, Leaf, Row, Times, Tree
from tests.test_arrow_properties import CASES, CI_CASES, holdable, namespace

pytestmark = pytest.mark.skipif(pbj.engine() != "native", reason="the native engine is not in use")


def same_array(got: pa.Array, expected: pa.Array, path: str) -> None:
    """Arrays equal level by level: validity, offsets, dictionaries, and floats by their bits (NaN too)."""
    t = expected.type
    assert got.type.equals(t), path
    assert got.is_valid().equals(expected.is_valid()), path
    if pa.types.is_struct(t):
        for i in range(t.num_fields):
            same_array(got.field(i), expected.field(i), f"{path}.{t.field(i).name}")
    elif pa.types.is_map(t):
        assert got.offsets.equals(expected.offsets), path
        same_array(got.keys, expected.keys, f"{path}.key")
        same_array(got.items, expected.items, f"{path}.value")
    elif pa.types.is_list(t):
        assert got.offsets.equals(expected.offsets), path
        same_array(got.values, expected.values, f"{path}[]")
    elif pa.types.is_dictionary(t):
        assert got.dictionary.equals(expected.dictionary), path
        assert got.indices.equals(expected.indices), path
    elif pa.types.is_floating(t):
        bits = pa.uint32() if t.bit_width == 32 else pa.uint64()
        assert got.view(bits).to_pylist() == expected.view(bits).to_pylist(), path
    else:
        assert got.equals(expected), path


def assert_same_table(got: pa.Table, expected: pa.Table) -> None:
    got.validate(full=True)
    assert got.schema.equals(expected.schema, check_metadata=True)
    assert got.num_rows == expected.num_rows
    if not got.equals(expected):  # NaN != NaN in Arrow's equality: compare level by level, floats by bits
        for name in expected.column_names:
            same_array(got.column(name).combine_chunks(), expected.column(name).combine_chunks(), name)


def python_table(cls, payloads, **options):
    return pbj.arrow.to_arrow([pbj.decode(cls, p) for p in payloads], cls, **options)


def native_table(cls, payloads, **options):
    """The C walker's table, or None when it declines (the test then knows it fell back)."""
    return native.decode_table(cls, Options(**options), payloads, pbj.DEFAULT_MAX_DEPTH)


class Counting:
    """Counts the calls of the decoder's entry points (pbj.decode and the engine's) while installed."""

    def __init__(self, monkeypatch) -> None:
        import pbj.api
        from pbj import engines

        self.calls = 0
        real_decode = pbj.api.decode
        engine = engines.CURRENT.engine
        engine_decode = engine.decode

        def counted_decode(*args, **kwargs):
            self.calls += 1
            return real_decode(*args, **kwargs)

        def counted_native(*args):
            self.calls += 1
            return engine_decode(*args)

        monkeypatch.setattr(pbj.api, "decode", counted_decode)
        monkeypatch.setattr(pbj, "decode", counted_decode)
        monkeypatch.setattr(engine, "decode", counted_native)


def test_hand_declared_classes_are_native_and_equal():
    payloads = [pbj.encode(r) for r in ROWS]
    assert native.explain(Row) == "native"
    assert_same_table(native_table(Row, payloads), python_table(Row, payloads))
    assert_same_table(native_table(Row, payloads, enums="number"), python_table(Row, payloads, enums="number"))
    times = [Times(at=wk.Timestamp(seconds=-5, nanos=3), took=wk.Duration(seconds=-1, nanos=-2),
                   count=wk.Int32Value(value=-4), ratio=wk.FloatValue(value=float("nan")), nothing=wk.Empty(),
                   stamps=(wk.Timestamp(seconds=1), wk.Timestamp(nanos=999_999_999))), Times()]
    payloads = [pbj.encode(t) for t in times]
    assert_same_table(native_table(Times, payloads), python_table(Times, payloads))
    assert_same_table(native_table(Times, payloads, well_known_types=False),
                      python_table(Times, payloads, well_known_types=False))
    knobs = [pbj.encode(k) for k in (Knob(), Knob(level=0, size=1), Knob(size=2))]
    assert_same_table(native_table(Knob, knobs), python_table(Knob, knobs))


def test_recursion_past_the_depth_holds_the_encoding():
    deep = Tree(name="a", kids=(Tree(name="b", kids=(Tree(name="c", kids=(Tree(name="d"),)),)),),
                best=Tree(best=Tree(best=Tree(name="e"))))
    payloads = [pbj.encode(t) for t in (deep, Tree())]
    for depth in (0, 1, 2):
        table = native_table(Tree, payloads, recursion_depth=depth)
        assert_same_table(table, python_table(Tree, payloads, recursion_depth=depth))
    # a past-depth encoding not in pbj's written form (fields out of order, an unknown field) is re-encoded
    inner = b"\x12\x00" + b"\x0a\x01z" + b"\xf8\x01\x05"       # kids=(Tree(),), name="z", unknown field 31
    odd = b"\x12" + bytes([len(inner)]) + inner
    table = native_table(Tree, [odd], recursion_depth=0)
    expected = python_table(Tree, [odd], recursion_depth=0)
    assert_same_table(table, expected)
    kept = table.column("kids").to_pylist()[0][0]
    assert kept != inner and kept == pbj.encode(pbj.decode(Tree, inner))  # re-encoded, not copied


def test_the_native_path_builds_no_message_and_calls_no_decoder(monkeypatch):
    from pbj.codec.compiler import codec_of

    payloads = [pbj.encode(r) for r in ROWS] * 3
    expected = python_table(Row, payloads)
    assert native.explain(Row) == "native"  # the plan is built once (with one empty message per struct)
    made = []

    def refuse(*args, **kwargs):
        made.append(args)
        raise AssertionError("a message was decoded")

    counting = Counting(monkeypatch)
    for cls in (Row, Leaf):
        monkeypatch.setattr(codec_of(cls), "parse", refuse)
        monkeypatch.setattr(cls, "__init__", refuse)
    table = pbj.arrow.decode_to_arrow(Row, payloads)
    assert counting.calls == 0 and made == []
    assert_same_table(table, expected)


def test_the_counting_sees_the_fallback(monkeypatch):
    counting = Counting(monkeypatch)
    twice = b"\x42\x03\x0a\x01a" * 2  # Row.leaf twice: merged by the decoder, declined by the walker
    table = pbj.arrow.decode_to_arrow(Row, [twice, twice])
    assert counting.calls == 2  # pbj.decode per payload (its native entry point merges the repeat itself)
    assert table.column("leaf").to_pylist()[0]["label"] == "a"


def test_unknown_fields_are_counted_by_the_walk(monkeypatch, recwarn):
    """Unknown fields in each kind of message column (the row, a list's item, a oneof member, a wrapper,
    a Timestamp, an Empty) are counted as the walker reads them: the warning to_arrow of the decoded
    messages gives, no message decoded; a message past the recursion depth keeps its own (not counted)."""
    extra = b"\x98\x06\x01"  # field 99, varint 1
    leaf = b"\x0a\x01a" + extra
    row = b"".join(tag + bytes([len(leaf)]) + leaf for tag in (b"\x42", b"\x4a", b"\x6a"))  # leaf, leaves, node
    times = b"\x0a\x05\x08\x01" + extra + b"\x1a\x05\x08\x02" + extra + b"\x2a\x03" + extra
    deep = b"\x1a\x08\x1a\x06\x0a\x01z" + extra  # Tree.best.best: past the depth 1
    cases = [(Row, [row, row + extra]), (Times, [times]), (Tree, [deep])]

    def said(make) -> list[str]:
        recwarn.clear()
        make()
        return [str(w.message) for w in recwarn if issubclass(w.category, pbj.arrow.UnknownFieldsWarning)]

    expected = [said(lambda c=cls, p=payloads: python_table(c, p, recursion_depth=1)) for cls, payloads in cases]
    assert expected[0][0].startswith("7 unknown fields (21 bytes) in tests.test_arrow.Leaf, tests.test_arrow.Row ")
    assert expected[1][0].startswith("3 unknown fields (9 bytes) in google.protobuf.Empty, ")
    assert expected[2] == []
    counting = Counting(monkeypatch)
    for (cls, payloads), texts in zip(cases, expected, strict=True):
        assert said(lambda c=cls, p=payloads: pbj.arrow.decode_to_arrow(c, p, recursion_depth=1)) == texts
    assert counting.calls == 1  # the Tree past the depth only: re-encoded by pbj, its unknown field kept


BLOCK = "com.hedera.hapi.block.stream.Block"


@pytest.fixture(scope="module")
def block():
    shipped = resources.files("pbj") / "data"
    ns = pbj.load_descriptor_set((shipped / "hapi-v0.55.0.binpb").read_bytes())
    raw = gzip.decompress((shipped / "000000000000000000000000000000497558.blk.gz").read_bytes())
    items = pbj.decode(ns[BLOCK], raw).items
    return ns["com.hedera.hapi.block.stream.BlockItem"], [pbj.encode(i) for i in items]


def test_block_items_native_without_messages(block, monkeypatch):
    item_cls, payloads = block
    assert native.explain(item_cls) == "native"
    expected = python_table(item_cls, payloads[::4])
    reencoded = []
    real = native._reencoder

    def counting(cls):
        inner = real(cls)

        def reencode(data, depth):
            reencoded.append(cls)
            return inner(data, depth)
        return reencode

    monkeypatch.setattr(native, "_reencoder", counting)
    native._plans.pop(item_cls, None)
    counting_calls = Counting(monkeypatch)
    table = native_table(item_cls, payloads[::4])
    assert table is not None
    # the Key messages past the recursion depth (KeyList in a Key) are in pbj's written form: copied
    assert counting_calls.calls == 0 and reencoded == []
    assert_same_table(table, expected)
    native._plans.pop(item_cls, None)


def run_property(suite: str, name: str, examples: int, **options) -> None:
    cls = namespace(suite)[name]

    @settings(max_examples=examples, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                     HealthCheck.filter_too_much])
    @given(st.lists(values(cls, max_depth=2), min_size=1, max_size=4))
    def prop(messages):
        payloads = [pbj.encode(holdable(m), allow_partial=True) for m in messages]
        try:
            expected = python_table(cls, payloads, **options)
        except pbj.PbjError:
            expected = None
        got = native_table(cls, payloads, **options)
        if got is None:  # declined: the public function falls back to the same table or error
            if expected is not None:
                assert_same_table(pbj.arrow.decode_to_arrow(cls, payloads, **options), expected)
            return
        assert expected is not None
        assert_same_table(got, expected)

    prop()


CI_EXAMPLES = {"hapi": 1, "pbj-it": 3, "proto3": 2, "proto2": 2}
#: The CI selection: test_arrow_properties' classes, HAPI's every third of them (all under ``-m slow``).
CASES_HERE = [c for c in CI_CASES if c[0] != "hapi"] + [c for c in CI_CASES if c[0] == "hapi"][::3]


@pytest.mark.parametrize("suite, name", CASES_HERE, ids=[f"{s}:{n}" for s, n in CASES_HERE])
def test_property_classes_give_the_same_table(suite, name):
    run_property(suite, name, CI_EXAMPLES[suite])


@pytest.mark.slow
@pytest.mark.parametrize("suite, name", CASES, ids=[f"{s}:{n}" for s, n in CASES])
def test_property_classes_many(suite, name):
    run_property(suite, name, 50)
    run_property(suite, name, 20, enums="number", recursion_depth=0)


def test_most_property_classes_are_native():
    said = {f"{s}:{n}": native.explain(namespace(s)[n]) for s, n in CI_CASES}
    native_count = sum(v == "native" for v in said.values())
    assert native_count >= 0.6 * len(said), said
    # proto2 classes with required fields (and those reaching them) say why
    assert all(v == "native" or v.startswith("python: ") for v in said.values())


# ---- declined inputs: the fallback gives the Python path's table, or the decoder's error


@pbj.message
class Pair:
    leaf: Leaf | None = pbj.field(1, Leaf)
    shade: Colour = pbj.field(2, Colour)
    names: pbj.FrozenMap = pbj.map_field(3, "string", "int32")
    pick: pbj.OneOf | None = pbj.oneof(node=(4, Leaf), word=(5, "string"))
    when: wk.Timestamp | None = pbj.field(6, wk.Timestamp)
    label: str = pbj.field(7, "string")


class Closed(enum.IntEnum):
    ONE = 1
    TWO = 2


@pbj.message(syntax="proto2")
class Legacy:
    level: Closed | None = pbj.field(1, Closed, optional=True)
    many: tuple[Closed, ...] = pbj.field(2, Closed, repeated=True)
    text: str | None = pbj.field(3, "string", optional=True)


DECLINED = {
    "sub-message twice (merged)": (Pair, b"\x0a\x03\x0a\x01a" + b"\x0a\x05\x15\x00\x00\x80\x3f"),
    "map key twice": (Pair, b"\x1a\x05\x0a\x01k\x10\x01" + b"\x1a\x05\x0a\x01k\x10\x02"),
    "oneof message replaced": (Pair, b"\x22\x03\x0a\x01a" + b"\x2a\x01w"),
}

#: Kept as unknown fields by the walker (as decode keeps them): the native table is decode + to_arrow's.
KEPT_UNKNOWN = {
    "map entry with an unknown field": (Pair, b"\x1a\x07\x0a\x01k\x10\x01\x18\x05"),
    "closed enum non-member": (Legacy, b"\x08\x07" + b"\x10\x01\x10\x09" + b"\x12\x02\x01\x07"),
}


@pytest.mark.parametrize("case", list(DECLINED), ids=list(DECLINED))
def test_declined_input_gives_the_python_table(case):
    cls, payload = DECLINED[case]
    assert native.explain(cls) == "native"
    assert native_table(cls, [payload]) is None
    assert_same_table(pbj.arrow.decode_to_arrow(cls, [payload]), python_table(cls, [payload]))


@pytest.mark.parametrize("case", list(KEPT_UNKNOWN), ids=list(KEPT_UNKNOWN))
def test_fields_decode_keeps_unknown_are_not_values(case):
    cls, payload = KEPT_UNKNOWN[case]
    table = native_table(cls, [payload])
    assert table is not None  # read in C
    assert_same_table(table, python_table(cls, [payload]))


ERRORS = {
    "truncated": (Pair, b"\x0a\x05\x0a\x01"),
    "bad UTF-8": (Pair, b"\x3a\x02\xc3\x28"),
    "bad UTF-8 in a map key": (Pair, b"\x1a\x04\x0a\x02\xff\xfe"),
    "wire type 7": (Pair, b"\x0f"),
    "end group outside a group": (Pair, b"\x0c"),
    "field number 0": (Pair, b"\x00\x01"),
    "length past the end": (Pair, b"\x3a\x7f"),
}


@pytest.mark.parametrize("case", list(ERRORS), ids=list(ERRORS))
def test_errors_are_the_decoders(case):
    cls, payload = ERRORS[case]
    good = pbj.encode(Pair(label="ok"))
    with pytest.raises(pbj.DecodeError) as theirs:
        pbj.decode(cls, payload)
    with pytest.raises(pbj.DecodeError) as ours:
        pbj.arrow.decode_to_arrow(cls, [good, payload])
    assert ours.value.path == [1, *theirs.value.path]
    assert ours.value.offset == theirs.value.offset
    assert native_table(cls, [good, payload]) is None


def test_too_deep_is_the_decoders_error():
    deep = Tree()
    for _ in range(8):
        deep = Tree(best=deep)
    payload = pbj.encode(deep)
    with pytest.raises(pbj.DecodeError) as theirs:
        pbj.decode(Tree, payload, max_depth=4)
    with pytest.raises(pbj.DecodeError) as ours:
        pbj.arrow.decode_to_arrow(Tree, [payload], max_depth=4)
    assert ours.value.path == [0, *theirs.value.path]
    assert pbj.arrow.decode_to_arrow(Tree, [payload], max_depth=8).num_rows == 1


def test_values_arrow_cannot_hold_raise_encode_error():
    too_late = pbj.encode(Pair(when=wk.Timestamp(seconds=10**12)))
    with pytest.raises(pbj.EncodeError) as err:
        pbj.arrow.decode_to_arrow(Pair, [too_late])
    assert err.value.path == ["when"]
    not_utf8 = b"\x1a\x02\xff\xfe"  # proto2: any bytes kept, but an Arrow string cannot hold them
    with pytest.raises(pbj.EncodeError):
        pbj.arrow.decode_to_arrow(Legacy, [not_utf8])


def test_open_enum_numbers_and_float_bits():
    signalling = struct.unpack("<f", b"\x01\x00\x80\x7f")[0]
    rows = [Row(colour=9), Row(colour=Colour.RED), Row(colour=-3), Row(colour=9),
            Row(leaf=Leaf(weight=float("nan"))), Row(d=-0.0, leaf=Leaf(weight=signalling))]
    payloads = [pbj.encode(r) for r in rows]
    table = native_table(Row, payloads)
    assert_same_table(table, python_table(Row, payloads))
    assert table.column("colour").chunk(0).dictionary.to_pylist() == ["RED", "GREEN", "BLUE", "9", "-3"]
    assert math.copysign(1, table.column("d").to_pylist()[5]) == -1


def test_bytes_like_payloads_and_empty_input():
    payloads = [pbj.encode(r) for r in ROWS]
    mixed = [bytearray(payloads[0]), memoryview(payloads[1]), *payloads[2:]]
    assert_same_table(pbj.arrow.decode_to_arrow(Row, mixed), python_table(Row, payloads))
    empty = pbj.arrow.decode_to_arrow(Row, [])
    assert empty.num_rows == 0 and empty.schema.equals(pbj.arrow.arrow_schema(Row), check_metadata=True)
    with pytest.raises(TypeError):
        pbj.arrow.decode_to_arrow(Row, ["not bytes"])
    twice = b"\x42\x03\x0a\x01a" * 2  # declined by the walker: the fallback reads the payloads again
    from_generator = pbj.arrow.decode_to_arrow(Row, (p for p in [*payloads, twice]))
    assert from_generator.num_rows == len(payloads) + 1


def test_explain_says_why_python_runs():
    @pbj.message(syntax="proto2")
    class Needs:
        must: int = pbj.field(1, "int32", required=True)

    assert native.explain(Needs).startswith("python: ") and "required" in native.explain(Needs)
    # a message with no fields: a table of rows and no columns, each payload checked all the same
    assert native.explain(wk.Empty) == "native"
    rows = native_table(wk.Empty, [b"", b"\x08\x01", b""])
    assert_same_table(rows, python_table(wk.Empty, [b"", b"\x08\x01", b""]))
    assert rows.num_rows == 3 and rows.num_columns == 0
    assert native_table(wk.Empty, [b"\x0c"]) is None
    assert pbj.arrow.decode_to_arrow(Needs, [b"\x08\x01"]).column("must").to_pylist() == [1]
