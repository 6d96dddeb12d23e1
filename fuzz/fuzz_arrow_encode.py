"""atheris entry point: encode_from_arrow's C writer (pbj/_native/arrow_encode.c) on fuzzed tables.

Each input picks a target of :mod:`fuzz.targets` and a message as
:mod:`fuzz.fuzz_native` does. The message and a seed of its class are decoded in
one call of the engine's ``decode_many`` (from_arrow's decoder), which must
answer as ``pbj.decode`` of each. A message that decodes becomes, with a seed
message of its class, a table (``to_arrow``); the C writer's bytes for it,
and for a slice of it starting at a fuzzed row, must be ``pbj.encode`` of the
messages the Python column reader builds (forward and reverse writers). Then
one string or binary column is replaced by an array made from the input's
bytes that passes Arrow's cheap checks only (offsets out of order inside their
bounds): the writer must raise ``ValueError`` or write, never read outside a
buffer (the sanitizers abort the run). Classes that reach a proto2 ``required``
field are left to the Python path (not the writer's).

Run it on the sanitized build with ``PBJ_FUZZ_HARNESS=fuzz/fuzz_arrow_encode.py
fuzz/native_asan.sh -runs=N`` (``PBJ_FUZZ_ARROW_SKIP=blockitem`` is the default
here: its 24,000-column table is slow under ASan).
"""

from __future__ import annotations

import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# every input shares its repeated sub-messages (share.c), however small: a switch the engine reads
# once, when it is imported (pbj/_native/module.c)
os.environ.setdefault("PBJ_NATIVE_SHARE_MIN", "0")

from fuzz import targets as T
from fuzz.fuzz_decode import _seeds, pick

_COUNT = [0]
_STATS_EVERY = int(os.environ.get("PBJ_FUZZ_STATS", "0") or 0)
_SKIP = set(filter(None, os.environ.get("PBJ_FUZZ_ARROW_SKIP", "blockitem").split(",")))
STATS = {"written": 0, "not decodable": 0, "not holdable": 0, "crafted refused": 0, "crafted written": 0}


def check_table(cls, table) -> None:
    """The C writer's bytes are pbj.encode of the Python reader's messages; from_arrow's messages equal them."""
    import pbj.arrow
    from pbj.arrow.encode import encode_from_arrow
    from pbj.testing import equivalent
    from tests.test_arrow_encode import reference

    messages, expected = reference(table, cls)
    assert encode_from_arrow(table, cls) == expected
    assert equivalent(pbj.arrow.from_arrow(table, cls), messages)


def check_many(cls, payloads: list[bytes]) -> None:
    """The engine's decode_many (from_arrow's decoder, every payload in one call) answers as pbj.decode of each
    payload: the same messages (None where it leaves one to the Python parser), or a DecodeError."""
    import pbj
    from pbj import _native
    from pbj.codec.compiler import codec_of
    from pbj.testing import equivalent

    plan = codec_of(cls).native
    if plan is None:
        return
    try:
        one = [pbj.decode(cls, p, allow_partial=True) for p in payloads]
    except pbj.DecodeError:
        one = None
    try:
        many = _native._engine.decode_many(plan, payloads, pbj.DEFAULT_MAX_DEPTH)
    except pbj.DecodeError:
        assert one is None
        return
    assert one is not None and len(many) == len(one)
    assert all(m is None or equivalent(m, o) for m, o in zip(many, one, strict=True))


def crafted(table, data: bytes):
    """``table`` with its first string or binary column made of ``data``: offsets out of order, in bounds."""
    import pyarrow as pa

    for i, f in enumerate(table.schema):
        if pa.types.is_string(f.type) or pa.types.is_binary(f.type):
            n = table.num_rows
            body = data[:64] or b"x"
            inner = [b % (len(body) + 1) for b in (data[-n:] if len(data) >= n else bytes(n))][1:n]
            offsets = struct.pack(f"<{n + 1}i", 0, *inner, len(body))
            column = pa.Array.from_buffers(f.type, n, [None, pa.py_buffer(offsets), pa.py_buffer(body)])
            return table.set_column(i, pa.field(f.name, f.type, nullable=f.nullable), column)
    return None


def one_input(data: bytes, targets, seeds) -> None:
    import pyarrow as pa

    import pbj
    import pbj.arrow
    from pbj.arrow.encode import encode_from_arrow
    from tests.test_arrow_properties import holdable

    t, message = pick(data, targets, seeds)
    _COUNT[0] += 1
    if _STATS_EVERY and _COUNT[0] % _STATS_EVERY == 0:
        print(f"arrow encode fuzz: {_COUNT[0]:,} inputs: {STATS}", file=sys.stderr, flush=True)
    seed = seeds[t.name][_COUNT[0] % len(seeds[t.name])] if seeds.get(t.name) else b""
    try:
        check_many(t.cls, [seed, message, seed])
    except Exception:
        path = T.save_failure(f"decode-many-{t.name}", message)
        print(f"FAULT saved to {path}", file=sys.stderr, flush=True)
        raise
    try:
        messages = [holdable(pbj.decode(t.cls, message)), holdable(pbj.decode(t.cls, seed))]
    except pbj.PbjError:
        STATS["not decodable"] += 1
        return
    try:
        table = pbj.arrow.to_arrow(messages, t.cls)
    except pbj.PbjError:
        STATS["not holdable"] += 1
        return
    try:
        check_table(t.cls, table)
        check_table(t.cls, table.slice(len(data) % 2))
        STATS["written"] += 1
        bad = crafted(table, data)
        if bad is not None:
            try:
                encode_from_arrow(bad, t.cls)
                STATS["crafted written"] += 1
            except (ValueError, pa.ArrowInvalid, pbj.PbjError):
                STATS["crafted refused"] += 1
    except Exception:
        path = T.save_failure(f"arrow-encode-{t.name}", message)
        print(f"FAULT saved to {path}", file=sys.stderr, flush=True)
        raise


def main() -> None:
    import atheris

    from pbj import _native
    from pbj.required import reaches_required

    if not _native.available():
        raise SystemExit("the native engine is not built")
    targets = tuple(t for t in T.decode_targets() if t.name not in _SKIP and not reaches_required(t.cls))
    seeds = _seeds()
    atheris.Setup(sys.argv, lambda data: one_input(data, targets, seeds))
    atheris.Fuzz()


if __name__ == "__main__":
    main()
