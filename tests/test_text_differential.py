"""The text format against Google's: its Python ``text_format`` both ways, and C++ ``protoc --decode`` exactly.

For every message of the schemas the loader tests (HAPI v0.55.0, ``pbj-it``,
``test_messages_proto3.proto``: :data:`tests.test_loaded_differential.CASES`),
and of the proto2 and editions conformance messages (groups, closed enums,
extensions, delimited fields), ``pbj.testing.values`` examples ``x``:

* Google parses ``pbj.encode(x)`` and prints it with ``text_format.MessageToString``
  (multi-line, and one line with ``as_utf8``); ``pbj.from_text`` of that text
  gives ``x`` back;
* ``text_format.Parse`` of ``pbj.to_text(x)`` (multi-line, and one line with
  ``utf8``) gives ``x`` back (read back through the binary encoding);

"back" up to what the text format cannot carry: unknown fields (never
parsed) and the sign and payload of a NaN (every NaN is ``nan``).

``test_same_text_as_protoc`` then decodes a batch of examples of every message
of a schema with ``protoc --decode`` (Google's C++ printer, from the protoc
that ``grpcio-tools`` ships) and requires ``pbj.to_text`` of the same bytes
(with unknown fields, ``Any`` not expanded) to be the same text, character
for character.
"""

from __future__ import annotations

import math
import re
import subprocess
import sys
import tempfile
from functools import cache
from pathlib import Path

import pytest
from google.protobuf import descriptor_pb2, text_format
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pbj
from pbj import conformance, wire
from pbj.required import missing_required
from pbj.schema import OneOf, info, is_message
from pbj.testing import values
from tests.oracle import GOOGLE_PROTOS, SCHEMA_SUITES, google_class, protoc, suite_message_names, suite_set
from tests.test_conformance import _google_editions
from tests.test_loaded_differential import CASES, DEFAULT_CASES, SUITES, _run

pytestmark = pytest.mark.once

EXAMPLES = 3
#: Conformance messages with the features the loader suites lack (groups, extensions, delimited fields).
CONFORMANCE = [
    "protobuf_test_messages.proto2.TestAllTypesProto2",
    "protobuf_test_messages.proto2.TestAllRequiredTypesProto2",
    "protobuf_test_messages.editions.TestAllTypesEdition2023",
    "protobuf_test_messages.editions.proto2.TestAllTypesProto2",
]


def same(a, b) -> bool:
    """Equal as the text format carries them: unknown fields ignored, any NaN equal to any NaN."""
    if is_message(a) or is_message(b):
        return type(a) is type(b) and all(same(getattr(a, n), getattr(b, n)) for n in info(type(a)).attr_order)
    if isinstance(a, float) or isinstance(b, float):
        if not (isinstance(a, int | float) and isinstance(b, int | float)):
            return False
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
    if isinstance(a, OneOf) or isinstance(b, OneOf):
        return (isinstance(a, OneOf) and isinstance(b, OneOf) and a.which == b.which
                and same(a.value, b.value))
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(v, b[k]) for k, v in a.items())
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return a == b


def check(cls, gcls, x, extensions=None) -> None:
    """The differential check of one value ``x`` of ``cls`` (Google's class ``gcls``)."""
    g = gcls.FromString(pbj.encode(x, allow_partial=True))
    # The message Google holds (a closed enum's non-member number, which pbj.testing can draw for an
    # editions enum, is an unknown field there): the one both texts must stand for.
    x = pbj.decode(cls, g.SerializePartialToString(deterministic=True), allow_partial=True)
    # pbj.testing leaves proto2 required message fields unset where it stops recursing.
    partial = bool(missing_required(x))
    for options in ({}, {"as_one_line": True, "as_utf8": True}):
        google_text = text_format.MessageToString(g, **options)
        if partial:
            with pytest.raises(pbj.TextError, match="required field"):
                pbj.from_text(cls, google_text, extensions=extensions)
        back = pbj.from_text(cls, google_text, extensions=extensions, allow_partial=partial)
        assert same(back, x), (options, google_text)
    for options in ({}, {"one_line": True, "utf8": True}):
        ours = pbj.to_text(x, extensions=extensions, **options)
        parsed = text_format.Parse(ours, gcls())
        back = pbj.decode(cls, parsed.SerializePartialToString(), allow_partial=True)
        assert same(back, x), (options, ours)


@pytest.mark.parametrize("suite, name", DEFAULT_CASES, ids=[f"{s}:{n}" for s, n in DEFAULT_CASES])
def test_text_matches_google(suite, name):
    _run(suite, name, EXAMPLES, check)


def _conformance_class(name: str) -> tuple[type, pbj.Namespace]:
    _google_editions()
    ns = conformance.schema() if ".editions." not in name else conformance._editions()
    return ns[name], ns


def _examples(cls, count: int, test) -> None:
    """Run ``test(value)`` on ``count`` ``pbj.testing.values`` examples of ``cls``."""

    @settings(max_examples=count, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                     HealthCheck.filter_too_much])
    @given(st.data())
    def run(data):
        test(data.draw(values(cls, max_depth=2)))

    run()


@pytest.mark.parametrize("name", CONFORMANCE)
def test_conformance_messages_match_google(name):
    cls, ns = _conformance_class(name)
    gcls = google_class(name)
    _examples(cls, 3 * EXAMPLES, lambda x: check(cls, gcls, x, ns))


@pytest.mark.slow
@pytest.mark.parametrize("suite, name", CASES, ids=[f"{s}:{n}" for s, n in CASES])
def test_text_matches_google_long(suite, name):
    _run(suite, name, 200, check)


# ---------------------------------------------------------------- C++: protoc --decode, text for text

@cache
def _batch(suite: str, files: tuple[str, ...], include: tuple[str, ...],
           names: tuple[str, ...]) -> tuple[Path, str, pbj.Namespace]:
    """A file ``pbjtext_<suite>.proto`` with ``message Batch { repeated <name> f<i> = i; }`` over ``names``
    (every file imported); returns its path, the Batch's full name and the loaded schema."""
    tmp = Path(tempfile.mkdtemp(prefix="pbj-text-batch-"))
    package = "pbjtext_" + suite.replace("-", "_")
    lines = ['syntax = "proto3";', f"package {package};", *(f'import "{f}";' for f in files), "message Batch {"]
    lines += [f"  repeated .{name} f{i} = {i};" for i, name in enumerate(names, 1)]
    proto = tmp / f"{package}.proto"  # a file name of its own in Google's default pool
    proto.write_text("\n".join([*lines, "}"]) + "\n")
    return proto, f"{package}.Batch", pbj.load_descriptor_set(protoc([proto], [*include, tmp]))


def _protoc_decode(proto: Path, include: list, type_name: str, payload: bytes) -> str:
    import grpc_tools
    builtin = Path(grpc_tools.__file__).parent / "_proto"
    out = subprocess.run([sys.executable, "-m", "grpc_tools.protoc", *(f"-I{d}" for d in [*include, builtin]),
                          f"--decode={type_name}", str(proto)], input=payload, capture_output=True, check=False)
    assert out.returncode == 0, out.stderr.decode()[-2000:]
    return out.stdout.decode("utf-8")


_PROTOC_SUITES = {
    **{suite: (lambda s=suite: [fd.name for fd in descriptor_pb2.FileDescriptorSet.FromString(suite_set(s)).file],
               lambda s=suite: list(SCHEMA_SUITES[s][1]()), lambda s=suite: suite_message_names(s))
       for suite in SUITES},
    # The file names _google_editions gives them in Google's default pool.
    "conformance": (lambda: ["google/protobuf/test_messages_proto2.proto", "editions/test_messages_edition2023.proto",
                             "editions/test_messages_proto2_editions.proto"],
                    lambda: [GOOGLE_PROTOS], lambda: CONFORMANCE),
}
_PER_TYPE = {"hapi": 2, "pbj-it": 5, "proto3": 5, "conformance": 12}


@pytest.mark.parametrize("suite", sorted(_PROTOC_SUITES))
def test_same_text_as_protoc(suite):
    files, include, names = (f() for f in _PROTOC_SUITES[suite])
    proto, batch, ns = _batch(suite, tuple(files), tuple(str(i) for i in include), tuple(names))
    chunks = []
    for i, name in enumerate(names, 1):
        tag = wire.encode_varint(i << 3 | wire.WIRE_LEN)

        def add(value, tag=tag):
            data = pbj.encode(value, allow_partial=True)
            chunks.append(tag + wire.encode_varint(len(data)) + data)

        _examples(ns[name], _PER_TYPE[suite], add)
    payload = b"".join(chunks)
    theirs = _protoc_decode(proto, [*include, proto.parent], batch, payload)
    ours = pbj.to_text(pbj.decode(ns[batch], payload, allow_partial=True), print_unknown_fields=True,
                       expand_any=False, extensions=ns)
    if ours != theirs:
        import difflib
        diff = difflib.unified_diff(theirs.splitlines(), ours.splitlines(), "protoc --decode", "pbj.to_text",
                                    lineterm="", n=3)
        pytest.fail("\n".join(list(diff)[:80]))
    # the batch holds real content: more field lines than messages, not only empty messages ("fN {" and "}")
    fields = [line for line in theirs.splitlines() if not re.fullmatch(r"\s*(f\d+ \{|\})", line)]
    assert len(fields) > len(names)
