"""Run a benchmark's worker under callgrind and read the instructions of its marked regions.

A worker marks each region by calling ``os.getppid()`` before and after it; callgrind's
``--dump-before=getppid`` then writes one dump per stretch between two marks: dump 1 is what
ran before the first region, and region ``i`` (from 0) is dump ``2 + 2 * i``. The worker writes
its regions' names, one a line, to ``regions.txt`` in the folder it is given.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def count_regions(module: str, *worker_args: str) -> dict[str, int] | None:
    """``python -m module --count-worker DIR *worker_args`` under callgrind: region name -> instructions.

    Returns:
        The instructions of each region (every thread of the process counted), or ``None``
        (with a line on stderr) when valgrind is not on PATH.

    Raises:
        subprocess.CalledProcessError: the worker failed.
    """
    return count_command(lambda folder: [sys.executable, "-m", module, "--count-worker", folder, *worker_args])


def count_command(command: Callable[[str], list[str]], env: dict[str, str] | None = None) -> dict[str, int] | None:
    """The program ``command(DIR)`` under callgrind: region name -> instructions (as :func:`count_regions`,
    for a worker started another way, e.g. ``python -c``; it writes its regions' names to ``DIR/regions.txt``).

    Args:
        command: the worker's argv, given the folder it writes ``regions.txt`` to.
        env: the worker's environment (default: this process's).

    Raises:
        subprocess.CalledProcessError: the worker failed.
    """
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        print("--instructions needs valgrind (callgrind) on PATH", file=sys.stderr)
        return None
    with tempfile.TemporaryDirectory(prefix="pbj-callgrind-") as tmp:
        folder = Path(tmp)
        out = folder / "cg.out"
        subprocess.run([valgrind, "--tool=callgrind", "--dump-before=getppid", f"--callgrind-out-file={out}",
                        f"--log-file={folder / 'valgrind.log'}", *command(tmp)], check=True, cwd=ROOT, env=env)
        names = (folder / "regions.txt").read_text().split("\n")

        def total(n: int) -> int:
            for line in (folder / f"cg.out.{n}").read_text().splitlines():
                if line.startswith(("summary:", "totals:")):
                    return int(line.split()[1])
            raise ValueError(f"callgrind dump {n} has no total")
        return {name: total(2 + 2 * i) for i, name in enumerate(names)}
