"""What building the hot TransactionBody costs (pbj's constructors, with their value checks).

    python -m benchmarks.construction_cost              # timeit, best of 15 (µs per message)
    PYTHONHASHSEED=0 valgrind --tool=callgrind python -m benchmarks.construction_cost --builds 0
    PYTHONHASHSEED=0 valgrind --tool=callgrind python -m benchmarks.construction_cost --builds 1000

The difference of the two callgrind totals over 1,000 is the instruction count of one build
(GC off), the figure quoted in docs/usage-guide.md ("Values are checked when a message is built").
"""

from __future__ import annotations

import argparse
import gc
import timeit

from pbj.bench import hot_pbj
from pbj.bench.hot_values import HOT_VALUE


def main(argv: list[str] | None = None) -> None:
    """Time ``hot_pbj.build_hot`` (or, with ``--builds N``, just run it N times for callgrind)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--builds", type=int, default=None, help="build N messages and exit (for callgrind)")
    args = parser.parse_args(argv)
    build = hot_pbj.build_hot
    build(HOT_VALUE)  # the first build compiles the constructors
    gc.disable()
    if args.builds is not None:
        for _ in range(args.builds):
            build(HOT_VALUE)
        return
    best = min(timeit.repeat(lambda: build(HOT_VALUE), number=2000, repeat=15)) / 2000
    print(f"build: {best * 1e6:.2f} µs per message (best of 15 runs of 2000)")


if __name__ == "__main__":
    main()
