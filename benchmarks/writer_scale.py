"""The seed's experiment at its own scale: the reverse and the forward writer, per BlockItem kind, on
200 items and on 22,000 items a kind (the Java PBJ team's scale), both engines, fresh and with sizes
cached, in CPU time and (``--instructions``) in instructions.

The shipped block has 812-814 items of each of the three large kinds; the Java team measured 21,986
STATE_CHANGES and 21,974 TRANSACTION_RESULT items, far past the CPU caches. So each kind's items'
bytes are cycled to ``--items`` and each is decoded in order, giving that many distinct objects that
sit in memory as a decoder leaves them (``../shared/PERF-NOTES.md``, "The seed's experiment at its
own scale"). Then, each a batch of its own:

* fresh: objects just decoded (a new set per run, decoded outside the timed region), written once;
* sizes cached: the same objects written once before the timed region (forward), written again.

CPU time: the thread's CPU clock (``time.thread_time``) around the loop over the batch, the garbage
collector off, best of ``--runs`` runs (median in brackets). Instructions: each (engine, kind, size)
in a process of its own under valgrind's callgrind, the regions marked as ``pbj bench
--instructions`` marks them (:mod:`pbj.bench.instructions`: a call of ``getppid`` dumps the counts);
instructions per item = (the writer's loop - the same loop calling a function that returns its
argument) / items. Instructions hardly depend on where objects sit in memory; CPU time does, which
is the Java team's point: compare the two.

    python -m benchmarks.writer_scale                       # CPU time, 200 and 22,000 items, both engines
    python -m benchmarks.writer_scale --instructions        # callgrind counts (minutes: see --help)
    python -m benchmarks.writer_scale --json out.json       # also write the figures
    python -m benchmarks.writer_scale --from-json cpu.json ir-native.json ir-python.json   # the page's tables

Ratios (reverse / forward), not absolute times, are what a page should compare: absolute times move
with the machine and its load.
"""

from __future__ import annotations

import argparse
import collections
import functools
import gc
import json
import os
import pickle
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pbj
from fuzz import targets as T
from pbj.bench.instructions import read_dumps, valgrind

KINDS = ("state_changes", "transaction_result", "event_transaction")
MODES = ("fwd fresh", "rev fresh", "fwd cached", "rev cached")
MARK = os.getppid  # callgrind dumps its counts when getppid is entered (--dump-before=getppid)


BLOCK_ITEM = "com.hedera.hapi.block.stream.BlockItem"


@functools.cache
def item_class() -> type:
    """The HAPI ``BlockItem`` class, loaded from the shipped descriptor set (and nothing else compiled)."""
    return pbj.load_descriptor_set(T.hapi_set())[BLOCK_ITEM]


def kind_bytes() -> dict[str, list[bytes]]:
    """The encoding of each BlockItem of the shipped block, by kind (its oneof member), in block order."""
    cls = item_class()
    out: dict[str, list[bytes]] = collections.defaultdict(list)
    for b in T.block_items():
        out[pbj.decode(cls, b).item.which].append(b)
    return out


def cycled(items: list[bytes], n: int) -> list[bytes]:
    """``n`` items: ``items`` over and over, in order."""
    return [items[i % len(items)] for i in range(n)]


def _writer(mode: str):
    return (lambda o: pbj.encode(o, reverse=True)) if mode.startswith("rev") else pbj.encode


def _objects(data: list[bytes], cached: bool) -> list:
    cls = item_class()
    objs = [pbj.decode(cls, b) for b in data]
    if cached:
        for o in objs:
            pbj.encode(o)
    return objs


def cpu_times(engine: str, data: list[bytes], runs: int) -> dict[str, list[float]]:
    """Microseconds per batch of ``data``'s objects, per mode, every run."""
    pbj.use_engine(engine)
    for mode in MODES:  # compiled and specialised before the first timed run
        for o in _objects(data[:2], mode.endswith("cached")):
            _writer(mode)(o)
    out: dict[str, list[float]] = {m: [] for m in MODES}
    for _ in range(runs):
        for mode in MODES:
            objs = _objects(data, mode.endswith("cached"))
            write = _writer(mode)
            gc.collect()
            gc.disable()
            t = time.thread_time()
            for o in objs:
                write(o)
            out[mode].append((time.thread_time() - t) * 1e6)
            gc.enable()
            del objs
    return out


def _identity(o):
    return o


def worker(config: dict) -> None:
    """Under callgrind: each mode's loop and the identity loop, between marks; writes the labels."""
    pbj.use_engine(config["engine"])
    items = pickle.loads(Path(config["bytes"]).read_bytes())  # the kind's items, cut by the parent
    data = cycled(items, config["items"])
    gc.collect()
    gc.disable()
    labels = ["start"]
    fresh_fwd, fresh_rev = _objects(data, False), _objects(data, False)
    for o in fresh_fwd[:2] + fresh_rev[:2]:  # warm: specialisation, the scratch, compiled codecs
        pbj.encode(o)
        pbj.encode(o, reverse=True)
    for mode, objs in (("fwd fresh", fresh_fwd[2:]), ("rev fresh", fresh_rev[2:]), ("fwd cached", fresh_fwd[2:]),
                       ("rev cached", fresh_fwd[2:])):
        write = _writer(mode)
        MARK()
        labels.append("setup")
        for o in objs:
            write(o)
        MARK()
        labels.append(mode)
        for o in objs:
            _identity(o)
        MARK()
        labels.append(mode + " loop")
    Path(config["labels"]).write_text(json.dumps({"labels": labels, "items": len(data) - 2}))


def instructions(engine: str, kind: str, items: int, folder: Path, kind_items: list[bytes]) -> dict[str, float]:
    """Instructions per item of each mode, one callgrind process (``kind_items``: the kind's items, cycled)."""
    program = valgrind()
    if program is None:
        raise SystemExit("valgrind not found; apt-get install valgrind")
    stem = folder / f"{engine}-{kind}-{items}"
    config = {"engine": engine, "kind": kind, "items": items, "labels": str(stem) + ".labels.json",
              "bytes": str(stem) + ".items.pickle"}
    Path(config["bytes"]).write_bytes(pickle.dumps(kind_items))
    Path(str(stem) + ".config.json").write_text(json.dumps(config))
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    cmd = [program, "--tool=callgrind", "--dump-before=getppid", f"--callgrind-out-file={stem}.callgrind",
           f"--log-file={stem}.valgrind.log", sys.executable, "-m", "benchmarks.writer_scale", "--worker",
           str(stem) + ".config.json"]
    subprocess.run(cmd, check=True, env=env, cwd=Path(__file__).resolve().parents[1])
    dumps = read_dumps(Path(str(stem) + ".callgrind"))
    meta = json.loads(Path(config["labels"]).read_text())
    labels = meta["labels"][1:]  # dump k: the counts of the region that ends at the k-th mark
    if len(dumps) < len(labels):
        raise RuntimeError(f"{stem}: {len(dumps)} dumps for {len(labels)} marks")
    by_label = dict(zip(labels, dumps, strict=False))
    return {m: (by_label[m] - by_label[m + " loop"]) / meta["items"] for m in MODES}


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}"


#: The Java PBJ team's figures (JMH, AMD EPYC, µs per batch): (kind, items) -> fwd fresh, rev fresh, fwd cached,
#: rev cached
JAVA = {("state_changes", 200): (89.4, 71.5, 63.2, 81.5), ("state_changes", 21986): (13844, 39334, 9200, 39095),
        ("transaction_result", 200): (14.6, 13.2, 10.7, 13.3),
        ("transaction_result", 21974): (1755, 5648, 1527, 4060)}


def render(files: list[Path]) -> str:
    """The page's tables from ``--json`` files of this script (CPU time and instruction runs, any mix): per kind,
    engine and batch size, CPU µs per item and instructions per item, and reverse / forward beside Java's."""
    cpu: dict[tuple, dict] = {}
    ir: dict[tuple, dict] = {}
    machines = []
    for f in files:
        got = json.loads(f.read_text())
        machines.append(f"{f.name}: {got['machine']}; at the end {got.get('machine_end', '')}")
        for r in got["rows"]:
            (ir if got["what"] == "instructions" else cpu)[(r["kind"], r["engine"], r["items"])] = r
    out = ["Runs: " + " | ".join(machines), "",
           "| kind | engine | items | fwd fresh | rev fresh | rev/fwd fresh | fwd cached | rev cached "
           "| rev/fwd cached |", "|---|---|---|---|---|---|---|---|---|"]
    for key in sorted(cpu.keys() | ir.keys(), key=lambda k: (KINDS.index(k[0]), k[1] != "native", k[2])):
        for what, table in (("µs", cpu), ("instructions", ir)):
            r = table.get(key)
            if r is None:
                continue
            n = key[2]
            if what == "µs":  # per batch in the runs: per item here
                def val(m: str, r: dict = r, n: int = n) -> str:
                    return f"{r[m] / n:,.2f} [{r[m + ' median'] / n:,.2f}]"
            else:
                def val(m: str, r: dict = r) -> str:
                    return f"{r[m] / 1000:,.1f}k"
            out.append(f"| {key[0]} | {key[1]} | {n:,} ({what}) | {val('fwd fresh')} | {val('rev fresh')} | "
                       f"{_ratio(r['rev fresh'], r['fwd fresh'])} | {val('fwd cached')} | {val('rev cached')} | "
                       f"{_ratio(r['rev cached'], r['fwd cached'])} |")
    heads = [f"pbj {e}, {n} ({w})" for e in ("native", "python") for n in ("200", "22,000") for w in ("CPU", "instr.")]
    rows = []
    for kind in KINDS:
        for fresh in (True, False):
            a, b = ("rev fresh", "fwd fresh") if fresh else ("rev cached", "fwd cached")
            j = [v for (k, _), v in sorted(JAVA.items()) if k == kind]
            cells = [f"{(x[1] / x[0]) if fresh else (x[3] / x[2]):.2f}" for x in j] or ["", ""]
            for e in ("native", "python"):
                for small in (True, False):
                    for table in (cpu, ir):
                        sizes = sorted(n for (k, en, n) in table if k == kind and en == e)
                        n = (sizes[0] if small else sizes[-1]) if sizes else None
                        r = table.get((kind, e, n)) if n is not None and (small or len(sizes) > 1) else None
                        cells.append(_ratio(r[a], r[b]) + ("" if n in (200, 22000) else f" ({n:,})")
                                     if r else "n/a")
            rows.append((f"{kind}, {'fresh' if fresh else 'sizes cached'}", cells))
    keep = [i for i in range(len(heads) + 2) if i < 2 or any(c[i] != "n/a" for _, c in rows)]  # no empty column
    names = ["Java, 200", "Java, ~22,000", *heads]
    out += ["", "| reverse / forward | " + " | ".join(names[i] for i in keep) + " |", "|---|" + "---|" * len(keep)]
    out += [f"| {name} | " + " | ".join(c[i] for i in keep) + " |" for name, c in rows]
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=22000, help="items a kind at scale (default 22,000)")
    parser.add_argument("--small", type=int, default=200, help="items a kind in cache (default 200)")
    parser.add_argument("--runs", type=int, default=3, help="timed runs per cell (default 3)")
    parser.add_argument("--engine", choices=("both", "native", "python"), default="both")
    parser.add_argument("--kinds", default=",".join(KINDS), help="kinds, comma-separated")
    parser.add_argument("--instructions", action="store_true",
                        help="count instructions under callgrind instead of timing (a process per engine, kind and "
                             "size; the pure-Python engine at 22,000 state changes takes about 30 minutes)")
    parser.add_argument("--python-items", type=int, default=None,
                        help="with --instructions: items a kind at scale for the pure-Python engine (default --items)")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--from-json", type=Path, nargs="+", default=None,
                        help="print the page's tables from these --json files (CPU, instructions); measure nothing")
    parser.add_argument("--worker", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.from_json:
        print(render(args.from_json))
        return
    if args.worker is not None:
        worker(json.loads(args.worker.read_text()))
        return
    engines = ["native", "python"] if args.engine == "both" else [args.engine]
    if "native" in engines and not pbj._native.available():
        engines.remove("native")
    kinds = args.kinds.split(",")
    machine = f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, {platform.platform()}; " \
              f"CPython {platform.python_version()}; load average {os.getloadavg()}"
    results: dict = {"machine": machine, "what": "instructions" if args.instructions else "cpu_us", "rows": []}
    data_by_kind = kind_bytes()
    with tempfile.TemporaryDirectory() as tmp:
        for kind in kinds:
            for engine in engines:
                for n in (args.small, args.items):
                    if args.instructions and engine == "python" and n == args.items and args.python_items:
                        n = args.python_items
                    if args.instructions:
                        cells = instructions(engine, kind, n, Path(tmp), data_by_kind[kind])
                        row = {"kind": kind, "engine": engine, "items": n, **cells}
                    else:
                        times = cpu_times(engine, cycled(data_by_kind[kind], n), args.runs)
                        row = {"kind": kind, "engine": engine, "items": n,
                               **{m: min(v) for m, v in times.items()},
                               **{m + " median": statistics.median(v) for m, v in times.items()}}
                    results["rows"].append(row)
                    print(json.dumps(row), file=sys.stderr, flush=True)
    results["machine_end"] = f"load average {os.getloadavg()}"
    unit = "instructions per item" if args.instructions else "µs per batch, best [median]"
    print(f"Machine: {machine}\n")
    print(f"| kind | items | engine | forward, fresh | reverse, fresh | rev/fwd | forward, sizes cached "
          f"| reverse, sizes cached | rev/fwd |  ({unit})")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in results["rows"]:
        def cell(m: str, r: dict = r) -> str:
            if args.instructions:
                return f"{r[m]:,.0f}"
            return f"{r[m]:,.0f} [{r[m + ' median']:,.0f}]"
        print(f"| {r['kind']} | {r['items']:,} | {r['engine']} | {cell('fwd fresh')} | {cell('rev fresh')} | "
              f"{_ratio(r['rev fresh'], r['fwd fresh'])} | {cell('fwd cached')} | {cell('rev cached')} | "
              f"{_ratio(r['rev cached'], r['fwd cached'])} |")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
