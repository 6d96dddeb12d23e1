"""The Arrow examples (DuckDB, Polars, Dask) and ``pbj parquet``, run on three small block files.

The files are cut from the shipped block (its first 30 items, the next 30, and
the last 30, so every item kind occurs), written as ``.blk`` and ``.blk.gz``;
each example's answer must equal a count over the decoded items in Python.
"""

from __future__ import annotations

import collections
import gzip
import importlib.util
from importlib import resources

import pyarrow.parquet as pq
import pytest

import pbj
import pbj.arrow
from pbj.arrow.blocks import BLOCK_TYPE, ITEM_TYPE, block_items
from pbj.cli import main
from tests.conftest import REPO


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


def test_pbj_parquet_writes_a_file_per_block(blocks, parquet, capsys):
    _folder, ns, parts, _ = blocks
    files = sorted(parquet.glob("*.parquet"))
    assert [f.name for f in files] == [f"{i:036d}.parquet" for i in range(len(parts))]
    item_cls = ns[ITEM_TYPE]
    for f, part in zip(files, parts, strict=True):
        assert pbj.arrow.read_parquet(f, item_cls) == list(part)
    assert pq.read_table(files[0]).schema.equals(pbj.arrow.arrow_schema(item_cls))


def test_pbj_parquet_errors(tmp_path, capsys):
    assert main(["parquet", str(tmp_path / "nowhere"), str(tmp_path / "o")]) == 1
    assert "is not a folder" in capsys.readouterr().err
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "1.blk").write_bytes(b"\x0a\x05ab")
    assert main(["parquet", str(bad), str(tmp_path / "o2"), "--no-progress"]) == 1
    assert "1.blk" in capsys.readouterr().err


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
