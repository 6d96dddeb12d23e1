"""Query Hedera blocks with Polars: items by kind, from the Parquet files ``pbj parquet`` writes.

Run it::

    pip install 'pbj-protobuf[arrow]' polars
    pbj parquet BLOCK_FOLDER parquet/
    python examples/arrow_polars.py parquet/

The same query as ``arrow_duckdb.py``, lazily: Polars scans the files and
reads the ``item`` column only, then counts ``item.which`` (the oneof's set
member, docs/arrow.md).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def items_by_kind(folder: str | Path) -> dict[str, int]:
    """Items per kind over every ``*.parquet`` file of ``folder``, with Polars."""
    import polars as pl

    files = sorted(str(p) for p in Path(folder).glob("*.parquet"))
    counts = (pl.scan_parquet(files)
              .select(pl.col("item").struct.field("which").cast(pl.String).alias("kind"))
              .group_by("kind").len()
              .sort(["len", "kind"], descending=[True, False])
              .collect())
    return dict(counts.iter_rows())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", help="a folder of Parquet files written by pbj parquet")
    args = parser.parse_args(argv)
    for kind, n in items_by_kind(args.folder).items():
        print(f"{kind:<24} {n:>10,}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
