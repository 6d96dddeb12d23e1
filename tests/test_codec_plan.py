"""Unit tests of the codec plan and of each emitter on its own (issue 11)."""

from __future__ import annotations

import linecache

import pbj
from pbj import scalars
from pbj.codec import plan as P
from pbj.codec.compiler import emit_batch, reachable
from pbj.codec.emit import Emit
from pbj.codec.forward import emit_forward
from pbj.codec.parse import emit_parse
from pbj.codec.reverse import emit_reverse
from pbj.codec.runtime import HELPERS
from pbj.codec.source import Scope, ident
from tests.codec_golden_classes import Choice, Color, Grouped, Maps, Node, Scalars


def batch_of(cls):
    return P.build_batch(reachable(cls, compiled_stop=False))


def test_plan_of_scalars():
    mp = batch_of(Scalars).messages[0]
    assert mp.cls is Scalars and mp.slots_class is Scalars.__pbj_slots__ and mp.leaf
    by_name = {f.name: f for f in mp.fields}
    assert [f.number for f in mp.fields] == sorted(f.number for f in mp.fields)
    assert all(mp.slots[f.slot] == f.name for f in mp.fields)
    d, s64, color, nums, names = (by_name[n] for n in ("d", "s64", "color", "nums", "names"))
    assert (d.type, d.label, d.tag, d.width, d.default) == (scalars.SCALARS["double"].code, P.IMPLICIT, b"\x09", 8, 0.0)
    assert (s64.label, s64.tag, s64.default) == (P.EXPLICIT, b"\x90\x01", None)
    assert (color.type, color.enum, color.default) == (scalars.ENUM.code, Color, Color.RED)
    assert (nums.label, nums.tag) == (P.PACKED, bytes([0xA2, 0x01]))
    assert (names.label, names.tag) == (P.REPEATED, bytes([0xB2, 0x01]))
    assert by_name["b"].width == 1 and by_name["s"].width == 0
    # packed-capable repeated scalars accept their element tag and a LEN run
    assert (160, nums.idx, P.VALUE) in mp.dispatch          # field 20, VARINT
    assert (162, nums.idx, P.PACKED_RUN) in mp.dispatch     # field 20, LEN
    assert [t for t, _, _ in mp.dispatch] == sorted(t for t, _, _ in mp.dispatch)


def test_plan_of_a_oneof_split_by_a_regular_field():
    batch = batch_of(Choice)
    mp = batch.messages[0]
    assert [(step, [mp.fields[i].name for i in members] if step == P.RUN else mp.fields[i].name)
            for step, i, members in mp.writes] == [
        (P.FIELD, "first"), (P.RUN, ["text"]), (P.FIELD, "middle"), (P.RUN, ["child", "flag"])]
    (pick,) = mp.oneofs
    assert pick.name == "pick" and mp.slots[pick.slot] == "pick"
    child = next(f for f in mp.fields if f.name == "child")
    assert child.label == P.MEMBER and child.oneof == 0 and batch.classes[child.sub] is Node
    assert not mp.leaf


def test_plan_of_maps_and_recursion():
    batch = batch_of(Maps)
    mp = batch.messages[0]
    counts, colors, kids = mp.fields
    assert (counts.label, counts.key, counts.type) == (P.MAP, scalars.SCALARS["string"].code,
                                                       scalars.SCALARS["int64"].code)
    assert colors.enum is Color and kids.type == P.MESSAGE and batch.classes[kids.sub] is Node
    node = batch_of(Node).messages[0]
    assert {batch_of(Node).classes[f.sub] for f in node.fields if f.sub >= 0} == {Node}


def test_plan_of_groups():
    mp = batch_of(Grouped).messages[0]
    one, many, _ = mp.fields
    assert (one.group, one.tag, one.end_tag) == (True, b"\x0b", b"\x0c")
    assert (many.label, many.tag, many.end_tag) == (P.REPEATED, b"\x13", b"\x14")
    assert (11, 0, P.GROUP_START) in mp.dispatch and (19, 1, P.GROUP_START) in mp.dispatch


def test_plan_is_plain_data():
    def walk(x):
        if isinstance(x, tuple):
            for y in x:
                walk(y)
        elif isinstance(x, dict):  # an enum's members by number
            for k, y in x.items():
                assert isinstance(k, int), k
                walk(y)
        else:
            assert x is None or isinstance(x, int | str | bytes | float | type) or isinstance(x, Color), x

    for cls in (Scalars, Choice, Maps, Node, Grouped):
        walk(batch_of(cls))


def test_emitters_have_no_side_effects_and_repeat_themselves():
    before = set(linecache.cache)
    first = emit_batch(reachable(Maps, compiled_stop=False))[3]
    second = emit_batch(reachable(Maps, compiled_stop=False))[3]
    # no codec source registered; other entries are not the emitters' doing: a class's __init__ is
    # generated on its first instance (whichever test makes it first: the file alone failed), and
    # real files' lines are read by other code of the process (hypothesis, pytest-xdist's reports)
    generated = {name for name in set(linecache.cache) - before if name.startswith("<pbj generated codec")}
    assert first == second and not generated, generated


def _standalone(cls):
    """Emit, compile and exec one batch by hand: the emitted source needs nothing but its scope."""
    batch = batch_of(cls)
    scope = Scope(HELPERS)
    stems = [scope.names("size_", "write_", "write_reverse_", "parse_", stem=c.__name__) for c in batch.classes]
    ctx = Emit(batch, scope, stems)
    namespace = scope.values
    for mp in batch.messages:
        for emitter in (emit_forward, emit_reverse, emit_parse):
            exec(compile(emitter(ctx, mp), "<standalone>", "exec"), namespace)
    return namespace, stems[0]


def test_each_emitter_alone():
    ns, stem = _standalone(Choice)
    value = Choice(first=1, pick=pbj.OneOf("child", Node(value=-2)), middle="m")
    expected = pbj.encode(value)
    assert ns[f"size_{stem}"](value) == len(expected)
    parts: list[bytes] = []
    ns[f"write_{stem}"](value, parts.append)
    assert b"".join(parts) == expected
    buf = pbj.ReverseBuffer(8)
    pos = buf.writer_begin(empty=True)
    pos = ns[f"write_reverse_{stem}"](value, buf, pos)
    buf.writer_commit(pos)
    assert buf.to_bytes() == expected
    assert ns[f"parse_{stem}"](expected, 0, len(expected), 100, None) == value


def test_names_are_escaped_and_unique():
    assert ident("M²") == "M_" and ident("ﬁ") == "_" and ident("9lives") == "_9lives" and ident("a.b") == "a_b"
    scope = Scope(HELPERS)
    assert scope.names("size_", "parse_", stem="Card") == "Card"
    assert scope.name("size_Card__owner") == "size_Card__owner"
    assert scope.names("size_", "parse_", stem="Card__owner") == "Card__owner_2"
    assert scope.name("_V") == "_V_2" and scope.name("if") == "if_2"
    assert scope.const(b"\x08", "T") == scope.const(b"\x08", "T") == "T_08"


def _samples():
    node = Node(value=-3, children=[Node(value=1), Node(value=300, parent=Node(value=2))])
    yield Scalars(d=-0.0, f=1.5, i64=-1, u64=2**64 - 1, i32=-(2**31), fx64=7, fx32=8, b=True, s="é" * 200,
                  by=b"\x00" * 130, u32=2**32 - 1, color=Color.GREEN, sf32=-1, sf64=-2, s32=-(2**31), s64=2**63 - 1,
                  nums=[0, 1, 127, 128, 2**31 - 1, -1], doubles=[0.5, -0.0], names=["", "a" * 300])
    for v in (0, 1, 127, 128, 16383, 16384, 2**21 - 1, 2**21, 2**28 - 1, 2**28, 2**35 - 1, 2**35, 2**42 - 1, 2**42,
              2**63 - 1, -1):
        yield Scalars(i64=v, u64=abs(v), s64=v, s32=max(min(v, 2**31 - 1), -(2**31)))
    yield Choice(first=1, pick=pbj.OneOf("child", node), middle="m")
    yield Maps(counts={"a": 1, "b": 2**40}, colors={3: Color.GREEN}, kids={True: node, False: Node()})
    yield Grouped(one=node, many=[node, Node()], x=5)


def test_the_one_pass_writer_and_the_cached_one_agree():
    for value in _samples():
        fresh = pbj.encode(value)                     # one pass, caching sizes
        assert value._pbj_size == len(fresh) == pbj.encoded_size(value)
        assert pbj.encode(value) == fresh             # sizes cached now
        assert pbj.encode(value, reverse=True) == fresh
        assert pbj.decode(type(value), fresh) == value
