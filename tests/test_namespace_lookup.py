"""Namespace lookups suggest the closest names (API and CLI); ``Namespace.message_class`` is the typed fetch."""

from __future__ import annotations

import pytest

import pbj
from pbj.cli import main as pbj_main
from tests.conftest import REPO

HAPI = REPO / "pbj" / "data" / "hapi-v0.55.0.binpb"


@pytest.fixture(scope="module")
def ns() -> pbj.Namespace:
    return pbj.load_descriptor_set(HAPI.read_bytes())


def test_item_lookup_suggests_close_full_names(ns):
    with pytest.raises(KeyError) as info:
        ns["com.hedera.hapi.block.stream.Blok"]
    assert info.value.args[0] == ("no message or enum named 'com.hedera.hapi.block.stream.Blok' in this schema; "
                                  "did you mean 'com.hedera.hapi.block.stream.Block' or "
                                  "'com.hedera.hapi.block.stream.BlockItem' or 'proto.BlockInfo'?")


def test_short_name_suggests_the_full_name(ns):
    with pytest.raises(KeyError) as info:
        ns["Block"]
    assert "did you mean 'com.hedera.hapi.block.stream.Block' or" in info.value.args[0]


def test_no_suggestion_when_nothing_is_close(ns):
    with pytest.raises(KeyError) as info:
        ns["proto.Zzqx"]
    assert info.value.args[0] == "no message or enum named 'proto.Zzqx' in this schema"


def test_get_and_in_build_no_hint(ns, monkeypatch):
    """``get`` and ``in`` answer a miss without looking for close names (the conformance testee asks
    ``get`` for a name of another schema on every request: the hint cost 2.4 ms a call)."""
    calls = []
    monkeypatch.setattr(type(ns), "suggest", lambda self, name: calls.append(name) or "")
    assert ns.get("com.hedera.hapi.block.stream.Blok") is None
    assert ns.get("proto.Zzqx", 7) == 7
    assert "com.hedera.hapi.block.stream.Blok" not in ns and 3 not in ns
    assert ns.get(".com.hedera.hapi.block.stream.Block") is ns["com.hedera.hapi.block.stream.Block"]
    assert "com.hedera.hapi.block.stream.Block" in ns
    assert calls == []
    with pytest.raises(KeyError):
        ns["proto.Zzqx"]
    assert calls == ["proto.Zzqx"]


def test_attribute_lookup_suggests_names_and_packages(ns):
    with pytest.raises(AttributeError) as info:
        _ = ns.com.hedera.hapi.block.stream.Blok
    assert "did you mean 'com.hedera.hapi.block.stream.Block'" in str(info.value)
    with pytest.raises(AttributeError) as info:
        _ = ns.com.hedra
    assert str(info.value) == ("no package, message or enum named 'com.hedra' in this schema; "
                               "did you mean 'com.hedera' or 'com.hedera.hapi' or 'com.hedera.hapi.node'?")


def test_cli_suggests_too(capsys):
    status = pbj_main(["decode", "--descriptor-set", str(HAPI), "--type", "proto.TransactionBdy", "-"])
    assert status == 1
    assert capsys.readouterr().err == (
        "pbj: error: no message type 'proto.TransactionBdy' in the schema; did you "
        "mean 'proto.TransactionBody' or 'proto.Transaction' or 'proto.TransactionID'?\n")


def test_message_class(ns):
    body = ns.message_class("proto.TransactionBody")
    assert body is ns["proto.TransactionBody"] and pbj.is_message(body)
    again = pbj.load_descriptor_set(HAPI.read_bytes())
    # a class of the same message (from another load, or a stub module) types the result
    assert ns.message_class(".proto.TransactionBody", again["proto.TransactionBody"]) is body
    with pytest.raises(TypeError) as info:
        ns.message_class("proto.TransactionBody", again["proto.Transaction"])
    assert "is not the message proto.TransactionBody (it is proto.Transaction)" in str(info.value)
    with pytest.raises(KeyError, match=r"did you mean 'proto\.TransactionBody'"):
        ns.message_class("proto.TransactionBod")
    with pytest.raises(KeyError):
        ns.message_class("proto.HederaFunctionality")  # an enum, not a message
