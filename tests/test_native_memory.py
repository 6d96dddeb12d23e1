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
import enum
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
from tests.native_switches import engine_with

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


def _native_decode(cls, data: bytes, max_depth: int = pbj.DEFAULT_MAX_DEPTH, engine=None):
    try:
        return (engine or _native._engine).decode(codec_of(cls).native, data, max_depth)
    except pbj.DecodeError:
        return None  # refused (tests/test_native_engine.py compares the errors)


def _sharing_all():
    """The engine with every input sharing its repeated sub-messages (PBJ_NATIVE_SHARE_MIN=0)."""
    return engine_with(share_min=0)


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
    small = pbj.encode(Node(leaves=(_leaf(0), _leaf(0), _leaf(1))))
    assert _native_decode(Node, small).leaves[0] is not _native_decode(Node, small).leaves[1]  # 4096 by default
    got = _native_decode(Node, small, engine=_sharing_all())
    assert got.leaves[0] is got.leaves[1] and got.leaves[2] is not got.leaves[0]
    empty = _native_decode(Node, b"\x12\x00\x12\x00", engine=_sharing_all())  # two empty leaves: one object
    assert empty.leaves[0] is empty.leaves[1] and empty.leaves[0] == Leaf()
    assert not hasattr(_native._engine, "set_share_min")  # a switch read at import, not an entry point


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
    value = _wide()
    data = pbj.encode(value)
    for cut in (len(data), len(data) - 1, 300, 57, 9):
        check_same(Node, data[:cut], _sharing_all())
    check_same(Node, data + data[:40], _sharing_all())  # a repeated singular sub-message: merged


@pytest.mark.parametrize("name", ["everything", "maps", "node", "choice", "proto2", "blockitem"])
def test_engines_agree_on_every_target_with_sharing(name):
    target = T.target(name)
    engine = _sharing_all()

    @settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                     HealthCheck.data_too_large])
    @given(st.lists(pbj.testing.values(target.cls, max_depth=2), min_size=1, max_size=3), st.data())
    def run(values, data):
        blob = b"".join(map(_encode_python, values))  # concatenated: repeats and merges
        check_same(target.cls, blob, engine)
        cut = data.draw(st.integers(0, len(blob)))
        check_same(target.cls, blob[:cut] + blob[cut:][::-1], engine)
    run()


# ------------------------------------------------ enums through the engine's own table (read.c, pbj_enum_table)

class Dense(enum.IntEnum):
    NEG = -2
    ZERO = 0
    ONE = 1
    UNO = 1  # an alias: the number gives the first name's member
    FIVE = 5


class Sparse(enum.IntEnum):
    ZERO = 0
    LOW = -(2**31)
    MID = 1000
    FAR = -70000
    HIGH = 2**31 - 1


@pbj.message(full_name="pbj_memory.Enums")
class Enums:
    dense: Dense = pbj.field(1, Dense)
    sparse: Sparse = pbj.field(2, Sparse)
    run: tuple[Dense, ...] = pbj.field(3, Dense, repeated=True)
    sparse_run: tuple[Sparse, ...] = pbj.field(4, Sparse, repeated=True, packed=False)
    by_key: pbj.FrozenMap[int, Sparse] = pbj.map_field(5, "int32", Sparse)
    pick: pbj.OneOf | None = pbj.oneof(pick_dense=(6, Dense), pick_text=(7, "string"))


_NUMBERS = [-(2**31), -70001, -70000, -3, -2, -1, 0, 1, 2, 4, 5, 6, 999, 1000, 2**31 - 2, 2**31 - 1]


def _varint(n: int) -> bytes:
    return pbj.wire.encode_varint(n & (2**64 - 1))


def test_enum_numbers_give_members_or_ints_as_python_does():
    for n in _NUMBERS:
        v = _varint(n)
        data = (b"\x08" + v + b"\x10" + v + b"\x1a" + pbj.wire.encode_varint(len(v)) + v + b"\x20" + v
                + b"\x2a" + pbj.wire.encode_varint(len(v) + 3) + b"\x08\x07\x10" + v + b"\x30" + v)
        got = _native_decode(Enums, data)
        assert got == check_same(Enums, data)
        for value, cls in ((got.dense, Dense), (got.sparse, Sparse), (got.run[0], Dense), (got.sparse_run[0], Sparse),
                           (got.by_key[7], Sparse), (got.pick.value, Dense)):
            assert value == n
            if n in cls._value2member_map_:
                assert value is cls(n) and type(value) is cls  # the member itself, aliases by the first name
            else:
                assert type(value) is int  # an open enum keeps the number
    assert _native_decode(Enums, b"\x08\x01").dense is Dense.ONE
    # the low 32 bits of an over-long varint, as for int32
    assert _native_decode(Enums, b"\x10" + _varint(1000 + 2**32)).sparse is Sparse.MID
    assert _native_decode(Enums, b"\x10" + _varint(2**40 - 70000)).sparse is Sparse.FAR


class Shut(enum.IntEnum):
    A = 0
    B = 40000


Shut.__pbj_closed__ = True  # type: ignore[attr-defined]  # a proto2 enum


@pbj.message(full_name="pbj_memory.Closed", syntax="proto2")
class Closed:
    e: Shut | None = pbj.field(1, Shut, optional=True)
    es: tuple[Shut, ...] = pbj.field(2, Shut, repeated=True)


def test_closed_enum_members_by_table_and_non_members_as_python_keeps_them():
    assert _native_decode(Closed, b"\x08" + _varint(40000) + b"\x10\x00").e is Shut.B
    for n in (1, 39999, 40001, -1):
        data = b"\x08" + _varint(n) + b"\x10" + _varint(n) + b"\x10\x00"
        got = pbj.decode(Closed, data)
        assert got == check_same(Closed, data) == Closed(es=(Shut.A,), _pbj_unknown=data[:-2])


# ------------------------------------------------ maps made by the engine itself (decode.c, new_map)

def test_maps_are_frozen_maps_built_in_the_engine():
    leaf = pbj.encode(Leaf(key=b"x", n=300))
    data = (b"\x22\x07\x0a\x01a\x12\x02\x10\x05"           # "a": Leaf(n=5)
            + b"\x22\x02\x12\x00"                           # no key: "", empty leaf
            + b"\x22" + bytes([5 + len(leaf)]) + b"\x0a\x01b\x12" + bytes([len(leaf)]) + leaf
            + b"\x22\x03\x0a\x01c")                         # no value: the empty Leaf
    got = _native_decode(Node, data)
    assert type(got.by_name) is pbj.FrozenMap
    assert got.by_name == {"a": Leaf(n=5), "": Leaf(), "b": Leaf(key=b"x", n=300), "c": Leaf()}
    assert list(got.by_name) == ["a", "", "b", "c"]
    assert got == check_same(Node, data)
    with pytest.raises(TypeError):
        got.by_name["d"] = Leaf()  # type: ignore[index]
    assert pbj.encode(got) == pbj.encode(got, reverse=True) == pbj.encode(check_same(Node, data))
    empty = _native_decode(Enums, b"\x2a\x00")  # an entry of nothing: key 0, the enum's first member
    assert type(empty.by_key) is pbj.FrozenMap and empty.by_key == {0: Sparse.ZERO}
    assert empty.by_key[0] is Sparse.ZERO
    assert _native_decode(Node, b"").by_name is _native_decode(Enums, b"").by_key  # absent: the shared EMPTY_MAP
