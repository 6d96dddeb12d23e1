"""The shipped block's items to an Arrow table: pbj's decode_to_arrow, to_arrow(decode(...)), protarrow on upb.

Run it (after ``pip install -e '.[test]'``: pyarrow, protarrow and Google's protobuf)::

    python -m benchmarks.arrow_block                  # every 8th item (306 of 2,442), 3 rounds
    python -m benchmarks.arrow_block --every 1        # all items (protarrow takes many minutes)

Three ways to the same items' table, timed in one run, in turn, with the
thread's CPU clock (``time.thread_time``): the minimum and the median of
``--rounds`` rounds each:

* ``decode_to_arrow``: ``pbj.arrow.decode_to_arrow(BlockItem, payloads)``
  (on the native engine: the C walker, ``pbj/_native/arrow.c``, no message
  objects);
* ``decode+to_arrow``: ``pbj.arrow.to_arrow([pbj.decode(BlockItem, p) for p in payloads])``
  (pbj's own decode and walk);
* ``upb+protarrow``: ``[Item.FromString(p) for p in payloads]`` with Google's
  upb backend, then ``protarrow.messages_to_table`` (enums as dictionary
  strings, recursion skipped: its closest configuration to pbj's mapping).

The payloads are each item's bytes, so every contender decodes. It prints the
machine, Python, the engine, each time, and ``decode_to_arrow``'s ratio to
each other contender (the issue's targets: <= 0.5x protarrow with its decode,
<= 1.0x pbj's own decode + walk), on the medians and on the minima.
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


def _timed(fn, rounds: int) -> tuple[tuple[float, float], object]:
    """(minimum, median) thread CPU seconds of ``rounds`` calls of ``fn``, and its last result."""
    times, out = [], None
    for _ in range(rounds):
        t0 = time.thread_time()
        out = fn()
        times.append(time.thread_time() - t0)
    return (min(times), statistics.median(times)), out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--every", type=int, default=8, help="take every N-th item of the block (default 8)")
    parser.add_argument("--rounds", type=int, default=5,
                        help="rounds per contender (default 5; protarrow: --protarrow-rounds)")
    parser.add_argument("--protarrow-rounds", type=int, default=2, help="rounds of protarrow (default 2: it is slow)")
    parser.add_argument("--no-protarrow", action="store_true", help="time pbj only")
    args = parser.parse_args(argv)

    import pyarrow as pa
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    from google.protobuf.internal import api_implementation

    import pbj
    import pbj.arrow

    shipped = resources.files("pbj") / "data"
    schema = (shipped / "hapi-v0.55.0.binpb").read_bytes()
    ns = pbj.load_descriptor_set(schema)
    item_cls = ns["com.hedera.hapi.block.stream.BlockItem"]
    raw = gzip.decompress((shipped / "000000000000000000000000000000497558.blk.gz").read_bytes())
    items = pbj.decode(ns["com.hedera.hapi.block.stream.Block"], raw).items[::args.every]
    payloads = [pbj.encode(i) for i in items]

    print(f"machine: {platform.machine()} {platform.processor() or ''} {os.cpu_count()} CPUs, {platform.system()}"
          f" {platform.release()}; Python {platform.python_version()} ({sys.implementation.name}); "
          f"pbj engine {pbj.engine()}; pyarrow {pa.__version__}")
    print(f"{len(payloads)} BlockItems (every {args.every}th of the block), {sum(map(len, payloads)):,} bytes; "
          f"thread CPU time, min and median of {args.rounds} rounds ({args.protarrow_rounds} for protarrow)")
    pbj.arrow.decode_to_arrow(item_cls, payloads[:5])  # plans and codecs compiled before timing
    results = {}
    from pbj.arrow import native

    print(f"decode_to_arrow runs: {native.explain(item_cls)}")
    results["decode_to_arrow"], table = _timed(lambda: pbj.arrow.decode_to_arrow(item_cls, payloads), args.rounds)
    results["pbj decode + to_arrow"], walked = _timed(
        lambda: pbj.arrow.to_arrow([pbj.decode(item_cls, p) for p in payloads], item_cls), args.rounds)
    assert table.equals(walked)
    if not args.no_protarrow:
        import protarrow

        pool = descriptor_pool.DescriptorPool()
        for fd in descriptor_pb2.FileDescriptorSet.FromString(schema).file:
            pool.Add(fd)
        gitem = message_factory.GetMessageClass(pool.FindMessageTypeByName("com.hedera.hapi.block.stream.BlockItem"))
        config = protarrow.ProtarrowConfig(enum_type=pa.dictionary(pa.int32(), pa.string()),
                                           skip_recursive_messages=True)
        protarrow.messages_to_table([gitem.FromString(p) for p in payloads[:5]], gitem, config)
        results[f"upb+protarrow ({api_implementation.Type()})"], theirs = _timed(
            lambda: protarrow.messages_to_table([gitem.FromString(p) for p in payloads], gitem, config),
            args.protarrow_rounds)
        assert theirs.num_rows == table.num_rows
    base_min, base_median = results["decode_to_arrow"]
    print(f"  {'':<28} {'min ms':>10} {'median ms':>10}   decode_to_arrow's ratio to it (median; min)")
    for name, (low, mid) in results.items():
        print(f"  {name:<28} {low * 1000:10.1f} {mid * 1000:10.1f}   {base_median / mid:6.3f}x; {base_min / low:6.3f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
