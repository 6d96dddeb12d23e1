"""``pbj bench otel``: pbj against Google's protobuf on a real OpenTelemetry trace export request.

One run, on the same bytes and the same Python: the request of :mod:`pbj.bench.otel` (512 SDK
spans by default, ``--spans N`` for another count; ``--quick``: 24 spans, one timed run) is
checked and then timed with the cells of :func:`pbj.bench.suite.run_block`, for pbj in this
process and for each Google backend asked for (``--peers``; upb and the pure-Python one) in a
worker process of its own:

* ``decode``, ``decode_gc`` (the cyclic collector on), ``decode_read`` (decode, then read every
  field with the generic walkers of :mod:`pbj.bench.readers`: both must give the same checksum);
* encode of a request just decoded (*fresh*: no size cached) and of one encoded before (*sizes
  cached*: pbj keeps each message's size on the object; upb has no such cache), with pbj's
  forward writer (``pbj.encode``), its reverse writer (``reverse=True``), and Google's
  ``SerializeToString()``, the call the OTLP exporters make.

Before anything is timed, pbj's decode of the request must re-encode to the same bytes with both
writers, and Google's too. pbj is timed through ``pbj.encode``/``pbj.decode``, whatever engine
pbj runs (the report names it). The peers that cannot load a schema at run time
(pure-protobuf, betterproto2) are noted, not run. Figures are in ``docs/performance.md``,
section "OpenTelemetry trace export request".
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

__all__ = ["QUICK_SPANS", "ROWS", "TARGET", "run", "checks_passed", "markdown", "callgrind_inputs", "execute",
           "run_peer", "main"]

#: Spans of a ``--quick`` run's request.
QUICK_SPANS = 24
#: The report's rows: (label, pbj cell, Google cell or None, the issue's target as "<= x upb" or None).
ROWS = (("decode", "decode", "decode", None),
        ("decode, garbage collector on", "decode_gc", "decode_gc", None),
        ("decode + read every field", "decode_read", "decode_read", 0.5),
        ("encode, fresh (just decoded)", "forward_fresh", "encode_fresh", 1.5),
        ("encode, sizes cached", "forward_cached", "encode_cached", 1.5),
        ("reverse writer, fresh", "reverse_fresh", None, None),
        ("reverse writer, sizes cached", "reverse_cached", None, None))
#: Why pure-protobuf and betterproto2 are not run.
NO_SCHEMA = "not run: it cannot load a schema at run time (no descriptor loader)"
#: The one timed target: the whole request, one message.
TARGET = "ExportTraceServiceRequest"


def _log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _targets(size: int) -> dict:
    return {TARGET: ("request", [(0, size)])}


def _dist_version(name: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def run_peer(peer: str, raw: bytes, timing: dict) -> dict:
    """Time Google's protobuf (the backend this process loaded) on the request; return the peer's result.

    ``{"peer", "available", "reason", "version", "backend", "result": run_block's result for the
    request}``. The backend must be chosen before (``google_peer.select_backend``).
    """
    from pbj.bench import otel
    from pbj.bench.peers import google_peer
    from pbj.bench.suite import run_block

    codec = otel.google_codec()
    out = {"peer": peer, "available": True, "reason": None, "version": google_peer.version(),
           "backend": google_peer.implementation()}
    out["result"] = run_block(codec, raw, _targets(len(raw)), timing)[TARGET]
    return out


def _run_worker(peer: str, raw_path: Path, timing: dict, folder: Path) -> dict:
    """:func:`run_peer` in a fresh interpreter with ``peer``'s backend (``python -m pbj.bench.otel_run``)."""
    from pbj.bench.worker import ENV, PEERS

    config = folder / f"{peer}.json"
    config.write_text(json.dumps({"peer": peer, "raw_path": str(raw_path), "timing": timing}))
    env = dict(os.environ)
    env[ENV] = PEERS[peer][1] or ""
    proc = subprocess.run([sys.executable, "-m", "pbj.bench.otel_run", str(config)], env=env,
                          stdout=subprocess.PIPE, text=True)
    if proc.returncode != 0 or not proc.stdout.strip():
        return {"peer": peer, "available": False, "reason": f"worker failed with exit status {proc.returncode}"}
    return json.loads(proc.stdout)


def run(args: argparse.Namespace) -> dict:
    """Build the request, check and time pbj and the peers ``args`` asks for; return the ``--json`` document."""
    import pbj
    from pbj.bench import otel
    from pbj.bench.run import FULL, QUICK, machine_info
    from pbj.bench.suite import run_block
    from pbj.bench.worker import BLOCK_PEERS

    settings = QUICK if args.quick else FULL
    timing = dict(settings["timing"])
    for key in ("runs", "warmup"):
        if getattr(args, key, None) is not None:
            timing[key] = getattr(args, key)
            timing["max_runs"] = max(timing["max_runs"], timing["runs"])
    spans = getattr(args, "spans", None) or (QUICK_SPANS if args.quick else otel.SPANS)
    started = time.time()
    _log(f"otel: building a {spans}-span export request with the OpenTelemetry SDK")
    raw = otel.build_request(spans)
    cls = otel.pbj_class()
    request = {"type": otel.REQUEST_TYPE, "bytes": len(raw), **otel.describe(pbj.decode(cls, raw)),
               "opentelemetry_sdk": _dist_version("opentelemetry-sdk"),
               "opentelemetry_proto": _dist_version("opentelemetry-proto")}
    results: dict = {
        "format": "pbj-bench-otel/1",
        "created": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "command": ["pbj", "bench", *getattr(args, "argv", [])],
        "machine": machine_info(), "engine": pbj.engine(),
        "config": {"quick": args.quick, "spans": spans, "timing": timing},
        "request": request, "libraries": {},
    }
    libs = results["libraries"]
    _log("otel: pbj")
    libs["pbj"] = {"peer": "pbj", "available": True, "reason": None, "version": pbj.__version__,
                   "backend": results["engine"],
                   "result": run_block(otel.pbj_codec(cls), raw, _targets(len(raw)), timing)[TARGET]}
    peers = [] if args.no_peers else args.peers
    with tempfile.TemporaryDirectory(prefix="pbj-bench-otel-") as tmp:
        raw_path = Path(tmp) / "request.bin"
        raw_path.write_bytes(raw)
        for peer in peers:
            if peer not in BLOCK_PEERS:
                libs[peer] = {"peer": peer, "available": False, "reason": NO_SCHEMA}
                continue
            _log(f"otel: {peer}: starting a worker process")
            libs[peer] = _run_worker(peer, raw_path, timing, Path(tmp))
    results["machine"]["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
    results["elapsed_s"] = round(time.time() - started, 1)
    return results


def _cell(lib: dict, name: str | None) -> dict | None:
    if name is None or not lib.get("available"):
        return None
    return (lib.get("result") or {}).get("cells", {}).get(name)


def checks_passed(results: dict) -> bool:
    """Every library that ran re-encoded the request to its bytes and read the same checksum as pbj."""
    libs = [lib for lib in results["libraries"].values() if lib.get("available")]
    checksum = results["libraries"]["pbj"]["result"]["checksum"]
    return all(all(lib["result"]["bytes_equal"].values()) and lib["result"]["checksum"] == checksum for lib in libs)


def markdown(results: dict, header: bool = True) -> str:
    """The run as Markdown: machine, Python, engine and request, then µs per request and pbj/upb ratios."""
    from pbj.bench.report import _spread, _table

    m, cfg, req, libs = results["machine"], results["config"], results["request"], results["libraries"]
    out = ["# pbj bench otel", ""] if header else []
    versions = ", ".join(f"{n} {lib['version']}" + (f" ({lib['backend']})" if lib.get("backend") else "")
                         for n, lib in libs.items() if lib.get("available"))
    out += [f"Machine: {m['cpu_model']}, {m['cpus']} CPUs, {m['platform']}; {m['python_implementation']} "
            f"{m['python']}; pbj engine: {results['engine']}. Load average {m.get('load_average_start')} at start, "
            f"{m.get('load_average_end')} at end. Run {results['created']}, {results.get('elapsed_s', 0):.0f} s.", "",
            f"Libraries: {versions}; opentelemetry-sdk {req['opentelemetry_sdk']}, "
            f"opentelemetry-proto {req['opentelemetry_proto']}.", "",
            f"Request: one `{req['type']}` of {req['bytes']:,} bytes: {req['resource_spans']} resource, "
            f"{req['scope_spans']} scopes, {req['spans']:,} spans, {req['events']:,} events, {req['links']:,} link(s), "
            f"{req['attributes']:,} attributes. Timing: µs per request, median [min, max] of >= "
            f"{cfg['timing']['runs']} runs after {cfg['timing']['warmup']} warm-up round(s)"
            + (" — QUICK RUN, figures not meaningful" if cfg.get("quick") else "") + ".", ""]
    peers = [n for n, lib in libs.items() if n != "pbj" and lib.get("available")]
    upb = libs.get("google-upb") if "google-upb" in peers else None
    head = ["operation", "pbj", *peers, *(["pbj/upb", "target"] if upb else [])]
    rows = []
    for label, mine, theirs, target in ROWS:
        p = _cell(libs["pbj"], mine)
        row = [label, _spread(p), *(_spread(_cell(libs[n], theirs)) for n in peers)]
        if upb:
            u = _cell(upb, theirs)
            row.append(f"{p['median_us'] / u['median_us']:.2f} ({p['min_us'] / u['min_us']:.2f})"
                       if p and u and u["median_us"] and u["min_us"] else "")
            row.append(f"≤ {target:g}" if target else "")
        rows.append(row)
    out += _table(head, rows)
    if upb:
        out += ["", "pbj/upb: ratio of the medians (of the best runs); "
                "target: the project's performance target, as a ratio to upb's time. "
                "fresh: a request just decoded (outside the timed region); sizes cached: encoded once before. "
                "upb decodes lazily (Python objects are made when a field is read), so compare decode + read."]
    notes = []
    for n, lib in libs.items():
        if not lib.get("available"):
            notes.append(f"- {n}: {lib['reason']}")
        else:
            r = lib["result"]
            if not all(r["bytes_equal"].values()):
                notes.append(f"- {n}: re-encoding the decoded request did NOT give its bytes {r['bytes_equal']}")
            elif r["checksum"] != libs["pbj"]["result"]["checksum"]:
                notes.append(f"- {n}: read a different checksum from pbj's ({r['checksum']})")
    if notes:
        out += ["", "Notes:", *notes]
    return "\n".join(out) + "\n"


def callgrind_inputs(args: argparse.Namespace, folder: Path) -> dict:
    """The inputs every ``pbj bench otel --instructions`` worker shares (:mod:`pbj.bench.instructions`).

    The request (:mod:`pbj.bench.otel`: ``--spans`` spans, else 512, 24 with ``--quick``) and its
    schema, written to ``folder``; pbj's "read every field" checksum of it; and ``"otel"``: what it
    holds (:func:`pbj.bench.otel.describe`) and how many requests a callgrind region decodes
    (``"batch"``).
    """
    import pbj
    from pbj.bench import otel
    from pbj.bench.instructions import BLOCK_REGION_BYTES, MAX_BLOCK_BATCH
    from pbj.bench.readers import PbjReader

    spans = getattr(args, "spans", None) or (QUICK_SPANS if args.quick else otel.SPANS)
    raw, schema = otel.build_request(spans), otel.descriptor_set()
    request: object = pbj.decode(otel.pbj_class(schema), raw)
    (folder / "otel.bin").write_bytes(raw)
    (folder / "otel.binpb").write_bytes(schema)
    return {"raw_path": str(folder / "otel.bin"), "schema_path": str(folder / "otel.binpb"),
            "checksum": PbjReader().read(request),
            "otel": {"type": otel.REQUEST_TYPE, "bytes": len(raw), **otel.describe(request),
                     "batch": min(MAX_BLOCK_BATCH, max(1, BLOCK_REGION_BYTES // len(raw)))}}


def execute(args: argparse.Namespace) -> int:
    """``pbj bench otel`` for parsed arguments; returns 0, or 1 when a library's bytes or checksum differed."""
    if args.from_json:
        results = json.loads(Path(args.from_json).read_text())
    else:
        try:
            results = run(args)
        except ImportError as exc:
            print(f"pbj bench otel: needs the bench extra ({exc}): pip install 'pbj-protobuf[bench]'",
                  file=sys.stderr)
            return 1
        if args.json:
            Path(args.json).write_text(json.dumps(results, indent=1) + "\n")
            _log(f"wrote {args.json}")
    print(markdown(results, header=not args.markdown), end="")
    return 0 if checks_passed(results) else 1


def main(argv: list[str] | None = None) -> int:
    """The worker: ``python -m pbj.bench.otel_run CONFIG.json`` prints :func:`run_peer`'s result as JSON."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m pbj.bench.otel_run CONFIG.json", file=sys.stderr)
        return 2
    config = json.loads(Path(args[0]).read_text())
    from pbj.bench.peers import google_peer
    from pbj.bench.worker import PEERS

    peer = config["peer"]
    try:
        google_peer.select_backend(PEERS[peer][1] or "upb")
        if google_peer.implementation() != PEERS[peer][1]:
            raise ImportError(f"asked for backend {PEERS[peer][1]}, got {google_peer.implementation()}")
        result = run_peer(peer, Path(config["raw_path"]).read_bytes(), config["timing"])
    except ImportError as exc:
        result = {"peer": peer, "available": False,
                  "reason": f"not installed ({exc}); pip install 'pbj-protobuf[bench]'"}
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
