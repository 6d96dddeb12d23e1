"""The fuzz targets shared by the hypothesis tests (``tests/test_fuzz.py``) and the atheris runs here.

Each check takes one input and raises ``AssertionError`` (or lets an
unexpected exception escape) when a property of hostile-input handling
breaks; it returns normally otherwise. The properties (issue 6):

* :func:`check_decode`: ``pbj.decode`` returns or raises ``pbj.DecodeError``
  only, with a list path and an offset inside the input; when Google's
  protobuf (upb) accepts the same bytes for the same schema, pbj accepts them
  too and both re-encode to the same bytes; when pbj accepts, both writers
  agree and decoding the re-encoding gives an equivalent value.
* :func:`check_json`: ``pbj.from_json`` returns or raises ``pbj.DecodeError``
  (``pbj.JSONError`` is one); an accepted value encodes to binary and back,
  and through ``to_json`` and back, unchanged.
* :func:`check_loader`: ``pbj.load_descriptor_set`` returns or raises
  ``SchemaError``/``DecodeError``; a failed load registers nothing, and every
  class of a successful load compiles, decodes and encodes the empty message.

Byte strings differ from Google's in two documented cases only, both checked
value by value instead (see ``docs/security.md``): a map with two or more
entries (upb's deterministic map order is not ascending, see
``tests/test_differential.py``) and a map entry holding an unknown field. A
``float`` NaN is compared by its bytes like any value: its bits come back as
they arrived (:mod:`pbj.codec.float32`).

Targets (:data:`DECODE_TARGETS`): the hand-declared classes of
``tests/everything_classes.py`` (pbj-it's ``everything.proto`` and
``tests/protos/features.proto``), a proto2 schema with groups, defaults and a
recursive map (:data:`PROTO2`, compiled by protoc and loaded with
``pbj.load_descriptor_set``), and ``BlockItem`` of the shipped Hedera schema.
"""

from __future__ import annotations

import functools
import gzip
import struct
import sys
import tempfile
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

_ROOT = Path(__file__).resolve().parents[1]
if str(_ROOT) not in sys.path:  # the atheris scripts run as `python fuzz/fuzz_x.py`
    sys.path.insert(0, str(_ROOT))

import pbj  # noqa: E402
import pbj.testing  # noqa: E402
from pbj import wire  # noqa: E402
from pbj.codec import codec_of  # noqa: E402
from pbj.schema import FrozenMap, OneOf, info, is_message  # noqa: E402

BLOCK_ITEM = "com.hedera.hapi.block.stream.BlockItem"

#: A proto2 schema for the differential: groups (singular, repeated, inside a group), proto2
#: defaults, unpacked and packed repeated scalars, a oneof, a recursive map and a float.
#: No string and no enum fields: upb does not check UTF-8 in proto2 strings and keeps unknown
#: numbers of closed enums as unknown fields, where pbj checks UTF-8 and keeps open enums.
PROTO2 = """
syntax = "proto2";
package pbjfuzz;
message P2 {
  optional int32 a = 1 [default = -5];
  optional bytes b = 2 [default = "x\\001"];
  repeated sint64 c = 3;
  repeated fixed32 d = 4 [packed = true];
  optional group G = 5 { optional uint64 x = 6; repeated bytes y = 7; optional P2 inner = 8; }
  repeated group R = 9 { optional double z = 10; optional group Deep = 11 { optional int64 w = 12; } }
  optional P2 child = 13;
  oneof o { bytes ob = 14; P2 om = 15; }
  map<int32, P2> m = 16;
  optional float fl = 17;
  repeated P2 kids = 18;
}
"""


class Target:
    """One message type under test: the pbj class and Google's class of the same schema."""

    def __init__(self, name: str, cls: type, google: type) -> None:
        self.name = name
        self.cls = cls
        self.google = google

    def __repr__(self) -> str:
        return f"Target({self.name})"


def shipped(name: str) -> bytes:
    """The bytes of ``pbj/data/<name>`` (gzip files decompressed)."""
    data = resources.files("pbj").joinpath("data", name).read_bytes()
    return gzip.decompress(data) if name.endswith(".gz") else data


@functools.cache
def hapi_set() -> bytes:
    """The shipped HAPI ``FileDescriptorSet``."""
    return shipped("hapi-v0.55.0.binpb")


@functools.cache
def block_bytes() -> bytes:
    """The shipped Hedera block (about 4 MB)."""
    return shipped("000000000000000000000000000000497558.blk.gz")


@functools.cache
def block_items() -> tuple[bytes, ...]:
    """The encoding of every ``BlockItem`` of the shipped block, cut with pbj.wire alone."""
    raw = block_bytes()
    out = []
    pos = 0
    while pos < len(raw):
        _, pos = wire.read_tag(raw, pos)
        n, pos = wire.read_varint(raw, pos)
        out.append(raw[pos:pos + n])
        pos += n
    return tuple(out)


@functools.cache
def proto2_set() -> bytes:
    """:data:`PROTO2` compiled by protoc (and added to Google's default pool)."""
    from tests.oracle import protoc

    tmp = Path(tempfile.mkdtemp(prefix="pbj-fuzz-"))
    (tmp / "pbj_fuzz_p2.proto").write_text(PROTO2)
    return protoc([tmp / "pbj_fuzz_p2.proto"], [tmp])


@functools.cache
def decode_targets() -> tuple[Target, ...]:
    """Every decode target, with its codec compiled."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    from tests import everything_classes as ec
    from tests.oracle import google_class

    ec.compile_oracle()
    out = [Target(cls.__name__.lower(), cls, google_class(info(cls).full_name))
           for cls in (ec.Everything, ec.Maps, ec.Node, ec.Choice, ec.Presence, ec.Unpacked)]
    p2 = pbj.load_descriptor_set(proto2_set())["pbjfuzz.P2"]
    out.append(Target("proto2", p2, google_class("pbjfuzz.P2")))
    pool = descriptor_pool.DescriptorPool()
    for fd in descriptor_pb2.FileDescriptorSet.FromString(hapi_set()).file:
        pool.Add(fd)
    item = pbj.load_descriptor_set(hapi_set())[BLOCK_ITEM]
    out.append(Target("blockitem", item, message_factory.GetMessageClass(pool.FindMessageTypeByName(BLOCK_ITEM))))
    for t in out:
        codec_of(t.cls)
    return tuple(out)


#: The native engine's extra targets (:func:`native_targets`): extension ranges and extensions of
#: every kind, a message set, closed enums, strings that keep any bytes, sub-messages that merge.
NATIVE_PROTO = """
syntax = "proto2";
package pbjfuzzx;
enum Shade { DARK = 0; LIGHT = 1; MID = 5; }
message X {
  optional int32 a = 1;
  optional Shade s = 2;
  repeated Shade ss = 3;
  repeated Shade ps = 4 [packed = true];
  optional string t = 5;
  map<string, X> m = 6;
  optional X child = 7;
  optional group G = 8 { optional int32 g = 9; optional X gx = 10; }
  oneof o { X ox = 11; Shade os = 12; string ot = 13; }
  extensions 100 to 199;
  optional int32 z = 200;
  extensions 300 to max;
}
extend X {
  optional int32 e_int = 100;
  optional X e_msg = 101;
  repeated Shade e_shades = 102;
  repeated sint32 e_packed = 103 [packed = true];
  optional group EGroup = 104 { optional int32 q = 105; }
  optional string e_str = 300;
  repeated X e_msgs = 301;
}
message Set {
  option message_set_wire_format = true;
  extensions 4 to max;
}
message Item { optional int32 i = 1; optional X x = 2; }
extend Set { optional Item item_ext = 1000; optional X x_ext = 1001; }
"""


@functools.cache
def native_set() -> bytes:
    """:data:`NATIVE_PROTO` compiled by protoc (and added to Google's default pool)."""
    from tests.oracle import protoc

    tmp = Path(tempfile.mkdtemp(prefix="pbj-fuzz-"))
    (tmp / "pbj_fuzz_native.proto").write_text(NATIVE_PROTO)
    return protoc([tmp / "pbj_fuzz_native.proto"], [tmp])


@functools.cache
def native_targets() -> tuple[Target, ...]:
    """The native engine's extra targets (``x``: extensions and the rest, ``set``: a message set)."""
    from tests.oracle import google_class

    ns = pbj.load_descriptor_set(native_set())
    out = (Target("x", ns["pbjfuzzx.X"], google_class("pbjfuzzx.X")),
           Target("set", ns["pbjfuzzx.Set"], google_class("pbjfuzzx.Set")))
    for t in out:
        codec_of(t.cls)
    return out


def native_seeds() -> dict[str, list[bytes]]:
    """Valid encodings of the native targets, extensions set (Google's writer, deterministic)."""
    x, s = (google_class_of(t) for t in native_targets())
    g = x(a=1, s=5, ss=[0, 1], ps=[5, 1], t="t", child=x(a=2))
    g.m["k"].a = 3
    g.G.g = 4
    g.ox.a = 6
    pool = x.DESCRIPTOR.file.pool
    ext = {n: pool.FindExtensionByName(f"pbjfuzzx.{n}") for n in
           ("e_int", "e_msg", "e_shades", "e_packed", "egroup", "e_str", "e_msgs", "item_ext", "x_ext")}
    g.Extensions[ext["e_int"]] = 7
    g.Extensions[ext["e_msg"]].a = 8
    g.Extensions[ext["e_shades"]].extend([1, 5])
    g.Extensions[ext["e_packed"]].extend([-1, 2])
    g.Extensions[ext["egroup"]].q = 9
    g.Extensions[ext["e_str"]] = "e"
    g.Extensions[ext["e_msgs"]].add().a = 10
    m = s()
    m.Extensions[ext["item_ext"]].i = 11
    m.Extensions[ext["x_ext"]].a = 12
    return {"x": [g.SerializeToString(deterministic=True), x(a=1, z=2).SerializeToString()],
            "set": [m.SerializeToString(deterministic=True)]}


#: The conformance suite's test messages, fuzzed by the native harness (every scalar, packed and
#: unpacked lists, maps of every key type, oneofs, groups, nested and recursive messages, proto2 and proto3).
CONFORMANCE_MESSAGES = ("protobuf_test_messages.proto3.TestAllTypesProto3",
                        "protobuf_test_messages.proto2.TestAllTypesProto2")


@functools.cache
def conformance_targets() -> tuple[Target, ...]:
    """``TestAllTypesProto3`` and ``TestAllTypesProto2`` of ``../shared/protos/google``, loaded from protoc's set."""
    from tests.oracle import google_class, suite_set

    out = []
    for suite, full_name in zip(("proto3", "proto2"), CONFORMANCE_MESSAGES, strict=True):
        cls = pbj.load_descriptor_set(suite_set(suite))[full_name]
        codec_of(cls)
        out.append(Target(f"conformance-{suite}", cls, google_class(full_name)))
    return tuple(out)


def _fields(raw: bytes) -> Iterator[tuple[int, int, bytes | int]]:
    """(field number, wire type, value) of each field of a valid encoding: a LEN field's bytes, a varint's number."""
    pos = 0
    while pos < len(raw):
        tag, pos = wire.read_tag(raw, pos)
        number, kind = tag >> 3, tag & 7
        if kind == 2:
            n, pos = wire.read_varint(raw, pos)
            yield number, kind, raw[pos:pos + n]
            pos += n
        elif kind == 0:
            n, pos = wire.read_varint(raw, pos)
            yield number, kind, n
        else:
            raise ValueError(f"wire type {kind} in a conformance request")


def conformance_seeds(shared: Path) -> dict[str, list[bytes]]:
    """The binary payloads of every conformance request (``conformance/vectors.jsonl``) for each test message.

    A ``ConformanceRequest`` is read with :mod:`pbj.wire` alone: ``protobuf_payload`` (field 1) and
    ``message_type`` (field 4); the payloads include the runner's invalid inputs (truncations,
    overlong varints, bad UTF-8, wrong wire types)."""
    import json

    by_type: dict[str, list[bytes]] = {name: [] for name in CONFORMANCE_MESSAGES}
    for line in (shared / "conformance" / "vectors.jsonl").read_text().splitlines():
        request = {n: v for n, _, v in _fields(bytes.fromhex(json.loads(line)["request_hex"]))}
        if 1 in request and request.get(4, b"").decode() in by_type:
            by_type[request[4].decode()].append(request[1])
    targets = zip(conformance_targets(), CONFORMANCE_MESSAGES, strict=True)
    return {t.name: by_type[full_name] for t, full_name in targets}


def case_targets(shared: Path) -> tuple[tuple[Target, list[bytes]], ...]:
    """One target per binary case of ``../shared/cases/field-cases*.jsonl`` (its own schema, loaded with
    ``pbj.load_proto``), with the case's bytes (``input_hex``, ``bytes_hex``, ``reencoded_hex``) as seeds."""
    import json

    out = []
    folder = Path(tempfile.mkdtemp(prefix="pbj-fuzz-cases-"))
    for name in ("field-cases.jsonl", "field-cases-r2.jsonl"):
        for line in (shared / "cases" / name).read_text().splitlines():
            case = json.loads(line)
            raw = [bytes.fromhex(case[k]) for k in ("input_hex", "bytes_hex", "reencoded_hex") if k in case]
            if not raw or case.get("mode") == "json_parse":
                continue
            path = folder / f"{case['id']}.proto"
            path.write_text(case["proto"])
            cls = pbj.load_proto([path])[case["message"]]
            codec_of(cls)
            out.append((Target(f"case-{case['id']}", cls, None), raw))
    return tuple(out)


def google_class_of(t: Target) -> type:
    """The Google class of a target."""
    return t.google


def target(name: str) -> Target:
    """The decode target called ``name`` (``everything``, ``maps``, ``node``, ``proto2``, ``blockitem`` …)."""
    for t in decode_targets():
        if t.name == name:
            return t
    raise KeyError(name)


# ---------------------------------------------------------------- decode

def _messages(obj):
    """``obj`` and every message inside it."""
    yield obj
    mi = info(type(obj))
    for f in mi.all_fields():
        if f.kind != "message" and not (f.is_map and is_message(f.map_value)):
            continue
        if f.oneof is not None:
            value = getattr(obj, f.oneof)
            values = (value[1],) if isinstance(value, OneOf) and value[0] == f.name else ()
        else:
            value = getattr(obj, f.name)
            values = value.values() if f.is_map else value if f.repeated else () if value is None else (value,)
        for v in values:
            yield from _messages(v)


def _unknown_numbers(raw: bytes) -> set[tuple[int, int]]:
    """(field number, wire type) of each top-level record of unknown-field bytes."""
    out = set()
    pos = 0
    while pos < len(raw):
        tag, pos = wire.read_tag(raw, pos)
        pos = wire.skip_field(raw, pos, tag, len(raw), 100)
        out.add((tag >> 3, tag & 7))
    return out


def _loose(obj) -> str | None:
    """Why pbj's bytes for ``obj`` may differ from upb's, or ``None`` (see the module docstring).

    ``"entry"``: a map entry holding an unknown field is kept whole as an unknown field (pbj keeps
    its bytes as they came, upb writes the entry again: key, value, then its unknown fields).
    ``"order"``: a map of 2+ entries (same length, same values). A float32 NaN needs no
    loosening: its bits come back as they arrived (:mod:`pbj.codec.float32`).
    """
    why = None
    for m in _messages(obj):
        mi = info(type(m))
        maps = {f.number for f in mi.fields if f.is_map}
        if maps and any(n in maps and wt == wire.WIRE_LEN for n, wt in _unknown_numbers(m._pbj_unknown)):
            return "entry"
        for f in mi.all_fields():
            if f.is_map and f.oneof is None and len(getattr(m, f.name)) > 1:
                why = "order"
    return why


def _check_error(err: pbj.DecodeError, data: bytes) -> None:
    assert type(err) is pbj.DecodeError, type(err)
    assert isinstance(err.reason, str) and err.reason
    assert isinstance(err.path, list)
    for part in err.path:
        assert isinstance(part, str | int | tuple), err.path
    assert isinstance(err.offset, int) and 0 <= err.offset <= len(data), (err.offset, len(data))
    str(err)


#: Reasons for which pbj is knowingly stricter than upb (see docs/security.md, "Known differences"):
#: a 10-byte varint whose last byte sets bits above the 64th (upb, C++, Java and Google's
#: pure-Python decoder drop those bits; pbj, like Go's protowire, refuses the varint), and field
#: number 0 inside an unknown group (upb skips an unknown group without checking its field
#: numbers; pbj refuses field number 0 wherever it is, as upb does everywhere else).
KNOWN_STRICTER = ("varint overflows 64 bits", "field number 0 is not allowed")

#: Counts of outcomes, for the report of a long run.
STATS = {"inputs": 0, "accepted": 0, "rejected": 0, "google_accepted": 0, "only_pbj_accepts": 0,
         "loose_compare": 0, "known_stricter": 0}


def check_decode(t: Target, data: bytes, *, max_depth: int = pbj.DEFAULT_MAX_DEPTH) -> object | None:
    """Decode ``data`` as ``t.cls`` and check every property of the module docstring.

    Returns:
        The decoded value, or ``None`` when pbj rejected the input.

    Raises:
        AssertionError: a property does not hold (any other exception is a fault too).
    """
    from google.protobuf.message import DecodeError as GoogleDecodeError

    STATS["inputs"] += 1
    reason = None
    try:
        obj = pbj.decode(t.cls, data, max_depth=max_depth)
    except pbj.DecodeError as err:
        _check_error(err, data)
        obj = None
        reason = err.reason
    google = None
    if t.google is not None and max_depth == pbj.DEFAULT_MAX_DEPTH:
        try:
            google = t.google.FromString(data)
        except GoogleDecodeError:
            google = None
    if google is not None:
        STATS["google_accepted"] += 1
        if obj is None and reason in KNOWN_STRICTER:
            STATS["known_stricter"] += 1
            STATS[f"known_stricter: {reason}"] = STATS.get(f"known_stricter: {reason}", 0) + 1
            return None
        assert obj is not None, f"upb accepts {data.hex()} as {t.name}, pbj rejects it"
    if obj is None:
        STATS["rejected"] += 1
        return None
    STATS["accepted"] += 1
    if google is None and t.google is not None:
        STATS["only_pbj_accepts"] += 1
    assert isinstance(obj, t.cls)
    out = pbj.encode(obj)
    assert pbj.encode(obj, reverse=True) == out
    assert pbj.encoded_size(obj) == len(out)
    back = pbj.decode(t.cls, out, max_depth=max_depth)
    assert pbj.testing.equivalent(back, obj), (back, obj)
    assert pbj.encode(back) == out
    if google is not None:
        expected = google.SerializePartialToString(deterministic=True)
        if out != expected:
            STATS["loose_compare"] += 1
            why = _loose(obj)
            assert why, f"{t.name}: upb writes {expected.hex()}, pbj {out.hex()} (input {data.hex()})"
            theirs = pbj.decode(t.cls, expected)
            if why == "order":
                assert len(out) == len(expected)
                assert pbj.testing.equivalent(theirs, obj), (theirs, obj)
            else:
                assert pbj.testing.equivalent(theirs, obj, unknown_fields=False), (theirs, obj)
    return obj


# ---------------------------------------------------------------- mutations

def mutate(data: bytes, ops: list[tuple[int, int, bytes]]) -> bytes:
    """Apply edit operations to ``data``.

    Each op is ``(kind, where, payload)``: kind 0 replaces the byte at
    ``where`` with ``payload[0]``, 1 inserts ``payload``, 2 deletes
    ``len(payload) or 1`` bytes, 3 truncates at ``where``, 4 flips one bit
    (``payload[0] & 7``), 5 inserts a huge varint (a declared length or count of
    up to 2**64-1, from ``payload``), 6 duplicates ``data[where:where+len(payload)]``.
    ``where`` is taken modulo the current length.
    """
    raw = bytearray(data)
    for kind, where, payload in ops:
        i = where % (len(raw) + 1)
        if kind == 0 and raw and payload:
            raw[i % len(raw)] = payload[0]
        elif kind == 1:
            raw[i:i] = payload
        elif kind == 2:
            del raw[i:i + (len(payload) or 1)]
        elif kind == 3:
            del raw[i:]
        elif kind == 4 and raw:
            raw[i % len(raw)] ^= 1 << ((payload[0] if payload else 0) & 7)
        elif kind == 5:
            n = int.from_bytes(payload[:8].ljust(8, b"\xff"), "little") | (1 << 31)
            raw[i:i] = wire.encode_varint(n & ((1 << 64) - 1))
        elif kind == 6:
            raw[i:i] = raw[i:i + max(len(payload), 1)]
    return bytes(raw)


# ---------------------------------------------------------------- JSON

def check_json(cls: type, text: str | bytes) -> object | None:
    """``pbj.from_json`` on hostile text: a value or ``pbj.DecodeError`` only.

    An accepted value must encode to binary and decode back equal, and
    print with ``to_json`` and parse back equal (unknown fields aside).

    Returns:
        The value, or ``None`` when the text was rejected.
    """
    try:
        obj = pbj.from_json(cls, text)
    except pbj.DecodeError as err:
        assert isinstance(err.path, list)
        assert isinstance(err.reason, str) and err.reason
        str(err)
        return None
    assert isinstance(obj, cls)
    out = pbj.encode(obj)
    assert pbj.encode(obj, reverse=True) == out
    assert pbj.testing.equivalent(pbj.decode(cls, out), obj)
    again = pbj.from_json(cls, pbj.to_json(obj))
    assert pbj.testing.equivalent(again, obj, unknown_fields=False), (again, obj)
    return obj


# ---------------------------------------------------------------- loader

def _snapshot() -> tuple:
    """The loads the pickling registry holds, kept alive while compared (a load's classes are built
    on first use: holding the loads, not their classes, builds nothing)."""
    from pbj.loader.pickling import loads_alive

    return loads_alive()


def check_loader(data: bytes) -> object | None:
    """``pbj.load_descriptor_set`` on a corrupt set: SchemaError/DecodeError only, never half-built.

    The load builds every class (``lazy=False``); a set it refuses is refused by a lazy load too, at
    the latest when :meth:`pbj.Namespace.build_all` builds every class.

    On failure the process-wide registry (used by pickling) is unchanged.
    On success every message class compiles its codec, decodes ``b""`` as a
    partial message and writes that value back to ``b""`` (both writers); a
    class with ``required`` fields (an edit can make one) refuses ``b""``
    without ``allow_partial``, with a :class:`pbj.DecodeError` (and the empty
    value with an :class:`pbj.EncodeError`) naming exactly those fields, and a
    class without accepts it.

    Returns:
        The namespace, or ``None`` when loading failed.
    """
    before = _snapshot()
    try:
        ns = pbj.load_descriptor_set(data, lazy=False)
    except (pbj.SchemaError, pbj.DecodeError) as err:
        str(err)
        assert _snapshot() == before, "a failed load changed the registry"
        _check_lazy_refuses(data)
        return None
    for cls in ns.messages.values():
        codec_of(cls)
        empty = pbj.decode(cls, b"", allow_partial=True)
        assert pbj.encode(empty, allow_partial=True) == b""
        assert pbj.encode(empty, reverse=True, allow_partial=True) == b""
        _check_required_of_empty(cls, empty)
    for full in ns.enums:
        assert issubclass(ns[full], int)
    return ns


def _check_lazy_refuses(data: bytes) -> None:
    """A set the eager load refuses is refused by the lazy one too, at the latest when every class is built."""
    try:
        pbj.load_descriptor_set(data).build_all()
    except (pbj.SchemaError, pbj.DecodeError) as err:
        str(err)
    else:
        raise AssertionError("the lazy load built every class of a set the eager load refused")


def _check_required_of_empty(cls: type, empty: object) -> None:
    """``b""`` as ``cls`` without ``allow_partial``: refused naming each required field, else accepted."""
    required = [[f.name] for f in sorted(info(cls).fields, key=lambda f: f.number) if f.required]
    if not required:
        assert pbj.decode(cls, b"") == empty
        assert pbj.encode(empty) == b""
        return
    for call, error in ((lambda: pbj.decode(cls, b""), pbj.DecodeError), (lambda: pbj.encode(empty), pbj.EncodeError)):
        try:
            call()
        except error as err:
            assert err.missing == required, (cls, err.missing, required)
        else:
            raise AssertionError(f"{cls.__name__} has required fields {required}, yet its empty message passed")


@functools.cache
def small_sets() -> tuple[bytes, ...]:
    """Small valid descriptor sets to mutate: the proto2 schema, features.proto, the conformance set."""
    from tests.oracle import GOOGLE_PROTOS, protoc

    protos = Path(__file__).resolve().parents[1] / "tests" / "protos"
    sets = [proto2_set(), protoc([protos / "features.proto"], [protos, GOOGLE_PROTOS])]
    for name in ("conformance/conformance.binpb", "conformance/editions.binpb"):
        try:
            sets.append(shipped(name))
        except (FileNotFoundError, OSError):
            pass
    return tuple(sets)


def save_failure(prefix: str, data: bytes, suffix: str = ".bin") -> Path:
    """Write a failing input to ``$PBJ_FUZZ_CRASHES`` (default ``fuzz/crashes``) as ``<prefix>-<sha1>``.

    The name's prefix says which check replays it (see ``tests/test_regressions.py``);
    move the file to ``tests/regressions/`` once the fault is fixed.
    """
    import hashlib
    import os

    out = Path(os.environ.get("PBJ_FUZZ_CRASHES", _ROOT / "fuzz" / "crashes"))
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{prefix}-{hashlib.sha1(data).hexdigest()[:16]}{suffix}"
    path.write_bytes(data)
    return path


def float_bits(x: float) -> bytes:
    """The binary64 bits of ``x`` (for messages in failures)."""
    return struct.pack("<d", x)


__all__ = ["BLOCK_ITEM", "PROTO2", "STATS", "Target", "block_items", "check_decode", "check_json", "check_loader",
           "decode_targets", "hapi_set", "mutate", "small_sets", "target", "FrozenMap"]


# ---------------------------------------------------------------- descriptor mutations

#: Values a structured mutation writes into a field of a ``FieldDescriptorProto``.
_FIELD_EDITS = {
    "number": (0, -1, 1, 2, 19000, 19999, wire.MAX_FIELD_NUMBER, wire.MAX_FIELD_NUMBER + 1, 1 << 31, -(1 << 31)),
    "type": tuple(range(0, 20)),
    "label": (0, 1, 2, 3, 4, 7),
    "type_name": ("", ".", "..", ".nope.Missing", "Missing", ".google.protobuf.Timestamp", "int32", ".x.y.z"),
    "name": ("", "from", "class", "_pbj_unknown", "_pbj_size", "__init__", "a b", "1x", "é", "None", "x" * 300),
    "json_name": ("", "from", "a.b", "x" * 100, "\x00"),
    "default_value": ("", "nan", "-inf", "1e999", "0x10", "-", "\\", "\\777", "true", "FALSE", "99999999999999999999"),
    "oneof_index": (0, 1, 5, -1, 1 << 20),
    "extendee": ("", ".nope.Missing"),
    "proto3_optional": (True, False),
}


def mutate_descriptor(data: bytes, choices: bytes) -> bytes:
    """Apply structured edits (chosen by the bytes of ``choices``) to a ``FileDescriptorSet``.

    Each edit takes 3 bytes: which message/enum/file (first), what to change
    (second) and which value (third). The edits touch field numbers, types,
    labels, type names, names, json names, proto2 defaults, oneof indexes,
    packed and map-entry options, enum values, nested and duplicated
    messages, syntax and dependencies. The result is the edited set's bytes.
    """
    from google.protobuf import descriptor_pb2

    fds = descriptor_pb2.FileDescriptorSet.FromString(data)
    messages, enums = [], []
    for fd in fds.file:
        stack = [(m, fd) for m in fd.message_type]
        enums.extend(fd.enum_type)
        while stack:
            m, owner = stack.pop()
            messages.append((m, owner))
            enums.extend(m.enum_type)
            stack.extend((n, owner) for n in m.nested_type)
    for i in range(0, len(choices) - 2, 3):
        a, b, c = choices[i], choices[i + 1], choices[i + 2]
        kind = b % 12
        if kind < 7 and messages:
            m, fd = messages[a % len(messages)]
            if not m.field:
                continue
            fld = m.field[c % len(m.field)]
            attr = list(_FIELD_EDITS)[(b // 12 + kind) % len(_FIELD_EDITS)]
            values = _FIELD_EDITS[attr]
            try:
                setattr(fld, attr, values[(c >> 3) % len(values)])
            except ValueError:   # a value Google's descriptor classes refuse to hold (label 0 …)
                continue
        elif kind == 7 and messages:
            m, _ = messages[a % len(messages)]
            m.options.map_entry = not m.options.map_entry
        elif kind == 8 and messages:
            m, _ = messages[a % len(messages)]
            if m.field:
                m.field[c % len(m.field)].options.packed = bool(c & 1)
            if c & 2:
                m.field.add().CopyFrom(m.field[0]) if m.field else None
        elif kind == 9 and enums:
            e = enums[a % len(enums)]
            if c % 3 == 0:
                del e.value[:]
            elif c % 3 == 1 and e.value:
                e.value[0].number = (0, -1, (1 << 31) - 1, 5)[c % 4]  # int32: the field holds no more
            else:
                e.value.add(name=e.value[0].name if e.value else "", number=c)
        elif kind == 10 and fds.file:
            fd = fds.file[a % len(fds.file)]
            fd.syntax = ("", "proto2", "proto3", "editions", "proto4")[c % 5]
            if c & 8:
                fd.dependency.append("missing.proto")
        elif kind == 11 and messages:
            m, fd = messages[a % len(messages)]
            if c % 3 == 0:
                fd.message_type.add().CopyFrom(m)          # defined twice
            elif c % 3 == 1:
                m.name = ("", "x.y", "1", m.name + "_")[c % 4]
            else:
                m.nested_type.add(name=m.name)
    return fds.SerializeToString()
