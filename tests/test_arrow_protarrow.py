"""pbj.arrow's schema against protarrow's, on the same schemas (Google's classes from the same descriptor set).

protarrow is configured as close to pbj's mapping as its options go (enums as
``dictionary<int32, string>``, timestamps in ns with UTC, recursion skipped).
Where both map a type, the Arrow types must be the same; the differences are
the ones docs/arrow.md lists, and this test knows each of them:

1. a oneof is one struct column (``which`` plus its members) in pbj; protarrow
   has each member as a nullable column of the message;
2. a message with no fields is a ``bool`` in pbj, an empty struct in protarrow;
3. recursion: protarrow stops at the first repetition of a message (an empty
   struct), pbj goes ``recursion_depth`` (1) levels deeper, then keeps the
   encoding (``binary``);
4. protarrow maps no proto2 group (it raises ``TypeError``); pbj maps a group as a struct.
"""

from __future__ import annotations

import pyarrow as pa
import pytest

import pbj.arrow
from tests.oracle import google_class
from tests.test_arrow_properties import CASES, namespace

protarrow = pytest.importorskip("protarrow")

CONFIG = protarrow.ProtarrowConfig(enum_type=pa.dictionary(pa.int32(), pa.string()), skip_recursive_messages=True)
SUITES = ("pbj-it", "proto3", "proto2")
COMPARED = [c for c in CASES if c[0] in SUITES]


def _flatten_oneofs(t: pa.StructType | pa.Schema, ours: bool) -> dict[str, pa.Field]:
    """Fields by name; in pbj's, a oneof struct's members are lifted into the message (difference 1)."""
    out: dict[str, pa.Field] = {}
    for f in t:
        if ours and pa.types.is_struct(f.type) and f.type.num_fields and pa.types.is_dictionary(f.type.field(0).type) \
                and f.type.field(0).name.lstrip("_") == "which":
            for member in list(f.type)[1:]:
                out[member.name] = member
        else:
            out[f.name] = f
    return out


def _same(ours: pa.DataType, theirs: pa.DataType, where: str, differences: list[str]) -> None:
    if pa.types.is_struct(theirs) and theirs.num_fields == 0:
        # 2 (an empty message) or 3 (protarrow's recursion stop)
        assert pa.types.is_boolean(ours) or pa.types.is_struct(ours) or pa.types.is_binary(ours), where
        differences.append(where)
        return
    if pa.types.is_binary(ours) and pa.types.is_struct(theirs):
        differences.append(where)  # 3: past pbj's recursion depth (protarrow went there as a struct)
        return
    if pa.types.is_struct(ours) and pa.types.is_struct(theirs):
        a, b = _flatten_oneofs(ours, True), _flatten_oneofs(theirs, False)
        assert set(a) == set(b), f"{where}: {sorted(set(a) ^ set(b))}"
        for name in a:
            assert a[name].nullable == b[name].nullable, f"{where}.{name}: nullable"
            _same(a[name].type, b[name].type, f"{where}.{name}", differences)
        return
    if pa.types.is_list(ours) and pa.types.is_list(theirs):
        assert ours.value_field.nullable == theirs.value_field.nullable, where
        assert ours.value_field.name == theirs.value_field.name, where
        _same(ours.value_type, theirs.value_type, f"{where}[]", differences)
        return
    if pa.types.is_map(ours) and pa.types.is_map(theirs):
        assert ours.key_type == theirs.key_type, where
        assert ours.item_field.nullable == theirs.item_field.nullable, where
        _same(ours.item_type, theirs.item_type, f"{where}{{}}", differences)
        return
    assert ours == theirs, f"{where}: pbj {ours}, protarrow {theirs}"


@pytest.mark.parametrize("suite, name", COMPARED, ids=[f"{s}:{n}" for s, n in COMPARED])
def test_schema_matches_protarrow(suite, name):
    cls = namespace(suite)[name]
    ours = pbj.arrow.arrow_schema(cls)
    try:
        theirs = protarrow.message_type_to_schema(google_class(name), CONFIG)
    except TypeError as exc:
        # protarrow maps no proto2 group; pbj maps a group as the message it is (a struct)
        assert "TYPE_GROUP" in str(exc)
        assert any(f.group for f in pbj.fields(cls)) or any(
            f.kind == "message" and any(g.group for g in pbj.fields(f.type)) for f in pbj.fields(cls))
        return
    differences: list[str] = []
    a, b = _flatten_oneofs(ours, True), _flatten_oneofs(theirs, False)
    assert set(a) == set(b), sorted(set(a) ^ set(b))
    for field_name in a:
        assert a[field_name].nullable == b[field_name].nullable, field_name
        _same(a[field_name].type, b[field_name].type, field_name, differences)


def test_the_differences_occur():
    """Each listed difference is met at least once (so the comparison above is not vacuous)."""
    everything = protarrow.message_type_to_schema(google_class("protobuf_test_messages.proto3.TestAllTypesProto3"),
                                                  CONFIG)
    ours = pbj.arrow.arrow_schema(namespace("proto3")["protobuf_test_messages.proto3.TestAllTypesProto3"])
    assert "oneof_uint32" in everything.names and "oneof_uint32" not in ours.names
    assert ours.field("oneof_field").type.field("oneof_uint32").type == pa.uint32()
    assert everything.field("recursive_message").type == pa.struct([])             # protarrow stops
    assert pa.types.is_struct(ours.field("recursive_message").type)                # pbj: one level more
    assert ours.field("recursive_message").type.field("recursive_message").type == pa.binary()
    assert ours.field("optional_timestamp").type == everything.field("optional_timestamp").type
