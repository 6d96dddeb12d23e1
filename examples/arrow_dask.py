"""The same query over many block files on Dask: each task turns one block into Arrow and counts its items.

Run it::

    pip install 'pbj-protobuf[arrow,dask]'
    python examples/arrow_dask.py BLOCK_FOLDER                       # a local cluster
    python examples/arrow_dask.py BLOCK_FOLDER --scheduler tcp://host:8786

A ``dask.bag`` of block files (``.blk`` or ``.blk.gz``) is mapped to Arrow:
each task cuts the block's items out of its bytes, makes their table with
``pbj.arrow.decode_to_arrow`` (a worker loads the schema on its first block
and keeps it), counts ``item.which`` with ``pyarrow.compute`` and returns the
counts; the bag sums them. With ``--parquet OUT`` each task also writes the
block's Parquet file, as ``pbj parquet`` does.
"""

from __future__ import annotations

import argparse
import collections
import sys
from importlib import resources
from pathlib import Path

_SCHEMAS: dict[str, type] = {}  # per worker process: schema path -> BlockItem class


def _item_class(schema: str) -> type:
    cls = _SCHEMAS.get(schema)
    if cls is None:
        import pbj
        from pbj.arrow.blocks import ITEM_TYPE

        cls = _SCHEMAS[schema] = pbj.load_descriptor_set(Path(schema).read_bytes())[ITEM_TYPE]
    return cls


def default_schema() -> str:
    """The HAPI descriptor set that ships with pbj."""
    return str(resources.files("pbj") / "data" / "hapi-v0.55.0.binpb")


def count_block(path: str, schema: str, parquet: str | None = None) -> tuple[dict[str, int], list[str]]:
    """Items per kind of one block file, and the file's one-line error if it cannot be read (runs in a worker).

    A file that is not a readable block is reported, not raised: a task that
    raises makes every Dask worker log the failure at length.
    """
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    import pbj.arrow
    from pbj.arrow.blocks import BlockFileError, block_items, read_block

    try:
        table = pbj.arrow.decode_to_arrow(_item_class(schema), list(block_items(read_block(path))))
    except BlockFileError as exc:
        return {}, [str(exc)]
    except pbj.DecodeError as exc:
        return {}, [f"{Path(path).name}: not a block ({exc})"]
    if parquet is not None:
        name = Path(path).name.removesuffix(".gz").removesuffix(".blk") + ".parquet"
        pq.write_table(table, Path(parquet) / name)
    which = pc.struct_field(table.column("item"), "which")
    counts = pc.value_counts(which.cast("string"))
    return {row["values"]: row["counts"] for row in counts.to_pylist()}, []


def _add(a: tuple[dict[str, int], list[str]], b: tuple[dict[str, int], list[str]]) -> tuple[dict[str, int], list[str]]:
    return dict(collections.Counter(a[0]) + collections.Counter(b[0])), a[1] + b[1]


def items_by_kind(folder: str | Path, *, schema: str | None = None, scheduler: str | None = None,
                  parquet: str | None = None) -> dict[str, int]:
    """Items per kind over every block file of ``folder``, one Dask task per file.

    A file that cannot be read is skipped, with one line on stderr.

    Args:
        scheduler: a Dask scheduler's address, ``"sync"`` (in this process, for tests),
            or ``None`` for the multiprocessing scheduler on this machine.
        parquet: also write each block's Parquet file into this folder.
    """
    import dask.bag as db

    from pbj.arrow.blocks import block_files

    schema = schema or default_schema()
    files = [str(p) for p in block_files(folder)]
    if parquet is not None:
        Path(parquet).mkdir(parents=True, exist_ok=True)
    bag = db.from_sequence(files, npartitions=max(1, len(files))).map(count_block, schema, parquet)
    total = bag.fold(_add, initial=({}, []))
    if scheduler is None:
        result, skipped = total.compute(scheduler="processes")
    elif scheduler == "sync":
        result, skipped = total.compute(scheduler="sync")
    else:
        from dask.distributed import Client

        with Client(scheduler) as client:
            result, skipped = client.compute(total).result()
    for line in skipped:
        print(f"skipped {line}", file=sys.stderr)
    return dict(sorted(result.items(), key=lambda kv: (-kv[1], kv[0])))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", help="a folder of .blk / .blk.gz files")
    parser.add_argument("--schema", help="a FileDescriptorSet holding Block (default: the shipped HAPI set)")
    parser.add_argument("--scheduler", help="a Dask scheduler address, or 'sync' (default: local processes)")
    parser.add_argument("--parquet", metavar="OUT", help="also write each block's Parquet file into OUT")
    args = parser.parse_args(argv)
    for kind, n in items_by_kind(args.folder, schema=args.schema, scheduler=args.scheduler,
                                 parquet=args.parquet).items():
        print(f"{kind:<24} {n:>10,}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
