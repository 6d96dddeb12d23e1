"""``pbj bench --instructions``: instructions per operation, counted by callgrind, pbj beside upb.

Wall time on a shared machine drifts by 2-3x from one minute to the next; the number of machine
instructions an operation executes does not. This runner counts them with valgrind's callgrind
(the ``Ir`` event: instructions executed, in the interpreter, the libraries and the kernel-call
wrappers alike) for the benchmark's operations:

* the hot message (``pbj/bench/hot.proto`` ``TransactionBody``, value in
  :mod:`pbj.bench.hot_values`): decode; encode of a fresh object (just decoded, no size
  cached); encode with sizes cached (the same built object again); decode + read every field
  (the hand-written ``read_all`` of each library); pbj's reverse writer;
* the whole real block (``pbj/data/*.blk.gz`` as one ``Block``, HAPI v0.55.0 descriptors loaded
  at run time): decode; fresh encode; sizes-cached encode; decode + walk every field
  (:mod:`pbj.bench.readers`);
* with the ``descriptors`` case (``pbj bench descriptors --instructions``), instead of those
  two: a ``FileDescriptorSet`` protoc wrote of every schema under ``../shared/protos``
  (:mod:`pbj.bench.cases`), the same five operations as the ``otel`` case (decode + read is
  the generic walk), pbj beside upb's ``descriptor_pb2``;
* with the ``otel`` case (``pbj bench otel --instructions``), instead of those two: a real
  OpenTelemetry trace export request (:mod:`pbj.bench.otel`, 512 SDK spans, schema loaded at run
  time): decode; fresh encode; sizes-cached encode; decode + read every field (the same generic
  readers); pbj's reverse writer. pbj is counted through ``pbj.encode``/``pbj.decode``, whatever
  engine it runs (the report names it); upb through ``opentelemetry-proto``'s own class;

for pbj and for Google's ``protobuf`` with its upb backend, in the same run, each library and
part (hot, block) in a process of its own under callgrind (at most two at a time).

**Method.** Python cannot issue valgrind's client requests, so the measured code is delimited by
calls of a C function that nothing else in the process calls (``os.getppid`` enters libc's
``getppid``) and callgrind runs with ``--dump-before=getppid``: each time that function is
entered, callgrind writes the counts since the previous dump to a new file and starts again from
zero. The worker (:mod:`pbj.bench.callgrind_worker`) runs, for each operation and each run, two
marked regions with the same loop over the same list of ``batch`` inputs (200 hot messages; the
real block once, a small block of your own up to 100 times): one calls the operation on each
input, the other a function that returns its argument. Instructions per operation = (first
region - second region) / ``batch``: the loop, the call of a Python function and the marks
cancel out, and only the operation is left, including freeing its result (each result is
dropped before the next operation, so the allocator is in a steady state). Before the regions
every operation is checked against pbj's bytes and checksum, the garbage collector runs once and
is then off for the rest of the process (``gc.disable()``, as the goals say), and every
operation runs once unmarked (compilation, specialisation; with the collector already off, or
the first run differs by up to 4%). ``PYTHONHASHSEED=0`` fixes string hashing, so every process
executes the same code. Nothing is compiled and no valgrind header is needed: only the
``valgrind`` program. The dump count is checked (a stray call of the marker would show), and the
report gives the largest difference between the runs of each operation: under 0.5% here, and
the same figures within 0.3% from one invocation to the next.

Where valgrind is missing, the runner prints ``skipped: valgrind not found; apt-get install
valgrind`` and exits 0. Figures and their reading are in ``docs/performance.md``, section
"Instruction counts (callgrind)".
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pbj
from pbj.bench.callgrind_worker import BLOCK_OPS, HOT_OPS, MARK_FUNCTION, OTEL_OPS

__all__ = ["QUICK", "FULL", "SKIP_MESSAGE", "LABELS", "valgrind", "valgrind_version", "callgrind_command",
           "read_dumps", "per_operation", "run", "markdown", "execute"]

#: Settings of a full run: 200 hot messages per region, the whole block, 2 runs, 1 warm-up pass.
FULL = {"hot_batch": 200, "runs": 2, "warmup": 1, "max_items": None}
#: ``--quick``: 50 hot messages, the block cut to its first 60 items (a smoke run; exact all the same).
QUICK = {"hot_batch": 50, "runs": 2, "warmup": 1, "max_items": 60}
#: A block region decodes or encodes the block this many bytes' worth of times (1 to
#: :data:`MAX_BLOCK_BATCH` times): once for the real block, more for a small one, so that the
#: allocator's occasional large steps weigh little.
BLOCK_REGION_BYTES = 64 * 1024
MAX_BLOCK_BATCH = 100

SKIP_MESSAGE = "skipped: valgrind not found; apt-get install valgrind"

#: (part, operation) -> report label.
LABELS = {
    ("hot", "decode"): "hot decode",
    ("hot", "encode_fresh"): "hot fresh encode",
    ("hot", "encode_cached"): "hot sizes-cached encode",
    ("hot", "decode_read"): "hot decode + read every field",
    ("hot", "encode_reverse"): "hot reverse encode",
    ("block", "decode"): "block decode",
    ("block", "encode_fresh"): "block fresh encode",
    ("block", "encode_cached"): "block sizes-cached encode",
    ("block", "decode_walk"): "block decode + walk",
    ("otel", "decode"): "otel decode",
    ("otel", "encode_fresh"): "otel fresh encode",
    ("otel", "encode_cached"): "otel sizes-cached encode",
    ("otel", "decode_read"): "otel decode + read every field",
    ("otel", "encode_reverse"): "otel reverse encode",
    ("descriptors", "decode"): "descriptor set decode",
    ("descriptors", "encode_fresh"): "descriptor set fresh encode",
    ("descriptors", "encode_cached"): "descriptor set sizes-cached encode",
    ("descriptors", "decode_read"): "descriptor set decode + walk",
    ("descriptors", "encode_reverse"): "descriptor set reverse encode",
}
PART_OPS = {"hot": HOT_OPS, "block": BLOCK_OPS, "otel": OTEL_OPS, "descriptors": OTEL_OPS}
#: The one-payload cases (:mod:`pbj.bench.cases`) that ``pbj bench CASE --instructions`` counts.
CASE_PARTS = ("otel", "descriptors")
LIBRARIES = ("pbj", "google-upb")


def _log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def valgrind() -> str | None:
    """The path of the ``valgrind`` program (``$PATH``), or ``None`` when it is not installed."""
    return shutil.which("valgrind")


def valgrind_version(program: str) -> str:
    """``valgrind --version`` without its ``valgrind-`` prefix (``"3.19.0"``)."""
    out = subprocess.run([program, "--version"], capture_output=True, text=True).stdout.strip()
    return out.removeprefix("valgrind-")


def callgrind_command(program: str, out_file: Path, log_file: Path, config_path: Path) -> list[str]:
    """The command line that runs the worker on ``config_path`` under callgrind."""
    return [program, "--tool=callgrind", f"--dump-before={MARK_FUNCTION}", f"--callgrind-out-file={out_file}",
            f"--log-file={log_file}", sys.executable, "-m", "pbj.bench.callgrind_worker", str(config_path)]


def read_dumps(out_file: Path) -> list[int]:
    """The ``Ir`` total of every numbered dump ``out_file.1``, ``out_file.2`` ..., in order.

    Raises:
        ValueError: a dump without a ``totals:`` or ``summary:`` line.
    """
    found = []
    for path in out_file.parent.glob(out_file.name + ".*"):
        suffix = path.name[len(out_file.name) + 1:]
        if suffix.isdigit():
            found.append((int(suffix), path))
    totals = []
    for _n, path in sorted(found):
        total = None
        for line in path.read_text(errors="replace").splitlines():
            if line.startswith(("totals:", "summary:")):
                total = int(line.split()[1])
        if total is None:
            raise ValueError(f"{path}: no totals line")
        totals.append(total)
    return totals


def per_operation(regions: list[list], dumps: list[int], batch: int) -> dict[str, dict]:
    """Instructions per operation from the worker's regions and callgrind's dumps.

    Args:
        regions: ``[operation, run, "op" | "base"]`` in the order they ran (the manifest's).
        dumps: the ``Ir`` of every dump in order: ``2 * len(regions)`` of them (region ``i`` is dump ``2i + 1``).
        batch: operations per region.

    Returns:
        operation -> ``{"per_op": mean over runs, "runs": [per run], "spread": (max - min) / mean,
        "base": the identity region per input (loop, call and marks: what was subtracted)}``.

    Raises:
        ValueError: the dump count does not match (something else entered the marker function).
    """
    if len(dumps) != 2 * len(regions):
        raise ValueError(f"expected {2 * len(regions)} callgrind dumps, found {len(dumps)}: "
                         f"{MARK_FUNCTION}() was entered outside the marks, or not seen by callgrind")
    counts: dict[tuple, int] = {(name, run, kind): dumps[2 * i + 1] for i, (name, run, kind) in enumerate(regions)}
    out: dict[str, dict] = {}
    for (name, run, kind), ir in counts.items():
        if kind == "op":
            r = out.setdefault(name, {"runs": [], "base_runs": []})
            r["runs"].append((ir - counts[name, run, "base"]) / batch)
            r["base_runs"].append(counts[name, run, "base"] / batch)
    for r in out.values():
        mean = sum(r["runs"]) / len(r["runs"])
        r["per_op"] = mean
        r["spread"] = (max(r["runs"]) - min(r["runs"])) / mean if mean else 0.0
        r["base"] = sum(r.pop("base_runs")) / len(r["runs"])
    return out


def _measure(program: str, config: dict, folder: Path) -> dict:
    """Run one worker under callgrind; return ``{"available", "reason", "version", "backend", "ops", ...}``."""
    name = f"{config['library']}-{config['part']}"
    config = {**config, "manifest": str(folder / f"{name}.manifest.json")}
    config_path = folder / f"{name}.config.json"
    config_path.write_text(json.dumps(config))
    out_file, log_file = folder / f"{name}.callgrind", folder / f"{name}.valgrind.log"
    env = dict(os.environ, PYTHONHASHSEED="0")
    env["PYTHONPATH"] = os.pathsep.join([str(Path(pbj.__file__).resolve().parents[1]),
                                         *filter(None, [os.environ.get("PYTHONPATH")])])
    env.pop("PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION", None)
    if config["library"] == "google-upb":
        env["PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION"] = "upb"
    if config["library"] == "pbj-python" or (config["library"] == "pbj" and config.get("engine") == "python"):
        env["PBJ_ENGINE"] = "python"  # pbj on its pure-Python engine, in the same run
        config = {**config, "library": "pbj"}
        config_path.write_text(json.dumps(config))
    started = time.time()
    _log(f"callgrind: {name}: starting")
    proc = subprocess.run(callgrind_command(program, out_file, log_file, config_path), env=env,
                          capture_output=True, text=True)
    result: dict = {"available": False, "reason": None, "seconds": round(time.time() - started, 1)}
    manifest_path = Path(config["manifest"])
    if not manifest_path.exists():
        log = log_file.read_text(errors="replace")[-2000:] if log_file.exists() else ""
        result["reason"] = f"worker failed with exit status {proc.returncode}: {proc.stderr[-2000:]}{log}"
        return result
    manifest = json.loads(manifest_path.read_text())
    result.update(version=manifest.get("version"), backend=manifest.get("backend"), bytes=manifest.get("bytes"))
    if manifest["error"]:
        result["reason"] = manifest["error"]
        return result
    try:
        result["ops"] = per_operation(manifest["regions"], read_dumps(out_file), config["batch"])
    except ValueError as exc:
        result["reason"] = f"cannot read callgrind's dumps: {exc}"
        return result
    result["available"] = True
    _log(f"callgrind: {name}: done in {result['seconds']:.0f} s")
    return result


def _prepare(args: argparse.Namespace, max_items: int | None, folder: Path) -> dict:
    """Everything the workers share, built natively: the hot message's bytes and checksum, the block
    (written to ``folder``), and ``"block": {"source", "bytes", "items", "batch"}`` unless ``--no-block``."""
    from pbj.bench import hot_pbj, workload
    from pbj.bench.hot_values import HOT_VALUE

    hot = hot_pbj.build_hot(HOT_VALUE)
    shared: dict = {"expected_hex": pbj.encode(hot).hex(), "checksum": hot_pbj.read_all(hot)}
    if not args.no_block:
        schema = workload.load_schema(args.descriptor_set, args.proto, args.include)
        w = workload.load_workload(args.block, schema, block_type=args.block_type, max_items=max_items)
        (folder / "block.bin").write_bytes(w.raw)
        (folder / "schema.binpb").write_bytes(schema)
        shared.update(raw_path=str(folder / "block.bin"), schema_path=str(folder / "schema.binpb"),
                      block_type=w.block_type,
                      block={"source": w.source, "bytes": len(w.raw), "items": len(w.kinds),
                             "batch": min(MAX_BLOCK_BATCH, max(1, BLOCK_REGION_BYTES // max(len(w.raw), 1)))})
    return shared


def run(args: argparse.Namespace, program: str) -> dict:
    """Count everything ``args`` asks for with the valgrind at ``program``; return the results document."""
    from pbj.bench.run import machine_info

    settings = dict(QUICK if args.quick else FULL, block_batch=1)
    if args.hot_batch:
        settings["hot_batch"] = args.hot_batch
    if args.runs:
        settings["runs"] = args.runs
    if args.warmup is not None:
        settings["warmup"] = args.warmup
    if args.max_items is not None:
        settings["max_items"] = args.max_items
    started = time.time()
    engine = getattr(args, "engine", "both")
    both = engine == "both" and pbj.engine() == "native"
    libraries = ["pbj"] + (["pbj-python"] if both else []) + (
        [] if args.no_peers or "google-upb" not in args.peers else ["google-upb"])
    case = getattr(args, "case", None)
    parts = [case] if case in CASE_PARTS else ["hot"] + ([] if args.no_block else ["block"])
    results: dict = {
        "format": "pbj-bench-instructions/1",
        "created": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "command": ["pbj", "bench", *getattr(args, "argv", [])],
        "machine": machine_info(),
        "valgrind": valgrind_version(program),
        "libraries": {lib: {} for lib in libraries},
    }
    with tempfile.TemporaryDirectory(prefix="pbj-callgrind-") as tmp:
        folder = Path(tmp)
        if case in CASE_PARTS:
            from pbj.bench.cases import callgrind_inputs

            shared = callgrind_inputs(case, args, folder)
            results[case], results["engine"] = shared.pop("case"), pbj.engine()
            settings[f"{case}_batch"] = results[case].pop("batch")
        else:
            shared = _prepare(args, settings["max_items"], folder)
        block = results["block"] = shared.pop("block", None)
        if block:
            settings["block_batch"] = block.pop("batch")
        results["config"] = {"quick": args.quick, **settings, "parts": parts}
        jobs = []
        if engine == "python":
            shared["engine"] = "python"
        for part in reversed(parts):  # the long block workers first
            for lib in libraries:
                batch = settings[f"{part}_batch"]
                jobs.append({**shared, "library": lib, "part": part, "batch": batch, "runs": settings["runs"],
                             "warmup": settings["warmup"]})
        workers = max(1, min(2, os.cpu_count() or 1))
        with ThreadPoolExecutor(max_workers=workers) as pool:
            done = list(pool.map(lambda job: _measure(program, job, folder), jobs))
    for job, result in zip(jobs, done, strict=True):
        results["libraries"][job["library"]][job["part"]] = result
    results["machine"]["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
    results["elapsed_s"] = round(time.time() - started, 1)
    return results


def _count(ir: float | None) -> str:
    if ir is None:
        return "n/a"
    if ir >= 1e8:
        return f"{ir / 1e6:,.0f}M"
    if ir >= 1e6:
        return f"{ir / 1e6:,.1f}M"
    if ir >= 1e3:
        return f"{ir / 1e3:,.1f}k"
    return f"{ir:,.0f}"


def _op(results: dict, lib: str, part: str, op: str) -> dict | None:
    r = results["libraries"].get(lib, {}).get(part) or {}
    return (r.get("ops") or {}).get(op) if r.get("available") else None


def _otel_line(results: dict) -> str:
    """A case's payload and pbj's engine, for the header ("" for the hot message and the block)."""
    req, fds = results.get("otel"), results.get("descriptors")
    if req:
        return (f" Request: one OTLP `ExportTraceServiceRequest`, {req['bytes']:,} bytes, {req['spans']:,} spans, "
                f"{req['events']:,} events, {req['links']:,} link(s), {req['attributes']:,} attributes. "
                f"pbj engine: {results.get('engine', 'python')}.")
    if fds:
        return (f" Payload: a `FileDescriptorSet` written by protoc (--include_imports --include_source_info), "
                f"{fds['bytes']:,} bytes, {fds['files']} files. pbj engine: {results.get('engine', 'python')}.")
    return ""


def markdown(results: dict, header: bool = True) -> str:
    """The run as Markdown: machine and method line, then one table of instructions per operation."""
    m, cfg = results["machine"], results["config"]
    out = ["# pbj bench --instructions", ""] if header else []
    versions = []
    for lib, parts in results["libraries"].items():
        for r in parts.values():
            if r.get("available"):
                versions.append(f"{lib} {r['version']}" + (f" ({r['backend']})" if r.get("backend") else ""))
                break
    block = results.get("block")
    out += [f"Machine: {m['cpu_model']}, {m['cpus']} CPUs, {m['platform']}; {m['python_implementation']} "
            f"{m['python']}; valgrind {results['valgrind']}. Run {results['created']}, "
            f"{results.get('elapsed_s', 0):.0f} s.", "",
            f"Libraries: {', '.join(versions) or 'none'}."
            + (f" Block: {block['source']}, {block['bytes']:,} bytes, {block['items']:,} items." if block else "")
            + _otel_line(results), "",
            "Instructions per operation (callgrind Ir), garbage collector off; "
            + (next((f"{cfg[f'{c}_batch']} payload(s)" for c in CASE_PARTS if c in cfg["parts"]), None) or
               f"{cfg['hot_batch']} hot messages or {cfg['block_batch']} block(s)")
            + " per region, minus the same loop over an identity function; "
            f"mean of {cfg['runs']} run(s); spread: largest difference between runs."
            + ((" Quick run: a small payload." if set(CASE_PARTS) & set(cfg["parts"]) else
                " Quick run: fewer hot messages per region, a cut block.") if cfg.get("quick") else ""), ""]
    libs = list(results["libraries"])
    head = ["operation", *libs, *(["pbj/upb"] if "google-upb" in libs else []), "spread"]
    rows = []
    for part in cfg["parts"]:
        for op in PART_OPS[part]:
            cells = {lib: _op(results, lib, part, op) for lib in libs}
            row = [LABELS[part, op], *(_count(c["per_op"]) if c else "n/a" for c in cells.values())]
            if "google-upb" in libs:
                p, u = cells.get("pbj"), cells.get("google-upb")  # pbj: the engine in use (native when built)
                row.append(f"{p['per_op'] / u['per_op']:.1f}" if p and u and u["per_op"] > 0 else "n/a")
            spread = max((c["spread"] for c in cells.values() if c), default=None)
            row.append("n/a" if spread is None else f"{100 * spread:.2f}%")
            rows.append(row)
    out += ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    notes = [f"- {lib} {part}: {r['reason']}" for lib, parts in results["libraries"].items()
             for part, r in parts.items() if not r.get("available")]
    if notes:
        out += ["", "Not measured:", *notes]
    return "\n".join(out) + "\n"


def execute(args: argparse.Namespace) -> int:
    """Run ``pbj bench --instructions`` for parsed arguments (or render ``--from-json``); return the exit status.

    0 when every worker ran (a peer that is not installed is noted, not a failure), or when valgrind
    is missing (after printing :data:`SKIP_MESSAGE`); 1 when a worker failed or a library's bytes
    differed from pbj's (the reason is in the notes under the table).
    """
    if args.from_json:
        results = json.loads(Path(args.from_json).read_text())
        print(markdown(results, header=not args.markdown), end="")
        return 0
    program = valgrind()
    if program is None:
        print(f"pbj bench --instructions: {SKIP_MESSAGE}")
        return 0
    results = run(args, program)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1) + "\n")
        _log(f"wrote {args.json}")
    print(markdown(results, header=not args.markdown), end="")
    failed = [r for parts in results["libraries"].values() for r in parts.values()
              if not r.get("available") and not (r.get("reason") or "").startswith("not installed")]
    return 1 if failed else 0
