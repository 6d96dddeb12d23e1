"""What a decoded message holds in memory: repeated sub-messages shared (pbj/_native/share.c).

Within one native decode call of an input of at least 4096 bytes, a sub-message (LEN field, at most
256 encoded bytes) equal byte for byte to an earlier one of the same class at the same depth is the
same object. These tests count the objects: on the real block, every such repeat is one object,
the values are the Python engine's (which shares nothing), both writers give back the input, and
the depth limit still refuses a repeat that sits too deep. Counts, never times or sizes.

Skipped where the extension is not built (the pure-Python install).
"""

from __future__ import annotations

import collections
import gzip
from importlib import resources

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pbj
import pbj.testing
import pbj.wire
from fuzz import targets as T
from fuzz.native_checks import _encode_python, check_same
from pbj import _native
from pbj.codec import codec_of
from pbj.schema import info, is_message

pytestmark = pytest.mark.skipif(not _native.available(), reason="the native engine is not built")

BLOCK_TYPE = "com.hedera.hapi.block.stream.Block"


@pbj.message(full_name="pbj_memory.Leaf")
class Leaf:
    key: bytes = pbj.field(1, "bytes")
    n: int = pbj.field(2, "int64")


@pbj.message(full_name="pbj_memory.Node")
class Node:
    leaf: Leaf | None = pbj.field(1, "Leaf")
    leaves: tuple[Leaf, ...] = pbj.field(2, "Leaf", repeated=True)
    child: Node | None = pbj.field(3, "Node")
    by_name: pbj.FrozenMap[str, Leaf] = pbj.map_field(4, "string", "Leaf")
    pick: pbj.OneOf | None = pbj.oneof(pick_leaf=(5, "Leaf"), pick_text=(6, "string"))
    kids: tuple[Node, ...] = pbj.field(7, "Node", repeated=True)


@pytest.fixture(scope="module")
def block_cls():
    return pbj.load_descriptor_set(resources.files("pbj").joinpath("data", "hapi-v0.55.0.binpb").read_bytes())[
        BLOCK_TYPE]


@pytest.fixture(scope="module")
def raw() -> bytes:
    return gzip.decompress(resources.files("pbj").joinpath("data", "000000000000000000000000000000497558.blk.gz")
                           .read_bytes())


def _native_decode(cls, data: bytes, max_depth: int = pbj.DEFAULT_MAX_DEPTH):
    return _native._engine.decode(codec_of(cls).native, data, max_depth, True)


def _walk(root, visit) -> None:
    """Call ``visit(message, level)`` for every message below ``root``, once per path (shared ones again)."""
    stack = [(root, 0)]
    while stack:
        o, level = stack.pop()
        if is_message(type(o)):
            if level:
                visit(o, level)
            level += 1
            stack.extend((getattr(o, name), level) for name in info(type(o)).attr_order)
        elif isinstance(o, dict):
            stack.extend((x, level) for x in o.values())
        elif isinstance(o, tuple):  # repeated fields and OneOf
            stack.extend((x, level) for x in o)


def test_block_repeats_are_one_object_each(block_cls, raw):
    # the values are the pure-Python engine's and Google's: tests/test_block.py, on either engine
    native = _native_decode(block_cls, raw)
    # both writers give the input back from the shared objects, sizes fresh and cached
    assert pbj.encode(_native_decode(block_cls, raw), reverse=True) == raw
    assert pbj.encode(native) == raw  # caches every size
    assert pbj.encode(native, reverse=True) == raw
    by_value: dict[tuple, set[int]] = collections.defaultdict(set)
    distinct: set[int] = set()
    counts = collections.Counter()

    def visit(o, level):
        distinct.add(id(o))
        counts["reached"] += 1
        if o._pbj_size <= 256:
            by_value[(type(o), pbj.encode(o), level)].add(id(o))
        else:
            counts["large"] += 1

    _walk(native, visit)
    assert counts["reached"] == 276_582  # sub-messages by every path (the Python engine makes as many objects)
    # a sub-message of at most 256 bytes is one object per (class, bytes, depth); a larger one is its own
    assert len(distinct) == sum(map(len, by_value.values())) + counts["large"]
    # best effort (a full neighbourhood in the table is a miss), in practice every repeat
    assert sum(len(ids) > 1 for ids in by_value.values()) <= len(by_value) // 1000
    assert len(distinct) < counts["reached"] // 3  # the shipped block repeats its keys and IDs


def _leaf(i: int) -> Leaf:
    return Leaf(key=b"k%03d" % (i % 4), n=1000 + i % 4)


def _wide() -> Node:
    leaves = tuple(_leaf(i) for i in range(400))
    return Node(leaf=_leaf(1), leaves=leaves, by_name={"a": _leaf(2), "b": _leaf(2)},
                pick=pbj.OneOf("pick_leaf", _leaf(3)), child=Node(leaves=leaves[:8]))


def test_every_field_shape_shares_and_round_trips():
    value = _wide()
    data = pbj.encode(value)
    assert len(data) >= 4096
    got = _native_decode(Node, data)
    assert got == value
    assert len({id(x) for x in got.leaves}) == 4            # 400 leaves, 4 distinct
    assert got.leaves[1] is got.leaf and got.by_name["a"] is got.by_name["b"] is got.leaves[2]
    assert got.pick.value is got.leaves[3]
    assert got.child.leaves[0] is not got.leaves[0]         # one level deeper: another object
    assert got.child.leaves[0] is got.child.leaves[4]
    assert pbj.encode(got) == pbj.encode(got, reverse=True) == data
    assert all(x._pbj_size == len(pbj.encode(x)) for x in got.leaves)  # one size cached for all


def test_small_input_shares_nothing_by_default():
    value = Node(leaves=(_leaf(0), _leaf(0)))
    got = _native_decode(Node, pbj.encode(value))
    assert got == value and got.leaves[0] is not got.leaves[1]


def test_share_min_reaches_small_inputs():
    before = _native._engine.set_share_min(0)
    try:
        assert before == 4096
        got = _native_decode(Node, pbj.encode(Node(leaves=(_leaf(0), _leaf(0), _leaf(1)))))
        assert got.leaves[0] is got.leaves[1] and got.leaves[2] is not got.leaves[0]
        empty = _native_decode(Node, b"\x12\x00\x12\x00")  # two empty leaves: one empty object
        assert empty.leaves[0] is empty.leaves[1] and empty.leaves[0] == Leaf()
    finally:
        assert _native._engine.set_share_min(before) == 0
    with pytest.raises(ValueError):
        _native._engine.set_share_min(-1)


def _padded(value: Node) -> bytes:
    """``value``'s encoding and an unknown field 15 of 4200 bytes (an input large enough to share)."""
    return pbj.encode(value) + b"\x7a" + pbj.wire.encode_varint(4200) + bytes(4200)


@pytest.mark.parametrize("shallow_first", [False, True])
def test_a_repeat_too_deep_is_still_refused(shallow_first):
    # the same encoded Node at levels 1 and 2 of one input; its leaf at level 3 is past max_depth 2
    inner = Node(leaf=_leaf(0))
    if shallow_first:  # field 3 is on the wire before field 7
        value = Node(child=inner, kids=(Node(kids=(inner,)),))
    else:
        value = Node(child=Node(child=inner), kids=(inner,))
    data = _padded(value)
    assert pbj.encode(inner) in data
    got = _native_decode(Node, data, max_depth=3)
    assert got == pbj.decode(Node, data, max_depth=3) and got._pbj_unknown
    assert _native_decode(Node, data, max_depth=2) is None  # refused: the Python engine raises
    with pytest.raises(pbj.DecodeError):
        pbj.decode(Node, data, max_depth=2)
    with pytest.raises(pbj.DecodeError):
        codec_of(Node).parse(data, 0, len(data), 2, None)
    short = _padded(Node(kids=(inner, inner)))  # the same depth: shared
    got = _native_decode(Node, short, max_depth=2)
    assert got.kids[0] is got.kids[1]


def test_engines_agree_with_sharing_on_small_inputs():
    before = _native._engine.set_share_min(0)
    try:
        value = _wide()
        data = pbj.encode(value)
        for cut in (len(data), len(data) - 1, 300, 57, 9):
            check_same(Node, data[:cut])
        check_same(Node, data + data[:40])  # a repeated singular sub-message: declined, Python merges
    finally:
        _native._engine.set_share_min(before)


@pytest.mark.parametrize("name", ["everything", "maps", "node", "choice", "proto2", "blockitem"])
def test_engines_agree_on_every_target_with_sharing(name):
    target = T.target(name)
    before = _native._engine.set_share_min(0)
    try:
        @settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                         HealthCheck.data_too_large])
        @given(st.lists(pbj.testing.values(target.cls, max_depth=2), min_size=1, max_size=3), st.data())
        def run(values, data):
            blob = b"".join(map(_encode_python, values))  # concatenated: repeats and merges
            check_same(target.cls, blob)
            cut = data.draw(st.integers(0, len(blob)))
            check_same(target.cls, blob[:cut] + blob[cut:][::-1])
        run()
    finally:
        _native._engine.set_share_min(before)
