"""``pbj.SchemaError`` when a message is declared: it names the class, the field and the value.

The rules are protobuf's ("Language Guide (proto3)": "Assigning Field
Numbers", "Maps", "Oneof") plus pbj's own (annotations that fit the declared
type). Unresolvable forward references are found at first use (encode,
decode, introspection) and are schema errors too.
"""

from __future__ import annotations

import enum

import pytest

import pbj


class Color(enum.IntEnum):
    RED = 0
    GREEN = 1


@pbj.message
class Leaf:
    x: int = pbj.field(1, "int32")


def schema_error(build) -> pbj.SchemaError:
    """Run ``build`` (which declares a class) and return the SchemaError it raises."""
    with pytest.raises(pbj.SchemaError) as info:
        build()
    err = info.value
    assert isinstance(err, pbj.PbjError) and isinstance(err, TypeError)
    return err


def names(err: pbj.SchemaError, cls: str, field: str) -> None:
    """The error names class ``cls`` (its last dotted part) and ``field``, in data and in text."""
    assert err.cls_name is not None and err.cls_name.split(".")[-1] == cls
    assert err.field_name == field
    assert str(err).startswith(f"{err.cls_name}.{field}: ")


# ---------------------------------------------------------------- field numbers

def test_duplicate_field_numbers():
    def build():
        @pbj.message
        class Dup:
            a: int = pbj.field(7, "int32")
            b: str = pbj.field(7, "string")

    err = schema_error(build)
    names(err, "Dup", "b")
    assert "field number 7" in str(err) and "'a'" in str(err)


def test_duplicate_between_field_and_oneof_member():
    def build():
        @pbj.message
        class DupOneof:
            a: int = pbj.field(3, "int32")
            pick: pbj.OneOf | None = pbj.oneof(s=(4, "string"), t=(3, "int64"))

    err = schema_error(build)
    names(err, "DupOneof", "t")
    assert "field number 3" in str(err) and "'a'" in str(err)


def test_duplicate_between_oneof_member_and_later_field():
    def build():
        @pbj.message
        class DupLater:
            pick: pbj.OneOf | None = pbj.oneof(s=(4, "string"))
            b: int = pbj.field(4, "int32")

    err = schema_error(build)
    names(err, "DupLater", "b")
    assert "field number 4" in str(err) and "'s'" in str(err)


def test_duplicate_between_two_oneofs_and_a_map():
    def build():
        @pbj.message
        class DupMap:
            m: pbj.FrozenMap = pbj.map_field(2, "string", "string")
            pick: pbj.OneOf | None = pbj.oneof(s=(2, "string"))

    names(schema_error(build), "DupMap", "s")


@pytest.mark.parametrize(("number", "words"), [
    (0, "outside 1..536870911"),
    (-1, "outside 1..536870911"),
    (2**29, "outside 1..536870911"),
    (19000, "19000-19999"),
    (19500, "19000-19999"),
    (19999, "19000-19999"),
])
def test_bad_field_numbers(number, words):
    def build():
        @pbj.message
        class BadNumber:
            a: int = pbj.field(number, "int32")

    err = schema_error(build)
    names(err, "BadNumber", "a")
    assert str(number) in str(err) and words in str(err)


@pytest.mark.parametrize("number", [1, 18999, 20000, 2**29 - 1])
def test_good_field_numbers(number):
    @pbj.message
    class GoodNumber:
        a: int = pbj.field(number, "int32")

    assert pbj.fields(GoodNumber)[0].number == number
    assert pbj.decode(GoodNumber, pbj.encode(GoodNumber(a=5))).a == 5


def test_bad_oneof_member_number():
    def build():
        @pbj.message
        class BadMember:
            pick: pbj.OneOf | None = pbj.oneof(s=(19001, "string"))

    err = schema_error(build)
    names(err, "BadMember", "s")
    assert "19001" in str(err)


@pytest.mark.parametrize("number", ["1", 1.0, True, None])
def test_field_number_must_be_an_int(number):
    def build():
        @pbj.message
        class NotInt:
            a: int = pbj.field(number, "int32")

    err = schema_error(build)
    names(err, "NotInt", "a")
    assert repr(number) in str(err)


# ---------------------------------------------------------------- map keys

@pytest.mark.parametrize(("key", "shown"), [
    ("float", "'float'"), ("double", "'double'"), ("bytes", "'bytes'"), (Leaf, "Leaf"), (Color, "Color"),
])
def test_illegal_map_key_types(key, shown):
    def build():
        @pbj.message
        class BadKey:
            m: pbj.FrozenMap = pbj.map_field(1, key, "int32")

    err = schema_error(build)
    names(err, "BadKey", "m")
    assert "map key type" in str(err) and shown in str(err)


@pytest.mark.parametrize("key", ["int32", "int64", "uint32", "uint64", "sint32", "sint64", "fixed32",
                                 "fixed64", "sfixed32", "sfixed64", "bool", "string"])
def test_legal_map_key_types(key):
    @pbj.message
    class GoodKey:
        m: pbj.FrozenMap = pbj.map_field(1, key, "int32")

    assert pbj.fields(GoodKey)[0].map_key == key


def test_map_value_cannot_be_a_map():
    def build():
        @pbj.message
        class MapOfMap:
            m: pbj.FrozenMap = pbj.map_field(1, "string", "map")

    names(schema_error(build), "MapOfMap", "m")


# ---------------------------------------------------------------- types and annotations

@pytest.mark.parametrize(("ann", "kwargs", "shown"), [
    (str, dict(type="int32"), "int32"),
    (int, dict(type="string"), "string"),
    (bytes, dict(type="string"), "string"),
    (float, dict(type="bool"), "bool"),
    (int, dict(type="int32", repeated=True), "repeated int32"),
    (str, dict(type="string", repeated=True), "repeated string"),
    (Color, dict(type=Leaf), "Leaf"),
])
def test_annotation_mismatch(ann, kwargs, shown):
    # built with type() so the annotation is the object itself, not a string naming a local
    def build():
        pbj.message(type("BadAnn", (), {"__annotations__": {"a": ann}, "a": pbj.field(1, **kwargs),
                                         "__module__": __name__}))

    err = schema_error(build)
    names(err, "BadAnn", "a")
    assert "annotation" in str(err) and shown in str(err)


def test_annotation_mismatch_as_text():
    def build():
        @pbj.message
        class BadAnnText:
            a: str = pbj.field(1, "int32")

    err = schema_error(build)
    names(err, "BadAnnText", "a")
    assert "does not fit protobuf type int32" in str(err)


def test_repeated_without_tuple_annotation():
    def build():
        @pbj.message
        class BadRepeated:
            a: int = pbj.field(1, "int32", repeated=True)

    err = schema_error(build)
    names(err, "BadRepeated", "a")
    assert "repeated int32" in str(err)


def test_map_annotation_mismatch():
    def build():
        @pbj.message
        class BadMapAnn:
            m: int = pbj.map_field(1, "string", "int32")

    err = schema_error(build)
    names(err, "BadMapAnn", "m")
    assert "map<string, int32>" in str(err)


def test_oneof_annotation_mismatch():
    def build():
        @pbj.message
        class BadOneofAnn:
            pick: int = pbj.oneof(a=(1, "int32"))

    err = schema_error(build)
    names(err, "BadOneofAnn", "pick")
    assert "oneof" in str(err)


@pytest.mark.parametrize("name", ["int33", "str", "message", "enum", "map", "oneof", "uint"])
def test_unknown_scalar_name(name):
    def build():
        @pbj.message
        class BadScalar:
            a: int = pbj.field(1, name)

    err = schema_error(build)
    names(err, "BadScalar", "a")
    assert repr(name) in str(err)


@pytest.mark.parametrize("bad", [int, 3, dict, enum.Enum])
def test_type_that_is_not_a_protobuf_type(bad):
    def build():
        @pbj.message
        class BadType:
            a: int = pbj.field(1, bad)

    names(schema_error(build), "BadType", "a")


def test_annotated_attribute_without_field():
    def build():
        @pbj.message
        class Bare:
            a: int = 3

    names(schema_error(build), "Bare", "a")


def test_repeated_optional_and_packed_misuse():
    def repeated_optional():
        @pbj.message
        class RepOpt:
            a: tuple[int, ...] = pbj.field(1, "int32", repeated=True, optional=True)

    def packed_singular():
        @pbj.message
        class PackedOne:
            a: int = pbj.field(1, "int32", packed=True)

    def packed_strings():
        @pbj.message
        class PackedStr:
            a: tuple[str, ...] = pbj.field(1, "string", repeated=True, packed=True)

    names(schema_error(repeated_optional), "RepOpt", "a")
    names(schema_error(packed_singular), "PackedOne", "a")
    names(schema_error(packed_strings), "PackedStr", "a")


# ---------------------------------------------------------------- oneof members

def test_oneof_member_cannot_be_a_map():
    def build():
        @pbj.message
        class OneofMap:
            pick: pbj.OneOf | None = pbj.oneof(m=(1, "map"))

    err = schema_error(build)
    names(err, "OneofMap", "m")
    assert "map" in str(err)


def test_oneof_member_cannot_be_repeated():
    def build():
        @pbj.message
        class OneofRepeated:
            pick: pbj.OneOf | None = pbj.oneof(r=(1, "int32", {"repeated": True}))

    err = schema_error(build)
    names(err, "OneofRepeated", "pick")
    assert "'r'" in str(err) and "repeated" in str(err)


@pytest.mark.parametrize("spec", [
    lambda: pbj.field(1, "int32", repeated=True),
    lambda: pbj.map_field(1, "string", "string"),
])
def test_oneof_member_given_as_a_field_declaration(spec):
    def build():
        @pbj.message
        class OneofSpec:
            pick: pbj.OneOf | None = pbj.oneof(r=(1, spec()))

    names(schema_error(build), "OneofSpec", "r")


def test_oneof_member_shape():
    def build():
        @pbj.message
        class OneofShape:
            pick: pbj.OneOf | None = pbj.oneof(r=1)

    err = schema_error(build)
    names(err, "OneofShape", "pick")
    assert "'r'" in str(err)


def test_empty_oneof():
    def build():
        @pbj.message
        class OneofEmpty:
            pick: pbj.OneOf | None = pbj.oneof()

    names(schema_error(build), "OneofEmpty", "pick")


# ---------------------------------------------------------------- forward references

def test_forward_reference_by_name_that_never_resolves():
    @pbj.message
    class Dangling:
        other: Missing | None = pbj.field(1, "Missing")  # noqa: F821 - never defined, on purpose

    for use in (lambda: pbj.encode(Dangling()), lambda: pbj.encode(Dangling(), reverse=True),
                lambda: pbj.decode(Dangling, b""), lambda: pbj.fields(Dangling)):
        err = schema_error(use)
        names(err, "Dangling", "other")
        assert "'Missing'" in str(err)


def test_forward_reference_by_callable_that_never_resolves():
    @pbj.message
    class DanglingLambda:
        other: object = pbj.field(1, lambda: Missing)  # noqa: F821 - never defined, on purpose

    err = schema_error(lambda: pbj.decode(DanglingLambda, b""))
    names(err, "DanglingLambda", "other")
    assert "Missing" in str(err)


def test_forward_reference_in_map_value_that_never_resolves():
    @pbj.message
    class DanglingMap:
        m: pbj.FrozenMap = pbj.map_field(1, "string", "Missing")

    err = schema_error(lambda: pbj.encode(DanglingMap()))
    names(err, "DanglingMap", "m")


def test_forward_reference_to_an_enum_is_refused():
    @pbj.message
    class RefEnum:
        c: object = pbj.field(1, lambda: Color)

    err = schema_error(lambda: pbj.encode(RefEnum()))
    names(err, "RefEnum", "c")
    assert "message" in str(err)


def test_forward_reference_that_resolves():
    @pbj.message
    class Node:
        value: int = pbj.field(1, "int32")
        nxt: object = pbj.field(2, lambda: Node)

    data = pbj.encode(Node(value=1, nxt=Node(value=2)))
    assert data == bytes.fromhex("0801 1202 0802")
    assert pbj.encode(Node(value=1, nxt=Node(value=2)), reverse=True) == data
    assert pbj.decode(Node, data).nxt.value == 2
