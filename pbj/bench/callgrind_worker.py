"""One library's operations in marked regions, run under callgrind by :mod:`pbj.bench.instructions`.

``python -m pbj.bench.callgrind_worker CONFIG.json`` (under ``valgrind --tool=callgrind
--dump-before=getppid``). The configuration, a JSON object written by the runner::

    {"library": "pbj" | "google-upb", "part": "hot" | "block" | "otel" | "descriptors", "batch": 200, "runs": 2,
     "warmup": 1, "expected_hex": "...", "checksum": 123,                  # part "hot"
     "raw_path": "...", "schema_path": "...", "block_type": "...",          # part "block"
     "raw_path": "...", "schema_path": "...", "checksum": 123,             # parts "otel", "descriptors":
     "type_name": "...", "case_name": "otel",                              #   one payload (pbj.bench.cases)
     "manifest": "..."}

A *region* is the code between two calls of :data:`MARK` (``os.getppid``, which nothing else in
the process calls; callgrind writes a dump of the counts since the last one each time it is
entered, so each region's instructions end up in a dump file of their own). For every
operation and run, two regions with the same loop over the same list of ``batch`` inputs are
run: one calling the operation on each input, one calling :func:`_same` (a function that returns
its argument). The runner subtracts the second from the first and divides by ``batch``: what
remains is the operation itself, with the loop, the call of a Python function and the marks
taken out. Each operation's result is dropped before the next one runs, so the count includes
freeing it, and the allocator is in the same state at every operation (a steady state).
The inputs of a region are built before its first mark (fresh objects are decoded there).

Before any region: every operation is checked (pbj's bytes equal the expected bytes, the
"read every field" checksum equals pbj's); the garbage collector runs once and is then switched
off for the rest of the process (the goals are "GC off"); ``warmup`` unmarked passes
of every operation run (codecs compiled, the interpreter's specialisations settled). Warming up
with the collector still on left upb's first run of decode + read 4% above the later ones.

When done, the worker writes the manifest (``config["manifest"]``)::

    {"library", "version", "backend", "regions": [[operation, run, "op" | "base"], ...],
     "inputs": {"bytes": ...}, "error": null | "..."}

The dumps are then, in order: everything before the first region, and per region its own
count followed by what ran between it and the next region (ignored). Expected dump count:
``2 * len(regions)``; the runner checks it.
"""

from __future__ import annotations

import gc
import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["MARK", "MARK_FUNCTION", "HOT_OPS", "BLOCK_OPS", "OTEL_OPS", "Operation", "operations", "run_regions",
           "main"]

#: The marker: a Python call of a C library function that nothing else in the process calls.
MARK = os.getppid
#: The C function callgrind watches (``--dump-before``): what :data:`MARK` enters.
MARK_FUNCTION = "getppid"

#: The operations on the hot message, in report order (Google's upb has no reverse writer).
HOT_OPS = ("decode", "encode_fresh", "encode_cached", "decode_read", "encode_reverse")
#: The operations on the whole block, in report order.
BLOCK_OPS = ("decode", "encode_fresh", "encode_cached", "decode_walk")
#: The operations on the OpenTelemetry export request (:mod:`pbj.bench.otel`), in report order.
OTEL_OPS = ("decode", "encode_fresh", "encode_cached", "decode_read", "encode_reverse")


@dataclass
class Operation:
    """One measured operation.

    Attributes:
        run: the operation on one input (a Python function, as a user would write the call).
        inputs: builds the list of inputs of one region (called before the region's first mark).
    """

    run: Callable[[Any], object]
    inputs: Callable[[], list]


def _same(x: Any) -> Any:
    """The baseline operation: returns its argument."""
    return x


def _region(run: Callable[[Any], object], inputs: list) -> None:
    """One marked region: ``run`` on every input, each result dropped at once."""
    MARK()
    for x in inputs:
        run(x)
    MARK()


class CheckFailed(Exception):
    """A library's output differs from the expected bytes or checksum: nothing is measured."""


def _check(what: str, ok: bool) -> None:
    if not ok:
        raise CheckFailed(what)


def _pbj_ops(cls: type, data: bytes, sized: Any, read: Callable[[Any], object],
             batch: int) -> dict[str, Operation]:
    """pbj's operations on one message: ``data`` its encoding, ``sized`` an instance with every size cached."""
    import pbj

    decode, encode = pbj.decode, pbj.encode
    k = range(batch)
    return {
        "decode": Operation(lambda b: decode(cls, b), lambda: [data for _ in k]),
        "encode_fresh": Operation(lambda o: encode(o), lambda: [decode(cls, data) for _ in k]),
        "encode_cached": Operation(lambda o: encode(o), lambda: [sized for _ in k]),
        "decode_read": Operation(lambda b: read(decode(cls, b)), lambda: [data for _ in k]),
        "encode_reverse": Operation(lambda o: encode(o, reverse=True), lambda: [sized for _ in k]),
    }


def _pbj_hot(config: dict) -> tuple[dict[str, Operation], dict]:
    import pbj
    from pbj.bench import hot_pbj
    from pbj.bench.hot_values import HOT_VALUE

    cls, decode, encode, read = hot_pbj.TransactionBody, pbj.decode, pbj.encode, hot_pbj.read_all
    data = bytes.fromhex(config["expected_hex"])
    built = hot_pbj.build_hot(HOT_VALUE)
    _check("pbj.encode of the built hot message", encode(built) == data)  # caches every size on `built`
    _check("pbj reverse writer", encode(built, reverse=True) == data)
    _check("pbj round trip", encode(decode(cls, data)) == data)
    _check("pbj read_all checksum", read(decode(cls, data)) == config["checksum"])
    ops = _pbj_ops(cls, data, built, read, config["batch"])
    return ops, {"version": pbj.__version__, "backend": pbj.engine(), "bytes": len(data)}


def _upb_hot(config: dict) -> tuple[dict[str, Operation], dict]:
    from pbj.bench.hot_values import HOT_VALUE
    from pbj.bench.peers import google_peer

    cls, read = google_peer.hot_class(), google_peer.read_all
    data = bytes.fromhex(config["expected_hex"])
    built = google_peer.build_hot(HOT_VALUE)
    _check("upb SerializeToString(deterministic=True) = pbj's bytes",
           built.SerializeToString(deterministic=True) == data)
    _check("upb round trip", cls.FromString(data).SerializeToString(deterministic=True) == data)
    _check("upb read_all checksum = pbj's", read(cls.FromString(data)) == config["checksum"])
    k = range(config["batch"])
    ops = {
        "decode": Operation(lambda b: cls.FromString(b), lambda: [data for _ in k]),
        "encode_fresh": Operation(lambda o: o.SerializeToString(deterministic=True),
                                  lambda: [cls.FromString(data) for _ in k]),
        "encode_cached": Operation(lambda o: o.SerializeToString(deterministic=True), lambda: [built for _ in k]),
        "decode_read": Operation(lambda b: read(cls.FromString(b)), lambda: [data for _ in k]),
    }
    return ops, {"version": google_peer.version(), "backend": google_peer.implementation(), "bytes": len(data)}


def _pbj_block(config: dict) -> tuple[dict[str, Operation], dict]:
    import pbj
    from pbj.bench.readers import PbjReader

    raw = Path(config["raw_path"]).read_bytes()
    cls = pbj.load_descriptor_set(Path(config["schema_path"]).read_bytes())[config["block_type"]]
    decode, encode, read = pbj.decode, pbj.encode, PbjReader().read
    cached: Any = decode(cls, raw)
    _check("pbj.encode of the decoded block = the block's bytes", encode(cached) == raw)  # sizes now cached
    read(cached)
    k = range(config["batch"])
    ops = {
        "decode": Operation(lambda b: decode(cls, b), lambda: [raw for _ in k]),
        "encode_fresh": Operation(lambda o: encode(o), lambda: [decode(cls, raw) for _ in k]),
        "encode_cached": Operation(lambda o: encode(o), lambda: [cached for _ in k]),
        "decode_walk": Operation(lambda b: read(decode(cls, b)), lambda: [raw for _ in k]),
    }
    return ops, {"version": pbj.__version__, "backend": pbj.engine(), "bytes": len(raw)}


def _upb_block(config: dict) -> tuple[dict[str, Operation], dict]:
    from pbj.bench.peers import google_peer
    from pbj.bench.readers import GoogleReader

    raw = Path(config["raw_path"]).read_bytes()
    block_type = config["block_type"]
    cls = google_peer.load_classes(Path(config["schema_path"]).read_bytes(), [block_type])[block_type]
    read = GoogleReader().read
    cached: Any = cls.FromString(raw)
    _check("upb SerializeToString of the decoded block = the block's bytes", cached.SerializeToString() == raw)
    read(cached)
    k = range(config["batch"])
    ops = {
        "decode": Operation(lambda b: cls.FromString(b), lambda: [raw for _ in k]),
        "encode_fresh": Operation(lambda o: o.SerializeToString(), lambda: [cls.FromString(raw) for _ in k]),
        "encode_cached": Operation(lambda o: o.SerializeToString(), lambda: [cached for _ in k]),
        "decode_walk": Operation(lambda b: read(cls.FromString(b)), lambda: [raw for _ in k]),
    }
    return ops, {"version": google_peer.version(), "backend": google_peer.implementation(), "bytes": len(raw)}


def _pbj_case(config: dict) -> tuple[dict[str, Operation], dict]:
    """pbj on a one-payload case (``otel``, ``descriptors``: :mod:`pbj.bench.cases`)."""
    import pbj
    from pbj.bench.readers import PbjReader

    raw = Path(config["raw_path"]).read_bytes()
    cls = pbj.load_descriptor_set(Path(config["schema_path"]).read_bytes())[config["type_name"]]
    decode, encode, read = pbj.decode, pbj.encode, PbjReader().read
    cached: Any = decode(cls, raw)
    _check("pbj.encode of the decoded payload = its bytes", encode(cached) == raw)  # sizes now cached
    _check("pbj reverse writer on the decoded payload = its bytes", encode(cached, reverse=True) == raw)
    _check("pbj read checksum of the payload", read(cached) == config["checksum"])
    ops = _pbj_ops(cls, raw, cached, read, config["batch"])
    return ops, {"version": pbj.__version__, "backend": pbj.engine(), "bytes": len(raw)}


def _upb_case(config: dict) -> tuple[dict[str, Operation], dict]:
    """upb on a one-payload case, through the case's Google class (``opentelemetry-proto``'s, ``descriptor_pb2``'s)."""
    from pbj.bench.cases import CASES
    from pbj.bench.peers import google_peer
    from pbj.bench.readers import GoogleReader

    raw = Path(config["raw_path"]).read_bytes()
    cls: Any = CASES[config["case_name"]].google_class(Path(config["schema_path"]).read_bytes())
    read = GoogleReader().read
    cached: Any = cls.FromString(raw)
    _check("upb SerializeToString of the decoded payload = its bytes", cached.SerializeToString() == raw)
    _check("upb read checksum = pbj's", read(cls.FromString(raw)) == config["checksum"])
    k = range(config["batch"])
    ops = {
        "decode": Operation(lambda b: cls.FromString(b), lambda: [raw for _ in k]),
        "encode_fresh": Operation(lambda o: o.SerializeToString(), lambda: [cls.FromString(raw) for _ in k]),
        "encode_cached": Operation(lambda o: o.SerializeToString(), lambda: [cached for _ in k]),
        "decode_read": Operation(lambda b: read(cls.FromString(b)), lambda: [raw for _ in k]),
    }
    return ops, {"version": google_peer.version(), "backend": google_peer.implementation(), "bytes": len(raw)}


_BUILDERS = {("pbj", "hot"): _pbj_hot, ("google-upb", "hot"): _upb_hot,
             ("pbj", "block"): _pbj_block, ("google-upb", "block"): _upb_block,
             ("pbj", "otel"): _pbj_case, ("google-upb", "otel"): _upb_case,
             ("pbj", "descriptors"): _pbj_case, ("google-upb", "descriptors"): _upb_case}


def operations(config: dict) -> tuple[dict[str, Operation], dict]:
    """The checked operations of ``config``'s library and part, and ``{"version", "backend", "bytes"}``.

    Raises:
        CheckFailed: the library's bytes or checksum differ from the expected ones.
        ImportError: the library is not installed.
        KeyError: an unknown library or part.
    """
    return _BUILDERS[config["library"], config["part"]](config)


def run_regions(ops: dict[str, Operation], runs: int, warmup: int) -> list[list]:
    """Switch the garbage collector off, warm every operation up, run the marked regions.

    Returns:
        The regions in the order they ran: ``[operation, run, "op" | "base"]``.
    """
    gc.collect()
    gc.disable()
    for _ in range(warmup):
        for op in ops.values():
            for x in op.inputs():
                op.run(x)
    regions = []
    for run in range(runs):
        for name, op in ops.items():
            inputs = op.inputs()
            _region(op.run, inputs)
            regions.append([name, run, "op"])
            _region(_same, inputs)
            regions.append([name, run, "base"])
            del inputs
    return regions


def main(argv: list[str] | None = None) -> int:
    """Command line: ``python -m pbj.bench.callgrind_worker CONFIG.json``; writes the manifest."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m pbj.bench.callgrind_worker CONFIG.json", file=sys.stderr)
        return 2
    config = json.loads(Path(args[0]).read_text())
    manifest: dict = {"library": config["library"], "part": config["part"], "regions": [], "error": None}
    status = 0
    try:
        if config["library"] == "google-upb":
            from pbj.bench.peers import google_peer

            google_peer.select_backend("upb")
        ops, about = operations(config)
        if config["library"] == "google-upb" and about["backend"] != "upb":
            raise ImportError(f"google.protobuf runs its {about['backend']} backend, not upb")
        manifest.update(about)
        manifest["regions"] = run_regions(ops, config["runs"], config["warmup"])
    except ImportError as exc:
        manifest["error"] = f"not installed ({exc}); pip install 'pbj-protobuf[bench]'"
        status = 1
    except CheckFailed as exc:
        manifest["error"] = f"check failed: {exc}"
        status = 1
    Path(config["manifest"]).write_text(json.dumps(manifest))
    return status


if __name__ == "__main__":
    sys.exit(main())
