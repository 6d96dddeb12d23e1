"""Narrow tables per kind (pbj/arrow/split.py): split= on to_arrow and decode_to_arrow.

Both ways (message objects, and payloads cut at the wire level and decoded per
kind) must give the same tables, on hand-declared classes, on classes of the
shared schemas and on the shipped block; the tables hold the keys, the
holder's kept fields and the member's own columns, and each value is in one
table when paths go deeper.
"""

from __future__ import annotations

import gzip
from importlib import resources

import pyarrow as pa
import pytest

import pbj
import pbj.arrow
from pbj import wellknown as wk
from pbj.arrow.blocks import ITEM_TYPE, SPLIT_PATHS, block_items


@pbj.message
class Transfer:
    payer: str = pbj.field(1, "string")
    amount: int = pbj.field(2, "sint64")


@pbj.message
class Note:
    text: str = pbj.field(1, "string")


@pbj.message
class Change:
    state_id: int = pbj.field(1, "uint32")
    op: pbj.OneOf | None = pbj.oneof(add=(2, Transfer), drop=(3, "string"))


@pbj.message
class Batch:
    at: wk.Timestamp | None = pbj.field(1, wk.Timestamp)
    changes: tuple[Change, ...] = pbj.field(2, Change, repeated=True)


@pbj.message
class Record:
    seq: int = pbj.field(1, "uint64")
    kind: pbj.OneOf | None = pbj.oneof(transfer=(2, Transfer), note=(3, Note), batch=(4, Batch), label=(5, "string"),
                                       stamp=(6, wk.Timestamp))


@pbj.message
class Stream:
    records: tuple[Record, ...] = pbj.field(1, Record, repeated=True)


RECORDS = [
    Record(seq=1, kind=pbj.OneOf("transfer", Transfer(payer="a", amount=-5))),
    Record(seq=2, kind=pbj.OneOf("note", Note(text="hi"))),
    Record(seq=3),
    Record(seq=4, kind=pbj.OneOf("batch", Batch(at=wk.Timestamp(seconds=9), changes=(
        Change(state_id=7, op=pbj.OneOf("add", Transfer(payer="b"))), Change(state_id=8),
        Change(state_id=9, op=pbj.OneOf("drop", "x")))))),
    Record(seq=5, kind=pbj.OneOf("label", "")),
    Record(seq=6, kind=pbj.OneOf("transfer", Transfer(payer="c", amount=7))),
    Record(seq=7, kind=pbj.OneOf("stamp", wk.Timestamp(seconds=1, nanos=2))),
]


def both(cls, messages, split, **options):
    """The split tables from the objects and from the payloads, checked equal (schema and metadata too)."""
    from_objects = pbj.arrow.to_arrow(messages, cls, split=split, **options)
    from_payloads = pbj.arrow.decode_to_arrow(cls, [pbj.encode(m) for m in messages], split=split, **options)
    assert list(from_objects) == list(from_payloads)
    for kind, table in from_objects.items():
        table.validate(full=True)
        assert table.schema.equals(from_payloads[kind].schema, check_metadata=True), kind
        assert table.equals(from_payloads[kind]), kind
    return from_objects


def test_one_table_per_member_with_the_row_and_the_holders_fields():
    tables = both(Record, RECORDS, "kind")
    assert list(tables) == ["transfer", "note", "batch", "label", "stamp"]
    transfer = tables["transfer"]
    assert transfer.schema.names == ["row", "seq", "payer", "amount"]
    assert transfer.schema.metadata == {b"pbj.message": b"tests.test_arrow_split.Transfer", b"pbj.kind": b"transfer"}
    assert transfer.to_pylist() == [{"row": 0, "seq": 1, "payer": "a", "amount": -5},
                                    {"row": 5, "seq": 6, "payer": "c", "amount": 7}]
    assert tables["label"].to_pylist() == [{"row": 4, "seq": 5, "label": ""}]  # a scalar member: one column
    assert tables["stamp"].schema.field("stamp").type == pa.timestamp("ns", tz="UTC")
    assert tables["batch"].column("changes").to_pylist()[0][2] == {"state_id": 9, "op": {
        "which": "drop", "add": None, "drop": "x"}}
    assert pbj.arrow.from_arrow(transfer, Transfer) == [RECORDS[0].kind.value, RECORDS[5].kind.value]
    assert sum(t.num_rows for t in tables.values()) == 6  # the record without a kind is in no table


def test_keep_names_the_holders_fields():
    tables = both(Record, RECORDS, "kind", keep=())
    assert tables["note"].schema.names == ["row", "text"]
    with pytest.raises(ValueError, match="keep: 'nowhere' is no field"):
        pbj.arrow.to_arrow(RECORDS, split="kind", keep=["nowhere"])


def test_a_repeated_fields_element_oneof_and_deeper_paths():
    streams = [Stream(records=tuple(RECORDS[:4])), Stream(), Stream(records=tuple(RECORDS[3:]))]
    tables = both(Stream, streams, ["records.kind", "records.kind.batch.changes.op"])
    assert list(tables) == ["transfer", "note", "batch", "label", "stamp", "batch.add", "batch.drop"]
    assert tables["transfer"].select(["row", "records_index", "seq"]).to_pylist() == [
        {"row": 0, "records_index": 0, "seq": 1}, {"row": 2, "records_index": 2, "seq": 6}]
    # the batch table leaves out the changes a deeper path takes; the changes' tables hold them, keyed alike
    assert tables["batch"].schema.names == ["row", "records_index", "seq", "at"]
    assert tables["batch.add"].schema.names == ["row", "records_index", "changes_index", "state_id", "payer", "amount"]
    assert tables["batch.add"].to_pylist() == [
        {"row": 0, "records_index": 3, "changes_index": 0, "state_id": 7, "payer": "b", "amount": 0},
        {"row": 2, "records_index": 0, "changes_index": 0, "state_id": 7, "payer": "b", "amount": 0}]
    assert tables["batch.drop"].column("drop").to_pylist() == ["x", "x"]


def test_unknown_fields_are_counted_on_both_ways():
    payloads = [pbj.encode(r) + b"\x98\x06\x01" for r in RECORDS[:2]]
    with pytest.warns(pbj.arrow.UnknownFieldsWarning, match=r"^2 unknown fields \(6 bytes\) in "
                                                             r"tests\.test_arrow_split\.Record"):
        pbj.arrow.decode_to_arrow(Record, payloads, split="kind")
    with pytest.warns(pbj.arrow.UnknownFieldsWarning, match=r"^2 unknown fields \(6 bytes\)"):
        pbj.arrow.to_arrow([pbj.decode(Record, p) for p in payloads], split="kind")


def test_input_the_cut_does_not_take_is_decoded_whole():
    payloads = [pbj.encode(r) for r in RECORDS]
    merged = pbj.encode(RECORDS[0]) + pbj.encode(Record(kind=pbj.OneOf("transfer", Transfer(amount=3))))
    replaced = pbj.encode(RECORDS[0]) + pbj.encode(RECORDS[1])
    tables = pbj.arrow.decode_to_arrow(Record, [*payloads, merged, replaced], split="kind")
    assert tables["transfer"].to_pylist()[-1] == {"row": 7, "seq": 1, "payer": "a", "amount": 3}  # merged
    assert tables["note"].column("row").to_pylist() == [1, 8]  # the note replaced the transfer
    with pytest.raises(pbj.DecodeError) as err:
        pbj.arrow.decode_to_arrow(Record, [*payloads, b"\x12\x05ab"], split="kind")
    assert err.value.path[0] == 7


@pytest.mark.parametrize("split, text", [
    ("", "an empty name"),
    ("nowhere", "tests.test_arrow_split.Record has no field or oneof 'nowhere'"),
    ("seq", "'seq' is no oneof"),
    ("kind.label.x", "the member 'label' is no message of columns"),
    ("kind.nowhere.x", "the oneof 'kind' has no member 'nowhere'"),
])
def test_paths_that_do_not_resolve(split, text):
    with pytest.raises(ValueError, match=text):
        pbj.arrow.to_arrow(RECORDS, split=split)


def test_a_name_used_twice_is_refused():
    @pbj.message
    class Clash:
        payer: str = pbj.field(1, "string")
        kind: pbj.OneOf | None = pbj.oneof(transfer=(2, Transfer))

    with pytest.raises(ValueError, match="two columns named 'payer'"):
        pbj.arrow.to_arrow([Clash()], split="kind")
    assert pbj.arrow.to_arrow([Clash()], split="kind", keep=())["transfer"].num_rows == 0


def test_large_types():
    tables = pbj.arrow.decode_to_arrow(Record, [pbj.encode(r) for r in RECORDS], split="kind", large_types=True)
    assert tables["transfer"].schema.field("payer").type == pa.large_string()
    table = pbj.arrow.to_arrow(RECORDS, large_types=True)
    assert table.schema.field("kind").type.field("label").type == pa.large_string()
    assert pbj.arrow.from_arrow(table, Record) == RECORDS


@pytest.mark.filterwarnings("ignore::pbj.arrow.lost.UnknownFieldsWarning")
def test_the_block_split_by_kind():
    """The shipped block's items (every 24th), split by kind and deeper, the same both ways."""
    shipped = resources.files("pbj") / "data"
    ns = pbj.load_descriptor_set((shipped / "hapi-v0.55.0.binpb").read_bytes())
    payloads = [bytes(p) for p in block_items(gzip.decompress(
        (shipped / "000000000000000000000000000000497558.blk.gz").read_bytes()))][::24]
    cls = ns[ITEM_TYPE]
    items = [pbj.decode(cls, p) for p in payloads]
    tables = both(cls, items, SPLIT_PATHS)
    assert tables["transaction_result"].num_rows == sum(i.item.which == "transaction_result" for i in items)
    changes = sum(len(i.item.value.state_changes) for i in items if i.item.which == "state_changes")
    ops = [k for k in tables if k.startswith("state_changes.") and k.count(".") == 1]
    assert sum(tables[k].num_rows for k in ops) == changes
