"""The pure-Python engine's code of a class is made only when it is needed.

With the native engine in use, compiling a class builds its plan and the engine's own form of
it; the Python source is emitted and compiled (for the class's whole batch, after the batches it
refers to) only when the pure-Python engine has to run: an error to explain, an input the native
engine declines, ``PBJ_ENGINE=python`` / ``pbj.use_engine("python")``, ``pbj.source_of``.
"""

from __future__ import annotations

import linecache

import pytest

import pbj
from pbj import _native
from pbj.codec import codec_of
from pbj.wire import encode_varint

native = pytest.mark.skipif(not _native.available() or pbj.engine() != "native",
                            reason="the native engine is not in use")


def _classes():
    @pbj.message
    class Inner:
        n: int = pbj.field(1, "int32")
        s: str = pbj.field(2, "string")

    @pbj.message
    class Outer:
        inner: Inner | None = pbj.field(1, Inner)
        many: tuple[Inner, ...] = pbj.field(2, Inner, repeated=True)
        tag: str = pbj.field(3, "string")

    return Inner, Outer


@native
def test_native_use_makes_no_python_code():
    """Encode (both writers), decode and encoded_size of valid objects leave the Python code unmade."""
    Inner, Outer = _classes()
    obj = Outer(inner=Inner(n=5, s="x"), many=(Inner(n=1), Inner(n=2)), tag="t")
    data = pbj.encode(obj)
    assert data == pbj.encode(obj, reverse=True)
    assert pbj.decode(Outer, data) == obj and pbj.encoded_size(obj) == len(data)
    for cls in (Inner, Outer):
        assert codec_of(cls).native is not None and not codec_of(cls).has_python_code


@native
def test_an_error_is_explained_by_the_engine_without_python_code():
    """A bad input is explained by the native engine itself (its DecodeError names the path and the
    offset): no Python parser is made for it, for the class or the class it refers to."""
    Inner, Outer = _classes()
    assert pbj.decode(Outer, b"") == Outer()
    with pytest.raises(pbj.DecodeError) as err:
        pbj.decode(Outer, b"\x0a\x05\x08")  # inner: a length past the end
    assert err.value.offset == 0 and err.value.path == ["inner"]
    assert not codec_of(Outer).has_python_code and not codec_of(Inner).has_python_code
    assert "def parse_Outer(" in codec_of(Outer).source  # made on demand (pbj.source_of), for reading
    assert codec_of(Outer).filename in linecache.cache


@native
def test_a_merge_is_the_engines_and_a_decline_makes_the_python_code():
    """A sub-message that occurs twice is merged by the native engine (no Python code made); nesting
    past the engine's own depth is declined and decoded by the Python parser, made then."""
    Inner, Outer = _classes()
    data = pbj.encode(Outer(inner=Inner(n=5))) + pbj.encode(Outer(inner=Inner(s="y")))
    assert pbj.decode(Outer, data) == Outer(inner=Inner(n=5, s="y"))
    assert not codec_of(Outer).has_python_code

    @pbj.message
    class Node:
        child: Node | None = pbj.field(1, "Node")
        n: int = pbj.field(2, "int32")

    deep, data = Node(n=1), b"\x10\x01"
    for _ in range(250):  # past the native engine's 200 levels (written by hand: its writers decline too)
        deep, data = Node(child=deep), b"\x0a" + encode_varint(len(data)) + data
    assert pbj.decode(Node, b"\x10\x01") == Node(n=1)
    assert not codec_of(Node).has_python_code
    assert pbj.decode(Node, data, max_depth=300) == deep
    assert codec_of(Node).has_python_code


def test_source_of_and_the_python_engine_make_it():
    """``pbj.source_of`` and a decode on the pure-Python engine make the code (on either engine)."""
    Inner, Outer = _classes()
    assert "def parse_Inner(" in pbj.source_of(Inner)
    assert codec_of(Inner).has_python_code
    before = pbj.engine()
    pbj.use_engine("python")
    try:
        obj = Outer(inner=Inner(n=1), tag="z")
        assert pbj.decode(Outer, pbj.encode(obj)) == obj
        assert codec_of(Outer).has_python_code
    finally:
        pbj.use_engine(before)
