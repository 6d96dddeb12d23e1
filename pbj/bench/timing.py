"""Interleaved timing of benchmark cells: median, min and max of several runs after warm-up.

A *cell* is one operation on one batch (for example "forward writer, fresh objects, the first
200 STATE_CHANGES items"). It has an optional ``prepare()`` whose result is handed to
``run(prepared)``; only ``run`` is timed. "Fresh" cells use ``prepare`` to decode a new copy of
their batch for every run, outside the timed region.

The cells of one group are timed round by round: every round runs each cell once, in an order
that rotates from round to round, so that drift on a noisy machine (other processes, frequency
changes) falls on all of them alike. The cyclic garbage collector is switched off inside the
timed region only (as ``timeit`` does; a cell may ask to keep it on); it runs normally during
``prepare``.
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["Cell", "measure", "summary"]


@dataclass
class Cell:
    """One timed operation.

    Attributes:
        run: the operation; called with ``prepare()``'s result (or ``None``); its time is measured.
        prepare: builds the input of one run, untimed (``None``: no input).
        gc: keep the cyclic garbage collector on while timing (as applications run); off by default.
    """

    run: Callable[[Any], object]
    prepare: Callable[[], Any] | None = None
    gc: bool = False


def summary(samples_us: list[float]) -> dict:
    """``{"median_us", "min_us", "max_us", "runs", "samples_us"}`` of a list of µs figures."""
    return {
        "median_us": statistics.median(samples_us),
        "min_us": min(samples_us),
        "max_us": max(samples_us),
        "runs": len(samples_us),
        "samples_us": [round(s, 3) for s in samples_us],
    }


def measure(cells: dict[str, Cell], *, runs: int = 5, warmup: int = 1, min_time: float = 0.0,
            max_runs: int | None = None) -> dict[str, dict]:
    """Time each cell of ``cells``, interleaved; return ``{name: summary(...)}`` in µs per run.

    Args:
        cells: the operations to time together.
        runs: timed runs of each cell, at least.
        warmup: untimed rounds first (codec compilation, caches, allocator warm-up).
        min_time: seconds; keep adding rounds (up to ``max_runs``) while some cell has been timed
            for less than this in total. Cheap cells get more runs at little cost.
        max_runs: the most timed runs (default ``4 * runs``).

    Returns:
        ``{name: {"median_us", "min_us", "max_us", "runs", "samples_us"}}``.
    """
    names = list(cells)
    samples: dict[str, list[float]] = {name: [] for name in names}
    limit = max(runs, max_runs if max_runs is not None else 4 * runs)
    rounds = 0
    while True:
        timed = rounds >= warmup
        if timed:
            done = len(samples[names[0]])
            if done >= limit:
                break
            if done >= runs and all(sum(s) * 1e-6 >= min_time for s in samples.values()):
                break
        shift = rounds % len(names)
        for name in names[shift:] + names[:shift]:
            cell = cells[name]
            arg = cell.prepare() if cell.prepare is not None else None
            enabled = gc.isenabled()
            if not cell.gc:
                gc.disable()
            result = None
            try:
                t0 = time.perf_counter()
                result = cell.run(arg)
                elapsed = time.perf_counter() - t0  # freeing the result is not timed
            finally:
                if enabled:
                    gc.enable()
            del arg, result
            if timed:
                samples[name].append(elapsed * 1e6)
        rounds += 1
    return {name: summary(s) for name, s in samples.items()}
