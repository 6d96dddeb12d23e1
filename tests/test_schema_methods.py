"""pbj.schema.methods: a message class's __eq__, __hash__ and __repr__, compiled on first call."""

from __future__ import annotations

import inspect
import linecache
import math

import attrs
import pytest

import pbj
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
    assert method_source("hash", ("a", "b"), ()) == "def __hash__(self):\n    return hash((_pbj_salt, self.a, self.b, ))\n"
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
