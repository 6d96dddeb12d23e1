"""The objects from_arrow builds on the native engine: one decode call over all the rows (decode_many).

from_arrow writes each row's encoding from the columns in C and decodes them
all in one call of the engine (``pbj._native._engine.decode_many``): equal
sub-messages are one object, and each object that can never be part of a
reference cycle (every referent atomic or itself untracked, no ``__dict__``)
is left untracked by the cyclic garbage collector, as CPython leaves such
tuples. The messages must equal those of the reference paths (``pbj.decode``
of each row's bytes, the Python column reader), and no untracked object may
refer to an object the collector tracks (the rule that makes untracking safe).
"""

from __future__ import annotations

import gc
import gzip
from importlib import resources

import pytest

import pbj
import pbj.arrow
from pbj import _native
from pbj.arrow.encode import encode_from_arrow, messages_of_encodings
from pbj.codec.compiler import codec_of
from pbj.errors import DecodeError
from tests.test_arrow import ROWS, Colour, Leaf, Row, Tree
from tests.test_arrow_encode import python_messages

NATIVE = pbj.engine() == "native"
native_only = pytest.mark.skipif(not NATIVE, reason="the native engine's decode_many")


def objects(roots: list) -> list:
    """Every object the collector knows that is reachable from ``roots`` (classes and enum members not entered)."""
    seen: dict[int, object] = {}
    stack = list(roots)
    while stack:
        o = stack.pop()
        if id(o) in seen or isinstance(o, type) or (not gc.is_tracked(o) and not _container(o)):
            continue
        seen[id(o)] = o
        if isinstance(o, Colour) or type(o).__module__ == "enum":
            continue
        stack.extend(gc.get_referents(o))
    return list(seen.values())


def _container(o: object) -> bool:
    """An object that may be untracked yet hold references (a message, tuple or map)."""
    return isinstance(o, tuple | dict) or pbj.schema.is_message(type(o))


def untracked_refers_to_tracked(roots: list) -> list:
    """The untracked objects under ``roots`` that refer to a tracked object other than their class."""
    return [o for o in objects(roots) if not gc.is_tracked(o)
            and any(gc.is_tracked(r) and r is not type(o) for r in gc.get_referents(o))]


@native_only
def test_messages_that_can_join_no_cycle_are_untracked():
    trees = [Tree(name="a", kids=(Tree(name="b"), Tree(name="c", best=Tree(name="d")))), Tree()]
    back = pbj.arrow.from_arrow(pbj.arrow.to_arrow(trees), Tree)
    assert back == trees
    assert [gc.is_tracked(t) for t in back] == [False, False]  # strings and Trees all the way down
    assert not gc.is_tracked(back[0].kids)
    rows = pbj.arrow.from_arrow(pbj.arrow.to_arrow(ROWS), Row)
    assert rows == ROWS
    # a Row holds a Colour member (an object the collector tracks): it stays tracked, its Leafs do not
    assert all(gc.is_tracked(r) for r in rows)
    leaves = [leaf for r in rows for leaf in (r.leaf, *r.leaves) if leaf is not None]
    assert leaves and not any(gc.is_tracked(leaf) for leaf in leaves)
    assert untracked_refers_to_tracked(rows) == []


@native_only
def test_decode_many_answers_as_decode_one_payload_at_a_time():
    engine = _native._engine
    plan = codec_of(Row).native
    payloads = [pbj.encode(r) for r in ROWS]
    assert engine.decode_many(plan, payloads, 100) == [pbj.decode(Row, p) for p in payloads]
    assert engine.decode_many(plan, [], 100) == []
    # nesting deeper than the engine's own limit is left to the Python parser: None, then pbj.decode
    deep = Tree(name="x")
    for _ in range(250):
        deep = Tree(best=deep)
    found = engine.decode_many(codec_of(Tree).native, [pbj.encode(Tree()), pbj.encode(deep)], 1000)
    assert found[0] == Tree() and found[1] is None and pbj.decode(Tree, pbj.encode(deep), max_depth=1000) == deep
    with pytest.raises(DecodeError):
        engine.decode_many(plan, [payloads[0], b"\x0a\x05ab"], 100)
    with pytest.raises(ValueError, match="row 7: "):
        messages_of_encodings(Row, [payloads[0], b"\x0a\x05ab"], 6)
    with pytest.raises(TypeError, match=r"payloads\[1\] is bytearray"):
        engine.decode_many(plan, [payloads[0], bytearray(payloads[0])], 100)


def test_leaf_values_are_shared_only_within_a_call():
    leaves = [Leaf(label="same", weight=1.5)] * 3
    back = pbj.arrow.from_arrow(pbj.arrow.to_arrow(leaves), Leaf)
    assert back == leaves and len({id(m) for m in back}) == 3  # rows are their own messages


@pytest.mark.slow
def test_the_block():
    """Every item of the shipped block: from_arrow's messages are pbj.decode's of each row's encoding and the
    Python column reader's (every 24th row); the objects' tracking, counted."""
    from pbj.arrow.blocks import ITEM_TYPE, block_items

    shipped = resources.files("pbj") / "data"
    ns = pbj.load_descriptor_set((shipped / "hapi-v0.55.0.binpb").read_bytes())
    cls = ns[ITEM_TYPE]
    payloads = [bytes(p) for p in block_items(gzip.decompress(
        (shipped / "000000000000000000000000000000497558.blk.gz").read_bytes()))]
    table = pbj.arrow.decode_to_arrow(cls, payloads, unknown_fields="ignore")
    back = pbj.arrow.from_arrow(table, cls)
    assert back == [pbj.decode(cls, e) for e in encode_from_arrow(table, cls)]
    assert back[::24] == python_messages(table.take(list(range(0, len(payloads), 24))), cls)
    if NATIVE:
        assert untracked_refers_to_tracked(back) == []
        found = objects(back)
        tracked = sum(gc.is_tracked(o) for o in found)
        # the block's 2,442 items reach 128,284 distinct objects (messages, tuples, oneofs: equal
        # sub-messages are one object); those that reach an enum member stay tracked
        assert (len(found), tracked) == (128_284, 3_265)
