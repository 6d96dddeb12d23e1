"""Shared test set-up: hypothesis profiles and the path to ../shared.

Hypothesis profiles: ``ci`` is deterministic (``derandomize``: the same examples on every run, no
example database, so an earlier failure cannot come back on its own); ``dev`` draws fresh random
examples on every run and keeps failures in ``.hypothesis/`` to replay them first. ``ci`` is the
default where the ``CI`` environment variable is set, ``dev`` elsewhere; ``HYPOTHESIS_PROFILE``
chooses either. The random exploration with many examples is behind the ``slow`` marker.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("ci", deadline=None, print_blob=True, derandomize=True, database=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("dev", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE")
                      or ("ci" if os.environ.get("CI", "").lower() not in ("", "0", "false", "no") else "dev"))

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("PBJ_SHARED", REPO.parent / "shared"))

#: Where the shared material is expected, in one line (the first thing a checkout without it needs to know).
MISSING_SHARED = (f"pbj's tests need the shared test material (schemas, the real Hedera block, the conformance "
                  f"vectors) in {SHARED}, beside the repository, or a folder named by PBJ_SHARED; it is missing")


def pytest_configure(config) -> None:
    """Stop before collection, with one line, when the shared material is not there; keep
    ``load_proto``'s schema cache in a folder of the run's own (never the user's cache folder)."""
    if not (SHARED / "protos").is_dir():
        raise pytest.UsageError(MISSING_SHARED)
    if "PBJ_CACHE_DIR" not in os.environ:
        import tempfile

        os.environ["PBJ_CACHE_DIR"] = _OWN_CACHE[0] = tempfile.mkdtemp(prefix="pbj-test-schema-cache-")


_OWN_CACHE = [""]  # the schema cache folder this run made, removed when it ends


def pytest_unconfigure(config) -> None:
    if _OWN_CACHE[0]:
        import shutil

        shutil.rmtree(_OWN_CACHE[0], ignore_errors=True)


def _native_engine_built() -> bool:
    import pbj._native

    return pbj._native.available()


def pytest_collection_modifyitems(config, items) -> None:
    """Run the ``once`` tests once: a second run of the selection on the pure-Python engine
    (``PBJ_ENGINE=python`` where the native engine is built) skips them, since their outcome does not
    depend on the engine the run chooses; where the native engine is not built they run on the
    pure-Python engine."""
    if os.environ.get("PBJ_ENGINE") != "python" or not _native_engine_built():
        return
    skip = pytest.mark.skip(reason="the same whatever PBJ_ENGINE chooses: the run without PBJ_ENGINE=python makes it")
    for item in items:
        if item.get_closest_marker("once") is not None:
            item.add_marker(skip)


#: A test's ``record_property`` name for lines to print in the run's closing summary.
SUMMARY_PROPERTY = "pbj_summary"


def pytest_terminal_summary(terminalreporter) -> None:
    """Print the summaries tests recorded (the conformance replay's counts) after the run, not in its progress line."""
    for report in terminalreporter.getreports("passed") + terminalreporter.getreports("failed"):
        for name, text in report.user_properties:
            if name == SUMMARY_PROPERTY:
                terminalreporter.write_sep("-", report.nodeid.rpartition("::")[2])
                terminalreporter.write_line(text)


@pytest.fixture
def python_engine():
    """Run the test on the pure-Python engine (for tests of the generated Python code itself)."""
    import pbj
    before = pbj.engine()
    pbj.use_engine("python")
    try:
        yield
    finally:
        pbj.use_engine(before)
