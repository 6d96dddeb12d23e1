"""Instructions of ``pbj.arrow.decode_to_arrow`` on the shipped block's items, counted by callgrind.

Run it (valgrind on PATH; after ``pip install -e '.[test]'``)::

    python -m benchmarks.arrow_instructions              # every 16th item (153 of 2,442), 2 calls a region
    python -m benchmarks.arrow_instructions --walk       # and decode + to_arrow beside it (slow under callgrind)
    PBJ_ENGINE=python python -m benchmarks.arrow_instructions --every 64

Wall time on a shared machine drifts; the number of instructions an operation executes does not.
The worker runs under valgrind's callgrind (``benchmarks.callgrind_regions``: each region between
two calls of ``os.getppid``) and counts, in one process, after one unmarked warm-up call of each:

* ``decode_to_arrow``: ``pbj.arrow.decode_to_arrow(BlockItem, payloads)`` (on the native engine the
  wire walker's column sink, ``pbj/_native/arrow.c``; on the pure-Python engine decode + to_arrow);
* with ``--walk``, ``decode + to_arrow``: ``pbj.arrow.to_arrow([pbj.decode(BlockItem, p) for p in payloads],
  BlockItem)``;
* with ``--back``, the way back from that table: ``encode_from_arrow``, ``from_arrow`` (on the
  native engine the C column writer, then the engine's decoder over all the rows in one call) and
  ``from_arrow`` + ``pbj.encode`` of each message, each against ``decode_to_arrow``, and
  ``from_arrow`` + ``pbj.encode`` against ``encode_from_arrow``;

each ``--calls`` times in its region, less an empty region, divided by the calls: instructions per
call over all the payloads. It prints the machine, Python, the engine and the items; compare two
trees (or two engines) by running it in each, at the same load. The garbage collector is off
during the regions (``gc.disable()`` after one collection), so every run executes the same code;
``--collector on`` leaves it running at its default thresholds instead (still the same code each
run: its collections come at the same allocations), counting the collector's work too, which is
most of what building many message objects costs.
"""

from __future__ import annotations

import argparse
import gc
import gzip
import os
import platform
import sys
from importlib import resources
from pathlib import Path

#: The operations counted, in order.
COUNTED = ("decode_to_arrow", "decode + to_arrow", "encode_from_arrow", "from_arrow", "from_arrow + encode")


def _payloads(every: int) -> tuple[type, list[bytes]]:
    import pbj

    shipped = resources.files("pbj") / "data"
    ns = pbj.load_descriptor_set((shipped / "hapi-v0.55.0.binpb").read_bytes())
    raw = gzip.decompress((shipped / "000000000000000000000000000000497558.blk.gz").read_bytes())
    items = pbj.decode(ns["com.hedera.hapi.block.stream.Block"], raw).items[::every]
    return ns["com.hedera.hapi.block.stream.BlockItem"], [pbj.encode(i) for i in items]


def count_worker(folder: Path, every: int, calls: int, walk: bool, back: bool = False,
                 collector: bool = False) -> None:
    """Under callgrind: each operation of :data:`COUNTED` asked for in a marked region, then an empty one."""
    import pbj
    import pbj.arrow

    item_cls, payloads = _payloads(every)
    to_arrow = pbj.arrow.decode_to_arrow(item_cls, payloads)  # compiled, checked, warmed up (unmarked)
    assert to_arrow.equals(pbj.arrow.to_arrow([pbj.decode(item_cls, p) for p in payloads], item_cls))
    ops = {"decode_to_arrow": lambda: pbj.arrow.decode_to_arrow(item_cls, payloads),
           "decode + to_arrow": lambda: pbj.arrow.to_arrow([pbj.decode(item_cls, p) for p in payloads], item_cls),
           "encode_from_arrow": lambda: pbj.arrow.encode_from_arrow(to_arrow, item_cls),
           "from_arrow": lambda: pbj.arrow.from_arrow(to_arrow, item_cls),
           "from_arrow + encode": lambda: [pbj.encode(m) for m in pbj.arrow.from_arrow(to_arrow, item_cls)],
           "base": lambda: None}
    if not walk:
        del ops["decode + to_arrow"]
    if back:
        assert pbj.arrow.from_arrow(to_arrow, item_cls) == [pbj.decode(item_cls, p) for p in
                                                            pbj.arrow.encode_from_arrow(to_arrow, item_cls)]
    else:
        del ops["encode_from_arrow"], ops["from_arrow"], ops["from_arrow + encode"]
    mark = os.getppid
    gc.collect()
    if not collector:
        gc.disable()  # this benchmark's own process, so that every run executes the same code
    for op in ops.values():
        mark()
        for _ in range(calls):
            op()
        mark()
    (folder / "regions.txt").write_text("\n".join(ops))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--every", type=int, default=16, help="take every N-th item of the block (default 16)")
    parser.add_argument("--calls", type=int, default=2, help="calls of each operation a region (default 2)")
    parser.add_argument("--walk", action="store_true", help="count decode + to_arrow too")
    parser.add_argument("--back", action="store_true", help="count encode_from_arrow and from_arrow too")
    parser.add_argument("--collector", choices=("off", "on"), default="off",
                        help="the cyclic garbage collector during the regions (default off)")
    parser.add_argument("--count-worker", metavar="DIR", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.count_worker:
        count_worker(Path(args.count_worker), args.every, args.calls, args.walk, args.back, args.collector == "on")
        return 0
    from benchmarks.callgrind_regions import count_regions

    counts = count_regions("benchmarks.arrow_instructions", "--every", str(args.every), "--calls", str(args.calls),
                           "--collector", args.collector, *(["--walk"] if args.walk else []),
                           *(["--back"] if args.back else []))
    if counts is None:
        return 2
    import pbj

    _, payloads = _payloads(args.every)
    print(f"machine: {platform.machine()} {os.cpu_count()} CPUs, {platform.system()} {platform.release()}; "
          f"Python {platform.python_version()}; pbj engine {pbj.engine()}; callgrind, {args.calls} calls a region; "
          f"cyclic collector {args.collector}")
    print(f"{len(payloads)} BlockItems (every {args.every}th of the block), {sum(map(len, payloads)):,} bytes")
    per_call = {op: (counts[op] - counts["base"]) / args.calls for op in COUNTED if op in counts}
    for op, n in per_call.items():
        print(f"  {op:<20} {n:>16,.0f} instructions a call   {n / per_call['decode_to_arrow']:6.2f}x decode_to_arrow")
    if "encode_from_arrow" in per_call:
        print(f"  from_arrow + encode is {per_call['from_arrow + encode'] / per_call['encode_from_arrow']:.2f}x "
              "encode_from_arrow")
    return 0


if __name__ == "__main__":
    sys.exit(main())
