"""pbj.descriptor_writer: the descriptors written from declared classes are read by Google's DescriptorPool,
and Google's classes built from them encode a value to the same bytes as pbj's classes (both writers).

Each file kind is checked: a proto3 package (nested messages, maps, oneofs, ``optional``, unpacked fields,
an enum, a well-known type), a proto2 one (``required``, defaults, a group, a closed enum, extension ranges
and an extension), an editions one (features, and a package mixing syntaxes), and what cannot be described.
"""

from __future__ import annotations

import enum

import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

import pbj
import pbj.testing
from pbj.descriptor_writer import describe
from pbj.schema import info
from pbj.wellknown import Timestamp


class Color(enum.IntEnum):
    COLOR_UNSET = 0
    RED = 1
    CRIMSON = 1  # an alias: allow_alias


@pbj.message(full_name="shop.v1.Money")
class Money:
    units: int = pbj.field(1, "int64")
    nanos: int = pbj.field(2, "int32")


@pbj.message(full_name="shop.v1.Order")
class Order:
    @pbj.message(full_name="shop.v1.Order.Line")
    class Line:
        sku: str = pbj.field(1, "string")
        qty: int = pbj.field(2, "uint32")

    class Status(enum.IntEnum):
        STATUS_UNSET = 0
        PAID = 3

    id: int = pbj.field(1, "uint64")
    lines: tuple[Order.Line, ...] = pbj.field(2, "Order.Line", repeated=True)
    price: Money | None = pbj.field(3, Money)
    when: Timestamp | None = pbj.field(4, Timestamp)
    by_sku: dict[str, Money] = pbj.map_field(5, "string", Money, name="by_sku")
    color: Color = pbj.field(6, Color)
    note: str | None = pbj.field(7, "string", optional=True)
    pay: pbj.OneOf | None = pbj.oneof(card=(8, "string"), cash=(9, Money))
    deltas: tuple[int, ...] = pbj.field(10, "sint32", repeated=True)
    raw: tuple[int, ...] = pbj.field(11, "fixed32", repeated=True, packed=False)
    status: Order.Status = pbj.field(12, Status)
    counts: dict[int, Order.Status] = pbj.map_field(13, "int32", Status, json_name="tally")


SHOP = pbj.service("shop.v1.Shop", pbj.rpc("Put", Order, Money),
                   pbj.rpc("Watch", Money, Order, server_streaming=True))


class Kind(enum.IntEnum):
    KIND_A = 1
    KIND_B = 2


@pbj.message(full_name="legacy.Inner", syntax="proto2")
class Inner:
    x: int | None = pbj.field(1, "int32", optional=True)


@pbj.message(full_name="legacy.Old", syntax="proto2", extensions=range(100, 200))
class Old:
    req: int | None = pbj.field(1, "int32", required=True)
    s: str | None = pbj.field(2, "string", optional=True, default="hi")
    k: Kind | None = pbj.field(3, Kind, optional=True, default=Kind.KIND_B)
    g: Inner | None = pbj.field(4, Inner, group=True)
    rs: tuple[int, ...] = pbj.field(5, "int32", repeated=True)
    b: bytes | None = pbj.field(6, "bytes", optional=True, default=b"\x00a\"")
    f: float | None = pbj.field(7, "float", optional=True, default=float("-inf"))


WEIGHT = pbj.extension(Old, 100, "double", name="legacy.weight")


@pbj.message(full_name="ed.New", edition="2023", features={"field_presence": "IMPLICIT"})
class New:
    a: int = pbj.field(1, "int32")
    b: int | None = pbj.field(2, "int32", features={"field_presence": "EXPLICIT"})
    c: tuple[int, ...] = pbj.field(3, "int32", repeated=True, features={"repeated_field_encoding": "EXPANDED"})
    d: str = pbj.field(4, "string", features={"utf8_validation": "NONE"})
    e: Old | None = pbj.field(5, Old, features={"message_encoding": "DELIMITED"})
    m: dict[str, str] = pbj.map_field(6, "string", "string", features={"utf8_validation": "NONE"})


@pbj.message(full_name="ed.Plain")
class Plain:  # a proto3 class in the package of an editions one: the file is written in editions
    n: New | None = pbj.field(1, New)
    v: int = pbj.field(2, "int32")


def pool_of(files):
    """A Google DescriptorPool holding ``files`` (pbj's descriptors, serialized and parsed by Google)."""
    pool = descriptor_pool.DescriptorPool()
    for fd in files:
        pool.Add(descriptor_pb2.FileDescriptorProto.FromString(pbj.encode(fd)))
    return pool


def same_bytes(pool, value):
    """Google's class of ``type(value)`` reads pbj's bytes and writes them back; pbj reads Google's."""
    cls = type(value)
    google = message_factory.GetMessageClass(pool.FindMessageTypeByName(info(cls).full_name))
    data = pbj.encode(value)
    assert pbj.encode(value, reverse=True) == data
    parsed = google.FromString(data)
    assert parsed.SerializeToString(deterministic=True) == data
    assert pbj.decode(cls, parsed.SerializeToString()) == value
    return parsed


def test_a_proto3_service_and_its_types():
    files = describe(SHOP)
    assert [(f.name, f.syntax, f.dependency) for f in files] == [
        ("google/protobuf/timestamp.proto", "proto3", ()),
        ("shop/v1/declared.proto", "proto3", ("google/protobuf/timestamp.proto",))]
    shop = files[1]
    assert [m.name for m in shop.message_type] == ["Order", "Money"]
    order = shop.message_type[0]
    assert [t.name for t in order.nested_type] == ["Line", "BySkuEntry", "CountsEntry"]
    assert order.nested_type[1].options.map_entry is True
    assert [e.name for e in order.enum_type] == ["Status"] and [e.name for e in shop.enum_type] == ["Color"]
    assert shop.enum_type[0].options.allow_alias is True
    assert [o.name for o in order.oneof_decl] == ["pay", "_note"]  # the synthetic oneof of `optional` last
    pool = pool_of(files)
    svc = pool.FindServiceByName("shop.v1.Shop")
    assert [(m.name, m.input_type.full_name, m.output_type.full_name, m.server_streaming) for m in svc.methods] == [
        ("Put", "shop.v1.Order", "shop.v1.Money", False), ("Watch", "shop.v1.Money", "shop.v1.Order", True)]
    desc = pool.FindMessageTypeByName("shop.v1.Order")
    assert desc.fields_by_name["counts"].json_name == "tally"
    assert desc.fields_by_name["note"].has_presence and not desc.fields_by_name["id"].has_presence
    assert not desc.fields_by_name["raw"].is_packed and desc.fields_by_name["deltas"].is_packed
    value = Order(id=7, lines=[Order.Line(sku="a", qty=2)], price=Money(units=3, nanos=4), when=Timestamp(seconds=5),
                  by_sku={"x": Money(units=1)}, color=Color.RED, note="", pay=pbj.OneOf("cash", Money(units=9)),
                  deltas=[-1, 2], raw=[1, 2], status=Order.Status.PAID, counts={-1: Order.Status.PAID})
    parsed = same_bytes(pool, value)
    assert (parsed.note, parsed.HasField("note"), parsed.WhichOneof("pay"), parsed.counts[-1]) == ("", True, "cash", 3)


def test_a_proto2_package_with_required_defaults_groups_and_an_extension():
    files = describe(Old)
    assert [(f.name, f.syntax) for f in files] == [("legacy/declared.proto", "proto2")]
    old = files[0].message_type[0]
    assert {f.name: f.default_value for f in old.field if f.default_value} == {
        "s": "hi", "k": "KIND_B", "b": '\\000a\\"', "f": "-inf"}
    assert [(f.name, f.extendee, f.number) for f in files[0].extension] == [("weight", ".legacy.Old", 100)]
    pool = pool_of(files)
    google = message_factory.GetMessageClass(pool.FindMessageTypeByName("legacy.Old"))
    empty = google()
    assert (empty.s, empty.k, empty.b, empty.f) == ("hi", 2, b'\x00a"', float("-inf"))
    assert pool.FindMessageTypeByName("legacy.Old").fields_by_name["req"].is_required
    assert pool.FindExtensionByName("legacy.weight").number == 100
    value = pbj.with_extensions(Old(req=1, g=Inner(x=2), rs=[1, 2], k=Kind.KIND_A), {WEIGHT: 0.5})
    same_bytes(pool, value)


def test_editions_features_and_a_package_of_mixed_syntaxes():
    files = describe(Plain)
    assert [(f.name, f.syntax, f.edition) for f in files] == [
        ("legacy/declared.proto", "proto2", None),
        ("ed/declared.proto", "editions", pbj.descriptor.Edition.EDITION_2023)]
    pool = pool_of(files)
    new = pool.FindMessageTypeByName("ed.New")
    assert not new.fields_by_name["a"].has_presence and new.fields_by_name["b"].has_presence
    assert not pool.FindMessageTypeByName("ed.Plain").fields_by_name["v"].has_presence
    assert not new.fields_by_name["c"].is_packed
    value = Plain(n=New(a=1, b=0, c=[1, 2], d="\udcff", e=Old(req=1, g=Inner(x=2)), m={"\udcfe": "b"}), v=0)
    same_bytes(pool, value)


def test_types_a_schema_already_declares_are_imported():
    files = describe(SHOP, known={"shop.v1.Money": "money.proto", "google.protobuf.Timestamp": "ts.proto"})
    assert [(f.name, f.dependency, [m.name for m in f.message_type]) for f in files] == [
        ("shop/v1/declared.proto", ("money.proto", "ts.proto"), ["Order"])]
    assert describe(Money, known={"x": "shop/v1/declared.proto"})[0].name == "shop/v1/declared_1.proto"


def test_a_loaded_service_is_described_as_its_schema_says():
    from tests.grpc_support import SERVICE, load_pbj
    echo = load_pbj()
    files = describe(echo.service(SERVICE))
    pool = pool_of(files)
    method = pool.FindServiceByName(SERVICE).methods_by_name["Unary"]
    assert method.output_type.fields_by_name["at"].message_type.full_name == "google.protobuf.Timestamp"
    Money = echo["pbjtest.common.v1.Money"]
    same_bytes(pool, Money(units=7, currency="EUR"))


@pbj.message(full_name="a.A")
class A:
    b: B | None = pbj.field(1, "B")


@pbj.message(full_name="b.B")
class B:
    a: A | None = pbj.field(1, A)


class Red(enum.IntEnum):
    UNSET = 0


class Blue(enum.IntEnum):
    UNSET = 0


@pbj.message(full_name="clash.Paint")
class Paint:
    r: Red = pbj.field(1, Red)
    b: Blue = pbj.field(2, Blue)


def test_what_cannot_be_described():
    @pbj.message
    class Local:
        x: int = pbj.field(1, "int32")

    with pytest.raises(pbj.SchemaError, match=r"is not a dotted name of identifiers \(a class declared inside a "
                                              r"function needs @pbj.message\(full_name=\.\.\.\)\)"):
        describe(Local)
    with pytest.raises(pbj.SchemaError, match=r"the files a/declared.proto -> b/declared.proto -> a/declared.proto "
                                              r"would import each other in a circle"):
        describe(A)
    with pytest.raises(pbj.SchemaError, match=r"'clash.UNSET' would be declared twice, as a value of enum clash.Red "
                                              r"and as a value of enum clash.Blue"):
        describe(Paint)
    with pytest.raises(TypeError, match=r"^describe takes pbj message classes"):
        describe("shop.v1.Order")


# ---------------------------------------------------------------- against the real .proto files

def test_the_mirror_classes_are_described_as_their_proto_files_say():
    """``tests/everything_classes.py`` declares by hand the messages of ``everything.proto`` and ``features.proto``:
    Google's classes built from the written descriptors read and write every generated value as Google's classes
    compiled by protoc from the ``.proto`` files do (deterministic bytes), and agree with them field by field."""
    from hypothesis import HealthCheck, given, settings

    from tests import everything_classes as ec
    from tests.oracle import google_class

    ec.compile_oracle()
    roots = [ec.Everything, ec.Presence, ec.Unpacked, ec.Maps, ec.Node, ec.Choice]
    pool = pool_of(describe(*roots))
    for cls in roots:
        ours = pool.FindMessageTypeByName(info(cls).full_name)
        real = google_class(info(cls).full_name).DESCRIPTOR
        assert [(f.name, f.number, f.type, f.is_repeated, f.has_presence, f.is_packed, f.json_name)
                for f in ours.fields] == \
            [(f.name, f.number, f.type, f.is_repeated, f.has_presence, f.is_packed, f.json_name)
             for f in sorted(real.fields, key=lambda f: [g.name for g in ours.fields].index(f.name))], cls

    def same_as_protoc(value):
        full = info(type(value)).full_name
        data = pbj.encode(value)
        ours = message_factory.GetMessageClass(pool.FindMessageTypeByName(full)).FromString(data)
        real = google_class(full).FromString(data)
        assert ours.SerializeToString(deterministic=True) == real.SerializeToString(deterministic=True)
        assert pbj.testing.equivalent(pbj.decode(type(value), ours.SerializeToString()), pbj.decode(type(value), data))

    for cls in roots:
        @settings(max_examples=25, deadline=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
        @given(pbj.testing.values(cls, max_depth=2))
        def run(value):
            same_as_protoc(value)
        run()
