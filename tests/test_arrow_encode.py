"""encode_from_arrow (pbj/_native/arrow_encode.c) and from_arrow through it: byte-exact with pbj.encode.

The reference is the pure-Python path: the messages from_arrow builds from
each column's Python values, encoded by both of pbj's writers (forward and
reverse, which must agree). The native writer must give the same bytes, on
hand-declared classes, on every class of the property tests (hypothesis values)
and on the shipped block; the messages from_arrow gives through it must equal
the Python path's. On the pure-Python engine both paths are the reference.
"""

from __future__ import annotations

import gzip
import math
import re
from importlib import resources

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pbj
import pbj.arrow
from pbj import wellknown as wk
from pbj.arrow import convert
from pbj.arrow.encode import encode_from_arrow, explain
from pbj.arrow.mapping import Options, plan_of
from pbj.required import reaches_required
from pbj.testing import equivalent, values
from tests.test_arrow import ROWS, Knob, Leaf, Row, Times, Tree
from tests.test_arrow_properties import CI_CASES, holdable, namespace
from tests.test_arrow_split import RECORDS, Record

NATIVE = pbj.engine() == "native"
TIMES = [Times(at=wk.Timestamp(seconds=-5, nanos=7), took=wk.Duration(seconds=-3, nanos=-5),
               count=wk.Int32Value(value=0), ratio=wk.FloatValue(value=-0.0), nothing=wk.Empty(),
               stamps=(wk.Timestamp(seconds=1_700_000_000, nanos=999_999_999), wk.Timestamp())),
         Times(took=wk.Duration(nanos=-1)), Times()]
TREES = [Tree(name="a", kids=(Tree(name="b", kids=(Tree(name="c", best=Tree(name="d")),)),), best=Tree()), Tree()]
KNOBS = [Knob(), Knob(level=0, size=1), Knob(level=-3)]


def python_messages(table, cls, **options):
    """from_arrow's messages by the Python column reader (the reference of the native path)."""
    o = Options(**options)
    plan = plan_of(cls, o)
    out, row = [], 0
    for batch in table.to_batches():
        out.extend(convert._batch_messages(cls, plan, batch, row))
        row += batch.num_rows
    return out


def reference(table, cls, **options):
    """``pbj.encode`` of the reference messages, the forward and the reverse writer agreeing."""
    messages = python_messages(table, cls, **options)
    forward = [pbj.encode(m, allow_partial=True) for m in messages]
    assert forward == [pbj.encode(m, allow_partial=True, reverse=True) for m in messages]
    return messages, forward


def check(table, cls, **options):
    messages, expected = reference(table, cls, **options)
    assert encode_from_arrow(table, cls, **options) == expected
    back = pbj.arrow.from_arrow(table, cls, **options)
    assert equivalent(back, messages)
    return expected


@pytest.mark.parametrize("rows", [ROWS, TIMES, TREES, KNOBS, RECORDS], ids=["Row", "Times", "Tree", "Knob", "Record"])
def test_hand_declared_classes(rows):
    cls = type(rows[0])
    for enums in ("name", "number"):
        table = pbj.arrow.to_arrow(rows, enums=enums)
        assert check(table, cls, enums=enums) == [pbj.encode(m) for m in rows]
    if NATIVE:
        assert explain(cls) == "native"


def test_sliced_and_chunked_tables():
    """Offsets at every level: a sliced table's structs, lists and dictionaries start inside their buffers."""
    table = pbj.arrow.to_arrow(ROWS * 3, Row)
    check(table.slice(1, 9), Row)
    check(pa.concat_tables([table.slice(5), table.slice(0, 3)]), Row)
    records = pbj.arrow.to_arrow(RECORDS * 2)
    assert check(records.slice(3, 8), Record) == [pbj.encode(r) for r in (RECORDS * 2)[3:11]]


def test_engine_output_reads_as_ours():
    """DuckDB's and Polars' forms (large types, plain strings, nulls under null structs) encode alike."""
    duckdb = pytest.importorskip("duckdb")
    pl = pytest.importorskip("polars")
    table = pbj.arrow.to_arrow(ROWS)
    with duckdb.connect() as con:
        con.register("t", table)
        check(con.sql("SELECT * FROM t").arrow().read_all(), Row)
    check(pl.from_arrow(table).to_arrow(), Row)


def test_maps_in_key_order_the_last_of_equal_keys_kept():
    table = pbj.arrow.to_arrow([Row(scores={"b": 1, "a": 2, "": -1}), Row(scores={"x": 0})])
    scores = pa.array([[("b", 1), ("a", 2), ("b", 3), ("", -1)], [("x", 0), ("x", 5)]],
                      pa.map_(pa.string(), pa.int64()))
    table = table.set_column(10, "scores", scores)
    encodings = check(table, Row)
    assert encodings[0] == pbj.encode(Row(scores={"": -1, "a": 2, "b": 3}))
    assert pbj.arrow.from_arrow(table, Row)[1].scores == {"x": 5}


def test_floats_and_integers_at_their_edges():
    rows = [Row(i32=-(2**31), u64=2**64 - 1, d=-0.0), Row(i32=2**31 - 1, d=math.nan), Row(d=0.0),
            Row(leaf=Leaf(weight=-0.0)), Row(leaf=Leaf(weight=math.inf), leaves=(Leaf(weight=-math.inf),))]
    assert check(pbj.arrow.to_arrow(rows), Row) == [pbj.encode(r) for r in rows]


@pytest.mark.parametrize("change, text", [  # both engines: the pure-Python path named no row before
    (lambda t: t.set_column(13 - 1, "from", pa.Array.from_buffers(pa.string(), 4, [
        None, pa.py_buffer(b"\x00\x00\x00\x00\x01\x00\x00\x00\x03\x00\x00\x00\x03\x00\x00\x00\x03\x00\x00\x00"),
        pa.py_buffer(b"a\xff\xfe")])),
     r"^Row: column 'from' row 1: a string that is not UTF-8$"),
])
def test_errors_name_the_column_and_row(change, text):
    table = pbj.arrow.to_arrow(ROWS)
    bad = pa.concat_tables([table, change(table)], promote_options="permissive")
    with pytest.raises(ValueError, match=text.replace("row 1", "row 5")):
        encode_from_arrow(bad, Row)
    with pytest.raises(ValueError, match=text.replace("row 1", "row 5")):
        pbj.arrow.from_arrow(bad, Row)


def _with_choice(table, which, text, flag):
    """``table`` with its oneof column ``choice`` rebuilt: member names ``which``, ``text`` and ``which`` (a bool)."""
    choice = table.schema.field("choice").type
    n = len(table)
    values = {"text": pa.array([text] * n, pa.string()), "which": pa.array([flag] * n, pa.bool_())}
    children = [which, *(values.get(f.name, pa.nulls(n, f.type)) for f in list(choice)[1:])]
    return table.set_column(table.schema.get_field_index("choice"), "choice",
                            pa.StructArray.from_arrays(children, fields=list(choice)))


@pytest.mark.parametrize("change, text", [
    (lambda t: t.set_column(5, "colour", pa.DictionaryArray.from_arrays(pa.array([0, 1, 0, 0], pa.int32()),
                                                                         pa.array(["RED", "PINK"]))),
     r"^Row: column 'colour' row 1: 'PINK' is not a member of Colour nor a number$"),
    (lambda t: t.set_column(5, "colour", pa.DictionaryArray.from_arrays(pa.array([0, 7, 0, 0], pa.int32()),
                                                                         pa.array(["RED", "GREEN"]), safe=False)),
     r"^Row: column 'colour' row 1: dictionary index 7 is outside its dictionary of 2$"),
    (lambda t: _with_choice(t, pa.array(["nope"] * 4).dictionary_encode(), "a", None),
     r"^Row: column 'choice._which' row 0: 'nope' is not a member of the oneof"),
    (lambda t: _with_choice(t, pa.array(["text"] * 4).dictionary_encode(), None, None),
     r"^Row: column 'choice._which' row 0: the member set is 'text', whose value is null$"),
    (lambda t: _with_choice(t, pa.array(["text"] * 4).dictionary_encode(), "a", True),
     r"^Row: column 'choice._which' row 0: the member set is 'text', but 'which' holds a value too$"),
    (lambda t: t.set_column(t.schema.get_field_index("leaf"), "leaf", pa.array(
        [None, {"label": "x", "weight": None}, None, None], t.schema.field("leaf").type)),
     r"^Row: column 'leaf.weight' row 1: null, but the field has no presence"),
])
def test_columns_of_the_plans_own_types_are_checked_on_both_engines(change, text):
    # a column of exactly the plan's type was taken unchecked by the pure-Python path: a oneof member
    # name or enum dictionary index that names nothing gave another member's value or an IndexError,
    # a member set to null a TypeError without the row, two members set lost one
    table = pbj.arrow.to_arrow(ROWS)
    bad = pa.concat_tables([table, change(table)], promote_options="permissive")
    shifted = re.sub(r"row (\d+)", lambda m: f"row {int(m.group(1)) + len(table)}", text)
    if NATIVE:  # the native writer checks these values itself, in its own words: the column and row agree
        column, row = re.match(r"\^Row: column '(\w+)[^']*' (row \d+):", shifted).groups()
        shifted = rf"^Row: column '{column}[^']*' {row}: "
    with pytest.raises(ValueError, match=shifted):
        encode_from_arrow(bad, Row)
    with pytest.raises(ValueError, match=shifted):
        pbj.arrow.from_arrow(bad, Row)


def test_a_closed_enums_non_member_is_refused_on_both_paths():
    table = pbj.arrow.to_arrow(KNOBS, enums="number")
    bad = table.set_column(1, "size", pa.array([None, 7, None], pa.int32()))
    with pytest.raises(ValueError, match="closed enum"):
        pbj.arrow.from_arrow(bad, Knob, enums="number")
    with pytest.raises(ValueError, match="closed enum"):
        encode_from_arrow(bad, Knob, enums="number")
    with pytest.raises(ValueError, match="closed enum"):
        python_messages(bad, Knob, enums="number")


@pytest.mark.skipif(not NATIVE, reason="the native writer")
def test_the_native_path_encodes_no_message(monkeypatch):
    import pbj.api

    def refuse(*args, **kwargs):
        raise AssertionError("pbj.encode ran")

    table = pbj.arrow.to_arrow(ROWS)
    monkeypatch.setattr(pbj.api, "encode", refuse)
    assert len(encode_from_arrow(table, Row)) == len(ROWS)


def run(suite: str, name: str, examples: int) -> None:
    cls = namespace(suite)[name]

    @settings(max_examples=examples, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                     HealthCheck.filter_too_much])
    @given(st.lists(values(cls, max_depth=2), min_size=1, max_size=3))
    def prop(messages):
        kept = [holdable(m) for m in messages]
        table = pbj.arrow.to_arrow(kept, cls)
        expected = [pbj.encode(m, allow_partial=True) for m in kept]
        if reaches_required(cls):  # pbj.encode's own required check decides: the Python path's messages
            assert explain(cls).startswith("python: ")
            return
        assert check(table, cls) == expected

    prop()


#: Half the classes of the property tests' CI selection (the two widest, and all the others, under -m slow).
ENCODE_CASES = [c for c in CI_CASES[::2] if c[1] not in ("proto.ContractGetInfoQuery", "proto.Response")]


@pytest.mark.parametrize("suite, name", ENCODE_CASES, ids=[f"{s}:{n}" for s, n in ENCODE_CASES])
def test_property_classes(suite, name):
    run(suite, name, 2)


@pytest.mark.slow
@pytest.mark.parametrize("suite, name", CI_CASES, ids=[f"{s}:{n}" for s, n in CI_CASES])
def test_property_classes_many(suite, name):
    run(suite, name, 30)


def test_the_block():
    """Every item of the shipped block: the table's encodings are pbj's, and Google's bytes where nothing is lost."""
    from pbj.arrow.blocks import ITEM_TYPE, block_items

    shipped = resources.files("pbj") / "data"
    ns = pbj.load_descriptor_set((shipped / "hapi-v0.55.0.binpb").read_bytes())
    payloads = [bytes(p) for p in block_items(gzip.decompress(
        (shipped / "000000000000000000000000000000497558.blk.gz").read_bytes()))]
    cls = ns[ITEM_TYPE]
    table = pbj.arrow.decode_to_arrow(cls, payloads if NATIVE else payloads[::24])
    encodings = encode_from_arrow(table, cls)
    differ = [i for i, (e, p) in enumerate(zip(encodings, payloads if NATIVE else payloads[::24], strict=True))
              if e != p]
    assert differ == ([2440] if NATIVE else [])  # the item whose 19 unknown fields the table has no column for
    for i in differ:
        assert len(payloads[i]) - len(encodings[i]) == 461
        assert equivalent(pbj.decode(cls, encodings[i]), pbj.decode(cls, payloads[i]), unknown_fields=False)
    # from_arrow: every row in one decode call of the engine (tests/test_arrow_objects.py), the messages
    # pbj.decode gives for each row's encoding, no untracked object referring to a tracked one
    from tests.test_arrow_objects import untracked_refers_to_tracked

    back = pbj.arrow.from_arrow(table, cls)
    assert len(back) == len(encodings)
    assert back[::8] == [pbj.decode(cls, e) for e in encodings[::8]]
    assert untracked_refers_to_tracked(back[::8]) == []


@pytest.mark.skipif(not NATIVE, reason="the native writer")
def test_the_writer_takes_the_engines_codes_and_refuses_another_layout():
    """The node kinds are pbj._native.ARROW_KINDS (engine.h's AK_*), checked with the whole layout when the
    writer's module is set up: a code that differs from its own build's is an ImportError."""
    from pbj import _native
    from pbj.arrow import encode, native

    assert encode.KINDS is _native.ARROW_KINDS is native.KINDS
    assert [encode._STRUCT, encode._ONEOF, encode._PRESENT] == [native._STRUCT, native._ONEOF, native._PRESENT]
    module = encode._module()
    good = _native.layout()
    module.setup(good)
    for bad in ({**good, "arrow.map": good["arrow.list"]}, {**good, "arrow.present": good["arrow.present"] + 1},
                {**good, "string": good["bytes"]}, {**good, "MEMBER": 9},
                {k: v for k, v in good.items() if k != "arrow.time"}):
        with pytest.raises(ImportError, match="built for another codec plan"):
            module.setup(bad)


@pytest.mark.skipif(not NATIVE, reason="the native writer")
def test_the_writer_reads_no_buffer_past_its_size():
    """The writer reads the arrays' buffers as records (pyarrow.Buffer objects, sizes known): a buffer shorter
    than its column's rows need, a child record before its parent or nulls with no bitmap are refused
    (ValueError), never read past; a struct's validity, found through its fields or, where the struct starts
    inside its buffers, by is_valid(), gives the Python path's bytes."""
    from pbj.arrow.conform import conform_batch
    from pbj.arrow.encode import _module, _Records, writer_plan

    table = pbj.arrow.to_arrow(ROWS, Row)
    arrays = conform_batch(table.to_batches()[0], plan_of(Row, Options()), "Row", 0)
    plan, module = writer_plan(Row, Options()), _module()

    def encode(change):
        records = _Records()
        columns = tuple(records.add(a) for a in arrays)
        rows = [list(r) for r in records.records]
        change(rows, columns)
        return module.encode(plan, tuple(map(tuple, rows)), columns, len(ROWS))

    assert encode(lambda rows, columns: None) == [pbj.encode(m) for m in ROWS]
    short = pa.py_buffer(b"\0" * 4)

    def shorten(rows, columns):
        rows[columns[1]][3] = (None, short)  # fixed64 column: 8 bytes a row
    with pytest.raises(ValueError, match="column 'u64' row 0: the array does not fit its column"):
        encode(shorten)

    def cut_strings(rows, columns):
        rows[columns[4]][3] = (*rows[columns[4]][3][:2], pa.py_buffer(b"\0"))  # row 0 holds 2 bytes
    with pytest.raises(ValueError, match="column 'raw' row 0: the array does not fit"):
        encode(cut_strings)

    def loop(rows, columns):
        rows[columns[7]][4] = (0,) * len(rows[columns[7]][4])
    with pytest.raises(ValueError, match="a child that is not a later record"):
        encode(loop)

    def no_bitmap(rows, columns):
        rows[columns[6]][2] = 1
        rows[columns[6]][3] = (None, rows[columns[6]][3][1])
    with pytest.raises(ValueError, match="nulls but no validity bitmap"):
        encode(no_bitmap)

    def short_column(rows, columns):  # checked once a call against the struct's rows, not row by row
        rows[columns[1]][0] = 1
    with pytest.raises(ValueError, match="column 'u64' row 0: the array does not fit its column"):
        encode(short_column)
    choice = table.schema.get_field_index("choice")

    def set_but_childless(rows, columns):  # a oneof all of whose rows are null has no children: a bitmap that
        record = rows[columns[choice]]       # says otherwise is refused, its children never read
        record[2], record[3], record[4] = record[0], (pa.py_buffer(b"\xff" * 8),), (-1,) * len(record[4])
    with pytest.raises(ValueError, match="column 'choice' row 0: the array does not fit its column"):
        encode(set_but_childless)
    # a struct's validity through its fields, and sliced (is_valid)
    leafy = [Row(leaf=Leaf(label="a")), Row(), Row(leaf=Leaf(weight=2.0)), Row(choice=pbj.OneOf("node", Leaf()))]
    assert check(pbj.arrow.to_arrow(leafy * 3, Row).slice(1, 7), Row) == [pbj.encode(m) for m in (leafy * 3)[1:8]]
    assert check(pbj.arrow.to_arrow(leafy, Row), Row) == [pbj.encode(m) for m in leafy]


@pytest.mark.skipif(not pbj._native.available(), reason="the native engine is not built")
def test_switching_to_the_python_engine_after_a_native_call(python_engine):
    # the writer plan kept while the native engine ran was used after use_engine("python"):
    # encode_from_arrow called None.encode (AttributeError); explain said "native"
    table = pbj.arrow.to_arrow(ROWS)
    pbj.use_engine("native")
    assert explain(Row) == "native" and pbj.arrow.native.explain(Row) == "native"
    expected = encode_from_arrow(table, Row)
    pbj.use_engine("python")
    assert explain(Row).startswith("python: ") and pbj.arrow.native.explain(Row).startswith("python: ")
    assert encode_from_arrow(table, Row) == expected == [pbj.encode(m) for m in ROWS]
    assert pbj.arrow.from_arrow(table, Row) == ROWS
    pbj.use_engine("native")
    assert explain(Row) == "native" and encode_from_arrow(table, Row) == expected
