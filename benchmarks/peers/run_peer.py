"""Check and time one peer on the hot message, or every peer each in its own subprocess.

Usage (from the repository's root, or as a script)::

    python -m benchmarks.peers.run_peer                   # all peers, a table
    python -m benchmarks.peers.run_peer google-python --json

One peer prints a JSON object: its version and backend, the size and hex of its encoding of
``HOT_VALUE``, whether that equals Google's deterministic bytes, the ``read_all`` checksums,
and µs per op (median of ``--rounds`` interleaved rounds) for ``encode`` (a built object),
``decode`` and ``decode_read`` (decode, then read every field). A peer whose plain ``encode``
is not canonical (Google's upb writes map entries in hash order) also has ``encode_canonical``,
used for the byte check and timed too. Google's backend is fixed at import, so each peer runs
in a fresh process.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PEERS = {
    "google-upb": ("google_peer", "upb"),
    "google-python": ("google_peer", "python"),
    "pure-protobuf": ("pure_protobuf_peer", None),
    "betterproto2": ("betterproto_peer", None),
}
"""Peer name -> (module in this package, Google backend to select first or None)."""


def _module(name: str):
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    return importlib.import_module(f"benchmarks.peers.{name}")


def run_one(peer: str, rounds: int = 5, min_time: float = 0.2) -> dict:
    """Check and time ``peer`` in this process (which must not have chosen another backend)."""
    module_name, backend = PEERS[peer]
    google = _module("google_peer")
    google.select_backend(backend or "upb")
    values = _module("hot_values").HOT_VALUE
    timing = _module("timing")
    mod = _module(module_name)

    reference = google.encode_canonical(google.build_hot(values))
    obj = mod.build_hot(values)
    canonical = getattr(mod, "encode_canonical", mod.encode)
    data = canonical(obj)
    result = {
        "peer": peer,
        "version": mod.version(),
        "backend": google.implementation() if mod is google else None,
        "size": len(data),
        "hex": data.hex(),
        "reference_backend": google.implementation(),
        "matches_reference": data == reference,
        "plain_encode_matches": mod.encode(obj) == reference,
        "roundtrip_matches": canonical(mod.decode(reference)) == reference,
        "checksum_built": mod.read_all(obj),
        "checksum_decoded": mod.read_all(mod.decode(reference)),
    }
    ops = {
        "encode": lambda: mod.encode(obj),
        "decode": lambda: mod.decode(data),
        "decode_read": lambda: mod.read_all(mod.decode(data)),
    }
    if canonical is not mod.encode:
        ops["encode_canonical"] = lambda: canonical(obj)
    result["timings"] = timing.measure(ops, rounds=rounds, min_time=min_time)
    return result


def run_subprocess(peer: str, rounds: int = 5, min_time: float = 0.2) -> dict:
    """Run :func:`run_one` for ``peer`` in a fresh interpreter and return its JSON."""
    env = dict(os.environ)
    env.pop("PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION", None)
    cmd = [
        sys.executable,
        "-m",
        "benchmarks.peers.run_peer",
        peer,
        "--json",
        "--rounds",
        str(rounds),
        "--min-time",
        str(min_time),
    ]
    out = subprocess.run(cmd, cwd=ROOT, env=env, check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def _cell(timing: dict) -> str:
    return f"{timing['median_us']:.2f} ({timing['min_us']:.2f})"


def table(results: list[dict]) -> str:
    """A markdown table of µs per op, median (best) of the rounds, with the byte check."""
    ops = ["encode", "encode_canonical", "decode", "decode_read"]
    lines = [
        "| peer | version | bytes | = Google | encode | canonical encode | decode | decode+read |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        t = r["timings"]
        cells = [_cell(t[op]) if op in t else "=" for op in ops]
        same = "yes" if r["matches_reference"] else "NO"
        lines.append(f"| {r['peer']} | {r['version']} | {r['size']} | {same} | {' | '.join(cells)} |")
    lines.append("µs per op, median (best) of the rounds; '=' when encode is already canonical.")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Command line: one peer (``--json``) or all peers (a table, or ``--json`` for a list)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("peer", nargs="?", choices=sorted(PEERS), help="one peer; all when left off")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--min-time", type=float, default=0.2, help="seconds per op per round, at least")
    args = parser.parse_args(argv)
    if args.peer:
        result = run_one(args.peer, args.rounds, args.min_time)
        print(json.dumps(result) if args.json else table([result]))
        return 0 if result["matches_reference"] else 1
    results = [run_subprocess(p, args.rounds, args.min_time) for p in PEERS]
    upb = results[0]["hex"]
    for r in results:
        r["matches_upb"] = r["hex"] == upb
    if args.json:
        print(json.dumps(results, indent=1))
    else:
        print(table(results))
        for r in results:
            if not r["plain_encode_matches"]:
                print(f"note {r['peer']}: plain encode() differs from the canonical bytes")
            if not (r["matches_upb"] and r["roundtrip_matches"]):
                print(f"MISMATCH {r['peer']}: ours {r['hex']}\n  upb  {upb}")
            if (
                len(
                    {
                        r["checksum_built"],
                        r["checksum_decoded"],
                        results[0]["checksum_built"],
                    }
                )
                > 1
            ):
                print(f"CHECKSUM {r['peer']}: {r['checksum_built']} {r['checksum_decoded']}")
    return 0 if all(r["matches_upb"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
