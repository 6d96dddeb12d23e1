"""Past one machine: pbj classes and messages pickle into worker processes, and blocks decode on Dask.

* declared and loaded classes and their instances cross ``ProcessPoolExecutor``
  (spawned workers, so nothing is inherited by fork: a worker loads the schema itself);
* ``examples/parallel_blocks.py`` decodes a folder of blocks on a local Dask cluster and with a
  process pool, each worker loading the schema once, and its totals match a decode in this process.
"""

from __future__ import annotations

import gzip
import multiprocessing
import pickle
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor

import pytest

import pbj
from examples import parallel_blocks
from pbj.cli import walk_fields
from tests.conftest import REPO
from tests.everything_classes import Leaf

pytestmark = [pytest.mark.once, pytest.mark.long]

HAPI = str(REPO / "pbj" / "data" / "hapi-v0.55.0.binpb")
BLOCK_GZ = REPO / "pbj" / "data" / "000000000000000000000000000000497558.blk.gz"


def _load_hapi() -> None:
    """Worker initializer: load the schema, as a worker must before it unpickles loaded messages."""
    pbj.load_descriptor_set(HAPI)


def _decode_items(data: bytes) -> list:
    """In a worker: decode a block; return its items (pickled back) and their kinds."""
    ns = pbj.load_descriptor_set(HAPI)
    block = pbj.decode(ns[parallel_blocks.BLOCK_TYPE], data)
    return [block.items[0], block.items[-1]]


def _encode(obj) -> bytes:
    """In a worker: encode a message that arrived pickled."""
    return pbj.encode(obj)


@pytest.fixture(scope="module")
def raw_block() -> bytes:
    return gzip.decompress(BLOCK_GZ.read_bytes())


def test_process_pool_pickles_declared_and_loaded_messages(raw_block):
    ns = pbj.load_descriptor_set(HAPI)
    Block = ns[parallel_blocks.BLOCK_TYPE]
    block = pbj.decode(Block, raw_block)
    leaf = Leaf(n=7, s="x")
    spawn = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(2, mp_context=spawn, initializer=_load_hapi) as pool:
        # loaded messages and a declared one go to the workers, their bytes come back
        sent = [block.items[0], block.items[1], block.items[-1], leaf]
        assert list(pool.map(_encode, sent)) == [pbj.encode(x) for x in sent]
        # messages decoded in a worker come back as instances of this process's classes
        first, last = pool.submit(_decode_items, raw_block).result()
    assert type(first) is type(block.items[0])
    assert first == block.items[0] and last == block.items[-1]
    assert pickle.loads(pickle.dumps(block.items[5])) == block.items[5]


@pytest.fixture(scope="module")
def block_folder(tmp_path_factory, raw_block):
    """Four small block files (slices of the real block's items, two of them gzipped), and their items."""
    folder = tmp_path_factory.mktemp("blocks")
    fields = [raw_block[s:e] for number, _wt, s, e, _v in walk_fields(raw_block) if number == 1]
    pieces = [fields[0:40], fields[40:70], fields[70:130], fields[130:150]]
    for i, part in enumerate(pieces):
        data = b"".join(part)
        name = folder / f"{i:03d}.blk"
        if i % 2:
            name.with_suffix(".blk.gz").write_bytes(gzip.compress(data))
        else:
            name.write_bytes(data)
    return folder, pieces


def _expected(pieces) -> parallel_blocks.Totals:
    ns = pbj.load_descriptor_set(HAPI)
    Block = ns[parallel_blocks.BLOCK_TYPE]
    totals = parallel_blocks.Totals()
    for part in pieces:
        block = pbj.decode(Block, b"".join(part))
        totals.files += 1
        totals.bytes += sum(map(len, part))
        totals.items += len(block.items)
        for item in block.items:
            totals.kinds[item.item.which] += 1
            totals.kind_bytes[item.item.which] += pbj.encoded_size(item)
    return totals


def _check(got: parallel_blocks.Totals, pieces) -> None:
    want = _expected(pieces)
    assert (got.files, got.bytes, got.items) == (want.files, want.bytes, want.items) == (4, got.bytes, 150)
    assert got.kinds == want.kinds and got.kind_bytes == want.kind_bytes
    assert sum(got.workers.values()) == 4
    assert set(got.schema_loads.values()) == {1}, got.schema_loads  # each worker loaded the schema once


def test_dask_local_cluster(block_folder):
    pytest.importorskip("dask.distributed", reason="needs the dask extra: pip install -e '.[dask]'")
    from dask.distributed import Client, LocalCluster

    folder, pieces = block_folder
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        totals = parallel_blocks.decode_folder_dask(folder, client, schema=HAPI, progress=False)
    _check(totals, pieces)
    assert len(totals.workers) <= 2


def test_process_pool_example(block_folder):
    folder, pieces = block_folder
    totals = parallel_blocks.decode_folder_processes(folder, processes=2, schema=HAPI, progress=False)
    _check(totals, pieces)


def test_example_script_with_progress_bar(block_folder):
    """The documented command: a local cluster, a progress bar on stderr, the table on stdout."""
    pytest.importorskip("dask.distributed", reason="needs the dask extra: pip install -e '.[dask]'")
    pytest.importorskip("tqdm", reason="needs the dask extra: pip install -e '.[dask]'")
    folder, pieces = block_folder
    out = subprocess.run([sys.executable, str(REPO / "examples" / "parallel_blocks.py"), str(folder),
                          "--workers", "2"], capture_output=True, text=True, timeout=600, cwd=REPO)
    assert out.returncode == 0, out.stderr[-3000:]
    want = _expected(pieces)
    lines = out.stdout.splitlines()
    assert lines[0] == f"4 blocks, 150 items, {want.bytes:,} bytes, " + lines[0].rsplit(", ", 1)[1]
    for kind, n in want.kinds.items():
        assert any(line.split()[:2] == [kind, f"{n:,}"] for line in lines[1:]), (kind, lines)
    assert "4/4" in out.stderr  # tqdm's progress bar


def test_truncated_block_is_one_line_naming_the_file(tmp_path, raw_block, capsys):
    (tmp_path / "good.blk").write_bytes(b"")
    (tmp_path / "cut.blk.gz").write_bytes(gzip.compress(raw_block[:5000]))
    status = parallel_blocks.main([str(tmp_path), "--processes", "1", "--no-progress", "--schema", HAPI])
    err = capsys.readouterr().err
    assert status == 1
    assert err.startswith(f"parallel_blocks.py: error: {tmp_path / 'cut.blk.gz'}: not a valid "
                          "com.hedera.hapi.block.stream.Block: truncated input"), err
    assert err.count("\n") == 1 and "Traceback" not in err
    (tmp_path / "cut.blk.gz").write_bytes(gzip.compress(raw_block)[:3000])  # the gzip itself cut short
    with pytest.raises(parallel_blocks.BlockError, match=r"cut\.blk\.gz: the gzip data is broken"):
        parallel_blocks.summarize_block(str(tmp_path / "cut.blk.gz"), HAPI)


def test_missing_folder_is_one_line(tmp_path, capsys):
    status = parallel_blocks.main([str(tmp_path / "nope"), "--processes", "1", "--no-progress"])
    assert status == 1
    assert capsys.readouterr().err == f"parallel_blocks.py: error: {tmp_path / 'nope'}: no such folder\n"


def test_missing_tqdm_stops_before_any_work(tmp_path):
    """Without tqdm the script says so at once (and --no-progress runs without it)."""
    hide = ("import importlib.util, runpy, sys\n"
            "real = importlib.util.find_spec\n"
            "importlib.util.find_spec = lambda name, *a: None if name == 'tqdm' else real(name, *a)\n"
            "sys.argv = ['parallel_blocks.py', *sys.argv[1:]]\n"
            f"runpy.run_path({str(REPO / 'examples' / 'parallel_blocks.py')!r}, run_name='__main__')\n")
    out = subprocess.run([sys.executable, "-c", hide, str(tmp_path), "--processes", "1"], capture_output=True,
                         text=True, timeout=300, cwd=REPO)
    assert out.returncode == 2
    assert out.stderr == ("parallel_blocks.py: error: tqdm not installed: pip install 'pbj-protobuf[dask]' "
                          "(or pip install tqdm); --no-progress runs without tqdm\n")
    out = subprocess.run([sys.executable, "-c", hide, str(tmp_path), "--processes", "1", "--no-progress"],
                         capture_output=True, text=True, timeout=300, cwd=REPO)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("0 blocks, 0 items")
