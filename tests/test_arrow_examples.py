"""The Arrow examples (DuckDB, Polars, Dask) and ``pbj parquet``, run on three small block files.

The files are cut from the shipped block (its first 30 items, the next 30, and
the last 30, so every item kind occurs), written as ``.blk`` and ``.blk.gz``;
each example's answer must equal a count over the decoded items in Python.
"""

from __future__ import annotations

import collections
import gzip
import importlib.util
import itertools
from importlib import resources

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

import pbj
import pbj.arrow
from pbj.arrow.blocks import BLOCK_TYPE, ITEM_TYPE, SPLIT_PATHS, block_items, transaction_type
from pbj.cli import main
from tests.conftest import REPO

pytestmark = [pytest.mark.once, pytest.mark.long]


def _example(name: str):
    spec = importlib.util.spec_from_file_location(f"example_{name}", REPO / "examples" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def blocks(tmp_path_factory):
    shipped = resources.files("pbj") / "data"
    ns = pbj.load_descriptor_set((shipped / "hapi-v0.55.0.binpb").read_bytes())
    block_cls = ns[BLOCK_TYPE]
    items = pbj.decode(block_cls, gzip.decompress((shipped / "000000000000000000000000000000497558.blk.gz")
                                                  .read_bytes())).items
    folder = tmp_path_factory.mktemp("blocks")
    parts = [items[:30], items[-30:]]
    for i, part in enumerate(parts):
        data = pbj.encode(block_cls(items=part))
        if i == 1:
            (folder / f"{i:036d}.blk").write_bytes(data)
        else:
            (folder / f"{i:036d}.blk.gz").write_bytes(gzip.compress(data))
    (folder / "notes.txt").write_text("not a block")
    expected = collections.Counter(item.item.which for part in parts for item in part)
    return folder, ns, parts, dict(expected)


@pytest.fixture(scope="module")
def kinds(blocks, tmp_path_factory):
    folder, _, _, _ = blocks
    out = tmp_path_factory.mktemp("kinds")
    assert main(["parquet", str(folder), str(out), "--no-progress", "--split", "--partition", "block"]) == 0
    return out


@pytest.fixture(scope="module")
def parquet(blocks, tmp_path_factory):
    folder, _, _, _ = blocks
    out = tmp_path_factory.mktemp("parquet")
    assert main(["parquet", str(folder), str(out), "--no-progress"]) == 0
    return out


def test_block_items_are_the_items_bytes(blocks):
    folder, _ns, parts, _ = blocks
    data = (folder / f"{1:036d}.blk").read_bytes()
    assert [bytes(p) for p in block_items(data)] == [pbj.encode(item) for item in parts[1]]
    with pytest.raises(pbj.DecodeError):
        list(block_items(data[:-1]))


def test_pbj_parquet_writes_a_dataset_of_one_file_per_block(blocks, parquet):
    _folder, ns, parts, _ = blocks
    files = sorted(parquet.glob("**/*.parquet"))
    assert [f.relative_to(parquet).as_posix() for f in files] == [f"{i:036d}-0.parquet" for i in range(len(parts))]
    item_cls = ns[ITEM_TYPE]
    for f, part, number in zip(files, parts, (497558, 1), strict=True):  # the header's number, else the name's
        table = pq.read_table(f)
        assert pbj.arrow.from_arrow(table, item_cls) == list(part)
        assert table.schema.field(0) == pa.field("block_number", pa.int64(), nullable=False)
        assert pa.schema(list(table.schema)[1:]).equals(pbj.arrow.arrow_schema(item_cls))
        assert set(table.column("block_number").to_pylist()) == {number}


def test_pbj_parquet_split_writes_a_dataset_per_kind(blocks, kinds):
    """--split --partition block: a folder per kind, Hive folders per block, tables as decode_to_arrow splits them."""
    _folder, ns, parts, _ = blocks
    item_cls = ns[ITEM_TYPE]
    expected = [pbj.arrow.decode_to_arrow(item_cls, [pbj.encode(i) for i in part], split=list(SPLIT_PATHS))
                for part in parts]
    present = sorted({k for tables in expected for k, t in tables.items() if t.num_rows})
    assert sorted(p.name for p in kinds.iterdir()) == present
    for kind in present:
        dataset = ds.dataset(kinds / kind, format="parquet", partitioning="hive")
        got = dataset.to_table().sort_by([("block_number", "descending"), ("row", "ascending")])
        want = pa.concat_tables([t[kind].append_column("block_number", pa.array([n] * t[kind].num_rows, pa.int32()))
                                 for t, n in zip(expected, (497558, 1), strict=True) if t[kind].num_rows])
        assert got.select(want.column_names).to_pylist() == want.to_pylist(), kind
    assert {p.name for p in (kinds / "transaction_result").iterdir()} == {"block_number=497558", "block_number=1"}
    results = ds.dataset(kinds / "transaction_result", format="parquet", partitioning="hive").to_table()
    member = ns["com.hedera.hapi.block.stream.output.TransactionResult"]
    want_results = [i.item.value for part in parts for i in part if i.item.which == "transaction_result"]
    assert sorted(map(pbj.encode, pbj.arrow.from_arrow(results, member))) == sorted(map(pbj.encode, want_results))


def test_pbj_parquet_errors(tmp_path, capsys):
    assert main(["parquet", str(tmp_path / "nowhere"), str(tmp_path / "o")]) == 1
    assert "is not a folder" in capsys.readouterr().err
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "1.blk").write_bytes(b"\x0a\x05ab")
    assert main(["parquet", str(bad), str(tmp_path / "o2"), "--no-progress"]) == 1
    assert "1.blk" in capsys.readouterr().err
    assert main(["parquet", str(bad), str(tmp_path / "o3"), "--split", "--partition", "kind"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == "pbj: error: partition by 'kind': the keys are block, date"


def test_pbj_parquet_refuses_a_schema_without_block_items_and_an_empty_folder(blocks, tmp_path, capsys):
    """One ``pbj: error:`` line and exit status 1 (no traceback, no "wrote 0 rows"): a --schema
    without BlockItem, a folder holding no block files; a 0-byte block file is skipped, not a block."""
    file = b"\x0a\x07a.proto" + b"\x22\x03\x0a\x01M"  # a FileDescriptorSet of one file with message M
    schema = tmp_path / "m.binpb"
    schema.write_bytes(b"\x0a" + bytes([len(file)]) + file)
    assert main(["parquet", str(blocks[0]), str(tmp_path / "o1"), "--no-progress", "--schema", str(schema)]) == 1
    assert capsys.readouterr().err.splitlines() == [f"pbj: error: {schema} holds no {ITEM_TYPE}: give a "
                                                    "FileDescriptorSet of Hedera's block stream (or the default, "
                                                    "the HAPI set shipped with pbj)"]
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "notes.txt").write_text("not a block")
    assert main(["parquet", str(empty), str(tmp_path / "o2"), "--no-progress"]) == 1
    out, err = capsys.readouterr()
    assert (out, err) == ("", f"pbj: error: {empty} holds no block files (*.blk, *.blk.gz)\n")
    (empty / "4.blk").write_bytes(b"")
    good = blocks[0] / f"{1:036d}.blk"
    (empty / good.name).write_bytes(good.read_bytes())
    assert main(["parquet", str(empty), str(tmp_path / "o3"), "--no-progress"]) == 1
    out, err = capsys.readouterr()
    assert err.splitlines()[0] == "pbj: skipped 4.blk: empty file (0 bytes; a block has at least its header)"
    assert out.startswith("wrote 30 rows of 1 blocks") and "skipped 1 files" in out


def test_a_truncated_file_is_one_line_and_skipped(blocks, tmp_path, capsys):
    """A .blk.gz cut short: one line on stderr (no traceback), the other blocks written, exit status 1."""
    folder = blocks[0]
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    good = folder / f"{1:036d}.blk"
    (mixed / good.name).write_bytes(good.read_bytes())
    whole = (folder / f"{0:036d}.blk.gz").read_bytes()
    (mixed / "000000000000000000000000000000000002.blk.gz").write_bytes(whole[:len(whole) // 2])
    assert main(["parquet", str(mixed), str(tmp_path / "out"), "--no-progress", "--split"]) == 1
    out, err = capsys.readouterr()
    assert err.splitlines()[0] == ("pbj: skipped 000000000000000000000000000000000002.blk.gz: truncated gzip data "
                                   "(the file ends before the end of its stream)")
    assert all(line.startswith("pbj: warning: ") for line in err.splitlines()[1:])  # the good block's unknown fields
    assert "skipped 1 files" in out and (tmp_path / "out" / "transaction_result").is_dir()


def test_pbj_parquet_says_unknown_fields_as_one_warning_line(blocks, tmp_path, capsys):
    """The UnknownFieldsWarning of the shipped block's BlockStreamInfo: one ``pbj: warning:`` line, no source line."""
    assert main(["parquet", str(blocks[0]), str(tmp_path / "o"), "--no-progress"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err == ["pbj: warning: 19 unknown fields (461 bytes) in com.hedera.hapi.node.state.blockstream."
                   "BlockStreamInfo are no columns of the table and are left out (pbj.encode of the messages "
                   "keeps them)"]


def test_fees_by_transaction_type(blocks, kinds):
    """The worked analysis of docs/arrow.md, in DuckDB and in Polars, against a count over the decoded items."""
    _folder, ns, parts, _ = blocks
    expected: dict = {}
    for part in parts:
        for before, item in itertools.pairwise(part):
            if item.item.which == "transaction_result" and before.item.which == "event_transaction":
                kind = transaction_type(ns, before.item.value.transaction.value)
                n, fees = expected.get(kind, (0, 0))
                expected[kind] = (n + 1, fees + item.item.value.transaction_fee_charged)
    assert expected and sum(n for n, _ in expected.values()) > 10
    assert _example("arrow_duckdb").fees_by_type(kinds) == expected
    assert _example("arrow_polars").fees_by_type(kinds) == expected


def test_plain_progress_bar(capsys):
    from pbj.arrow.blocks import _Bar

    bar = _Bar(2, "blocks")
    bar.update()
    bar.update()
    err = capsys.readouterr().err
    assert err.endswith("\rblocks [" + "#" * 30 + "] 2/2\n") and "1/2" in err


def test_duckdb_example(blocks, parquet):
    assert _example("arrow_duckdb").items_by_kind(parquet) == blocks[3]


def test_polars_example(blocks, parquet):
    assert _example("arrow_polars").items_by_kind(parquet) == blocks[3]


def test_dask_example(blocks, tmp_path):
    """The count on a dask.bag (sync scheduler); its --parquet files are pbj parquet's (one block, to keep it short)."""
    folder, ns, parts, expected = blocks
    example = _example("arrow_dask")
    assert example.items_by_kind(folder, scheduler="sync") == expected
    one = tmp_path / "one"
    one.mkdir()
    (one / "b.blk").write_bytes((folder / f"{1:036d}.blk").read_bytes())
    assert example.items_by_kind(one, scheduler="sync", parquet=str(tmp_path / "out")) == dict(
        collections.Counter(item.item.which for item in parts[1]))
    assert pbj.arrow.read_parquet(tmp_path / "out" / "b.parquet", ns[ITEM_TYPE]) == list(parts[1])


def test_dask_reports_a_bad_file_in_one_line(blocks, tmp_path, capfd):
    """On a Dask cluster a truncated file is one line from the example, no worker log (its task does not fail)."""
    distributed = pytest.importorskip("distributed")
    folder, _ns, parts, _ = blocks
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    good = folder / f"{1:036d}.blk"
    (mixed / good.name).write_bytes(good.read_bytes())
    whole = (folder / f"{0:036d}.blk.gz").read_bytes()
    (mixed / "2.blk.gz").write_bytes(whole[:len(whole) // 2])
    capfd.readouterr()
    with distributed.LocalCluster(processes=False, n_workers=1, threads_per_worker=1,
                                  dashboard_address=None) as cluster:
        counts = _example("arrow_dask").items_by_kind(mixed, scheduler=cluster.scheduler_address)
    assert counts == dict(collections.Counter(item.item.which for item in parts[1]))
    err = capfd.readouterr().err
    assert err.splitlines() == ["skipped 2.blk.gz: truncated gzip data (the file ends before the end of its stream)"]
