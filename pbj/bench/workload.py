"""The benchmark's data: a block (the real Hedera block shipped with pbj by default), its schema,
its items split by kind, and the batches ("targets") every codec is timed on.

A *target* is a batch of encoded messages that each codec decodes and encodes in turn:

* ``<KIND>/first``: the first ``first`` (200) items of one ``BlockItem`` kind, each a message;
* ``<KIND>/all``: every item of that kind;
* ``BLOCK/first``: the first ``first`` items of the block, whatever their kind;
* ``BLOCK/all``: the whole block, as one ``Block`` message.

The kinds are STATE_CHANGES, TRANSACTION_RESULT and EVENT_TRANSACTION (the members of
``BlockItem``'s oneof ``item``), as in the Java PBJ team's measurements; for another block, the
three most frequent kinds are used when those are missing. Items are split off the block with
a wire-level walk (protobuf.dev "Encoding": "Message Structure"), so every codec gets exactly
the bytes that appear in the block.
"""

from __future__ import annotations

import collections
import gzip
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import pbj
from pbj import wire
from pbj.schema import info

__all__ = [
    "BLOCK_FILE", "SCHEMA_FILE", "BLOCK_TYPE", "KINDS", "Workload", "Target",
    "read_block_file", "load_schema", "load_workload", "split_fields",
]

BLOCK_FILE = "000000000000000000000000000000497558.blk.gz"
SCHEMA_FILE = "hapi-v0.55.0.binpb"
BLOCK_TYPE = "com.hedera.hapi.block.stream.Block"
KINDS = ("state_changes", "transaction_result", "event_transaction")


@dataclass
class Target:
    """One batch of encoded messages.

    Attributes:
        name: ``"<KIND>/first"``, ``"<KIND>/all"``, ``"BLOCK/first"`` or ``"BLOCK/all"``.
        kind: the item kind in upper case (``"BLOCK"`` for the block targets).
        message: ``"item"`` (each blob is a ``BlockItem``) or ``"block"`` (one ``Block``).
        slices: ``(begin, end)`` byte offsets of each blob in the block's bytes.
        items: how many block items the batch holds (the whole block's count for ``BLOCK/all``).
    """

    name: str
    kind: str
    message: str
    slices: list[tuple[int, int]]
    items: int = 0

    def __post_init__(self) -> None:
        if not self.items:
            self.items = len(self.slices)

    def blobs(self, raw: bytes) -> list[bytes]:
        """The encoded messages of this batch, cut from the block's bytes ``raw``."""
        return [raw[b:e] for b, e in self.slices]

    def describe(self, raw: bytes) -> dict:
        """``{"kind", "message", "items", "bytes"}`` for reports (``items``: messages in the batch)."""
        return {"kind": self.kind, "message": self.message, "items": self.items,
                "bytes": sum(e - b for b, e in self.slices)}


@dataclass
class Workload:
    """A loaded block and everything derived from it.

    Attributes:
        raw: the block's bytes (cut to its first ``max_items`` items if asked).
        descriptor_set: the schema as a serialized ``FileDescriptorSet``.
        block_type, item_type: full names of the block message and of its item message.
        block_cls, item_cls: pbj's classes for them.
        kinds: the item kind of every item, in block order (oneof member names).
        targets: name -> :class:`Target`, in report order.
        source: where the block came from (a file name).
    """

    raw: bytes
    descriptor_set: bytes
    block_type: str
    item_type: str
    block_cls: type
    item_cls: type
    kinds: list[str]
    targets: dict[str, Target] = field(default_factory=dict)
    source: str = ""


def read_block_file(path: str | Path | None) -> tuple[bytes, str]:
    """The raw bytes of a block file (gzip is recognised by its magic bytes) and its name.

    ``None`` reads the block shipped in ``pbj/data``.

    Raises:
        OSError: the file cannot be read.
    """
    if path is None:
        data = resources.files("pbj").joinpath("data", BLOCK_FILE).read_bytes()
        name = BLOCK_FILE
    else:
        data = Path(path).read_bytes()
        name = str(path)
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return data, name


def load_schema(descriptor_set: str | Path | None = None, proto: list[str] | None = None,
                include: list[str] | None = None) -> bytes:
    """The schema as ``FileDescriptorSet`` bytes: a file, ``.proto`` files compiled with protoc, or
    the HAPI v0.55.0 set shipped in ``pbj/data`` when neither is given.

    Raises:
        OSError: a file cannot be read.
        subprocess.CalledProcessError: protoc refused the ``.proto`` files (needs ``grpcio-tools``).
    """
    if descriptor_set is not None:
        return Path(descriptor_set).read_bytes()
    if proto:
        from pbj.bench.peers.google_peer import compile_descriptor_set

        dirs = [Path(i) for i in include or ()] or sorted({Path(p).resolve().parent for p in proto})
        try:
            import grpc_tools
            dirs.append(Path(grpc_tools.__file__).parent / "_proto")
        except ImportError:
            pass
        return compile_descriptor_set([Path(p) for p in proto], dirs)
    return resources.files("pbj").joinpath("data", SCHEMA_FILE).read_bytes()


def split_fields(raw: bytes, number: int) -> list[tuple[int, int, int]]:
    """``(tag_start, payload_begin, payload_end)`` of every LEN field ``number`` at the top level of ``raw``.

    Raises:
        pbj.DecodeError: ``raw`` is not a valid sequence of fields.
    """
    out = []
    pos, end = 0, len(raw)
    while pos < end:
        start = pos
        tag, pos = wire.read_tag(raw, pos)
        if tag >> 3 == number and tag & 7 == wire.WIRE_LEN:
            n, pos = wire.read_varint(raw, pos)
            out.append((start, pos, pos + n))
            pos += n
        else:
            pos = wire.skip_field(raw, pos, tag, end, 100)
    return out


def _items_field(block_cls: type):
    for f in info(block_cls).fields:
        if f.repeated and f.kind == "message":
            return f
    raise pbj.SchemaError(f"{info(block_cls).full_name} has no repeated message field to take items from")


def _kind_of(raw: bytes, begin: int, end: int, members: dict[int, str]) -> str:
    """The oneof member set in the item ``raw[begin:end]``: the last member field on the wire."""
    kind = "(none)"
    pos = begin
    while pos < end:
        tag, pos = wire.read_tag(raw, pos)
        kind = members.get(tag >> 3, kind)
        pos = wire.skip_field(raw, pos, tag, end, 100)
    return kind


def load_workload(block: str | Path | None = None, schema: bytes | None = None, *,
                  block_type: str = BLOCK_TYPE, first: int = 200, max_items: int | None = None) -> Workload:
    """Load a block and its schema and define the targets.

    Args:
        block: a block file (raw or gzip); ``None`` for the shipped one.
        schema: ``FileDescriptorSet`` bytes (:func:`load_schema`); ``None`` for the shipped HAPI.
        block_type: full name of the block message; its first repeated message field holds the items.
        first: how many items the ``/first`` targets take.
        max_items: keep only the first this many items of the block (``--quick``).

    Raises:
        OSError, pbj.PbjError: the file or schema cannot be read or decoded.
        KeyError: ``block_type`` is not in the schema.
    """
    raw, source = read_block_file(block)
    schema = schema if schema is not None else load_schema()
    ns = pbj.load_descriptor_set(schema)
    block_cls = ns[block_type]
    items = _items_field(block_cls)
    item_cls = items.type
    fields_ = split_fields(raw, items.number)
    if max_items is not None and len(fields_) > max_items:
        raw = b"".join(raw[t:e] for t, _b, e in fields_[:max_items])
        fields_ = split_fields(raw, items.number)
    members = {m.number: m.name for o in info(item_cls).oneofs for m in o.members}
    kinds = [_kind_of(raw, b, e, members) for _t, b, e in fields_]
    w = Workload(raw=raw, descriptor_set=schema, block_type=block_type,
                 item_type=info(item_cls).full_name, block_cls=block_cls, item_cls=item_cls,
                 kinds=kinds, source=source)
    counts = collections.Counter(kinds)
    chosen = [k for k in KINDS if k in counts] or [k for k, _n in counts.most_common(3)]
    slices = [(b, e) for _t, b, e in fields_]
    for kind in chosen:
        mine = [s for s, k in zip(slices, kinds, strict=True) if k == kind]
        label = kind.upper()
        w.targets[f"{label}/first"] = Target(f"{label}/first", label, "item", mine[:first])
        w.targets[f"{label}/all"] = Target(f"{label}/all", label, "item", mine)
    w.targets["BLOCK/first"] = Target("BLOCK/first", "BLOCK", "item", slices[:first])
    w.targets["BLOCK/all"] = Target("BLOCK/all", "BLOCK", "block", [(0, len(raw))], len(slices))
    return w
