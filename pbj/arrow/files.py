"""Parquet files of messages, through pyarrow: :func:`write_parquet`, :func:`read_parquet`.

The file holds the table :func:`pbj.arrow.to_arrow` makes (pyarrow keeps the
Arrow schema in the file's metadata, so dictionaries, maps and the
non-nullable fields come back as written).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from pbj.arrow.convert import from_arrow, to_arrow
from pbj.arrow.mapping import DEFAULT_RECURSION_DEPTH

__all__ = ["write_parquet", "read_parquet"]


def write_parquet(messages: Iterable[Any] | pa.Table, path: str | os.PathLike, cls: type | None = None, *,
                  compression: str = "zstd", **options: Any) -> None:
    """Write messages (or a table of :func:`pbj.arrow.to_arrow`) to the Parquet file ``path``.

    Args:
        messages: pbj messages of one class, or a ``pyarrow.Table`` already made.
        path: the file to write (replaced if it exists).
        cls: the message class (default: the first message's).
        compression: Parquet's column compression (``"zstd"``, ``"snappy"``, ``"none"`` ...).
        options: the mapping's options for :func:`pbj.arrow.to_arrow`.

    Raises:
        as :func:`pbj.arrow.to_arrow`; ``OSError`` when the file cannot be written.
    """
    table = messages if isinstance(messages, pa.Table) else to_arrow(messages, cls, **options)
    pq.write_table(table, path, compression=compression)


def read_parquet(path: str | os.PathLike, cls: type, *, enums: str = "name", well_known_types: bool = True,
                 recursion_depth: int = DEFAULT_RECURSION_DEPTH) -> list[Any]:
    """The messages of a Parquet file written by :func:`write_parquet` (same options).

    Raises:
        as :func:`pbj.arrow.from_arrow`; ``OSError`` when the file cannot be read.
    """
    return from_arrow(pq.read_table(path), cls, enums=enums, well_known_types=well_known_types,
                      recursion_depth=recursion_depth)
