"""Interleaved timing of benchmark cells: min, median and max of several runs after warm-up.

**The clock is the thread's CPU clock** (:func:`time.thread_time_ns`): the CPU time the
measuring thread itself spent, so time the machine gives to other processes is not counted.
On a shared machine a wall-clock median can be several times the CPU time (one run showed "0.25x
upb" on the wall clock where CPU time gave 0.52x and callgrind 0.54x); the CPU clock still
moves with cache and frequency effects of other jobs, so the *minimum* is the figure to compare
and the median shows the spread. Wall-clock time (:func:`time.perf_counter_ns`) is kept beside
it as a secondary figure (``wall_median_us``, ``wall_min_us``). Callgrind instruction counts
(``pbj bench --instructions``) stay the reference.

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

__all__ = ["Cell", "CLOCK", "measure", "summary", "scale"]


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


#: The clock every cell is timed with (recorded in each summary).
CLOCK = "thread_time"


def summary(samples_us: list[float], wall_us: list[float] | None = None) -> dict:
    """The figures of one cell: ``{"median_us", "min_us", "max_us", "runs", "samples_us", "clock"}`` of a
    list of CPU-time samples in µs, plus ``"wall_median_us"`` and ``"wall_min_us"`` when the wall-clock
    samples ``wall_us`` (µs, same runs) are given.

    Raises:
        statistics.StatisticsError: ``samples_us`` is empty.
    """
    out = {
        "median_us": statistics.median(samples_us),
        "min_us": min(samples_us),
        "max_us": max(samples_us),
        "runs": len(samples_us),
        "samples_us": [round(s, 3) for s in samples_us],
        "clock": CLOCK,
    }
    if wall_us:
        out["wall_median_us"] = statistics.median(wall_us)
        out["wall_min_us"] = min(wall_us)
    return out


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
        ``{name: summary(...)}``: thread CPU time in µs per run, median, min, max and every sample, and
        the wall-clock median and min beside them (see the module's docstring).
    """
    names = list(cells)
    samples: dict[str, list[float]] = {name: [] for name in names}
    walls: dict[str, list[float]] = {name: [] for name in names}
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
                w0, t0 = time.perf_counter_ns(), time.thread_time_ns()
                result = cell.run(arg)
                cpu, wall = time.thread_time_ns() - t0, time.perf_counter_ns() - w0  # freeing is not timed
            finally:
                if enabled:
                    gc.enable()
            del arg, result
            if timed:
                samples[name].append(cpu / 1e3)
                walls[name].append(wall / 1e3)
        rounds += 1
    return {name: summary(s, walls[name]) for name, s in samples.items()}


def scale(s: dict, divisor: float) -> dict:
    """``s`` (a :func:`summary`) with every time divided by ``divisor`` (per message instead of per run)."""
    out = dict(s)
    for key in ("median_us", "min_us", "max_us", "wall_median_us", "wall_min_us"):
        if key in out:
            out[key] = out[key] / divisor
    out["samples_us"] = [round(x / divisor, 4) for x in s["samples_us"]]
    return out
