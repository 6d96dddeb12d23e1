"""Each path between the shipped block and Arrow/Parquet: time, and the memory of reading Parquet back.

Run it (after ``pip install -e '.[test]'``)::

    python -m benchmarks.arrow_paths                 # 5 rounds; the Python column reader 1 round
    python -m benchmarks.arrow_paths --memory-only   # the Parquet read-backs only
    python -m benchmarks.arrow_paths --time-only     # the timings only
    python -m benchmarks.arrow_paths --alternating-only --rounds 9   # the four calls in turn only

Timed in one run, in turn, with the thread's CPU clock (``time.thread_time``),
minimum and median of ``--rounds`` rounds, on all 2,442 items of the block:

* ``decode_to_arrow`` (the wide table; ``unknown_fields="ignore"`` and the
  default ``"warn"``, which writes the rows back to find what was left out);
* ``decode_to_arrow(split=SPLIT_PATHS)`` (one table per kind);
* ``from_arrow`` of the wide table (on the native engine: the C writer, then
  the engine's decoder over every row in one call), its two parts apart
  (``encode_from_arrow``, then the engine's ``decode_many`` of those bytes),
  ``pbj.decode`` of each row's bytes in turn (what ``from_arrow`` did before:
  every object tracked by the cyclic garbage collector, which then runs again
  and again over them; also timed with the collector paused, in this
  benchmark's own process), and the Python column reader (one round);
* ``encode_from_arrow`` against ``from_arrow`` + ``pbj.encode``;
* once more, four calls alternating in each round: ``decode_to_arrow(unknown_fields="ignore")``,
  ``from_arrow``, ``encode_from_arrow`` and ``from_arrow`` + ``pbj.encode``, with the ratios
  ``from_arrow`` / ``decode_to_arrow`` and (``from_arrow`` + ``pbj.encode``) / ``encode_from_arrow``.

Then the memory: the wide table and each kind's table (``split``) are
written to Parquet (zstd) and each file is read back by ``pq.read_table`` in
a fresh interpreter, which reports its peak RSS (``VmHWM`` of
``/proc/self/status``, Linux) and CPU time (the interpreter with pyarrow
imported, before reading, is printed as the base).
"""

from __future__ import annotations

import argparse
import gc
import gzip
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from importlib import resources
from pathlib import Path

_READ_BACK = """
import sys, time
import pyarrow.parquet as pq
def peak():  # VmHWM: this process's peak RSS in KiB (ru_maxrss would carry the parent's from before exec)
    return int(next(l for l in open("/proc/self/status") if l.startswith("VmHWM")).split()[1])
base = peak()
t0 = time.process_time()
table = pq.read_table(sys.argv[1])
cpu = time.process_time() - t0
print(table.num_rows, table.num_columns, cpu, base, peak())
"""


def _timed(fn, rounds: int) -> tuple[tuple[float, float], object]:
    """(minimum, median) thread CPU seconds of ``rounds`` calls of ``fn``, and its last result."""
    times, out = [], None
    for _ in range(rounds):
        out = None
        gc.collect()
        t0 = time.thread_time()
        out = fn()
        times.append(time.thread_time() - t0)
    return (min(times), statistics.median(times)), out


def _alternating(fns: dict, rounds: int) -> dict[str, tuple[float, float]]:
    """(minimum, median) thread CPU seconds of each of ``fns``, called in turn in each of ``rounds`` rounds."""
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            out = None
            gc.collect()
            t0 = time.thread_time()
            out = fn()
            times[name].append(time.thread_time() - t0)
            del out
    return {name: (min(t), statistics.median(t)) for name, t in times.items()}


def read_back(path: Path) -> tuple[int, int, float, int, int]:
    """``pq.read_table(path)`` in a fresh interpreter: rows, columns, CPU seconds, base and peak RSS (KiB)."""
    out = subprocess.run([sys.executable, "-c", _READ_BACK, str(path)], capture_output=True, text=True, check=True,
                         timeout=600)
    rows, cols, cpu, base, peak = out.stdout.split()
    return int(rows), int(cols), float(cpu), int(base), int(peak)


def leaves(t) -> int:
    """The leaf columns of an Arrow type."""
    import pyarrow as pa

    if pa.types.is_struct(t):
        return sum(leaves(f.type) for f in t)
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return leaves(t.value_type)
    if pa.types.is_map(t):
        return leaves(t.key_type) + leaves(t.item_type)
    return 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="rounds per timed path (default 5)")
    parser.add_argument("--memory-only", action="store_true", help="only the Parquet read-backs")
    parser.add_argument("--time-only", action="store_true", help="only the timings")
    parser.add_argument("--alternating-only", action="store_true",
                        help="only the four calls alternating (the ratios of from_arrow and encode_from_arrow)")
    args = parser.parse_args(argv)

    import pyarrow as pa
    import pyarrow.parquet as pq

    import pbj
    import pbj.arrow
    from pbj.arrow.blocks import ITEM_TYPE, SPLIT_PATHS, block_items
    from pbj.arrow.convert import _batch_messages
    from pbj.arrow.encode import encode_from_arrow, messages_of_encodings
    from pbj.arrow.encode import explain as writer_explain
    from pbj.arrow.mapping import Options, plan_of

    shipped = resources.files("pbj") / "data"
    ns = pbj.load_descriptor_set((shipped / "hapi-v0.55.0.binpb").read_bytes())
    cls = ns[ITEM_TYPE]
    payloads = [bytes(p) for p in block_items(gzip.decompress(
        (shipped / "000000000000000000000000000000497558.blk.gz").read_bytes()))]
    print(f"machine: {platform.machine()} {os.cpu_count()} CPUs, {platform.system()} {platform.release()}, "
          f"load {os.getloadavg()[0]:.1f}; Python {platform.python_version()}; pbj engine {pbj.engine()} "
          f"(from_arrow: {writer_explain(cls)}); pyarrow {pa.__version__}")
    print(f"{len(payloads):,} BlockItems, {sum(map(len, payloads)):,} bytes")
    table = pbj.arrow.decode_to_arrow(cls, payloads, unknown_fields="ignore")
    tables = pbj.arrow.decode_to_arrow(cls, payloads, split=list(SPLIT_PATHS), unknown_fields="ignore")
    if not args.memory_only:
        pbj.arrow.from_arrow(table.slice(0, 20), cls)
        results: dict[str, tuple[float, float]] = {}
    if not args.memory_only and not args.alternating_only:
        results["decode_to_arrow, unknown_fields='ignore'"], _ = _timed(
            lambda: pbj.arrow.decode_to_arrow(cls, payloads, unknown_fields="ignore"), args.rounds)
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            results["decode_to_arrow (unknown fields said)"], _ = _timed(
                lambda: pbj.arrow.decode_to_arrow(cls, payloads), args.rounds)
            results["decode_to_arrow(split=...)"], _ = _timed(
                lambda: pbj.arrow.decode_to_arrow(cls, payloads, split=list(SPLIT_PATHS)), args.rounds)
        results["from_arrow (whole table)"], back = _timed(lambda: pbj.arrow.from_arrow(table, cls), args.rounds)
        results["  its encode_from_arrow"], encodings = _timed(lambda: encode_from_arrow(table, cls), args.rounds)
        results["  its decode_many of those bytes"], _ = _timed(
            lambda: messages_of_encodings(cls, encodings, 0), args.rounds)  # type: ignore[arg-type]
        results["pbj.decode of each row's bytes"], _ = _timed(
            lambda: [pbj.decode(cls, e, allow_partial=True) for e in encodings], args.rounds)  # type: ignore[union-attr]
        gc.disable()  # the benchmark's own process: how much of that is the cyclic collector's
        try:
            results["  the same, collector paused"], _ = _timed(
                lambda: [pbj.decode(cls, e, allow_partial=True) for e in encodings], args.rounds)  # type: ignore
        finally:
            gc.enable()
        results["from_arrow + pbj.encode"], _ = _timed(
            lambda: [pbj.encode(m) for m in pbj.arrow.from_arrow(table, cls)], args.rounds)
        plan = plan_of(cls, Options())
        results["Python column reader (1 round)"], slow = _timed(
            lambda: _batch_messages(cls, plan, table.to_batches()[0], 0), 1)
        assert back == slow
        base = results["decode_to_arrow, unknown_fields='ignore'"]
        print(f"  {'thread CPU':<42} {'min ms':>9} {'median ms':>10}   ratio to decode_to_arrow (ignore): min; median")
        for name, (low, mid) in results.items():
            print(f"  {name:<42} {low * 1000:9.1f} {mid * 1000:10.1f}   {low / base[0]:6.2f}x; {mid / base[1]:6.2f}x")
        efa = results["  its encode_from_arrow"]
        both = results["from_arrow + pbj.encode"]
        print(f"  encode_from_arrow is {both[0] / efa[0]:.1f}x (min) / {both[1] / efa[1]:.1f}x (median) faster than "
              "from_arrow + pbj.encode")
    if not args.memory_only:
        both_ways = _alternating({
            "decode_to_arrow": lambda: pbj.arrow.decode_to_arrow(cls, payloads, unknown_fields="ignore"),
            "from_arrow": lambda: pbj.arrow.from_arrow(table, cls),
            "encode_from_arrow": lambda: encode_from_arrow(table, cls),
            "from_arrow + pbj.encode": lambda: [pbj.encode(m) for m in pbj.arrow.from_arrow(table, cls)]},
            args.rounds)
        d2a, back_min_median = both_ways["decode_to_arrow"], both_ways["from_arrow"]
        print(f"  alternating, the four calls in turn, {args.rounds} rounds (thread CPU, min / median ms):")
        for name, (low, mid) in both_ways.items():
            print(f"    {name:<26} {low * 1000:8.1f} / {mid * 1000:8.1f}")
        print(f"    from_arrow is {back_min_median[0] / d2a[0]:.2f}x (min) / {back_min_median[1] / d2a[1]:.2f}x "
              "(median) of decode_to_arrow")
        efa, both = both_ways["encode_from_arrow"], both_ways["from_arrow + pbj.encode"]
        print(f"    encode_from_arrow is {both[0] / efa[0]:.2f}x (min) / {both[1] / efa[1]:.2f}x (median) faster "
              "than from_arrow + pbj.encode")
    if args.time_only or args.alternating_only:
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        print("Parquet (zstd) read back by pq.read_table in a fresh interpreter: rows, columns (leaves), "
              "file MB, table MB in memory, CPU s, peak RSS MB (base: the interpreter before reading)")
        files = {"wide table (every kind)": table}
        files.update({f"split: {kind}": t for kind, t in tables.items() if t.num_rows})
        for name, t in files.items():
            path = Path(tmp) / "t.parquet"
            pq.write_table(t, path, compression="zstd")
            rows, cols, cpu, base_rss, peak = read_back(path)
            width = sum(leaves(f.type) for f in t.schema)
            print(f"  {name:<48} {rows:>6,} {cols:>4} ({width:>6,}) {path.stat().st_size / 1e6:8.2f} "
                  f"{t.nbytes / 1e6:8.2f} {cpu:6.2f} {peak / 1024:8.0f} (base {base_rss / 1024:.0f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
