"""One real payload, every library: ``pbj bench otel`` and ``pbj bench descriptors``.

A *case* is one message made by another project's own code, decoded and encoded by every library
with the same schema and timed with the cells of :func:`pbj.bench.suite.run_block` (the thread's
CPU clock, :mod:`pbj.bench.timing`):

* ``otel``: the ``ExportTraceServiceRequest`` the OpenTelemetry SDK and its OTLP encoder make
  (:mod:`pbj.bench.otel`; 512 spans, ``--spans N``, ``--quick``: 24), schema: the descriptors
  ``opentelemetry-proto`` was generated from;
* ``descriptors``: a ``google.protobuf.FileDescriptorSet`` written by protoc (``grpc_tools.protoc
  --include_imports --include_source_info``) of every ``.proto`` file of a folder of schemas: by
  default the project's test schemas (``../shared/protos`` beside a checkout: HAPI, pbj's
  integration schemas, the well-known types, the conformance and editions messages; 198 files,
  about 1.1 MB), ``--protos DIR`` for another; schema: ``descriptor.proto`` as Google's protobuf
  ships it (``descriptor_pb2``). proto2, extension ranges, source info: what descriptor sets,
  plugins and reflection services carry. ``--quick`` compiles the ``google/protobuf/`` files only.

Each library runs in a worker process of its own (``python -m pbj.bench.cases CONFIG.json``),
``--jobs`` at a time: pbj on the engine it picks (``pbj``: native when built) and on the
pure-Python engine (``pbj-python``), Google's upb and pure-Python backends on the case's Google
class, betterproto2 on classes its own compiler generates from the case's descriptor set at
bench time (:mod:`pbj.bench.peers.betterproto_gen`). Before anything is timed, each library's
decode must re-encode to the payload's bytes and its "read every field" must give pbj's
checksum; a library that fails the check is reported with what it wrote instead, not timed.
pure-protobuf can neither load nor generate a schema and is noted.
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
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Case", "CASES", "ROWS", "QUICK_SPANS", "default_protos", "protoc_descriptor_set", "descriptor_schema",
           "prepare", "run", "checks_passed", "markdown", "callgrind_inputs", "execute", "run_peer", "main"]

#: Spans of a ``--quick`` run's OpenTelemetry request.
QUICK_SPANS = 24
#: The report's rows: (label, pbj cell, other library's cell or None, key of the case's target or None).
ROWS = (("decode", "decode", "decode", None),
        ("decode, garbage collector on", "decode_gc", "decode_gc", None),
        ("decode + read every field", "decode_read", "decode_read", "decode_read"),
        ("encode, fresh (just decoded)", "forward_fresh", "encode_fresh", "encode"),
        ("encode, sizes cached", "forward_cached", "encode_cached", "encode"),
        ("reverse writer, fresh", "reverse_fresh", None, "encode"),
        ("reverse writer, sizes cached", "reverse_cached", None, None))
#: Why pure-protobuf is not run on a case.
NO_SCHEMA = "not run: it can neither load a schema at run time nor generate classes from one"


def _log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _dist_version(name: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


@dataclass(frozen=True)
class Case:
    """One payload case.

    Attributes:
        name: the ``pbj bench`` case (``otel``, ``descriptors``).
        type_name: the full name of the payload's message.
        target: the name of its one timed batch.
        build: ``args -> (payload bytes, FileDescriptorSet bytes of its schema, description)``.
        google_class: ``schema bytes -> Google protobuf's class`` (in a worker, after the backend is chosen).
        targets: the native engine's goals: ``{"decode_read" | "encode": ratio to upb}``.
        describe: one sentence on the payload, from its description.
    """

    name: str
    type_name: str
    target: str
    build: Callable[[argparse.Namespace], tuple[bytes, bytes, dict]]
    google_class: Callable[[bytes], Any]
    targets: dict[str, float]
    describe: Callable[[dict], str]


# ------------------------------------------------------------------ the OpenTelemetry case

def _otel_build(args: argparse.Namespace) -> tuple[bytes, bytes, dict]:
    import pbj
    from pbj.bench import otel

    spans = getattr(args, "spans", None) or (QUICK_SPANS if args.quick else otel.SPANS)
    _log(f"otel: building a {spans}-span export request with the OpenTelemetry SDK")
    raw, schema = otel.build_request(spans), otel.descriptor_set()
    about = {"type": otel.REQUEST_TYPE, "bytes": len(raw), **otel.describe(pbj.decode(otel.pbj_class(schema), raw)),
             "opentelemetry_sdk": _dist_version("opentelemetry-sdk"),
             "opentelemetry_proto": _dist_version("opentelemetry-proto")}
    return raw, schema, about


def _otel_google(_schema: bytes) -> Any:
    from pbj.bench import otel

    return otel.google_class()


def _otel_describe(req: dict) -> str:
    return (f"Request: one `{req['type']}` of {req['bytes']:,} bytes made by opentelemetry-sdk "
            f"{req.get('opentelemetry_sdk')} and its OTLP encoder: {req['resource_spans']} resource, "
            f"{req['scope_spans']} scopes, {req['spans']:,} spans, {req['events']:,} events, {req['links']:,} "
            f"link(s), {req['attributes']:,} attributes.")


# ------------------------------------------------------------------ the descriptor-set case

def default_protos() -> Path:
    """The schemas the ``descriptors`` case compiles by default: ``$PBJ_SHARED/protos``, else
    ``../shared/protos`` beside the checkout pbj was imported from."""
    import pbj

    shared = os.environ.get("PBJ_SHARED")
    root = Path(shared) if shared else Path(pbj.__file__).resolve().parents[1].parent / "shared"
    return root / "protos"


def _roots_and_files(protos: Path) -> tuple[list[Path], list[str]]:
    """protoc's import folders and files for every ``.proto`` under ``protos``.

    Each folder right under ``protos`` is an import folder (its files import each other by paths
    relative to it) when it holds ``.proto`` files itself or a ``google/`` folder (the well-known
    types are imported as ``google/protobuf/...``); otherwise each of its subfolders is one (HAPI's
    ``block``, ``platform``, ``services``, ``streams``). ``protos`` itself is one when it holds
    ``.proto`` files. Files are listed relative to their folder, sorted, so that the set is the same
    on every machine.
    """
    roots: list[Path] = [protos] if any(protos.glob("*.proto")) else []
    for d in sorted(p for p in protos.iterdir() if p.is_dir()):
        if any(d.glob("*.proto")) or (d / "google").is_dir():
            roots.append(d)
        else:
            roots += sorted(p for p in d.iterdir() if p.is_dir() and any(p.rglob("*.proto")))
    files: list[str] = []
    for r in roots:
        found = r.glob("*.proto") if r == protos else r.rglob("*.proto")
        files += sorted(str(p.relative_to(r)) for p in found)
    return roots, files


def protoc_descriptor_set(protos: Path, out: Path, prefix: str = "") -> bytes:
    """Compile every ``.proto`` file under ``protos`` (whose path in its import folder starts with
    ``prefix``) with ``grpc_tools.protoc --include_imports --include_source_info --experimental_editions``
    into ``out``; return the ``FileDescriptorSet`` bytes.

    Raises:
        FileNotFoundError: ``protos`` holds no ``.proto`` file.
        RuntimeError: protoc refused the files.
        ImportError: ``grpcio-tools`` is not installed.
    """
    import grpc_tools
    from grpc_tools import protoc

    roots, files = _roots_and_files(protos)
    files = [f for f in files if f.startswith(prefix)]
    if not files:
        raise FileNotFoundError(f"no .proto file under {protos}")
    builtin = Path(grpc_tools.__file__).parent / "_proto"
    args = ["protoc", "--include_imports", "--include_source_info", "--experimental_editions",
            f"--descriptor_set_out={out}", *(f"-I{r}" for r in roots), f"-I{builtin}", *files]
    if protoc.main(args) != 0:
        raise RuntimeError(f"protoc failed on {len(files)} files under {protos}")
    return out.read_bytes()


def descriptor_schema() -> bytes:
    """``descriptor.proto`` as one ``FileDescriptorSet``: the file Google's ``descriptor_pb2`` was built from."""
    from google.protobuf import descriptor_pb2

    fds = descriptor_pb2.FileDescriptorSet()
    fds.file.add().ParseFromString(descriptor_pb2.DESCRIPTOR.serialized_pb)
    return fds.SerializeToString()


def _descriptors_build(args: argparse.Namespace) -> tuple[bytes, bytes, dict]:
    from google.protobuf import descriptor_pb2

    protos = Path(getattr(args, "protos", None) or default_protos())
    prefix = "google/protobuf/" if args.quick else ""  # --quick: the well-known types (and the test messages)
    _log(f"descriptors: protoc --include_imports --include_source_info of every {prefix}*.proto under {protos}")
    with tempfile.TemporaryDirectory(prefix="pbj-bench-fds-") as tmp:
        raw = protoc_descriptor_set(protos, Path(tmp) / "set.binpb", prefix)
    fds = descriptor_pb2.FileDescriptorSet.FromString(raw)
    about = {"type": "google.protobuf.FileDescriptorSet", "bytes": len(raw), "files": len(fds.file),
             "messages": sum(len(f.message_type) for f in fds.file),
             "protos": "../shared/protos" if protos == default_protos() else protos.name, "prefix": prefix,
             "source_info_bytes": sum(f.source_code_info.ByteSize() for f in fds.file),
             "grpcio_tools": _dist_version("grpcio-tools")}
    return raw, descriptor_schema(), about


def _descriptors_google(_schema: bytes) -> Any:
    from google.protobuf import descriptor_pb2

    return descriptor_pb2.FileDescriptorSet


def _descriptors_describe(d: dict) -> str:
    return (f"Payload: one `google.protobuf.FileDescriptorSet` of {d['bytes']:,} bytes, written by protoc "
            f"(grpcio-tools {d.get('grpcio_tools')}, `--include_imports --include_source_info`) from every .proto "
            f"under `{d['protos']}`{' starting ' + d['prefix'] if d.get('prefix') else ''}: "
            f"{d['files']} files, {d['messages']:,} top-level messages, "
            f"{d['source_info_bytes']:,} bytes of source info.")


CASES = {
    "otel": Case("otel", "opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest",
                 "ExportTraceServiceRequest", _otel_build, _otel_google, {"decode_read": 0.5, "encode": 1.5},
                 _otel_describe),
    "descriptors": Case("descriptors", "google.protobuf.FileDescriptorSet", "FileDescriptorSet", _descriptors_build,
                        _descriptors_google, {"decode_read": 1.0, "encode": 1.5}, _descriptors_describe),
}


# ------------------------------------------------------------------ the workers

def _codec(case: Case, peer: str, schema: bytes, folder: Path) -> Any:
    """``peer``'s :class:`~pbj.bench.suite.Codec` for the case's message (in its worker process)."""
    from pbj.bench.readers import GoogleReader, PbjReader
    from pbj.bench.suite import Codec
    from pbj.bench.worker import PBJ_PEERS

    if peer in PBJ_PEERS:
        import pbj

        cls = pbj.load_descriptor_set(schema)[case.type_name]
        return Codec(decode={"message": lambda b: pbj.decode(cls, b)},
                     encoders={"forward": pbj.encode, "reverse": lambda o: pbj.encode(o, reverse=True)},
                     read=PbjReader().read, prime=pbj.encode)
    if peer == "betterproto2":
        from pbj.bench.peers import betterproto_gen

        betterproto_gen.generate(schema, folder)
        return betterproto_gen.codec({"message": betterproto_gen.load_class(folder, schema, case.type_name)}, schema,
                                     {"message": case.type_name})
    cls = case.google_class(schema)
    return Codec(decode={"message": cls.FromString}, encoders={"encode": lambda o: o.SerializeToString()},
                 read=GoogleReader().read, prime=lambda o: o.SerializeToString())


def run_peer(config: dict) -> dict:
    """Check and time one library on the case's payload (in the worker process ``config`` describes).

    Returns:
        ``{"peer", "available", "reason", "version", "backend", "result": run_block's result for the
        payload}``; ``available`` false with the reason when the library is not installed or cannot
        make classes for the schema.
    """
    from pbj.bench.suite import run_block
    from pbj.bench.worker import PBJ_PEERS, PEERS

    peer, case = config["peer"], CASES[config["case"]]
    backend = PEERS[peer][1]
    out: dict = {"peer": peer, "available": False, "reason": None, "version": None, "backend": backend}
    try:
        if backend is not None:
            from pbj.bench.peers import google_peer

            google_peer.select_backend(backend)
            out["version"], out["backend"] = google_peer.version(), google_peer.implementation()
            if out["backend"] != backend:
                raise ImportError(f"asked for backend {backend}, got {out['backend']}")
        elif peer in PBJ_PEERS:
            import pbj

            out["version"], out["backend"] = pbj.__version__, pbj.engine()
            if PBJ_PEERS[peer] is not None and out["backend"] != PBJ_PEERS[peer]:
                raise ImportError(f"asked for pbj's {PBJ_PEERS[peer]} engine, got {out['backend']}")
        else:
            from pbj.bench.peers import betterproto_gen

            out["version"], out["compiler_version"] = betterproto_gen.version(), betterproto_gen.compiler_version()
        codec = _codec(case, peer, Path(config["schema_path"]).read_bytes(), Path(config["folder"]))
    except ImportError as exc:
        out["reason"] = f"not installed ({exc}); pip install 'pbj-protobuf[bench]'"
        return out
    except Exception as exc:  # e.g. betterproto2's compiler refusing a schema: a finding, reported
        out["reason"] = f"cannot make classes for the schema: {type(exc).__name__}: {exc}"
        return out
    raw = Path(config["raw_path"]).read_bytes()
    out["available"] = True
    out["result"] = run_block(codec, raw, {case.target: ("message", [(0, len(raw))])}, config["timing"])[case.target]
    return out


def _run_worker(peer: str, config: dict, folder: Path) -> dict:
    """:func:`run_peer` in a fresh interpreter (``python -m pbj.bench.cases CONFIG.json``)."""
    from pbj.bench.run import worker_env

    path = folder / f"{peer}.json"
    path.write_text(json.dumps({**config, "peer": peer, "folder": str(folder / f"{peer}-classes")}))
    started = time.time()
    proc = subprocess.run([sys.executable, "-m", "pbj.bench.cases", str(path)], env=worker_env(peer),
                          stdout=subprocess.PIPE, text=True)
    if proc.returncode != 0 or not proc.stdout.strip():
        return {"peer": peer, "available": False, "reason": f"worker failed with exit status {proc.returncode}"}
    result = json.loads(proc.stdout)
    result["elapsed_s"] = round(time.time() - started, 1)
    return result


def prepare(case_name: str, args: argparse.Namespace) -> tuple[bytes, bytes, dict]:
    """The case's payload, its schema (``FileDescriptorSet`` bytes) and its description.

    Raises:
        ImportError: what the case needs is not installed (the ``bench`` extra).
    """
    return CASES[case_name].build(args)


def run(case_name: str, args: argparse.Namespace) -> dict:
    """Build the case's payload, check and time every library ``args`` asks for; return the ``--json`` document."""
    import pbj
    from pbj.bench.run import FULL, QUICK, libraries_to_run, machine_info, run_workers
    from pbj.bench.timing import CLOCK

    settings = QUICK if args.quick else FULL
    timing = dict(settings["timing"])
    for key in ("runs", "warmup"):
        if getattr(args, key, None) is not None:
            timing[key] = getattr(args, key)
            timing["max_runs"] = max(timing["max_runs"], timing["runs"])
    started = time.time()
    raw, schema, about = prepare(case_name, args)
    results: dict = {
        "format": "pbj-bench-case/1", "case": case_name,
        "created": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "command": ["pbj", "bench", *getattr(args, "argv", [])],
        "machine": machine_info(), "engine": pbj.engine(),
        "config": {"quick": args.quick, "timing": timing, "clock": CLOCK, "jobs": getattr(args, "jobs", 1),
                   **({"spans": about["spans"]} if case_name == "otel" else {})},
        "request": about, "libraries": {},
    }
    names = libraries_to_run(args)
    with tempfile.TemporaryDirectory(prefix=f"pbj-bench-{case_name}-") as tmp:
        folder = Path(tmp)
        (folder / "payload.bin").write_bytes(raw)
        (folder / "schema.binpb").write_bytes(schema)
        config = {"case": case_name, "raw_path": str(folder / "payload.bin"),
                  "schema_path": str(folder / "schema.binpb"), "timing": timing}

        def job(peer: str) -> Callable[[], dict]:
            def start() -> dict:
                if peer == "pure-protobuf":
                    return {"peer": peer, "available": False, "reason": NO_SCHEMA}
                _log(f"{case_name}: {peer}: starting a worker process")
                return _run_worker(peer, config, folder)
            return start

        results["libraries"] = run_workers([(p, job(p)) for p in names], getattr(args, "jobs", 1))
    results["machine"]["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
    results["elapsed_s"] = round(time.time() - started, 1)
    return results


def _cell(lib: dict, name: str | None) -> dict | None:
    if name is None or not lib.get("available"):
        return None
    return ((lib.get("result") or {}).get("cells") or {}).get(name)


def _oracles(results: dict) -> list[str]:
    from pbj.bench.report import PBJ_LIBRARIES

    return [n for n, lib in results["libraries"].items()
            if lib.get("available") and (n in PBJ_LIBRARIES or n.startswith("google-"))]


def checks_passed(results: dict) -> bool:
    """pbj (both engines) and Google's backends re-encoded the payload to its bytes and read the same
    checksum as pbj; the other peers' failures are findings, shown in the notes."""
    libs = results["libraries"]
    first = _oracles(results)
    if not first:
        return False
    checksum = libs[first[0]]["result"]["checksum"]
    return all(all(libs[n]["result"]["bytes_equal"].values()) and libs[n]["result"]["checksum"] == checksum
               for n in first)


#: A peer whose bytes differ from the payload's but mean the same message.
SAME_MESSAGE_NOTE = ("its bytes differ from the payload's but are the same message (Google's protobuf parses both "
                     "to equal messages): betterproto2 writes fields in the order the schema declares them, not by "
                     "field number; timed all the same")


def _mismatch(case: str, name: str, r: dict) -> str:
    wrote = ", ".join(f"{n:,}" for n in (r.get("encoded_bytes") or {}).values())
    why = ""
    if name == "betterproto2" and case == "descriptors":
        why = (" betterproto2 keeps no presence for proto2 `optional` scalars: a field set to its zero value "
               "(such as a `FieldDescriptorProto`'s `oneof_index: 0`) is left out when it encodes again, so the "
               "set it writes is not the one it read")
    return (f"not timed: re-encoding its decode of the payload gave {wrote or '?'} bytes, not the payload's "
            f"{r.get('bytes', 0):,}.{why}")


def markdown(results: dict, header: bool = True) -> str:
    """The case as Markdown: machine, Python and library versions, the payload, then µs per message
    for every library and the ratios of each pbj engine to upb."""
    from pbj.bench.report import PBJ_LIBRARIES, _spread, _table, _xx, library_label, machine_line, timing_line

    case = CASES[results.get("case", "otel")]
    cfg, req, libs = results["config"], results["request"], results["libraries"]
    out = [f"# pbj bench {case.name}", ""] if header else []
    versions = ", ".join(f"{library_label(n, lib)} {lib['version']}"
                         + (f" (compiler {lib['compiler_version']})" if lib.get("compiler_version") else "")
                         for n, lib in libs.items() if lib.get("available"))
    out += [machine_line(results), "", f"Libraries: {versions}; pbj engine: {results['engine']}.", "",
            case.describe(req) + " " + timing_line(cfg), ""]
    ran = [n for n, lib in libs.items() if lib.get("available") and _cell(lib, "decode")]
    mine = [n for n in ran if n in PBJ_LIBRARIES]
    upb = libs.get("google-upb") if "google-upb" in ran else None
    head = ["operation", *(library_label(n, libs[n]) for n in ran)]
    if upb:
        head += [f"{library_label(n, libs[n])} / upb" for n in mine] + ["target"]
    rows = []
    for label, own, theirs, target in ROWS:
        row = [label, *(_spread(_cell(libs[n], own if n in PBJ_LIBRARIES else theirs)) for n in ran)]
        if upb:
            u = _cell(upb, "encode_fresh" if own == "reverse_fresh" else theirs)
            for n in mine:
                p = _cell(libs[n], own)
                row.append(_xx(p["min_us"] / u["min_us"], p["median_us"] / u["median_us"])
                           if p and u and u["min_us"] and u["median_us"] else "")
            row.append(f"≤ {case.targets[target]:g}" if target in case.targets and own != "reverse_cached" else "")
        rows.append(row)
    out += _table(head, rows)
    if upb:
        out += ["", "µs per message, best run [median]. pbj / upb: ratio of the best runs [of the medians]; the "
                "reverse writer's fresh row is compared with upb's fresh encode (upb has no reverse writer). "
                "target: the native engine's goal, as a ratio to upb's time (a goal counted in "
                "instructions: `pbj bench --instructions`). fresh: a message just decoded (outside the timed "
                "region); sizes cached: encoded once before. upb decodes lazily (Python objects are made when a "
                "field is read), so compare decode + read."]
    notes = []
    checksum = libs[mine[0]]["result"]["checksum"] if mine else None
    for n, lib in libs.items():
        if not lib.get("available"):
            notes.append(f"- {n}: {lib['reason']}")
            continue
        r = lib["result"]
        if r.get("same_message") and all(r["same_message"].values()) and not all(r["bytes_equal"].values()):
            notes.append(f"- {n}: {SAME_MESSAGE_NOTE}")
        elif not all(r["bytes_equal"].values()):
            notes.append(f"- {n}: {_mismatch(case.name, n, r)}")
        elif checksum is not None and r["checksum"] != checksum:
            notes.append(f"- {n}: read a different checksum from pbj's ({r['checksum']})")
    if notes:
        out += ["", "Notes:", "", *notes]
    return "\n".join(out) + "\n"


def callgrind_inputs(case_name: str, args: argparse.Namespace, folder: Path) -> dict:
    """The inputs every ``pbj bench CASE --instructions`` worker shares (:mod:`pbj.bench.instructions`).

    The payload and its schema, written to ``folder``; pbj's "read every field" checksum of it; the
    message's full name; and ``"case"``: its description plus how many payloads a callgrind region
    decodes (``"batch"``).
    """
    import pbj
    from pbj.bench.instructions import BLOCK_REGION_BYTES, MAX_BLOCK_BATCH
    from pbj.bench.readers import PbjReader

    case = CASES[case_name]
    raw, schema, about = prepare(case_name, args)
    request: object = pbj.decode(pbj.load_descriptor_set(schema)[case.type_name], raw)
    (folder / f"{case_name}.bin").write_bytes(raw)
    (folder / f"{case_name}.binpb").write_bytes(schema)
    return {"raw_path": str(folder / f"{case_name}.bin"), "schema_path": str(folder / f"{case_name}.binpb"),
            "checksum": PbjReader().read(request), "type_name": case.type_name, "case_name": case_name,
            "case": {**about, "batch": min(MAX_BLOCK_BATCH, max(1, BLOCK_REGION_BYTES // len(raw)))}}


def execute(case_name: str, args: argparse.Namespace) -> int:
    """``pbj bench CASE`` for parsed arguments; 0, or 1 when pbj or Google did not write the payload's bytes."""
    if args.from_json:
        results = json.loads(Path(args.from_json).read_text())
    else:
        try:
            results = run(case_name, args)
        except ImportError as exc:
            print(f"pbj bench {case_name}: needs the bench extra ({exc}): pip install 'pbj-protobuf[bench]'",
                  file=sys.stderr)
            return 1
        except FileNotFoundError as exc:
            print(f"pbj bench {case_name}: {exc} (--protos DIR names the schemas)", file=sys.stderr)
            return 1
        if args.json:
            Path(args.json).write_text(json.dumps(results, indent=1) + "\n")
            _log(f"wrote {args.json}")
    print(markdown(results, header=not args.markdown), end="")
    return 0 if checks_passed(results) else 1


def main(argv: list[str] | None = None) -> int:
    """The worker: ``python -m pbj.bench.cases CONFIG.json`` prints :func:`run_peer`'s result as JSON."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m pbj.bench.cases CONFIG.json", file=sys.stderr)
        return 2
    print(json.dumps(run_peer(json.loads(Path(args[0]).read_text()))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
