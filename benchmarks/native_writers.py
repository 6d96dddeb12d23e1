"""The Java PBJ team's writer experiment on pbj's native engine: forward vs reverse writer, fresh vs
sizes cached, the block's first 200 items vs all of them, and per BlockItem kind.

Prints a Markdown table of microseconds per batch (best of ``--runs`` runs, the garbage collector
off; the thread's CPU clock, ``time.thread_time``) for both engines; ``python -m
benchmarks.native_writers [--runs N]``. CPU time on a shared machine still drifts with what the
other processes do to the caches: read the ratios (rev/fwd), not the absolute figures.
"""

from __future__ import annotations

import argparse
import collections
import gc
import time

import pbj
from fuzz import targets as T


def _best(fn, batch, runs: int) -> float:
    out = []
    for _ in range(runs):
        objs = batch()
        t = time.thread_time()
        for o in objs:
            fn(o)
        out.append(time.thread_time() - t)
    return min(out) * 1e6


def measure(engine: str, runs: int) -> dict[str, dict[str, float]]:
    """``{batch name: {"fwd fresh", "rev fresh", "fwd cached", "rev cached"}}`` in µs, on ``engine``."""
    pbj.use_engine(engine)
    cls = T.target("blockitem").cls
    raw = T.block_items()
    by_kind: dict[str, list[bytes]] = collections.defaultdict(list)
    for b in raw:
        by_kind[pbj.decode(cls, b).item.which].append(b)
    batches = {"first 200 items": list(raw[:200]), "all items": list(raw)}
    batches.update({k: v for k, v in sorted(by_kind.items()) if len(v) > 1})
    out = {}
    for name, items in batches.items():
        def fresh(items=items):
            return [pbj.decode(cls, b) for b in items]
        cached = fresh()
        for o in cached:
            pbj.encode(o)
        out[name] = {
            "fwd fresh": _best(pbj.encode, fresh, runs),
            "rev fresh": _best(lambda o: pbj.encode(o, reverse=True), fresh, runs),
            "fwd cached": _best(pbj.encode, lambda cached=cached: cached, runs),
            "rev cached": _best(lambda o: pbj.encode(o, reverse=True), lambda cached=cached: cached, runs),
            "n": len(items),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    gc.disable()
    engines = ["native", "python"] if pbj.engine() == "native" else ["python"]
    results = {e: measure(e, args.runs) for e in engines}
    print("| batch | items | engine | fwd fresh | rev fresh | rev/fwd fresh | fwd cached | rev cached "
          "| rev/fwd cached |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in results[engines[0]]:
        for e in engines:
            r = results[e][name]
            print(f"| {name} | {r['n']:,} | {e} | {r['fwd fresh']:,.0f} | {r['rev fresh']:,.0f} | "
                  f"{r['rev fresh'] / r['fwd fresh']:.2f} | {r['fwd cached']:,.0f} | {r['rev cached']:,.0f} | "
                  f"{r['rev cached'] / r['fwd cached']:.2f} |")


if __name__ == "__main__":
    main()
