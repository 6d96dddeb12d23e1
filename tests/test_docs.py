"""The documentation's Python examples run as tests.

Each ```python block of a Markdown file is executed in order, all blocks of a
file in one namespace (a fresh module registered in ``sys.modules``, so
forward references by name resolve as they would in user code). A failing
block is reported with its file and line.
"""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import pytest

from tests.conftest import REPO

DOCS = [*sorted((REPO / "docs").glob("*.md")), REPO / "README.md"]
_BLOCK = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)


def python_blocks(path: Path) -> list[tuple[int, str]]:
    """The ```python blocks of a Markdown file, as (first line number, code)."""
    text = path.read_text(encoding="utf-8")
    return [(text.count("\n", 0, m.start(1)) + 1, m.group(1)) for m in _BLOCK.finditer(text)]


def test_the_usage_guide_has_examples():
    blocks = python_blocks(REPO / "docs" / "usage-guide.md")
    assert len(blocks) >= 15
    assert all("assert" in code for _, code in blocks)


@pytest.mark.parametrize("path", [p for p in DOCS if p.exists()], ids=lambda p: p.name)
def test_examples_run(path):
    blocks = python_blocks(path)
    if not blocks:
        pytest.skip(f"{path.name} has no python blocks")
    name = "pbj_docs_" + re.sub(r"\W", "_", path.stem)
    module = types.ModuleType(name)
    sys.modules[name] = module
    try:
        for line, code in blocks:
            compiled = compile(code, f"{path.name}:{line}", "exec", dont_inherit=True)
            try:
                exec(compiled, module.__dict__)
            except Exception as exc:
                raise AssertionError(f"example at {path.name} line {line} failed: "
                                     f"{type(exc).__name__}: {exc}") from exc
    finally:
        del sys.modules[name]
