"""pbj messages as Apache Arrow tables, and back (the ``arrow`` extra: ``pip install 'pbj-protobuf[arrow]'``).

A list of messages of one class becomes a :class:`pyarrow.Table` with one
column per field of the class, the schema's structure kept: sub-messages are
structs, repeated fields lists, maps Arrow maps, oneofs a struct of their
members plus the name of the member set, fields with presence nullable. The
mapping (every type, every choice, what it cannot hold) is in
``docs/arrow.md`` and in :mod:`pbj.arrow.mapping`::

    import pbj.arrow

    table = pbj.arrow.to_arrow(items)                 # pyarrow.Table
    assert pbj.arrow.from_arrow(table, BlockItem) == items
    table = pbj.arrow.decode_to_arrow(BlockItem, payloads)   # the same table, from the bytes

* :func:`arrow_schema`: the Arrow schema of a message class;
* :func:`to_arrow` / :func:`from_arrow`: messages to a table and back (``from_arrow`` takes
  what DuckDB, Polars and Parquet readers give back: :mod:`pbj.arrow.conform`);
* :func:`decode_to_arrow`: encoded messages to the table of their decoded messages (on the
  native engine straight from the bytes, no message objects: :mod:`pbj.arrow.native`);
* :func:`encode_from_arrow`: a table's rows to their encodings (on the native engine straight
  from the columns: :mod:`pbj.arrow.encode`);
* ``split=``: one narrow table per kind (a oneof's members) instead of one wide table
  (:mod:`pbj.arrow.split`);
* :func:`write_parquet` / :func:`read_parquet`: the same through Parquet files;
* :mod:`pbj.arrow.blocks`: a folder of Hedera block files to a Parquet dataset (``pbj parquet``).

This package needs pyarrow: its names load on first use, and without pyarrow
that first use raises ``ImportError`` naming the extra (so ``pbj parquet`` can
be registered on the command line without importing pyarrow). pbj's core never
imports it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pbj.arrow.convert import decode_to_arrow, from_arrow, to_arrow
    from pbj.arrow.encode import encode_from_arrow
    from pbj.arrow.files import read_parquet, write_parquet
    from pbj.arrow.lost import UnknownFieldsWarning
    from pbj.arrow.mapping import ENUMS_AS, arrow_schema

__all__ = ["arrow_schema", "to_arrow", "from_arrow", "decode_to_arrow", "encode_from_arrow", "write_parquet",
           "read_parquet", "ENUMS_AS", "UnknownFieldsWarning", "require_pyarrow"]

_HOME = {"arrow_schema": "mapping", "ENUMS_AS": "mapping", "to_arrow": "convert", "from_arrow": "convert",
         "decode_to_arrow": "convert", "write_parquet": "files", "read_parquet": "files",
         "UnknownFieldsWarning": "lost", "encode_from_arrow": "encode"}


def require_pyarrow() -> None:
    """Import pyarrow, or raise ``ImportError`` naming the extra that installs it."""
    try:
        import pyarrow  # noqa: F401
    except ImportError as exc:
        raise ImportError("pbj.arrow needs pyarrow: install the extra with pip install 'pbj-protobuf[arrow]'") from exc


#: The submodules, loaded on first use as attributes (``pbj.arrow.native.explain(cls)`` after ``import pbj.arrow``).
_SUBMODULES = ("blocks", "columns", "conform", "convert", "encode", "files", "lost", "mapping", "native", "split")


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        require_pyarrow()
        module = importlib.import_module(f"pbj.arrow.{name}")
        globals()[name] = module
        return module
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module 'pbj.arrow' has no attribute {name!r}")
    require_pyarrow()
    value = getattr(importlib.import_module(f"pbj.arrow.{home}"), name)
    globals()[name] = value
    return value
