"""A folder of Hedera block files to Parquet: ``pbj parquet FOLDER OUT`` (:func:`blocks_to_parquet`).

Each ``*.blk`` or ``*.blk.gz`` file holds one ``com.hedera.hapi.block.stream.Block``
(gzip is recognised by its magic bytes, whatever the name). The block's
``items`` (field 1, each a ``BlockItem``) are cut out of the bytes at the wire
level ("Encoding": a LEN record per item), and :func:`pbj.arrow.decode_to_arrow`
turns them into one table, written to ``OUT/<file name>.parquet``: a folder of
Parquet files of one schema, one row per ``BlockItem``, that DuckDB, Polars and
Dask read with a glob (``OUT/*.parquet``). A progress bar goes to stderr
(tqdm's when it is installed, else a line of its own).
"""

from __future__ import annotations

import gzip
import os
import sys
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

import pbj
from pbj import wire
from pbj.arrow.convert import decode_to_arrow
from pbj.errors import DecodeError

__all__ = ["BLOCK_TYPE", "ITEM_TYPE", "SPLIT_PATHS", "block_files", "block_items", "blocks_to_parquet"]

BLOCK_TYPE = "com.hedera.hapi.block.stream.Block"
ITEM_TYPE = "com.hedera.hapi.block.stream.BlockItem"
#: The split paths of ``pbj parquet --split`` (relative to ``BlockItem``): a table per kind of item, per kind
#: of state change, and per kind of value a map update writes (``Schedule`` alone is 6,970 columns wide).
SPLIT_PATHS = ("item", "item.state_changes.state_changes.change_operation",
               "item.state_changes.state_changes.change_operation.map_update.value.value_choice")
_GZIP_MAGIC = b"\x1f\x8b"
_ITEMS_TAG = 1 << 3 | wire.WIRE_LEN


def block_files(folder: str | os.PathLike) -> list[Path]:
    """The ``*.blk`` and ``*.blk.gz`` files of ``folder``, sorted by name (block numbers are zero-padded)."""
    root = Path(folder)
    return sorted(p for p in root.iterdir() if p.is_file() and (p.name.endswith(".blk") or p.name.endswith(".blk.gz")))


def read_block(path: str | os.PathLike) -> bytes:
    """The bytes of one block file, gunzipped when they start with gzip's magic."""
    data = Path(path).read_bytes()
    return gzip.decompress(data) if data[:2] == _GZIP_MAGIC else data


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


def blocks_to_parquet(folder: str | os.PathLike, out: str | os.PathLike, *, schema: str | os.PathLike | None = None,
                      progress: bool = True, compression: str = "zstd", **options: Any) -> list[Path]:
    """Write each block file of ``folder`` as ``out/<name>.parquet``, one row per ``BlockItem``.

    Args:
        folder: a folder of ``.blk``/``.blk.gz`` files.
        out: the output folder (created if needed; files of the same names are replaced).
        schema: a ``FileDescriptorSet`` holding ``Block`` (default: the HAPI set shipped with pbj).
        progress: show a progress bar on stderr.
        compression: Parquet's compression codec.
        options: the mapping's options (``enums``, ``well_known_types``, ``recursion_depth``).

    Returns:
        The Parquet files written, in block order.

    Raises:
        DecodeError: a block file is not a valid ``Block`` (the error names the file).
        OSError: a file cannot be read or written.
    """
    set_path = schema if schema is not None else resources.files("pbj") / "data" / "hapi-v0.55.0.binpb"
    ns = pbj.load_descriptor_set(Path(str(set_path)).read_bytes())
    item_cls = ns[ITEM_TYPE]
    files = block_files(folder)
    target = Path(out)
    target.mkdir(parents=True, exist_ok=True)
    bar = _progress(len(files), "blocks to Parquet", progress)
    written = []
    try:
        for path in files:
            try:
                table = decode_to_arrow(item_cls, list(block_items(read_block(path))), **options)
            except DecodeError as exc:
                raise DecodeError(f"{path.name}: {exc.reason}", path=exc.path, offset=exc.offset) from None
            name = path.name.removesuffix(".gz").removesuffix(".blk") + ".parquet"
            pq.write_table(table, target / name, compression=compression)
            written.append(target / name)
            if bar is not None:
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    return written
