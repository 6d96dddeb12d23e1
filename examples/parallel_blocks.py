"""Decode a folder of Hedera block files in parallel: with a process pool, or with Dask.

A day of Hedera blocks is thousands of files. Each is decoded on its own, so
the work spreads over processes on one machine (``concurrent.futures``) or over
a Dask cluster; each worker process loads the schema once (the first block it
is given loads it, later blocks reuse it) and returns small per-file totals:
items and bytes per item kind. The caller sums them, with a progress bar.

Run it::

    pip install 'pbj-protobuf[dask]'
    python examples/parallel_blocks.py FOLDER                 # a local Dask cluster
    python examples/parallel_blocks.py FOLDER --processes 4   # a process pool instead
    python examples/parallel_blocks.py FOLDER --scheduler tcp://host:8786

The progress bar needs ``tqdm`` (in the ``dask`` extra, or ``pip install tqdm``); without
it the script stops at once with one line saying so (``--no-progress`` runs without a bar).
A block that does not decode (truncated, not a Block) stops the run with one line naming the
file; so does a folder that does not exist.

Blocks are ``*.blk`` or ``*.blk.gz`` files of ``com.hedera.hapi.block.stream.Block``;
the schema is the HAPI descriptor set that ships with pbj unless ``--schema``
names another ``FileDescriptorSet``.
"""

from __future__ import annotations

import argparse
import collections
import gzip
import importlib.util
import os
import sys
import types
import zlib
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import pbj

BLOCK_TYPE = "com.hedera.hapi.block.stream.Block"

# One schema per worker process, loaded by the first block it decodes. The cache is a module in
# sys.modules, so it outlives each task even where Dask ships this file's functions by value
# (when it runs as a script).
_CACHE = "pbj_example_schema_cache"


def default_schema() -> str:
    """The path of the HAPI descriptor set that ships with pbj."""
    return str(resources.files("pbj") / "data" / "hapi-v0.55.0.binpb")


def _schema_cache() -> types.ModuleType:
    cache = sys.modules.get(_CACHE)
    if cache is None:
        cache = types.ModuleType(_CACHE, "the schemas this worker process loaded")
        cache.schemas, cache.loads = {}, 0
        sys.modules[_CACHE] = cache
    return cache


def _block_class(schema: str) -> type:
    cache = _schema_cache()
    ns = cache.schemas.get(schema)
    if ns is None:
        ns = cache.schemas[schema] = pbj.load_descriptor_set(schema)
        cache.loads += 1
    return ns[BLOCK_TYPE]


class BlockError(Exception):
    """A block file that cannot be read or decoded; the text names the file (and pickles to the caller)."""


def summarize_block(path: str, schema: str) -> dict[str, Any]:
    """Decode one block file (gzip or not) and count its items (runs in a worker).

    Args:
        path: a ``.blk`` or ``.blk.gz`` file.
        schema: the path of the descriptor set holding ``Block``.

    Returns:
        ``{"file", "bytes", "items", "kinds": {kind: [items, bytes]}, "pid", "schema_loads"}``:
        the file's decoded size in bytes, its item count, items and encoded bytes per
        item kind (the set member of ``BlockItem.item``), and the worker's process id
        and how many times that process has loaded a schema (1 for every block it decodes).

    Raises:
        BlockError: the file cannot be read, its gzip is broken, or it is not a valid Block
            encoding (truncated …): ``"FILE: what is wrong"``.
    """
    Block = _block_class(schema)
    try:
        raw = Path(path).read_bytes()
        if raw[:2] == b"\x1f\x8b":
            raw = gzip.decompress(raw)
        block = pbj.decode(Block, raw)
    except OSError as exc:
        raise BlockError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    except (EOFError, zlib.error) as exc:
        raise BlockError(f"{path}: the gzip data is broken (truncated?): {exc}") from None
    except pbj.DecodeError as exc:
        raise BlockError(f"{path}: not a valid {BLOCK_TYPE}: {exc}") from None
    kinds: dict[str, list[int]] = {}
    for item in block.items:
        kind = item.item.which if item.item is not None else "(none)"
        k = kinds.setdefault(kind, [0, 0])
        k[0] += 1
        k[1] += pbj.encoded_size(item)
    return {"file": path, "bytes": len(raw), "items": len(block.items), "kinds": kinds,
            "pid": os.getpid(), "schema_loads": _schema_cache().loads}


@dataclass
class Totals:
    """Sums over many blocks.

    Attributes:
        files: blocks decoded.
        bytes: their decoded size in bytes.
        items: their items.
        kinds: item kind -> items of that kind.
        kind_bytes: item kind -> encoded bytes of those items.
        workers: process id -> blocks that process decoded.
        schema_loads: process id -> how many times it loaded the schema.
    """

    files: int = 0
    bytes: int = 0
    items: int = 0
    kinds: collections.Counter = field(default_factory=collections.Counter)
    kind_bytes: collections.Counter = field(default_factory=collections.Counter)
    workers: collections.Counter = field(default_factory=collections.Counter)
    schema_loads: dict[int, int] = field(default_factory=dict)

    def add(self, r: dict[str, Any]) -> None:
        """Add one block's summary (what :func:`summarize_block` returns)."""
        self.files += 1
        self.bytes += r["bytes"]
        self.items += r["items"]
        for kind, (n, size) in r["kinds"].items():
            self.kinds[kind] += n
            self.kind_bytes[kind] += size
        self.workers[r["pid"]] += 1
        self.schema_loads[r["pid"]] = r["schema_loads"]

    def table(self) -> str:
        """The totals as a small text table."""
        lines = [f"{self.files:,} blocks, {self.items:,} items, {self.bytes:,} bytes, "
                 f"{len(self.workers)} worker processes"]
        for kind, n in self.kinds.most_common():
            lines.append(f"  {kind:<22}{n:>9,} items {self.kind_bytes[kind]:>14,} bytes")
        return "\n".join(lines)


def block_files(folder: str | os.PathLike) -> list[str]:
    """The ``*.blk`` and ``*.blk.gz`` files of ``folder``, sorted.

    Raises:
        BlockError: ``folder`` is not a folder.
    """
    if not Path(folder).is_dir():
        raise BlockError(f"{folder}: no such folder" if not Path(folder).exists() else f"{folder}: not a folder")
    return sorted(str(p) for p in Path(folder).iterdir() if p.name.endswith((".blk", ".blk.gz")))


def _progress(iterable, total: int, show: bool):
    if not show:
        return iterable
    from tqdm import tqdm
    return tqdm(iterable, total=total, unit="block", file=sys.stderr)


def decode_folder_dask(folder: str | os.PathLike, client: Any, *, schema: str | None = None,
                       progress: bool = True) -> Totals:
    """Decode every block of ``folder`` on a Dask cluster and sum the counts.

    Args:
        client: a ``dask.distributed.Client`` (of a ``LocalCluster`` or a remote scheduler);
            its workers need pbj installed and the schema file at the same path.
        schema: the descriptor set's path (default: the HAPI set shipped with pbj).
        progress: show a progress bar on stderr (tqdm) as blocks complete.
    """
    from dask.distributed import as_completed as dask_completed

    schema = schema or default_schema()
    files = block_files(folder)
    futures = client.map(summarize_block, files, schema=schema, pure=False)
    totals = Totals()
    for future in _progress(dask_completed(futures), len(files), progress):
        totals.add(future.result())
    return totals


def decode_folder_processes(folder: str | os.PathLike, *, processes: int | None = None,
                            schema: str | None = None, progress: bool = True) -> Totals:
    """Decode every block of ``folder`` with a ``ProcessPoolExecutor`` and sum the counts.

    Args:
        processes: worker processes (default: the CPU count).
        schema, progress: as :func:`decode_folder_dask`.
    """
    schema = schema or default_schema()
    files = block_files(folder)
    totals = Totals()
    with ProcessPoolExecutor(processes) as pool:
        futures = [pool.submit(summarize_block, f, schema) for f in files]
        for future in _progress(as_completed(futures), len(files), progress):
            totals.add(future.result())
    return totals


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="decode a folder of Hedera blocks in parallel")
    parser.add_argument("folder")
    parser.add_argument("--schema", help="a FileDescriptorSet holding Block (default: the one shipped with pbj)")
    parser.add_argument("--processes", type=int, help="use a process pool of this size instead of Dask")
    parser.add_argument("--scheduler", help="a Dask scheduler address (default: a local cluster)")
    parser.add_argument("--workers", type=int, default=2, help="workers of the local cluster (default 2)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar (then tqdm is not needed)")
    args = parser.parse_args(argv)
    progress = not args.no_progress
    needs = [m for m, wanted in (("tqdm", progress), ("dask", not args.processes)) if wanted]
    missing = [m for m in needs if importlib.util.find_spec(m) is None]
    if missing:  # say so before any work, not after the first blocks are decoded
        print(f"parallel_blocks.py: error: {' and '.join(missing)} not installed: pip install 'pbj-protobuf[dask]' "
              f"(or pip install {' '.join(missing)})"
              + ("; --no-progress runs without tqdm" if missing == ["tqdm"] else ""), file=sys.stderr)
        return 2
    try:
        block_files(args.folder)
        if args.processes:
            totals = decode_folder_processes(args.folder, processes=args.processes, schema=args.schema,
                                             progress=progress)
        else:
            from dask.distributed import Client, LocalCluster

            if args.scheduler:
                with Client(args.scheduler) as client:
                    totals = decode_folder_dask(args.folder, client, schema=args.schema, progress=progress)
            else:
                with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True) as cluster, \
                        Client(cluster) as client:
                    totals = decode_folder_dask(args.folder, client, schema=args.schema, progress=progress)
    except BlockError as exc:
        print(f"parallel_blocks.py: error: {exc}", file=sys.stderr)
        return 1
    print(totals.table())
    return 0


if __name__ == "__main__":
    sys.exit(main())
