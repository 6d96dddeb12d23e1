"""Values are checked when a message is built: ``__init__``, ``pbj.replace``, ``attrs.evolve``.

The rules are in :mod:`pbj.schema.values`; every refused value raises
``TypeError`` (wrong type) or ``ValueError`` (out of range) whose text names
the class, the field (with index, key or oneof member) and the value. The
encoder's diagnosis uses the same rules. ``decode`` builds without checks.
"""

from __future__ import annotations

import array
import enum
import inspect

import attrs
import pytest
from google.protobuf import descriptor_pb2

import pbj
from pbj.scalars import SCALARS
from pbj.testing import unchecked


class Color(enum.IntEnum):
    RED = 0
    GREEN = 1


@pbj.message(full_name="cons.Inner")
class Inner:
    x: int = pbj.field(1, "int32")


@pbj.message(full_name="cons.Other")
class Other:
    x: int = pbj.field(1, "int32")


@pbj.message(full_name="cons.All")
class All:
    int32: int = pbj.field(1, "int32")
    int64: int = pbj.field(2, "int64")
    uint32: int = pbj.field(3, "uint32")
    uint64: int = pbj.field(4, "uint64")
    sint32: int = pbj.field(5, "sint32")
    sint64: int = pbj.field(6, "sint64")
    fixed32: int = pbj.field(7, "fixed32")
    fixed64: int = pbj.field(8, "fixed64")
    sfixed32: int = pbj.field(9, "sfixed32")
    sfixed64: int = pbj.field(10, "sfixed64")
    double: float = pbj.field(11, "double")
    float_: float = pbj.field(12, "float", name="float")
    bool_: bool = pbj.field(13, "bool", name="bool")
    string: str = pbj.field(14, "string")
    bytes_: bytes = pbj.field(15, "bytes", name="bytes")
    color: Color = pbj.field(16, Color)
    inner: Inner | None = pbj.field(17, Inner)
    maybe: int | None = pbj.field(18, "int32", optional=True)
    tags: tuple[str, ...] = pbj.field(19, "string", repeated=True)
    nums: tuple[int, ...] = pbj.field(20, "uint32", repeated=True)
    inners: tuple[Inner, ...] = pbj.field(21, Inner, repeated=True)
    by_id: pbj.FrozenMap = pbj.map_field(22, "int32", Inner)
    counts: pbj.FrozenMap = pbj.map_field(23, "string", "int64")
    pick: pbj.OneOf | None = pbj.oneof(a=(24, "int64"), b=(25, "bytes"), c=(26, Inner))


ATTR = {"float": "float_", "bool": "bool_", "bytes": "bytes_"}
INTEGRAL = sorted(n for n, r in SCALARS.items() if r.range is not None)


def refused(error: type[Exception], text: str, **values) -> None:
    with pytest.raises(error) as info:
        All(**values)
    assert str(info.value) == text
    # pbj.replace and attrs.evolve check the same way
    with pytest.raises(error) as again:
        pbj.replace(All(), **values)
    assert str(again.value) == text
    with pytest.raises(error):
        attrs.evolve(All(), **values)


@pytest.mark.parametrize("kind", INTEGRAL)
def test_integral_range_edges(kind):
    lo, hi = SCALARS[kind].range
    attr = ATTR.get(kind, kind)
    assert getattr(All(**{attr: lo}), attr) == lo and getattr(All(**{attr: hi}), attr) == hi
    refused(ValueError, f"All.{attr}: {hi + 1} is out of range for {kind} [{lo}, {hi}]", **{attr: hi + 1})
    refused(ValueError, f"All.{attr}: {lo - 1} is out of range for {kind} [{lo}, {hi}]", **{attr: lo - 1})


@pytest.mark.parametrize("kind", INTEGRAL)
@pytest.mark.parametrize("value, shown", [("5", "str '5'"), (True, "bool True"), (1.0, "float 1.0"),
                                          (None, None)])
def test_integral_wrong_types(kind, value, shown):
    attr = ATTR.get(kind, kind)
    if value is None:
        refused(TypeError, f"All.{attr}: {kind} field has implicit presence and cannot be None "
                           "(leave it out for its default)", **{attr: None})
    else:
        refused(TypeError, f"All.{attr}: {kind} field needs an int, got {shown}", **{attr: value})


def test_int_subclasses_become_int():
    obj = All(int32=Color.GREEN, uint64=True.__index__())
    assert obj.int32 == 1 and type(obj.int32) is int


def test_floats():
    assert All(double=1).double == 1.0 and type(All(double=1).double) is float
    assert All(float_=float("inf")).float_ == float("inf")
    refused(ValueError, "All.float_: 1e+39 is out of range for float", float_=1e39)
    refused(ValueError, "All.double: int of 332 digits is out of range for double", double=2**1100)
    refused(TypeError, "All.double: double field needs a float, got str '1'", double="1")
    refused(TypeError, "All.float_: float field needs a float, got bool False", float_=False)


def test_bools():
    assert All(bool_=1).bool_ is True and All(bool_=0).bool_ is False
    refused(TypeError, "All.bool_: bool field needs a bool, got str 'no'", bool_="no")
    refused(TypeError, "All.bool_: bool field needs a bool, got int 2", bool_=2)


def test_strings():
    assert All(string="héllo").string == "héllo"
    refused(TypeError, "All.string: string field needs a str, got bytes b'x'", string=b"x")
    refused(ValueError, "All.string: string cannot be encoded as UTF-8: surrogates not allowed (str '\\ud800')",
            string="\ud800")


def test_bytes_likes_become_bytes():
    ints = array.array("i", [1, 2, 3])
    obj = All(bytes_=memoryview(ints))
    assert type(obj.bytes_) is bytes and obj.bytes_ == ints.tobytes() and len(obj.bytes_) == 12
    buf = bytearray(b"abc")
    held = All(bytes_=buf)
    before = pbj.encode(held)
    buf[0:3] = b"xyzw"
    assert held.bytes_ == b"abc" and pbj.encode(held) == before == bytes.fromhex("7a03") + b"abc"
    refused(TypeError, "All.bytes_: bytes field needs bytes, got str 'x'", bytes_="x")


def test_enums():
    assert All(color=1).color is Color.GREEN
    assert All(color=7).color == 7  # open enum: an unknown number is kept
    refused(TypeError, "All.color: enum Color field needs a Color member or an int, got str 'RED'", color="RED")
    refused(ValueError, "All.color: 4294967296 is out of range for enum Color [-2147483648, 2147483647]",
            color=2**32)


def test_messages():
    assert All(inner=Inner(x=1)).inner == Inner(x=1)
    refused(TypeError, "All.inner: message field needs an Inner, got Other Other(x=1)", inner=Other(x=1))
    refused(TypeError, "All.inner: message field needs an Inner, got int 3", inner=3)


def test_message_of_another_load_of_the_same_schema():
    from google.protobuf import descriptor_pb2

    fds = descriptor_pb2.FileDescriptorSet()
    fd = fds.file.add(name="twice.proto", package="twice", syntax="proto3")
    fd.message_type.add(name="Leaf").field.add(name="x", number=1, type=5, label=1)
    outer = fd.message_type.add(name="Outer")
    outer.field.add(name="leaf", number=1, type=11, type_name=".twice.Leaf", label=1)
    first = pbj.load_descriptor_set(fds.SerializeToString())
    second = pbj.load_descriptor_set(fds.SerializeToString())
    with pytest.raises(TypeError) as info:
        first["twice.Outer"](leaf=second["twice.Leaf"](x=1))
    assert str(info.value) == ("Outer.leaf: message field needs a Leaf of this load of the schema, got the "
                               "twice.Leaf of another load of the same schema; build it with the classes of "
                               "one Namespace")


def test_explicit_presence_takes_none():
    assert All(maybe=None).maybe is None and All(maybe=0).maybe == 0


ITERABLE = "an iterable of values such as a tuple, list, set or generator (not a str, bytes or mapping)"


def test_repeated():
    assert All(tags=["a", "b"]).tags == ("a", "b") and All(nums=iter([1, 2])).nums == (1, 2)
    refused(TypeError, f"All.tags: repeated field needs {ITERABLE}, got str 'abc'", tags="abc")
    refused(TypeError, f"All.nums: repeated field needs {ITERABLE}, got bytes b'ab'", nums=b"ab")
    refused(TypeError, f"All.tags: repeated field needs {ITERABLE}, got dict {{'a': 1}}", tags={"a": 1})
    refused(TypeError, f"All.nums: repeated field needs {ITERABLE}, got int 5", nums=5)
    refused(ValueError, "All.nums[1]: -1 is out of range for uint32 [0, 4294967295]", nums=[1, -1])
    refused(TypeError, "All.tags[0]: string field needs a str, got int 1", tags=(1,))
    refused(TypeError, "All.inners[1]: message field needs an Inner, got NoneType None", inners=[Inner(), None])


def test_maps():
    obj = All(by_id={1: Inner(x=2)}, counts={"k": 3})
    assert isinstance(obj.counts, pbj.FrozenMap) and obj.counts == {"k": 3}
    assert All(counts=[("k", 3)]).counts == {"k": 3}
    refused(TypeError, "All.by_id[1]: message field needs an Inner, got NoneType None", by_id={1: None})
    refused(TypeError, "All.by_id['k']: int32 field needs an int, got str 'k'", by_id={"k": Inner()})
    refused(ValueError, "All.counts['k']: 9223372036854775808 is out of range for int64 "
                        "[-9223372036854775808, 9223372036854775807]", counts={"k": 2**63})
    refused(TypeError, "All.counts: map field needs a dict (or a FrozenMap), got list [1]", counts=[1])


def test_oneof_members():
    assert All(pick=pbj.OneOf("b", bytearray(b"x"))).pick == pbj.OneOf("b", b"x")
    assert type(All(pick=pbj.OneOf("b", bytearray(b"x"))).pick.value) is bytes
    refused(TypeError, "All.pick.a: int64 field needs an int, got str 'x'", pick=pbj.OneOf("a", "x"))
    refused(TypeError, "All.pick.c: message field needs an Inner, got Other Other(x=0)", pick=pbj.OneOf("c", Other()))
    refused(TypeError, "All.pick: 'd' is not a member of oneof pick (members: ['a', 'b', 'c'])",
            pick=pbj.OneOf("d", 1))
    refused(TypeError, "All.pick: 'aa' is not a member of oneof pick (members: ['a', 'b', 'c']); did you "
                       "mean 'a'?", pick=pbj.OneOf("aa", 1))
    refused(TypeError, "All.pick: oneof field needs pbj.OneOf(member, value) with member one of ['a', 'b', 'c'], "
                       "got tuple ('a', 1)", pick=("a", 1))
    refused(TypeError, "All.pick.a: a set member needs a value, got None (use None for the whole oneof to leave "
                       "pick unset)", pick=pbj.OneOf("a", None))


def test_unknown_keyword():
    with pytest.raises(TypeError, match="unexpected keyword argument 'nope'"):
        All(nope=1)


def test_decode_builds_without_calling_init(monkeypatch):
    obj = All(int32=5, tags=["a"], inner=Inner(x=1), pick=pbj.OneOf("a", 2))
    data = pbj.encode(obj)
    assert pbj.decode(All, data) == obj  # the first decode compiles the parser (which makes a map's empty value)

    def boom(self, **kwargs):
        raise AssertionError("decode called __init__")

    monkeypatch.setattr(All, "__init__", boom)
    monkeypatch.setattr(Inner, "__init__", boom)
    assert pbj.decode(All, data) == obj


# -------------------------------------------- writers never emit unparseable bytes (issue 14)

@pbj.message(full_name="cons.Wrapper")
class Wrapper:
    sub: Inner | None = pbj.field(1, Inner)
    ok: bool = pbj.field(2, "bool")
    n: int = pbj.field(3, "int32")
    s: str = pbj.field(4, "string")
    d: float = pbj.field(5, "double")
    blob: bytes = pbj.field(6, "bytes")


@pbj.message(full_name="cons.Big")
class Big:
    a: str = pbj.field(1, "string")
    b: str = pbj.field(2, "string")


def test_reproducer_stale_size_of_a_wrong_class_sub_message():
    big = Big(a="x" * 10, b="y" * 10)
    pbj.encoded_size(big)  # its size is cached
    with pytest.raises(TypeError, match=r"^Wrapper.sub: message field needs an Inner, got Big "):
        Wrapper(sub=big)


def test_reproducer_memoryview_length():
    obj = Wrapper(blob=memoryview(array.array("i", [1, 2, 3])))
    data = pbj.encode(obj)
    assert data[:2] == bytes.fromhex("320c") and len(data) == 14
    assert pbj.encode(obj, reverse=True) == data and pbj.decode(Wrapper, data) == obj


def test_reproducer_mutated_bytearray_leaves_no_stale_size():
    buf = bytearray(b"ab")
    outer = All(inners=[Inner()], bytes_=buf)
    first = pbj.encode(outer)
    buf.extend(b"cdef")
    assert pbj.encode(outer) == first == pbj.encode(outer, reverse=True)


@pytest.mark.parametrize("values, error, text", [
    ({"ok": "no"}, TypeError, "Wrapper.ok: bool field needs a bool, got str 'no'"),
    ({"n": None}, TypeError, "Wrapper.n: int32 field has implicit presence and cannot be None "
                             "(leave it out for its default)"),
    ({"s": None}, TypeError, "Wrapper.s: string field has implicit presence and cannot be None "
                             "(leave it out for its default)"),
    ({"n": True}, TypeError, "Wrapper.n: int32 field needs an int, got bool True"),
    ({"d": 2**1100}, ValueError, "Wrapper.d: int of 332 digits is out of range for double"),
])
def test_reproducers_refused_at_construction(values, error, text):
    with pytest.raises(error) as info:
        Wrapper(**values)
    assert str(info.value) == text


# -------------------------------------------- the encoder's diagnosis says what the constructor says

def test_encode_diagnosis_uses_the_same_words():
    with pytest.raises(pbj.EncodeError) as info:
        pbj.encode(Wrapper(sub=unchecked(Inner, x="5")))
    assert info.value.path == ["sub", "x"]
    assert "int32 field needs an int, got str '5'" in str(info.value)
    with pytest.raises(pbj.EncodeError) as info:
        pbj.encode(unchecked(Wrapper, sub=Other()))
    assert info.value.path == ["sub"] and "message field needs an Inner, got Other" in str(info.value)


# -------------------------------------------- the generated constructor's source

def test_constructor_source_is_readable_and_uses_only_pbj_names():
    from pbj.schema.constructor import init_source

    Wrapper()  # the first construction compiles the constructor
    mi = pbj.schema.info(Wrapper)
    source, names = init_source(mi, {a.name: a.default for a in attrs.fields(Wrapper) if a.init}, Wrapper.__pbj_slots__)
    lines = source.splitlines()
    assert lines[0].startswith("def __init__(_pbj_self, *, sub=") and lines[0].endswith(", _pbj_unknown=b''):")
    assert "    # n = 3 (int32)" in lines
    assert "    if n.__class__ is not _pbj_int or not -2147483648 <= n <= 2147483647:" in lines
    assert "    # sub = 1 (Inner)" in lines
    assert all(name.startswith("_pbj") for name in names)
    assert inspect.getsource(Wrapper.__init__) == source
    assert Wrapper.__init__.__code__.co_filename == "<pbj generated init tests.test_construction.Wrapper>"


def test_a_dropped_class_leaves_no_constructor_source_behind():
    import gc
    import linecache

    def declare_and_build() -> str:
        @pbj.message
        class Passing:
            x: int = pbj.field(1, "int32")

        Passing(x=1)
        return Passing.__init__.__code__.co_filename

    filename = declare_and_build()
    gc.collect()
    assert filename.startswith("<pbj generated init ") and filename not in linecache.cache


def test_names_python_would_normalise_get_a_generic_constructor():
    # "ﬁ" (U+FB01) becomes "fi" when Python compiles it (NFKC), but not as a keyword string
    ns = {"__annotations__": {"\ufb01": "int", "x": "int"}, "__module__": __name__,
          "\ufb01": pbj.field(1, "int32"), "x": pbj.field(2, "int32")}
    cls = pbj.message(type("Ligature", (), ns))
    obj = cls(**{"\ufb01": 3, "x": 4})
    assert getattr(obj, "\ufb01") == 3 and obj.x == 4  # noqa: B009 - obj.\ufb01 in source would be read as obj.fi
    assert getattr(cls(), "\ufb01") == 0  # noqa: B009
    with pytest.raises(TypeError) as info:
        cls(**{"\ufb01": "a"})
    assert str(info.value) == "Ligature.\ufb01: int32 field needs an int, got str 'a'"
    with pytest.raises(TypeError, match="unexpected keyword argument 'fi'"):
        cls(fi=1)


def test_a_large_oneof_checks_its_members_through_one_table():
    members = {f"m{i}": (i + 1, Inner) for i in range(9)}
    members["count"] = (20, "uint32")
    members["name"] = (21, "string")
    ns = {"__annotations__": {"pick": "pbj.OneOf | None"}, "__module__": __name__, "pick": pbj.oneof(**members)}
    cls = pbj.message(type("Wide", (), ns))
    assert cls(pick=pbj.OneOf("m8", Inner(x=1))).pick == pbj.OneOf("m8", Inner(x=1))
    assert cls(pick=pbj.OneOf("count", 3)).pick == pbj.OneOf("count", 3)
    assert "_pbj_classes" in inspect.getsource(cls.__init__)
    for value, error, text in [
        (pbj.OneOf("m3", Other()), TypeError, "Wide.pick.m3: message field needs an Inner, got Other Other(x=0)"),
        (pbj.OneOf("count", -1), ValueError, "Wide.pick.count: -1 is out of range for uint32 [0, 4294967295]"),
        (pbj.OneOf("name", b"x"), TypeError, "Wide.pick.name: string field needs a str, got bytes b'x'"),
        (pbj.OneOf("m10", Inner()), TypeError, "Wide.pick: 'm10' is not a member of oneof pick (members: "
                                               "['m0', 'm1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7', 'm8', 'count', "
                                               "'name']); did you mean 'm1'?"),
    ]:
        with pytest.raises(error) as info:
            cls(pick=value)
        assert str(info.value) == text


def test_a_closed_enum_takes_its_members_only():
    """"Enum Behavior": a proto2 enum is closed; a number it does not declare is refused when built
    (found by a newcomer: ``M(e=99)`` was accepted, then printed as text and JSON no parser takes)."""
    fs = descriptor_pb2.FileDescriptorSet()
    f = fs.file.add(name="closed_enum.proto", package="ce", syntax="proto2")
    e = f.enum_type.add(name="E")
    e.value.add(name="A", number=0)
    e.value.add(name="B", number=1)
    f.message_type.add(name="M").field.add(name="e", number=1, label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL,
                                           type=descriptor_pb2.FieldDescriptorProto.TYPE_ENUM, type_name=".ce.E")
    ns = pbj.load_descriptor_set(fs.SerializeToString())
    M, E = ns["ce.M"], ns["ce.E"]
    assert M(e=1).e is E.B
    with pytest.raises(ValueError, match=r"^M\.e: 99 is not a value of closed enum E"):
        M(e=99)
    # decoding keeps a non-member as an unknown field, as before
    assert pbj.unknown_fields(pbj.decode(M, bytes.fromhex("0863"))) == bytes.fromhex("0863")
