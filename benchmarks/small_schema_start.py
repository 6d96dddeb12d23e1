"""A whole process on a small schema: pbj with ``pbj.load_proto`` against Google's protobuf with a generated ``_pb2``.

    python -m benchmarks.small_schema_start              # best of 5, the three kinds of process alternating
    python -m benchmarks.small_schema_start --runs 9

What a command-line tool, a serverless function or a test process pays on every start: a fresh
interpreter imports the library, gets the classes of one ``.proto`` file of five messages (an
enum, a nested message, a map, a oneof, a repeated message field), builds a message, encodes it
and decodes the bytes, then exits. Three kinds of process, run alternately:

* *google*: ``import shop_pb2`` (written beforehand by ``grpc_tools.protoc --python_out``), then
  the same work with its classes (upb);
* *pbj, cache warm*: ``pbj.load_proto`` finds the descriptor set of the file in its cache
  (written by an earlier process; see docs/loading-schemas.md, "The schema cache");
* *pbj, no cache*: ``PBJ_NO_CACHE=1``: ``pbj.load_proto`` runs protoc (``grpcio-tools``) in
  the process, as the first process on a machine does.

The time is the child process's CPU time, user + system (``resource.RUSAGE_CHILDREN``), start-up
and exit of the interpreter included; best of ``--runs`` per kind. Imports run from cached
bytecode (a ``PYTHONPYCACHEPREFIX`` of the benchmark's own, filled by an untimed run of each
kind first), as an installed package's do. The children check that both libraries give the
same bytes.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

SCHEMA = textwrap.dedent("""
    syntax = "proto3";
    package shop;

    enum Status { STATUS_UNSPECIFIED = 0; OPEN = 1; PAID = 2; SHIPPED = 3; }

    message Money { string currency = 1; int64 units = 2; int32 nanos = 3; }

    message Address {
      string street = 1;
      string city = 2;
      string country = 3;
    }

    message Item {
      string sku = 1;
      int32 quantity = 2;
      Money price = 3;
      map<string, string> attributes = 4;
    }

    message Order {
      message Note { string text = 1; int64 at = 2; }
      uint64 id = 1;
      Status status = 2;
      repeated Item items = 3;
      Address ship_to = 4;
      oneof payment { string card_token = 5; string voucher = 6; }
      repeated Note notes = 7;
    }
""")

# The work of each child: the same message, encoded and decoded, with either library.
_WORK = """
def build(Order, Item, Money, Address, Note, paid):
    return Order(id=42, status=paid, ship_to=Address(street="1 Main St", city="Springfield", country="US"),
                 items=[Item(sku="A-1", quantity=2, price=Money(currency="EUR", units=12, nanos=500000000),
                             attributes={"colour": "red"}),
                        Item(sku="B-2", quantity=1, price=Money(currency="EUR", units=3))],
                 notes=[Note(text="leave at door", at=1700000000)], **{PAYMENT})
"""

_PBJ_CHILD = _WORK.replace("{PAYMENT}", '{"payment": pbj.OneOf("card_token", "tok_123")}') + """
import pbj
ns = pbj.load_proto(SCHEMA_PATH)
Order = ns["shop.Order"]
order = build(Order, ns["shop.Item"], ns["shop.Money"], ns["shop.Address"], Order.Note, ns["shop.Status"].PAID)
data = pbj.encode(order)
assert pbj.decode(Order, data) == order
print(data.hex())
"""

_GOOGLE_CHILD = _WORK.replace("{PAYMENT}", '{"card_token": "tok_123"}') + """
import shop_pb2 as s
order = build(s.Order, s.Item, s.Money, s.Address, s.Order.Note, s.PAID)
data = order.SerializeToString(deterministic=True)
assert s.Order.FromString(data) == order
print(data.hex())
"""

KINDS = ("google", "pbj, cache warm", "pbj, no cache")


def _child_cpu(code: str, env: dict[str, str], cwd: str) -> tuple[float, str]:
    """Run ``code`` in a fresh interpreter; return its CPU seconds (user + system) and its output."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=cwd, check=True, capture_output=True,
                         text=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), out.strip()


def main(argv: list[str] | None = None) -> None:
    """Time the three kinds of process ``--runs`` times, alternately; print the best of each and the ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="pbj-small-schema-") as tmp:
        folder = Path(tmp)
        proto = folder / "shop.proto"
        proto.write_text(SCHEMA)
        subprocess.run([sys.executable, "-m", "grpc_tools.protoc", f"-I{folder}", f"--python_out={folder}",
                        str(proto)], check=True)
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PBJ_NO_CACHE")}
        env["PYTHONPYCACHEPREFIX"] = str(folder / "pycache")
        env["PBJ_CACHE_DIR"] = str(folder / "pbj-cache")
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(folder), env.get("PYTHONPATH", "")) if p)
        codes = {"google": (_GOOGLE_CHILD, env),
                 "pbj, cache warm": (_PBJ_CHILD.replace("SCHEMA_PATH", repr(str(proto))), env),
                 "pbj, no cache": (_PBJ_CHILD.replace("SCHEMA_PATH", repr(str(proto))), {**env, "PBJ_NO_CACHE": "1"})}
        outputs = {kind: _child_cpu(code, kind_env, tmp)[1] for kind, (code, kind_env) in codes.items()}  # warm-up
        if len(set(outputs.values())) != 1:
            raise SystemExit(f"the libraries wrote different bytes: {outputs}")
        times: dict[str, list[float]] = {kind: [] for kind in KINDS}
        for _ in range(args.runs):
            for kind in KINDS:
                code, kind_env = codes[kind]
                times[kind].append(_child_cpu(code, kind_env, tmp)[0])
        bare = min(_child_cpu("pass", env, tmp)[0] for _ in range(args.runs))
    print(f"CPython {sys.version.split()[0]} on {platform.machine()} {platform.system()}, {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.1f}; cached bytecode")
    print(f"whole process, CPU seconds (user + system), best of {args.runs}, the kinds alternating; "
          f"an empty interpreter: {bare:.4f} s")
    google = min(times["google"])
    print(f"{'process':<18}{'best':>9}{'median':>9}{'/ google':>10}")
    for kind in KINDS:
        ordered = sorted(times[kind])
        best, median = ordered[0], ordered[len(ordered) // 2]
        print(f"{kind:<18}{best:>9.4f}{median:>9.4f}{best / google:>10.2f}")


if __name__ == "__main__":
    main()
