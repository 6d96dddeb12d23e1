"""What is timed: the block experiment and the hot-message comparison, for any codec.

A codec is described by a :class:`Codec` (decoders, encoders, a reader); the same functions time
pbj in the runner's process and Google's protobuf in a worker process, so every library goes
through the same loop, the same batches and the same timing code.

Block targets (see :mod:`pbj.bench.workload`), each timed per batch:

* ``decode``: decode every message of the batch (the cyclic garbage collector off, as in every
  other cell and as ``timeit`` does);
* ``decode_gc``: the same with the garbage collector on, as applications run: a decode that
  makes hundreds of thousands of objects triggers collections that walk all of them;
* ``decode_read``: decode them, then read every field of each (:mod:`pbj.bench.readers`);
* ``<encoder>_fresh``: encode every message of a batch decoded just before, outside the timed
  region, for each run: no size is cached on the objects;
* ``<encoder>_cached``: encode the same decoded objects again and again, after one forward
  encode before timing has cached every message's size (pbj keeps it on the object;
  Google's pure-Python backend caches it too; upb has no such cache).

Before timing, each encoder's output must equal the bytes the batch was cut from, and the reader's
checksum is recorded, so runners can check that every codec read the same values.

Hot message: a batch of ``batch`` messages; figures are µs per message. ``<encoder>`` encodes the
same built object ``batch`` times (sizes cached where the library caches them), ``<encoder>_fresh``
encodes ``batch`` copies decoded just before, ``decode`` and ``decode_read`` as above, and
``build`` builds ``batch`` messages from the plain values with the library's constructors (for
pbj: with the construction checks).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

from pbj.bench.readers import MASK
from pbj.bench.timing import Cell, measure, scale

__all__ = ["Codec", "run_block", "run_hot", "pbj_codec", "google_codec", "BLOCK_OPS"]


@dataclass
class Codec:
    """How one library decodes, encodes and reads the block's messages.

    Attributes:
        decode: ``{"item": fn, "block": fn}``: bytes -> message.
        encoders: name -> fn(message) -> bytes (pbj: ``forward`` and ``reverse``; Google: ``encode``).
        read: fn(message) -> checksum, reading every field.
        prime: run once on the "cached" objects before timing (a forward encode, caching sizes).
        same_message: for a library whose bytes may differ from the input's while meaning the same
            (betterproto2 writes fields in declaration order, not field-number order): ``(decoder
            name, input, its re-encoding) -> bool``, Google's protobuf parsing both to equal messages.
            ``None``: the bytes must be equal.
    """

    decode: dict[str, Callable[[bytes], Any]]
    encoders: dict[str, Callable[[Any], bytes]]
    read: Callable[[Any], int]
    prime: Callable[[Any], object]
    same_message: Callable[[str, bytes, bytes], bool] | None = None


def block_ops(encoders) -> list[str]:
    """The cell names of a codec with these encoder names, in report order."""
    ops = ["decode", "decode_gc", "decode_read"]
    for en in encoders:
        ops += [f"{en}_fresh", f"{en}_cached"]
    return ops


#: The cells of each codec on every block target.
BLOCK_OPS = {
    "pbj": block_ops(["forward", "reverse"]),
    "google": block_ops(["encode"]),
}


def pbj_codec(block_cls: type, item_cls: type) -> Codec:
    """pbj's codec for a block and its item class."""
    import pbj
    from pbj.bench.readers import PbjReader

    return Codec(
        decode={"item": lambda b: pbj.decode(item_cls, b), "block": lambda b: pbj.decode(block_cls, b)},
        encoders={"forward": pbj.encode, "reverse": lambda o: pbj.encode(o, reverse=True)},
        read=PbjReader().read,
        prime=pbj.encode,
    )


def google_codec(descriptor_set: bytes, block_type: str, item_type: str) -> Codec:
    """Google protobuf's codec (the backend this process loaded) for the block and item types."""
    from pbj.bench.peers.google_peer import load_classes
    from pbj.bench.readers import GoogleReader

    classes = load_classes(descriptor_set, [block_type, item_type])
    block_cls, item_cls = classes[block_type], classes[item_type]
    return Codec(
        decode={"item": item_cls.FromString, "block": block_cls.FromString},
        encoders={"encode": lambda o: o.SerializeToString()},
        read=GoogleReader().read,
        prime=lambda o: o.SerializeToString(),
    )


def run_block(codec: Codec, raw: bytes, targets: dict[str, tuple[str, list]], timing: dict,
              progress: Callable[[str], None] = lambda _text: None, ops: Collection[str] | None = None) -> dict:
    """Check and time ``codec`` on every target.

    Args:
        codec: the library.
        raw: the block's bytes.
        targets: name -> ``(message, slices)``: ``"item"`` or ``"block"`` and ``(begin, end)`` offsets.
        timing: keyword arguments of :func:`pbj.bench.timing.measure`.
        progress: called with a short text before each target.
        ops: time only these cells (names as in :data:`BLOCK_OPS`); ``None``: every cell. The slow
            pure-Python peers leave out ``decode_gc`` in the documentation's run.

    Returns:
        name -> ``{"cells": {op: summary}, "bytes_equal": {encoder: bool}, "checksum": int}``.
        A target whose bytes do not match is reported with ``"cells": {}`` (not timed), the batch's
        ``"bytes"`` and each encoder's ``"encoded_bytes"`` (what it wrote instead), unless the codec's
        ``same_message`` finds the same message in them (``"same_message": {encoder: bool}``: timed).
    """
    out = {}
    for name, (message, slices) in targets.items():
        progress(name)
        blobs = [raw[b:e] for b, e in slices]
        dec = codec.decode[message]
        read = codec.read
        objs = [dec(b) for b in blobs]
        checksum = sum(read(o) for o in objs) & MASK
        equal = {en: all(enc(dec(b)) == b for b in blobs) for en, enc in codec.encoders.items()}
        del objs
        result: dict = {"bytes_equal": equal, "checksum": checksum, "cells": {}}
        out[name] = result
        same = codec.same_message
        if same is not None and not all(equal.values()):
            result["same_message"] = {en: equal[en] or all(same(message, b, enc(dec(b))) for b in blobs)
                                      for en, enc in codec.encoders.items()}
        if not all(equal[en] or (result.get("same_message") or {}).get(en) for en in equal):
            result["bytes"] = sum(len(b) for b in blobs)
            result["encoded_bytes"] = {en: sum(len(enc(dec(b))) for b in blobs) for en, enc in codec.encoders.items()}
            continue
        cached = [dec(b) for b in blobs]
        for o in cached:
            codec.prime(o)

        def fresh(blobs=blobs, dec=dec):
            return [dec(b) for b in blobs]

        cells: dict[str, Cell] = {}
        for en, enc in codec.encoders.items():
            # defs, not lambdas with defaults (which mypy cannot type): the same code
            def encode_fresh(objs, enc=enc):
                return [enc(o) for o in objs]

            def encode_cached(_arg, enc=enc, cached=cached):
                return [enc(o) for o in cached]

            cells[f"{en}_fresh"] = Cell(run=encode_fresh, prepare=fresh)
            cells[f"{en}_cached"] = Cell(run=encode_cached)
        if ops is not None:
            cells = {name: c for name, c in cells.items() if name in ops}
        encodes = measure(cells, **timing) if cells else {}
        del cached

        def decode_read(_arg, blobs=blobs, dec=dec, read=read):
            objs = [dec(b) for b in blobs]
            for o in objs:
                read(o)
            return objs

        def decode_only(_arg, fresh=fresh):
            return fresh()

        decode_cells = {"decode": Cell(run=decode_only), "decode_gc": Cell(run=decode_only, gc=True),
                        "decode_read": Cell(run=decode_read)}
        if ops is not None:
            decode_cells = {name: c for name, c in decode_cells.items() if name in ops}
        decodes = measure(decode_cells, **timing) if decode_cells else {}
        result["cells"] = {**decodes, **encodes}
    return out


def run_hot(module: Any, values: dict, expected: bytes, checksum: int, batch: int, timing: dict) -> dict:
    """Check and time one library on the hot message.

    Args:
        module: a peer module (``build_hot``, ``encode``, ``decode``, ``read_all``, ``version``;
            optionally ``encode_canonical`` and ``encode_reverse``).
        values: the hot message as a plain dict (:data:`pbj.bench.hot_values.HOT_VALUE`).
        expected: pbj's encoding of it; the library's must be equal before it is timed.
        checksum: pbj's ``read_all`` of it; the library's must be equal too.
        batch: messages per timed run.
        timing: keyword arguments of :func:`pbj.bench.timing.measure`.

    Returns:
        ``{"version", "size", "bytes_equal", "roundtrip_equal", "checksum_equal", "batch", "ops"}``,
        ``ops``: name -> summary in µs per message (empty when a check failed).
    """
    obj = module.build_hot(values)
    encoders = {"encode": getattr(module, "encode_canonical", module.encode)}
    if hasattr(module, "encode_canonical"):
        encoders["plain"] = module.encode
    if hasattr(module, "encode_reverse"):
        encoders["reverse"] = module.encode_reverse
    decode, read = module.decode, module.read_all
    data = encoders["encode"](obj)
    result = {
        "version": module.version(),
        "size": len(data),
        # "plain" is Google's SerializeToString(): map entries in hash order, not canonical
        "bytes_equal": all(enc(obj) == expected for en, enc in encoders.items() if en != "plain"),
        "roundtrip_equal": encoders["encode"](decode(expected)) == expected,
        "checksum_equal": read(decode(expected)) == checksum and read(obj) == checksum,
        "batch": batch,
        "ops": {},
    }
    if not (result["bytes_equal"] and result["roundtrip_equal"] and result["checksum_equal"]):
        result["hex"] = data.hex()
        return result
    reps = range(batch)

    def fresh():
        return [decode(expected) for _ in reps]

    cells: dict[str, Cell] = {}
    for en, enc in encoders.items():
        # defs, not lambdas with defaults (which mypy cannot type): the same code
        def encode_one(_arg, enc=enc):
            return [enc(obj) for _ in reps]

        def encode_fresh(objs, enc=enc):
            return [enc(o) for o in objs]

        cells[en] = Cell(run=encode_one)
        cells[f"{en}_fresh"] = Cell(run=encode_fresh, prepare=fresh)

    def decode_read(_arg):
        objs = [decode(expected) for _ in reps]
        for o in objs:
            read(o)
        return objs

    cells["build"] = Cell(run=lambda _arg: [module.build_hot(values) for _ in reps])
    cells["decode"] = Cell(run=lambda _arg: fresh())
    cells["decode_read"] = Cell(run=decode_read)
    result["ops"] = {name: scale(s, batch) for name, s in measure(cells, **timing).items()}
    return result
