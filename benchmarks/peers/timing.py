"""Interleaved ``timeit`` rounds: every operation is timed once per round, medians reported."""

from __future__ import annotations

import statistics
import timeit
from collections.abc import Callable


def measure(ops: dict[str, Callable[[], object]], rounds: int = 5, min_time: float = 0.2) -> dict:
    """Time each zero-argument callable of ``ops``; return µs per call for each op.

    The loop count of an op is calibrated once (``Timer.autorange``, at least ``min_time``
    seconds a round); then ``rounds`` rounds run the ops in turn, so drift hits them alike.
    Result: ``{op: {"median_us": m, "min_us": b, "rounds_us": [...], "number": n}}``; on a
    noisy machine the min (best round) is the steadier figure, the median the one to report.
    """
    timers = {name: timeit.Timer(fn) for name, fn in ops.items()}
    numbers = {}
    for name, timer in timers.items():
        number, elapsed = timer.autorange()
        numbers[name] = max(1, int(number * min_time / max(elapsed, 1e-9))) if elapsed < min_time else number
    samples: dict[str, list[float]] = {name: [] for name in ops}
    for _ in range(rounds):
        for name, timer in timers.items():
            samples[name].append(timer.timeit(numbers[name]) / numbers[name] * 1e6)
    return {
        name: {
            "median_us": statistics.median(s),
            "min_us": min(s),
            "rounds_us": s,
            "number": numbers[name],
        }
        for name, s in samples.items()
    }
