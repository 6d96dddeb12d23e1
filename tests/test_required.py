"""proto2 ``required`` fields (protobuf.dev "Language Guide (proto2)", "Required"): :mod:`pbj.required`.

A message missing a required field, at any depth (singular, repeated, map
value, oneof member), is refused by ``pbj.encode`` (both writers),
``encoded_size``, ``write_reverse``, ``decode``, ``to_json`` and
``from_json``, naming every missing path; ``allow_partial=True`` writes and
reads it as Google's ``SerializePartialToString`` / ``ParsePartialFromString``
do, with the same bytes. Hand-declared classes and classes loaded from a
``.proto`` file behave the same.
"""

from __future__ import annotations

import gc
import weakref

import pytest

import pbj
from pbj import required
from pbj.errors import format_path
from tests.oracle import google_class, protoc

PROTO = """
syntax = "proto2";
package req;
message Inner { required int32 a = 1; optional int32 b = 2; }
message Item { required string b = 1; }
message Outer {
  optional Inner inner = 1;
  repeated Item items = 2;
  map<string, Inner> by_name = 3;
  oneof choice { Inner picked = 4; int32 plain = 5; }
  required int32 id = 6;
}
message Free { optional int32 x = 1; repeated Free again = 2; }
"""


@pbj.message
class Inner:
    a: int | None = pbj.field(1, "int32", required=True)
    b: int | None = pbj.field(2, "int32", optional=True)


@pbj.message
class Item:
    b: str | None = pbj.field(1, "string", required=True)


@pbj.message
class Outer:
    inner: Inner | None = pbj.field(1, Inner)
    items: tuple[Item, ...] = pbj.field(2, Item, repeated=True)
    by_name: pbj.FrozenMap[str, Inner] = pbj.map_field(3, "string", Inner)
    choice: pbj.OneOf | None = pbj.oneof(picked=(4, Inner), plain=(5, "int32"))
    id: int | None = pbj.field(6, "int32", required=True)


@pbj.message
class Free:
    x: int | None = pbj.field(1, "int32", optional=True)
    again: tuple[Free, ...] = pbj.field(2, "Free", repeated=True)


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    d = tmp_path_factory.mktemp("req")
    (d / "req.proto").write_text(PROTO)
    protoc([d / "req.proto"], [d])  # Google's classes, the oracle
    return pbj.load_proto([d / "req.proto"], include=[d])


def _classes(kind, loaded):
    if kind == "declared":
        return Outer, Inner, Item
    return loaded["req.Outer"], loaded["req.Inner"], loaded["req.Item"]


def _partial(kind, loaded):
    """An Outer missing id, inner.a, items[1].b, by_name['k'].a and picked.a."""
    outer, inner, item = _classes(kind, loaded)
    return outer(inner=inner(b=1), items=(item(b="x"), item()), by_name=pbj.FrozenMap({"k": inner()}),
                 choice=pbj.OneOf("picked", inner()))


MISSING = ["$.inner.a", "$.items[1].b", "$.by_name['k'].a", "$.choice.picked.a", "$.id"]
KINDS = ["declared", "loaded"]


def _google_partial(loaded):
    g = google_class("req.Outer")()
    g.inner.b = 1
    g.items.add(b="x")
    g.items.add()
    g.by_name["k"].SetInParent()
    g.picked.SetInParent()
    return g


@pytest.mark.parametrize("kind", KINDS)
def test_reaches_required_is_decided_per_class(kind, loaded):
    outer, inner, _ = _classes(kind, loaded)
    assert required.reaches_required(outer) and required.reaches_required(inner)
    free = Free if kind == "declared" else loaded["req.Free"]
    assert not required.reaches_required(free)
    # the entry points' one look-up: the free class names itself, the others do not
    assert getattr(free(), required.FREE, None) is free
    assert getattr(outer(), required.FREE, None) is not outer
    assert required.missing_required(free(again=(free(),))) == []


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("kind", KINDS)
def test_encode_names_every_missing_path(kind, reverse, loaded):
    obj = _partial(kind, loaded)
    with pytest.raises(pbj.EncodeError) as info:
        pbj.encode(obj, reverse=reverse)
    assert [format_path(p) for p in info.value.missing] == MISSING
    assert str(info.value).startswith("required fields not set: " + ", ".join(MISSING))
    with pytest.raises(pbj.EncodeError):
        pbj.encoded_size(obj)
    buf = pbj.ReverseBuffer()
    pbj.write_reverse(Free(x=1), buf)
    before = buf.to_bytes()
    with pytest.raises(pbj.EncodeError):
        pbj.write_reverse(obj, buf)
    assert buf.to_bytes() == before  # nothing added on error


@pytest.mark.parametrize("kind", KINDS)
def test_allow_partial_writes_what_google_writes(kind, loaded):
    obj = _partial(kind, loaded)
    expected = _google_partial(loaded).SerializePartialToString(deterministic=True)
    assert pbj.encode(obj, allow_partial=True) == expected
    assert pbj.encode(obj, reverse=True, allow_partial=True) == expected
    assert pbj.encoded_size(obj, allow_partial=True) == len(expected)
    buf = pbj.ReverseBuffer()
    assert pbj.write_reverse(obj, buf, allow_partial=True) == len(expected)
    assert buf.to_bytes() == expected
    # Google refuses the full serialization too
    with pytest.raises(Exception, match="missing required fields"):
        _google_partial(loaded).SerializeToString()


@pytest.mark.parametrize("kind", KINDS)
def test_decode_refuses_missing_required_unless_partial(kind, loaded):
    outer, inner, item = _classes(kind, loaded)
    data = _google_partial(loaded).SerializePartialToString(deterministic=True)
    with pytest.raises(pbj.DecodeError) as info:
        pbj.decode(outer, data)
    assert [format_path(p) for p in info.value.missing] == MISSING
    assert "required fields not set: $.inner.a" in str(info.value)
    value = pbj.decode(outer, data, allow_partial=True)
    assert value == _partial(kind, loaded)
    assert pbj.encode(value, allow_partial=True) == data
    # complete input decodes without the option
    full = pbj.replace(value, id=7, inner=inner(a=1), items=(item(b="x"),), by_name=pbj.FrozenMap(),
                       choice=pbj.OneOf("plain", 3))
    raw = pbj.encode(full)
    assert raw == pbj.encode(full, reverse=True)
    g = google_class("req.Outer").FromString(raw)
    assert g.IsInitialized()
    assert g.SerializeToString(deterministic=True) == raw
    assert pbj.decode(outer, raw) == full


@pytest.mark.parametrize("kind", KINDS)
def test_one_missing_field_at_the_top(kind, loaded):
    outer, inner, _ = _classes(kind, loaded)
    with pytest.raises(pbj.EncodeError) as info:
        pbj.encode(outer())
    assert info.value.missing == [["id"]]
    assert str(info.value) == "required field not set: $.id - at `$`"
    with pytest.raises(pbj.DecodeError, match=r"required field not set: \$\.a"):
        pbj.decode(inner, b"\x10\x01")


@pytest.mark.parametrize("kind", KINDS)
def test_json_refuses_missing_required_unless_partial(kind, loaded):
    outer = _classes(kind, loaded)[0]
    obj = _partial(kind, loaded)
    with pytest.raises(pbj.EncodeError) as info:
        pbj.to_json(obj)
    assert [format_path(p) for p in info.value.missing] == MISSING
    with pytest.raises(pbj.EncodeError):
        pbj.to_dict(obj)
    text = pbj.to_json(obj, allow_partial=True)
    assert text == '{"inner":{"b":1},"items":[{"b":"x"},{}],"byName":{"k":{}},"picked":{}}'
    with pytest.raises(pbj.JSONError) as jinfo:
        pbj.from_json(outer, text)
    assert [format_path(p) for p in jinfo.value.missing] == MISSING
    with pytest.raises(pbj.JSONError):
        pbj.from_dict(outer, {"inner": {}})
    assert pbj.from_json(outer, text, allow_partial=True) == obj
    assert pbj.from_json(outer, '{"id": 1}') == outer(id=1)


@pytest.mark.parametrize("kind", KINDS)
def test_text_format_agrees(kind, loaded):
    outer = _classes(kind, loaded)[0]
    obj = _partial(kind, loaded)
    text = pbj.to_text(obj)  # the text format can show an uninitialized message
    with pytest.raises(pbj.TextError, match="required field"):
        pbj.from_text(outer, text)
    assert pbj.from_text(outer, text, allow_partial=True) == obj


def test_the_answer_lives_on_the_class_and_is_not_inherited():
    @pbj.message
    class Once:
        a: int | None = pbj.field(1, "int32", required=True)

    @pbj.message
    class Plain:
        x: int = pbj.field(1, "int32")

    assert required.reaches_required(Once) and not required.reaches_required(Plain)
    assert getattr(Plain, required.FREE) is Plain

    class Sub(Plain):  # inherits the attribute, but not the answer: it names Plain
        __slots__ = ()

    assert getattr(Sub, required.FREE) is not Sub
    ref = weakref.ref(Once)
    del Once
    gc.collect()
    assert ref() is None  # nothing pbj.required keeps holds the class


@pbj.message(full_name="deepreq.N", syntax="proto2")
class _DeepN:
    r: int | None = pbj.field(1, "int32", required=True)
    n: _DeepN | None = pbj.field(2, "_DeepN")


def test_a_message_too_deep_for_the_required_check_is_an_error_not_a_recursion_error():
    m = _DeepN(r=1)
    for _ in range(3000):
        m = _DeepN(r=1, n=m)
    for reverse in (False, True):
        with pytest.raises(pbj.EncodeError, match="nested 3001 levels deep, more than the required-field check"):
            pbj.encode(m, reverse=reverse)
    shallow = _DeepN(r=1, n=_DeepN(r=1, n=_DeepN()))
    data = pbj.encode(shallow, allow_partial=True)
    with pytest.raises(pbj.DecodeError) as err:
        pbj.decode(_DeepN, data)
    assert err.value.missing == [["n", "n", "r"]]


# ------------------------------------------------ the check in C (pbj/_native/required.c)

native_only = pytest.mark.skipif(not pbj._native.available(), reason="the native engine is not built")


def _complete(kind, loaded):
    """An Outer whose required fields are all set, at every depth the walk goes down."""
    outer, inner, item = _classes(kind, loaded)
    return outer(id=1, inner=inner(a=1), items=(item(b="x"), item(b="y")),
                 by_name=pbj.FrozenMap({"k": inner(a=2), "j": inner(a=3)}), choice=pbj.OneOf("picked", inner(a=4)))


def _one_missing(kind, loaded):
    """(path, an Outer missing the required field there and nothing else)."""
    _, inner, item = _classes(kind, loaded)
    full = _complete(kind, loaded)
    yield "$.id", pbj.replace(full, id=None)
    yield "$.inner.a", pbj.replace(full, inner=inner())
    yield "$.items[1].b", pbj.replace(full, items=(item(b="x"), item()))
    yield "$.by_name['j'].a", pbj.replace(full, by_name=pbj.FrozenMap({"k": inner(a=2), "j": inner()}))
    yield "$.choice.picked.a", pbj.replace(full, choice=pbj.OneOf("picked", inner()))


@native_only
@pytest.mark.parametrize("kind", KINDS)
def test_the_native_engine_checks_a_complete_message_in_c(kind, loaded, monkeypatch):
    """pbj.encode (both writers) and pbj.decode of a complete message run no Python walk."""
    outer = _classes(kind, loaded)[0]
    before = pbj.engine()
    pbj.use_engine("native")
    try:
        obj = _complete(kind, loaded)
        data = pbj.encode(obj)
        calls = []
        monkeypatch.setattr(required, "_walk", lambda *a: calls.append(a))
        assert pbj.encode(obj) == data == pbj.encode(obj, reverse=True)
        assert pbj.decode(outer, data) == obj
        assert calls == []
    finally:
        pbj.use_engine(before)


@pytest.mark.parametrize("kind", KINDS)
def test_each_missing_field_is_named_alike_by_both_engines(kind, loaded):
    engines = ["native", "python"] if pbj._native.available() else ["python"]
    outer = _classes(kind, loaded)[0]
    before = pbj.engine()
    try:
        for path, obj in _one_missing(kind, loaded):
            data = pbj.encode(obj, allow_partial=True)
            for engine in engines:
                pbj.use_engine(engine)
                for reverse in (False, True):
                    with pytest.raises(pbj.EncodeError) as info:
                        pbj.encode(obj, reverse=reverse)
                    assert str(info.value) == f"required field not set: {path} - at `$`", engine
                    assert [format_path(p) for p in info.value.missing] == [path]
                with pytest.raises(pbj.DecodeError) as info:
                    pbj.decode(outer, data)
                assert [format_path(p) for p in info.value.missing] == [path]
                assert pbj.decode(outer, data, allow_partial=True) == obj
    finally:
        pbj.use_engine(before)


@native_only
def test_the_native_check_follows_answers_taken_back():
    """An extension that can hold a required field, registered after the check ran in C: the answers
    are taken back (GENERATION moves on), and the next check finds the field missing in it."""
    @pbj.message(full_name="reqgen.Need", syntax="proto2")
    class Need:
        a: int | None = pbj.field(1, "int32", required=True)

    @pbj.message(full_name="reqgen.Host", syntax="proto2", extensions=range(10, 20))
    class Host:
        x: int | None = pbj.field(1, "int32", optional=True)

    @pbj.message(full_name="reqgen.Top", syntax="proto2")
    class Top:
        need: Need | None = pbj.field(1, Need)
        host: Host | None = pbj.field(2, Host)

    before = pbj.engine()
    pbj.use_engine("native")
    try:
        top = Top(need=Need(a=1), host=Host(x=1))
        assert pbj.decode(Top, pbj.encode(top)) == top  # the C check's tables made
        generation = required.GENERATION[0]
        ext = pbj.extension(Host, 10, Need, name="reqgen.need_ext")
        assert required.GENERATION[0] > generation
        bad = Top(need=Need(a=1), host=pbj.with_extensions(Host(x=1), {ext: Need()}))
        with pytest.raises(pbj.EncodeError, match=r"required field not set: \$\.host\.\[reqgen\.need_ext\]\.a"):
            pbj.encode(bad)
        assert pbj.decode(Top, pbj.encode(top)) == top
    finally:
        pbj.use_engine(before)
