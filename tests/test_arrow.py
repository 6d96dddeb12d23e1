"""pbj.arrow: the type mapping, exact round trips, and its errors (hand-declared classes)."""

from __future__ import annotations

import enum
import math
import struct

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import pbj
import pbj.arrow
from pbj import wellknown as wk
from pbj.testing import equivalent


class Colour(enum.IntEnum):
    RED = 0
    GREEN = 1
    BLUE = 2


@pbj.message
class Leaf:
    label: str = pbj.field(1, "string")
    weight: float = pbj.field(2, "float")


@pbj.message
class Row:
    i32: int = pbj.field(1, "sint32")
    u64: int = pbj.field(2, "fixed64")
    d: float = pbj.field(3, "double")
    ok: bool = pbj.field(4, "bool")
    raw: bytes = pbj.field(5, "bytes")
    colour: Colour = pbj.field(6, Colour)
    maybe: int | None = pbj.field(7, "int32", optional=True)
    leaf: Leaf | None = pbj.field(8, Leaf)
    leaves: tuple[Leaf, ...] = pbj.field(9, Leaf, repeated=True)
    tags: tuple[str, ...] = pbj.field(10, "string", repeated=True)
    scores: pbj.FrozenMap = pbj.map_field(11, "string", "sint64")
    choice: pbj.OneOf | None = pbj.oneof(text=(12, "string"), node=(13, Leaf), which=(14, "bool"))
    from_: str = pbj.field(15, "string", name="from")


@pbj.message
class Times:
    at: wk.Timestamp | None = pbj.field(1, wk.Timestamp)
    took: wk.Duration | None = pbj.field(2, wk.Duration)
    count: wk.Int32Value | None = pbj.field(3, wk.Int32Value)
    ratio: wk.FloatValue | None = pbj.field(4, wk.FloatValue)
    nothing: wk.Empty | None = pbj.field(5, wk.Empty)
    stamps: tuple[wk.Timestamp, ...] = pbj.field(6, wk.Timestamp, repeated=True)


@pbj.message
class Tree:
    name: str = pbj.field(1, "string")
    kids: tuple[Tree, ...] = pbj.field(2, "Tree", repeated=True)
    best: Tree | None = pbj.field(3, "Tree")


class Size(enum.IntEnum):
    SMALL = 1
    LARGE = 2


@pbj.message(syntax="proto2")
class Knob:
    level: int = pbj.field(1, "int32", optional=True, default=5)
    size: Size = pbj.field(2, Size, optional=True, default=Size.LARGE)


def _not_null(t: pa.DataType) -> pa.Field:
    return pa.field("item", t, nullable=False)


LEAF = pa.struct([pa.field("label", pa.string(), nullable=False), pa.field("weight", pa.float32(), nullable=False)])
NAMES = pa.dictionary(pa.int32(), pa.string())


def test_schema_of_every_kind():
    schema = pbj.arrow.arrow_schema(Row)
    expected = pa.schema([
        pa.field("i32", pa.int32(), nullable=False),
        pa.field("u64", pa.uint64(), nullable=False),
        pa.field("d", pa.float64(), nullable=False),
        pa.field("ok", pa.bool_(), nullable=False),
        pa.field("raw", pa.binary(), nullable=False),
        pa.field("colour", NAMES, nullable=False),
        pa.field("maybe", pa.int32(), nullable=True),
        pa.field("leaf", LEAF, nullable=True),
        pa.field("leaves", pa.list_(_not_null(LEAF)), nullable=False),
        pa.field("tags", pa.list_(_not_null(pa.string())), nullable=False),
        pa.field("scores", pa.map_(pa.field("key", pa.string(), nullable=False),
                                   pa.field("value", pa.int64(), nullable=False)), nullable=False),
        pa.field("choice", pa.struct([pa.field("_which", NAMES, nullable=False),
                                      pa.field("text", pa.string()), pa.field("node", LEAF),
                                      pa.field("which", pa.bool_())]), nullable=True),
        pa.field("from", pa.string(), nullable=False),
    ])
    assert schema.equals(expected, check_metadata=False)
    assert schema.metadata == {b"pbj.message": b"tests.test_arrow.Row"}  # the full name
    numbers = pbj.arrow.arrow_schema(Row, enums="number")
    assert numbers.field("colour").type == pa.int32()


ROWS = [
    Row(i32=-5, u64=2**64 - 1, d=-0.0, ok=True, raw=b"\x00\xff", colour=Colour.BLUE, maybe=0,
        leaf=Leaf(label="a", weight=1.5), leaves=(Leaf(label="x"), Leaf(weight=-2.0)), tags=("p", "q"),
        scores={"b": -1, "a": 2**63 - 1}, choice=pbj.OneOf("node", Leaf(label="n")), from_="here"),
    Row(colour=7, choice=pbj.OneOf("text", "")),
    Row(choice=pbj.OneOf("which", False), d=math.inf),
    Row(),
]


def test_round_trip_and_values():
    table = pbj.arrow.to_arrow(ROWS)
    assert table.num_rows == 4
    assert table.column("colour").to_pylist() == ["BLUE", "7", "RED", "RED"]  # an unknown number: its text
    assert table.column("maybe").to_pylist() == [0, None, None, None]
    assert table.column("leaf").to_pylist() == [{"label": "a", "weight": 1.5}, None, None, None]
    choice = table.column("choice").to_pylist()
    assert choice[0] == {"_which": "node", "text": None, "node": {"label": "n", "weight": 0.0}, "which": None}
    assert choice[1] == {"_which": "text", "text": "", "node": None, "which": None}
    assert choice[2]["_which"] == "which" and choice[2]["which"] is False
    assert choice[3] is None
    assert table.column("scores").to_pylist()[0] == [("b", -1), ("a", 2**63 - 1)]
    back = pbj.arrow.from_arrow(table, Row)
    assert back == ROWS
    assert back[1].colour == 7 and not isinstance(back[1].colour, Colour)
    table.validate(full=True)
    assert pbj.arrow.from_arrow(pbj.arrow.to_arrow(ROWS, enums="number"), Row, enums="number") == ROWS
    assert pbj.arrow.to_arrow(ROWS, enums="number").column("colour").to_pylist() == [2, 7, 0, 0]


def test_unset_rows_hold_zero_values_not_nulls():
    """A non-nullable child of an unset message holds the zero value (Parquet refuses nulls there)."""
    table = pbj.arrow.to_arrow(ROWS)
    leaf = table.column("leaf").chunk(0)
    assert leaf.field(0).null_count == 0 and leaf.field(0).to_pylist() == ["a", "", "", ""]
    node = table.column("choice").chunk(0).field(2)
    assert node.null_count == 3 and node.field(0).null_count == 0


def test_float32_nan_bits_survive():
    quiet, signalling = 0x7FC00123, 0x7F800001
    values = [struct.unpack("<d", struct.pack("<Q", w))[0] for w in (
        ((quiet & 0x7FFFFF) << 29) | 0x7FF0000000000000, ((signalling & 0x7FFFFF) << 29) | 0x7FF0000000000000)]
    msgs = [Leaf(weight=v) for v in values]
    table = pbj.arrow.to_arrow(msgs)
    bits = struct.unpack("<2I", table.column("weight").chunk(0).buffers()[1].to_pybytes()[:8])
    assert bits == (quiet, signalling)
    back = pbj.arrow.from_arrow(table, Leaf)
    assert [pbj.encode(m) for m in back] == [pbj.encode(m) for m in msgs]
    assert equivalent(back, msgs)


def test_well_known_types():
    schema = pbj.arrow.arrow_schema(Times)
    assert [(f.name, f.type, f.nullable) for f in schema] == [
        ("at", pa.timestamp("ns", tz="UTC"), True), ("took", pa.duration("ns"), True),
        ("count", pa.int32(), True), ("ratio", pa.float32(), True), ("nothing", pa.bool_(), True),
        ("stamps", pa.list_(_not_null(pa.timestamp("ns", tz="UTC"))), False)]
    msgs = [Times(at=wk.Timestamp(seconds=-1, nanos=999_999_999), took=wk.Duration(seconds=-3, nanos=-5),
                  count=wk.Int32Value(value=0), ratio=wk.FloatValue(value=0.5), nothing=wk.Empty(),
                  stamps=(wk.Timestamp(seconds=1_700_000_000),)),
            Times()]
    table = pbj.arrow.to_arrow(msgs)
    assert table.column("at").cast(pa.int64()).to_pylist() == [-1, None]
    assert table.column("took").cast(pa.int64()).to_pylist() == [-3_000_000_005, None]
    assert table.column("count").to_pylist() == [0, None]
    assert table.column("nothing").to_pylist() == [True, None]
    assert pbj.arrow.from_arrow(table, Times) == msgs
    plain = pbj.arrow.arrow_schema(Times, well_known_types=False)
    assert plain.field("at").type == pa.struct([pa.field("seconds", pa.int64(), nullable=False),
                                                pa.field("nanos", pa.int32(), nullable=False)])
    assert pbj.arrow.from_arrow(pbj.arrow.to_arrow(msgs, well_known_types=False), Times,
                                well_known_types=False) == msgs


@pytest.mark.parametrize("value, field", [
    (Times(at=wk.Timestamp(seconds=0, nanos=-1)), "at"),                   # not normalized
    (Times(at=wk.Timestamp(seconds=253402300799)), "at"),                 # 9999-12-31: past 2262
    (Times(took=wk.Duration(seconds=1, nanos=-1)), "took"),               # signs differ
    (Times(stamps=(wk.Timestamp(), wk.Timestamp(seconds=10**11))), "stamps"),
])
def test_times_arrow_cannot_hold(value, field):
    with pytest.raises(pbj.EncodeError) as err:
        pbj.arrow.to_arrow([value])
    assert err.value.path == [field]
    assert "well_known_types=False" in str(err.value)
    assert pbj.arrow.from_arrow(pbj.arrow.to_arrow([value], well_known_types=False), Times,
                                well_known_types=False) == [value]


def test_recursion_stops_at_the_depth_with_the_encoding():
    deep = Tree(name="a", kids=(Tree(name="b", kids=(Tree(name="c", best=Tree(name="d")),)),))
    schema = pbj.arrow.arrow_schema(Tree)
    kid = schema.field("kids").type.value_type
    assert kid.field("name").type == pa.string()
    assert kid.field("kids").type == pa.list_(_not_null(pa.binary()))  # the third level: its encoding
    assert kid.field("best").type == pa.binary()
    table = pbj.arrow.to_arrow([deep, Tree()])
    assert table.column("kids").to_pylist()[0][0]["kids"] == [pbj.encode(deep.kids[0].kids[0])]
    assert pbj.arrow.from_arrow(table, Tree) == [deep, Tree()]
    zero = pbj.arrow.arrow_schema(Tree, recursion_depth=0)
    assert zero.field("best").type == pa.binary()
    assert pbj.arrow.from_arrow(pbj.arrow.to_arrow([deep], recursion_depth=0), Tree, recursion_depth=0) == [deep]


def test_declared_defaults_are_null_while_unset():
    msgs = [Knob(), Knob(level=5), Knob(size=Size.SMALL)]
    table = pbj.arrow.to_arrow(msgs)
    assert table.column("level").to_pylist() == [None, 5, None]
    assert table.column("size").to_pylist() == [None, None, "SMALL"]
    back = pbj.arrow.from_arrow(table, Knob)
    assert back == msgs and not pbj.has(back[0], "level") and pbj.has(back[1], "level")


def test_parquet_round_trip(tmp_path):
    path = tmp_path / "rows.parquet"
    pbj.arrow.write_parquet(ROWS, path)
    assert pq.read_table(path).schema.equals(pbj.arrow.arrow_schema(Row))
    assert pbj.arrow.read_parquet(path, Row) == ROWS
    pbj.arrow.write_parquet([Times(nothing=wk.Empty())], tmp_path / "t.parquet")
    assert pbj.arrow.read_parquet(tmp_path / "t.parquet", Times) == [Times(nothing=wk.Empty())]


def test_empty_and_sliced_tables():
    empty = pbj.arrow.to_arrow([], Row)
    assert empty.num_rows == 0 and empty.schema.equals(pbj.arrow.arrow_schema(Row))
    assert pbj.arrow.from_arrow(empty, Row) == []
    table = pbj.arrow.to_arrow(ROWS * 3)
    assert pbj.arrow.from_arrow(table.slice(3, 5), Row) == (ROWS * 3)[3:8]
    chunked = pa.concat_tables([pbj.arrow.to_arrow(ROWS), pbj.arrow.to_arrow(ROWS[::-1])])
    assert pbj.arrow.from_arrow(chunked, Row) == ROWS + ROWS[::-1]
    batch = pbj.arrow.to_arrow(ROWS).to_batches()[0]
    assert pbj.arrow.from_arrow(batch, Row) == ROWS


def test_errors():
    with pytest.raises(TypeError, match="cls="):
        pbj.arrow.to_arrow([])
    with pytest.raises(TypeError, match=r"messages\[1\] is a Leaf, not a Row"):
        pbj.arrow.to_arrow([Row(), Leaf()])
    with pytest.raises(TypeError, match="takes a pbj message class, not the class int"):
        pbj.arrow.arrow_schema(int)
    with pytest.raises(ValueError, match="enums must be one of"):
        pbj.arrow.arrow_schema(Row, enums="names")
    with pytest.raises(ValueError, match="recursion_depth"):
        pbj.arrow.arrow_schema(Tree, recursion_depth=-1)
    table = pbj.arrow.to_arrow(ROWS)
    with pytest.raises(ValueError, match="no column 'from'"):
        pbj.arrow.from_arrow(table.drop_columns(["from"]), Row)
    with pytest.raises(ValueError, match="column 'leaf' is int64"):
        pbj.arrow.from_arrow(table.set_column(7, "leaf", pa.array([1, 2, 3, 4])), Row)
    with pytest.raises(TypeError, match=r"pyarrow\.Table"):
        pbj.arrow.from_arrow([1], Row)  # type: ignore[arg-type]


@pytest.mark.parametrize(("call", "text"), [
    (lambda: pbj.arrow.decode_to_arrow(Leaf, b"\x0a\x01a"),
     "pbj.arrow.decode_to_arrow: payloads must be an iterable of bytes, not bytes (for one payload: [payload])"),
    (lambda: pbj.arrow.decode_to_arrow(Leaf, [b"", 7]), "pbj.arrow.decode_to_arrow: payloads[1] is int, not bytes"),
    (lambda: pbj.arrow.decode_to_arrow(Leaf, 7),
     "pbj.arrow.decode_to_arrow: payloads must be an iterable of bytes, not int (for one payload: [payload])"),
    (lambda: pbj.arrow.arrow_schema(Leaf()),
     "pbj.arrow.arrow_schema takes a message class, not a Leaf message: pbj.arrow.arrow_schema(Leaf, ...)"),
    (lambda: pbj.arrow.to_arrow(Leaf()), "pbj.arrow.to_arrow takes a list of messages, not one Leaf message: "
                                         "to_arrow([msg])"),
    (lambda: pbj.arrow.to_arrow([Leaf()], Leaf()),
     "pbj.arrow.to_arrow takes a message class, not a Leaf message: pbj.arrow.to_arrow(Leaf, ...)"),
    (lambda: pbj.arrow.from_arrow(pbj.arrow.to_arrow([Leaf()]), Leaf()),
     "pbj.arrow.from_arrow takes a message class, not a Leaf message: pbj.arrow.from_arrow(Leaf, ...)"),
])
def test_a_message_for_a_class_or_one_item_for_a_list_is_a_type_error_saying_so(call, text):
    """pbj's own TypeError, not one from deep inside (len() of an int, a weak reference, iterating a message)."""
    with pytest.raises(TypeError) as err:
        call()
    assert str(err.value) == text
    assert pbj.arrow.decode_to_arrow(Leaf, iter([memoryview(b"\x0a\x01a")])).to_pylist() == [
        {"label": "a", "weight": 0.0}]


@pbj.message(syntax="proto2")
class Raw2:
    text: str | None = pbj.field(1, "string", optional=True)


def test_string_that_is_not_utf8():
    msg = pbj.decode(Raw2, bytes.fromhex("0a02ff41"))
    with pytest.raises(pbj.EncodeError) as err:
        pbj.arrow.to_arrow([Raw2(text="ok"), msg])
    assert err.value.path == ["text"] and "row 1" in str(err.value) and "not valid UTF-8" in str(err.value)


def test_decode_to_arrow_equals_to_arrow_of_decoded():
    payloads = [pbj.encode(r) for r in ROWS]
    decoded = [pbj.decode(Row, p) for p in payloads]  # map entries in key order, as written
    assert pbj.arrow.decode_to_arrow(Row, payloads).equals(pbj.arrow.to_arrow(decoded))
    with pytest.raises(pbj.DecodeError) as err:
        pbj.arrow.decode_to_arrow(Row, [*payloads, b"\x0a\x05ab"])
    assert err.value.path[0] == 4


def test_submodules_load_as_attributes(monkeypatch):
    """``pbj.arrow.native.explain(cls)`` after ``import pbj.arrow`` alone, as docs/arrow.md writes it."""
    import pbj.arrow.native

    monkeypatch.delattr(pbj.arrow, "native")  # as after a bare ``import pbj.arrow``
    expected = "native" if pbj.engine() == "native" else "python: the native engine is not in use"
    assert pbj.arrow.native.explain(Leaf) == expected
    with pytest.raises(AttributeError, match="no attribute 'nowhere'"):
        pbj.arrow.nowhere  # noqa: B018


_FIELD_99 = b"\x98\x06\x01"  # field 99, varint 1: no field of Leaf or Row


def test_unknown_fields_are_said_once(recwarn):
    leaf = pbj.decode(Leaf, pbj.encode(Leaf(label="a")) + _FIELD_99)
    row = pbj.decode(Row, pbj.encode(Row(leaf=leaf, leaves=(leaf,))) + _FIELD_99 + _FIELD_99)
    with pytest.warns(pbj.arrow.UnknownFieldsWarning) as caught:
        table = pbj.arrow.to_arrow([row, Row()])
    assert len(caught) == 1
    assert str(caught[0].message) == (
        "4 unknown fields (12 bytes) in tests.test_arrow.Leaf, tests.test_arrow.Row are no columns of the table "
        "and are left out (pbj.encode of the messages keeps them)")
    assert caught[0].filename == __file__
    assert pbj.arrow.from_arrow(table, Row)[0].leaf == Leaf(label="a")
    recwarn.clear()
    pbj.arrow.to_arrow([Row(leaf=Leaf(label="a"))])
    assert not [w for w in recwarn if issubclass(w.category, pbj.arrow.UnknownFieldsWarning)]
    payloads = [pbj.encode(row), pbj.encode(Row())]  # the same from the bytes, on either engine
    with pytest.warns(pbj.arrow.UnknownFieldsWarning, match=r"^4 unknown fields \(12 bytes\) in ") as caught:
        assert pbj.arrow.decode_to_arrow(Row, payloads).equals(table)
    assert len(caught) == 1 and caught[0].filename == __file__
    recwarn.clear()
    pbj.arrow.decode_to_arrow(Row, payloads, unknown_fields="ignore")
    pbj.arrow.decode_to_arrow(Row, [pbj.encode(Row(leaf=Leaf(label="a")))])
    assert not [w for w in recwarn if issubclass(w.category, pbj.arrow.UnknownFieldsWarning)]
    with pytest.raises(ValueError, match="unknown_fields must be"):
        pbj.arrow.decode_to_arrow(Row, payloads, unknown_fields="keep")


def test_decode_to_arrow_in_parts(monkeypatch):
    """Payloads past PART_BYTES in all become several record batches (int32 offsets never overflow)."""
    from pbj.arrow import convert

    payloads = [pbj.encode(r) for r in ROWS * 3]
    whole = pbj.arrow.decode_to_arrow(Row, payloads)
    monkeypatch.setattr(convert, "PART_BYTES", 40)
    parts = pbj.arrow.decode_to_arrow(Row, payloads)
    assert parts.column("from").num_chunks > 1 and parts.schema.equals(whole.schema)
    assert parts.to_pylist() == whole.to_pylist()  # the enum dictionaries differ per chunk (their unknown numbers)
    with pytest.raises(pbj.DecodeError) as err:
        pbj.arrow.decode_to_arrow(Row, [*payloads, b"\x0a\x05ab"])
    assert err.value.path[0] == 12
