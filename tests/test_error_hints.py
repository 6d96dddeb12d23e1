"""Errors a new user meets say what is wrong and what to do: the wrong file given as a schema,
a set made without ``--include_imports``, ``--type`` naming an enum, a keyword as ``--module``,
a misspelt field name in JSON or text, a oneof member given as a keyword, a ``datetime``
given for a ``Timestamp`` field."""

from __future__ import annotations

import datetime
import gzip
import textwrap

import pytest

import pbj
import pbj.wkt
from pbj.cli import main
from pbj.descriptor import FileDescriptorSet
from pbj.wellknown import Duration, Timestamp
from tests.conftest import REPO
from tests.oracle import protoc

DATA = REPO / "pbj" / "data"
HAPI = DATA / "hapi-v0.55.0.binpb"


def _cli(capsys, *args: str) -> tuple[int, str]:
    status = main(list(args))
    return status, capsys.readouterr().err


def test_block_file_as_descriptor_set(tmp_path, capsys):
    block = tmp_path / "block.blk"
    block.write_bytes(gzip.decompress((DATA / "000000000000000000000000000000497558.blk.gz").read_bytes()))
    status, err = _cli(capsys, "decode", "--descriptor-set", str(block), "--type", "x.Y", str(block))
    assert status == 1
    assert err.startswith(f"pbj: error: cannot load {block} as --descriptor-set: this is not a "
                          "FileDescriptorSet: file #1 of it has no name"), err
    assert "--include_imports --descriptor_set_out" in err and err.count("\n") == 1


def test_text_file_to_load_descriptor_set(tmp_path):
    proto = tmp_path / "a.proto"
    proto.write_text('syntax = "proto3";\nmessage A { int32 x = 1; }\n')
    with pytest.raises(pbj.DecodeError) as err:
        pbj.load_descriptor_set(proto)
    assert "this is not a FileDescriptorSet: it looks like a .proto file, which pbj.load_proto loads" \
        in str(err.value), str(err.value)
    with pytest.raises(pbj.DecodeError, match=r"this is not a FileDescriptorSet: it looks like text; make a set"):
        pbj.load_descriptor_set(b"hello, world: this is a note\n")


def test_set_without_include_imports_names_the_flag(tmp_path):
    (tmp_path / "money.proto").write_text('syntax = "proto3";\nmessage Money { int64 cents = 1; }\n')
    (tmp_path / "item.proto").write_text(textwrap.dedent("""\
        syntax = "proto3";
        import "money.proto";
        message Item { Money price = 1; }
    """))
    full = pbj.load_descriptor_set(protoc([tmp_path / "item.proto"], [tmp_path]))
    only = FileDescriptorSet(file=[f for f in full.files if f.name == "item.proto"])
    with pytest.raises(pbj.SchemaError) as err:
        pbj.load_descriptor_set(pbj.encode(only))
    text = str(err.value)
    assert "the set lacks imported files (item.proto imports money.proto, not in the set): make it with " \
           "protoc --include_imports" in text, text


def test_type_naming_an_enum(capsys):
    status, err = _cli(capsys, "decode", "--descriptor-set", str(HAPI), "--type", "proto.HederaFunctionality",
                       str(HAPI))
    assert status == 1
    assert err == ("pbj: error: 'proto.HederaFunctionality' is an enum, not a message type: --type names the "
                   "message the data is an encoding of\n")


def test_type_not_found_never_suggests_the_name_given(capsys):
    status, err = _cli(capsys, "decode", "--descriptor-set", str(HAPI), "--type", "proto.Blok", str(HAPI))
    assert status == 1 and "no message type 'proto.Blok'" in err and "did you mean 'proto.Blok'" not in err


def test_module_keyword(tmp_path, capsys):
    status, err = _cli(capsys, "stubs", "--descriptor-set", str(HAPI), "-o", str(tmp_path), "--module", "class")
    assert status == 1
    assert err == "pbj: error: module name 'class' is a Python keyword: choose another (e.g. 'class_pb')\n"
    assert not any(tmp_path.iterdir())


@pbj.message(full_name="hints.Transfer")
class Transfer:
    amount: int = pbj.field(1, "int64")
    account_id: str = pbj.field(2, "string")
    when: Timestamp | None = pbj.field(3, Timestamp)
    took: Duration | None = pbj.field(4, Duration)
    contact: pbj.OneOf | None = pbj.oneof(phone=(5, "string"), email=(6, "string"))


def test_json_unknown_field_did_you_mean():
    with pytest.raises(pbj.JSONError) as err:
        pbj.from_json(Transfer, '{"amout": 1}')
    assert str(err.value) == "unknown field 'amout' in message hints.Transfer; did you mean 'amount'? - at `$.amout`"
    with pytest.raises(pbj.JSONError, match=r"did you mean 'account_id'\?|did you mean 'accountId'\?"):
        pbj.from_json(Transfer, '{"accountid": "a"}')
    with pytest.raises(pbj.JSONError) as err:
        pbj.from_json(Transfer, '{"zzz": 1}')
    assert "did you mean" not in str(err.value)


def test_text_unknown_field_did_you_mean():
    with pytest.raises(pbj.TextError) as err:
        pbj.from_text(Transfer, "amout: 1")
    assert str(err.value).startswith('no field named "amout" in message hints.Transfer; did you mean \'amount\'?')


def test_oneof_member_as_keyword_points_to_oneof():
    with pytest.raises(TypeError) as err:
        Transfer(phone="1")
    assert str(err.value) == ("Transfer.__init__() got an unexpected keyword argument 'phone': phone is a member "
                              "of oneof contact; set it as contact=pbj.OneOf('phone', value)")
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'amout'; did you mean 'amount'\?"):
        Transfer(amout=1)
    assert Transfer(contact=pbj.OneOf("phone", "1")).contact == pbj.OneOf("phone", "1")


def test_datetime_for_timestamp_points_to_wkt():
    when = datetime.datetime(2024, 1, 2, tzinfo=datetime.UTC)
    with pytest.raises(TypeError) as err:
        Transfer(when=when)
    assert str(err.value).endswith("; convert it with pbj.wkt.timestamp_from_datetime(value)"), str(err.value)
    assert str(err.value).startswith("Transfer.when: message field needs a Timestamp, got datetime")
    with pytest.raises(TypeError, match=r"convert it with pbj\.wkt\.duration_from_timedelta\(value\)$"):
        Transfer(took=datetime.timedelta(seconds=3))
    ts = pbj.wkt.timestamp_from_datetime(when)
    assert Transfer(when=ts).when.seconds == 1704153600
