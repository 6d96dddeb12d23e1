"""pbj's benchmarks: ``pbj bench`` (the runner is :mod:`pbj.bench.run`).

Shipped inside the package so that ``pip install 'pbj-protobuf[bench]'`` and ``pbj bench`` work on any
machine. Modules: :mod:`~pbj.bench.workload` (the block, its schema, the batches),
:mod:`~pbj.bench.suite` (what is timed), :mod:`~pbj.bench.timing` (how), :mod:`~pbj.bench.readers`
(reading every field, for pbj and Google), :mod:`~pbj.bench.worker` (one peer in its own process),
:mod:`~pbj.bench.report` (tables, JSON summary, plot), :mod:`~pbj.bench.hot_pbj` and
:mod:`pbj.bench.peers` (the hot message declared for each library), :mod:`~pbj.bench.otel` and
:mod:`~pbj.bench.otel_run` (``pbj bench otel``: a real OpenTelemetry trace export request). See
``docs/performance.md``.
"""

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """Run the benchmarks (see :func:`pbj.bench.run.main`)."""
    from pbj.bench.run import main as run_main

    return run_main(argv)
