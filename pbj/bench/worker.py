"""One peer library, timed in a process of its own: ``python -m pbj.bench.worker CONFIG.json``.

Google's protobuf picks its backend (``upb`` or ``python``) once, when first imported, so each
backend needs its own interpreter; the other peers run in one too, so that every library starts
from the same clean state. The runner (:mod:`pbj.bench.run`) writes the configuration, a JSON
object, to a file::

    {"peer": "google-upb",
     "timing": {"runs": 5, "warmup": 1, "min_time": 0.3, "max_runs": 20},
     "limits": {"targets": ["BLOCK/all"], "ops": [...], "timing": {...}} | null,   # a slow peer's block
     "hot": {"expected_hex": "...", "checksum": 123, "batch": 1000} | null,
     "block": {"raw_path": "...", "schema_path": "...", "block_type": "...", "item_type": "...",
               "targets": {"STATE_CHANGES/first": ["item", [[begin, end], ...]], ...}} | null}

and reads one JSON object from the worker's standard output::

    {"peer", "available", "reason", "version", "backend", "hot": {...}, "block": {...} | "reason"}

A peer that is not installed answers ``"available": false`` with the reason; progress goes to
standard error.

pbj is a worker too: ``pbj`` runs the engine ``pbj.engine()`` picks (the native one when it is
built), ``pbj-python`` the pure-Python engine (``PBJ_ENGINE=python``), so both engines are timed
in the same run. betterproto2 runs on the block with classes its own compiler generates from the
block's descriptor set at bench time (:mod:`pbj.bench.peers.betterproto_gen`); pure-protobuf
cannot load or generate a schema and runs on the hot message only.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from pathlib import Path

__all__ = ["PEERS", "OTHER_PEERS", "PBJ_PEERS", "BLOCK_PEERS", "SLOW_PEERS", "SLOW_LIMITS", "NO_SCHEMA_AT_RUN_TIME",
           "run_worker",
           "block_codec", "main"]

#: Peer name -> (module in ``pbj.bench.peers`` (or ``pbj.bench``), Google backend to select or ``None``).
PEERS = {
    "pbj": ("hot_pbj", None),
    "pbj-python": ("hot_pbj", None),
    "google-upb": ("google_peer", "upb"),
    "google-python": ("google_peer", "python"),
    "pure-protobuf": ("pure_protobuf_peer", None),
    "betterproto2": ("betterproto_peer", None),
}

#: The other libraries, in report order (``pbj bench --peers``' default).
OTHER_PEERS = ("google-upb", "google-python", "pure-protobuf", "betterproto2")

#: pbj's two engines as workers: peer name -> ``PBJ_ENGINE`` value (``None``: pbj's own choice).
PBJ_PEERS = {"pbj": None, "pbj-python": "python"}

#: The peers that run on the block: they load its schema at run time (a ``FileDescriptorSet``), or
#: generate classes from it at bench time (betterproto2).
BLOCK_PEERS = ("pbj", "pbj-python", "google-upb", "google-python", "betterproto2")

#: The peers written in Python that take seconds per run on the whole block: by default they run on
#: the whole block only, without the garbage-collector cell, 3 runs (:data:`SLOW_LIMITS`).
SLOW_PEERS = ("google-python", "betterproto2")
SLOW_LIMITS = {"targets": ["BLOCK/all"], "ops": ["decode", "decode_read", "encode_fresh", "encode_cached"],
               "timing": {"runs": 3, "warmup": 1, "min_time": 0.0, "max_runs": 3}}

NO_SCHEMA_AT_RUN_TIME = ("not run on the block: it can neither load a schema at run time nor generate "
                         "classes from one (no descriptor loader, no compiler)")

PBJ_ENGINE_ENV = "PBJ_ENGINE"

ENV = "PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION"

INSTALL_HINT = "pip install 'pbj-protobuf[bench]'"


def _log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def run_worker(config: dict) -> dict:
    """Run one peer as ``config`` says (see the module's docstring); return the JSON-ready result."""
    peer = config["peer"]
    module_name, backend = PEERS[peer]
    result: dict = {"peer": peer, "available": False, "reason": None, "version": None, "backend": backend}
    try:
        if backend is not None:
            from pbj.bench.peers import google_peer

            google_peer.select_backend(backend)
        package = "pbj.bench" if peer in PBJ_PEERS else "pbj.bench.peers"
        module = importlib.import_module(f"{package}.{module_name}")
        version = module.version()
        if peer in PBJ_PEERS:
            import pbj

            backend = result["backend"] = pbj.engine()
            if PBJ_PEERS[peer] is not None and backend != PBJ_PEERS[peer]:
                raise ImportError(f"asked for pbj's {PBJ_PEERS[peer]} engine, got {backend}")
        if backend is not None and peer not in PBJ_PEERS:
            result["backend"] = module.implementation()
            if result["backend"] != backend:
                raise ImportError(f"asked for backend {backend}, got {result['backend']}")
            module.hot_class()  # compiles hot.proto: needs grpcio-tools
    except ImportError as exc:
        result["reason"] = f"not installed ({exc}); {INSTALL_HINT}"
        return result
    except Exception as exc:  # a peer that is installed but broken is reported, not fatal
        result["reason"] = f"cannot load: {type(exc).__name__}: {exc}"
        return result
    result.update(available=True, version=version)
    if peer == "betterproto2":
        from importlib import metadata

        try:
            result["compiler_version"] = metadata.version("betterproto2_compiler")
        except metadata.PackageNotFoundError:  # the hand-declared hot message needs only the runtime
            result["compiler_version"] = None
    timing = config["timing"]
    hot = config.get("hot")
    if hot:
        from pbj.bench.hot_values import HOT_VALUE
        from pbj.bench.suite import run_hot

        _log(f"{peer}: hot message")
        result["hot"] = run_hot(module, HOT_VALUE, bytes.fromhex(hot["expected_hex"]), hot["checksum"],
                                hot["batch"], timing)
    block = config.get("block")
    if block:
        if peer not in BLOCK_PEERS:
            result["block"] = NO_SCHEMA_AT_RUN_TIME
        else:
            from pbj.bench.suite import run_block

            try:
                codec = block_codec(peer, block)
            except Exception as exc:  # betterproto2's compiler failing on a schema is a finding, not a crash
                result["block"] = f"not run on the block: {type(exc).__name__}: {exc}"
                return result
            raw = Path(block["raw_path"]).read_bytes()
            limits = config.get("limits") or {}
            wanted = limits.get("targets")
            targets = {name: (message, [tuple(s) for s in slices])
                       for name, (message, slices) in block["targets"].items() if wanted is None or name in wanted}
            result["block"] = run_block(codec, raw, targets, limits.get("timing") or timing,
                                        lambda t: _log(f"{peer}: block {t}"), ops=limits.get("ops"))
            if limits:
                result["block_limits"] = limits
    return result


def block_codec(peer: str, block: dict):
    """The :class:`~pbj.bench.suite.Codec` of ``peer`` for the block described by the worker's ``block`` config.

    Raises:
        ImportError: the peer is not installed.
        RuntimeError: betterproto2's compiler failed on the schema.
    """
    from pbj.bench.suite import google_codec, pbj_codec

    schema = Path(block["schema_path"]).read_bytes()
    if peer in PBJ_PEERS:
        import pbj

        ns = pbj.load_descriptor_set(schema)
        return pbj_codec(ns[block["block_type"]], ns[block["item_type"]])
    if peer == "betterproto2":
        from pbj.bench.peers import betterproto_gen

        folder = Path(block["raw_path"]).parent / "betterproto2-block"
        betterproto_gen.generate(schema, folder)
        names = {message: block[f"{message}_type"] for message in ("block", "item")}
        classes = {message: betterproto_gen.load_class(folder, schema, name) for message, name in names.items()}
        return betterproto_gen.codec(classes, schema, names)
    return google_codec(schema, block["block_type"], block["item_type"])


def main(argv: list[str] | None = None) -> int:
    """Command line: ``python -m pbj.bench.worker CONFIG.json``; prints the result as JSON."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m pbj.bench.worker CONFIG.json", file=sys.stderr)
        return 2
    config = json.loads(Path(args[0]).read_text())
    if PEERS[config["peer"]][1] is None:
        os.environ.pop(ENV, None)

    print(json.dumps(run_worker(config)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
