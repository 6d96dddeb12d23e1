"""Regenerate the measured parts of ``docs/performance.md``: one command, about 10 minutes on 2 cores.

    python -m benchmarks.performance_doc                  # measure, write the JSON, update the page
    python -m benchmarks.performance_doc --from-json      # render the page again from the JSON, no measuring

It runs, one after the other, each with every library in a worker process of its own, two at a
time (``--jobs 2``), every cell timed on the thread's CPU clock (``pbj/bench/timing.py``):

1. ``pbj bench --jobs 2``: the real block and the hot message, pbj's native and pure-Python
   engines, Google's upb and pure-Python backends, pure-protobuf (hot message) and betterproto2
   (classes generated from the shipped descriptor set); the slow pure-Python peers on the whole
   block only (``pbj/bench/worker.py``, ``SLOW_LIMITS``);
2. ``pbj bench otel --jobs 2``: the OpenTelemetry export request (512 SDK spans);
3. ``pbj bench descriptors --jobs 2``: protoc's ``FileDescriptorSet`` of ``../shared/protos``;

writes their JSON to ``benchmarks/results/`` (``full-run.json``, ``otel-run.json``,
``descriptors-run.json``) and rewrites, in ``docs/performance.md``, what lies between each pair of
markers: ``pbj-bench`` (the block and hot-message tables), ``pbj-bench-otel``,
``pbj-bench-descriptors`` (the cases' tables) and ``pbj-bench-far`` (the prose "How far pbj is
from the others", written from the same figures). Nothing else of the page is touched. The
inputs are the same on every run (the shipped block, the seeded OpenTelemetry request, protoc's
output for the same files), so only the machine's figures change. Needs the ``bench`` extra and
``../shared/protos`` beside the checkout.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "performance.md"
RESULTS = ROOT / "benchmarks" / "results"
#: results file -> (``pbj bench`` arguments, doc marker name).
RUNS = {
    "full-run.json": (["--jobs", "2"], "pbj-bench"),
    "otel-run.json": (["otel", "--jobs", "2"], "pbj-bench-otel"),
    "descriptors-run.json": (["descriptors", "--jobs", "2"], "pbj-bench-descriptors"),
}
FAR = "pbj-bench-far"


def _log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def replace_between(text: str, name: str, body: str) -> str:
    """``text`` with what lies between ``<!-- NAME:begin -->`` and ``<!-- NAME:end -->`` replaced by ``body``.

    Raises:
        ValueError: the markers are missing.
    """
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    i, j = text.find(begin), text.find(end)
    if i < 0 or j < i:
        raise ValueError(f"{DOC.name} has no {begin} ... {end} section")
    return text[:i + len(begin)] + "\n" + body.rstrip() + "\n" + text[j:]


def measure(name: str, quick: bool = False) -> dict:
    """Run one ``pbj bench`` of :data:`RUNS` in this process (``--quick`` too when ``quick``); return its
    results document."""
    from pbj.bench import cases
    from pbj.bench import run as bench_run

    argv = RUNS[name][0] + (["--quick"] if quick else [])
    args = bench_run.build_parser().parse_args(argv)
    args.argv = argv
    started = time.time()
    _log(f"== pbj bench {' '.join(argv)}")
    results = cases.run(args.case, args) if args.case else bench_run.run(args)
    _log(f"== pbj bench {' '.join(argv)}: {time.time() - started:.0f} s")
    return results


# ------------------------------------------------------------------ the prose

def _lo_hi(given: Sequence[float | None]) -> str:
    values = sorted(v for v in given if v is not None)
    if not values:
        return "n/a"
    fmt = (lambda v: f"{v:.2f}") if values[-1] < 10 else (lambda v: f"{v:.1f}" if v < 10 else f"{v:.0f}")
    return fmt(values[0]) if fmt(values[0]) == fmt(values[-1]) else f"{fmt(values[0])}\u2013{fmt(values[-1])}"


def _x(v: float | None) -> str:
    if v is None:
        return "n/a"
    return f"{v:.2f}x" if v < 10 else f"{v:.0f}x"


def _case_ratio(results: dict | None, lib: str, own: str, other: str, peer: str = "google-upb") -> float | None:
    """A case's ratio ``lib``'s best run of ``own`` / ``peer``'s best run of ``other``."""
    if not results:
        return None
    libs = results["libraries"]
    a, b = libs.get(lib) or {}, libs.get(peer) or {}
    ca = ((a.get("result") or {}).get("cells") or {}).get(own) if a.get("available") else None
    cb = ((b.get("result") or {}).get("cells") or {}).get(other) if b.get("available") else None
    return ca["min_us"] / cb["min_us"] if ca and cb and cb["min_us"] else None


def far_prose(full: dict, otel: dict | None, fds: dict | None) -> str:
    """The bullets of "How far pbj is from the others", from the three runs' figures (best runs)."""
    from pbj.bench.report import summarize

    s = summarize(full)
    libs = full["libraries"]
    m = full["machine"]
    when = full["created"].replace("T", " ").split("+")[0][:16]
    load = f"{(m.get('load_average_start') or ['?'])[0]} and {(m.get('load_average_end') or ['?'])[0]}"
    out = [f"From the tables above (runs of {when} UTC on {m['cpu_model']}, {m['cpus']} cores, load average "
           f"{load} at the block run's start and end; the thread's CPU time, ratios of the best runs):", ""]
    mine = [n for n in ("pbj", "pbj-python") if (libs.get(n) or {}).get("available")]
    def engine_of(me: str) -> str:
        return "the native engine" if libs[me].get("backend") == "native" else "the pure-Python engine"

    for me in mine:
        engine = engine_of(me)
        hot = s["hot_speedup"].get(me, {}).get("google-upb", {})
        vs = s["vs_upb"].get(me, {})
        whole = vs.get("BLOCK/all", {})
        batches = [v.get("decode_read") for t, v in vs.items() if t != "BLOCK/all"]
        inv = (lambda v: 1 / v if v else None)
        parts = [f"decode + read every field takes {_x(inv(hot.get('decode_read')))} upb's time on the hot message, "
                 f"{_x(whole.get('decode_read'))} on the whole block ({_lo_hi(batches)}x on the batches)"]
        if otel:
            parts.append(f"{_x(_case_ratio(otel, me, 'decode_read', 'decode_read'))} on the OpenTelemetry request")
        if fds:
            parts.append(f"{_x(_case_ratio(fds, me, 'decode_read', 'decode_read'))} on protoc's descriptor set")
        enc = (f"encoding the whole block fresh takes {_x(whole.get('encode_fresh'))} upb's time with the forward "
               f"writer and {_x(whole.get('reverse_fresh'))} with the reverse one, {_x(whole.get('encode_cached'))} "
               f"with sizes cached; the hot message {_x(inv(hot.get('encode_fresh')))} fresh and "
               f"{_x(inv(hot.get('encode')))} with sizes cached")
        for label, case in (("the OpenTelemetry request", otel), ("the descriptor set", fds)):
            if case:
                enc += (f"; {label} {_x(_case_ratio(case, me, 'forward_fresh', 'encode_fresh'))} fresh "
                        f"({_x(_case_ratio(case, me, 'reverse_fresh', 'encode_fresh'))} reverse), "
                        f"{_x(_case_ratio(case, me, 'forward_cached', 'encode_cached'))} with sizes cached")
        out.append(f"* **pbj, {engine}, against upb (C)**: "
                   + ", ".join(parts) + "; " + enc + ".")
    for me in mine:
        engine = engine_of(me)
        peers = []
        for peer in ("google-python", "betterproto2", "pure-protobuf"):
            hot = s["hot_speedup"].get(me, {}).get(peer)
            if not hot:
                continue
            text = f"{peer} {_lo_hi([hot.get(op) for op in ('encode', 'encode_fresh', 'decode', 'decode_read')])}x " \
                   "slower on the hot message"
            block = s["block_speedup"].get(me, {}).get(peer, {}).get("BLOCK/all")
            if block:
                text += f", {_lo_hi([v for k, v in block.items() if k != 'reverse_fresh'])}x on the whole block"
            for label, case in (("OpenTelemetry request", otel), ("descriptor set", fds)):
                if not case:
                    continue
                ratios = [_case_ratio(case, peer, theirs, own, peer=me) for own, theirs in
                          (("decode_read", "decode_read"), ("forward_fresh", "encode_fresh"),
                           ("forward_cached", "encode_cached"))]
                if any(r is not None for r in ratios):
                    text += f", {_lo_hi(ratios)}x on the {label}"
            peers.append(text)
        if peers:
            out.append(f"* **pbj, {engine}, against the pure-Python peers** (decode, "
                       "decode + read, encode fresh and with sizes cached; their time / pbj's): " + "; ".join(peers)
                       + ".")
    if "pbj" in mine and "pbj-python" in mine:
        native, python = libs["pbj"], libs["pbj-python"]
        hot = [(python["hot"]["ops"][op]["min_us"] / native["hot"]["ops"][op]["min_us"])
               for op in ("encode", "encode_fresh", "decode", "decode_read", "reverse", "reverse_fresh")
               if op in native["hot"].get("ops", {}) and op in python["hot"].get("ops", {})]
        block = []
        for t, r in (native.get("block") or {}).items():
            for op, c in r["cells"].items():
                other = ((python.get("block") or {}).get(t) or {}).get("cells", {}).get(op)
                if other and c["min_us"] and op != "decode_gc":
                    block.append(other["min_us"] / c["min_us"])
        out.append(f"* **The two engines**: the native engine takes {_lo_hi([1 / v for v in hot])} of the pure-Python "
                   f"engine's time on the hot message's operations and {_lo_hi([1 / v for v in block])} on the "
                   "block's batches (decode + read every field gains least: the reading is Python attribute access "
                   "on either engine).")
    notes = [f"{n}: {lib['block']}" for n, lib in libs.items() if isinstance(lib.get("block"), str)]
    from pbj.bench.cases import _mismatch

    for case in (otel or {}, fds or {}):
        for n, lib in (case.get("libraries") or {}).items():
            r = lib.get("result") or {}
            same = all((r.get("same_message") or {}).values()) if r.get("same_message") else False
            if lib.get("available") and r and not all(r["bytes_equal"].values()) and not same:
                notes.append(f"{n} on the {case['case']} case: {_mismatch(case['case'], n, r)}")
    if notes:
        out.append("* **Not compared**: " + "; ".join(notes) + ".")
    return "\n".join(out) + "\n"


def render(runs: dict[str, dict], doc: Path = DOC) -> None:
    """Write every marked section of ``doc`` from the runs (``{results file name: results}``)."""
    from pbj.bench import cases, report

    text = doc.read_text()
    for name, results in runs.items():
        marker = RUNS[name][1]
        if marker == "pbj-bench":
            body = report.markdown(results, header=False)
        else:
            body = cases.markdown(results, header=False)
        text = replace_between(text, marker, body)
    text = replace_between(text, FAR, far_prose(runs["full-run.json"], runs.get("otel-run.json"),
                                                runs.get("descriptors-run.json")))
    doc.write_text(text)


def main(argv: list[str] | None = None) -> int:
    """Measure (or, with ``--from-json``, reload) and rewrite the page; the exit status of the checks."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.performance_doc",
                                     description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--from-json", action="store_true",
                        help="render from benchmarks/results/*.json, measure nothing")
    parser.add_argument("--doc", type=Path, default=DOC, help="the page to rewrite (default docs/performance.md)")
    parser.add_argument("--results", type=Path, default=RESULTS,
                        help="the folder of the JSON files (default benchmarks/results)")
    parser.add_argument("--quick", action="store_true",
                        help="every run with --quick (a smoke test of the command: figures not meaningful)")
    args = parser.parse_args(argv)
    from pbj.bench import cases, report

    started = time.time()
    runs: dict[str, dict] = {}
    for name in RUNS:
        path = args.results / name
        if args.from_json:
            runs[name] = json.loads(path.read_text())
        else:
            runs[name] = measure(name, quick=args.quick)
            path.write_text(json.dumps(runs[name], indent=1) + "\n")
            _log(f"wrote {path}")
    render(runs, args.doc)
    _log(f"updated {args.doc} in {time.time() - started:.0f} s")
    ok = report.all_bytes_equal(runs["full-run.json"]) and all(
        cases.checks_passed(r) for n, r in runs.items() if n != "full-run.json")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
