"""The ``pbj parquet FOLDER OUT`` command (registered by ``pbj/cli.py``; pyarrow is imported when it runs)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

__all__ = ["add_command"]


def add_command(sub: Any) -> None:
    """Register ``pbj parquet FOLDER OUT`` on the CLI's subparsers."""
    cmd = sub.add_parser("parquet", help="turn a folder of Hedera block files (.blk, .blk.gz) into Parquet files, "
                                         "one row per BlockItem (the arrow extra)")
    cmd.add_argument("folder", help="the folder of block files")
    cmd.add_argument("out", help="the folder to write <block>.parquet files into")
    cmd.add_argument("--schema", metavar="FILE",
                     help="a FileDescriptorSet holding Block (default: the shipped HAPI set)")
    cmd.add_argument("--enums", choices=("name", "number"), default="name", help="enums as names (default) or numbers")
    cmd.add_argument("--no-progress", action="store_true", help="no progress bar")
    cmd.set_defaults(run=_run)


def _run(args: argparse.Namespace) -> int:
    from pbj.arrow import require_pyarrow
    from pbj.user_input import UserError

    try:
        require_pyarrow()
    except ImportError as exc:
        raise UserError(str(exc)) from None
    import pyarrow.parquet as pq

    from pbj.arrow.blocks import blocks_to_parquet

    folder = Path(args.folder)
    if not folder.is_dir():
        raise UserError(f"{folder} is not a folder")
    try:
        written = blocks_to_parquet(folder, args.out, schema=args.schema, progress=not args.no_progress,
                                    enums=args.enums)
    except OSError as exc:
        raise UserError(f"{exc.filename or args.out}: {exc.strerror or exc}") from None
    rows = sum(pq.ParquetFile(p).metadata.num_rows for p in written)
    print(f"wrote {len(written)} Parquet files ({rows} items) to {args.out}")
    return 0
