"""``load_descriptor_set(data, only=[...])``: the classes some types reach, not the whole set."""

from __future__ import annotations

import gzip

import pytest

import pbj
from pbj.cli import main as pbj_main
from pbj.schema import info
from tests import oracle
from tests.conftest import REPO

DATA = REPO / "pbj" / "data"
HAPI = (DATA / "hapi-v0.55.0.binpb").read_bytes()
BLOCK = "com.hedera.hapi.block.stream.Block"


def _closed(ns: pbj.Namespace) -> None:
    """Every message and enum type a built class's fields name is a class of ``ns`` or a well-known one."""
    for cls in ns.messages.values():
        for f in info(cls).fields:
            for t in (f.type, f.map_value):
                if isinstance(t, type) and (pbj.is_message(t) or issubclass(t, int)):
                    name = getattr(getattr(t, "__pbj_info__", None), "full_name", None)
                    if name is not None and not name.startswith("google.protobuf."):
                        assert ns.messages.get(name) is t, (cls, f.name, name)


def test_one_message_builds_that_class_only():
    ns = pbj.load_descriptor_set(HAPI, only=["proto.AccountID"])
    assert sorted(ns.messages) == ["proto.AccountID"] and ns.enums == {} and ns.services == {}
    whole = pbj.load_descriptor_set(HAPI)
    value = ns["proto.AccountID"](shardNum=5, realmNum=7, account=pbj.OneOf("accountNum", 11))
    same = whole["proto.AccountID"](shardNum=5, realmNum=7, account=pbj.OneOf("accountNum", 11))
    assert pbj.encode(value) == pbj.encode(same) == bytes.fromhex("0805100718" "0b")
    assert pbj.encode(value, reverse=True) == pbj.encode(value)


def test_the_block_reaches_what_it_decodes():
    ns = pbj.load_descriptor_set(HAPI, only=[BLOCK])
    whole = pbj.load_descriptor_set(HAPI)
    assert BLOCK in ns and "proto.CryptoCreateTransactionBody" in ns
    assert len(ns.messages) < len(whole.messages)
    assert set(ns.messages) <= set(whole.messages) and set(ns.enums) <= set(whole.enums)
    assert ns.services == {}  # no service has every type among the block's
    _closed(ns)
    raw = gzip.decompress((DATA / "000000000000000000000000000000497558.blk.gz").read_bytes())
    block = pbj.decode(ns[BLOCK], raw)
    assert len(block.items) == 2442 and pbj.encode(block) == raw
    item = pbj.decode(whole["com.hedera.hapi.block.stream.BlockItem"], pbj.encode(block.items[5]))
    assert pbj.to_json(block.items[5]) == pbj.to_json(item)


def test_a_service_is_built_when_its_types_are():
    types = ["proto.Transaction", "proto.TransactionResponse", "proto.Query", "proto.Response"]
    ns = pbj.load_descriptor_set(HAPI, only=types)
    whole = pbj.load_descriptor_set(HAPI)
    assert "proto.CryptoService" in ns.services
    assert list(ns.service("proto.CryptoService").methods) == list(whole.service("proto.CryptoService").methods)
    assert set(ns.services) <= set(whole.services)


def test_extensions_of_a_reached_message_and_their_types_are_built():
    data = oracle.suite_set("proto2")
    root = "protobuf_test_messages.proto2.TestAllTypesProto2"
    ns = pbj.load_descriptor_set(data, only=[root])
    whole = pbj.load_descriptor_set(data)
    extending = {n for n, e in whole.extensions.items() if info(e.extendee).full_name == root}
    assert extending and extending <= set(ns.extensions)
    _closed(ns)
    # an extension of the root (extension_int32 = 120) is read as an extension, not kept unknown
    ext = ns.extension("protobuf_test_messages.proto2.extension_int32")
    msg = pbj.decode(ns[root], bytes.fromhex("c00705"))
    assert pbj.get_extension(msg, ext) == 5 and pbj.encode(msg) == bytes.fromhex("c00705")
    assert pbj.encode(msg, reverse=True) == bytes.fromhex("c00705")


def test_an_any_reaches_every_type():
    data = oracle.suite_set("proto3")
    whole = pbj.load_descriptor_set(data)
    ns = pbj.load_descriptor_set(data, only=["protobuf_test_messages.proto3.TestAllTypesProto3"])
    assert set(ns.messages) == set(whole.messages) and set(ns.enums) == set(whole.enums)


def test_a_name_the_set_lacks_is_a_key_error():
    with pytest.raises(KeyError, match=r"no message or enum named 'proto\.Nope' in this descriptor set"):
        pbj.load_descriptor_set(HAPI, only=["proto.AccountID", "proto.Nope"])


def test_the_cli_loads_what_its_type_reaches(tmp_path, capsys, monkeypatch):
    """``pbj decode --type`` builds the classes its type reaches; a type the set lacks still gets the hint."""
    built = []
    real = pbj.load_descriptor_set

    def counting(data, **kw):
        ns = real(data, **kw)
        built.append(len(ns.messages))
        return ns

    monkeypatch.setattr(pbj, "load_descriptor_set", counting)
    (tmp_path / "a.bin").write_bytes(bytes.fromhex("0805"))
    assert pbj_main(["decode", "--descriptor-set", str(DATA / "hapi-v0.55.0.binpb"), "--type", "proto.AccountID",
                     str(tmp_path / "a.bin")]) == 0
    assert '"shardNum": "5"' in capsys.readouterr().out and built == [1]
    assert pbj_main(["decode", "--descriptor-set", str(DATA / "hapi-v0.55.0.binpb"), "--type", "proto.AcountID",
                     str(tmp_path / "a.bin")]) != 0
    assert "did you mean 'proto.AccountID'" in capsys.readouterr().err
