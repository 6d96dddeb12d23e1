"""The benchmark runner behind ``pbj bench`` (and ``python -m benchmarks.run``).

One run measures, on the same data and the same Python, every library in a worker process of
its own (:mod:`pbj.bench.worker`; ``--jobs N`` at a time), pbj's two engines included (``pbj``:
the engine pbj picks, native when built; ``pbj-python``: the pure-Python one):

1. the reverse-writer experiment: pbj's forward and reverse writers, on objects just decoded
   ("fresh") and on objects whose sizes are cached, per ``BlockItem`` kind (first 200 items, all
   items) and for the whole block;
2. decoding, and decoding followed by reading every field, on the same batches;
3. Google's protobuf, upb and pure-Python backends, and betterproto2 (classes its own compiler
   generates from the block's descriptor set at bench time), on the same batches; the slow
   pure-Python peers on the whole block only unless ``--all-targets``; pure-protobuf can neither
   load nor generate a schema, so it runs on the hot message only;
4. every library on the small hot message (a HAPI-like ``TransactionBody``), after checking that
   each library's bytes equal pbj's.

Every cell is timed on the thread's CPU clock (:mod:`pbj.bench.timing`): best run and median.
``pbj bench otel`` and ``pbj bench descriptors`` run one real payload instead
(:mod:`pbj.bench.cases`); ``--instructions`` counts instructions under callgrind
(:mod:`pbj.bench.instructions`), the reference.

Results: a table on standard output (Markdown), ``--json FILE`` with every figure and the machine,
``--plot FILE.png`` (matplotlib). ``--from-json FILE`` renders an earlier run's tables and plot
again without measuring. Progress goes to standard error.

Maintainers' switches, not in ``--help``: ``--update-doc docs/performance.md`` writes the
tables into the document between its markers (``<!-- pbj-bench:begin -->`` and
``<!-- pbj-bench:end -->``); ``--goals`` adds the table of the project's performance targets (met or not) to
the printed report.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypedDict

__all__ = ["main", "execute", "run", "machine_info", "build_parser", "update_doc", "QUICK", "FULL",
           "DOC_BEGIN", "DOC_END"]


class _Settings(TypedDict):
    """One set of run settings: block items to skip and to take, hot messages per run, timing."""

    first: int
    max_items: int | None
    hot_batch: int
    timing: dict[str, float]


#: Settings of a full run: >= 5 timed runs per cell after one warm-up round.
FULL: _Settings = {"first": 200, "max_items": None, "hot_batch": 1000,
        "timing": {"runs": 5, "warmup": 1, "min_time": 0.3, "max_runs": 20}}
#: ``--quick``: a few items, one repetition, no warm-up (for tests and smoke runs).
QUICK: _Settings = {"first": 5, "max_items": 60, "hot_batch": 20,
         "timing": {"runs": 1, "warmup": 0, "min_time": 0.0, "max_runs": 1}}


#: The markers around the generated tables in ``docs/performance.md`` (``--update-doc``).
DOC_BEGIN = "<!-- pbj-bench:begin -->"
DOC_END = "<!-- pbj-bench:end -->"


def update_doc(path: str | Path, tables: str) -> None:
    """Put ``tables`` between :data:`DOC_BEGIN` and :data:`DOC_END` in the Markdown file ``path``.

    Raises:
        ValueError: the file lacks the markers.
    """
    path = Path(path)
    text = path.read_text()
    begin, end = text.find(DOC_BEGIN), text.find(DOC_END)
    if begin < 0 or end < begin:
        raise ValueError(f"{path} has no {DOC_BEGIN} ... {DOC_END} section")
    path.write_text(text[:begin + len(DOC_BEGIN)] + "\n" + tables + text[end:])


def _log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _load() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def _engine_name() -> str:
    import pbj

    return pbj.engine()


def machine_info() -> dict:
    """The machine and interpreter: platform, CPU model (``/proc/cpuinfo``), CPU count, Python, load average."""
    return {
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu_model": _cpu_model(),
        "cpus": os.cpu_count(),
        "python": sys.version.split()[0],
        "python_implementation": platform.python_implementation(),
        "python_build": " ".join(platform.python_build()),
        "load_average_start": _load(),
        "pbj_engine": _engine_name(),
    }


def worker_env(peer: str) -> dict[str, str]:
    """The environment of ``peer``'s worker process: Google's backend chosen, pbj's engine chosen
    (``pbj-python``: the pure-Python one; ``pbj``: as in this process), and this pbj first on the path."""
    import pbj
    from pbj.bench.worker import ENV, PBJ_ENGINE_ENV, PBJ_PEERS, PEERS

    env = dict(os.environ)
    backend = PEERS[peer][1]
    if backend is None:
        env.pop(ENV, None)
    else:
        env[ENV] = backend
    if PBJ_PEERS.get(peer):
        env[PBJ_ENGINE_ENV] = str(PBJ_PEERS[peer])
    env["PYTHONPATH"] = os.pathsep.join([str(Path(pbj.__file__).resolve().parents[1]),
                                         *filter(None, [os.environ.get("PYTHONPATH")])])
    return env


def _run_worker(peer: str, config: dict, folder: Path) -> dict:
    """Run ``pbj.bench.worker`` for ``peer`` in a fresh interpreter; return its JSON result."""
    from pbj.bench.worker import PEERS

    path = folder / f"{peer}.json"
    path.write_text(json.dumps({**config, "peer": peer}))
    load = _load()
    started = time.time()
    proc = subprocess.run([sys.executable, "-m", "pbj.bench.worker", str(path)], env=worker_env(peer),
                          stdout=subprocess.PIPE, text=True)
    if proc.returncode != 0 or not proc.stdout.strip():
        return {"peer": peer, "available": False, "backend": PEERS[peer][1],
                "reason": f"worker failed with exit status {proc.returncode}"}
    result = json.loads(proc.stdout)
    result["load_average_start"] = load
    result["elapsed_s"] = round(time.time() - started, 1)
    return result


def run_workers(jobs: list[tuple[str, Callable[[], dict]]], parallel: int) -> dict[str, dict]:
    """Run ``(name, job)`` pairs, ``parallel`` at a time (each job starts one worker process and waits for it);
    return ``{name: result}`` in the order given. Each worker times itself on its own thread's CPU clock, so
    two at a time on two cores do not count each other's time."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=max(1, parallel)) as pool:
        futures = [(name, pool.submit(job)) for name, job in jobs]
        return {name: f.result() for name, f in futures}


def libraries_to_run(args: argparse.Namespace) -> list[str]:
    """pbj's engines (``pbj``, and ``pbj-python`` when ``pbj`` is the native engine and ``--engine both``) and
    the peers asked for, in report order."""
    import pbj

    engine = getattr(args, "engine", "both")
    mine = ["pbj"]
    if engine == "both" and pbj.engine() == "native":
        mine.append("pbj-python")
    elif engine == "python":
        mine = ["pbj-python"]
    from pbj.bench.worker import PBJ_PEERS

    peers = [] if args.no_peers else [p for p in args.peers if p not in PBJ_PEERS]
    return mine + peers


def run(args: argparse.Namespace) -> dict:
    """Measure everything ``args`` asks for; return the results (the ``--json`` document).

    Every library, pbj's engines included, runs in a worker process of its own
    (:mod:`pbj.bench.worker`), ``--jobs`` at a time; this process only prepares the inputs.
    """
    from pbj.bench import hot_pbj, workload
    from pbj.bench.hot_values import HOT_VALUE
    from pbj.bench.worker import SLOW_LIMITS, SLOW_PEERS

    settings = QUICK if args.quick else FULL
    timing = dict(settings["timing"])
    for key in ("runs", "warmup"):
        if getattr(args, key) is not None:
            timing[key] = getattr(args, key)
            timing["max_runs"] = max(timing["max_runs"], timing["runs"])
    first = args.first or settings["first"]
    max_items = args.max_items if args.max_items is not None else settings["max_items"]
    hot_batch = args.hot_batch or settings["hot_batch"]
    started = time.time()
    from pbj.bench.timing import CLOCK

    results: dict = {
        "format": "pbj-bench/2",
        "created": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "command": ["pbj", "bench", *args.argv],
        "machine": machine_info(),
        "config": {"quick": args.quick, "first": first, "max_items": max_items, "hot_batch": hot_batch,
                   "timing": timing, "clock": CLOCK, "jobs": getattr(args, "jobs", 1),
                   "slow_peers": {} if args.quick or getattr(args, "all_targets", False)
                   else {p: SLOW_LIMITS for p in SLOW_PEERS}},
    }
    _log("loading the block and its schema")
    schema = workload.load_schema(args.descriptor_set, args.proto, args.include)
    w = workload.load_workload(args.block, schema, block_type=args.block_type, first=first, max_items=max_items)
    counts: dict[str, int] = {}
    for k in w.kinds:
        counts[k] = counts.get(k, 0) + 1
    results["block"] = {"source": w.source, "bytes": len(w.raw), "items": len(w.kinds), "kinds": counts,
                        "block_type": w.block_type, "item_type": w.item_type}
    results["targets"] = {name: t.describe(w.raw) for name, t in w.targets.items()}
    targets = {name: (t.message, t.slices) for name, t in w.targets.items()}

    import pbj

    hot_obj = hot_pbj.build_hot(HOT_VALUE)
    expected = pbj.encode(hot_obj)
    checksum = hot_pbj.read_all(hot_obj)
    names = libraries_to_run(args)
    with tempfile.TemporaryDirectory(prefix="pbj-bench-") as tmp:
        folder = Path(tmp)
        (folder / "block.bin").write_bytes(w.raw)
        (folder / "schema.binpb").write_bytes(schema)
        config = {
            "timing": timing,
            "hot": {"expected_hex": expected.hex(), "checksum": checksum, "batch": hot_batch},
            "block": None if args.no_block else {
                "raw_path": str(folder / "block.bin"), "schema_path": str(folder / "schema.binpb"),
                "block_type": w.block_type, "item_type": w.item_type,
                "targets": {name: [m, [list(s) for s in sl]] for name, (m, sl) in targets.items()},
            },
        }

        def job(peer: str) -> Callable[[], dict]:
            def start() -> dict:
                _log(f"{peer}: starting a worker process")
                limits = results["config"]["slow_peers"].get(peer)
                out = _run_worker(peer, {**config, "limits": limits}, folder)
                _log(f"{peer}: done" if out["available"] else f"{peer}: skipped: {out['reason']}")
                return out
            return start

        results["libraries"] = run_workers([(peer, job(peer)) for peer in names], getattr(args, "jobs", 1))
    results["machine"]["load_average_end"] = _load()
    results["elapsed_s"] = round(time.time() - started, 1)
    from pbj.bench.report import summarize

    results["summary"] = summarize(results)
    return results


def build_parser(parser: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    """The command-line options of ``pbj bench``, added to ``parser`` (a new one when ``None``)."""
    from pbj.bench.worker import OTHER_PEERS

    if parser is None:
        parser = argparse.ArgumentParser(prog="pbj bench", description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("case", nargs="?", choices=("otel", "descriptors"),
                        help="run one case instead of the block and hot message: otel = a real OpenTelemetry "
                             "trace export request, descriptors = a FileDescriptorSet written by protoc "
                             "(pbj.bench.cases; use --quick, --spans, --protos, --runs, --warmup, --peers, --no-peers, "
                             "--engine, --jobs, --json, --markdown, --from-json, --instructions)")
    parser.add_argument("--protos", metavar="DIR",
                        help="the descriptors case: the folder of .proto schemas protoc compiles into the "
                             "FileDescriptorSet (default: ../shared/protos beside a checkout)")
    parser.add_argument("--spans", type=int, metavar="N",
                        help="spans in the otel case's request (default 512, the SDK's export batch; --quick: 24)")
    parser.add_argument("--instructions", action="store_true",
                        help="count instructions per operation under valgrind's callgrind, pbj and upb, instead "
                             "of timing (uses --quick, --block, --descriptor-set, --proto, --block-type, "
                             "--max-items, --hot-batch, --runs, --warmup, --peers, --no-peers, --no-block, --json, "
                             "--markdown, --from-json; see pbj.bench.instructions)")
    parser.add_argument("--quick", action="store_true",
                        help="a few items, one repetition, no warm-up (a smoke run; figures are not meaningful)")
    parser.add_argument("--block", metavar="FILE", help="a block file, raw or gzip (default: the shipped Hedera block)")
    src = parser.add_mutually_exclusive_group()
    src.add_argument("--descriptor-set", metavar="FILE", help="the block's schema as a FileDescriptorSet")
    src.add_argument("--proto", metavar="FILE", nargs="+",
                     help="the block's schema as .proto files (needs grpcio-tools)")
    parser.add_argument("-I", "--include", metavar="DIR", action="append", help="import directory for --proto")
    parser.add_argument("--block-type", metavar="NAME", default="com.hedera.hapi.block.stream.Block",
                        help="full name of the block message (its first repeated message field holds the items)")
    parser.add_argument("--first", type=int, metavar="N", help="items in the '/first' batches (default 200)")
    parser.add_argument("--max-items", type=int, metavar="N", help="cut the block to its first N items")
    parser.add_argument("--runs", type=int, metavar="N", help="timed runs per cell, at least (default 5)")
    parser.add_argument("--warmup", type=int, metavar="N", help="untimed warm-up rounds (default 1)")
    parser.add_argument("--hot-batch", type=int, metavar="N", help="hot messages per timed run (default 1000)")
    parser.add_argument("--peers", type=lambda s: [p for p in s.split(",") if p], default=list(OTHER_PEERS),
                        metavar="A,B", help=f"peers to run beside pbj (default: {','.join(OTHER_PEERS)})")
    parser.add_argument("--no-peers", action="store_true", help="pbj only")
    parser.add_argument("--engine", choices=("both", "native", "python"), default="both",
                        help="pbj's engine(s) to time or count: both (default, when the native engine "
                             "is built: 'pbj' is the native one, 'pbj-python' the pure-Python one), or one")
    parser.add_argument("--jobs", type=int, default=1, metavar="N",
                        help="worker processes at a time (default 1; each times itself on its thread's CPU clock)")
    parser.add_argument("--all-targets", action="store_true",
                        help="run the slow pure-Python peers (google-python, betterproto2) on every block batch "
                             "with every cell (default: the whole block only, 3 runs, no garbage-collector cell)")
    parser.add_argument("--no-block", action="store_true", help="the hot message only")
    parser.add_argument("--json", metavar="FILE", help="write every figure, the machine and the versions as JSON")
    parser.add_argument("--plot", metavar="FILE.png", help="draw the comparisons (needs matplotlib)")
    parser.add_argument("--markdown", action="store_true",
                        help="print only the Markdown tables, no title (for docs/performance.md)")
    parser.add_argument("--from-json", metavar="FILE", help="render the tables (and --plot) of an earlier --json run")
    # maintainers' switches (docs/performance.md, "Running the benchmarks"): left out of the help
    parser.add_argument("--update-doc", metavar="FILE.md", help=argparse.SUPPRESS)
    parser.add_argument("--goals", action="store_true", help=argparse.SUPPRESS)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; return the exit status (0, or 1 when a library's bytes differed from pbj's)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser().parse_args(argv)
    args.argv = argv
    return execute(args)


def execute(args: argparse.Namespace) -> int:
    """Run (or reload) and report, for parsed arguments (``pbj bench`` calls this)."""
    from pbj.bench import report
    from pbj.bench.worker import PEERS

    unknown = [p for p in args.peers if p not in PEERS]
    if unknown:
        print(f"pbj bench: error: unknown peer(s) {', '.join(unknown)}; known: {', '.join(PEERS)}", file=sys.stderr)
        return 2
    if not hasattr(args, "argv"):
        args.argv = []
    if args.instructions:
        from pbj.bench import instructions

        return instructions.execute(args)
    if getattr(args, "case", None):
        from pbj.bench import cases

        return cases.execute(args.case, args)
    if args.from_json:
        results = json.loads(Path(args.from_json).read_text())
    else:
        results = run(args)
    if args.json and not args.from_json:
        Path(args.json).write_text(json.dumps(results, indent=1) + "\n")
        _log(f"wrote {args.json}")
    tables = report.markdown(results, header=not args.markdown, goals=args.goals)
    print(tables)
    if args.update_doc:
        update_doc(args.update_doc, report.markdown(results, header=False, goals=False))
        _log(f"updated {args.update_doc}")
    if args.plot:
        try:
            report.plot(results, args.plot)
            _log(f"wrote {args.plot}")
        except ImportError:
            print("pbj bench: --plot needs matplotlib: pip install 'pbj-protobuf[bench]'", file=sys.stderr)
            return 1
    return 0 if report.all_bytes_equal(results) else 1


if __name__ == "__main__":
    sys.exit(main())
