"""Query Hedera blocks with Polars: items by kind, and fees by transaction type, from ``pbj parquet`` datasets.

Run it::

    pip install 'pbj-protobuf[arrow]' polars
    pbj parquet BLOCK_FOLDER items/                # one row per BlockItem, every kind
    python examples/arrow_polars.py items/
    pbj parquet BLOCK_FOLDER kinds/ --split        # one dataset per kind
    python examples/arrow_polars.py --fees kinds/

The same queries as ``arrow_duckdb.py``, lazily: Polars scans the files and
reads only the columns named. Items by kind counts ``item.which`` (the
oneof's set member, docs/arrow.md). Fees by transaction type joins each
``transaction_result`` (its fee) to the ``event_transaction`` one row before
it in the same block; the type, bytes inside bytes, is decoded by pbj
(:func:`pbj.arrow.blocks.transaction_type`) on the one column that holds it.
"""

from __future__ import annotations

import argparse
import sys
from importlib import resources
from pathlib import Path


def _files(folder: str | Path) -> list[str]:
    return sorted(str(p) for p in Path(folder).glob("**/*.parquet"))


def items_by_kind(folder: str | Path) -> dict[str, int]:
    """Items per kind over every Parquet file under ``folder`` (``pbj parquet``'s wide dataset), with Polars."""
    import polars as pl

    counts = (pl.scan_parquet(_files(folder), hive_partitioning=True)
              .select(pl.col("item").struct.field("which").cast(pl.String).alias("kind"))
              .group_by("kind").len()
              .sort(["len", "kind"], descending=[True, False])
              .collect())
    return dict(counts.iter_rows())


def fees_by_type(folder: str | Path, schema: str | None = None) -> dict[str | None, tuple[int, int]]:
    """Transactions and fees (tinybars) per transaction type, over ``pbj parquet --split``'s dataset ``folder``."""
    import polars as pl

    import pbj
    from pbj.arrow.blocks import transaction_type

    set_path = schema or str(resources.files("pbj") / "data" / "hapi-v0.55.0.binpb")
    ns = pbj.load_descriptor_set(Path(set_path).read_bytes(), only=("proto.Transaction", "proto.SignedTransaction",
                                                                    "proto.TransactionBody"))
    root = Path(folder)
    transactions = (pl.scan_parquet(_files(root / "event_transaction"), hive_partitioning=True)
                    .select("block_number", "row",
                            pl.col("transaction").struct.field("application_transaction")
                            .map_elements(lambda data: transaction_type(ns, data), return_dtype=pl.String)
                            .alias("type")))
    results = pl.scan_parquet(_files(root / "transaction_result"), hive_partitioning=True).select(
        "block_number", (pl.col("row") - 1).alias("row"), "transaction_fee_charged")
    fees = (transactions.join(results, on=["block_number", "row"])
            .group_by("type")
            .agg(pl.len().alias("transactions"), pl.col("transaction_fee_charged").sum().alias("fees"))
            .sort(["fees", "type"], descending=[True, False])
            .collect())
    return {kind: (n, total) for kind, n, total in fees.iter_rows()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", help="a dataset written by pbj parquet (with --split for --fees)")
    parser.add_argument("--fees", action="store_true", help="fees by transaction type (a --split dataset)")
    args = parser.parse_args(argv)
    if args.fees:
        for kind, (n, fees) in fees_by_type(args.folder).items():
            print(f"{kind or '(none)':<32} {n:>10,} {fees:>16,}")
    else:
        for kind, count in items_by_kind(args.folder).items():
            print(f"{kind:<24} {count:>10,}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
