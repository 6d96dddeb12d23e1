"""What a decoded block holds in memory, and what freeing it costs: pbj (either engine) beside upb.

    python -m benchmarks.block_memory                  # pbj's engine in use, then upb
    PBJ_ENGINE=python python -m benchmarks.block_memory
    python -m benchmarks.block_memory --breakdown      # and where pbj's bytes go, by type

For the shipped Hedera block (or ``--block FILE`` with ``--descriptor-set FILE``), decoded as one
``Block``:

* **held**: the bytes allocated through Python's allocators that the decoded object keeps
  (``tracemalloc``: traced memory after the decode minus before, the input not counted), as a
  multiple of the input's size; ``peak`` is the most traced during the decode. upb allocates its
  arena with ``malloc``, which ``tracemalloc`` does not see; for upb (and for pbj, alike) the
  resident-set growth (``/proc/self/statm``) is printed too, a coarser figure (pages, allocator
  reuse);
* **free**: the thread's CPU time (``time.thread_time``) of dropping the last reference, best of
  ``--runs``, the garbage collector off during the timed region and each result decoded fresh;
* **breakdown** (``--breakdown``): every object the decoded block reaches, once each (shared
  sub-messages once), by type, with ``sys.getsizeof`` (which includes the cyclic collector's
  16-byte header of tracked types): message objects with their slots, ``OneOf`` values, ints,
  bytes, strings, tuples, maps. Values CPython keeps shared anyway (small ints, enum members,
  ``None``, the empty tuple, bytes and string) count zero.

Figures and their reading are in docs/performance.md, "Memory".
"""

from __future__ import annotations

import argparse
import collections
import gc
import os
import subprocess
import sys
import time
import tracemalloc

from pbj.bench import workload


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _free_time(decode, runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        obj = decode()
        gc.collect()
        was = gc.isenabled()
        gc.disable()
        try:
            t0 = time.thread_time()
            del obj
            best = min(best, time.thread_time() - t0)
        finally:
            if was:
                gc.enable()
    return best


def measure(name: str, decode, size: int, runs: int) -> dict:
    """``{"held", "peak", "rss", "free_ms"}`` of ``decode()`` (held, peak, rss as multiples of ``size``)."""
    decode()  # compile, warm the caches
    gc.collect()
    before = _rss()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    obj = decode()
    held, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss = _rss() - before
    del obj
    out = {"held": (held - base) / size, "peak": (peak - base) / size, "rss": rss / size,
           "free_ms": _free_time(decode, runs) * 1e3}
    print(f"{name:12s} held {out['held']:5.2f}x  peak {out['peak']:5.2f}x  rss +{out['rss']:5.2f}x  "
          f"free {out['free_ms']:6.2f} ms (thread CPU, best of {runs})")
    return out


def breakdown(obj, size: int) -> None:
    """Print every object ``obj`` reaches, once each, by type: count, bytes, multiple of ``size``."""
    from pbj.schema import info, is_message

    by, count = collections.Counter(), collections.Counter()
    seen: set[int] = set()
    stack = [obj]
    while stack:
        o = stack.pop()
        if id(o) in seen:
            continue
        seen.add(id(o))
        t = type(o)
        key = t.__name__
        if is_message(t):
            key = "message"
            stack.extend(getattr(o, n) for n in info(t).attr_order)
            stack.append(o._pbj_unknown)
        elif isinstance(o, dict):
            key = "FrozenMap" if o else "FrozenMap (shared empty)"
            stack.extend(o.keys())
            stack.extend(o.values())
        elif isinstance(o, tuple):
            stack.extend(o)
            if not o:
                key = "tuple (shared empty)"
        shared = (o is None or isinstance(o, bool) or hasattr(t, "__members__") or hasattr(t, "_value2member_map_")
                  or (type(o) is int and -5 <= o <= 256) or (isinstance(o, (bytes, str, tuple)) and not o))
        by[key] += 0 if shared else sys.getsizeof(o)
        count[key] += 1
    total = sum(by.values())
    print(f"reached, once each: {total:,} bytes = {total / size:.2f}x input")
    print(f"{'type':26s} {'objects':>9s} {'bytes':>11s} {'x input':>8s}")
    for key, n in by.most_common():
        print(f"{key:26s} {count[key]:9,d} {n:11,d} {n / size:8.2f}")


def main(argv: list[str] | None = None) -> None:
    """Measure pbj (the engine in use) and upb on the block; see the module docstring."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--block", help="a block file, raw or gzip (default: the shipped one)")
    parser.add_argument("--descriptor-set", help="its schema as a FileDescriptorSet (default: HAPI v0.55.0)")
    parser.add_argument("--runs", type=int, default=7, help="frees timed, best taken (default 7)")
    parser.add_argument("--breakdown", action="store_true", help="where pbj's bytes go, by type")
    parser.add_argument("--no-upb", action="store_true", help="pbj only")
    parser.add_argument("--one", choices=["pbj", "upb"], help=argparse.SUPPRESS)  # one library, this process
    args = parser.parse_args(argv)
    if args.one is None:  # each library in a process of its own: neither inherits the other's free pages
        common = list(argv if argv is not None else sys.argv[1:])
        for one in ("pbj",) if args.no_upb else ("pbj", "upb"):
            subprocess.run([sys.executable, "-m", "benchmarks.block_memory", *common, "--one", one], check=True)
        return
    schema = workload.load_schema(args.descriptor_set)
    w = workload.load_workload(args.block, schema)
    raw, size = w.raw, len(w.raw)
    if args.one == "pbj":
        import pbj

        print(f"block {w.source}: {size:,} bytes; CPython {sys.version.split()[0]}")
        measure(f"pbj {pbj.engine()}", lambda: pbj.decode(w.block_cls, raw), size, args.runs)
        if args.breakdown:
            breakdown(pbj.decode(w.block_cls, raw), size)
    else:
        from pbj.bench.peers import google_peer

        google_peer.select_backend("upb")
        cls = google_peer.load_classes(schema, [w.block_type])[w.block_type]
        measure(f"upb ({google_peer.implementation()})", lambda: cls.FromString(raw), size, args.runs)


if __name__ == "__main__":
    main()
