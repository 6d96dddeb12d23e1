"""``@pbj.message`` builds classes in time linear in their size, for any field name.

Regressions of issue 11 (schema side): load time was quadratic in a message's
field count; a string type was taken for a scalar name when it was lower-case;
fields named like attrs' own locals (``self``, ``_setattr``, ``attr_dict``,
``_cached_setattr_get``) broke the constructor or the class build.
"""

from __future__ import annotations

import sys
from collections import Counter

import attrs
import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

import pbj
from pbj.schema import OneofInfo

ATTRS_NAMES = ["self", "_setattr", "attr_dict", "_cached_setattr_get", "_config", "_inst_dict", "NOTHING",
               "other", "cls", "int", "str", "None_", "__attr_x"]


def _declare(n: int) -> type:
    ns = {"__annotations__": {f"f{i}": "int" for i in range(n)}, "__module__": __name__}
    ns.update({f"f{i}": pbj.field(i + 1, "int32") for i in range(n)})
    return pbj.message(type(f"Wide{n}", (), ns))


def _work(n: int) -> Counter:
    """Python calls and C calls made to declare an n-field class and build one instance."""
    counts: Counter = Counter()

    def profile(frame, event, arg):
        if event == "call":
            counts["calls"] += 1
        elif event == "c_call":
            counts["c_calls"] += 1
            counts[f"c:{arg.__name__}"] += 1

    sys.setprofile(profile)
    try:
        cls = _declare(n)
        cls(f0=1)
    finally:
        sys.setprofile(None)
    return counts


def test_declaration_work_is_linear_in_the_field_count(monkeypatch):
    from pbj.schema import declare

    calls = []
    real = declare._class_annotations
    monkeypatch.setattr(declare, "_class_annotations", lambda *a, **k: calls.append(a) or real(*a, **k))
    small, large = _work(250), _work(1000)
    # 4x the fields: linear work is about 4x (quadratic would be 16x)
    for kind in ("calls", "c_calls"):
        assert large[kind] < 5 * small[kind], (kind, small[kind], large[kind])
    # the annotations are read once per class, the evaluation scope built once
    assert len(calls) == 2
    assert large["c:vars"] == small["c:vars"] <= 3


def test_lower_case_class_refers_to_itself_by_name():
    @pbj.message
    class node:
        value: int = pbj.field(1, "int32")
        next: node | None = pbj.field(2, "node")

    chain = node(value=1, next=node(value=2))
    data = pbj.encode(chain)
    assert data == bytes.fromhex("0801 1202 0802")
    assert pbj.encode(chain, reverse=True) == data
    assert pbj.decode(node, data) == chain
    assert pbj.fields(node)[1].type is node


def test_lower_case_forward_reference_to_a_later_class():
    @pbj.message
    class holder:
        item: object = pbj.field(1, "leaf_later")

    @pbj.message
    class leaf_later:
        x: int = pbj.field(1, "int32")

    globals()["leaf_later"] = leaf_later  # forward names are looked up in the module
    try:
        assert pbj.encode(holder(item=leaf_later(x=3))) == bytes.fromhex("0a02 0803")
    finally:
        del globals()["leaf_later"]


@pytest.mark.parametrize("name, hint", [("int33", "'int32'"), ("strng", "'string'"), ("uint", "'uint32'")])
def test_scalar_type_typo_names_the_closest_types(name, hint):
    with pytest.raises(pbj.SchemaError) as err:
        @pbj.message
        class Typo:
            a: int = pbj.field(1, name)
    assert f"unknown scalar type {name!r}" in str(err.value) and hint in str(err.value)


def _google_class(fds: descriptor_pb2.FileDescriptorSet, full_name: str):
    pool = descriptor_pool.DescriptorPool()
    for fd in fds.file:
        pool.Add(fd)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(full_name))


def _descriptor_set(names: list[str]) -> descriptor_pb2.FileDescriptorSet:
    fds = descriptor_pb2.FileDescriptorSet()
    fd = fds.file.add(name="names.proto", package="names", syntax="proto3")
    m = fd.message_type.add(name="N")
    F = descriptor_pb2.FieldDescriptorProto
    for i, n in enumerate(names, 1):
        m.field.add(name=n, number=i, type=F.TYPE_INT32 if i % 2 else F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    return fds


def _values(names: list[str]) -> dict:
    return {n: (i if i % 2 else f"v{i}") for i, n in enumerate(names, 1)}


def _check_round_trip(cls: type, values: dict, expected: bytes) -> None:
    obj = cls(**values)
    assert [getattr(obj, n) for n in values] == list(values.values())
    assert pbj.encode(obj) == expected
    assert pbj.encode(obj, reverse=True) == expected
    assert pbj.decode(cls, expected) == obj
    first = next(iter(values))
    changed = pbj.replace(obj, **{first: 99})
    assert getattr(changed, first) == 99 and attrs.evolve(obj, **{first: 99}) == changed
    assert repr(obj).startswith(f"{cls.__name__}(")


@pytest.mark.parametrize("name", ATTRS_NAMES)
def test_attrs_own_names_work_in_a_loaded_schema(name):
    names = [name, "plain"]
    fds = _descriptor_set(names)
    cls = pbj.load_descriptor_set(fds.SerializeToString())["names.N"]
    attr = pbj.fields(cls)[0].name
    values = _values([attr, "plain"])
    google = _google_class(fds, "names.N")(**{name: values[attr], "plain": "v2"})
    _check_round_trip(cls, values, google.SerializeToString(deterministic=True))


def test_all_attrs_own_names_in_one_loaded_message():
    fds = _descriptor_set(ATTRS_NAMES)
    cls = pbj.load_descriptor_set(fds.SerializeToString())["names.N"]
    attrs_ = [f.name for f in pbj.fields(cls)]
    google = _google_class(fds, "names.N")(**_values(ATTRS_NAMES))
    _check_round_trip(cls, _values(attrs_), google.SerializeToString(deterministic=True))


@pytest.mark.parametrize("name", [n for n in ATTRS_NAMES if n.isidentifier() and not n.startswith("__")])
def test_attrs_own_names_work_in_a_declared_class(name):
    ns = {"__annotations__": {name: "int", "plain": "str"}, "__module__": __name__,
          name: pbj.field(1, "int32"), "plain": pbj.field(2, "string")}
    cls = pbj.message(type("Declared", (), ns))
    _check_round_trip(cls, {name: 1, "plain": "v2"}, bytes.fromhex("0801 1202") + b"v2")


def test_oneof_info_has_no_dead_synthetic_flag():
    assert OneofInfo.__slots__ == ("name", "members")
