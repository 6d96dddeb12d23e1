"""What a new user meets first: the distribution name, the README, the API reference, the docs' wording.

* the distribution is ``pbj-protobuf`` (``pbj`` on PyPI is an unrelated 2013 package), the
  import name ``pbj``; every install hint names it;
* the README's first commands and its test command line (read by ``.ci/run``);
* the API reference builds with Sphinx, warnings as errors, and documents every public name;
* without ``../shared`` the run stops with one line saying what is missing and where;
* the conformance replay's summary comes after the run, not inside pytest's progress line;
* the user documentation holds no project bookkeeping.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib

import pytest

import pbj
from pbj import wkt
from tests.conftest import REPO

DISTRIBUTION = "pbj-protobuf"


def test_distribution_name():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["name"] == DISTRIBUTION
    assert project["scripts"]["pbj"] == "pbj.__main__:run"
    assert {"docs", "dask", "proto", "test"} <= set(project["optional-dependencies"])


def _text_files():
    for path in [REPO / "README.md", *REPO.glob("docs/*.md"), *REPO.glob("benchmarks/*"),
                 *REPO.glob("fuzz/*"), *REPO.rglob("pbj/**/*.py"), *REPO.glob("examples/*")]:
        if path.is_file() and path.suffix in (".md", ".py", ".txt", ""):
            yield path


def test_every_install_hint_names_the_distribution():
    # "pip install pbj", "pip install -U 'pbj[proto]'" ...: the argument itself is the old name
    wrong = re.compile(r"pip install\s+(?:-\S+\s+)*['\"]?pbj(?:\[|['\"`\s]|$)")
    assert wrong.search("pip install 'pbj[proto]'") and wrong.search("pip install -U pbj")
    assert not wrong.search("pip install . && .venv/bin/pbj demo")
    found = [f"{p.relative_to(REPO)}:{n}" for p in _text_files()
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if wrong.search(line)]
    assert not found, found
    hints = [p for p in _text_files() if f"pip install '{DISTRIBUTION}[" in p.read_text(encoding="utf-8")]
    assert len(hints) >= 5


def test_readme_first_lines_and_commands():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    head = "\n".join(text.splitlines()[:8])
    assert DISTRIBUTION in head and "import pbj" in head
    commands = [line for line in text.splitlines() if line.startswith("python3 ")]
    assert commands[0] == "python3 -m venv .venv && .venv/bin/pip install . && .venv/bin/pbj demo"
    # the line .ci/run takes: the first "python3 " line after the marker
    after = text.split("<!-- test-command -->", 1)[1]
    test_line = next(line for line in after.splitlines() if line.startswith("python3 "))
    assert test_line == ("python3 -m venv .venv && .venv/bin/pip install --no-compile -e '.[test]' && "
                         ".venv/bin/python -m pytest -q -n auto --dist loadfile")
    for doc in ("docs/loading-schemas.md", "docs/well-known-types.md", "docs/parallel.md", "docs/api/index.rst"):
        assert f"({doc})" in text, doc
        assert (REPO / doc).is_file()


@pytest.mark.static
def test_api_reference_builds_without_warnings(tmp_path):
    pytest.importorskip("sphinx", reason="needs the docs extra: pip install -e '.[docs]'")
    out = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
                          str(REPO / "docs" / "api"), str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    documented = set(re.findall(r'id="(pbj\.[\w.]+)"', (tmp_path / "pbj.html").read_text(encoding="utf-8")))
    assert {f"pbj.{n}" for n in pbj.__all__} <= documented
    documented = set(re.findall(r'id="(pbj\.wkt\.\w+)"', (tmp_path / "wkt.html").read_text(encoding="utf-8")))
    assert {f"pbj.wkt.{n}" for n in wkt.__all__} <= documented
    assert "Raises" in (tmp_path / "wkt.html").read_text(encoding="utf-8")
    # the reverse writer's protocol has its own page, not the user API's
    writer = {f"pbj.ReverseBuffer.writer_{n}" for n in ("begin", "grow", "commit", "abort")}
    assert not writer & documented_on(tmp_path / "pbj.html")
    assert writer <= documented_on(tmp_path / "writer-protocol.html")
    # pbj.arrow has its own page: every public name of the package, and decode_to_arrow's fallbacks
    from pbj import arrow

    arrow_names = {f"pbj.arrow.{n}" for n in arrow.__all__ if n != "require_pyarrow"}
    assert arrow_names <= documented_on(tmp_path / "arrow.html")
    assert "pbj.arrow.native.explain" in documented_on(tmp_path / "arrow.html")


def documented_on(page) -> set[str]:
    """The ids of the names a built page of the API reference documents."""
    return set(re.findall(r'id="(pbj\.[\w.]+)"', page.read_text(encoding="utf-8")))


def test_missing_shared_is_one_line(tmp_path):
    env = {**os.environ, "PBJ_SHARED": str(tmp_path / "nowhere")}
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_smoke.py"],
                         capture_output=True, text=True, cwd=REPO, env=env, timeout=300)
    assert out.returncode != 0
    lines = [line for line in (out.stdout + out.stderr).splitlines() if line.strip()]
    assert len(lines) == 1, lines
    assert "need the shared test material" in lines[0] and str(tmp_path / "nowhere") in lines[0]
    assert "protoc" not in lines[0]


def test_conformance_summary_is_printed_after_the_run():
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "tests/test_conformance.py::test_replay"], capture_output=True, text=True, cwd=REPO,
                         timeout=600)
    assert out.returncode == 0, out.stdout
    lines = out.stdout.splitlines()
    assert re.fullmatch(r"\.\s+\[100%\]", lines[0]), lines[:3]
    start = next(i for i, line in enumerate(lines) if line.startswith("conformance replay ("))
    assert re.fullmatch(r"\s+binary proto3\s+707 / 707", lines[start + 2])


@pytest.mark.parametrize("doc, phrase", [
    ("docs/security.md", "The lead has to decide"),
    ("docs/performance.md", "## Goals of the issue"),
    ("docs/performance.md", "targets are missed"),
])
def test_user_docs_hold_no_project_bookkeeping(doc, phrase):
    assert phrase not in (REPO / doc).read_text(encoding="utf-8")


#: Words of the project's own bookkeeping, which a user of pbj cannot look up ("issue 24",
#: "the issue's targets", "issue 11 target"), and a phrase written twice in a row.
_BOOKKEEPING = re.compile(r"\bissues?\s+\d+|\bthe\s+issue\b|\bissue's\b|\bround\s+\d+\b", re.IGNORECASE)
_DOUBLED = re.compile(r"\b((?:[a-z]\w*\s+){4,12}[a-z]\w*)\s+\1\b", re.IGNORECASE)


def _user_docs() -> list:
    return [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md")), *sorted((REPO / "docs").rglob("*.rst"))]


def test_user_docs_carry_no_project_internal_words():
    found = [f"{doc.relative_to(REPO)}:{text[:m.start()].count(chr(10)) + 1}: {m.group(0)!r}"
             for doc in _user_docs() for text in [doc.read_text(encoding="utf-8")]
             for m in (*_BOOKKEEPING.finditer(text), *_DOUBLED.finditer(text))]
    assert found == []


def test_the_bookkeeping_check_finds_what_it_looks_for():
    assert _BOOKKEEPING.search("after issue 24's decoder work") and _BOOKKEEPING.search("the issue's targets")
    assert _BOOKKEEPING.search("| issue 11 target |") and not _BOOKKEEPING.search("the target of the call")
    assert _DOUBLED.search("A binary32 NaN is widened by pbj itself a binary32 NaN is widened by pbj itself rather")
    assert not _DOUBLED.search("the values of the field and the values of the map")


def test_bench_doc_tables_leave_the_goals_out():
    """``pbj bench --update-doc`` writes the measurements without the project's goals table."""
    from pbj.bench import report

    machine = {"cpu_model": "cpu", "cpus": 2, "platform": "linux", "python_implementation": "CPython",
               "python": "3.11"}
    results = {"machine": machine, "config": {"timing": {"runs": 1, "warmup": 0}}, "created": "today",
               "libraries": {"pbj": {"available": True, "version": "0.1.0"}}, "targets": {},
               "block": {"source": "b", "bytes": 1, "items": 1},
               "summary": {"hot_speedup": {}, "reverse_vs_forward": {}, "vs_upb": {},
                           "goals": [{"goal": "a goal", "value": 1.0, "unit": "x", "met": False}]}}
    assert "## Performance targets of the project" in report.markdown(results, header=False, goals=True)
    assert "**not met**" in report.markdown(results, header=False, goals=True)
    assert "targets" not in report.markdown(results, header=False)  # what pbj bench prints by default
    assert "Goals" not in report.markdown(results, header=False, goals=False)
    assert "goals=False" in (REPO / "pbj" / "bench" / "run.py").read_text()  # what --update-doc calls


def test_bench_help_leaves_the_maintainer_switches_out():
    """``pbj bench --help`` lists the user's options; ``--update-doc`` and ``--goals`` (maintainers') are
    accepted but not listed, and documented as maintainers' switches in docs/performance.md."""
    from pbj.bench.run import build_parser

    parser = build_parser()
    text = parser.format_help()
    assert "--update-doc" not in text and "--goals" not in text and "--quick" in text
    args = parser.parse_args(["--update-doc", "x.md", "--goals"])
    assert args.update_doc == "x.md" and args.goals is True
    doc = (REPO / "docs" / "performance.md").read_text(encoding="utf-8")
    assert "`--update-doc` and `--goals` are maintainers' switches, left out of `pbj bench --help`" in doc
