"""``pbj bench otel``: the OpenTelemetry case (kept as a module of its own for its callers).

The case itself, its workers and its report live in :mod:`pbj.bench.cases` with the other
one-payload case (``descriptors``); this module is its ``otel`` entry point. The payload is
:mod:`pbj.bench.otel`'s SDK-made ``ExportTraceServiceRequest``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from pbj.bench.cases import QUICK_SPANS, ROWS, checks_passed, markdown

__all__ = ["QUICK_SPANS", "ROWS", "TARGET", "run", "checks_passed", "markdown", "callgrind_inputs", "execute"]

#: The one timed target: the whole request, one message.
TARGET = "ExportTraceServiceRequest"


def run(args: argparse.Namespace) -> dict:
    """Build the request, check and time every library ``args`` asks for (:func:`pbj.bench.cases.run`)."""
    from pbj.bench import cases

    return cases.run("otel", args)


def callgrind_inputs(args: argparse.Namespace, folder: Path) -> dict:
    """The inputs of the ``otel`` callgrind workers (:func:`pbj.bench.cases.callgrind_inputs`)."""
    from pbj.bench import cases

    return cases.callgrind_inputs("otel", args, folder)


def execute(args: argparse.Namespace) -> int:
    """``pbj bench otel`` for parsed arguments (:func:`pbj.bench.cases.execute`)."""
    from pbj.bench import cases

    return cases.execute("otel", args)
