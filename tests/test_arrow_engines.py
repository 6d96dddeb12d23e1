"""Tables back from DuckDB and Polars: ``from_arrow`` of what each engine gives gives the messages back.

For every message class of ../shared/protos and the conformance messages (the
property tests' classes), hypothesis values (without what the mapping cannot
hold, as in test_arrow_properties.py) go through :func:`pbj.arrow.to_arrow`,
then through each engine's own output:

* DuckDB: ``SELECT *`` over the registered table (a ``RecordBatchReader``), over
  pyarrow's Parquet file (``read_parquet``), and DuckDB's own Parquet file
  (``COPY ... TO``) read back with pyarrow;
* Polars: the ``DataFrame`` itself (its Arrow stream), and Polars' own Parquet
  file (``write_parquet``) read back with pyarrow and with DuckDB.

``from_arrow`` of each must equal the messages (``pbj.testing.equivalent``,
NaN-aware). DuckDB's ``INTERVAL`` holds microseconds, so the values' Durations
are whole microseconds here (docs/arrow.md says so). The CI selection runs one
example per class on a part of HAPI; ``-m slow`` runs every class with more.
"""

from __future__ import annotations

import attrs
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pbj
import pbj.arrow
from pbj.schema import info, stored
from pbj.testing import equivalent, values
from tests.test_arrow_properties import CASES, holdable, namespace

duckdb = pytest.importorskip("duckdb")
pl = pytest.importorskip("polars")


def in_microseconds(value):
    """``value`` with every Duration's nanos cut to whole microseconds (DuckDB's INTERVAL holds no more)."""
    if isinstance(value, pbj.OneOf):
        return pbj.OneOf(value.which, in_microseconds(value.value))
    if isinstance(value, tuple):
        return tuple(in_microseconds(v) for v in value)
    if isinstance(value, dict):
        return pbj.FrozenMap({k: in_microseconds(v) for k, v in value.items()})
    if not pbj.is_message(value):
        return value
    cls = type(value)
    mi = info(cls)
    if mi.full_name == "google.protobuf.Duration":
        by_proto = {f.proto_name: f.name for f in mi.fields}
        nanos = getattr(value, by_proto["nanos"])
        return cls(**{by_proto["seconds"]: getattr(value, by_proto["seconds"]),
                      by_proto["nanos"]: nanos - nanos % 1000 if nanos >= 0 else -((-nanos) - (-nanos) % 1000)})
    return cls(**{a.alias: in_microseconds(stored(value, a.name)) for a in attrs.fields(cls)
                  if a.init and not a.name.startswith("_pbj_")})


def _has_duration(schema) -> bool:
    return "duration" in str(schema)


def engine_outputs(table, folder):
    """What DuckDB and Polars give back for ``table``: (name, something from_arrow takes) pairs."""
    ours = folder / "ours.parquet"
    pq.write_table(table, ours)
    with duckdb.connect() as con:
        con.register("t", table)
        yield "duckdb select", con.sql("SELECT * FROM t").arrow()
        yield "duckdb read_parquet", con.sql(f"SELECT * FROM read_parquet('{ours}')").arrow()
        if not _has_duration(table.schema):  # DuckDB writes an INTERVAL to Parquet as unsigned milliseconds
            con.sql(f"COPY (SELECT * FROM t) TO '{folder / 'duck.parquet'}' (FORMAT parquet)")
            yield "duckdb's parquet", pq.read_table(folder / "duck.parquet")
    frame = pl.from_arrow(table)
    yield "polars frame", frame
    frame.write_parquet(folder / "polars.parquet")
    yield "polars' parquet", pq.read_table(folder / "polars.parquet")
    with duckdb.connect() as con:
        yield "duckdb of polars' parquet", con.sql(f"SELECT * FROM read_parquet('{folder / 'polars.parquet'}')").arrow()


def check_engines(cls, messages, folder) -> None:
    kept = [in_microseconds(holdable(m)) for m in messages]
    table = pbj.arrow.to_arrow(kept, cls)
    for name, output in engine_outputs(table, folder):
        back = pbj.arrow.from_arrow(output, cls)
        assert equivalent(back, kept, unknown_fields=False), name


def run(suite: str, name: str, examples: int, folder) -> None:
    cls = namespace(suite)[name]
    if not pbj.arrow.arrow_schema(cls).names:
        pytest.skip("a message without fields is a table without columns, which the engines keep no rows of")

    @settings(max_examples=examples, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                     HealthCheck.filter_too_much, HealthCheck.function_scoped_fixture])
    @given(st.lists(values(cls, max_depth=2), min_size=1, max_size=3))
    def prop(messages):
        check_engines(cls, messages, folder)

    prop()


#: The CI selection, one example each: classes that hold every shape of the mapping between them (scalars,
#: enums, maps, packed lists, wrappers, oneofs, groups, Any/Struct/Value, Timestamps, Durations, recursion);
#: every class under ``-m slow``.
ENGINE_CASES = [("pbj-it", "proto.Everything"), ("pbj-it", "proto.MessageWithManyMaps"),
                ("pbj-it", "test.proto.Omnibus"), ("pbj-it", "proto.MessageWithEnums"),
                ("pbj-it", "proto.TimestampTest"),
                ("proto3", "protobuf_test_messages.proto3.TestAllTypesProto3"),
                ("proto2", "protobuf_test_messages.proto2.TestAllTypesProto2"),
                ("hapi", "proto.TransactionGetReceiptResponse"), ("hapi", "proto.NodeAddressBook")]
assert set(ENGINE_CASES) <= set(CASES)


@pytest.mark.parametrize("suite, name", ENGINE_CASES, ids=[f"{s}:{n}" for s, n in ENGINE_CASES])
def test_engines_give_the_messages_back(suite, name, tmp_path):
    run(suite, name, 1, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("suite, name", CASES, ids=[f"{s}:{n}" for s, n in CASES])
def test_engines_give_the_messages_back_many(suite, name, tmp_path):
    run(suite, name, 10, tmp_path)


@pytest.mark.slow
def test_the_block_through_the_engines(tmp_path):
    """The shipped block's items, through each engine's output and back (minutes: the table is 13,105 leaves wide)."""
    import gzip
    from importlib import resources

    from pbj.arrow.blocks import ITEM_TYPE, block_items

    shipped = resources.files("pbj") / "data"
    ns = pbj.load_descriptor_set((shipped / "hapi-v0.55.0.binpb").read_bytes())
    payloads = list(block_items(gzip.decompress((shipped / "000000000000000000000000000000497558.blk.gz")
                                                .read_bytes())))
    cls = ns[ITEM_TYPE]
    items = [pbj.decode(cls, p) for p in payloads]
    table = pbj.arrow.decode_to_arrow(cls, payloads)
    for name, output in engine_outputs(table, tmp_path):
        assert equivalent(pbj.arrow.from_arrow(output, cls), items, unknown_fields=False), name
