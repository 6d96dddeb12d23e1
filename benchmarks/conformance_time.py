"""The conformance editions run, timed: pbj's testee against a minimal testee on Google's protobuf (upb).

    python -m benchmarks.conformance_time                 # best of 3, alternating, full report
    python -m benchmarks.conformance_time --runs 5 --limit 500 --check

Protobuf's conformance runner starts a testee once and sends it every request of its run over
standard input (a 4-byte little-endian length, then a ``conformance.ConformanceRequest``); the
testee answers each the same way with a ``ConformanceResponse``. This machine has no runner, but
``../shared/conformance/vectors-editions.jsonl`` holds every request of the editions run
(``--maximum_edition 2023``, 6,558 tests) in the runner's order, so one run is replayed here as the
runner would drive it, without the runner's own work: all framed requests are written to one
stream, piped into a fresh testee process, and every framed answer is read back and counted.

The testees:

* *pbj*: ``conformance/testee`` (``python -m pbj.conformance``), on the default engine, and again
  with ``PBJ_ENGINE=python``;
* *google*: a testee of our own (:data:`GOOGLE_TESTEE`, written into a temporary directory with
  the ``_pb2`` modules that ``python -m grpc_tools.protoc --python_out`` compiles from
  ``conformance.proto``, ``test_messages_proto2/3.proto`` and the four editions protos) on the
  installed ``protobuf`` package: binary with ``ParseFromString``/``SerializeToString``, JSON with
  ``json_format`` (``ignore_unknown_fields`` for the ``JSON_IGNORE_UNKNOWN_PARSING_TEST``
  category), text with ``text_format`` (``print_unknown_fields`` as requested); JSPB and unknown
  message types are answered ``skipped``. It is a timing peer for the same requests, not a passing
  testee; its answers are counted by kind beside pbj's.

The time of a run is the CPU time of the testee process (user + system, from the
``RUSAGE_CHILDREN`` deltas around it; ``conformance/testee`` is a ``sh`` that ``exec``\\ s Python,
so that is one process). Every run is a fresh process; the testees alternate, run after run;
reported are the best and the median of ``--runs`` runs, and the ratios to Google's. Imports run
from cached bytecode (a ``PYTHONPYCACHEPREFIX`` of the benchmark's own, filled by an untimed run
of each testee first), and pbj's schema cache is a folder of the benchmark's own, filled by the same
untimed run (``pbj.loader.cache``: the shipped sets' names and declarations), as a testee started
again on the same machine finds it.

Where pbj's time goes: the same testees on a *startup* stream (the first request of each message
type of the run, so that every schema is loaded and every class compiled once) and on an empty
stream (the imports only); *answering* is the full run less the startup run. ``--profile`` adds a
``cProfile`` of one pbj run (its top entries by cumulative time). ``--check`` replays pbj's
answers through the test suite's judge (``tests.test_conformance.judge_response``, the runner's
rules) and prints how many pass.
"""

from __future__ import annotations

import argparse
import collections
import io
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("PBJ_SHARED", ROOT.parent / "shared"))  # as the tests find it
VECTORS = SHARED / "conformance" / "vectors-editions.jsonl"
GOOGLE_PROTOS = SHARED / "protos" / "google"
PBJ_TESTEE = ROOT / "conformance" / "testee"
PROTO_FILES = ["conformance/conformance.proto", "google/protobuf/test_messages_proto3.proto",
               "google/protobuf/test_messages_proto2.proto", "editions/test_messages_edition2023.proto",
               "editions/test_messages_proto2_editions.proto", "editions/test_messages_proto3_editions.proto",
               "editions/test_messages_edition_unstable.proto"]

#: The Google testee's source (written beside its ``_pb2`` modules, run as a script).
GOOGLE_TESTEE = r'''
import os, struct, sys
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
import google.protobuf
# the compiled test_messages_proto2/3 modules live under here/google/protobuf (a folder the
# installed google.protobuf package does not cover)
google.protobuf.__path__.append(os.path.join(here, "google", "protobuf"))
from google.protobuf import json_format, message, text_format, symbol_database
from conformance import conformance_pb2
from google.protobuf import test_messages_proto2_pb2, test_messages_proto3_pb2  # noqa: F401
from editions import (test_messages_edition2023_pb2, test_messages_proto2_editions_pb2,  # noqa: F401
                      test_messages_proto3_editions_pb2, test_messages_edition_unstable_pb2)

db = symbol_database.Default()
PROTOBUF, JSON, TEXT = conformance_pb2.PROTOBUF, conformance_pb2.JSON, conformance_pb2.TEXT_FORMAT
IGNORE_UNKNOWN = conformance_pb2.JSON_IGNORE_UNKNOWN_PARSING_TEST


def answer(req):
    resp = conformance_pb2.ConformanceResponse()
    if req.message_type == "conformance.FailureSet":
        resp.protobuf_payload = b""
        return resp
    try:
        cls = db.GetSymbol(req.message_type)
    except KeyError:
        resp.skipped = "unknown message type " + req.message_type
        return resp
    which = req.WhichOneof("payload")
    out = req.requested_output_format
    if which == "jspb_payload" or out not in (PROTOBUF, JSON, TEXT):
        resp.skipped = "not supported"
        return resp
    msg = cls()
    try:
        if which == "protobuf_payload":
            msg.ParseFromString(req.protobuf_payload)
        elif which == "json_payload":
            json_format.Parse(req.json_payload, msg,
                              ignore_unknown_fields=req.test_category == IGNORE_UNKNOWN)
        else:
            text_format.Parse(req.text_payload, msg)
    except Exception as exc:  # DecodeError, json_format.ParseError, text_format.ParseError, ...
        resp.parse_error = str(exc)
        return resp
    try:
        if out == PROTOBUF:
            resp.protobuf_payload = msg.SerializeToString()
        elif out == JSON:
            resp.json_payload = json_format.MessageToJson(msg, indent=None)
        else:
            resp.text_payload = text_format.MessageToString(msg, print_unknown_fields=req.print_unknown_fields)
    except Exception as exc:  # EncodeError, SerializeToJsonError, ...
        resp.serialize_error = str(exc)
    return resp


def main():
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    while True:
        head = stdin.read(4)
        if len(head) < 4:
            return
        (n,) = struct.unpack("<I", head)
        req = conformance_pb2.ConformanceRequest.FromString(stdin.read(n))
        data = answer(req).SerializeToString()
        stdout.write(struct.pack("<I", len(data)))
        stdout.write(data)
        stdout.flush()


main()
'''


def read_vectors(limit: int | None = None) -> list[dict]:
    """The vectors of the editions run, in the runner's order (the first ``limit`` only, if given)."""
    with VECTORS.open() as f:
        out = [json.loads(line) for line in f]
    return out[:limit] if limit is not None else out


def frame(messages: list[bytes]) -> bytes:
    """The messages as one stream of the conformance protocol: each a 4-byte little-endian length, then it."""
    return b"".join(len(m).to_bytes(4, "little") + m for m in messages)


def unframe(stream: bytes) -> list[bytes]:
    """The messages of a framed stream (the inverse of :func:`frame`).

    Raises:
        ValueError: the stream ends inside a message.
    """
    out, pos = [], 0
    while pos < len(stream):
        if pos + 4 > len(stream):
            raise ValueError(f"stream ends inside a length at byte {pos}")
        n = int.from_bytes(stream[pos:pos + 4], "little")
        if pos + 4 + n > len(stream):
            raise ValueError(f"stream ends inside message {len(out) + 1} at byte {pos}")
        out.append(stream[pos + 4:pos + 4 + n])
        pos += 4 + n
    return out


def startup_requests(vectors: list[dict]) -> list[bytes]:
    """The first request of each message type of ``vectors`` (a run that loads every schema once)."""
    from pbj.api import decode
    from pbj.conformance import schema

    req_cls = schema()["conformance.ConformanceRequest"]
    seen: dict[str, bytes] = {}
    for v in vectors:
        raw = bytes.fromhex(v["request_hex"])
        seen.setdefault(decode(req_cls, raw).message_type, raw)
    return list(seen.values())


def write_google_testee(folder: Path) -> list[str]:
    """Compile the conformance protos to ``_pb2`` modules in ``folder`` and write the testee there.

    Returns:
        The testee's command line (this interpreter and the script).

    Raises:
        RuntimeError: protoc failed.
    """
    import grpc_tools
    from grpc_tools import protoc

    builtin = Path(grpc_tools.__file__).parent / "_proto"
    args = ["protoc", "--experimental_editions", f"--python_out={folder}", f"-I{GOOGLE_PROTOS}", f"-I{builtin}",
            *PROTO_FILES]
    if protoc.main(args) != 0:
        raise RuntimeError(f"protoc failed: {args}")
    script = folder / "google_testee.py"
    script.write_text(GOOGLE_TESTEE)
    return [sys.executable, str(script)]


def pbj_testee() -> list[str]:
    """The command line of pbj's testee (``conformance/testee``)."""
    return [str(PBJ_TESTEE)]


def run_testee(cmd: list[str], stream: bytes, env: dict[str, str]) -> tuple[float, list[bytes]]:
    """Pipe ``stream`` into a fresh ``cmd`` and read all its answers.

    Returns:
        (the process's CPU seconds, user + system; the answers, unframed).

    Raises:
        RuntimeError: the testee exited with a non-zero status.
    """
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(cmd, input=stream, capture_output=True, env=env, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd[-1]} exited with {proc.returncode}: {proc.stderr.decode()[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, unframe(proc.stdout)


def kinds(answers: list[bytes]) -> collections.Counter:
    """How many answers of each kind (the member of the ``result`` oneof: ``parse_error`` …)."""
    from pbj.api import decode
    from pbj.conformance import schema

    resp_cls = schema()["conformance.ConformanceResponse"]
    return collections.Counter(getattr(decode(resp_cls, a).result, "which", "none") for a in answers)


def check(vectors: list[dict], answers: list[bytes]) -> dict[str, str]:
    """Judge pbj's ``answers`` to ``vectors`` as the test suite does: failing test name -> why."""
    from tests.test_conformance import judge_response

    failures = {}
    for v, a in zip(vectors, answers, strict=True):
        why = judge_response(v, a)
        if why is not None:
            failures[v["name"]] = why
    return failures


def environment(pycache: str, engine: str | None = None) -> dict[str, str]:
    """The testees' environment: this Python for ``conformance/testee``, a bytecode cache of our own
    and a schema cache of our own (``PBJ_CACHE_DIR``: ``schema-cache`` beside the bytecode cache).

    Args:
        pycache: the folder of the bytecode cache (``PYTHONPYCACHEPREFIX``).
        engine: pbj's engine (``PBJ_ENGINE``), or ``None`` for the default (native when built).
    """
    env = dict(os.environ, PBJ_PYTHON=sys.executable, PYTHONPYCACHEPREFIX=pycache,
               PBJ_CACHE_DIR=os.path.join(os.path.dirname(pycache), "schema-cache"))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("PBJ_NO_CACHE", None)
    env.pop("PBJ_ENGINE", None)
    if engine is not None:
        env["PBJ_ENGINE"] = engine
    return env


def profile(stream: bytes, env: dict[str, str], top: int) -> str:
    """A ``cProfile`` of one pbj testee run on ``stream``: its top ``top`` entries by cumulative time."""
    import pstats

    with tempfile.TemporaryDirectory(prefix="pbj-conftime-prof-") as tmp:
        out = os.path.join(tmp, "prof")
        env = dict(env, PYTHONPATH=f"{ROOT}{os.pathsep}{env.get('PYTHONPATH', '')}")
        proc = subprocess.run([sys.executable, "-m", "cProfile", "-o", out, "-m", "pbj.conformance"],
                              input=stream, capture_output=True, env=env, check=True)
        del proc
        text = io.StringIO()
        pstats.Stats(out, stream=text).sort_stats("cumulative").print_stats(top)
    lines = text.getvalue().splitlines()
    start = next(i for i, line in enumerate(lines) if "ncalls" in line)
    return "\n".join(lines[start - 1:])


def _fmt(times: list[float]) -> str:
    return f"{min(times):8.3f} {statistics.median(times):8.3f}"


def main(argv: list[str] | None = None) -> None:
    """Time the testees ``--runs`` times, alternately, and print the best and median CPU and the ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--limit", type=int, default=None, help="only the first N requests of the run")
    parser.add_argument("--check", action="store_true", help="judge pbj's answers as the test suite does")
    parser.add_argument("--profile", type=int, default=25, metavar="N",
                        help="print the top N cumulative entries of a cProfile of one pbj run (0: none)")
    args = parser.parse_args(argv)

    import google.protobuf
    from google.protobuf.internal import api_implementation

    import pbj

    vectors = read_vectors(args.limit)
    full = frame([bytes.fromhex(v["request_hex"]) for v in vectors])
    startup = frame(startup_requests(vectors))
    streams = {"full": full, "startup": startup, "empty": b""}
    with tempfile.TemporaryDirectory(prefix="pbj-conftime-") as tmp:
        pycache = os.path.join(tmp, "pycache")
        google_cmd = write_google_testee(Path(tmp))
        testees = {  # name -> (command, environment)
            "pbj": (pbj_testee(), environment(pycache)),
            "pbj python": (pbj_testee(), environment(pycache, "python")),
            "google": (google_cmd, environment(pycache)),
        }
        for cmd, env in testees.values():  # untimed: fills the bytecode cache
            run_testee(cmd, startup, env)
        times: dict[tuple[str, str], list[float]] = collections.defaultdict(list)
        answers: dict[str, list[bytes]] = {}
        for _ in range(args.runs):
            for stream_name, stream in streams.items():
                for name, (cmd, env) in testees.items():
                    cpu, got = run_testee(cmd, stream, env)
                    times[name, stream_name].append(cpu)
                    if stream_name == "full":
                        assert len(got) == len(vectors), (name, len(got), len(vectors))
                        answers[name] = got
        prof = profile(full, testees["pbj"][1], args.profile) if args.profile else ""
        load = os.getloadavg()

    print(f"machine: {platform.machine()} {os.cpu_count()} CPUs, {platform.system()} {platform.release()}; "
          f"CPython {platform.python_version()}; pbj {pbj.__version__} (engine {pbj.engine()}); "
          f"protobuf {google.protobuf.__version__} ({api_implementation.Type()}); load average "
          f"{load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    print(f"{len(vectors):,} requests of {VECTORS.name} ({len(full):,} bytes framed) in one process per run; "
          f"startup: {len(unframe(startup))} requests (the first of each message type)")
    print(f"CPU seconds of the testee process (user+sys), best and median of {args.runs} fresh processes, "
          "alternating")
    print(f"{'testee':<12}{'full run':>17}{'startup':>18}{'empty':>18}{'answering':>10}{'ratio':>8}")
    print(f"{'':<12}{'best   median':>17}{'best   median':>18}{'best   median':>18}{'best':>10}{'full':>8}")
    g_full = min(times["google", "full"])
    for name in testees:
        answering = min(times[name, "full"]) - min(times[name, "startup"])
        print(f"{name:<12}{_fmt(times[name, 'full']):>17} {_fmt(times[name, 'startup']):>17} "
              f"{_fmt(times[name, 'empty']):>17}{answering:>10.3f}{min(times[name, 'full']) / g_full:>8.2f}")
    g_ans = min(times["google", "full"]) - min(times["google", "startup"])
    for name in [n for n in testees if n != "google"]:
        p_ans = min(times[name, "full"]) - min(times[name, "startup"])
        print(f"{name} / google: full run {min(times[name, 'full']) / g_full:.2f}x (best), "
              f"{statistics.median(times[name, 'full']) / statistics.median(times['google', 'full']):.2f}x "
              f"(median); answering {p_ans / g_ans:.2f}x; startup "
              f"{min(times[name, 'startup']) / min(times['google', 'startup']):.2f}x")
    print("answers by kind:")
    counted = {name: kinds(a) for name, a in answers.items()}
    every = sorted(set().union(*counted.values()))
    print(f"  {'kind':<18}" + "".join(f"{name:>12}" for name in counted))
    for kind in every:
        print(f"  {kind:<18}" + "".join(f"{counted[name][kind]:>12,}" for name in counted))
    same = sum(1 for a, b in zip(answers["pbj"], answers["google"], strict=True)
               if kinds([a]) == kinds([b]))
    print(f"  same kind of answer, pbj and google: {same:,} of {len(vectors):,}")
    recorded = [v["reference_result"] for v in vectors]
    same = sum(1 for a, r in zip(answers["google"], recorded, strict=True) if kinds([a])[r] == 1)
    print(f"  same kind of answer, google and the recorded upb testee: {same:,} of {len(vectors):,}")
    if args.check:
        failures = check(vectors, answers["pbj"])
        print(f"pbj's answers judged as tests/test_conformance.py does: {len(vectors) - len(failures):,} pass, "
              f"{len(failures):,} fail (conformance/failure_list*.txt list the known failures)")
    if prof:
        print(f"cProfile of one pbj run (engine {pbj.engine()}), top {args.profile} by cumulative time:")
        print(prof)


if __name__ == "__main__":
    main()
