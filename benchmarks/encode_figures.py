"""Every encode, free and decode hot spot of one run, pbj (both engines) against Google's upb, on this
checkout and on others (before and after a change): instructions (callgrind) and thread CPU time,
ratios printed.

Cells, pbj on each engine (``--engines``, a worker process each) against ``google.protobuf`` with
the upb backend measured in the same worker, inputs from the checkout's own ``pbj/data``:

* ``fds fresh`` / ``fds cached``: ``pbj.encode`` of the shipped HAPI ``FileDescriptorSet``
  (``descriptor.proto``, proto2, ``required`` fields), just decoded / written once before;
  ``fds upb``: ``SerializeToString`` of the same set just parsed by upb;
* ``block fwd fresh`` / ``block rev fresh``: ``pbj.encode(block)`` and ``pbj.encode(block,
  reverse=True)`` of the shipped Hedera block just decoded; ``block upb``: upb's, just parsed;
* ``hot user`` / ``hot alias``: a small message with its size cached (``pbj.bench.hot_pbj``'s
  transaction body), written as a user writes it (``pbj.encode(o)`` in a function, ``pbj`` a
  global) and through a local alias (``enc = pbj.encode``) as benchmark harnesses do;
* ``block free`` / ``block free upb``: dropping a decoded block (the list holding it cleared);
  ``block free encoded``: dropping a decoded block that was written forward once (it holds its
  cached sizes: the ints the forward writer made for them);
* ``hot read`` / ``block walk`` / ``fds walk``, and each with `` upb``: decode, then read every field
  (``pbj.bench.hot_pbj.read_all`` and Google's hand-written one on the hot message, the generic
  readers of :mod:`pbj.bench.readers` on the block and the descriptor set; the checksums must be
  equal), the result dropped.

CPU time: ``time.thread_time`` around each batch (fresh objects made outside it), the garbage
collector off, best of ``--runs`` (median printed beside it). Instructions: the same batches in a
process under valgrind's callgrind, each between two calls of ``getppid`` (``--dump-before``, as
:mod:`pbj.bench.instructions` marks regions), divided by the batch's size.

    python -m benchmarks.encode_figures                          # this checkout
    python -m benchmarks.encode_figures --against main           # and main, built in a temporary copy
    python -m benchmarks.encode_figures --checkout DIR --json out.json

Needs ``protobuf`` (upb) and valgrind (``--no-instructions`` to time only).
"""

from __future__ import annotations

import argparse
import gc
import gzip
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pbj  # the checkout's: workers run with PYTHONPATH set to it

HERE = Path(__file__).resolve()
ROOT = HERE.parents[1]
FDS_TYPE = "google.protobuf.FileDescriptorSet"
BLOCK_TYPE = "com.hedera.hapi.block.stream.Block"
BLOCK_FILE = "000000000000000000000000000000497558.blk.gz"
#: (cell, objects per batch) for time and instructions
CELLS = {"fds fresh": 4, "fds cached": 4, "fds upb": 4, "block fwd fresh": 2, "block rev fresh": 2,
         "block upb": 2, "hot user": 20000, "hot alias": 20000, "block free": 2, "block free encoded": 2,
         "block free upb": 2, "hot read": 2000, "hot read upb": 2000, "block walk": 1, "block walk upb": 1,
         "fds walk": 2, "fds walk upb": 2}
RATIOS = (("fds fresh", "fds upb"), ("fds cached", "fds upb"), ("block fwd fresh", "block upb"),
          ("block rev fresh", "block upb"), ("hot user", "hot alias"), ("block free", "block free upb"),
          ("block free encoded", "block free upb"),
          ("hot read", "hot read upb"), ("block walk", "block walk upb"), ("fds walk", "fds walk upb"))


def _inputs(cells: list[str] | None = None, check: bool = True):
    """(name -> (make a batch of n objects, write one)) on the imported pbj (the checkout's); if ``check``, the
    checksums of the decode + read cells among ``cells`` (all when None) checked equal to upb's."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    from pbj.bench import hot_pbj, hot_values
    from pbj.bench.peers import google_peer
    from pbj.bench.readers import GoogleReader, PbjReader

    data = Path(pbj.__file__).parent / "data"
    hapi = (data / "hapi-v0.55.0.binpb").read_bytes()
    block = gzip.decompress((data / BLOCK_FILE).read_bytes())
    schema = descriptor_pb2.FileDescriptorSet()
    schema.file.add().ParseFromString(descriptor_pb2.DESCRIPTOR.serialized_pb)
    fds = pbj.load_descriptor_set(schema.SerializeToString())[FDS_TYPE]
    block_cls = pbj.load_descriptor_set(hapi)[BLOCK_TYPE]
    pool = descriptor_pool.DescriptorPool()
    for fd in descriptor_pb2.FileDescriptorSet.FromString(hapi).file:
        pool.Add(fd)
    g_block = message_factory.GetMessageClass(pool.FindMessageTypeByName(BLOCK_TYPE))
    hot = hot_pbj.build_hot(hot_values.HOT_VALUE)
    pbj.encode(hot)

    def fresh(cls, raw):
        return lambda n: [pbj.decode(cls, raw) for _ in range(n)]

    def cached(cls, raw):
        def make(n):
            objs = [pbj.decode(cls, raw) for _ in range(n)]
            for o in objs:
                pbj.encode(o)
            return objs
        return make

    def encode(o):
        return pbj.encode(o)

    def reverse(o):
        return pbj.encode(o, reverse=True)

    def serialize(o):
        return o.SerializeToString()

    assert encode(pbj.decode(fds, hapi)) == hapi and reverse(pbj.decode(block_cls, block)) == block
    hot_bytes, g_hot = pbj.encode(hot), google_peer.hot_class()
    pbj_read, g_read = PbjReader().read, GoogleReader().read

    def walk(cls, read):
        return lambda raw: read(pbj.decode(cls, raw))

    def g_walk(cls, read):
        return lambda raw: read(cls.FromString(raw))

    walks = {"hot read": walk(hot_pbj.TransactionBody, hot_pbj.read_all),
             "hot read upb": g_walk(g_hot, google_peer.read_all), "block walk": walk(block_cls, pbj_read),
             "block walk upb": g_walk(g_block, g_read), "fds walk": walk(fds, pbj_read),
             "fds walk upb": g_walk(descriptor_pb2.FileDescriptorSet, g_read)}
    for a, raw in (("hot read", hot_bytes), ("block walk", block), ("fds walk", hapi)):
        if not check or (cells is not None and a not in cells and a + " upb" not in cells):
            continue  # not measured: not checked (a block walk is billions of instructions under callgrind)
        assert walks[a](raw) == walks[a + " upb"](raw), f"{a}: the checksums differ"
    inputs = {a: (lambda n, raw=raw: [raw] * n, run) for a, run in walks.items()
              for key, raw in (("hot", hot_bytes), ("block", block), ("fds", hapi)) if a.startswith(key)}
    return inputs | {
        "fds fresh": (fresh(fds, hapi), encode),
        "fds cached": (cached(fds, hapi), encode),
        "fds upb": (lambda n: [descriptor_pb2.FileDescriptorSet.FromString(hapi) for _ in range(n)], serialize),
        "block fwd fresh": (fresh(block_cls, block), encode),
        "block rev fresh": (fresh(block_cls, block), reverse),
        "block upb": (lambda n: [g_block.FromString(block) for _ in range(n)], serialize),
        "hot user": (lambda n: [hot] * n, user),
        "hot alias": (lambda n: [hot] * n, alias),
        "block free": (fresh(block_cls, block), None),
        "block free encoded": (cached(block_cls, block), None),
        "block free upb": (lambda n: [g_block.FromString(block) for _ in range(n)], None),
    }


def user(objs: list) -> None:
    """``pbj.encode`` as users write it: the module global ``pbj``, then its attribute, per call."""
    for o in objs:
        pbj.encode(o)


def alias(objs: list) -> None:
    """``pbj.encode`` through a local alias, as benchmark harnesses call it."""
    enc = pbj.encode
    for o in objs:
        enc(o)


def _batch(cell: str, write, objs: list) -> None:
    if write is None:  # a "free" cell: the last references to the batch's objects dropped
        objs.clear()
    elif cell in ("hot user", "hot alias"):
        write(objs)  # the loop is the cell's own (user / alias)
    else:
        for o in objs:
            write(o)


def _selected(cells: list[str] | None, check: bool = True) -> dict:
    """The inputs of ``cells`` (every cell when None), in CELLS' order (``check``: see :func:`_inputs`)."""
    inputs = _inputs(cells, check)
    return {c: inputs[c] for c in CELLS if cells is None or c in cells}


def time_worker(runs: int, engine: str, cells: list[str] | None = None) -> dict:
    """Microseconds per object of every cell (or of ``cells``), best and median of ``runs``, pbj on ``engine``."""
    from google.protobuf.internal import api_implementation

    assert api_implementation.Type() == "upb", api_implementation.Type()
    pbj.use_engine(engine)
    inputs = _selected(cells)
    out = {}
    for cell, (make, write) in inputs.items():
        _batch(cell, write, make(1))  # warm: compiled, specialised
    times: dict[str, list[float]] = {cell: [] for cell in inputs}
    for _ in range(runs):
        for cell, (make, write) in inputs.items():
            n = CELLS[cell]
            objs = make(n)
            gc.collect()
            gc.disable()
            t = time.thread_time()
            _batch(cell, write, objs)
            times[cell].append((time.thread_time() - t) * 1e6 / n)
            gc.enable()
            del objs
    for cell, v in times.items():
        out[cell] = {"best": min(v), "median": statistics.median(v)}
    return out


def count_worker(labels_file: Path, engine: str, cells: list[str] | None = None) -> None:
    """Under callgrind: one batch of each cell (or of ``cells``) between two marks, pbj on ``engine``; writes the
    labels. The checksums are not checked again here: :func:`measure` runs the time worker, which checks them,
    first."""
    pbj.use_engine(engine)
    inputs = _selected(cells, check=False)
    for cell, (make, write) in inputs.items():
        _batch(cell, write, make(1))
    gc.collect()
    gc.disable()
    labels = []
    for cell, (make, write) in inputs.items():
        objs = make(CELLS[cell])
        os.getppid()
        labels.append("setup " + cell)
        _batch(cell, write, objs)
        os.getppid()
        labels.append(cell)
        del objs
    labels_file.write_text(json.dumps(labels))


def _env(checkout: Path) -> dict:
    return {**os.environ, "PYTHONPATH": str(checkout), "PYTHONHASHSEED": "0"}


def _worker_cmd(*args: str) -> list[str]:
    return [sys.executable, str(HERE), *args]


def measure(checkout: Path, runs: int, instructions: bool, engine: str, cells: list[str] | None = None) -> dict:
    """The cells (or ``cells``) on ``checkout`` (its pbj, built in place), pbj on ``engine``: CPU time and, if
    asked, instructions."""
    chosen = [] if cells is None else ["--cells", ",".join(cells)]
    head = subprocess.run(["git", "-C", str(checkout), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True).stdout.strip() or checkout.name
    got = subprocess.run(_worker_cmd("--time-worker", str(runs), "--engine", engine, *chosen), env=_env(checkout),
                         cwd=checkout, check=True, capture_output=True, text=True)
    result = {"checkout": str(checkout), "commit": head, "engine": engine,
              "cpu_us": json.loads(got.stdout.splitlines()[-1])}
    if instructions:
        from pbj.bench.instructions import read_dumps, valgrind

        program = valgrind()
        if program is None:
            raise SystemExit("valgrind not found (--no-instructions to time only)")
        with tempfile.TemporaryDirectory() as tmp:
            out, labels = Path(tmp) / "cg.out", Path(tmp) / "labels.json"
            subprocess.run([program, "--tool=callgrind", "--dump-before=getppid", f"--callgrind-out-file={out}",
                            f"--log-file={tmp}/valgrind.log",
                            *_worker_cmd("--count-worker", str(labels), "--engine", engine, *chosen)],
                           env=_env(checkout), cwd=checkout, check=True)
            dumps, names = read_dumps(out), json.loads(labels.read_text())
            result["instructions"] = {name: ir / CELLS[name] for name, ir in zip(names, dumps, strict=False)
                                      if name in CELLS}
    return result


def _copy_of(ref: str, folder: Path) -> Path:
    """``ref`` of this repository, exported into ``folder`` and its native engine built there."""
    dest = folder / ref.replace("/", "_")
    dest.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace"], cwd=dest, check=True,
                   capture_output=True)
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", ref], capture_output=True,
                            text=True).stdout.strip()
    (dest / ".commit").write_text(f"{ref} {commit}")
    return dest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkout", type=Path, action="append", default=[],
                        help="a checkout to measure, its pbj built in place (default: this one)")
    parser.add_argument("--against", action="append", default=[], help="a git ref of this repository to measure too")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--engines", default="native,python", help="pbj's engines, comma-separated")
    parser.add_argument("--engine", default="native", help=argparse.SUPPRESS)  # a worker's
    parser.add_argument("--no-instructions", action="store_true")
    parser.add_argument("--cells", default=None,
                        help="only these cells, comma-separated (default: all; a ratio is printed when both its "
                             "cells ran)")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--time-worker", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--count-worker", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    cells = None if args.cells is None else args.cells.split(",")
    if cells is not None and not set(cells) <= CELLS.keys():
        parser.error(f"unknown cells {sorted(set(cells) - CELLS.keys())}; known: {', '.join(CELLS)}")
    if args.time_worker:
        print(json.dumps(time_worker(args.time_worker, args.engine, cells)))
        return
    if args.count_worker:
        count_worker(args.count_worker, args.engine, cells)
        return
    from pbj.bench.run import machine_info

    machine = (f"{platform.machine()}, {os.cpu_count()} cores ({machine_info()['cpu_model']}), "
               f"{platform.platform()}; CPython {platform.python_version()}; load average at start "
               f"{os.getloadavg()[0]:.1f}")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        checkouts = (args.checkout or [ROOT]) + [_copy_of(ref, Path(tmp)) for ref in args.against]
        for c in checkouts:
            for engine in args.engines.split(","):
                r = measure(c.resolve(), args.runs, not args.no_instructions, engine, cells)
                if (c / ".commit").exists():
                    r["commit"] = (c / ".commit").read_text()
                rows.append(r)
                print(json.dumps(r), file=sys.stderr, flush=True)
    print(f"Machine: {machine}; load average at end {os.getloadavg()[0]:.1f}\n")
    print("| checkout | engine | cell | CPU µs/object best [median] | instructions/object |")
    print("|---|---|---|---|---|")
    for r in rows:
        for cell in r["cpu_us"]:
            t, ir = r["cpu_us"][cell], r.get("instructions", {}).get(cell)
            print(f"| {r['commit']} | {r['engine']} | {cell} | {t['best']:,.2f} [{t['median']:,.2f}] | "
                  f"{'' if ir is None else f'{ir:,.0f}'} |")
    print("\n| checkout | engine | ratio | CPU (best) | CPU (median) | instructions |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        for a, b in RATIOS:
            if a not in r["cpu_us"] or b not in r["cpu_us"]:
                continue
            ta, tb = r["cpu_us"][a], r["cpu_us"][b]
            ins = r.get("instructions", {})
            ir = f"{ins[a] / ins[b]:.3f}" if a in ins and b in ins else ""
            print(f"| {r['commit']} | {r['engine']} | {a} / {b} | {ta['best'] / tb['best']:.2f} | "
                  f"{ta['median'] / tb['median']:.2f} | {ir} |")
    if args.json:
        args.json.write_text(json.dumps({"machine": machine, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
