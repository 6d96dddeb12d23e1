"""One peer library, timed in a process of its own: ``python -m pbj.bench.worker CONFIG.json``.

Google's protobuf picks its backend (``upb`` or ``python``) once, when first imported, so each
backend needs its own interpreter; the other peers run in one too, so that every library starts
from the same clean state. The runner (:mod:`pbj.bench.run`) writes the configuration, a JSON
object, to a file::

    {"peer": "google-upb",
     "timing": {"runs": 5, "warmup": 1, "min_time": 0.3, "max_runs": 20},
     "hot": {"expected_hex": "...", "checksum": 123, "batch": 1000} | null,
     "block": {"raw_path": "...", "schema_path": "...", "block_type": "...", "item_type": "...",
               "targets": {"STATE_CHANGES/first": ["item", [[begin, end], ...]], ...}} | null}

and reads one JSON object from the worker's standard output::

    {"peer", "available", "reason", "version", "backend", "hot": {...}, "block": {...} | "reason"}

A peer that is not installed answers ``"available": false`` with the reason; progress goes to
standard error.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from pathlib import Path

__all__ = ["PEERS", "BLOCK_PEERS", "NO_SCHEMA_AT_RUN_TIME", "run_worker", "main"]

#: Peer name -> (module in ``pbj.bench.peers``, Google backend to select or ``None``).
PEERS = {
    "google-upb": ("google_peer", "upb"),
    "google-python": ("google_peer", "python"),
    "pure-protobuf": ("pure_protobuf_peer", None),
    "betterproto2": ("betterproto_peer", None),
}

#: The peers that can load the block's schema at run time (a ``FileDescriptorSet``).
BLOCK_PEERS = ("google-upb", "google-python")

NO_SCHEMA_AT_RUN_TIME = ("not run on the block: it cannot load a schema at run time (no descriptor "
                         "loader), and declaring HAPI's 167 files by hand is out of scope")

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
        module = importlib.import_module(f"pbj.bench.peers.{module_name}")
        version = module.version()
        if backend is not None:
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
            from pbj.bench.suite import google_codec, run_block

            codec = google_codec(Path(block["schema_path"]).read_bytes(), block["block_type"], block["item_type"])
            raw = Path(block["raw_path"]).read_bytes()
            targets = {name: (message, [tuple(s) for s in slices])
                       for name, (message, slices) in block["targets"].items()}
            result["block"] = run_block(codec, raw, targets, timing, lambda t: _log(f"{peer}: block {t}"))
    return result


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
