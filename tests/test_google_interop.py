"""from_google, to_google, load_google: exact both ways on the shipped block and on random messages of
every shipped schema (declared: tests/everything_classes.py; loaded: HAPI, pbj-it, the conformance
messages of proto3 and proto2), on whichever engine runs the suite.

Each random pbj message ``p`` (pbj.testing.values, unknown fields included) goes to the Google class
protoc made for its schema and back: ``from_google(to_google(p, G))`` is ``p`` again (as the wire
sees it), and the Google message made from that pbj message again serializes (deterministically)
to the same bytes; the same through the pool pbj builds for the class itself (``to_google(p)``),
which converts back into the very class ``p`` came from. 3 to 10 messages per schema in the default
selection (the conformance messages' values cost the most to draw), 1,000 with ``-m slow`` (drawn
by tests/random_messages.py from seeds hypothesis draws: the same kinds of values, ~30x cheaper).
"""

from __future__ import annotations

import gzip
import math
import random
import textwrap
from functools import cache
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pbj
from pbj import google as pg
from pbj.options import options_of
from pbj.schema import info
from pbj.testing import equivalent, values
from tests import everything_classes as ec
from tests import random_messages
from tests.conftest import SHARED, SUMMARY_PROPERTY
from tests.oracle import google_class, suite_set

descriptor_pool = pytest.importorskip("google.protobuf.descriptor_pool")

#: (schema, pbj class of the values) for every shipped schema; loaded ones by (suite, full name).
LOADED = [("hapi", "com.hedera.hapi.block.stream.Block"), ("hapi", "proto.TransactionBody"),
          ("pbj-it", "proto.Everything"), ("proto3", "protobuf_test_messages.proto3.TestAllTypesProto3"),
          ("proto2", "protobuf_test_messages.proto2.TestAllTypesProto2")]
DECLARED = [ec.Everything, ec.Presence, ec.Unpacked, ec.Maps, ec.Node, ec.Choice]
CASES = [*(pytest.param(("loaded", s, n), id=n) for s, n in LOADED),
         *(pytest.param(("declared", c), id=f"declared-{info(c).full_name}") for c in DECLARED)]


@cache
def _loaded(suite: str) -> pbj.Namespace:
    return pbj.load_descriptor_set(suite_set(suite))


def _classes(case: tuple) -> tuple[type, Any]:
    """(pbj class, Google class of the same full name, from protoc's output in the default pool)."""
    if case[0] == "loaded":
        cls = _loaded(case[1])[case[2]]
    else:
        ec.compile_oracle()
        cls = case[1]
    return cls, google_class(info(cls).full_name)


def _det(g: Any) -> bytes:
    return g.SerializeToString(deterministic=True)  # type: ignore[no-any-return]


def check(cls: type, gcls: Any, p: Any) -> None:
    """Both directions, through protoc's Google class and through pbj's own pool for ``cls``."""
    g = pg.to_google(p, gcls)
    assert type(g) is gcls
    q = pg.from_google(g)                     # a class load_google made for the default pool
    assert info(type(q)).full_name == info(cls).full_name
    assert equivalent(pbj.decode(cls, pbj.encode(q)), p)
    assert _det(pg.to_google(q, gcls)) == _det(g)
    own = pg.to_google(p)                     # the pool pbj keeps for cls's own schema
    back = pg.from_google(own)
    assert type(back) is cls and equivalent(back, p)
    assert _det(pg.to_google(back)) == _det(own)


def _run(case: tuple, examples: int) -> int:
    cls, gcls = _classes(case)
    seen = [0]

    @settings(max_examples=examples, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                     HealthCheck.filter_too_much])
    @given(st.data())
    def run(data: Any) -> None:
        check(cls, gcls, data.draw(values(cls, max_depth=2)))
        seen[0] += 1

    run()
    return seen[0]


@pytest.mark.parametrize("case", CASES)
def test_random_messages_convert_exactly_both_ways(case: tuple) -> None:
    if case[0] == "declared":
        examples = 10
    else:
        examples = 3 if case[2].startswith("protobuf_test_messages") else 5
    assert _run(case, examples) == examples


def _run_seeded(case: tuple, examples: int) -> int:
    """As :func:`_run`, each message drawn by tests/random_messages.py from a seed hypothesis draws."""
    cls, gcls = _classes(case)
    seen = [0]

    @settings(max_examples=examples, deadline=None, database=None)
    @given(st.integers(0, (1 << 64) - 1))
    def run(seed: int) -> None:
        check(cls, gcls, random_messages.message(cls, random.Random(seed), max_depth=2))
        seen[0] += 1

    run()
    return seen[0]


@pytest.mark.slow
@pytest.mark.timeout(7200)
@pytest.mark.parametrize("case", CASES)
def test_1000_random_messages_convert_exactly_both_ways(case: tuple, record_property) -> None:
    """1,000 messages per schema, from a seeded generator: pbj.testing.values' hypothesis draws cost
    minutes of CPU per 1,000 messages of the conformance schemas, the conversions seconds."""
    n = _run_seeded(case, 1000)
    assert n == 1000
    name = case[-1] if case[0] == "loaded" else info(case[1]).full_name
    record_property(SUMMARY_PROPERTY, f"google interop, {name}: {n} messages exact both ways on the "
                                      f"{pbj.engine()} engine")


@cache
def _block() -> tuple[bytes, Any, Any]:
    from importlib.resources import files

    shipped = files("pbj") / "data"
    raw = gzip.decompress((SHARED / "data" / "blocks" / "000000000000000000000000000000497558.blk.gz").read_bytes())
    data = (shipped / "hapi-v0.55.0.binpb").read_bytes()
    from google.protobuf import descriptor_pb2

    pool = descriptor_pool.DescriptorPool()
    for fd in descriptor_pb2.FileDescriptorSet.FromString(data).file:
        pool.Add(fd)
    return raw, pool, pbj.load_descriptor_set(data)


def test_the_shipped_block_converts_exactly_both_ways() -> None:
    raw, pool, ns = _block()
    block_cls = ns["com.hedera.hapi.block.stream.Block"]
    block = pbj.decode(block_cls, raw)
    loaded = pg.load_google(pool, ["com.hedera.hapi.block.stream.Block"])
    gblock = pg.to_google(block, pool)
    assert type(gblock) is pg.google_class(block_cls, pool) and gblock.SerializeToString() == raw
    again = pg.from_google(gblock)
    assert type(again) is loaded["com.hedera.hapi.block.stream.Block"] and pbj.encode(again) == raw
    assert pg.to_google(again, pool).SerializeToString() == raw and len(again.items) == 2442
    own = pg.to_google(block)  # pbj's own pool for the load block_cls comes from
    assert own.SerializeToString() == raw
    back = pg.from_google(own)
    assert type(back) is block_cls and pbj.encode(back) == raw


def test_load_google_of_a_pb2_module_keeps_options_and_names(tmp_path) -> None:
    (tmp_path / "shop_pb.proto").write_text(textwrap.dedent("""
        syntax = "proto3";
        package pbjtest.shop;
        import "google/protobuf/descriptor.proto";
        import "google/protobuf/timestamp.proto";
        extend google.protobuf.FieldOptions { string unit = 51234; }
        message Money { string currency = 1; int64 cents = 2 [(unit) = "cent"]; }
        message Order { Money total = 1; google.protobuf.Timestamp at = 2; map<string, Money> parts = 3;
                        oneof pay { string card = 4; bool cash = 5; } }
    """))
    import importlib
    import sys
    from pathlib import Path

    import grpc_tools
    from grpc_tools import protoc as grpc_protoc

    builtin = Path(grpc_tools.__file__).parent / "_proto"
    assert grpc_protoc.main(["protoc", f"-I{tmp_path}", f"-I{builtin}", f"--python_out={tmp_path}",
                             str(tmp_path / "shop_pb.proto")]) == 0
    sys.path.insert(0, str(tmp_path))
    try:
        module = importlib.import_module("shop_pb_pb2")
    finally:
        sys.path.remove(str(tmp_path))
    ns = pg.load_google(module)
    order_cls = ns["pbjtest.shop.Order"]
    assert ns["google.protobuf.Timestamp"] is pbj.wellknown.Timestamp
    g = module.Order(total=module.Money(currency="EUR", cents=1250), parts={"a": module.Money(cents=1)}, cash=True)
    g.at.seconds = 5
    p = pg.from_google(g)
    assert type(p) is order_cls and p.total.cents == 1250 and p.pay == pbj.OneOf("cash", True)
    assert p.at == pbj.wellknown.Timestamp(seconds=5) and p.parts["a"].cents == 1
    assert pg.to_google(p, module.Order) == g and pg.to_google(p, module) == g
    opts = options_of(ns["pbjtest.shop.Money"], "cents")
    assert {e.full_name: v for e, v in pbj.extensions_of(opts).items()} == {"pbjtest.shop.unit": "cent"}
    assert pg.load_google(module.DESCRIPTOR)["pbjtest.shop.Money"] is not order_cls  # a second load: new classes
    assert type(pg.from_google(g)) is order_cls  # the pool keeps the first


def test_errors_name_what_is_wrong() -> None:
    with pytest.raises(TypeError, match="from_google takes a Google protobuf message"):
        pg.from_google(ec.Leaf())
    with pytest.raises(TypeError, match="to_google takes a pbj message"):
        pg.to_google(object())
    ec.compile_oracle()
    with pytest.raises(TypeError, match=r"is the message proto.Everything, not pbjtest.Leaf"):
        pg.to_google(ec.Leaf(), google_class("proto.Everything"))
    with pytest.raises(pbj.SchemaError, match=r"^pbjtest\.Leaf: the DescriptorPool has no message pbjtest\.Leaf$"):
        pg.to_google(ec.Leaf(), descriptor_pool.DescriptorPool())
    with pytest.raises(TypeError, match="needs names="):
        pg.load_google(descriptor_pool.Default())
    with pytest.raises(KeyError, match=r"no file, message, enum or service named 'no\.Such'"):  # also a KeyError
        pg.load_google(descriptor_pool.Default(), ["no.Such"])
    with pytest.raises(TypeError, match=r"load_google takes a _pb2 module"):
        pg.load_google(42)


def test_one_name_a_module_without_the_type_and_a_grpc_stubs_module() -> None:
    """load_google(pool, names="a.B") loads one name; to_google(msg, module) takes a type of that module's
    schema only (its file and what it imports), though the module's pool holds other modules' types too."""
    import types

    from google.protobuf import any_pb2, timestamp_pb2, type_pb2

    ec.compile_oracle()
    ns = pg.load_google(descriptor_pool.Default(), names="pbjtest.Leaf")
    assert "pbjtest.Leaf" in ns.messages
    with pytest.raises(pbj.SchemaError, match=r"^no\.Such: the DescriptorPool has no file, message, enum or service "
                                              r"named 'no\.Such'$"):
        pg.load_google(descriptor_pool.Default(), names="no.Such")
    with pytest.raises(pbj.SchemaError) as err:
        pg.to_google(ec.Leaf(), timestamp_pb2)
    assert str(err.value) == ("pbjtest.Leaf: the module 'google.protobuf.timestamp_pb2' "
                              "(google/protobuf/timestamp.proto) has no message pbjtest.Leaf: it is in features.proto; "
                              "pass that file's _pb2 module")
    assert isinstance(err.value, KeyError)
    anything = pbj.wellknown.Any(type_url="t/x", value=b"1")
    assert pg.to_google(anything, type_pb2) == any_pb2.Any(type_url="t/x", value=b"1")  # type.proto imports any.proto
    stubs = types.ModuleType("shop_pb2_grpc")
    with pytest.raises(TypeError, match=r"^load_google takes the _pb2 module \(shop_pb2\), not the gRPC stubs "
                                        r"module shop_pb2_grpc$"):
        pg.load_google(stubs)


def test_a_google_message_where_a_pbj_message_goes_says_how_to_convert_it() -> None:
    """pbj's calls refuse a Google message (or class) with what to do: pbj.from_google (pbj.load_google)."""
    from google.protobuf import timestamp_pb2

    from pbj.validation import validate

    g = timestamp_pb2.Timestamp(seconds=5)
    hint = " (a Google protobuf message: convert it with pbj.from_google)"
    for call, run in [("pbj.encode", pbj.encode), ("pbj.encoded_size", pbj.encoded_size), ("pbj.to_json", pbj.to_json),
                      ("pbj.to_dict", pbj.to_dict), ("pbj.to_text", pbj.to_text), ("pbj.to_python", pbj.to_python),
                      ("pbj.validate", validate), ("pbj.to_google", pg.to_google)]:
        with pytest.raises(TypeError) as err:
            run(g)
        assert str(err.value) == f"{call} takes a pbj message, not Timestamp{hint}"
    with pytest.raises(TypeError) as err:
        pbj.decode(timestamp_pb2.Timestamp, b"")
    assert str(err.value) == ("pbj.decode takes a pbj message class, not the class Timestamp (a Google protobuf "
                              "message class: load its schema with pbj.load_google)")
    with pytest.raises(TypeError, match=r"^pbj\.encode takes a pbj message, not int$"):  # no hint for the rest
        pbj.encode(1)


@pbj.message(full_name="pbjtest.interop.Part", syntax="proto2")
class _Part:
    a: int | None = pbj.field(1, "int32", required=True)
    b: int | None = pbj.field(2, "int32", optional=True)


@pbj.message(full_name="pbjtest.interop.Whole", syntax="proto2")
class _Whole:
    name: str | None = pbj.field(1, "string", required=True)
    part: _Part | None = pbj.field(2, _Part)


def test_a_message_missing_a_required_field_converts_as_googles_runtime_keeps_it() -> None:
    """Google's runtime builds a partial message and refuses it only in SerializeToString: both conversions
    carry it as it is; pbj.encode and SerializeToString of the result refuse it, the partial writers write it."""
    from google.protobuf.message import EncodeError as GoogleEncodeError

    partial = _Whole(part=_Part(b=1))
    g = pg.to_google(partial)
    assert not g.IsInitialized() and sorted(g.FindInitializationErrors()) == ["name", "part.a"]
    assert g.part.b == 1 and not g.HasField("name")
    with pytest.raises(GoogleEncodeError):
        g.SerializeToString()
    assert g.SerializePartialToString() == pbj.encode(partial, allow_partial=True) == b"\x12\x02\x10\x01"
    back = pg.from_google(g)
    assert type(back) is _Whole and back == partial
    with pytest.raises(pbj.EncodeError, match=r"required fields not set: \$\.name, \$\.part\.a"):
        pbj.encode(back)
    built = type(g)()
    built.part.b = 1
    assert pg.from_google(built) == partial  # a partial message built with Google's API
    whole = _Whole(name="n", part=_Part(a=2))
    assert pg.to_google(whole).IsInitialized() and pg.from_google(pg.to_google(whole)) == whole


def test_the_seeded_generator_of_the_long_runs_reaches_every_field_member_and_edge() -> None:
    """tests/random_messages.py (the 1,000-message runs' generator) sets every field to more than one
    value, picks every oneof member and none, writes unknown fields, and reaches the float edges."""
    for cls in DECLARED:
        drawn = [random_messages.message(cls, random.Random(seed)) for seed in range(100)]
        mi = info(cls)
        for f in mi.fields:
            assert len({repr(getattr(m, f.name)) for m in drawn}) > 1, (cls, f.name)
        for o in mi.oneofs:
            chosen = {getattr(m, o.name).which if getattr(m, o.name) is not None else None for m in drawn}
            assert chosen == {None, *(m.name for m in o.members)}, (cls, o.name)
        assert any(m._pbj_unknown for m in drawn) and any(not m._pbj_unknown for m in drawn)
    doubles = [random_messages._Draw(random.Random(seed), False).scalar("double") for seed in range(400)]
    assert any(math.isnan(d) for d in doubles) and -math.inf in doubles and 5e-324 in doubles
    assert any(str(d) == "-0.0" for d in doubles)
