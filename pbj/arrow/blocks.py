"""A folder of Hedera block files to a Parquet dataset: ``pbj parquet FOLDER OUT`` (:func:`blocks_to_parquet`).

Each ``*.blk`` or ``*.blk.gz`` file holds one ``com.hedera.hapi.block.stream.Block``
(gzip is recognised by its magic bytes, whatever the name). The block's
``items`` (field 1, each a ``BlockItem``) are cut out of the bytes at the wire
level ("Encoding": a LEN record per item) and :func:`pbj.arrow.decode_to_arrow`
turns them into a table, one row per ``BlockItem`` (or, with ``split``, one
narrow table per kind: :mod:`pbj.arrow.split`), which ``pyarrow.dataset``'s
writer adds to the dataset at ``OUT``. One block is in memory at a time, so
the memory a folder takes does not grow with its number of files.

The dataset: every table gets a ``block_number`` column (from the block's
header item, else the digits of the file's name); ``partition`` puts rows in
Hive-style folders (``block_number=497558/``, ``date=2024-05-01/`` from the
first consensus time of the block, ``kind=state_changes/`` for the wide table),
whose values readers get back as columns (DuckDB's ``hive_partitioning``,
Polars' ``scan_parquet``). With ``split``, each kind is a dataset of its own
in ``OUT/<kind>/``. Files are named after the block file, so writing a folder
again replaces its files and keeps the others.

A file that cannot be read (missing, truncated, not gzip, not a ``Block``) is
reported in one line through ``on_skip`` and skipped; a progress bar goes to
stderr (tqdm's when it is installed, else a line of its own).
"""

from __future__ import annotations

import datetime
import gzip
import os
import re
import sys
import zlib
from collections.abc import Callable, Iterator, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import attrs
import pyarrow as pa
import pyarrow.compute
import pyarrow.dataset as ds

import pbj
from pbj import wire
from pbj.arrow.convert import decode_to_arrow
from pbj.errors import DecodeError, SchemaError

pc: Any = pyarrow.compute  # its functions are made at import: no static checker sees them

__all__ = ["BLOCK_TYPE", "ITEM_TYPE", "SPLIT_PATHS", "PARTITIONS", "BlockFileError", "Written", "block_files",
           "read_block", "block_items", "blocks_to_parquet", "transaction_type"]

BLOCK_TYPE = "com.hedera.hapi.block.stream.Block"
ITEM_TYPE = "com.hedera.hapi.block.stream.BlockItem"
#: The split paths of ``pbj parquet --split`` (relative to ``BlockItem``): a table per kind of item, per kind
#: of state change, and per kind of value a map update writes (``Schedule`` alone is 6,970 columns wide).
SPLIT_PATHS = ("item", "item.state_changes.state_changes.change_operation",
               "item.state_changes.state_changes.change_operation.map_update.value.value_choice")
#: The partition keys ``blocks_to_parquet`` takes (``kind`` only for the wide table: split tables are per kind).
PARTITIONS = ("block", "date", "kind")
_COLUMN = {"block": "block_number", "date": "date", "kind": "kind"}  # partition key -> its column
_GZIP_MAGIC = b"\x1f\x8b"
_ITEMS_TAG = 1 << 3 | wire.WIRE_LEN


class BlockFileError(Exception):
    """A block file that cannot be read or is not a ``Block``; the text is one line naming the file."""


@attrs.frozen
class Written:
    """What :func:`blocks_to_parquet` wrote.

    Attributes:
        files: the Parquet files written, in the order written.
        blocks: how many block files were written.
        rows: how many rows (items, or split rows) in all.
        skipped: ``(file, reason)`` of each block file skipped.
    """

    files: list[Path]
    blocks: int
    rows: int
    skipped: list[tuple[Path, str]]


def block_files(folder: str | os.PathLike) -> list[Path]:
    """The ``*.blk`` and ``*.blk.gz`` files of ``folder``, sorted by name (block numbers are zero-padded)."""
    root = Path(folder)
    return sorted(p for p in root.iterdir() if p.is_file() and (p.name.endswith(".blk") or p.name.endswith(".blk.gz")))


def read_block(path: str | os.PathLike) -> bytes:
    """The bytes of one block file, gunzipped when they start with gzip's magic.

    Raises:
        BlockFileError: the file cannot be read, is empty (0 bytes: a block has at least its header),
            or its gzip data is truncated or damaged (one line).
    """
    p = Path(path)
    try:
        data = p.read_bytes()
        if not data:
            raise BlockFileError(f"{p.name}: empty file (0 bytes; a block has at least its header)")
        return gzip.decompress(data) if data[:2] == _GZIP_MAGIC else data
    except EOFError:
        raise BlockFileError(f"{p.name}: truncated gzip data (the file ends before the end of its stream)") from None
    except (gzip.BadGzipFile, zlib.error) as exc:
        raise BlockFileError(f"{p.name}: damaged gzip data ({exc})") from None
    except OSError as exc:
        raise BlockFileError(f"{p.name}: {exc.strerror or exc}") from None


def block_items(data: bytes) -> Iterator[memoryview]:
    """The encoded ``BlockItem`` records of an encoded ``Block`` (its field 1, in order).

    Other fields of ``Block`` (there are none in HAPI v0.55.0) are skipped.

    Raises:
        DecodeError: the bytes are not a valid encoding of fields (with the byte offset).
    """
    view = memoryview(data)
    pos, end = 0, len(data)
    try:
        while pos < end:
            start = pos
            tag, pos = wire.read_tag(data, pos)
            if tag == _ITEMS_TAG:
                n, pos = wire.read_varint(data, pos)
                if pos + n > end:
                    raise DecodeError("length past the end of the input", path=["items"], offset=start)
                yield view[pos:pos + n]
                pos += n
            else:
                pos = wire.skip_field(data, pos, tag, end, pbj.DEFAULT_MAX_DEPTH)
    except IndexError:
        raise DecodeError("truncated input", offset=pos) from None


class _Bar:
    """A one-line progress bar on stderr, for when tqdm is not installed."""

    def __init__(self, total: int, desc: str) -> None:
        self.total, self.done, self.desc = total, 0, desc

    def update(self, n: int = 1) -> None:
        self.done += n
        filled = 30 * self.done // max(self.total, 1)
        end = "\n" if self.done >= self.total else ""
        sys.stderr.write(f"\r{self.desc} [{'#' * filled}{'.' * (30 - filled)}] {self.done}/{self.total}{end}")
        sys.stderr.flush()

    def close(self) -> None:
        pass


def _progress(total: int, desc: str, enabled: bool) -> Any:
    if not enabled:
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return _Bar(total, desc)
    return tqdm(total=total, desc=desc, unit="block", file=sys.stderr)


class _Block:
    """One block file read: its items' encodings, its number and its date."""

    def __init__(self, path: Path, item_cls: type) -> None:
        self.path = path
        self.stem = path.name.removesuffix(".gz").removesuffix(".blk")
        try:
            self.items = list(block_items(read_block(path)))
            self.number, self.date = _facts(item_cls, self.items)
        except DecodeError as exc:
            raise BlockFileError(f"{path.name}: not a {BLOCK_TYPE} ({exc})") from None
        if self.number is None:
            digits = re.sub(r"\D", "", self.stem)
            if not digits:
                raise BlockFileError(f"{path.name}: no block header and no number in the file's name")
            self.number = int(digits)


def _facts(item_cls: type, items: list[memoryview]) -> tuple[int | None, datetime.date | None]:
    """The block's number (its header item) and the UTC date of its first consensus time (header, else a result)."""
    from pbj.schema import info

    numbers = {m.name: m.number for o in info(item_cls).oneofs for m in o.members}
    header, result = numbers.get("block_header"), numbers.get("transaction_result")
    number: int | None = None
    when: Any = None
    for item in items:
        if not len(item):
            continue
        tag, _ = wire.read_tag(item, 0)  # type: ignore[arg-type]  # a memoryview reads as bytes do
        if tag >> 3 == header and number is None:
            value: Any = pbj.decode(item_cls, item).item.value
            number = value.number
            when = value.first_transaction_consensus_time or when
        elif tag >> 3 == result and when is None:
            when = pbj.decode(item_cls, item).item.value.consensus_timestamp
        if number is not None and when is not None:
            break
    date = None if when is None else datetime.datetime.fromtimestamp(when.seconds, datetime.UTC).date()
    return number, date


def blocks_to_parquet(folder: str | os.PathLike, out: str | os.PathLike, *, schema: str | os.PathLike | None = None,
                      split: Sequence[str] | None = None, partition: Sequence[str] = (), progress: bool = True,
                      compression: str = "zstd", large_types: bool = False,
                      on_skip: Callable[[Path, str], None] | None = None, **options: Any) -> Written:
    """Write the block files of ``folder`` into the Parquet dataset ``out``, one block at a time.

    Args:
        folder: a folder of ``.blk``/``.blk.gz`` files.
        out: the dataset's folder (created if needed; files of the same block are replaced).
        schema: a ``FileDescriptorSet`` holding ``Block`` (default: the HAPI set shipped with pbj).
        split: split paths relative to ``BlockItem`` (e.g. :data:`SPLIT_PATHS`): one dataset per kind in
            ``out/<kind>/`` (a kind no block holds has no folder); ``None``: one table of every kind.
        partition: Hive-style partition keys among :data:`PARTITIONS`, outermost first (``kind``: the
            wide table's ``item.which``).
        progress: show a progress bar on stderr.
        compression: Parquet's compression codec.
        large_types: ``large_string``, ``large_binary``, ``large_list`` columns (see :func:`pbj.arrow.to_arrow`).
        on_skip: called with ``(file, reason)`` for each block file skipped (default: nothing).
        options: the mapping's options (``enums``, ``well_known_types``, ``recursion_depth``).

    Returns:
        A :class:`Written` summary.

    Raises:
        ValueError: a partition key is not one of :data:`PARTITIONS` (or ``kind`` with ``split``).
        SchemaError: ``schema`` holds no ``BlockItem`` (:data:`ITEM_TYPE`).
        DecodeError: ``schema`` is not a ``FileDescriptorSet``.
        OSError: the dataset cannot be written, or ``schema`` cannot be read.
    """
    for key in partition:
        if key not in PARTITIONS or (key == "kind" and split is not None):
            allowed = PARTITIONS if split is None else PARTITIONS[:2]
            raise ValueError(f"partition by {key!r}: the keys are {', '.join(allowed)}")
    set_path = schema if schema is not None else resources.files("pbj") / "data" / "hapi-v0.55.0.binpb"
    ns = pbj.load_descriptor_set(Path(str(set_path)).read_bytes())
    if ITEM_TYPE not in ns.messages:
        raise SchemaError(f"{set_path} holds no {ITEM_TYPE}: give a FileDescriptorSet of Hedera's block stream "
                          "(or the default, the HAPI set shipped with pbj)")
    item_cls = ns[ITEM_TYPE]
    files = block_files(folder)
    target = Path(out)
    target.mkdir(parents=True, exist_ok=True)
    fmt = ds.ParquetFileFormat()
    write_options = fmt.make_write_options(compression=compression)
    written: list[Path] = []
    skipped: list[tuple[Path, str]] = []
    rows = 0
    bar = _progress(len(files), "blocks to Parquet", progress)
    try:
        for path in files:
            try:
                block = _Block(path, item_cls)
                tables = _tables(block, item_cls, split, partition, large_types, options)
            except BlockFileError as exc:
                skipped.append((path, str(exc)))
                if on_skip is not None:
                    on_skip(path, str(exc))
            else:
                for sub, table in tables:
                    keys = [_COLUMN[k] for k in partition]
                    parts = ds.partitioning(pa.schema([table.schema.field(k) for k in keys]), flavor="hive") \
                        if keys else None
                    ds.write_dataset(table, target / sub if sub else target, format=fmt, file_options=write_options,
                                     partitioning=parts, basename_template=f"{block.stem}-{{i}}.parquet",
                                     existing_data_behavior="overwrite_or_ignore",
                                     file_visitor=lambda f: written.append(Path(f.path)))
                    rows += table.num_rows
            if bar is not None:
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    return Written(written, len(files) - len(skipped), rows, skipped)


def _tables(block: _Block, item_cls: type, split: Sequence[str] | None, partition: Sequence[str],
            large_types: bool, options: dict[str, Any]) -> list[tuple[str, pa.Table]]:
    """The tables of one block: ``("", table)``, or ``(kind, table)`` per kind holding rows."""
    try:
        if split is None:
            found = [("", decode_to_arrow(item_cls, block.items, large_types=large_types, **options))]
        else:
            tables = decode_to_arrow(item_cls, block.items, split=split, large_types=large_types, **options)
            found = [(kind, t) for kind, t in tables.items() if t.num_rows]
    except DecodeError as exc:
        raise BlockFileError(f"{block.path.name}: not a {BLOCK_TYPE} ({exc})") from None
    out = []
    for sub, table in found:
        n = table.num_rows
        taken = {"block_number", "date", "kind"} & set(table.column_names)
        if taken:
            raise ValueError(f"the {sub or 'BlockItem'} table has a column {sorted(taken)[0]!r} of its own, which "
                             "pbj parquet adds")
        table = table.add_column(0, pa.field("block_number", pa.int64(), nullable=False),
                                 pa.array([block.number] * n, pa.int64()))
        if "date" in partition:
            if block.date is None:
                raise BlockFileError(f"{block.path.name}: no consensus time to date the block by")
            table = table.append_column(pa.field("date", pa.date32(), nullable=False),
                                        pa.array([block.date] * n, pa.date32()))
        if "kind" in partition:  # item.which (null for an item without a kind)
            item = table.column("item").combine_chunks()
            kinds = pc.if_else(item.is_null(), pa.scalar(None, pa.string()), item.field(0).cast(pa.string()))
            table = table.append_column(pa.field("kind", pa.string()), kinds)
        out.append((sub, table))
    return out


def transaction_type(ns: pbj.Namespace, application_transaction: bytes | None) -> str | None:
    """The kind of transaction an ``EventTransaction.application_transaction`` holds (``"cryptoTransfer"`` ...).

    The bytes are a ``proto.Transaction`` whose body is in
    ``signedTransactionBytes`` (a ``proto.SignedTransaction``'s ``bodyBytes``)
    or, in older transactions, in ``bodyBytes``; the kind is the member set in
    ``proto.TransactionBody.data``. It is a column of no table (it is bytes
    inside bytes): the examples call it from DuckDB and Polars as a function.

    Returns:
        The member's ``.proto`` name, or ``None`` for ``None``, bytes that do
        not decode, or a body with no member set.
    """
    if application_transaction is None:
        return None
    try:
        tx = pbj.decode(ns["proto.Transaction"], application_transaction)
        body = tx.bodyBytes
        if tx.signedTransactionBytes:
            body = pbj.decode(ns["proto.SignedTransaction"], tx.signedTransactionBytes).bodyBytes
        data = pbj.decode(ns["proto.TransactionBody"], body).data
    except DecodeError:
        return None
    return None if data is None else str(data.which)
