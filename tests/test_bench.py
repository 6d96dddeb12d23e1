"""``pbj bench --quick``, run as users run it (a subprocess), and the JSON it writes.

The quick mode times a few items once, so no figure is checked, only that every cell is there
and that every library's bytes equal the real block's and Google's (the oracle). Peers that
are not installed (the test extra lacks pure-protobuf, betterproto2 and matplotlib) must be
reported as unavailable, with a reason, instead of failing the run. The clock (the thread's CPU
time, best run and median) is checked with a fake clock, the report's ratios on made-up figures.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import pbj
from pbj import _native as pbj_native
from pbj.bench import instructions as instr
from pbj.bench.callgrind_worker import BLOCK_OPS as COUNTED_BLOCK_OPS
from pbj.bench.callgrind_worker import HOT_OPS as COUNTED_HOT_OPS
from pbj.bench.suite import BLOCK_OPS
from tests.conftest import REPO

#: The engine the ``pbj`` worker of a run picks, and whether ``pbj-python`` runs beside it.
ENGINE = "python" if os.environ.get("PBJ_ENGINE") == "python" or not pbj_native.available() else "native"

TARGETS = [f"{k}/{w}" for k in ("STATE_CHANGES", "TRANSACTION_RESULT", "EVENT_TRANSACTION", "BLOCK")
           for w in ("first", "all")]
HOT_OPS = {"encode", "encode_fresh", "decode", "decode_read", "build"}
STATS = {"median_us", "min_us", "max_us", "runs", "samples_us", "clock", "wall_median_us", "wall_min_us"}


def _installed(*modules: str) -> bool:
    return all(importlib.util.find_spec(m) is not None for m in modules)


PEER_MODULES = {
    "pbj-python": (),
    "google-upb": ("google.protobuf", "grpc_tools"),
    "google-python": ("google.protobuf", "grpc_tools"),
    "pure-protobuf": ("pure_protobuf",),
    "betterproto2": ("betterproto2", "betterproto2_compiler"),
}


def _bench(*args: str, timeout: int = 240) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pbj", "bench", *args], capture_output=True, text=True,
                          cwd=REPO, timeout=timeout)


def _check_stats(s: dict) -> None:
    assert STATS <= set(s)
    assert s["clock"] == "thread_time"
    assert s["runs"] == len(s["samples_us"]) >= 1
    assert 0 < s["min_us"] <= s["median_us"] <= s["max_us"]
    assert 0 < s["wall_min_us"] <= s["wall_median_us"]


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    """One quick run on the shipped block, every peer asked for; its JSON and its stdout."""
    out = tmp_path_factory.mktemp("bench") / "quick.json"
    proc = _bench("--quick", "--json", str(out))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(out.read_text()), proc.stdout


@pytest.mark.long  # a pbj bench run of many seconds
def test_machine_and_config(quick):
    results, _ = quick
    m = results["machine"]
    assert m["cpus"] >= 1 and m["cpu_model"] and m["python"] == sys.version.split()[0]
    assert "load_average_start" in m and "load_average_end" in m
    assert results["config"]["quick"] is True and results["config"]["timing"]["runs"] == 1
    assert results["config"]["clock"] == "thread_time"
    assert results["block"]["items"] == 60  # --quick cuts the shipped block to its first 60 items
    assert list(results["targets"]) == TARGETS
    assert results["targets"]["BLOCK/all"]["items"] == 60


@pytest.mark.long  # a pbj bench run of many seconds
def test_pbj_has_every_cell_and_writes_the_block_bytes(quick):
    results, _ = quick
    pbj = results["libraries"]["pbj"]
    assert set(pbj["block"]) == set(TARGETS)
    for target, r in pbj["block"].items():
        # both writers re-encode each batch to the bytes it was cut from (written by Hedera's Java PBJ)
        assert r["bytes_equal"] == {"forward": True, "reverse": True}, target
        assert set(r["cells"]) == set(BLOCK_OPS["pbj"])
        for s in r["cells"].values():
            _check_stats(s)
    assert set(pbj["hot"]["ops"]) == HOT_OPS | {"reverse", "reverse_fresh"}
    for s in pbj["hot"]["ops"].values():
        _check_stats(s)
    assert pbj["backend"] == ENGINE  # pbj runs in a worker process too, on the engine it picks
    rv = results["summary"]["reverse_vs_forward"]["pbj"]
    assert set(rv) == set(TARGETS)
    assert all(v["fresh"] > 0 and v["cached"] > 0 for v in rv.values())


@pytest.mark.long  # a pbj bench run of many seconds
@pytest.mark.parametrize("peer", list(PEER_MODULES))
def test_peer_cells_or_reason(quick, peer):
    results, stdout = quick
    if peer == "pbj-python" and ENGINE == "python":
        assert peer not in results["libraries"]  # pbj itself is the pure-Python engine then
        return
    lib = results["libraries"][peer]
    if not _installed(*PEER_MODULES[peer]):
        assert lib["available"] is False and "not installed" in lib["reason"]
        assert peer in stdout
        return
    assert lib["available"] is True, lib.get("reason")
    hot = lib["hot"]
    # every peer's bytes equal pbj's 219-byte encoding, and read back the same checksum
    assert hot["bytes_equal"] and hot["roundtrip_equal"] and hot["checksum_equal"]
    assert hot["size"] == 219
    assert HOT_OPS <= set(hot["ops"])
    for s in hot["ops"].values():
        _check_stats(s)
    if peer == "pure-protobuf":
        assert "can neither load a schema at run time nor generate classes" in lib["block"]
        assert "can neither load a schema at run time" in stdout
        return
    if peer.startswith("google-"):
        assert lib["backend"] == peer.removeprefix("google-")
    if peer == "pbj-python":
        assert lib["backend"] == "python"
    pbj_block = results["libraries"]["pbj"]["block"]
    expected = {"forward": True, "reverse": True} if peer == "pbj-python" else {"encode": True}
    for target in TARGETS:
        r = lib["block"][target]
        # betterproto2 (classes its compiler generated from the shipped set) writes the block's own bytes too
        assert r["bytes_equal"] == expected, target
        assert r["checksum"] == pbj_block[target]["checksum"], target  # every reader read the same values
        assert set(r["cells"]) == set(BLOCK_OPS["pbj" if peer == "pbj-python" else "google"])
        for s in r["cells"].values():
            _check_stats(s)
    assert results["summary"]["checksums_equal"][peer] is True
    if peer == "betterproto2":
        assert lib["compiler_version"] and "betterproto2" in stdout


@pytest.mark.long  # a pbj bench run of many seconds
def test_google_upb_hot_bytes_are_the_oracle(quick):
    """pbj's hot-message bytes equal Google's deterministic serialization (checked in the worker)."""
    if not _installed(*PEER_MODULES["google-upb"]):
        pytest.skip("protobuf or grpcio-tools not installed")
    results, _ = quick
    assert results["libraries"]["google-upb"]["hot"]["bytes_equal"] is True
    assert results["summary"]["vs_upb"]["pbj"]["BLOCK/all"]["decode_read"] > 0


@pytest.mark.long  # a pbj bench run of many seconds
def test_tables_on_stdout_and_from_json(quick, tmp_path):
    results, stdout = quick
    for title in ("Reverse vs forward writer", "Decode + read every field, µs per batch", "Decode, µs per batch",
                  "Encode, fresh", "Encode, sizes cached", "Hot message"):
        assert title in stdout
    assert "the thread's CPU time (`time.thread_time_ns`)" in stdout and results["machine"]["cpu_model"] in stdout
    assert "Performance targets" not in stdout  # a maintainers' table, shown with --goals only
    path = tmp_path / "again.json"
    path.write_text(json.dumps(results))
    proc = _bench("--from-json", str(path), "--markdown", timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "| STATE_CHANGES, first 5 |" in proc.stdout
    assert not proc.stdout.startswith("# pbj bench")


def _small_block(tmp_path) -> tuple[Path, Path]:
    """A 12-item block of a 4-message schema written by Google's protobuf, and its .proto."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    from pbj.bench.peers.google_peer import compile_descriptor_set

    proto = tmp_path / "blk.proto"
    proto.write_text(textwrap.dedent("""
        syntax = "proto3";
        package t;
        message Change { string key = 1; bytes value = 2; repeated int64 ids = 3; }
        message Result { uint64 fee = 1; sint32 code = 2; }
        message Item { oneof item { Change state_changes = 1; Result transaction_result = 2; } }
        message Blk { repeated Item items = 1; }
    """))
    pool = descriptor_pool.DescriptorPool()
    for fd in descriptor_pb2.FileDescriptorSet.FromString(compile_descriptor_set([proto], [tmp_path])).file:
        pool.Add(fd)
    blk = message_factory.GetMessageClass(pool.FindMessageTypeByName("t.Blk"))()
    for i in range(12):
        item = blk.items.add()
        if i % 3:
            item.transaction_result.fee, item.transaction_result.code = 1000 * i, -i
        else:
            item.state_changes.key, item.state_changes.value = f"k{i}", bytes(i)
            item.state_changes.ids.extend([i, -i, 1 << 40])
    raw = tmp_path / "blk.bin"
    raw.write_bytes(blk.SerializeToString())
    return raw, proto


@pytest.mark.skipif(not _installed("google.protobuf", "grpc_tools"), reason="needs protobuf and grpcio-tools")
def test_own_block_from_proto(tmp_path):
    """``--block FILE --proto FILE --block-type``: a small block of another schema, made by Google's protobuf."""
    raw, proto = _small_block(tmp_path)
    out = tmp_path / "own.json"
    proc = _bench("--quick", "--block", str(raw), "--proto", str(proto), "--block-type", "t.Blk",
                  "--peers", "google-upb", "--json", str(out))
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads(out.read_text())
    assert results["block"]["kinds"] == {"state_changes": 4, "transaction_result": 8}
    assert list(results["targets"]) == ["STATE_CHANGES/first", "STATE_CHANGES/all", "TRANSACTION_RESULT/first",
                                        "TRANSACTION_RESULT/all", "BLOCK/first", "BLOCK/all"]
    pbj_block = results["libraries"]["pbj"]["block"]
    upb_block = results["libraries"]["google-upb"]["block"]
    for target, r in pbj_block.items():
        assert r["bytes_equal"] == {"forward": True, "reverse": True}
        assert upb_block[target]["checksum"] == r["checksum"]
        assert set(r["cells"]) == set(BLOCK_OPS["pbj"])
    assert set(results["libraries"]) == {"pbj", "google-upb"} | ({"pbj-python"} if ENGINE == "native" else set())
    if ENGINE == "native":  # the pure-Python engine on the same block, in the same run
        python_block = results["libraries"]["pbj-python"]["block"]
        assert all(python_block[t]["checksum"] == r["checksum"] for t, r in pbj_block.items())


# ---------------------------------------------------------------- pbj bench --instructions (callgrind)

needs_valgrind = pytest.mark.skipif(instr.valgrind() is None, reason="valgrind not installed")
needs_upb = pytest.mark.skipif(not _installed("google.protobuf", "grpc_tools"),
                               reason="needs protobuf and grpcio-tools")


def test_per_operation_subtracts_the_baseline_and_divides_by_the_batch():
    regions = [["decode", 0, "op"], ["decode", 0, "base"], ["decode", 1, "op"], ["decode", 1, "base"]]
    # dumps: before region 0, region 0, between, region 1, between, region 2, between, region 3
    dumps = [10**9, 5_000 + 20 * 1_000, 7, 5_000, 9, 5_100 + 20 * 1_010, 3, 5_100]
    ops = instr.per_operation(regions, dumps, batch=20)
    assert ops["decode"]["runs"] == [1_000, 1_010]
    assert ops["decode"]["per_op"] == 1_005
    assert ops["decode"]["spread"] == pytest.approx(10 / 1_005)
    assert ops["decode"]["base"] == pytest.approx((5_000 + 5_100) / 2 / 20)
    with pytest.raises(ValueError, match="expected 8 callgrind dumps, found 7"):
        instr.per_operation(regions, dumps[:-1], batch=20)


def test_read_dumps_in_numeric_order(tmp_path):
    out = tmp_path / "w.callgrind"
    for n, total in [(1, 50), (2, 7), (10, 99), (3, 12)]:
        dump = f"version: 1\ncmd: x\nevents: Ir\nfn=(1) f\n0 3\n\ntotals: {total}\n"
        (tmp_path / f"w.callgrind.{n}").write_text(dump)
    out.write_text("totals: 123456\n")                       # the final dump at exit: not a region's
    (tmp_path / "w.callgrind.log").write_text("not a dump")
    assert instr.read_dumps(out) == [50, 7, 12, 99]


def test_instructions_skip_without_valgrind():
    env = dict(os.environ, PATH="/nonexistent")             # no valgrind on the way
    proc = subprocess.run([sys.executable, "-m", "pbj", "bench", "--instructions", "--quick"], capture_output=True,
                          text=True, cwd=REPO, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "pbj bench --instructions: skipped: valgrind not found; apt-get install valgrind"


@needs_valgrind
@pytest.mark.long
def test_instructions_smoke(tmp_path, capsys):
    """The callgrind smoke test (seconds; the default selection): ``pbj bench --instructions`` end to end.

    The hot message on pbj's engine in use, 50 operations a region, 2 runs: every operation is
    counted, the runs repeat to < 1%, decoding and then reading every field costs more than decoding,
    and the table is printed. ``test_instructions_small_run`` (``-m callgrind``) checks the rest.
    """
    from pbj import cli

    out = tmp_path / "smoke.json"
    argv = ["bench", "--instructions", "--no-block", "--no-peers", "--hot-batch", "50", "--runs", "2",
            "--engine", pbj.engine(), "--json", str(out)]
    assert cli.main(argv) == 0
    stdout = capsys.readouterr().out
    results = json.loads(out.read_text())
    assert results["command"] == ["pbj", *argv] and results["config"]["hot_batch"] == 50
    hot = results["libraries"]["pbj"]["hot"]
    assert hot["available"] is True, hot["reason"]
    assert hot["backend"] == pbj.engine() and hot["bytes"] == 219
    assert tuple(hot["ops"]) == COUNTED_HOT_OPS
    for op, c in hot["ops"].items():
        assert len(c["runs"]) == 2 and c["per_op"] > 0 and c["base"] > 0, (op, c)
        assert c["spread"] < 0.01, (op, c["runs"])
    assert hot["ops"]["decode_read"]["per_op"] > hot["ops"]["decode"]["per_op"]
    assert "| hot decode |" in stdout and "| hot reverse encode |" in stdout


@pytest.mark.callgrind
@needs_valgrind
@needs_upb
def test_instructions_small_run(tmp_path, capsys):
    """``cli.main(argv)`` with ``--instructions``: hot message and a small block, pbj and upb, under callgrind.

    The counts must be per operation (the same for 50 and 100 operations per region), repeat to
    within 1% between runs, and show what is known of the two libraries: pbj's decode, in Python,
    executes more instructions than upb's, in C, and reading every field after decoding adds some.
    """
    from pbj import cli

    raw, proto = _small_block(tmp_path)
    out = tmp_path / "instructions.json"
    argv = ["bench", "--instructions", "--quick", "--block", str(raw), "--proto", str(proto),
            "--block-type", "t.Blk", "--json", str(out), "--engine", pbj.engine()]  # one pbj engine: time
    assert cli.main(argv) == 0
    stdout = capsys.readouterr().out
    results = json.loads(out.read_text())
    assert results["command"] == ["pbj", *argv]
    assert results["machine"]["python"] == sys.version.split()[0]
    assert results["valgrind"][0].isdigit()
    assert results["block"]["bytes"] == raw.stat().st_size and results["block"]["items"] == 12
    assert results["config"]["hot_batch"] == 50 and results["config"]["runs"] == 2
    assert raw.stat().st_size < 600 and results["config"]["block_batch"] == 100   # a tiny block: 100 a region
    pbj_, upb = results["libraries"]["pbj"], results["libraries"]["google-upb"]
    for lib, part, expected in [(pbj_, "hot", COUNTED_HOT_OPS), (pbj_, "block", COUNTED_BLOCK_OPS),
                                (upb, "hot", tuple(o for o in COUNTED_HOT_OPS if o != "encode_reverse")),
                                (upb, "block", COUNTED_BLOCK_OPS)]:
        r = lib[part]
        assert r["available"] is True, r["reason"]
        assert tuple(r["ops"]) == expected
        for op, c in r["ops"].items():
            assert len(c["runs"]) == 2 and c["per_op"] > 0, (part, op)
            # runs repeat to < 1%; the tiny test block (12 items, a few thousand instructions an
            # operation) to < 5%: there one allocator arena more or less in a run shows (a full
            # block repeats to 0.02%, docs/performance.md)
            assert c["spread"] < (0.01 if part == "hot" else 0.05), (part, op, c["runs"])
    assert upb["hot"]["backend"] == "upb" and pbj_["hot"]["bytes"] == 219
    hot = pbj_["hot"]["ops"]
    if pbj.engine() == "python":
        assert hot["decode"]["per_op"] > 5 * upb["hot"]["ops"]["decode"]["per_op"]
    else:  # the native engine builds every object and still reads them all back sooner than upb
        assert hot["decode_read"]["per_op"] < upb["hot"]["ops"]["decode_read"]["per_op"]
    assert hot["decode_read"]["per_op"] > hot["decode"]["per_op"]
    assert pbj_["block"]["ops"]["decode_walk"]["per_op"] > pbj_["block"]["ops"]["decode"]["per_op"]
    for label in ("| hot decode |", "| hot reverse encode |", "| block decode + walk |", "pbj/upb"):
        assert label in stdout
    assert cli.main(["bench", "--instructions", "--from-json", str(out), "--markdown"]) == 0
    assert capsys.readouterr().out.startswith("Machine: ")           # the same tables, no title, nothing run

    # per operation, not per region: twice the batch gives the same figures
    again = tmp_path / "again.json"
    assert cli.main(["bench", "--instructions", "--no-block", "--no-peers", "--hot-batch", "100", "--runs", "1",
                     "--json", str(again), "--engine", pbj.engine()]) == 0
    doubled = json.loads(again.read_text())["libraries"]["pbj"]["hot"]["ops"]
    for op, c in doubled.items():
        assert c["per_op"] == pytest.approx(hot[op]["per_op"], rel=0.01), op


# ---------------------------------------------------------------- the clock, the report, the new peers and cases

def test_measure_times_with_the_thread_cpu_clock(monkeypatch):
    """Every sample is the thread's CPU time around ``run`` (a fake clock: exact values), the wall clock beside it;
    ``prepare`` is outside the timed region; the report takes best run and median from them."""
    from pbj.bench import timing

    cpu = iter(range(0, 10**9, 1_000))           # each reading 1 µs later: every run lasts 1 µs of CPU time
    wall = iter(range(0, 10**12, 7_000))         # and 7 µs of wall time
    monkeypatch.setattr(timing.time, "thread_time_ns", lambda: next(cpu))
    monkeypatch.setattr(timing.time, "perf_counter_ns", lambda: next(wall))
    calls = []
    cells = {"a": timing.Cell(run=lambda x: calls.append(("run", x)), prepare=lambda: calls.append("prepare") or 5)}
    out = timing.measure(cells, runs=3, warmup=1, max_runs=3)["a"]
    assert out["samples_us"] == [1.0, 1.0, 1.0] and out["runs"] == 3
    assert (out["min_us"], out["median_us"], out["wall_min_us"], out["wall_median_us"]) == (1.0, 1.0, 7.0, 7.0)
    assert out["clock"] == "thread_time"
    assert calls == ["prepare", ("run", 5)] * 4  # one warm-up round and three timed ones
    per_message = timing.scale(out, 4)
    assert per_message["min_us"] == 0.25 and per_message["wall_median_us"] == 1.75


def _fake_run(upb_min: float, pbj_min: float, pbj_median: float) -> dict:
    def stats(lo: float, med: float) -> dict:
        return {"min_us": lo, "median_us": med, "max_us": med * 2, "runs": 3, "samples_us": [lo, med, med * 2]}

    cells_pbj = {op: stats(pbj_min, pbj_median) for op in BLOCK_OPS["pbj"]}
    cells_upb = {op: stats(upb_min, upb_min * 3) for op in BLOCK_OPS["google"]}
    block = {"BLOCK/all": {"cells": cells_pbj, "bytes_equal": {"forward": True, "reverse": True}, "checksum": 7}}
    hot = {"size": 219, "bytes_equal": True, "roundtrip_equal": True, "checksum_equal": True,
           "ops": {op: stats(pbj_min, pbj_median) for op in [*HOT_OPS, "reverse", "reverse_fresh"]}}
    upb_hot = {**hot, "ops": {op: stats(upb_min, upb_min * 3) for op in HOT_OPS}}
    return {"created": "2026-12-02T01:00:00+00:00", "elapsed_s": 1,
            "machine": {"cpu_model": "Some CPU", "cpus": 2, "platform": "Linux", "python": "3.11.7",
                        "python_implementation": "CPython", "load_average_start": [1.0], "load_average_end": [2.0]},
            "config": {"quick": False, "timing": {"runs": 3, "warmup": 1}},
            "block": {"source": "b", "bytes": 1000, "items": 2},
            "targets": {"BLOCK/all": {"kind": "BLOCK", "message": "block", "items": 2, "bytes": 1000}},
            "libraries": {"pbj": {"available": True, "version": "0.1.0", "backend": "native", "hot": hot,
                                  "block": block},
                          "google-upb": {"available": True, "version": "7", "backend": "upb", "hot": upb_hot,
                                         "block": {"BLOCK/all": {**block["BLOCK/all"], "cells": cells_upb,
                                                                 "bytes_equal": {"encode": True}}}}}}


def test_report_ratios_are_of_the_best_runs_with_the_medians_beside():
    from pbj.bench import report

    results = _fake_run(upb_min=10.0, pbj_min=5.0, pbj_median=60.0)   # upb's median: 30
    summary = report.summarize(results)
    vs = summary["vs_upb"]["pbj"]["BLOCK/all"]
    assert vs["decode_read"] == 0.5 and vs["decode_read_median"] == 2.0
    assert summary["hot_speedup"]["pbj"]["google-upb"]["decode"] == 2.0      # upb's best / pbj's best
    assert summary["checksums_equal"] == {"google-upb": True}
    text = report.markdown(results, header=False)
    assert "| whole block (2 items) | 5.00 [60.0] | 10.0 [30.0] | 0.50 [2.00] |" in text   # best [median]
    assert text.startswith("Machine: Some CPU, 2 cores, Linux; CPython 3.11.7;")
    assert "Libraries: pbj 0.1.0 (native engine), google-upb 7." in text


def test_betterproto2_request_has_source_info_and_skips_the_well_known_types():
    """The plugin fails on a file without ``source_code_info``: the request gives every file an empty one."""
    from google.protobuf import descriptor_pb2
    from google.protobuf.compiler import plugin_pb2

    from pbj.bench import workload
    from pbj.bench.peers import betterproto_gen

    schema = workload.load_schema()
    shipped = descriptor_pb2.FileDescriptorSet.FromString(schema)
    assert not any(f.HasField("source_code_info") for f in shipped.file)  # the shipped set has none
    request = plugin_pb2.CodeGeneratorRequest.FromString(betterproto_gen.plugin_request(schema))
    assert len(request.proto_file) == len(shipped.file) == 167
    assert all(f.HasField("source_code_info") and not f.source_code_info.location for f in request.proto_file)
    assert request.parameter == "client_generation=none,server_generation=none"
    assert len(request.file_to_generate) == 166 and "stream/block.proto" in request.file_to_generate
    assert not any(n.startswith("google/protobuf/") for n in request.file_to_generate)


@pytest.mark.skipif(not _installed("betterproto2", "betterproto2_compiler"), reason="needs the bench extra")
def test_betterproto2_generated_classes_read_the_hot_values_like_pbj(tmp_path):
    """Classes betterproto2's compiler makes from hot.proto's descriptors write pbj's bytes; the generic
    betterproto2 reader gives the hand-written readers' checksum."""
    from pbj.bench import hot_pbj
    from pbj.bench.hot_values import HOT_VALUE
    from pbj.bench.peers import betterproto_gen
    from pbj.bench.peers.google_peer import PROTO, compile_descriptor_set

    schema = compile_descriptor_set([PROTO], [PROTO.parent])
    written = betterproto_gen.generate(schema, tmp_path)
    assert "pbjbench/__init__.py" in written
    cls = betterproto_gen.load_class(tmp_path, schema, "pbjbench.TransactionBody")
    data = pbj.encode(hot_pbj.build_hot(HOT_VALUE))
    message = cls.parse(data)
    assert bytes(message) == data
    assert betterproto_gen.BetterprotoReader().read(message) == hot_pbj.read_all(hot_pbj.build_hot(HOT_VALUE))


def test_descriptor_case_compiles_every_schema_under_shared_protos(tmp_path):
    """The descriptors case's payload: protoc's set of all 198 files of ../shared/protos, with source info."""
    from google.protobuf import descriptor_pb2

    from pbj.bench import cases
    from tests.conftest import SHARED

    roots, files = cases._roots_and_files(SHARED / "protos")
    assert [r.relative_to(SHARED / "protos").as_posix() for r in roots] == [
        "google", "hapi-v0.55.0/block", "hapi-v0.55.0/platform", "hapi-v0.55.0/services", "hapi-v0.55.0/streams",
        "pbj-it"]
    assert len(files) == 198 and "google/protobuf/descriptor.proto" in files and "everything.proto" in files
    raw = cases.protoc_descriptor_set(SHARED / "protos", tmp_path / "set.binpb", prefix="google/protobuf/")
    fds = descriptor_pb2.FileDescriptorSet.FromString(raw)
    assert {f.name for f in fds.file} >= {"google/protobuf/descriptor.proto", "google/protobuf/any.proto"}
    assert all(f.source_code_info.location for f in fds.file)  # --include_source_info
    cls = pbj.load_descriptor_set(cases.descriptor_schema())["google.protobuf.FileDescriptorSet"]
    assert pbj.encode(pbj.decode(cls, raw)) == raw == pbj.encode(pbj.decode(cls, raw), reverse=True)


@needs_upb
@pytest.mark.long  # a pbj bench run of many seconds
def test_bench_descriptors_quick_run(tmp_path):
    """``pbj bench descriptors --quick``: both pbj engines and upb write protoc's bytes and read one checksum."""
    out = tmp_path / "fds.json"
    proc = _bench("descriptors", "--quick", "--peers", "google-upb", "--jobs", "2", "--json", str(out))
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads(out.read_text())
    assert results["case"] == "descriptors" and results["config"]["clock"] == "thread_time"
    assert results["request"]["files"] == 10 and results["request"]["source_info_bytes"] > 0
    libs = results["libraries"]
    assert list(libs) == (["pbj", "pbj-python"] if ENGINE == "native" else ["pbj"]) + ["google-upb"]
    checksum = libs["pbj"]["result"]["checksum"]
    for name, lib in libs.items():
        r = lib["result"]
        assert all(r["bytes_equal"].values()) and r["checksum"] == checksum, name
        for s in r["cells"].values():
            _check_stats(s)
    assert set(libs["pbj"]["result"]["cells"]) == {"decode", "decode_gc", "decode_read", "forward_fresh",
                                                    "forward_cached", "reverse_fresh", "reverse_cached"}
    assert "| decode + read every field |" in proc.stdout and "pbj native / upb" in proc.stdout.replace(
        "pbj python / upb", "pbj native / upb")


def test_performance_doc_rewrites_only_between_its_markers():
    """``python -m benchmarks.performance_doc``'s rendering: each section between its markers, nothing else."""
    from benchmarks import performance_doc as doc

    page = "intro\n<!-- pbj-bench-far:begin -->\nold\n<!-- pbj-bench-far:end -->\nkept\n"
    assert doc.replace_between(page, "pbj-bench-far", "new\n") == (
        "intro\n<!-- pbj-bench-far:begin -->\nnew\n<!-- pbj-bench-far:end -->\nkept\n")
    with pytest.raises(ValueError, match="pbj-bench-otel:begin"):
        doc.replace_between(page, "pbj-bench-otel", "x")
    text = doc.far_prose(_fake_run(upb_min=10.0, pbj_min=5.0, pbj_median=60.0), None, None)
    # the native engine's best runs take half of upb's: the prose says so, of the hot message and the block
    assert "* **pbj, the native engine, against upb (C)**: decode + read every field takes 0.50x upb's time on " \
           "the hot message, 0.50x on the whole block" in text
    assert "2 cores, load average 1.0 and 2.0" in text
    # the page's markers are all there, once each
    page = (REPO / "docs" / "performance.md").read_text()
    for marker in ("pbj-bench", "pbj-bench-otel", "pbj-bench-descriptors", "pbj-bench-far"):
        assert page.count(f"<!-- {marker}:begin -->") == 1 and page.count(f"<!-- {marker}:end -->") == 1, marker
    assert "python -m benchmarks.performance_doc" in page
