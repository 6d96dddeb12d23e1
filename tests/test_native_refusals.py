"""Refused input is explained by the native engine itself: no Python parser runs for the error.

The wire walker's one error exit (``pbj/_native/walk.c``) reads the failing field again by the Python
parser's rules and raises the DecodeError it raises: the same text, path and byte offset. These
tests count the calls of the class's Python parser (``Codec.parse``, which every Python decode of
the class goes through) around refused inputs, on every entry point (``pbj.decode``, pbj.api's
Python function, the one-argument decoder of grpcio), and compare the errors with the Python
parser's own. The differential properties over mutated inputs are in ``test_native_engine.py`` and
``fuzz/native_checks.py`` (``check_same``: refused inputs must give the same error).
"""

from __future__ import annotations

import pytest

import pbj
from fuzz.native_checks import _python_decode, same_error
from pbj import _native, api
from pbj.codec import codec_of

pytestmark = [pytest.mark.once,
              pytest.mark.skipif(not _native.available(), reason="the native engine is not built")]


@pytest.fixture(autouse=True)
def _on_the_native_engine():
    """These tests are about the native engine: they run on it whatever engine the suite runs on."""
    before = pbj.engine()
    pbj.use_engine("native")
    yield
    pbj.use_engine(before)


@pbj.message
class Leaf:
    n: int = pbj.field(1, "int32")
    s: str = pbj.field(2, "string")
    xs: tuple[int, ...] = pbj.field(3, "sint64", repeated=True)


@pbj.message
class Tree:
    leaves: tuple[Leaf, ...] = pbj.field(1, Leaf, repeated=True)
    name: str = pbj.field(2, "string")
    by_key: pbj.FrozenMap = pbj.map_field(3, "string", Leaf)
    first: Leaf | None = pbj.field(4, Leaf)
    wide: int = pbj.field(300, "fixed64")


VALID = pbj.encode(Tree(leaves=(Leaf(n=1, s="a", xs=(1, -2)), Leaf(n=2)), name="tree",
                        by_key=pbj.FrozenMap({"k": Leaf(n=3, s="é")}), first=Leaf(n=4), wide=7))

REFUSED = {
    "junk after the message": VALID + b"\x01\x02\x03",
    "cut inside the last field": VALID[:-3],
    "a sub-message's length past the end": b"\x0a\x09\x08\x01",
    "invalid UTF-8 two levels down": b"\x0a\x04\x12\x02\xc3\x28",
    "a varint longer than 10 bytes": b"\x12\x00\x0a\x0c\x18" + b"\xff" * 11,
    "a field cut at a sub-message's end": b"\x0a\x02\x08\x80\x08\x01",
    "a map entry's value cut": b"\x1a\x07\x0a\x01k\x12\x03\x08",
    "a map entry's string value not UTF-8": b"\x1a\x08\x0a\x01k\x12\x03\x12\x01\xff",
    "wire type 7": b"\x0f",
    "field number 0": b"\x12\x00\x00",
    "an end-group tag alone": b"\x0c",
    "a packed run that ends inside its last element": b"\x0a\x04\x1a\x02\x01\x80",
    "a group with no end tag": b"\x0b\x08\x01",
    "nesting past max_depth": b"\x12\x00\x22\x00",
    "a repeated singular sub-message, cut the second time": b"\x22\x02\x08\x01\x22\x02\x08\x80",
    "a two-byte tag cut at the end": b"\x12\x00\xe1",
}


class _Counting:
    """Counts the calls of a class's Python parser (the codec's ``parse``) while it is installed."""

    def __init__(self, cls: type) -> None:
        self.codec = codec_of(cls)
        self.calls = 0

    def __enter__(self) -> _Counting:
        self.parse = self.codec.parse
        parse = self.parse

        def counted(*args):
            self.calls += 1
            return parse(*args)

        self.codec.parse = counted
        return self

    def __exit__(self, *exc: object) -> None:
        self.codec.parse = self.parse


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_input_is_explained_without_the_python_parser(name):
    data = REFUSED[name]
    depth = 0 if "max_depth" in name else pbj.DEFAULT_MAX_DEPTH
    expected = _python_decode(Tree, data, depth)
    assert isinstance(expected, pbj.DecodeError), expected
    decoder = api.decoder_of(Tree)
    with _Counting(Tree) as counting:
        errors = []
        for call in (lambda: pbj.decode(Tree, data, max_depth=depth),
                     lambda: api.python_decode(Tree, data, max_depth=depth),
                     lambda: decoder(data) if depth == pbj.DEFAULT_MAX_DEPTH
                     else pbj.decode(Tree, data, max_depth=depth)):
            with pytest.raises(pbj.DecodeError) as caught:
                call()
            errors.append(caught.value)
    assert counting.calls == 0, "a Python parser ran to explain the error"
    for err in errors:
        assert same_error(err, expected), (err, err.path, err.offset, expected, expected.path, expected.offset)


def test_valid_input_left_to_python_still_is():
    """Nesting past the engine's own 200 levels is valid input it leaves to Python: the parser runs."""
    @pbj.message
    class Deep:
        child: Deep | None = pbj.field(1, "Deep")

    data = b""
    for _ in range(250):
        data = b"\x0a" + pbj.wire.encode_varint(len(data)) + data
    assert _native._engine.decode(codec_of(Deep).native, data, 1000) is None
    with _Counting(Deep) as counting:
        assert pbj.decode(Deep, data, max_depth=1000) is not None
    assert counting.calls == 1


def test_counting_sink_counts_values_per_field():
    """The worked example of a sink (count.c, docs/codec-protobuf.md "How to add a sink"): values per field."""
    value = Tree(leaves=(Leaf(n=1, s="a", xs=(1, -2, 3)), Leaf(n=2)), name="tree",
                 by_key=pbj.FrozenMap({"k": Leaf(n=3), "j": Leaf()}), first=Leaf(s="b"))
    counts = _native._engine.count_values(codec_of(Tree).native, pbj.encode(value), 100)
    assert counts == {(Tree, "leaves"): 2, (Tree, "name"): 1, (Tree, "by_key"): 2, (Tree, "first"): 1,
                      (Leaf, "n"): 3, (Leaf, "s"): 2, (Leaf, "xs"): 3}
    with pytest.raises(pbj.DecodeError) as caught:
        _native._engine.count_values(codec_of(Tree).native, REFUSED["junk after the message"], 100)
    assert same_error(caught.value, _python_decode(Tree, REFUSED["junk after the message"]))
