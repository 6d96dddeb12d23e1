"""The Python side of tests/pyodide/run.mjs, run inside Pyodide (CPython 3.14 in WebAssembly).

The JavaScript side has written the wheels to ``/wheels``, mounted the repository (all but ``pbj/``) at
``/repo`` and the shared test material at ``/shared``, and set ``pytest_args``. This installs the wheels
into site-packages (unpacked, as a wheel installer does for pure wheels), runs the installed pbj's checks
(``tests/installed_check.py --engine python`` with the README) and then pytest on the test files listed in
``tests/pyodide/suite.txt``; the value of the last expression is the exit status.
"""

import os
import sys
import sysconfig
import time
import zipfile
from pathlib import Path


def install_wheels(folder: Path) -> list[str]:
    site = sysconfig.get_paths()["purelib"]
    names = []
    for wheel in sorted(folder.glob("*.whl")):
        if not wheel.name.endswith("-none-any.whl"):
            raise SystemExit(f"{wheel.name} is not a pure wheel: Pyodide cannot run it")
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(site)
        names.append(wheel.name)
    return names


def suite_arguments(listing: Path) -> list[str]:
    """pytest's arguments for suite.txt: a test file (or ``file::test``) a line, ``-file::test`` deselects one.

    ``#`` starts a comment.
    """
    entries = [line.split("#", 1)[0].strip() for line in listing.read_text(encoding="utf-8").splitlines()]
    out: list[str] = []
    for entry in filter(None, entries):
        out += ["--deselect", entry[1:]] if entry.startswith("-") else [entry]
    return out


def run() -> int:
    os.environ.update(PBJ_SHARED="/shared", HYPOTHESIS_PROFILE="ci", CI="true")
    os.chdir("/repo")
    installed = install_wheels(Path("/wheels"))
    print(f"installed {len(installed)} wheels: {', '.join(installed)}")
    sys.path.insert(0, "/repo/tests")
    import installed_check  # tests/installed_check.py

    started = time.perf_counter()
    status = installed_check.main(["--engine", "python", "--readme", "/repo/README.md"])
    print(f"installed_check took {time.perf_counter() - started:.1f} s")
    sys.path.remove("/repo/tests")
    if status:
        return status
    import pytest

    args = list(pytest_args.to_py()) if "pytest_args" in globals() else []  # noqa: F821 (set by run.mjs)
    files = [a for a in args if not a.startswith("-")] or suite_arguments(Path("/repo/tests/pyodide/suite.txt"))
    options = [a for a in args if a.startswith("-")]
    started = time.perf_counter()
    # no pytest-timeout or xdist here (no signals, no processes): the default options without them
    status = int(pytest.main(["-q", "-p", "no:cacheprovider", "-c", "/repo/pyproject.toml", "--rootdir", "/repo",
                              "-o", "addopts=", "-m", "not slow and not callgrind", *options, *files]))
    print(f"pytest took {time.perf_counter() - started:.1f} s")
    return status


run()
