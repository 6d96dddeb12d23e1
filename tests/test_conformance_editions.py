"""The conformance testee against the editions run of protobuf v36.0's runner (``--maximum_edition 2023``).

``../shared/conformance/vectors-editions.jsonl`` holds every request of that
run (6,558 tests) with the answer of Google's upb testee. 3,262 of them are
the tests of ``vectors.jsonl`` (``Proto2``, ``Proto3``), which
``tests/test_conformance.py`` replays already; ``test_replay_editions``
replays the others — the message types of ``editions/*.proto``
(``Editions_Proto2``, ``Editions_Proto3``, ``Editions``,
``EditionUnstable``) — through the testee's handler and judges each answer as
the runner does (``tests.test_conformance.judge``). Text-format tests are not
sent: they are counted as skipped (text format is another piece of work).

It prints the pass count per category and fails when a test that is not in
``conformance/failure_list_editions.txt`` fails, or when a listed test passes.
That file is the ``--failure_list`` of the editions run (docs/conformance.md),
so it lists the known binary and JSON failures of the whole run: those of the
editions message types, checked here, and those of the ``Proto2``/``Proto3``
tests, which must be exactly the entries of ``conformance/failure_list.txt``
(the same requests, replayed by ``tests/test_conformance.py``).
``python -m tests.test_conformance_editions`` replays all 6,558 vectors and
prints every failure with its reason.
"""

from __future__ import annotations

import io
import json
import sys
import time
from functools import cache

from tests.conftest import REPO, SHARED, SUMMARY_PROPERTY
from tests.oracle import GOOGLE_PROTOS, protoc
from tests.test_conformance import _failure_list as plain_failure_list
from tests.test_conformance import check_against_list, judge, read_failure_list

VECTORS = SHARED / "conformance" / "vectors-editions.jsonl"
FAILURE_LIST = REPO / "conformance" / "failure_list_editions.txt"
EDITIONS_SUITES = ("Editions_Proto2", "Editions_Proto3", "Editions", "EditionUnstable")
EDITIONS_PROTOS = ["test_messages_edition2023.proto", "test_messages_proto2_editions.proto",
                   "test_messages_proto3_editions.proto", "test_messages_edition_unstable.proto"]


@cache
def _google_editions() -> None:
    """Compile the editions test schemas into Google's default pool (``judge`` parses answers with them)."""
    protoc([GOOGLE_PROTOS / "editions" / f for f in EDITIONS_PROTOS], [GOOGLE_PROTOS])


def suite(name: str) -> str:
    """The runner's test suite of a test name: ``Proto2``, ``Editions_Proto3``, ``EditionUnstable`` …"""
    return name.split(".")[1]


def category(name: str) -> str:
    """``binary``, ``json`` or ``text``, then the suite: ``binary Editions_Proto2``."""
    if ".JsonInput." in name or name.endswith(".JsonOutput"):
        kind = "json"
    elif "TextFormat" in name:
        kind = "text"
    else:
        kind = "binary"
    return f"{kind} {suite(name)}"


def vectors(suites: tuple[str, ...] | None = None) -> list[dict]:
    """The vectors of ``vectors-editions.jsonl`` (of ``suites`` only, if given), in the runner's order."""
    with VECTORS.open() as f:
        out = [json.loads(line) for line in f]
    return out if suites is None else [v for v in out if suite(v["name"]) in suites]


def replay(suites: tuple[str, ...] | None) -> tuple[dict[str, list[int]], dict[str, str]]:
    """Judge every vector of ``suites``: (category -> [passed, skipped, total], failing name -> reason).

    Text-format vectors are not sent; they count as skipped (and fail: ``skipped`` is not a pass).
    """
    _google_editions()
    counts: dict[str, list[int]] = {}
    failures: dict[str, str] = {}
    for vector in vectors(suites):
        cat = category(vector["name"])
        c = counts.setdefault(cat, [0, 0, 0])
        c[2] += 1
        if cat.startswith("text"):
            c[1] += 1
            continue
        why = judge(vector)
        if why is None:
            c[0] += 1
        else:
            failures[vector["name"]] = why
    return counts, failures


def _failure_list() -> set[str]:
    return read_failure_list(FAILURE_LIST)


def _print_counts(counts: dict[str, list[int]], out=None) -> None:
    out = out or sys.stdout
    for cat in sorted(counts):
        passed, skipped, total = counts[cat]
        print(f"  {cat:24} {passed:5} / {total:5}   skipped {skipped}", file=out)


def test_replay_editions(record_property) -> None:
    started = time.perf_counter()
    counts, failures = replay(EDITIONS_SUITES)
    elapsed = time.perf_counter() - started
    out = io.StringIO()
    _print_counts(counts, out)
    record_property(SUMMARY_PROPERTY, f"conformance replay, editions message types ({elapsed:.1f} s):\n"
                                      + out.getvalue().rstrip("\n"))  # printed after the run (tests/conftest.py)
    assert sum(c[2] for c in counts.values()) == 6558 - 3262
    known = {n for n in _failure_list() if suite(n) in EDITIONS_SUITES}
    check_against_list(failures, known, FAILURE_LIST.name)


def test_every_message_type_is_answered() -> None:
    """No vector gets ``runtime_error`` "unknown message type" (issue 12: TestAllTypesEditionUnstable)."""
    _google_editions()
    unstable = vectors(("EditionUnstable",))
    assert len(unstable) == 4
    for v in unstable:
        assert judge(v) is None, v["name"]


def test_failure_list_names_only_binary_and_json_tests_of_the_run() -> None:
    """The runner fails suite 1 when its ``--failure_list`` names a test it does not run."""
    names = {v["name"] for v in vectors() if not category(v["name"]).startswith("text")}
    listed = _failure_list()
    assert listed <= names
    # the Proto2/Proto3 tests of the editions run are the requests of vectors.jsonl: the same known failures
    assert {n for n in listed if suite(n) not in EDITIONS_SUITES} == plain_failure_list()


def _main() -> None:  # pragma: no cover - a developer's tool: python -m tests.test_conformance_editions
    counts, failures = replay(None)
    for n, why in sorted(failures.items()):
        print(f"{n}\t{why}")
    _print_counts(counts, sys.stderr)


if __name__ == "__main__":  # pragma: no cover
    _main()
