"""The main job on real input: a real Hedera block, decoded and encoded byte for byte.

The block and its schemas ship inside the package (``pbj/data``). Expected
figures come from the data's description in ``../shared/README.md`` (size,
items by kind) and from Google's protobuf decoding the same bytes.
"""

from __future__ import annotations

import collections
import gzip
from importlib import resources

import pytest

import pbj
from pbj import wire

BLOCK_TYPE = "com.hedera.hapi.block.stream.Block"
EXPECTED_KINDS = {
    "state_changes": 814, "event_transaction": 812, "transaction_result": 812,
    "block_header": 1, "event_header": 1, "round_header": 1, "block_proof": 1,
}


def _data(name: str) -> bytes:
    return resources.files("pbj").joinpath("data", name).read_bytes()


@pytest.fixture(scope="module")
def schema() -> bytes:
    return _data("hapi-v0.55.0.binpb")


@pytest.fixture(scope="module")
def raw() -> bytes:
    return gzip.decompress(_data("000000000000000000000000000000497558.blk.gz"))


@pytest.fixture(scope="module")
def block_cls(schema):
    return pbj.load_descriptor_set(schema)[BLOCK_TYPE]


@pytest.fixture(scope="module")
def block(block_cls, raw):
    return pbj.decode(block_cls, raw)


def _item_slices(raw: bytes) -> list[bytes]:
    """The payload of every top-level field 1 (``Block.items``), found with pbj.wire alone."""
    out = []
    pos = 0
    while pos < len(raw):
        tag, pos = wire.read_tag(raw, pos)
        assert tag == wire.make_tag(1, wire.WIRE_LEN)
        n, pos = wire.read_varint(raw, pos)
        out.append(raw[pos:pos + n])
        pos += n
    assert pos == len(raw)
    return out


def test_shipped_block_size(raw):
    assert len(raw) == 4_176_227


def test_items_by_kind(block):
    assert len(block.items) == 2_442
    kinds = collections.Counter(item.item.which for item in block.items)
    assert dict(kinds) == EXPECTED_KINDS


def test_kinds_match_google(block, schema, raw):
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    pool = descriptor_pool.DescriptorPool()
    for fd in descriptor_pb2.FileDescriptorSet.FromString(schema).file:
        pool.Add(fd)
    google = message_factory.GetMessageClass(pool.FindMessageTypeByName(BLOCK_TYPE)).FromString(raw)
    assert [i.WhichOneof("item") for i in google.items] == [i.item.which for i in block.items]
    assert google.SerializeToString(deterministic=True) == raw


def test_encode_forward_is_byte_exact(block, raw):
    assert pbj.encode(block) == raw


def test_encode_reverse_is_byte_exact(block, raw):
    assert pbj.encode(block, reverse=True) == raw


def test_encoded_size(block, raw):
    assert pbj.encoded_size(block) == len(raw)


def test_each_item_on_its_own(block, raw):
    slices = _item_slices(raw)
    assert len(slices) == len(block.items)
    for index, (item, expected) in enumerate(zip(block.items, slices, strict=True)):
        assert pbj.encode(item) == expected, index
        assert pbj.encode(item, reverse=True) == expected, index


def test_items_decode_alone(block, raw):
    item_cls = type(block.items[0])
    slices = _item_slices(raw)
    # Every kind at least once, decoded from its own slice.
    seen = set()
    for item, data in zip(block.items, slices, strict=True):
        kind = item.item.which
        if kind not in seen:
            seen.add(kind)
            assert pbj.decode(item_cls, data) == item
    assert seen == set(EXPECTED_KINDS)
