"""Query Hedera blocks with DuckDB: items by kind, from the Parquet files ``pbj parquet`` writes.

Run it::

    pip install 'pbj-protobuf[arrow]' duckdb
    pbj parquet BLOCK_FOLDER parquet/            # one <block>.parquet per block file
    python examples/arrow_duckdb.py parquet/

Each row of the files is one ``BlockItem``; its oneof ``item`` is a struct whose
``which`` says which member is set (docs/arrow.md), so the query is a GROUP BY
on ``item.which``. DuckDB reads only the columns the query names.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

QUERY = """
SELECT item.which AS kind, count(*) AS items
FROM read_parquet($files)
GROUP BY kind
ORDER BY items DESC, kind
"""


def items_by_kind(folder: str | Path) -> dict[str, int]:
    """Items per kind over every ``*.parquet`` file of ``folder``, with DuckDB."""
    import duckdb

    files = sorted(str(p) for p in Path(folder).glob("*.parquet"))
    with duckdb.connect() as con:
        return dict(con.execute(QUERY, {"files": files}).fetchall())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", help="a folder of Parquet files written by pbj parquet")
    args = parser.parse_args(argv)
    for kind, n in items_by_kind(args.folder).items():
        print(f"{kind:<24} {n:>10,}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
