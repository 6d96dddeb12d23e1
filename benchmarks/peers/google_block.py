"""Google's protobuf on the real Hedera block: load HAPI at run time, decode, re-encode, time.

The schemas come from ``shared/data/hapi-v0.55.0.binpb`` (a ``FileDescriptorSet``), added to a
private ``DescriptorPool``; classes are made with ``message_factory.GetMessageClass``. The block
``shared/data/blocks/*.blk.gz`` is a gzipped ``com.hedera.hapi.block.stream.Block``.

As a command it checks the block and times a whole-block decode and encode, with one backend
in this process (``--backend``) or with each backend in a subprocess (the default)::

    python -m benchmarks.peers.google_block [--backend upb|python] [--json]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("PBJ_SHARED", ROOT.parent / "shared"))
DESCRIPTORS = SHARED / "data" / "hapi-v0.55.0.binpb"
BLOCKS = SHARED / "data" / "blocks"
BLOCK = "com.hedera.hapi.block.stream.Block"
BLOCK_ITEM = "com.hedera.hapi.block.stream.BlockItem"
ENV = "PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION"


def load_classes(names: tuple[str, ...] = (BLOCK, BLOCK_ITEM), binpb: Path = DESCRIPTORS) -> dict:
    """Load a ``FileDescriptorSet`` into a new pool; return ``{full name: message class}``."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    files = descriptor_pb2.FileDescriptorSet.FromString(binpb.read_bytes())
    pool = descriptor_pool.DescriptorPool()
    for file in files.file:  # protoc --include_imports lists dependencies first
        pool.Add(file)
    return {name: message_factory.GetMessageClass(pool.FindMessageTypeByName(name)) for name in names}


def block_paths() -> list[Path]:
    """The shared block files."""
    return sorted(BLOCKS.glob("*.blk.gz"))


def read_block(path: Path | None = None) -> bytes:
    """The raw (gunzipped) bytes of a block file, the first shared one by default."""
    return gzip.decompress((path or block_paths()[0]).read_bytes())


def decode_block(data: bytes, block_class=None):
    """Parse a ``Block``."""
    return (block_class or load_classes((BLOCK,))[BLOCK]).FromString(data)


def item_kind(item) -> str:
    """Which member of ``BlockItem``'s oneof ``item`` is set."""
    return item.WhichOneof("item")


def items_by_kind(block) -> dict[str, list]:
    """The block's items grouped by kind, in block order within each kind."""
    groups: dict[str, list] = {}
    for item in block.items:
        groups.setdefault(item_kind(item), []).append(item)
    return groups


def count_kinds(block) -> Counter:
    """How many items of each kind."""
    return Counter(item_kind(item) for item in block.items)


def encode_items(items) -> list[bytes]:
    """Each item serialized alone."""
    return [item.SerializeToString() for item in items]


def time_items(item_class, encoded: list[bytes], rounds: int = 5) -> dict:
    """µs per item to decode ``encoded`` and to encode the decoded items (median of rounds)."""
    from benchmarks.peers.timing import measure

    decoded = [item_class.FromString(b) for b in encoded]
    ops = {
        "decode": lambda: [item_class.FromString(b) for b in encoded],
        "encode": lambda: [m.SerializeToString() for m in decoded],
    }
    result = measure(ops, rounds=rounds, min_time=0.0)
    n = len(encoded)
    return {op: r["median_us"] / n for op, r in result.items()}


def check_and_time(rounds: int = 5) -> dict:
    """Decode the block, count kinds, check the re-encoding, time whole-block decode/encode."""
    from google.protobuf.internal import api_implementation

    from benchmarks.peers.timing import measure

    classes = load_classes()
    data = read_block()
    block = decode_block(data, classes[BLOCK])
    encoded = block.SerializeToString()
    result = {
        "backend": api_implementation.Type(),
        "size": len(data),
        "items": len(block.items),
        "kinds": dict(count_kinds(block)),
        "reencode_equal": encoded == data,
        "reencode_deterministic_equal": block.SerializeToString(deterministic=True) == data,
    }
    ops = {
        "decode": lambda: classes[BLOCK].FromString(data),
        "encode": lambda: block.SerializeToString(),
    }
    timings = measure(ops, rounds=rounds, min_time=0.0)
    result["ms"] = {op: r["median_us"] / 1000 for op, r in timings.items()}
    result["ms_rounds"] = {op: [x / 1000 for x in r["rounds_us"]] for op, r in timings.items()}
    return result


def run_subprocess(backend: str, rounds: int = 5) -> dict:
    """Run :func:`check_and_time` with ``backend`` in a fresh interpreter."""
    env = dict(os.environ, **{ENV: backend})
    cmd = [sys.executable, "-m", "benchmarks.peers.google_block"]
    cmd += ["--backend", backend, "--json", "--rounds", str(rounds)]
    out = subprocess.run(cmd, cwd=ROOT, env=env, check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def main(argv: list[str] | None = None) -> int:
    """Command line; see the module's docstring."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=("upb", "python"), help="this process only")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    if args.backend:
        if "google.protobuf" not in sys.modules:
            os.environ[ENV] = args.backend
        results = [check_and_time(args.rounds)]
        if results[0]["backend"] != args.backend:
            raise SystemExit(f"asked for {args.backend}, got {results[0]['backend']}")
    else:
        results = [run_subprocess(b, args.rounds) for b in ("upb", "python")]
    if args.json:
        print(json.dumps(results[0] if args.backend else results))
        return 0
    for r in results:
        print(
            f"{r['backend']}: {r['items']} items {r['kinds']}, re-encode equal "
            f"{r['reencode_equal']}, decode {r['ms']['decode']:.1f} ms, "
            f"encode {r['ms']['encode']:.1f} ms"
        )
    return 0


if __name__ == "__main__":
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    sys.exit(main())
