"""Query Hedera blocks with DuckDB: items by kind, and fees by transaction type, from ``pbj parquet`` datasets.

Run it::

    pip install 'pbj-protobuf[arrow]' duckdb
    pbj parquet BLOCK_FOLDER items/                # one row per BlockItem, every kind
    python examples/arrow_duckdb.py items/
    pbj parquet BLOCK_FOLDER kinds/ --split        # one dataset per kind: kinds/transaction_result/ ...
    python examples/arrow_duckdb.py --fees kinds/

Items by kind: each row of the wide dataset is one ``BlockItem``; its oneof
``item`` is a struct whose ``which`` says which member is set (docs/arrow.md),
so the query is a GROUP BY on ``item.which``. DuckDB reads only the columns
the query names.

Fees by transaction type: a block holds each transaction as an
``event_transaction`` item followed by its ``transaction_result`` item, so in
the split dataset a result's ``row`` is its transaction's ``row`` plus one, in
the same block. The fee is the result's ``transaction_fee_charged``; the type
is the member set in the transaction's body, which is bytes inside bytes
(``Transaction`` -> ``SignedTransaction`` -> ``TransactionBody``): pbj decodes
that one column (:func:`pbj.arrow.blocks.transaction_type`) into a small table
DuckDB joins with the results.
"""

from __future__ import annotations

import argparse
import sys
from importlib import resources
from pathlib import Path

ITEMS = """
SELECT item.which AS kind, count(*) AS items
FROM read_parquet($files)
GROUP BY kind
ORDER BY items DESC, kind
"""

TRANSACTIONS = """
SELECT block_number, row, "transaction".application_transaction AS tx
FROM read_parquet($files, hive_partitioning = true)
"""

FEES = """
SELECT t.type, count(*) AS transactions, sum(r.transaction_fee_charged) AS fees
FROM types AS t
JOIN read_parquet($results, hive_partitioning = true) AS r
  ON r.block_number = t.block_number AND r.row = t.row + 1
GROUP BY t.type
ORDER BY fees DESC, t.type
"""


def _files(folder: str | Path) -> list[str]:
    return sorted(str(p) for p in Path(folder).glob("**/*.parquet"))


def items_by_kind(folder: str | Path) -> dict[str, int]:
    """Items per kind over every Parquet file under ``folder`` (``pbj parquet``'s wide dataset), with DuckDB."""
    import duckdb

    with duckdb.connect() as con:
        return dict(con.execute(ITEMS, {"files": _files(folder)}).fetchall())


def fees_by_type(folder: str | Path, schema: str | None = None) -> dict[str | None, tuple[int, int]]:
    """Transactions and fees (tinybars) per transaction type, over ``pbj parquet --split``'s dataset ``folder``."""
    import duckdb
    import pyarrow as pa

    import pbj
    from pbj.arrow.blocks import transaction_type

    set_path = schema or str(resources.files("pbj") / "data" / "hapi-v0.55.0.binpb")
    ns = pbj.load_descriptor_set(Path(set_path).read_bytes(), only=("proto.Transaction", "proto.SignedTransaction",
                                                                    "proto.TransactionBody"))
    root = Path(folder)
    with duckdb.connect() as con:
        # the type is bytes inside bytes: pbj decodes that one column, DuckDB does the rest
        relation = con.sql(TRANSACTIONS, params={"files": _files(root / "event_transaction")})
        transactions = relation.to_arrow_table() if hasattr(relation, "to_arrow_table") else relation.arrow()
        types = pa.table({"block_number": transactions.column("block_number"), "row": transactions.column("row"),
                          "type": [transaction_type(ns, b) for b in transactions.column("tx").to_pylist()]})
        con.register("types", types)
        rows = con.execute(FEES, {"results": _files(root / "transaction_result")}).fetchall()
    return {kind: (n, fees) for kind, n, fees in rows}


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
