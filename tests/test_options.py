"""pbj.options_of: the options of messages, fields, oneofs, enums, enum values, services and methods,
custom options decoded with their own schema, for loaded and declared schemas."""

from __future__ import annotations

import enum
import textwrap
from functools import cache
from typing import Any

import pytest

import pbj
from pbj import descriptor
from pbj.options import options_of


@cache
def _ns() -> pbj.Namespace:
    import tempfile
    from pathlib import Path

    folder = Path(tempfile.mkdtemp(prefix="pbj-options-"))
    (folder / "opts.proto").write_text(textwrap.dedent("""
        syntax = "proto3";
        package pbjtest.opts;
        import "google/protobuf/descriptor.proto";

        message Range { int64 lo = 1; int64 hi = 2; }
        enum Level { LEVEL_UNSPECIFIED = 0; LOW = 1; HIGH = 2; }
        extend google.protobuf.MessageOptions { string table = 50001; }
        extend google.protobuf.FieldOptions { Range range = 50002; repeated string tags = 50003; Level level = 50004; }
        extend google.protobuf.OneofOptions { bool exclusive = 50005; }
        extend google.protobuf.EnumOptions { string prefix = 50006; }
        extend google.protobuf.EnumValueOptions { string label = 50007; }
        extend google.protobuf.ServiceOptions { string owner = 50008; }
        extend google.protobuf.MethodOptions { int32 cost = 50009; }

        message Account {
          option (table) = "accounts";
          option deprecated = true;
          int64 balance = 1 [(range) = {lo: 0, hi: 1000}, (tags) = "money", (tags) = "audited", deprecated = true];
          string from = 2 [(level) = HIGH];
          oneof owner { option (exclusive) = true; string person = 3; string company = 4; }
          repeated int32 plain = 5;
        }
        enum Status { option (prefix) = "ST"; ACTIVE = 0 [(label) = "on"]; CLOSED = 1 [deprecated = true]; }
        service Bank {
          option (owner) = "treasury";
          rpc Open(Account) returns (Account) { option (cost) = 3; option idempotency_level = IDEMPOTENT; }
          rpc Close(Account) returns (Account);
        }
    """))
    return pbj.load_proto(folder / "opts.proto")


def _custom(opts: Any) -> dict[str, Any]:
    return {ext.full_name: value for ext, value in pbj.extensions_of(opts).items()}


def test_message_and_field_options_with_custom_options_typed_by_their_schema() -> None:
    ns = _ns()
    account = ns["pbjtest.opts.Account"]
    opts = options_of(account)
    assert type(opts) is ns["google.protobuf.MessageOptions"] and opts.deprecated is True
    assert _custom(opts) == {"pbjtest.opts.table": "accounts"}
    balance = options_of(account, "balance")
    assert balance.deprecated is True
    assert _custom(balance) == {"pbjtest.opts.range": ns["pbjtest.opts.Range"](lo=0, hi=1000),
                                "pbjtest.opts.tags": ("money", "audited")}
    assert pbj.get_extension(balance, ns.extension("pbjtest.opts.range")).hi == 1000
    level = pbj.get_extension(options_of(account, "from_"), ns.extension("pbjtest.opts.level"))
    assert level is ns.enums["pbjtest.opts.Level"].HIGH
    assert options_of(account, "from") == options_of(account, "from_")  # the .proto name works too
    assert _custom(options_of(account, "plain")) == {} and options_of(account, "plain").deprecated is False


def test_oneof_enum_and_enum_value_options() -> None:
    ns = _ns()
    account = ns["pbjtest.opts.Account"]
    assert _custom(options_of(account, "owner")) == {"pbjtest.opts.exclusive": True}
    assert type(options_of(account, "owner")) is ns["google.protobuf.OneofOptions"]
    assert type(options_of(account, "person")) is ns["google.protobuf.FieldOptions"]  # a member is a field
    status = ns.enums["pbjtest.opts.Status"]
    assert _custom(options_of(status)) == {"pbjtest.opts.prefix": "ST"}
    assert _custom(options_of(status.ACTIVE)) == {"pbjtest.opts.label": "on"}
    assert options_of(status.CLOSED).deprecated is True and _custom(options_of(status.CLOSED)) == {}


def test_service_and_method_options() -> None:
    ns = _ns()
    bank = ns.services["pbjtest.opts.Bank"]
    assert _custom(options_of(bank)) == {"pbjtest.opts.owner": "treasury"}
    opened = options_of(bank, "Open")
    assert _custom(opened) == {"pbjtest.opts.cost": 3} and opened.idempotency_level == 2
    assert options_of(bank["Open"]) == opened
    assert _custom(options_of(bank, "Close")) == {}


def test_a_schema_without_descriptor_proto_keeps_custom_options_as_unknown_fields() -> None:
    ns = _ns()
    from pbj.descriptor import FileDescriptorSet

    files = tuple(f for f in ns.files if f.name != "google/protobuf/descriptor.proto")
    # the same schema with its custom options' declarations left out: options stay as raw bytes
    for f in files:
        object.__setattr__(f, "_pbj_size", -1)
    stripped = FileDescriptorSet(file=tuple(
        pbj.replace(f, dependency=tuple(d for d in f.dependency if d != "google/protobuf/descriptor.proto"),
                    extension=()) for f in files))
    bare = pbj.load_descriptor_set(pbj.encode(stripped))
    opts = options_of(bare["pbjtest.opts.Account"], "balance")
    assert type(opts) is descriptor.FieldOptions and opts.deprecated is True
    assert pbj.unknown_fields(opts) != b""


def test_declared_classes_enums_and_services_have_the_options_their_declaration_implies() -> None:
    class Color(enum.IntEnum):
        RED = 0
        CRIMSON = 0
        BLUE = 1

    @pbj.message(full_name="pbjtest.opts.Paint", syntax="proto2")
    class Paint:
        color: Color | None = pbj.field(1, Color, optional=True)
        coats: tuple[int, ...] = pbj.field(2, "int32", repeated=True, packed=True)

    assert options_of(Paint) == descriptor.MessageOptions()
    assert options_of(Paint, "coats").packed is True and options_of(Paint, "color") == descriptor.FieldOptions()
    assert options_of(Color).allow_alias is True
    assert options_of(Color.BLUE) == descriptor.EnumValueOptions()
    method = pbj.Method("Paint", "pbjtest.opts.Painter", Paint, Paint,
                        options=descriptor.MethodOptions(deprecated=True))
    svc = pbj.Service("pbjtest.opts.Painter", [method])
    assert options_of(svc, "Paint").deprecated is True and options_of(svc) == descriptor.ServiceOptions()


def test_bad_arguments() -> None:
    ns = _ns()
    with pytest.raises(KeyError, match=r"pbjtest\.opts\.Account has no field or oneof 'nope'"):
        options_of(ns["pbjtest.opts.Account"], "nope")
    with pytest.raises(TypeError, match=r"a name goes with a message class or a service"):
        options_of(ns.enums["pbjtest.opts.Status"], "ACTIVE")
    with pytest.raises(TypeError, match=r"options_of takes a message class"):
        options_of(42)
    with pytest.raises(KeyError, match=r"has no method 'Nope'"):
        options_of(ns.services["pbjtest.opts.Bank"], "Nope")
