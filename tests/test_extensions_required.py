"""Required fields inside extension values are checked like any other ("Language Guide (proto2)",
"Required"; Google's ``IsInitialized`` walks extensions too), declared by hand and loaded, both
writers, against Google's protobuf."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest
from google.protobuf.message import EncodeError as GoogleEncodeError

import pbj
from tests.oracle import google_class, protoc

PROTOS = Path(__file__).parent / "protos"
MISSING = [["h", "[pbjextreq.one]", "a"], ["h", "[pbjextreq.many]", 1, "a"]]


@cache
def loaded() -> pbj.Namespace:
    return pbj.load_descriptor_set(protoc(["ext_required.proto"], [PROTOS]))


def hand() -> dict:
    @pbj.message(full_name="pbjextreq.Need", syntax="proto2")
    class Need:
        a: int | None = pbj.field(1, "int32", required=True)
        b: int | None = pbj.field(2, "int32", optional=True)

    @pbj.message(full_name="pbjextreq.Host", syntax="proto2", extensions=range(10, 21))
    class Host:
        x: int | None = pbj.field(1, "int32", optional=True)

    @pbj.message(full_name="pbjextreq.Outer", syntax="proto2")
    class Outer:
        h: Host | None = pbj.field(1, Host)

    # encoded once before the extensions exist: the class's "cannot miss a required field"
    # answer is cached, and registering the extensions must take it back
    assert pbj.encode(Outer(h=Host(x=1))) == bytes.fromhex("0a020801")
    one = pbj.extension(Host, 10, Need, name="pbjextreq.one")
    many = pbj.extension(Host, 11, Need, name="pbjextreq.many", repeated=True)
    return {"pbjextreq.Need": Need, "pbjextreq.Host": Host, "pbjextreq.Outer": Outer,
            "pbjextreq.one": one, "pbjextreq.many": many}


def schema(source: str) -> dict:
    if source == "hand":
        return hand()
    ns = loaded()
    names = ["pbjextreq.Need", "pbjextreq.Host", "pbjextreq.Outer"]
    return {**{n: ns[n] for n in names}, "pbjextreq.one": ns.extension("pbjextreq.one"),
            "pbjextreq.many": ns.extension("pbjextreq.many")}


def google_partial():
    loaded()  # compiles the .proto into Google's default pool
    g = google_class("pbjextreq.Outer")()
    pool = g.DESCRIPTOR.file.pool
    g.h.x = 1
    g.h.Extensions[pool.FindExtensionByName("pbjextreq.one")].b = 3
    many = g.h.Extensions[pool.FindExtensionByName("pbjextreq.many")]
    many.add().a = 1
    many.add()
    return g


@pytest.mark.parametrize("source", ["hand", "loaded"])
def test_a_missing_required_field_in_an_extension_is_refused_both_ways(source):
    s = schema(source)
    need, host, outer = s["pbjextreq.Need"], s["pbjextreq.Host"], s["pbjextreq.Outer"]
    msg = outer(h=pbj.with_extensions(host(x=1), {s["pbjextreq.one"]: need(b=3),
                                                  s["pbjextreq.many"]: [need(a=1), need()]}))
    g = google_partial()
    assert not g.IsInitialized()
    with pytest.raises(GoogleEncodeError):
        g.SerializeToString()
    for reverse in (False, True):
        with pytest.raises(pbj.EncodeError) as err:
            pbj.encode(msg, reverse=reverse)
        assert err.value.missing == MISSING
    data = pbj.encode(msg, allow_partial=True)
    assert data == pbj.encode(msg, reverse=True, allow_partial=True)
    back = google_class("pbjextreq.Outer").FromString(data)
    assert back == g and not back.IsInitialized()
    with pytest.raises(pbj.DecodeError) as derr:
        pbj.decode(outer, data)
    assert derr.value.missing == MISSING
    assert pbj.decode(outer, data, allow_partial=True) == msg
    fixed = outer(h=pbj.with_extensions(host(x=1), {s["pbjextreq.one"]: need(a=0, b=3),
                                                    s["pbjextreq.many"]: [need(a=1), need(a=2)]}))
    assert pbj.decode(outer, pbj.encode(fixed)) == fixed


@pytest.mark.parametrize("source", ["hand", "loaded"])
def test_text_and_json_errors_inside_an_extension_name_it_in_the_path(source):
    from google.protobuf import text_format

    s = schema(source)
    outer = s["pbjextreq.Outer"]
    text = "h { x: 1 [pbjextreq.one] { b: 3 } }"
    parsed = text_format.Parse(text, google_class("pbjextreq.Outer")())  # Google reads it partially
    assert not parsed.IsInitialized() and parsed.FindInitializationErrors() == ["h.one.a"]
    with pytest.raises(pbj.TextError) as terr:
        pbj.from_text(outer, text)
    assert terr.value.path == ["h", "[pbjextreq.one]"]
    with pytest.raises(pbj.TextError) as terr:
        pbj.from_text(outer, "h { [pbjextreq.many] { a: 1 } [pbjextreq.many] { b: 2 } }")
    assert terr.value.path == ["h", "[pbjextreq.many]", 1]
    with pytest.raises(pbj.TextError) as terr:
        pbj.from_text(outer, 'h { [pbjextreq.one] { a: "x" } }')
    assert terr.value.path == ["h", "[pbjextreq.one]", "a"]
    with pytest.raises(pbj.JSONError, match=r"\$\.h\.\[pbjextreq\.one\]\.a"):
        pbj.from_json(outer, '{"h": {"[pbjextreq.one]": {"b": 3}}}')
    ok = pbj.from_text(outer, "h { [pbjextreq.one] { a: 1 } }")
    assert pbj.encode(ok) == pbj.encode(ok, reverse=True) == google_class("pbjextreq.Outer").FromString(
        pbj.encode(ok)).SerializeToString()
