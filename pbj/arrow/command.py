"""The ``pbj parquet FOLDER OUT`` command (registered by ``pbj/cli.py``; pyarrow is imported when it runs)."""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path
from typing import Any

__all__ = ["add_command"]


def add_command(sub: Any) -> None:
    """Register ``pbj parquet FOLDER OUT`` on the CLI's subparsers."""
    cmd = sub.add_parser("parquet", help="turn a folder of Hedera block files (.blk, .blk.gz) into a Parquet "
                                         "dataset, one row per BlockItem or one table per kind (the arrow extra)")
    cmd.add_argument("folder", help="the folder of block files")
    cmd.add_argument("out", help="the dataset's folder (files of the same blocks are replaced, others kept)")
    cmd.add_argument("--split", nargs="*", metavar="PATH",
                     help="one dataset per kind in OUT/<kind>/: split at these oneof paths of BlockItem "
                          "(default: items, state changes and map-update values by kind)")
    cmd.add_argument("--partition", default="", metavar="KEYS",
                     help="Hive-style partition folders, comma-separated, outermost first: block, date "
                          "(of the first consensus time), kind (without --split)")
    cmd.add_argument("--large-types", action="store_true",
                     help="large_string, large_binary and large_list columns (64-bit offsets)")
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
    from pbj.arrow.blocks import SPLIT_PATHS, block_files, blocks_to_parquet
    from pbj.arrow.lost import UnknownFieldsWarning
    from pbj.errors import PbjError

    folder = Path(args.folder)
    if not folder.is_dir():
        raise UserError(f"{folder} is not a folder")
    if not block_files(folder):
        raise UserError(f"{folder} holds no block files (*.blk, *.blk.gz)")
    split = None if args.split is None else (args.split or list(SPLIT_PATHS))
    partition = [k.strip() for k in args.partition.split(",") if k.strip()]

    def skip(path: Path, reason: str) -> None:
        sys.stderr.write(("\n" if not args.no_progress else "") + f"pbj: skipped {reason}\n")

    try:
        with warnings.catch_warnings(record=True) as caught:  # this command's process only: said as pbj's lines below
            warnings.simplefilter("always", UnknownFieldsWarning)
            written = blocks_to_parquet(folder, args.out, schema=args.schema, split=split, partition=partition,
                                        progress=not args.no_progress, large_types=args.large_types,
                                        enums=args.enums, on_skip=skip)
        _say_warnings(caught)
    except (ValueError, PbjError) as exc:
        raise UserError(str(exc)) from None
    except OSError as exc:
        raise UserError(f"{exc.filename or args.out}: {exc.strerror or exc}") from None
    kinds = f" in {len({f.relative_to(args.out).parts[0] for f in written.files})} kinds" if split else ""
    print(f"wrote {written.rows:,} rows of {written.blocks:,} blocks to {args.out} "
          f"({len(written.files):,} Parquet files{kinds})" +
          (f"; skipped {len(written.skipped)} files" if written.skipped else ""))
    return 1 if written.skipped else 0


def _say_warnings(caught: list[warnings.WarningMessage]) -> None:
    """Each distinct warning text once, as one ``pbj: warning: ...`` line on stderr (no source line);
    warnings not pbj's go back to Python's warning machinery."""
    from pbj.arrow.lost import UnknownFieldsWarning

    said: set[str] = set()
    for w in caught:
        if not issubclass(w.category, UnknownFieldsWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)
        elif str(w.message) not in said:
            said.add(str(w.message))
            sys.stderr.write(f"pbj: warning: {w.message}\n")
