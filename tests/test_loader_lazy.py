"""A load indexes the set; each class is built on its first use, once, atomically (threads, Ctrl-C)."""

from __future__ import annotations

import pickle
import threading
from importlib.resources import files

import pytest

import pbj
from pbj.loader import messages as loader_messages

HAPI = (files("pbj") / "data" / "hapi-v0.55.0.binpb").read_bytes()
BLOCK = "com.hedera.hapi.block.stream.Block"


def _built(ns: pbj.Namespace) -> dict:
    return ns._schema.built()


def test_a_load_builds_no_class_until_one_is_used():
    ns = pbj.load_descriptor_set(HAPI)
    assert len(ns.messages) > 300 and BLOCK in ns and "proto.AccountID" in ns.messages
    assert list(ns)[:3] == list(ns.messages)[:3]
    assert _built(ns) == {}  # names, len, in and iteration build nothing
    block = ns[BLOCK]
    built = _built(ns)
    assert set(built) == {BLOCK}  # its message fields are references, resolved on first use
    assert ns[BLOCK] is block and ns.com.hedera.hapi.block.stream.Block is block
    pbj.fields(block)  # resolving the references builds the classes they name
    assert {"com.hedera.hapi.block.stream.BlockItem"} <= set(_built(ns)) < set(ns.messages) | set(ns.enums)


def test_nested_types_are_attributes_built_when_first_read():
    ns = pbj.load_descriptor_set(HAPI)
    outer_name = next(n for n in ns.messages if f"{n}." in "".join(ns.messages) and
                      any(m.startswith(n + ".") and m.count(".") == n.count(".") + 1 for m in ns.messages))
    inner_name = next(m for m in ns.messages if m.startswith(outer_name + ".") and
                      m.count(".") == outer_name.count(".") + 1)
    outer = ns[outer_name]
    assert inner_name not in _built(ns)
    inner = getattr(outer, inner_name.rsplit(".", 1)[1])
    assert inner is ns[inner_name] and inner_name in _built(ns)
    assert outer.__dict__[inner_name.rsplit(".", 1)[1]] is inner  # the stand-in replaced itself


def test_enums_of_a_class_are_built_with_it():
    ns = pbj.load_descriptor_set(HAPI)
    cls = ns["proto.TransactionReceipt"]
    status = next(f for f in pbj.fields(cls) if f.name == "status").type
    assert status is ns["proto.ResponseCodeEnum"] and status.SUCCESS == 22


def test_the_first_use_from_eight_threads_builds_one_class():
    ns = pbj.load_descriptor_set(HAPI)
    start = threading.Barrier(8)
    got: list = []

    def use() -> None:
        start.wait()
        got.append(ns["proto.TransactionBody"])

    threads = [threading.Thread(target=use) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert len(got) == 8 and all(cls is got[0] for cls in got)
    assert _built(ns)["proto.TransactionBody"] is got[0]


def test_an_interrupted_build_leaves_the_load_as_it_was(monkeypatch):
    """Ctrl-C in the middle of a build (after its enums were built) publishes nothing; the next use
    builds the class whole."""
    ns = pbj.load_descriptor_set(HAPI)
    real = loader_messages.build_message
    calls = []

    def interrupted(schema, full):
        calls.append(full)
        real(schema, full)  # the class and its enums are made ...
        raise KeyboardInterrupt  # ... and the user presses Ctrl-C before the request ends

    monkeypatch.setattr(loader_messages, "build_message", interrupted)
    with pytest.raises(KeyboardInterrupt):
        ns["proto.TransactionReceipt"]
    assert calls == ["proto.TransactionReceipt"] and _built(ns) == {}
    monkeypatch.setattr(loader_messages, "build_message", real)
    cls = ns["proto.TransactionReceipt"]
    assert set(_built(ns)) >= {"proto.TransactionReceipt", "proto.ResponseCodeEnum"}
    assert pbj.decode(cls, pbj.encode(cls(status=22))).status == 22


def test_pickles_build_the_class_they_name():
    ns = pbj.load_descriptor_set(HAPI)
    account = ns["proto.AccountID"]
    data = pickle.dumps(account(shardNum=7))
    again = pbj.load_descriptor_set(HAPI)  # a newer load, none of whose classes is built yet
    assert _built(again) == {}
    assert type(pickle.loads(data)) is account  # the load it came from is alive: its class
    del ns, account
    import gc

    gc.collect()
    restored = pickle.loads(data)  # that load is gone: the newest one builds its class
    assert type(restored) is again["proto.AccountID"] and restored.shardNum == 7


def test_a_class_keeps_its_load_alive_for_pickles_of_its_neighbours():
    cls = pbj.load_descriptor_set(HAPI)["proto.AccountID"]  # the namespace itself is dropped
    import gc

    gc.collect()
    shard = pickle.loads(pickle.dumps(cls(shardNum=1)))
    assert type(shard) is cls
    from pbj.loader.pickling import latest_loaded

    assert latest_loaded("proto.Timestamp").__pbj_load__ == cls.__pbj_load__


def test_build_all_and_lazy_false_build_everything():
    ns = pbj.load_descriptor_set(HAPI, only=[BLOCK])
    assert ns.build_all() is ns
    assert set(_built(ns)) == {*ns.messages, *ns.enums} - set(ns._schema.known)
    eager = pbj.load_descriptor_set(HAPI, only=[BLOCK], lazy=False)
    assert set(_built(eager)) == set(_built(ns))
