"""pbj's benchmarks: ``pbj bench`` (the runner is :mod:`pbj.bench.run`).

Shipped inside the package so that ``pip install 'pbj-protobuf[bench]'`` and ``pbj bench`` work on any
machine. Modules: :mod:`~pbj.bench.workload` (the block, its schema, the batches),
:mod:`~pbj.bench.suite` (what is timed), :mod:`~pbj.bench.timing` (how), :mod:`~pbj.bench.readers`
(reading every field, for pbj and Google), :mod:`~pbj.bench.worker` (one library in its own process,
pbj's two engines included), :mod:`~pbj.bench.report` (tables, JSON summary, plot),
:mod:`~pbj.bench.hot_pbj` and :mod:`pbj.bench.peers` (the hot message declared for each library;
betterproto2's classes generated from a descriptor set), :mod:`~pbj.bench.cases` (``pbj bench otel``,
``pbj bench descriptors``: one real payload, every library; :mod:`~pbj.bench.otel` makes the
OpenTelemetry request), :mod:`~pbj.bench.instructions` (``--instructions``: callgrind counts, the
reference). Timing is the thread's CPU clock. See ``docs/performance.md``.
"""

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """Run the benchmarks (see :func:`pbj.bench.run.main`)."""
    from pbj.bench.run import main as run_main

    return run_main(argv)
