"""First use of a wide message: load, first encode and first decode of a message with N fields.

    python -m benchmarks.wide_first_use                      # N = 1000, 2500, 10000; both engines
    python -m benchmarks.wide_first_use --widths 1000 --runs 5

Each run is a fresh interpreter. The message ``w.Wide`` (proto3) has N singular fields cycling
through eight scalar types (int32, string, double, bool, int64, bytes, sint32, fixed64); a third
of them are set. Timed with the process CPU clock (``time.process_time``), one after the other:
*load* (``pbj.load_descriptor_set`` of its one-file set), *encode* (the first ``pbj.encode``:
the codec compiled, on the pure-Python engine its forward writer emitted and compiled too) and
*decode* (the first ``pbj.decode`` of those bytes). Reported: per phase the best of the runs.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

_CHILD = r"""
import json, sys, time
from google.protobuf import descriptor_pb2 as d
N = int(sys.argv[1])
T = d.FieldDescriptorProto
TYPES = [T.TYPE_INT32, T.TYPE_STRING, T.TYPE_DOUBLE, T.TYPE_BOOL, T.TYPE_INT64, T.TYPE_BYTES, T.TYPE_SINT32,
         T.TYPE_FIXED64]
VALUES = {T.TYPE_STRING: "x", T.TYPE_BYTES: b"y", T.TYPE_DOUBLE: 1.5, T.TYPE_BOOL: True}
fds = d.FileDescriptorSet()
f = fds.file.add(name="wide.proto", package="w", syntax="proto3")
m = f.message_type.add(name="Wide")
for i in range(1, N + 1):
    m.field.add(name=f"f{i}", number=i, type=TYPES[i % len(TYPES)], label=T.LABEL_OPTIONAL)
raw = fds.SerializeToString()
import pbj
pbj.load_descriptor_set  # the loader's import is not the load
clock = time.process_time
t0 = clock()
cls = pbj.load_descriptor_set(raw)["w.Wide"]
t1 = clock()
obj = cls(**{f"f{i}": VALUES.get(TYPES[i % len(TYPES)], i) for i in range(1, N + 1, 3)})
t2 = clock()
data = pbj.encode(obj)
t3 = clock()
back = pbj.decode(cls, data)
t4 = clock()
assert back == obj
print(json.dumps({"load": t1 - t0, "encode": t3 - t2, "decode": t4 - t3, "engine": pbj.engine()}))
"""


def run_once(width: int, engine: str) -> dict:
    """One fresh interpreter: the phases' CPU seconds for a message of ``width`` fields."""
    import os
    env = {**os.environ, "PBJ_ENGINE": engine}
    out = subprocess.run([sys.executable, "-c", _CHILD, str(width)], env=env, check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    """Run every width on each engine ``--runs`` times (alternating) and print the best phases."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--widths", type=int, nargs="+", default=[1000, 2500, 10000])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--engines", nargs="+", default=["python", "native"])
    args = parser.parse_args(argv)
    print(f"CPython {sys.version.split()[0]}; CPU seconds, best of {args.runs} fresh processes")
    print(f"{'engine':<8}{'fields':>8}{'load':>9}{'encode':>9}{'decode':>9}")
    for engine in args.engines:
        for width in args.widths:
            runs = [run_once(width, engine) for _ in range(args.runs)]
            best = {k: min(r[k] for r in runs) for k in ("load", "encode", "decode")}
            print(f"{runs[0]['engine']:<8}{width:>8}{best['load']:>9.3f}{best['encode']:>9.3f}{best['decode']:>9.3f}")


if __name__ == "__main__":
    main()
