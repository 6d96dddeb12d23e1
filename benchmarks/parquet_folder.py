"""``pbj parquet`` over a folder of N copies of the shipped block: peak RSS and CPU against one block.

Run it::

    python -m benchmarks.parquet_folder --copies 200 --split     # one dataset per kind
    python -m benchmarks.parquet_folder --copies 20              # the wide table (about 9 s of CPU a block)

The folder holds N copies of the shipped block (symbolic links, named as
block files are). ``pbj parquet FOLDER OUT`` runs in a fresh interpreter for
one copy, then for N; each reports its peak RSS (``VmHWM`` of
``/proc/self/status``, Linux) and CPU time. Memory that does not grow with the
number of files shows as a ratio near 1 (the issue's bound: under 2).
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
from importlib import resources
from pathlib import Path

_RUN = """
import sys, time
from pbj.cli import main
t0 = time.process_time()
rc = main(sys.argv[1:])
cpu = time.process_time() - t0
peak = int(next(l for l in open("/proc/self/status") if l.startswith("VmHWM")).split()[1])
print(rc, cpu, peak, file=sys.stderr)
"""


def run(folder: Path, out: Path, extra: list[str]) -> tuple[int, float, int]:
    """``pbj parquet folder out`` in a fresh interpreter: exit status, CPU seconds, peak RSS KiB."""
    done = subprocess.run([sys.executable, "-c", _RUN, "parquet", str(folder), str(out), "--no-progress", *extra],
                          capture_output=True, text=True, timeout=24 * 3600)
    rc, cpu, peak = done.stderr.strip().splitlines()[-1].split()
    return int(rc), float(cpu), int(peak)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=200, help="block files in the big folder (default 200)")
    parser.add_argument("--split", action="store_true", help="pbj parquet --split (one dataset per kind)")
    args = parser.parse_args(argv)
    block = Path(str(resources.files("pbj") / "data" / "000000000000000000000000000000497558.blk.gz"))
    extra = ["--split"] if args.split else []
    print(f"machine: {platform.machine()} {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}; "
          f"Python {platform.python_version()}; pbj parquet {' '.join(extra)}")
    with tempfile.TemporaryDirectory() as tmp:
        results = {}
        for n in (1, args.copies):
            folder = Path(tmp) / f"blocks{n}"
            folder.mkdir()
            for i in range(n):
                (folder / f"{497558 + i:036d}.blk.gz").symlink_to(block)
            rc, cpu, peak = run(folder, Path(tmp) / f"out{n}", extra)
            files = sum(1 for _ in (Path(tmp) / f"out{n}").glob("**/*.parquet"))
            results[n] = (cpu, peak)
            print(f"  {n:>4} blocks: exit {rc}, {files:,} Parquet files, CPU {cpu:8.1f} s, "
                  f"peak RSS {peak / 1024:7.0f} MB")
        (c1, p1), (cn, pn) = results[1], results[args.copies]
        print(f"  peak RSS of {args.copies} blocks / 1 block: {pn / p1:.2f}x; CPU per block "
              f"{cn / args.copies:.2f} s (one block alone: {c1:.2f} s, schema load included)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
