"""pbj.arrow on the real Hedera block: decode_to_arrow == to_arrow of the decoded items; DuckDB and Polars count."""

from __future__ import annotations

import collections
import gzip
from importlib import resources

import pytest

import pbj
import pbj.arrow

BLOCK = "com.hedera.hapi.block.stream.Block"


@pytest.fixture(scope="module")
def block():
    shipped = resources.files("pbj") / "data"
    ns = pbj.load_descriptor_set((shipped / "hapi-v0.55.0.binpb").read_bytes())
    raw = gzip.decompress((shipped / "000000000000000000000000000000497558.blk.gz").read_bytes())
    decoded = pbj.decode(ns[BLOCK], raw)
    item_cls = ns["com.hedera.hapi.block.stream.BlockItem"]
    payloads = [pbj.encode(item) for item in decoded.items]
    return item_cls, list(decoded.items), payloads


@pytest.fixture(scope="module")
def table(block):
    """The block's table; decode_to_arrow says (on both engines) what it leaves out, as pbj decode does."""
    item_cls, _, payloads = block
    with pytest.warns(pbj.arrow.UnknownFieldsWarning, match=r"^19 unknown fields \(461 bytes\) in "
                      r"com\.hedera\.hapi\.node\.state\.blockstream\.BlockStreamInfo are no columns"):
        return pbj.arrow.decode_to_arrow(item_cls, payloads)


def test_decode_to_arrow_is_to_arrow_of_the_decoded_items(block, table):
    item_cls, items, _ = block
    assert table.num_rows == len(items) == 2442
    with pytest.warns(pbj.arrow.UnknownFieldsWarning, match=r"^19 unknown fields \(461 bytes\) in "
                      r"com\.hedera\.hapi\.node\.state\.blockstream\.BlockStreamInfo are no columns"):
        expected = pbj.arrow.to_arrow(items)
    assert table.schema.equals(expected.schema, check_metadata=True)
    assert table.equals(expected)
    assert pbj.arrow.from_arrow(table, item_cls) == items


def test_duckdb_counts_items_by_kind(block, table):
    import duckdb

    _, items, _ = block
    con = duckdb.connect()
    con.register("items", table)
    rows = con.sql("SELECT item.which AS kind, count(*) AS n FROM items GROUP BY kind").fetchall()
    assert dict(rows) == dict(collections.Counter(i.item.which for i in items))
    assert dict(rows)["state_changes"] == 814 and dict(rows)["event_transaction"] == 812


def test_polars_counts_items_by_kind(block, table):
    import polars as pl

    _, items, _ = block
    frame = pl.from_arrow(table.select(["item"]))
    counts = frame.select(pl.col("item").struct.field("which").value_counts()).unnest("which")
    assert {str(k): v for k, v in counts.iter_rows()} == dict(collections.Counter(i.item.which for i in items))
