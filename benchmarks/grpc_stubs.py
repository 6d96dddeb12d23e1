"""pbj.grpc stubs vs Google's generated ``_pb2_grpc`` stubs, against the same server, in one run.

``python -m benchmarks.grpc_stubs [--calls N] [--messages M] [--rounds R]``

One server (Google's generated servicer on grpcio, in a child process so that its work is not
counted) answers both clients over loopback (127.0.0.1). In this process the two clients take
turns unit by unit (who goes first alternating), so that the load of a shared machine falls on
both alike:

* unary: one round trip of a small request and reply (a string, a nested message, a timestamp),
  ``--calls`` times each;
* streaming: one server-streaming call of ``--messages`` replies read to its end, ``--rounds`` times;
* codec only: the serializer and deserializer each stub gives grpcio, 100 times a unit, no RPC
  (the part of an RPC where the two clients differ).

For each unit, the calling thread's CPU time (``time.thread_time``: a blocking grpcio call
serializes, runs the core's completion queue and deserializes in the calling thread) and the wall
time are taken; the rates come from the mean, and the ratios Google/pbj of the mean and median
CPU times and of the mean wall time are printed (above 1.0: pbj is faster). The machine and Python
are printed with the figures; ``--same`` is a control run with Google's stub on both sides.
Both clients run the same grpcio: the difference is the glue and the codec (pbj's encode and
decode against upb's).

``--instructions`` counts instead the instructions of the codec alone with valgrind's callgrind
(which a shared machine's load does not change): the serializer and deserializer each stub gives
grpcio, and ``pbj.decode``/``pbj.encode`` of the request (a message of three fields) beside
upb's ``FromString``/``SerializeToString``, each ``--calls`` times in a marked region (between two
calls of ``os.getppid``, callgrind's ``--dump-before``), less the same loop calling nothing; the
result of each call is dropped at once, so freeing it is counted. The worker process switches its
collector off after warming up (both libraries alike).

``--call-instructions`` counts, with callgrind, the calling thread of whole unary round trips
against the server (a child process, not counted): ``--calls`` calls of pbj's stub, then of
Google's, three rounds alternating, each in a marked region; per region the instructions a call
and the inclusive share of the functions where the two clients differ (the serializer, the
deserializer, and CPython's ``subtype_dealloc``, which frees pbj's reply and grpcio's own
objects alike, beside upb's ``PyUpb_Message_Dealloc``). What is left is grpcio's own work,
the same code for both clients (its spread between rounds is the noise of polling).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

PROTO = """
syntax = "proto3";
package pbjbench.v1;
import "google/protobuf/timestamp.proto";
message Money { string currency = 1; int64 units = 2; }
message Request { string text = 1; int32 count = 2; Money money = 3; }
message Reply { string text = 1; int32 index = 2; google.protobuf.Timestamp at = 3; Money money = 4; }
service Bench {
  rpc Unary(Request) returns (Reply);
  rpc Stream(Request) returns (stream Reply);
}
"""


def compile_google(folder: Path):
    """Write the .proto, compile it with grpc_tools into ``folder``, import (pb2, pb2_grpc)."""
    import grpc_tools
    from grpc_tools import protoc
    (folder / "pbjbench.proto").write_text(PROTO)
    builtin = Path(grpc_tools.__file__).parent / "_proto"
    assert protoc.main(["protoc", f"-I{folder}", f"-I{builtin}", f"--python_out={folder}",
                        f"--grpc_python_out={folder}", str(folder / "pbjbench.proto")]) == 0
    sys.path.insert(0, str(folder))
    try:
        return importlib.import_module("pbjbench_pb2"), importlib.import_module("pbjbench_pb2_grpc")
    finally:
        sys.path.remove(str(folder))


def serve(folder: Path) -> None:
    """The child process: Google's servicer on 127.0.0.1:0; prints the port, serves until stdin closes."""
    from concurrent import futures

    import grpc
    pb2, pb2_grpc = compile_google(folder)
    reply = pb2.Reply(text="reply", index=1, money=pb2.Money(currency="HBAR", units=10))
    reply.at.seconds = 1_700_000_000

    class Bench(pb2_grpc.BenchServicer):
        def Unary(self, request, context):
            return reply

        def Stream(self, request, context):
            for _ in range(request.count):
                yield reply

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    pb2_grpc.add_BenchServicer_to_server(Bench(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    print(port, flush=True)
    sys.stdin.read()
    server.stop(None)


#: The operations counted by ``--instructions``, in order: (name, what it is).
COUNTED = (("serializer", "the request's serializer (as the stub gives grpcio)"),
           ("deserializer", "the reply's deserializer (as the stub gives grpcio)"),
           ("encode", "pbj.encode(request) / SerializeToString"),
           ("decode", "pbj.decode(Request, data) / Request.FromString"))


def count_worker(folder: Path, calls: int) -> None:
    """Under callgrind: each operation of :data:`COUNTED` for pbj and upb in a marked region; writes the order."""
    import gc

    import pbj
    from pbj.grpc._codec import decoder, encoder
    pb2, _ = compile_google(folder)
    ns = pbj.load_proto(folder / "pbjbench.proto")
    Req, Money = ns["pbjbench.v1.Request"], ns["pbjbench.v1.Money"]
    p_req = Req(text="hello", count=3, money=Money(currency="HBAR", units=5))
    g_req = pb2.Request(text="hello", count=3, money=pb2.Money(currency="HBAR", units=5))
    reply = pb2.Reply(text="reply", index=1, money=pb2.Money(currency="HBAR", units=10),
                      at={"seconds": 1_700_000_000}).SerializeToString()
    request = g_req.SerializeToString()
    assert pbj.encode(p_req) == request
    p_ser, p_de = encoder(Req), decoder(ns["pbjbench.v1.Reply"])
    decode, encode, g_from, r_from = pbj.decode, pbj.encode, pb2.Request.FromString, pb2.Reply.FromString
    g_ser = pb2.Request.SerializeToString
    mark = os.getppid

    def base(xs):
        mark()
        for _ in xs:
            pass
        mark()

    def region(fn, xs):
        mark()
        for x in xs:
            fn(x)
        mark()

    def decode_request(xs):
        mark()
        for x in xs:
            decode(Req, x)
        mark()

    units = [("base", base, [request] * calls),
             ("pbj serializer", lambda xs: region(p_ser, xs), [p_req] * calls),
             ("upb serializer", lambda xs: region(g_ser, xs), [g_req] * calls),
             ("pbj deserializer", lambda xs: region(p_de, xs), [reply] * calls),
             ("upb deserializer", lambda xs: region(r_from, xs), [reply] * calls),
             ("pbj encode", lambda xs: region(encode, xs), [p_req] * calls),
             ("upb encode", lambda xs: region(g_ser, xs), [g_req] * calls),
             ("pbj decode", decode_request, [request] * calls),
             ("upb decode", lambda xs: region(g_from, xs), [request] * calls)]
    for _ in range(3):  # warm up, unmarked: classes compiled, the interpreter's specialisations settled
        for fn, x in ((p_ser, p_req), (g_ser, g_req), (p_de, reply), (r_from, reply), (encode, p_req),
                      (g_from, request)):
            for _ in range(calls):
                fn(x)
        for _ in range(calls):
            decode(Req, request)
    gc.collect()
    gc.disable()
    for _, fn, xs in units:
        fn(xs)
    (folder / "regions.txt").write_text("\n".join(name for name, _, _ in units))


def count_instructions(calls: int) -> int:
    """``--instructions``: run :func:`count_worker` under callgrind and print instructions per call."""
    from benchmarks.callgrind_regions import count_regions
    counts = count_regions("benchmarks.grpc_stubs", "--calls", str(calls))
    if counts is None:
        return 2
    import pbj
    per = {name: (c - counts["base"]) / calls for name, c in counts.items() if name != "base"}
    print(f"Python {platform.python_version()}; pbj engine {pbj.engine()}; callgrind, {calls} calls a region, "
          f"less the empty loop ({counts['base'] / calls:.0f} instructions an iteration)")
    print()
    print("| operation | pbj instructions | upb instructions | ratio (upb / pbj) |")
    print("|---|---:|---:|---:|")
    for op, what in COUNTED:
        p, g = per[f"pbj {op}"], per[f"upb {op}"]
        print(f"| {what} | {p:,.0f} | {g:,.0f} | {g / p:.3f}x |")
    return 0


#: The functions ``--call-instructions`` reports a call's share of (callgrind's names, matched in full).
CALL_PARTS = (("pbj serializer", "entry.c:bound_encode"), ("pbj deserializer", "entry.c:bound_decode"),
              ("upb serializer", "PyUpb_Message_SerializeToString"), ("upb deserializer", "PyUpb_Message_FromString"),
              ("upb message free", "PyUpb_Message_Dealloc"),
              ("CPython subtype_dealloc", "typeobject.c:subtype_dealloc"))


def call_worker(folder: Path, calls: int, port: int) -> None:
    """Under callgrind: ``calls`` unary calls of each stub a region, three rounds alternating; writes the order."""
    import gc

    import grpc

    import pbj
    import pbj.grpc
    pb2, pb2_grpc = compile_google(folder)
    ns = pbj.load_proto(folder / "pbjbench.proto")
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    stubs = {"pbj": (pbj.grpc.Stub(channel, ns.service("pbjbench.v1.Bench")).Unary,
                     ns["pbjbench.v1.Request"](text="hello", money=ns["pbjbench.v1.Money"](currency="HBAR", units=5))),
             "google": (pb2_grpc.BenchStub(channel).Unary,
                        pb2.Request(text="hello", money=pb2.Money(currency="HBAR", units=5)))}
    mark = os.getppid

    def region(call, request):
        mark()
        for _ in range(calls):
            call(request)
        mark()
    for _ in range(200):  # warm up, unmarked: connection made, classes compiled
        for call, request in stubs.values():
            call(request)
    gc.collect()
    gc.disable()
    names = []
    for _ in range(3):
        for name, (call, request) in stubs.items():
            region(call, request)
            names.append(name)
    channel.close()
    (folder / "regions.txt").write_text("\n".join(names))


def _inclusive(dump: Path) -> dict[str, int]:
    """The inclusive instructions of :data:`CALL_PARTS`' functions in one callgrind dump (callgrind_annotate)."""
    out = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", "--auto=no", str(dump)],
                         capture_output=True, text=True, check=True).stdout
    found: dict[str, int] = {}
    for line in out.splitlines():  # "  1,629,002 ( 1.65%)  /path/entry.c:bound_decode [/path/lib.so]"
        count, _, rest = line.strip().partition(" ")
        where = rest.partition(")")[2].split()
        if not count.replace(",", "").isdigit() or not where:
            continue
        for label, fn in CALL_PARTS:  # the first line of a name: its own, not a recursive ('2) entry
            if (where[0] == fn or where[0].endswith(("/" + fn, ":" + fn))) and label not in found:
                found[label] = int(count.replace(",", ""))
    return found


def count_call_instructions(calls: int) -> int:
    """``--call-instructions``: run :func:`call_worker` under callgrind, print instructions per call and parts."""
    import shutil
    valgrind = shutil.which("valgrind")
    if valgrind is None or shutil.which("callgrind_annotate") is None:
        print("--call-instructions needs valgrind and callgrind_annotate on PATH", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="pbj-grpc-calls-") as tmp:
        folder = Path(tmp)
        with _server(tmp) as port:
            out = folder / "cg.out"
            subprocess.run([valgrind, "--tool=callgrind", "--dump-before=getppid", "--separate-threads=yes",
                            f"--callgrind-out-file={out}", f"--log-file={folder / 'valgrind.log'}", sys.executable,
                            "-m", "benchmarks.grpc_stubs", "--call-worker", tmp, "--calls", str(calls),
                            "--port", str(port)], check=True, cwd=Path(__file__).resolve().parents[1])
        names = (folder / "regions.txt").read_text().split("\n")
        rows = []
        for i, name in enumerate(names):  # dump 1: before the first region; then each region, then what follows
            dump = folder / f"cg.out.{2 + 2 * i}-01"  # thread 1, the calling thread
            total = next(int(line.split()[1]) for line in dump.read_text().splitlines()
                         if line.startswith(("summary:", "totals:")))
            rows.append((name, total, _inclusive(dump)))
    import pbj
    print(f"Python {platform.python_version()}; pbj engine {pbj.engine()}; callgrind, the calling thread, "
          f"{calls} unary calls a region, instructions a call")
    print()
    labels = [label for label, _ in CALL_PARTS]
    print("| region | whole call | " + " | ".join(labels) + " |")
    print("|---|---:|" + "---:|" * len(labels))
    for name, total, parts in rows:
        cells = " | ".join(f"{parts[label] / calls:,.0f}" if label in parts else "-" for label in labels)
        print(f"| {name} | {total / calls:,.0f} | {cells} |")
    return 0


@contextlib.contextmanager
def _server(tmp: str) -> Iterator[int]:
    """The benchmark's server (Google's servicer, ``--serve``) in a child process on 127.0.0.1, its
    files in ``tmp``: yields its port, and stops it (closes its stdin, waits up to 30 s) at the end."""
    child = subprocess.Popen([sys.executable, "-m", "benchmarks.grpc_stubs", "--serve", tmp],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                             cwd=Path(__file__).resolve().parents[1])
    try:
        yield int(child.stdout.readline())  # type: ignore[union-attr]
    finally:
        child.stdin.close()  # type: ignore[union-attr]
        child.wait(30)


def _round(fn) -> tuple[float, float]:
    w, c = time.perf_counter(), time.thread_time()
    fn()
    return time.thread_time() - c, time.perf_counter() - w


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=4000, help="unary calls per client (one at a time, alternating)")
    parser.add_argument("--messages", type=int, default=500, help="replies per streaming call")
    parser.add_argument("--rounds", type=int, default=80, help="streaming calls per client (alternating)")
    parser.add_argument("--same", action="store_true",
                        help="a control run: Google's stub on both sides (the ratios show the noise floor)")
    parser.add_argument("--instructions", action="store_true",
                        help="count the codec's instructions with callgrind instead (no RPC; needs valgrind)")
    parser.add_argument("--call-instructions", action="store_true",
                        help="count the calling thread's instructions of whole unary calls with callgrind, "
                             "both stubs alternating (needs valgrind)")
    parser.add_argument("--serve", metavar="DIR", help=argparse.SUPPRESS)
    parser.add_argument("--count-worker", metavar="DIR", help=argparse.SUPPRESS)
    parser.add_argument("--call-worker", metavar="DIR", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        serve(Path(args.serve))
        return 0
    if args.count_worker:
        count_worker(Path(args.count_worker), args.calls)
        return 0
    if args.call_worker:
        call_worker(Path(args.call_worker), args.calls, args.port)
        return 0
    if args.instructions:
        return count_instructions(args.calls)
    if args.call_instructions:
        return count_call_instructions(args.calls)

    import grpc

    import pbj
    import pbj.grpc
    with tempfile.TemporaryDirectory(prefix="pbj-grpc-bench-") as tmp:
        folder = Path(tmp)
        with _server(tmp) as port:
            pb2, pb2_grpc = compile_google(folder)
            ns = pbj.load_proto(folder / "pbjbench.proto")
            channel = grpc.insecure_channel(f"127.0.0.1:{port}")
            google = pb2_grpc.BenchStub(channel)
            ours: Any = pbj.grpc.Stub(channel, ns.service("pbjbench.v1.Bench"))
            g_req = pb2.Request(text="hello", count=args.messages, money=pb2.Money(currency="HBAR", units=5))
            p_req = ns["pbjbench.v1.Request"](text="hello", count=args.messages,
                                              money=ns["pbjbench.v1.Money"](currency="HBAR", units=5))
            g_one = pb2.Request(text="hello", money=pb2.Money(currency="HBAR", units=5))
            p_one = ns["pbjbench.v1.Request"](text="hello", money=ns["pbjbench.v1.Money"](currency="HBAR", units=5))
            assert pbj.encode(p_one) == g_one.SerializeToString()
            assert google.Unary(g_one).text == ours.Unary(p_one).text == "reply"

            def unary(stub, req):
                call = stub.Unary
                return lambda: call(req)

            def stream(stub, req):
                def run():
                    n = 0
                    for _ in stub.Stream(req):
                        n += 1
                    assert n == args.messages
                return run
            reply_bytes = pb2.Reply(text="reply", index=1, money=pb2.Money(currency="HBAR", units=10),
                                    at={"seconds": 1_700_000_000}).SerializeToString()

            def codec(serialize, deserialize, req):
                def run():
                    for _ in range(100):
                        serialize(req)
                        deserialize(reply_bytes)
                return run
            # what the stubs hand grpcio: the serializer of the request and the deserializer of the reply
            from pbj.grpc._codec import decoder, encoder
            p_ser, p_de = encoder(ns["pbjbench.v1.Request"]), decoder(ns["pbjbench.v1.Reply"])
            if args.same:
                ours, p_one, p_req = google, g_one, g_req
                p_ser, p_de = pb2.Request.SerializeToString, pb2.Reply.FromString
            # case -> (pbj unit, Google unit, messages per unit, units)
            cases = {"unary round trips": (unary(ours, p_one), unary(google, g_one), 1, args.calls),
                     "server-streamed messages": (stream(ours, p_req), stream(google, g_req), args.messages,
                                                  args.rounds),
                     "codec only (encode request + decode reply)": (
                         codec(p_ser, p_de, p_one), codec(pb2.Request.SerializeToString, pb2.Reply.FromString, g_one),
                         100, args.calls // 10)}
            for fn_p, fn_g, _, _ in cases.values():  # warm up both (codec compiled, connections made)
                for _ in range(20):
                    fn_p(), fn_g()
            results = {}
            for name, (fn_p, fn_g, count, units) in cases.items():
                p_runs, g_runs = [], []
                for i in range(units):  # one unit each in turn, who goes first alternating
                    if i % 2:
                        g_runs.append(_round(fn_g))
                        p_runs.append(_round(fn_p))
                    else:
                        p_runs.append(_round(fn_p))
                        g_runs.append(_round(fn_g))
                results[name] = (count, units, p_runs, g_runs)
            channel.close()
    print(f"machine: {platform.machine()} {platform.processor() or ''} {os.cpu_count()} CPUs, "
          f"{platform.system()} {platform.release()}; Python {platform.python_version()}; "
          f"pbj engine {pbj.engine()}; grpcio {grpc.__version__}")
    print("each unit (one call, one stream, 100 codec pairs) in turn, pbj and Google alternating; "
          "the server in a child process; CPU = the calling thread's")
    print()
    print("| case | units | pbj /s (mean CPU) | Google /s (mean CPU) | ratio (mean CPU) | ratio (median CPU) "
          "| ratio (mean wall) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, (count, units, p_runs, g_runs) in results.items():
        p_cpu = statistics.mean(r[0] for r in p_runs)
        g_cpu = statistics.mean(r[0] for r in g_runs)
        p_med = statistics.median(r[0] for r in p_runs)
        g_med = statistics.median(r[0] for r in g_runs)
        p_wall = statistics.mean(r[1] for r in p_runs)
        g_wall = statistics.mean(r[1] for r in g_runs)
        print(f"| {name} | {units} | {count / p_cpu:,.0f} | {count / g_cpu:,.0f} | {g_cpu / p_cpu:.3f}x | "
              f"{g_med / p_med:.3f}x | {g_wall / p_wall:.3f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
