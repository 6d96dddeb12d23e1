"""Deep messages and the ``max_depth`` argument: a pbj error naming the depth, or a result; never RecursionError.

See :mod:`pbj.depth`. Messages are built hundreds of levels deep by
construction and by ``pbj.decode`` with a high ``max_depth``; ``repr`` works
at any depth (levels below ``REPR_DEPTH`` print as ``Name(...)``).
"""

from __future__ import annotations

import sys

import pytest

import pbj
from pbj import wire
from pbj.depth import nesting_depth
from pbj.schema.make_class import REPR_DEPTH

#: Levels of a message built past Python's recursion limit (1000). Pyodide's CPython frees a chain of
#: objects recursively in C and WebAssembly's stack ends first (a fatal RangeError: 5,000 levels of
#: plain ``__slots__`` objects crash it, 2,000 do not), so there the chains stop at 1,500.
DEEP = 1500 if sys.platform == "emscripten" else 5000


@pbj.message(full_name="pbjdepth.Node")
class Node:
    """A chain: ``child`` nests, ``v`` marks the innermost."""

    child: Node | None = pbj.field(1, "Node")
    v: int = pbj.field(2, "int32")
    kids: tuple[Node, ...] = pbj.field(3, "Node", repeated=True)


def built(n: int) -> Node:
    """``n`` levels of ``child`` above a leaf holding ``v=7``: ``n + 1`` messages."""
    x = Node(v=7)
    for _ in range(n):
        x = Node(child=x)
    return x


def wire_chain(n: int) -> bytes:
    """The encoding of :func:`built` (n), written here from the inside out (no recursion)."""
    data = b"\x10\x07"
    for _ in range(n):
        data = b"\x0a" + wire.encode_varint(len(data)) + data
    return data


def test_the_wire_chain_is_what_pbj_writes():
    assert wire_chain(5) == pbj.encode(built(5)) == pbj.encode(built(5), reverse=True)


def test_nesting_depth_is_measured_without_recursion():
    assert nesting_depth(Node()) == 1
    assert nesting_depth(Node(kids=(Node(), built(3)))) == 5
    assert nesting_depth(built(DEEP)) == DEEP + 1


PRINTERS = [("pbj.to_text", pbj.to_text), ("pbj.to_dict", pbj.to_dict), ("pbj.to_json", pbj.to_json)]
WRITERS = [("pbj.encode", pbj.encode), ("pbj.encode", lambda o: pbj.encode(o, reverse=True)),
           ("pbj.encoded_size", pbj.encoded_size),
           ("pbj.write_reverse", lambda o: pbj.write_reverse(o, pbj.ReverseBuffer()))]


def test_a_deep_decoded_message_gives_a_pbj_error_naming_the_depth():
    n = 700  # decodes within the recursion limit; too deep for the recursive printers
    obj = pbj.decode(Node, wire_chain(n), max_depth=n + 10)
    for name, fn in PRINTERS:
        with pytest.raises(pbj.EncodeError, match=rf"nested {n + 1} levels deep.*recursion limit") as err:
            fn(obj)
        assert "pbj.to_" in str(err.value), name
    assert pbj.encode(obj) == pbj.encode(obj, reverse=True) == wire_chain(n)


def test_a_deep_built_message_gives_a_pbj_error_naming_the_depth():
    n = min(3000, DEEP)
    obj = built(n)
    for name, fn in PRINTERS + WRITERS:
        with pytest.raises(pbj.EncodeError, match=rf"nested {n + 1} levels deep.*recursion limit") as err:
            fn(obj)
        assert name in str(err.value) or name == "pbj.to_json"


def test_to_text_and_to_json_work_below_the_limit():
    obj = pbj.decode(Node, wire_chain(150), max_depth=200)
    text = pbj.to_text(obj, one_line=True)
    assert text == "child { " * 150 + "v: 7" + " }" * 150
    assert pbj.to_json(obj) == '{"child":' * 150 + '{"v":7}' + "}" * 150


@pytest.mark.parametrize("n", [REPR_DEPTH - 1, REPR_DEPTH, 450, DEEP])
def test_repr_works_at_any_depth(n):
    text = repr(built(n))
    if n < REPR_DEPTH:
        assert text == "Node(child=" * n + "Node(child=None, v=7, kids=())" + ", v=0, kids=())" * n
    else:
        assert text == "Node(child=" * REPR_DEPTH + "Node(...)" + ", v=0, kids=())" * REPR_DEPTH
    assert repr(Node(v=1)) == "Node(child=None, v=1, kids=())"  # the level counter is back at 0


def test_from_text_beyond_the_recursion_limit_is_a_text_error():
    n = 1000
    text = "child { " * n + "v: 7" + " }" * n
    with pytest.raises(pbj.TextError, match=r"nested \d+ levels deep.*recursion limit.*max_depth is 2000"):
        pbj.from_text(Node, text, max_depth=2000)
    with pytest.raises(pbj.TextError, match=r"nested deeper than max_depth \(100\)"):
        pbj.from_text(Node, text)
    assert pbj.from_text(Node, "child { " * 120 + "v: 7" + " }" * 120, max_depth=150) == built(120)


def test_decode_beyond_the_recursion_limit_is_a_decode_error():
    with pytest.raises(pbj.DecodeError, match="too deep"):
        pbj.decode(Node, wire_chain(5000), max_depth=10**6)


@pytest.mark.parametrize("bad, error", [(-1, ValueError), (-100, ValueError), (1.5, TypeError), ("3", TypeError),
                                        (True, TypeError), (None, TypeError), (100.0, TypeError)])
def test_an_invalid_max_depth_is_refused_naming_the_argument(bad, error):
    for fn, name in [(lambda d: pbj.decode(Node, b"", max_depth=d), "decode"),
                     (lambda d: pbj.from_text(Node, "", max_depth=d), "from_text")]:
        with pytest.raises(error, match=rf"^{name}\(\): max_depth must be"):
            fn(bad)


def test_max_depth_zero_accepts_the_top_level_message_only():
    """0 is a limit, not an error: C++'s ``SetRecursionLimit(0)`` means the same."""
    assert pbj.decode(Node, wire_chain(0), max_depth=0) == built(0)
    with pytest.raises(pbj.DecodeError, match="too deep"):
        pbj.decode(Node, wire_chain(1), max_depth=0)
    assert pbj.from_text(Node, "v: 7", max_depth=0) == built(0)
    with pytest.raises(pbj.TextError, match=r"nested deeper than max_depth \(0\)"):
        pbj.from_text(Node, "child { v: 7 }", max_depth=0)
    assert pbj.from_text(Node, "child { v: 7 }", max_depth=1) == built(1)
