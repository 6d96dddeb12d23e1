"""Refused input against valid input of the same size: what a DecodeError costs on the engine in use.

Run it (after ``pip install -e '.[test]'``)::

    python -m benchmarks.refused_input              # 200 rounds per input
    python -m benchmarks.refused_input --rounds 50

The inputs are real: the shipped Hedera block's items (a small one near 7 KB and the largest), the
whole block, and the benchmark's hot ``TransactionBody`` (219 bytes). Each valid input is decoded,
and refused in two ways of about the same size: three junk bytes after it (``\\x01\\x02\\x03``: field
number 0 after the valid fields), and its last byte cut off (its last field cut at the end).
Every round of a case calls ``pbj.decode`` on each of the three inputs in turn (so they share the
machine's conditions), timed with the thread's CPU clock (``time.thread_time``); the minimum and
the median over the rounds, and each refused input's ratio to the valid one (the issue's target:
at most 2x on the native engine). It prints the machine, Python and the engine.
"""

from __future__ import annotations

import argparse
import gzip
import os
import platform
import statistics
import sys
import time
from importlib import resources


def _rounds(calls: dict[str, tuple], rounds: int, inner: int) -> dict[str, tuple[float, float]]:
    """(minimum, median) thread CPU seconds per call of each of ``calls`` (name -> (fn, data))."""
    times: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(rounds):
        for name, (fn, data) in calls.items():
            t0 = time.thread_time()
            for _ in range(inner):
                try:
                    fn(data)
                except ValueError:  # the DecodeError of a refused input (a ValueError)
                    pass
            times[name].append((time.thread_time() - t0) / inner)
    return {name: (min(t), statistics.median(t)) for name, t in times.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200, help="rounds per input (default 200)")
    args = parser.parse_args(argv)

    import pbj
    from pbj.bench import hot_pbj, hot_values

    shipped = resources.files("pbj") / "data"
    ns = pbj.load_descriptor_set((shipped / "hapi-v0.55.0.binpb").read_bytes())
    block_cls = ns["com.hedera.hapi.block.stream.Block"]
    item_cls = ns["com.hedera.hapi.block.stream.BlockItem"]
    raw = gzip.decompress((shipped / "000000000000000000000000000000497558.blk.gz").read_bytes())
    items = [pbj.encode(i) for i in pbj.decode(block_cls, raw).items]
    small = min(items, key=lambda p: abs(len(p) - 7300))
    large = max(items, key=len)
    hot_cls = hot_pbj.TransactionBody
    hot = pbj.encode(hot_pbj.build_hot(hot_values.HOT_VALUE))
    cases = [("hot TransactionBody", hot_cls, hot), (f"BlockItem {len(small) / 1000:.1f} KB", item_cls, small),
             ("largest BlockItem", item_cls, large), ("whole Block", block_cls, raw)]

    print(f"machine: {platform.machine()} {platform.processor() or ''} {os.cpu_count()} CPUs, {platform.system()}"
          f" {platform.release()}; Python {platform.python_version()} ({sys.implementation.name}); "
          f"pbj engine {pbj.engine()}")
    print(f"thread CPU time per decode, min and median of {args.rounds} rounds; refused: 3 junk bytes after it, "
          f"or its last byte cut")
    print(f"  {'input':<22} {'bytes':>9} {'valid ms':>10} {'junk ms':>10} {'cut ms':>10}   "
          f"ratio junk, cut (median; min)")
    worst = 0.0
    for name, cls, data in cases:
        junk = data + b"\x01\x02\x03"
        cut = data[:-1]
        for refused in (junk, cut):
            try:
                pbj.decode(cls, refused)
            except pbj.DecodeError:
                pass
            else:  # pragma: no cover - the inputs are refused by construction
                raise SystemExit(f"{name}: a refused input decoded")
        decode = lambda d, cls=cls: pbj.decode(cls, d)
        inner = max(1, 20000 // max(len(data), 1))
        got = _rounds({"valid": (decode, data), "junk": (decode, junk), "cut": (decode, cut)},
                      max(3, args.rounds // max(1, len(data) // 20000)), inner)
        (vmin, vmed), (jmin, jmed), (cmin, cmed) = got["valid"], got["junk"], got["cut"]
        worst = max(worst, jmed / vmed, cmed / vmed)
        print(f"  {name:<22} {len(data):9,} {vmed * 1000:10.3f} {jmed * 1000:10.3f} {cmed * 1000:10.3f}   "
              f"{jmed / vmed:5.2f}x, {cmed / vmed:5.2f}x ({jmin / vmin:5.2f}x, {cmin / vmin:5.2f}x)")
    print(f"worst ratio of refused to valid input (medians): {worst:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
