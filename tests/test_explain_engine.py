"""``pbj.explain_engine``: which engine runs a class, and why (issue 23, "No declined class").

With the native engine built and selected, it must say ``native`` for every message class of
every schema the project ships or tests against: every ``.proto`` under ``../shared/protos``
(HAPI, pbj-it, Google's descriptor.proto, well-known types and test messages, the editions test
messages, the conformance messages), the OpenTelemetry export request's schema, pbj's own
descriptor classes, and the holder classes of every extension those schemas declare. Under the
pure-Python engine it must say ``python`` and why.
"""

from __future__ import annotations

import inspect
from functools import cache

import pytest

import pbj
import pbj.descriptor
from pbj import _native
from pbj.codec import codec_of
from tests.oracle import GOOGLE_PROTOS, protoc, suite_set

SHARED_PROTOS = GOOGLE_PROTOS.parent
GOOGLE_FILES = sorted(str(p.relative_to(GOOGLE_PROTOS))
                      for p in (GOOGLE_PROTOS / "google" / "protobuf").glob("*.proto"))
EDITIONS = SHARED_PROTOS / "google" / "editions"


def _otel_set() -> bytes:
    from pbj.bench import otel
    try:
        return otel.descriptor_set()
    except ImportError:
        pytest.skip("opentelemetry-proto is not installed (the bench extra)")


#: schema name -> its FileDescriptorSet, as protoc writes it
SCHEMAS = {
    "hapi": lambda: suite_set("hapi"),
    "pbj-it": lambda: suite_set("pbj-it"),
    "google-protobuf": lambda: protoc(GOOGLE_FILES, [GOOGLE_PROTOS]),
    # the file names the conformance tests give them (Google's pool refuses one symbol in two files)
    "editions": lambda: protoc(sorted(GOOGLE_PROTOS / "editions" / p.name for p in EDITIONS.glob("*.proto")),
                               [GOOGLE_PROTOS]),
    "conformance": lambda: protoc([GOOGLE_PROTOS / "conformance" / "conformance.proto"], [GOOGLE_PROTOS]),
    "opentelemetry": _otel_set,
}


@cache
def _loaded(name: str) -> pbj.Namespace:
    return pbj.load_descriptor_set(SCHEMAS[name]())


def _expected() -> str:
    return "native" if _native.available() and pbj.engine() == "native" else "python"


def test_every_shared_proto_file_is_in_a_schema():
    """The schemas above cover every .proto file under ../shared/protos."""
    covered: set[str] = set()
    for name in ("hapi", "pbj-it", "google-protobuf", "editions", "conformance"):
        covered.update(f.name for f in _loaded(name).files)
    on_disk = {p.name for p in SHARED_PROTOS.rglob("*.proto")}
    assert on_disk <= {n.rsplit("/", 1)[-1] for n in covered}


@pytest.mark.parametrize("schema", list(SCHEMAS))
def test_every_message_class_runs_natively(schema):
    ns = _loaded(schema)
    classes = list(ns.messages.values()) + [ext.holder for ext in ns.extensions.values()]
    assert classes
    want = _expected()
    wrong = {}
    for cls in classes:
        choice = pbj.explain_engine(cls)
        assert choice.engine in ("native", "python") and choice.reason
        if choice.engine != want:
            wrong[cls.__pbj_info__.full_name] = choice.reason
        if want == "native":
            assert codec_of(cls).native is not None
    assert not wrong, wrong
    if schema == "google-protobuf":  # descriptor.proto's classes have extension ranges: the point of the issue
        assert ns["google.protobuf.FieldOptions"].__pbj_info__.extension_ranges


def test_pbj_s_own_descriptor_classes_run_natively():
    classes = [c for _, c in inspect.getmembers(pbj.descriptor, inspect.isclass) if pbj.is_message(c)]
    assert len(classes) > 20
    for cls in classes:
        assert pbj.explain_engine(cls).engine == _expected(), pbj.explain_engine(cls)


def test_a_protoc_descriptor_set_decodes_and_encodes_in_c():
    """protoc's own FileDescriptorSet of the shared protos: decoded in C to Python's value, same bytes back."""
    from fuzz.native_checks import _python_decode, identical

    data = SCHEMAS["google-protobuf"]()
    cls = pbj.descriptor.FileDescriptorSet
    value = pbj.decode(cls, data)
    if _expected() == "native":
        native = _native._engine.decode(codec_of(cls).native, data, pbj.DEFAULT_MAX_DEPTH)
        assert native is not None
        assert identical(native, _python_decode(cls, data))
        assert _native._engine.encode(codec_of(cls).native, native) == data
    assert pbj.encode(value) == pbj.encode(value, reverse=True) == data


def test_the_reasons_for_python():
    @pbj.message
    class Plain:
        a: int = pbj.field(1, "int32")

    before = pbj.engine()
    try:
        pbj.use_engine("python")
        choice = pbj.explain_engine(Plain)
        assert choice == ("python", choice.reason) and "pure-Python engine is selected" in choice.reason
    finally:
        if _native.available():
            pbj.use_engine(before)
    if _native.available() and before == "native":
        assert pbj.explain_engine(Plain).engine == "native"
    with pytest.raises(TypeError, match="not a pbj message class"):
        pbj.explain_engine(int)


@pytest.mark.skipif(not _native.available(), reason="the native engine is not built")
def test_a_declined_class_and_a_class_reaching_it_say_why(monkeypatch):
    """A plan record the engine does not know (here: it is told it does not know ``declared_default``)
    declines the class, and every class reaching it; explain_engine names the field and the path."""
    monkeypatch.setattr(_native, "_FIELD_PLAN", _native._FIELD_PLAN - {"declared_default"})

    @pbj.message(full_name="explain.Odd", syntax="proto2")
    class Odd:
        s: str | None = pbj.field(1, "string", optional=True, default="x")

    @pbj.message(full_name="explain.Outer", syntax="proto2")
    class Outer:
        odd: Odd | None = pbj.field(2, Odd)

    if pbj.engine() != "native":
        pytest.skip("the pure-Python engine is selected")
    odd, outer = pbj.explain_engine(Odd), pbj.explain_engine(Outer)
    assert odd.engine == outer.engine == "python"
    assert odd.reason == "explain.Odd: field s: the plan has a field record the native engine does not know"
    assert outer.reason.startswith("explain.Outer.odd reaches a class the engine declines: explain.Odd: field s")
    assert pbj.decode(Outer, b"\x12\x03\x0a\x01a") == Outer(odd=Odd(s="a"))  # Python runs it
