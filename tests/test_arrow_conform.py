"""from_arrow takes what engines give back (pbj/arrow/conform.py): other widths, encodings, nulls, streams.

Each test changes a table :func:`pbj.arrow.to_arrow` made into one form an
engine writes (large and view types, dictionaries of other index types, plain
strings, maps as lists of structs, other time units and zones, nulls under a
null struct) and checks that ``from_arrow`` gives the same messages back; the
errors name the column and the first offending row, in a few hundred
characters at most.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import pbj
import pbj.arrow
from pbj import wellknown as wk
from pbj.arrow import convert
from tests.test_arrow import ROWS, Knob, Leaf, Row, Times, Tree

TIMES = [Times(at=wk.Timestamp(seconds=1_700_000_000, nanos=123_456_000), took=wk.Duration(seconds=-3, nanos=-5_000),
               count=wk.Int32Value(value=3), nothing=wk.Empty(), stamps=(wk.Timestamp(seconds=5),)),
         Times(took=wk.Duration(seconds=86_401)), Times()]


def widen(t: pa.DataType) -> pa.DataType:
    """``t`` with every string, binary and list made large, dictionaries indexed by uint32 over large strings."""
    if pa.types.is_string(t):
        return pa.large_string()
    if pa.types.is_binary(t):
        return pa.large_binary()
    if pa.types.is_dictionary(t):
        return pa.dictionary(pa.uint32(), widen(t.value_type))
    if pa.types.is_list(t):
        return pa.large_list(pa.field("element", widen(t.value_type)))
    if pa.types.is_map(t):
        return pa.map_(widen(t.key_type), widen(t.item_type))
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, widen(f.type)) for f in t])
    return t


def test_large_types_and_nullable_fields():
    table = pbj.arrow.to_arrow(ROWS)
    wide = table.cast(pa.schema([pa.field(f.name, widen(f.type)) for f in table.schema]))
    assert wide.schema.field("tags").type == pa.large_list(pa.field("element", pa.large_string()))
    assert pbj.arrow.from_arrow(wide, Row) == ROWS


def test_views_dictionaries_and_plain_strings():
    table = pbj.arrow.to_arrow(ROWS)
    colour = table.column("colour").combine_chunks()
    forms = [
        table.set_column(5, "colour", colour.cast(pa.string())),  # plain strings
        table.set_column(5, "colour", colour.cast(pa.string()).cast(pa.string_view())),
        table.set_column(5, "colour", pa.DictionaryArray.from_arrays(colour.indices.cast(pa.int8()),
                                                                     colour.dictionary.cast(pa.large_string()))),
        table.set_column(table.schema.get_field_index("from"), "from", table.column("from").cast(pa.string_view())),
        table.set_column(4, "raw", table.column("raw").cast(pa.binary_view())),
        table.set_column(table.schema.get_field_index("from"), "from",
                         table.column("from").combine_chunks().dictionary_encode()),
    ]
    for form in forms:
        assert pbj.arrow.from_arrow(form, Row) == ROWS


def test_maps_as_lists_of_key_value_structs_and_any_item_names():
    table = pbj.arrow.to_arrow(ROWS)
    scores = table.column("scores").combine_chunks()
    entries = pa.struct([pa.field("key", pa.large_string()), pa.field("value", pa.int64())])
    as_list = pa.ListArray.from_arrays(scores.offsets, scores.values.cast(entries), type=pa.list_(
        pa.field("l", entries)))
    listed = table.set_column(10, "scores", as_list)
    assert pbj.arrow.from_arrow(listed, Row) == ROWS
    tags = table.column("tags").combine_chunks()
    sizes = pc.subtract(tags.offsets.slice(1), tags.offsets.slice(0, len(tags)))
    view = pa.ListViewArray.from_arrays(tags.offsets.slice(0, len(tags)), sizes, tags.values)
    renamed = table.set_column(9, "tags", view)
    assert pbj.arrow.from_arrow(renamed, Row) == ROWS


def test_nulls_under_a_null_struct():
    """DuckDB and Polars write nulls in the non-nullable children of a null struct: no value, not an error."""
    table = pbj.arrow.to_arrow(ROWS)
    leaf = table.column("leaf").combine_chunks()
    label = pa.array([leaf.field(0)[0].as_py(), None, None, None], pa.string())
    weight = pa.array([leaf.field(1)[0].as_py(), None, None, None], pa.float32())
    nulls = pa.StructArray.from_arrays([label, weight], names=["label", "weight"], mask=leaf.is_null())
    assert pbj.arrow.from_arrow(table.set_column(7, "leaf", nulls), Row) == ROWS
    choice = table.column("choice").combine_chunks()  # the last row's oneof is unset: null which below it
    which = pa.array(["node", "text", "which", None])
    nulled = pa.StructArray.from_arrays([which, *(choice.field(i) for i in range(1, 4))],
                                        names=["_which", "text", "node", "which"], mask=choice.is_null())
    assert pbj.arrow.from_arrow(table.set_column(11, "choice", nulled), Row) == ROWS


def test_times_of_other_units_zones_and_forms():
    table = pbj.arrow.to_arrow(TIMES)
    at = table.column("at").combine_chunks()
    took = table.column("took").combine_chunks()
    forms = [
        table.set_column(0, "at", at.cast(pa.timestamp("us", tz="Etc/UTC"))),
        table.set_column(0, "at", at.cast(pa.timestamp("ns", tz="+05:30"))),
        table.set_column(0, "at", at.cast(pa.timestamp("us"))),  # naive: taken as UTC
        table.set_column(1, "took", took.cast(pa.duration("us"))),
        table.set_column(1, "took", took.view(pa.int64())),  # DuckDB's reading of Parquet durations
        table.set_column(1, "took", pa.array([None if v is None else pa.MonthDayNano([0, v.days, v.microseconds * 1000
                                                                                      + v.seconds * 10**9])
                                              for v in took.to_pylist()], pa.month_day_nano_interval())),
    ]
    for form in forms:
        assert pbj.arrow.from_arrow(form, Times) == TIMES
    months = table.set_column(1, "took", pa.array([pa.MonthDayNano([0, 0, 1]), pa.MonthDayNano([1, 0, 0]), None],
                                                  pa.month_day_nano_interval()))
    with pytest.raises(ValueError, match=r"column 'took' row 1: an interval with months"):
        pbj.arrow.from_arrow(months, Times)


def test_integers_of_other_widths_when_they_fit():
    table = pbj.arrow.to_arrow(ROWS)
    assert pbj.arrow.from_arrow(table.set_column(0, "i32", table.column("i32").cast(pa.int64())), Row) == ROWS
    assert pbj.arrow.from_arrow(pbj.arrow.to_arrow([Knob(), Knob(level=3, size=1)], enums="number").cast(
        pa.schema([pa.field("level", pa.int16()), pa.field("size", pa.int64())])), Knob, enums="number") == [
        Knob(), Knob(level=3, size=1)]
    big = table.set_column(0, "i32", pa.array([1, 2, 2**40, 3], pa.int64()))
    with pytest.raises(ValueError, match=r"column 'i32' row 2: 1099511627776 does not fit int32"):
        pbj.arrow.from_arrow(big, Row)


@pbj.message(full_name="conform.Single")
class Single:
    f: float = pbj.field(1, "float")


def test_a_float_from_a_double_column_past_binary32s_range_is_refused():
    """As when the message is built: a finite value past binary32's largest is a ValueError (an infinity or a
    NaN is kept), on both paths (from_arrow and encode_from_arrow) and both engines."""
    fine = [3.0e38, -3.4028234663852886e38, float("-inf"), 0.5]
    table = pa.table({"f": pa.array([*fine, None], pa.float64())}).slice(0, 4)
    assert pbj.arrow.from_arrow(table, Single) == [Single(f=v) for v in fine]
    assert pbj.arrow.encode_from_arrow(table, Single) == [pbj.encode(Single(f=v)) for v in fine]
    past = pa.table({"f": pa.array([1.0, float("nan"), 2.0, -1e300], pa.float64())})
    for read in (pbj.arrow.from_arrow, pbj.arrow.encode_from_arrow):
        with pytest.raises(ValueError, match=r"^Single: column 'f' row 3: -1e\+300 is out of range for float$"):
            read(past, Single)


@pytest.mark.parametrize("change, text", [
    (lambda t: t.drop_columns(["leaf"]), r"^Row: the table has no column 'leaf' \(it has 12 columns\)$"),
    (lambda t: t.set_column(0, "i32", pa.array([1, None, 3, 4], pa.int32())), r"column 'i32' row 1: null, but"),
    (lambda t: t.set_column(5, "colour", pa.array(["RED", "RED", "PINK", "RED"])),
     r"column 'colour' row 2: 'PINK' is not a member of Colour nor a number"),
    (lambda t: t.set_column(11, "choice", pa.array([None, None, {"_which": "nope"}, None],
                                                  pa.struct([pa.field("_which", pa.string())]))),
     r"column 'choice' has no field 'text'"),
    (lambda t: t.set_column(11, "choice", pa.array(
        [None, {"_which": "text", "text": "a"}, {"_which": "nope", "text": None}, None],
        pa.struct([pa.field("_which", pa.string()), pa.field("text", pa.string()), pa.field("node", LEAF_TYPE),
                   pa.field("which", pa.bool_())]))),
     r"column 'choice._which' row 2: 'nope' is not a member of the oneof \(one of text, node, which\)"),
    (lambda t: t.set_column(11, "choice", pa.array(
        [None, {"_which": "text", "text": None}, None, None],
        pa.struct([pa.field("_which", pa.string()), pa.field("text", pa.string()), pa.field("node", LEAF_TYPE),
                   pa.field("which", pa.bool_())]))),
     r"column 'choice._which' row 1: the member set is 'text', whose value is null"),
    (lambda t: t.set_column(8, "leaves", pa.array([[], [], [{"label": "a", "weight": 1.0}, {"label": None}], []],
                                                  pa.list_(LEAF_TYPE))),
     r"column 'leaves\[\].label' row 2: null"),
    (lambda t: t.set_column(10, "scores", pa.array([[], [("k", None)], [], []], pa.map_(pa.string(), pa.int64()))),
     r"column 'scores\[\].value' row 1: null"),
    (lambda t: t.set_column(9, "tags", pa.array([[], None, [], []], pa.list_(pa.string()))), r"column 'tags' row 1"),
    (lambda t: t.set_column(7, "leaf", pa.array([1, 2, 3, 4])),
     r"column 'leaf' is int64, expected a struct of 2 fields$"),
])
def test_errors_name_the_column_and_row(change, text):
    table = pbj.arrow.to_arrow(ROWS)
    with pytest.raises(ValueError, match=text) as err:
        pbj.arrow.from_arrow(change(table), Row)
    assert len(str(err.value)) < 300


LEAF_TYPE = pa.struct([pa.field("label", pa.string()), pa.field("weight", pa.float32())])


def test_a_wide_type_prints_short():
    table = pbj.arrow.to_arrow([Tree(name="a", kids=(Tree(name="b"),))])
    wrong = pa.table({"name": ["a"], "kids": [1], "best": [None]})
    with pytest.raises(ValueError, match=r"column 'kids' is int64, expected a list") as err:
        pbj.arrow.from_arrow(wrong, Tree)
    assert len(str(err.value)) < 300
    assert pbj.arrow.from_arrow(table, Tree) == [Tree(name="a", kids=(Tree(name="b"),))]


def test_readers_stream_one_batch_at_a_time(monkeypatch):
    table = pbj.arrow.to_arrow(ROWS * 3)
    batches = table.to_batches(max_chunksize=4)
    assert len(batches) == 3
    converted: list[int] = []
    real = convert._batch_messages

    def counted(cls, plan, batch, first_row, options=None):
        converted.append(first_row)
        return real(cls, plan, batch, first_row, options)

    monkeypatch.setattr(convert, "_batch_messages", counted)
    seen: list[int] = []

    def produce():
        for batch in batches:
            seen.append(len(converted))  # batches converted before this one is read
            yield batch

    reader = pa.RecordBatchReader.from_batches(table.schema, produce())
    assert pbj.arrow.from_arrow(reader, Row) == ROWS * 3
    assert seen == [0, 1, 2] and converted == [0, 4, 8]


def test_arrow_pycapsule_objects():
    table = pbj.arrow.to_arrow(ROWS)

    class Stream:
        def __arrow_c_stream__(self, requested_schema=None):
            return table.__arrow_c_stream__(requested_schema)

    class Batch:
        def __arrow_c_array__(self, requested_schema=None):
            return table.to_batches()[0].__arrow_c_array__(requested_schema)

    assert pbj.arrow.from_arrow(Stream(), Row) == ROWS
    assert pbj.arrow.from_arrow(Batch(), Row) == ROWS
    with pytest.raises(TypeError, match="RecordBatchReader"):
        pbj.arrow.from_arrow({"i32": [1]}, Row)


def test_the_batch_is_halved_past_int32_offsets(monkeypatch):
    from pbj.arrow import conform

    table = pbj.arrow.to_arrow(ROWS * 2).cast(pa.schema([pa.field(f.name, widen(f.type)) for f in
                                                         pbj.arrow.arrow_schema(Row)]))
    monkeypatch.setattr(conform, "_INT32_MAX", 4)  # "more than 2**31-1" made small: the batch is halved
    sizes: list[int] = []
    real = convert._batch_messages

    def counted(cls, plan, batch, first_row, options=None):
        sizes.append(batch.num_rows)
        return real(cls, plan, batch, first_row, options)

    monkeypatch.setattr(convert, "_batch_messages", counted)
    assert pbj.arrow.from_arrow(table, Row) == ROWS * 2
    assert sizes[0] == 8 and len(sizes) > 1


def test_extra_columns_and_struct_fields_are_ignored():
    table = pbj.arrow.to_arrow([Leaf(label="x", weight=1.0)])
    more = table.append_column("row", pa.array([0])).select(["row", "weight", "label"])
    assert pbj.arrow.from_arrow(more, Leaf) == [Leaf(label="x", weight=1.0)]
