"""Golden tests of the emitted source: a change in what is generated shows in review.

``tests/golden/<name>.py.txt`` holds the source the emitters produce for the
classes of ``tests/codec_golden_classes.py`` (each with every class it
reaches, as one batch, emitted without compiling). To regenerate after an
intended change::

    PBJ_REGENERATE_GOLDEN=1 python -m pytest tests/test_codec_golden.py

and review the diff of ``tests/golden/``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import pbj
from pbj.codec.compiler import emit_batch, reachable
from tests.codec_golden_classes import GOLDEN

GOLDEN_DIR = Path(__file__).parent / "golden"


def emitted(cls: type) -> str:
    """The source of ``cls`` and every class it reaches, as one batch (nothing compiled)."""
    batch, _, _, texts = emit_batch(reachable(cls, compiled_stop=False))
    parts = [f"# ---- {mp.full_name}\n{text}" for mp, text in zip(batch.messages, texts, strict=True)]
    return "\n".join(parts)


@pytest.mark.parametrize("name", list(GOLDEN))
def test_emitted_source_is_the_golden_one(name):
    text = emitted(GOLDEN[name])
    path = GOLDEN_DIR / f"{name}.py.txt"
    if os.environ.get("PBJ_REGENERATE_GOLDEN"):
        GOLDEN_DIR.mkdir(exist_ok=True)
        path.write_text(text)
    assert path.exists(), f"{path} is missing: regenerate with PBJ_REGENERATE_GOLDEN=1"
    assert text == path.read_text(), f"the emitted source of {name} changed: review, then regenerate"


@pytest.mark.parametrize("name", list(GOLDEN))
def test_golden_source_compiles_and_is_what_runs(name):
    cls = GOLDEN[name]
    compile(emitted(cls), f"<golden {name}>", "exec")
    # the compiled class's own source is one part of the golden text
    assert pbj.source_of(cls) in emitted(cls)
