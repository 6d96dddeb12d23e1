"""The conformance testee (:mod:`pbj.conformance`) against protobuf v36.0's conformance suite.

``test_replay`` sends every request the v36.0 runner sends
(``../shared/conformance/vectors.jsonl``, 3,262 tests) through the testee's
request handler and judges each answer as the runner does
(``../shared/conformance/README.md``):

* an expected failure needs the same kind of answer (``parse_error``,
  ``serialize_error``);
* a ``protobuf_payload`` answer is parsed with Google's protobuf as the test's
  message type and must equal the reference answer parsed the same way, field
  by field (compared as Google's deterministic encoding of each, so unknown
  fields and float bit patterns count too), not byte by byte;
* a ``json_payload`` answer is parsed back with Google's ``json_format`` and
  compared the same way, a ``text_payload`` with Google's ``text_format``;
  but the 4 ``*UnknownFields_Print.TextFormatOutput`` answers, whose unknown
  fields only the text shows, must equal the reference text;
* ``skipped`` is not a pass;
* for the 4 JSON vectors whose reference answer the runner refused
  (``FieldNameDuplicateDifferentCasing``), the runner wants a ``parse_error``;
  for the 24 text-format vectors it refused (Google's Python parser refuses
  reserved field names and the ``\\?`` escape), the runner wants what its C++
  parser makes of the input (:func:`runner_expects`).

It prints the pass count per category and fails when a test that is not in
the failure lists fails, or when a listed test passes (so the lists shrink as
pbj improves). The lists are the files docs/conformance.md's runner command
passes, one per suite of the runner: ``conformance/failure_list.txt``
(``--failure_list``: the binary and JSON suite) and
``conformance/text_format_failure_list.txt`` (``--text_format_failure_list``:
the text-format suite). The runner fails a suite whose list names a test it
does not run, so each list may only name tests of its own suite.

``test_replay_editions_text`` replays the 909 text-format vectors of
``../shared/conformance/vectors-editions.jsonl`` (the runner with
``--maximum_edition 2023``: the editions copies of the test messages too) the
same way, against the same text-format list (both runs use it).

``test_subprocess_*`` start ``conformance/testee`` as the runner does and talk
to it over pipes; expected bytes there come from Google's protobuf.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import time

import pytest
from google.protobuf import json_format, text_format

import pbj
from pbj import conformance, decode
from pbj.required import missing_required
from tests.conftest import REPO, SHARED, SUMMARY_PROPERTY
from tests.oracle import GOOGLE_PROTOS, google_class, protoc

VECTORS = SHARED / "conformance" / "vectors.jsonl"
EDITIONS_VECTORS = SHARED / "conformance" / "vectors-editions.jsonl"
#: ``--failure_list`` of the run without editions: the binary and JSON suite's known failures.
FAILURE_LIST = REPO / "conformance" / "failure_list.txt"
#: ``--text_format_failure_list`` of both runs: the text-format suite's known failures.
TEXT_FAILURE_LIST = REPO / "conformance" / "text_format_failure_list.txt"
TESTEE = REPO / "conformance" / "testee"
P3 = "protobuf_test_messages.proto3.TestAllTypesProto3"
P2 = "protobuf_test_messages.proto2.TestAllTypesProto2"


def _google() -> None:
    """Compile the conformance schemas into Google's default pool (the call tests/test_json.py makes)."""
    g = GOOGLE_PROTOS
    protoc([g / "conformance" / "conformance.proto", g / "google" / "protobuf" / "test_messages_proto3.proto",
            g / "google" / "protobuf" / "test_messages_proto2.proto"], [g])


def _google_editions() -> None:
    """Compile the editions variants of the test messages into Google's default pool."""
    _google()
    g = GOOGLE_PROTOS
    protoc([g / "editions" / "test_messages_proto3_editions.proto",
            g / "editions" / "test_messages_proto2_editions.proto",
            g / "editions" / "test_messages_edition2023.proto"], [g, g / "editions"])


def _canonical(message_type: str, result: str, value) -> bytes:
    """Google's deterministic encoding of an answer's payload parsed as ``message_type``."""
    msg = google_class(message_type)()
    if result == "protobuf_payload":
        msg.ParseFromString(value)
    elif result == "text_payload":
        text_format.Parse(value, msg)
    else:
        json_format.Parse(value, msg)
    return msg.SerializePartialToString(deterministic=True)


# What the runner's C++ parser makes of the inputs of the text-format vectors whose Google (Python)
# reference answer it refused, written so Google's Python parser reads it: reserved field names are
# skipped ("reserved fields ... are simply ignored by text format"), and whitespace and comments between
# the pieces of a bracketed extension name are dropped. The escapes vectors say what they expected in
# ``runner_says``.
_RUNNER_READS = {
    "ReservedFieldName": "",
    "ExtensionNameWith": "[protobuf_test_messages.editions.extension_int32]: 1",
}
_NOT_EQUIVALENT = "Output was not equivalent to reference message: modified: "


def runner_expects(vector: dict, message_type: str) -> bytes:
    """Google's encoding of the message the runner wanted for a refused text-format reference answer."""
    says = vector["runner_says"]
    if says.startswith(_NOT_EQUIVALENT):  # "modified: <field: expected value> -> <what the reference gave>"
        text = says[len(_NOT_EQUIVALENT):].split(" -> ", 1)[0]
    else:
        text = next(v for k, v in _RUNNER_READS.items() if f".{k}" in vector["name"])
    return _canonical(message_type, "text_payload", text)


def _category(name: str) -> str:
    """The replay category of a runner test name."""
    if ".JsonInput." in name or name.endswith(".JsonOutput"):
        return "json"
    if "TextFormat" in name:
        return "text"
    return "binary proto2" if ".Proto2." in name else "binary proto3"


_OUTPUT_RESULT = {1: "protobuf_payload", 2: "json_payload", 4: "text_payload"}


def judge(vector: dict) -> str | None:
    """Replay one vector through the testee's handler; ``None`` if it passes, else why not."""
    return judge_response(vector, conformance.handle_bytes(bytes.fromhex(vector["request_hex"])))


def judge_response(vector: dict, response: bytes) -> str | None:
    """Judge a testee's ``ConformanceResponse`` bytes to one vector as the runner does; ``None`` if it passes.

    (``benchmarks/conformance_time.py`` judges the answers of the testee process with it.)
    """
    _google()
    ns = conformance.schema()
    req = decode(ns["conformance.ConformanceRequest"], bytes.fromhex(vector["request_hex"]))
    if req.message_type.startswith("protobuf_test_messages.edition"):
        _google_editions()
    resp = decode(ns["conformance.ConformanceResponse"], response)
    ref = decode(ns["conformance.ConformanceResponse"], bytes.fromhex(vector["reference_response_hex"]))
    got = resp.result
    if got is None:
        return "no result"
    if got.which == "skipped":
        return f"skipped: {got.value}"
    expected = None
    if vector["reference_passed"]:
        want = vector["reference_result"]
    elif ".JsonInput." in vector["name"]:
        want = "parse_error"
    else:
        want = _OUTPUT_RESULT[int(req.requested_output_format)]
        expected = runner_expects(vector, req.message_type)
    if got.which != want:
        return f"answered {got.which} ({str(got.value)[:200]!r}), expected {want}"
    if want == "text_payload" and "UnknownFields_Print." in vector["name"]:
        if got.value != ref.result.value:
            return f"text differs from the reference: {got.value!r:.300} vs {ref.result.value!r:.300}"
    elif want in ("protobuf_payload", "json_payload", "text_payload"):
        try:
            mine = _canonical(req.message_type, got.which, got.value)
        except Exception as exc:
            return f"Google cannot parse the answer: {type(exc).__name__}: {exc}"
        if expected is None:
            expected = _canonical(req.message_type, ref.result.which, ref.result.value)
        if mine != expected:
            return f"answer differs from the reference: {got.value!r:.300} vs {ref.result.value!r:.300}"
    return None


def _vectors(path=VECTORS) -> list[dict]:
    with path.open() as f:
        return [json.loads(line) for line in f]


def read_failure_list(path=FAILURE_LIST) -> set[str]:
    """The test names of a runner failure list (one a line, ``#`` comments), as the runner reads it."""
    names = set()
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            names.add(line)
    return names


def _failure_list() -> set[str]:
    return read_failure_list(FAILURE_LIST)


def check_against_list(failures: dict[str, str], listed: set[str], list_name: str) -> None:
    """Fail on a test failing that ``listed`` lacks, and on a listed test that passes."""
    regressions = {n: why for n, why in failures.items() if n not in listed}
    assert not regressions, f"tests failing that are not in {list_name}:\n" + "\n".join(
        f"{n}: {why}" for n, why in sorted(regressions.items()))
    fixed = sorted(listed - set(failures))
    assert not fixed, f"tests in {list_name} that pass now (remove them):\n" + "\n".join(fixed)


def replay() -> tuple[dict[str, list[int]], dict[str, str]]:
    """Judge every vector: (category -> [passed, total], failing test name -> reason)."""
    counts: dict[str, list[int]] = {}
    failures: dict[str, str] = {}
    for vector in _vectors():
        cat = _category(vector["name"])
        why = judge(vector)
        c = counts.setdefault(cat, [0, 0])
        c[1] += 1
        if why is None:
            c[0] += 1
        else:
            failures[vector["name"]] = why
    return counts, failures


def test_replay(record_property) -> None:
    started = time.perf_counter()
    counts, failures = replay()
    elapsed = time.perf_counter() - started
    lines = [f"conformance replay ({elapsed:.1f} s):"]
    lines += [f"  {cat:14} {counts[cat][0]:5} / {counts[cat][1]}" for cat in sorted(counts)]
    record_property(SUMMARY_PROPERTY, "\n".join(lines))  # printed after the run (tests/conftest.py)
    assert sum(c[1] for c in counts.values()) == 3262
    assert counts["binary proto3"] == [707, 707]
    assert counts["binary proto2"] == [707, 707]
    assert counts["text"] == [445, 445]
    text = {n: why for n, why in failures.items() if _category(n) == "text"}
    check_against_list({n: why for n, why in failures.items() if n not in text}, _failure_list(), FAILURE_LIST.name)
    check_against_list(text, read_failure_list(TEXT_FAILURE_LIST), TEXT_FAILURE_LIST.name)


def test_replay_editions_text(record_property) -> None:
    started = time.perf_counter()
    vectors = [v for v in _vectors(EDITIONS_VECTORS) if _category(v["name"]) == "text"]
    failures = {v["name"]: why for v in vectors if (why := judge(v)) is not None}
    record_property(SUMMARY_PROPERTY, f"editions text-format replay ({time.perf_counter() - started:.1f} s): "
                                      f"{len(vectors) - len(failures)} / {len(vectors)}")
    assert len(vectors) == 909
    check_against_list(failures, read_failure_list(TEXT_FAILURE_LIST), TEXT_FAILURE_LIST.name)


def test_failure_lists_name_only_tests_of_their_suite() -> None:
    """The runner fails a suite whose list names a test it does not run (docs/conformance.md)."""
    names = {v["name"] for v in _vectors()}
    binary_json = {n for n in names if _category(n) != "text"}
    text = names - binary_json
    assert _failure_list() <= binary_json
    # the text-format list serves both runs: only tests both runs send (vectors.jsonl's are in both)
    assert read_failure_list(TEXT_FAILURE_LIST) <= text


# ---------------------------------------------------------------- the testee as a program

def _frame(data: bytes) -> bytes:
    return struct.pack("<I", len(data)) + data


def _run_testee(requests: list[bytes]) -> tuple[list[bytes], int]:
    """Start ``conformance/testee``, send ``requests``, close its input; (responses, exit status)."""
    env = dict(os.environ, PBJ_PYTHON=sys.executable)
    proc = subprocess.run([str(TESTEE)], input=b"".join(_frame(r) for r in requests),
                          capture_output=True, env=env, timeout=120, check=False)
    out, responses = proc.stdout, []
    pos = 0
    while pos < len(out):
        (n,) = struct.unpack_from("<I", out, pos)
        responses.append(out[pos + 4:pos + 4 + n])
        pos += 4 + n
    assert pos == len(out)
    return responses, proc.returncode


def _request(payload: str, value, message_type: str, output: int, category: int = 1) -> bytes:
    _google()
    req = google_class("conformance.ConformanceRequest")()
    setattr(req, payload, value)
    req.message_type = message_type
    req.requested_output_format = output
    req.test_category = category
    return req.SerializeToString()


def _response(data: bytes):
    return google_class("conformance.ConformanceResponse").FromString(data)


def test_subprocess_driver() -> None:
    _google()
    g3 = google_class(P3)(optional_int32=-5, optional_string="héllo", repeated_int64=[1, -2, 3])
    g3.map_string_string["k"] = "v"
    g3.optional_nested_message.a = 7
    p3 = g3.SerializeToString(deterministic=True)
    # proto2: a group, an extension (extension_int32 = 42, field 120, after the group as upb writes
    # it) and a number that closed enum NestedEnum lacks (optional_nested_enum = 7, field 21: an
    # unknown field). pbj writes the extension in field-number order (before the group, field 201),
    # as C++ and Java do, and the unknown field last.
    g2 = google_class(P2)(optional_int32=1)
    g2.data.group_int32 = 9
    p2 = g2.SerializeToString(deterministic=True) + bytes([0xC0, 0x07, 0x2A]) + bytes([0xA8, 0x01, 0x07])
    assert google_class(P2).FromString(p2).SerializeToString() == p2  # Google keeps it byte for byte
    json_in = '{"optionalInt32": 3, "repeatedString": ["a", "b"]}'
    responses, status = _run_testee([
        _request("protobuf_payload", p3, P3, 1),
        _request("protobuf_payload", p2, P2, 1),
        _request("protobuf_payload", p3[:-1], P3, 1),
        _request("json_payload", json_in, P3, 2, 2),
        _request("text_payload", "optional_int32: 1", P3, 4, 5),
        _request("protobuf_payload", b"", "conformance.FailureSet", 1),
    ])
    assert status == 0
    assert len(responses) == 6
    r = [_response(x) for x in responses]
    assert r[0].WhichOneof("result") == "protobuf_payload"
    assert google_class(P3).FromString(r[0].protobuf_payload) == g3
    assert r[1].WhichOneof("result") == "protobuf_payload"
    group = g2.SerializeToString(deterministic=True)[2:]
    assert r[1].protobuf_payload == b"\x08\x01" + bytes([0xC0, 0x07, 0x2A]) + group + bytes([0xA8, 0x01, 0x07])
    assert google_class(P2).FromString(r[1].protobuf_payload) == google_class(P2).FromString(p2)
    assert r[2].WhichOneof("result") == "parse_error"
    assert r[3].WhichOneof("result") == "json_payload"
    assert json.loads(r[3].json_payload) == json.loads(json_format.MessageToJson(
        json_format.Parse(json_in, google_class(P3)()), indent=None))
    assert r[4].WhichOneof("result") == "text_payload"
    assert r[4].text_payload == "optional_int32: 1\n"
    assert r[5].WhichOneof("result") == "protobuf_payload"
    assert r[5].protobuf_payload == b""


def test_subprocess_end_of_input() -> None:
    responses, status = _run_testee([])
    assert (responses, status) == ([], 0)


def test_subprocess_truncated_request() -> None:
    env = dict(os.environ, PBJ_PYTHON=sys.executable)
    proc = subprocess.run([str(TESTEE)], input=struct.pack("<I", 10) + b"\x01", env=env,
                          capture_output=True, timeout=60, check=False)
    assert proc.returncode == 1
    assert proc.stdout == b""
    assert b"input ended inside request 1" in proc.stderr


@pytest.mark.parametrize("name", [
    "Required.Proto2.ProtobufInput.ValidDataScalar.INT32[0].ProtobufOutput",
])
def test_named_vector(name: str) -> None:
    vector = next(v for v in _vectors() if v["name"] == name)
    assert judge(vector) is None


# ---------------------------------------------------------------- proto2 rules, against Google's protobuf
# Inputs are written from the spec ("Encoding"); the expected bytes are Google's deterministic
# re-serialization of its own parse. pbj decodes the same input and both writers must give them.

R2 = "protobuf_test_messages.proto2.TestAllRequiredTypesProto2"


def _pbj(name: str) -> type:
    return conformance.schema()[name]


def _tag(number: int, wire_type: int) -> bytes:
    from pbj import wire
    return wire.encode_varint(number << 3 | wire_type)


def _varint(value: int) -> bytes:
    from pbj import wire
    return wire.encode_varint(value & (1 << 64) - 1)


def _len(number: int, body: bytes) -> bytes:
    return _tag(number, 2) + _varint(len(body)) + body


def _round_trip(name: str, data: bytes):
    """Decode ``data`` with pbj; check both writers against Google's bytes; return the pbj value."""
    _google()
    expected = google_class(name).FromString(data).SerializePartialToString(deterministic=True)
    value = pbj.decode(_pbj(name), data, allow_partial=True)
    assert pbj.encode(value, allow_partial=True) == expected
    assert pbj.encode(value, reverse=True, allow_partial=True) == expected
    return value


CLOSED_ENUM_CASES = {
    # NestedEnum is FOO=0, BAR=1, BAZ=2, NEG=-1: 7 and 9 are not members.
    "singular": _tag(21, 0) + _varint(7),
    "singular-negative": _tag(21, 0) + _varint(-5),
    "singular-last-known": _tag(21, 0) + _varint(1) + _tag(21, 0) + _varint(9),
    "repeated": _tag(51, 0) + _varint(1) + _tag(51, 0) + _varint(9) + _tag(51, 0) + _varint(2),
    "packed": _len(88, _varint(2) + _varint(9) + _varint(-1) + _varint(7)),
    "unpacked-field-packed-input": _len(102, _varint(9) + _varint(0)),
    "map-value": _len(73, _len(1, b"a") + _tag(2, 0) + _varint(9)) + _len(73, _len(1, b"b") + _tag(2, 0) + _varint(1)),
    "oneof": _tag(119, 0) + _varint(9),
    "foreign": _tag(22, 0) + _varint(3) + _tag(52, 0) + _varint(6),
    "in-group": _tag(201, 3) + _tag(202, 0) + _varint(5) + _tag(201, 4) + _tag(21, 0) + _varint(8),
}


@pytest.mark.parametrize("case", sorted(CLOSED_ENUM_CASES))
def test_closed_enum_unknown_number_is_an_unknown_field(case: str) -> None:
    value = _round_trip(P2, CLOSED_ENUM_CASES[case])
    E = _pbj(P2).NestedEnum
    assert E.__pbj_closed__ is True
    for v in (*value.repeated_nested_enum, *value.packed_nested_enum, *value.map_string_nested_enum.values()):
        assert isinstance(v, E)
    assert value.optional_nested_enum in (None, E.BAR)
    assert pbj.unknown_fields(value) != b""


def test_closed_enum_values_match_google() -> None:
    value = _round_trip(P2, CLOSED_ENUM_CASES["repeated"] + CLOSED_ENUM_CASES["map-value"])
    E = _pbj(P2).NestedEnum
    assert value.repeated_nested_enum == (E.BAR, E.BAZ)
    assert dict(value.map_string_nested_enum) == {"b": E.BAR}
    assert pbj.unknown_fields(value) == _tag(51, 0) + _varint(9) + _len(73, _len(1, b"a") + _tag(2, 0) + _varint(9))


def test_proto3_enum_stays_open() -> None:
    value = _round_trip(P3, _tag(21, 0) + _varint(7))
    assert value.optional_nested_enum == 7
    assert pbj.unknown_fields(value) == b""


GROUP_CASES = {
    "group-field": _tag(201, 3) + _tag(202, 0) + _varint(5) + _tag(203, 0) + _varint(6) + _tag(201, 4),
    "group-fields-merge": (_tag(201, 3) + _tag(202, 0) + _varint(5) + _tag(201, 4)
                           + _tag(201, 3) + _tag(203, 0) + _varint(6) + _tag(201, 4)),
    "empty-group": _tag(204, 3) + _tag(204, 4),
    "unknown-group": _tag(1000, 3) + _tag(1, 0) + _varint(1) + _tag(1001, 3) + _tag(1001, 4) + _tag(1000, 4),
    "unknown-field-in-group": _tag(201, 3) + _tag(999, 0) + _varint(3) + _tag(201, 4),
    "extension": _tag(1, 0) + _varint(1) + _tag(120, 0) + _varint(42) + _len(124, b"ext"),
    "extension-group": _tag(121, 3) + _tag(122, 0) + _varint(3) + _tag(121, 4),
    "message-set": _len(500, _tag(1, 3) + _tag(2, 0) + _varint(1547769) + _len(3, _len(25, b"hello"))
                        + _tag(1, 4)),
}


@pytest.mark.parametrize("case", sorted(GROUP_CASES))
def test_groups_extensions_message_set(case: str) -> None:
    _round_trip(P2, GROUP_CASES[case])


def test_group_field_value() -> None:
    value = _round_trip(P2, GROUP_CASES["group-fields-merge"])
    assert (value.data.group_int32, value.data.group_uint32) == (5, 6)


@pytest.mark.parametrize("data", [
    _tag(201, 3) + _tag(202, 0) + _varint(5),                    # no end tag
    _tag(201, 3) + _tag(202, 0) + _varint(5) + _tag(204, 4),     # the end tag of another field
    _tag(1000, 3) + _tag(1000, 5) + b"\0\0\0\0",               # unknown group, no end tag
    _tag(1000, 3) + _tag(1001, 4),                               # unknown group, wrong end tag
    _tag(1000, 4),                                               # an end tag alone
], ids=["no-end", "wrong-end", "unknown-no-end", "unknown-wrong-end", "lone-end"])
def test_bad_groups_fail_like_google(data: bytes) -> None:
    from google.protobuf.message import DecodeError as GoogleDecodeError
    _google()
    with pytest.raises(GoogleDecodeError):
        google_class(P2).FromString(data)
    with pytest.raises(pbj.DecodeError):
        pbj.decode(_pbj(P2), data)


def test_explicit_presence_of_every_singular_proto2_field() -> None:
    _google()
    gdesc = google_class(P2).DESCRIPTOR
    for f in pbj.fields(_pbj(P2)):
        if not f.repeated:
            assert f.optional, f.name
            assert gdesc.fields_by_number[f.number].has_presence, f.name
    value = _round_trip(P2, _tag(1, 0) + _varint(0) + _len(14, b"") + _tag(13, 0) + _varint(0))
    assert (value.optional_int32, value.optional_string, value.optional_bool) == (0, "", False)
    assert value.optional_int64 is None


def test_default_values_match_google() -> None:
    _google()
    gdesc = google_class(P2).DESCRIPTOR
    with_default = [f for f in pbj.fields(_pbj(P2)) if gdesc.fields_by_number[f.number].has_default_value]
    assert len(with_default) == 15
    for f in with_default:
        want = gdesc.fields_by_number[f.number].default_value
        assert f.default == want, f.name
        assert type(f.default) is type(want), f.name


def test_required_fields() -> None:
    _google()
    g = google_class(R2)(required_int32=5, required_string="x")
    g.required_nested_message.a = 1
    expected = g.SerializePartialToString(deterministic=True)
    value = _round_trip(R2, expected)
    assert (value.required_int32, value.required_string, value.required_int64) == (5, "x", None)
    fields_ = {f.name: f for f in pbj.fields(_pbj(R2))}
    assert fields_["required_int32"].required and fields_["required_nested_message"].required
    # Google's testee cannot write a message missing a required field; neither does pbj's.
    ns = conformance.schema()
    req = ns["conformance.ConformanceRequest"](payload=pbj.OneOf("protobuf_payload", expected), message_type=R2,
                                               requested_output_format=1, test_category=1)
    assert conformance.handle(req).result.which == "serialize_error"
    with pytest.raises(Exception, match="missing required fields"):
        google_class(R2).FromString(expected).SerializeToString()


def _values_match_google(examples: int, unknown_fields: bool) -> None:
    """pbj.testing values of the proto2 test messages encode (both writers) as Google writes them."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from pbj.testing import equivalent, values

    _google()
    cases = [(P2, _pbj(P2)), (R2, _pbj(R2))]

    @settings(max_examples=examples, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
    @given(st.data())
    def check(data) -> None:
        name, cls = data.draw(st.sampled_from(cases))
        value = data.draw(values(cls, max_depth=2, unknown_fields=unknown_fields))
        # pbj.testing leaves required message fields unset where it stops recursing
        partial = bool(missing_required(value))
        if partial:
            with pytest.raises(pbj.EncodeError, match="required field"):
                pbj.encode(value)
        ours = pbj.encode(value, allow_partial=True)
        assert pbj.encode(value, reverse=True, allow_partial=True) == ours
        gmsg = google_class(name).FromString(ours)
        expected = gmsg.SerializePartialToString(deterministic=True)
        if ours != expected:  # upb writes map entries in an order of its own: compare the messages
            assert len(ours) == len(expected)
            assert google_class(name).FromString(expected) == gmsg
        assert gmsg.IsInitialized() == (not partial)  # Google agrees on what is missing
        assert equivalent(pbj.decode(cls, expected, allow_partial=True), value)

    check()


def test_values_match_google() -> None:
    _values_match_google(15, unknown_fields=False)


@pytest.mark.slow
def test_values_match_google_long() -> None:
    _values_match_google(300, unknown_fields=False)


@pytest.mark.slow
def test_values_with_unknown_fields_match_google_long() -> None:
    _values_match_google(300, unknown_fields=True)


def _main() -> None:  # pragma: no cover - a developer's tool: python -m tests.test_conformance
    counts, failures = replay()
    for n, why in sorted(failures.items()):
        print(f"{n}\t{why}")
    for cat in sorted(counts):
        print(cat, counts[cat], file=sys.stderr)


if __name__ == "__main__":  # pragma: no cover
    _main()

