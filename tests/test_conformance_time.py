"""``benchmarks/conformance_time.py``'s pieces on 20 requests of the editions run (no timing asserted).

The requests: every 314th of the run (binary, JSON and text input; all four suites; every kind of
answer but ``serialize_error``).

Both testees (pbj's ``conformance/testee`` on this run's engine, and the benchmark's own testee on
Google's protobuf, compiled with protoc) answer one framed stream in one process each; the answers
are counted by kind and must match the kinds of the recorded reference answers, and pbj's pass the
test suite's judge.
"""

from __future__ import annotations

import collections
import os

from benchmarks import conformance_time as ct

N = 20
STRIDE = 314
#: The kinds of Google's recorded answers to those requests (all passed the runner).
EXPECTED = {"protobuf_payload": 7, "json_payload": 6, "parse_error": 5, "text_payload": 2}


def test_frame_round_trip() -> None:
    messages = [b"", b"a", bytes(300)]
    stream = ct.frame(messages)
    assert stream[:5] == b"\x00\x00\x00\x00\x01" and len(stream) == 3 * 4 + 301
    assert ct.unframe(stream) == messages
    try:
        ct.unframe(stream[:-1])
    except ValueError as exc:
        assert "message 3" in str(exc)
    else:
        raise AssertionError("a truncated stream was accepted")


def test_both_testees_answer_the_same_requests(tmp_path) -> None:
    vectors = ct.read_vectors()[::STRIDE][:N]
    assert len(vectors) == N
    assert collections.Counter(v["reference_result"] for v in vectors) == EXPECTED
    stream = ct.frame([bytes.fromhex(v["request_hex"]) for v in vectors])
    env = ct.environment(str(tmp_path / "pycache"), os.environ.get("PBJ_ENGINE"))
    google = ct.write_google_testee(tmp_path)
    for cmd in (ct.pbj_testee(), google):
        cpu, answers = ct.run_testee(cmd, stream, env)
        assert cpu > 0 and len(answers) == N, cmd
        assert ct.kinds(answers) == EXPECTED, cmd
        if cmd == ct.pbj_testee():
            assert ct.check(vectors, answers) == {}
        assert ct.run_testee(cmd, b"", env)[1] == []
    assert len(ct.startup_requests(vectors)) == 4  # proto2, proto3 and their editions copies
