"""The OpenTelemetry case of ``pbj bench`` (``pbj/bench/otel.py``, ``otel_run.py``).

A trace export request made by the OpenTelemetry SDK and its OTLP encoder (Google protobuf's
bytes) must decode in pbj, from the schema loaded at run time, and re-encode to the same bytes
with both writers; pbj and Google must read the same values from it. These tests need the
``bench`` extra (the SDK, the OTLP encoder); CI installs only ``test``, where they are skipped,
except the two that check what happens without it. No test asserts a time.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

import pytest

from tests.conftest import REPO


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:                 # its parent package is missing
        return False


HAVE_OTEL = all(_installed(m) for m in ("opentelemetry.sdk", "opentelemetry.exporter.otlp.proto.common",
                                        "opentelemetry.proto"))
needs_otel = pytest.mark.skipif(not HAVE_OTEL, reason="needs the bench extra: pip install -e '.[bench]'")

#: Two traces: the second's server span links to the first's, so every kind of part is there.
TINY = 20


@pytest.fixture(scope="module")
def tiny():
    """A 20-span request: its bytes, pbj's class and decoded request, Google's decoded request."""
    import pbj
    from pbj.bench import otel

    raw = otel.build_request(TINY)
    cls = otel.pbj_class()
    return raw, cls, pbj.decode(cls, raw), otel.google_class().FromString(raw)


@needs_otel
def test_tiny_export_round_trips_byte_exact_with_both_writers(tiny):
    import pbj

    raw, cls, request, _ = tiny
    assert pbj.encode(request) == raw
    assert pbj.encode(request, reverse=True) == raw
    again = pbj.decode(cls, raw)
    assert pbj.encode(again, reverse=True) == raw      # the reverse writer on a fresh object (no size cached)
    assert again == request and hash(again) == hash(request)


@needs_otel
def test_tiny_export_holds_every_part_the_bench_reads(tiny):
    from pbj.bench import otel

    _, _, request, google = tiny
    counts = otel.describe(request)
    assert counts["spans"] == TINY == sum(len(ss.spans) for rs in google.resource_spans for ss in rs.scope_spans)
    assert counts["resource_spans"] == 1 and counts["scope_spans"] == 3    # http, db, messaging scopes
    assert counts["events"] > 0 and counts["links"] == 1 and counts["attributes"] > 10 * TINY
    resource = {kv.key: kv.value.value.value for kv in request.resource_spans[0].resource.attributes}
    assert resource["service.name"] == "checkout" and resource["process.pid"] == 4242
    spans = [s for ss in request.resource_spans[0].scope_spans for s in ss.spans]
    events = {e.name for s in spans for e in s.events}
    assert {"exception", "db.connection.acquired", "order.validated"} <= events
    kinds = {kv.value.value.which for s in spans for kv in s.attributes}
    assert {"string_value", "int_value", "double_value", "bool_value", "array_value"} <= kinds
    link, = (x for s in spans for x in s.links)
    assert link.trace_id in {s.trace_id for s in spans} and len(link.span_id) == 8


@needs_otel
def test_pbj_and_google_read_the_same_values(tiny):
    from pbj.bench.readers import GoogleReader, PbjReader

    _, _, request, google = tiny
    assert PbjReader().read(request) == GoogleReader().read(google) != 0


@needs_otel
def test_request_is_reproducible_and_seeded():
    from pbj.bench import otel

    a, b = otel.build_request(3), otel.build_request(3)
    assert a == b
    assert otel.build_request(3, seed=7) != a                   # other ids, the same size
    assert len(otel.build_request(3, seed=7)) == len(a)
    with pytest.raises(ValueError, match="spans must be at least 1, not 0"):
        otel.build_request(0)


@needs_otel
def test_descriptor_set_is_the_otlp_files_dependencies_first():
    from google.protobuf import descriptor_pb2

    from pbj.bench import otel

    fds = descriptor_pb2.FileDescriptorSet.FromString(otel.descriptor_set())
    names = [f.name for f in fds.file]
    assert names[-1] == "opentelemetry/proto/collector/trace/v1/trace_service.proto"
    assert {"opentelemetry/proto/trace/v1/trace.proto", "opentelemetry/proto/common/v1/common.proto",
            "opentelemetry/proto/resource/v1/resource.proto"} <= set(names)
    for i, f in enumerate(fds.file):
        assert set(f.dependency) <= set(names[:i]), f.name


@needs_otel
def test_bench_otel_quick_run(tmp_path):
    """``pbj bench otel --quick`` as users run it: pbj (both engines), upb, betterproto2; every cell, the checks."""
    out = tmp_path / "otel.json"
    proc = subprocess.run([sys.executable, "-m", "pbj", "bench", "otel", "--quick", "--jobs", "2", "--peers",
                           "google-upb,betterproto2,pure-protobuf", "--json", str(out)],
                          capture_output=True, text=True, cwd=REPO, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads(out.read_text())
    assert results["engine"] and results["machine"]["python"] == sys.version.split()[0]
    assert results["request"]["spans"] == 24 and results["config"]["quick"] is True
    assert results["config"]["clock"] == "thread_time"
    pbj_, upb = results["libraries"]["pbj"], results["libraries"]["google-upb"]
    assert pbj_["result"]["bytes_equal"] == {"forward": True, "reverse": True}
    assert upb["backend"] == "upb" and upb["result"]["bytes_equal"] == {"encode": True}
    assert upb["result"]["checksum"] == pbj_["result"]["checksum"]
    assert set(pbj_["result"]["cells"]) == {"decode", "decode_gc", "decode_read", "forward_fresh", "forward_cached",
                                            "reverse_fresh", "reverse_cached"}
    assert set(upb["result"]["cells"]) == {"decode", "decode_gc", "decode_read", "encode_fresh", "encode_cached"}
    if "pbj-python" in results["libraries"]:
        assert results["libraries"]["pbj-python"]["backend"] == "python"
        assert results["libraries"]["pbj-python"]["result"]["checksum"] == pbj_["result"]["checksum"]
    bp = results["libraries"]["betterproto2"]
    if _installed("betterproto2") and _installed("betterproto2_compiler"):
        # its own compiler's classes, from the request's descriptor set: the same message, fields in declaration order
        assert bp["available"] is True and bp["compiler_version"]
        assert bp["result"]["bytes_equal"] == {"encode": False} and bp["result"]["same_message"] == {"encode": True}
        assert bp["result"]["checksum"] == pbj_["result"]["checksum"] and bp["result"]["cells"]
        assert "betterproto2 writes fields in the order the schema declares them" in proc.stdout
    else:
        assert bp["available"] is False and "not installed" in bp["reason"]
    assert results["libraries"]["pure-protobuf"]["reason"].startswith("not run: it can neither load")
    assert f"pbj engine: {results['engine']}" in proc.stdout and "/ upb |" in proc.stdout
    assert "| decode + read every field |" in proc.stdout and "| reverse writer, sizes cached |" in proc.stdout
    again = subprocess.run([sys.executable, "-m", "pbj", "bench", "otel", "--from-json", str(out)],
                           capture_output=True, text=True, cwd=REPO, timeout=60)
    assert again.returncode == 0 and again.stdout == proc.stdout


@pytest.mark.callgrind
@needs_otel
@pytest.mark.skipif(not __import__("shutil").which("valgrind"), reason="valgrind not installed")
def test_bench_otel_instructions_small_run(tmp_path, capsys):
    """``pbj bench otel --instructions`` on an 8-span request: every operation counted, runs repeat to < 1%."""
    from pbj import cli
    from pbj.bench.callgrind_worker import OTEL_OPS

    out = tmp_path / "otel-instructions.json"
    assert cli.main(["bench", "otel", "--instructions", "--quick", "--spans", "8", "--json", str(out)]) == 0
    results = json.loads(out.read_text())
    assert results["otel"]["spans"] == 8 and results["config"]["parts"] == ["otel"]
    pbj_, upb = results["libraries"]["pbj"]["otel"], results["libraries"]["google-upb"]["otel"]
    assert pbj_["available"] and upb["available"], (pbj_["reason"], upb["reason"])
    assert tuple(pbj_["ops"]) == OTEL_OPS and tuple(upb["ops"]) == OTEL_OPS[:-1]   # upb has no reverse writer
    for r in (pbj_, upb):
        for op, c in r["ops"].items():
            assert c["per_op"] > 0 and c["spread"] < 0.01, (op, c["runs"])
    assert pbj_["ops"]["decode_read"]["per_op"] > pbj_["ops"]["decode"]["per_op"]
    assert upb["ops"]["decode_read"]["per_op"] > upb["ops"]["decode"]["per_op"]    # upb decodes lazily
    stdout = capsys.readouterr().out
    assert "| otel decode + read every field |" in stdout and "pbj engine:" in stdout


def test_otel_is_a_case_of_pbj_bench():
    from pbj.bench.run import build_parser

    args = build_parser().parse_args(["otel", "--spans", "3", "--quick"])
    assert (args.case, args.spans, args.quick) == ("otel", 3, True)
    assert build_parser().parse_args([]).case is None                 # the default run is unchanged
    with pytest.raises(SystemExit):
        build_parser().parse_args(["onnx"])


def test_bench_otel_without_the_sdk_says_what_to_install(monkeypatch, capsys):
    """Without the bench extra (as in CI), ``pbj bench otel`` fails with the install line, not a traceback."""
    from pbj.bench import run

    for name in ("opentelemetry", "opentelemetry.sdk", "opentelemetry.exporter.otlp.proto.common.trace_encoder"):
        monkeypatch.setitem(sys.modules, name, None)                  # import of it raises ImportError
    assert run.main(["otel", "--quick", "--no-peers"]) == 1
    err = capsys.readouterr().err
    assert "pbj bench otel: needs the bench extra" in err and "pip install 'pbj-protobuf[bench]'" in err
