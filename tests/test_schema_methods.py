"""pbj.schema.methods: a message class's __eq__, __hash__ and __repr__, compiled on first call;
pbj.schema.make_class: attrs' part of a class, completed on its first use."""

from __future__ import annotations

import copy
import inspect
import linecache
import math
import pickle
import threading
from pathlib import Path

import attrs
import pytest

import pbj
from pbj.schema import methods
from pbj.schema.make_class import complete_attrs
from pbj.schema.methods import method_source


@pbj.message
class Point:
    x: int = pbj.field(1, "int32")
    y: float = pbj.field(2, "double")
    tags: tuple[str, ...] = pbj.field(3, "string", repeated=True)


def test_source_of_each_method() -> None:
    assert method_source("eq", ("a", "b"), ("a",)) == (
        "def __eq__(self, other):\n"
        "    if other.__class__ is not self.__class__:\n"
        "        return NotImplemented\n"
        "    return (\n"
        "        self.a == other.a and\n"
        "        self.b == other.b\n"
        "    )\n")
    assert method_source("eq", (), ()).endswith("    return (\n        True\n    )\n")
    assert method_source("hash", ("a", "b"), ()) == (
        "def __hash__(self):\n    return hash((_pbj_salt, self.a, self.b, ))\n")
    assert "({a={self.a!r}, b={self.b!r}})" not in method_source("repr", (), ("a", "b"))
    assert "(a={self.a!r}, b={self.b!r})'" in method_source("repr", (), ("a", "b"))
    with pytest.raises(ValueError, match="no method kind 'str'"):
        method_source("str", (), ())


def test_compiled_on_first_call_then_installed() -> None:
    @pbj.message
    class Fresh:
        a: int = pbj.field(1, "int32")

    stand_in = Fresh.__dict__["__eq__"]
    assert Fresh(a=1) == Fresh(a=1) and Fresh(a=1) != Fresh(a=2)
    compiled = Fresh.__dict__["__eq__"]
    assert compiled is not stand_in
    assert Fresh(a=3) == Fresh(a=3) and Fresh.__dict__["__eq__"] is compiled  # compiled once
    assert inspect.getsource(compiled).splitlines()[-2].strip() == "self.a == other.a"
    filename = compiled.__code__.co_filename
    assert filename.startswith("<pbj generated eq ") and filename in linecache.cache
    hash_stand_in = Fresh.__dict__["__hash__"]
    assert hash(Fresh(a=1)) == hash(Fresh(a=1))
    assert Fresh.__dict__["__hash__"] is not hash_stand_in


def test_same_meaning_as_attrs() -> None:
    p = Point(x=1, y=2.5, tags=("a",))
    assert repr(p) == "Point(x=1, y=2.5, tags=('a',))"
    assert p == Point(x=1, y=2.5, tags=("a",)) and p != Point(x=1, y=2.5)
    assert p.__eq__(object()) is NotImplemented
    assert hash(p) == hash(Point(x=1, y=2.5, tags=("a",)))
    assert len({p, Point(x=1, y=2.5, tags=("a",)), Point()}) == 2
    nan = Point(y=math.nan)
    assert nan != nan  # fields compare with ==, as attrs' __eq__ (no identity shortcut)
    assert [a.name for a in attrs.fields(Point) if a.eq] == ["x", "y", "tags"]
    assert attrs.evolve(p, x=5) == Point(x=5, y=2.5, tags=("a",))


def test_unknown_fields_not_compared_nor_shown() -> None:
    a = pbj.decode(Point, b"\x08\x01\x20\x07")  # x = 1 and an unknown field 4
    assert pbj.unknown_fields(a) == b"\x20\x07"
    assert a == Point(x=1) and hash(a) == hash(Point(x=1)) and repr(a) == "Point(x=1, y=0.0, tags=())"


def _pending(cls: type) -> bool:
    return "__pbj_attrs_pending__" in cls.__dict__


def test_attrs_completes_a_class_on_its_first_attrs_use_only() -> None:
    @pbj.message
    class Lazy:
        a: int = pbj.field(1, "int32")
        self: str = pbj.field(2, "string")  # a name attrs' own __init__ uses: an alias until completion

    assert _pending(Lazy)
    m = Lazy(a=1, self="x")
    wire = pbj.encode(m)
    assert wire == pbj.encode(m, reverse=True) == b"\x08\x01\x12\x01x"
    assert pbj.decode(Lazy, wire).a == 1
    assert _pending(Lazy)  # construction, encoding and decoding never need attrs
    assert attrs.has(Lazy) and not _pending(Lazy)
    assert [(a.name, a.alias) for a in attrs.fields(Lazy)] == [
        ("a", "a"), ("self", "self"), ("_pbj_unknown", "_pbj_unknown"), ("_pbj_size", "_pbj_size")]
    assert "__attrs_init__" not in Lazy.__dict__ and Lazy.__match_args__ == ()
    assert attrs.evolve(m, self="y") == Lazy(a=1, self="y")
    complete_attrs(Lazy)  # a second time: nothing to do
    assert not _pending(Lazy)


@pytest.mark.parametrize("first", ["setattr", "delattr", "getstate", "pickle", "copy", "fields"])
def test_every_stand_in_completes_then_does_what_attrs_does(first: str) -> None:
    @pbj.message
    class Frozen:
        a: int = pbj.field(1, "int32")

    m = Frozen(a=4)
    if first == "setattr":
        with pytest.raises(attrs.exceptions.FrozenInstanceError):
            m.a = 5  # type: ignore[misc]
    elif first == "delattr":
        with pytest.raises(attrs.exceptions.FrozenInstanceError):
            del m.a  # type: ignore[misc]
    elif first == "getstate":
        assert m.__getstate__() == {"a": 4, "_pbj_unknown": b"", "_pbj_size": -1}  # type: ignore[attr-defined]
    elif first == "pickle":
        Frozen.__qualname__ = Frozen.__name__ = "PickledFrozen"
        globals()["PickledFrozen"] = Frozen  # pickle finds a class by its module and name
        try:
            assert pickle.loads(pickle.dumps(m)) == m
        finally:
            del globals()["PickledFrozen"]
    elif first == "copy":
        assert copy.copy(m) == m and copy.deepcopy(m) == m
    else:
        assert [a.name for a in attrs.fields(Frozen)] == ["a", "_pbj_unknown", "_pbj_size"]
    assert not _pending(Frozen)
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        m.a = 6  # type: ignore[misc]
    assert m.a == 4 and not hasattr(m, "__dict__")


def test_completion_from_many_threads_runs_once() -> None:
    @pbj.message
    class Shared:
        a: int = pbj.field(1, "int32")

    seen: list[tuple] = []
    barrier = threading.Barrier(4)

    def use() -> None:
        barrier.wait()
        seen.append(attrs.fields(Shared))

    threads = [threading.Thread(target=use) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(seen) == 4 and all(s is seen[0] for s in seen)


def test_a_loaded_set_builds_no_attrs_methods_until_used() -> None:
    from pbj.bench.workload import SCHEMA_FILE
    ns = pbj.load_descriptor_set(Path(pbj.__file__).parent / "data" / SCHEMA_FILE)
    loaded = [c for c in ns.messages.values() if c.__module__.startswith("pbj._loaded")]
    assert len(loaded) > 300 and all(map(_pending, loaded))
    account = ns["proto.AccountID"]
    a = pbj.decode(account, b"\x10\x02\x18\x03")
    assert all(map(_pending, loaded))
    assert a == account(realmNum=2, account=pbj.OneOf("accountNum", 3))
    assert repr(a) == "AccountID(shardNum=0, realmNum=2, account=OneOf('accountNum', 3))"
    assert all(map(_pending, loaded))  # ==, hash and repr compile their own methods: attrs is not needed


def test_eq_hash_repr_need_no_attrs_and_agree_with_it() -> None:
    @pbj.message(extensions=[range(100, 200)], syntax="proto2")
    class Ext:
        a: int = pbj.field(1, "int32")
        b: str = pbj.field(2, "string")

    m, same = Ext(a=1, b="x", _pbj_unknown=b"\x18\x01"), Ext(a=1, b="x")
    assert m == same and hash(m) == hash(same) and repr(m) == "Ext(a=1, b='x')" and m != Ext(a=2, b="x")
    assert _pending(Ext)
    assert [a.name for a in attrs.fields(Ext) if a.eq] == ["a", "b", "_pbj_extensions"]  # completes it
    assert [a.name for a in attrs.fields(Ext) if a.repr] == ["a", "b"]


def test_names_python_would_normalise_get_methods_reading_the_slots() -> None:
    name = "\ufb01eld"  # "ﬁeld": NFKC makes it "field", so no compiled code may spell it
    cls = pbj.message(type("Lig", (), {"__annotations__": {name: int}, name: pbj.field(1, "int32")}))
    a, b = cls(**{name: 1}), cls(**{name: 1})
    assert a == b and a != cls(**{name: 2}) and hash(a) == hash(b)
    assert repr(a) == f"Lig({name}=1)"
    assert type(a).__eq__.__code__.co_filename == methods.__file__


def test_classes_of_one_shape_share_compiled_code_under_their_own_file_names(monkeypatch):
    import traceback

    from pbj.schema import generated

    compiled: list[str] = []

    def counting(source, filename, mode):
        compiled.append(source)
        return compile(source, filename, mode)

    monkeypatch.setattr(generated, "compile", counting, raising=False)

    def declare():
        @pbj.message
        class Shape:
            tag: str = pbj.field(1, "string")
            count: int = pbj.field(2, "int32")
        return Shape

    first, second = declare(), declare()
    a, b = first(tag="x", count=1), second(tag="x", count=1)
    assert a == first(tag="x", count=1) and repr(b) == "Shape(tag='x', count=1)"
    assert hash(b) == hash(second(tag="x", count=1)) and a != b  # (two classes)
    assert len(compiled) == len(set(compiled)) == 4  # __init__, __eq__, __repr__, __hash__: once for both
    names = {first.__init__.__code__.co_filename, second.__init__.__code__.co_filename}
    assert len(names) == 2 and all(n.startswith("<pbj generated init ") for n in names)
    with pytest.raises(TypeError, match="count"):
        second(count="many")
    with pytest.raises(TypeError) as err:
        second(count="many")
    frames = [f.filename for f in traceback.extract_tb(err.value.__traceback__)]
    assert second.__init__.__code__.co_filename in frames and first.__init__.__code__.co_filename not in frames
    assert len(generated._CODE) <= generated._CODE_ENTRIES
