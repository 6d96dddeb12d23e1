"""ruff over the package and the tests, with the project's settings ([tool.ruff] in pyproject.toml).

ruff is in the ``static`` extra (``pip install -e '.[test,static]'``; CI's static step runs these
tests); they are skipped where it is not installed.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys

import pytest

from tests.conftest import REPO

pytestmark = [pytest.mark.static,
              pytest.mark.skipif(importlib.util.find_spec("ruff") is None,
                                 reason="ruff is not installed: pip install -e '.[test,static]'")]


def _ruff(*args: str, cwd=REPO) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def test_ruff_is_clean_on_pbj_and_tests():
    out = _ruff("pbj", "tests")
    assert out.returncode == 0, out.stdout[-5000:] + out.stderr[-2000:]
    assert "All checks passed!" in out.stdout


def test_ruff_reports_with_the_project_settings(tmp_path):
    """The check above can fail: with the same settings, an unused import and an unsorted block are reported."""
    bad = tmp_path / "bad.py"
    bad.write_text("import sys\nimport os\n\nprint(os.sep)\n")
    out = _ruff("--config", str(REPO / "pyproject.toml"), "--output-format", "concise", str(bad), cwd=tmp_path)
    assert out.returncode == 1, out.stdout + out.stderr
    codes = set(re.findall(r"^bad\.py:\d+:\d+: ([A-Z]+[0-9]+) ", out.stdout, re.MULTILINE))
    assert codes == {"F401", "I001"}, out.stdout
