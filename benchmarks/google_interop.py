"""What ``pbj.from_google``, ``pbj.to_google`` and ``pbj.validate`` cost, in instructions per message.

Each conversion is a bytes round trip plus bookkeeping (finding the class, the pool); the
baseline is that round trip written by hand::

    from_google(g)           vs  pbj.decode(Cls, g.SerializeToString())
    to_google(p, G)          vs  G.FromString(pbj.encode(p))
    to_google(p)             vs  G.FromString(pbj.encode(p))          (pbj's own pool for Cls)
    pbj.validate(p)          vs  protovalidate.collect_violations(g)  (g: the Google message, already built)

on 200 ``BlockItem``\\ s of the shipped Hedera block (every kind the block holds, 60 bytes to
35 KB each), and on a small message (``proto.TokenTransferList`` of one transfer). Counted with
callgrind as ``pbj bench --instructions`` counts (:mod:`pbj.bench.instructions`): regions between
calls of ``os.getppid`` (``--dump-before=getppid``), each operation's region minus an identity
region over the same inputs, divided by the batch; three runs, the garbage collector off.

    python benchmarks/google_interop.py            # runs itself under valgrind, prints a table
"""

from __future__ import annotations

import gc
import gzip
import json
import os
import subprocess
import sys
import tempfile
from importlib.resources import files
from pathlib import Path

RUNS = 3
ITEMS = 200


def _ops() -> tuple[dict, dict]:
    """name -> (operation, inputs) and name -> (baseline, inputs)."""
    from google.protobuf import descriptor_pb2, descriptor_pool

    import pbj
    from pbj import google as pg

    shipped = files("pbj") / "data"
    data = (shipped / "hapi-v0.55.0.binpb").read_bytes()
    raw = gzip.decompress((shipped / "000000000000000000000000000000497558.blk.gz").read_bytes())
    pool = descriptor_pool.DescriptorPool()
    for fd in descriptor_pb2.FileDescriptorSet.FromString(data).file:
        pool.Add(fd)
    ns = pg.load_google(pool, ["com.hedera.hapi.block.stream.Block"])
    block = pbj.decode(ns["com.hedera.hapi.block.stream.Block"], raw)
    step = max(1, len(block.items) // ITEMS)
    items = list(block.items[::step][:ITEMS])
    item_cls = type(items[0])
    gitem = pg.google_class(item_cls, pool)
    gitems = [gitem.FromString(pbj.encode(x)) for x in items]
    small_cls = ns["proto.TokenTransferList"]
    small = [pbj.decode(small_cls, pbj.encode(small_cls(token=ns["proto.TokenID"](tokenNum=n),
                                                           transfers=(ns["proto.AccountAmount"](
                                                               accountID=ns["proto.AccountID"](account=pbj.OneOf("accountNum", n)),
                                                               amount=-n),))))
             for n in range(1, ITEMS + 1)]
    gsmall_cls = pg.google_class(small_cls, pool)
    gsmall = [gsmall_cls.FromString(pbj.encode(x)) for x in small]
    own_item = pg.google_class(item_cls)
    users, gusers = _users(ITEMS)
    for x in (*items, *small):  # first use: pools, classes, codecs
        pg.from_google(pg.to_google(x, pool))
        pg.to_google(x)
    ops = {
        "from_google, block items": (pg.from_google, gitems),
        "to_google(pool), block items": (lambda p: pg.to_google(p, pool), items),
        "to_google(own pool), block items": (pg.to_google, items),
        "from_google, small": (pg.from_google, gsmall),
        "to_google(pool), small": (lambda p: pg.to_google(p, pool), small),
        "validate (pbj.violations), small": (pbj.violations, users),
    }
    import protovalidate

    base = {
        "from_google, block items": (lambda g: pbj.decode(item_cls, g.SerializeToString()), gitems),
        "to_google(pool), block items": (lambda p: gitem.FromString(pbj.encode(p)), items),
        "to_google(own pool), block items": (lambda p: own_item.FromString(pbj.encode(p)), items),
        "from_google, small": (lambda g: pbj.decode(small_cls, g.SerializeToString()), gsmall),
        "to_google(pool), small": (lambda p: gsmall_cls.FromString(pbj.encode(p)), small),
        "validate (pbj.violations), small": (protovalidate.collect_violations, gusers),
    }
    for p, g in zip(users, gusers, strict=True):  # the same answers, and first use done
        assert [v.proto.rule_id for v in protovalidate.collect_violations(g)] == [v.rule_id for v in pbj.violations(p)]
    return ops, base


def _users(n: int) -> tuple[list, list]:
    """``n`` messages of a small schema with buf.validate rules (a third of them invalid), and the
    same as Google messages of the pool pbj keeps for the schema."""
    import textwrap

    import pbj
    from pbj import google as pg
    from pbj.validation import PROTO_INCLUDE

    folder = Path(tempfile.mkdtemp(prefix="pbj-bench-validate-"))
    (folder / "users.proto").write_text(textwrap.dedent("""
        syntax = "proto3";
        package bench;
        import "buf/validate/validate.proto";
        message User {
          string id = 1 [(buf.validate.field).string.min_len = 3];
          string email = 2 [(buf.validate.field).string.email = true];
          int64 age = 3 [(buf.validate.field).int64 = {gte: 0, lt: 150}];
          repeated string tags = 4 [(buf.validate.field).repeated = {max_items: 4, items: {string: {min_len: 1}}}];
        }
    """))
    user = pbj.load_proto(folder / "users.proto", include=[folder, PROTO_INCLUDE])["bench.User"]
    users = [user(id="u-%d" % i if i % 3 else "u", email=f"user{i}@example.com", age=i % 200, tags=("a", "bc"))
             for i in range(n)]
    return users, [pg.to_google(u) for u in users]


def worker(out: str) -> None:
    """Under callgrind: each operation, its hand-written baseline and an identity loop, marked."""
    ops, base = _ops()
    gc.collect()
    gc.disable()
    regions = []
    ident = lambda x: x
    for name in ops:
        for run in range(RUNS):
            for kind, (fn, inputs) in (("op", ops[name]), ("base", base[name])):
                for x in inputs:  # warm
                    fn(x)
                for label, f in ((kind, fn), (kind + "-identity", ident)):
                    os.getppid()
                    for x in inputs:
                        f(x)
                    os.getppid()
                    regions.append([name, run, label, len(inputs)])
    Path(out).write_text(json.dumps(regions))


def main() -> int:
    from pbj.bench.instructions import read_dumps, valgrind

    program = valgrind()
    if program is None:
        print("skipped: valgrind not found; apt-get install valgrind")
        return 0
    folder = Path(tempfile.mkdtemp(prefix="pbj-google-interop-"))
    manifest = folder / "regions.json"
    out_file = folder / "callgrind.out"
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    subprocess.run([program, "--tool=callgrind", "--dump-before=getppid", f"--callgrind-out-file={out_file}",
                    f"--log-file={folder / 'valgrind.log'}", sys.executable, __file__, "--worker", str(manifest)],
                   check=True, env=env)
    regions = json.loads(manifest.read_text())
    dumps = read_dumps(out_file)
    if len(dumps) != 2 * len(regions):
        raise SystemExit(f"expected {2 * len(regions)} dumps, found {len(dumps)}")
    ir = {tuple(r[:3]): dumps[2 * i + 1] / r[3] for i, r in enumerate(regions)}
    import platform

    import pbj
    print(f"Python {platform.python_version()}, pbj engine {pbj.engine()}, instructions per message "
          f"(callgrind Ir, mean of {RUNS} runs)\n")
    print("| operation | pbj | by hand (bytes round trip) | ratio |")
    print("|---|---:|---:|---:|")
    for name in dict.fromkeys(r[0] for r in regions):
        op = sum(ir[name, run, "op"] - ir[name, run, "op-identity"] for run in range(RUNS)) / RUNS
        by_hand = sum(ir[name, run, "base"] - ir[name, run, "base-identity"] for run in range(RUNS)) / RUNS
        print(f"| {name} | {op:,.0f} | {by_hand:,.0f} | {op / by_hand:.3f} |")
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--worker":
        worker(sys.argv[2])
    else:
        raise SystemExit(main())
