"""A compile batch lives as long as its classes, and no longer (issue 11).

Generated functions live in a namespace per batch, registered in linecache
under a name of their own; when the classes go, so do the namespace and the
linecache entries. Successive loads of the HAPI schema, each dropped before
the next, leave memory flat: measured (RSS and tracemalloc), not counted in
dict entries.
"""

from __future__ import annotations

import gc
import inspect
import json
import linecache
import subprocess
import sys
import textwrap
import traceback
import weakref

import pytest

import pbj


def _declare():
    @pbj.message
    class Point:
        x: int = pbj.field(1, "sint32")
        label: str = pbj.field(2, "string")

    @pbj.message
    class Path:
        points: tuple[Point, ...] = pbj.field(1, Point, repeated=True)
        next: Path | None = pbj.field(2, "Path")

    return Point, Path


def _entries(filename_part: str) -> list[str]:
    return [k for k in linecache.cache if isinstance(k, str) and filename_part in k]


def test_a_dropped_batch_takes_its_code_and_linecache_entries_along():
    Point, Path = _declare()
    data = pbj.encode(Path(points=[Point(x=-1, label="a")], next=Path()))
    assert pbj.decode(Path, data).points[0].x == -1
    filenames = [pbj.codec.codec_of(c).filename for c in (Point, Path)]
    assert all(f.startswith("<pbj generated codec tests.test_codec_lifetime.") for f in filenames)
    assert all(f in linecache.cache for f in filenames)
    refs = [weakref.ref(Point), weakref.ref(Path), weakref.ref(pbj.codec.codec_of(Path).parse)]
    del Point, Path
    gc.collect()
    assert [r() for r in refs] == [None, None, None]
    assert not any(f in linecache.cache for f in filenames)


def test_the_same_qualified_name_twice_gets_a_numbered_linecache_name():
    first, second = _declare(), _declare()
    names = [pbj.codec.codec_of(c).filename for c in (first[1], second[1])]
    assert names[0] != names[1] and names[1].startswith("<pbj generated codec tests.test_codec_lifetime.Path (")
    for cls in (first[1], second[1]):
        parse = pbj.codec.codec_of(cls).parse
        assert inspect.getsource(parse).startswith("def parse_Path(data, pos, end, depth, more, group=0):")
    before = pbj.engine()
    pbj.use_engine("python")  # the generated parser raises (the native engine makes its DecodeError in C)
    try:
        with pytest.raises(pbj.DecodeError) as info:
            pbj.decode(second[1], b"\x0a\x05\x08")
    finally:
        pbj.use_engine(before)
    assert info.value.path == ["points", 0]
    frames = traceback.extract_tb(info.value.__traceback__)
    generated = [f for f in frames if f.filename == names[1]]
    assert generated and generated[-1].line.startswith('raise DecodeError("truncated input: length runs past')


def test_a_long_lived_class_does_not_keep_a_schema_alive():
    # Timestamp (pbj.wellknown) lives forever; a loaded class using it must still be freed
    from pbj.wellknown import WELL_KNOWN

    fds = _timestamp_user_set()
    ns = pbj.load_descriptor_set(fds)
    User = ns["life.User"]
    ts = WELL_KNOWN["google.protobuf.Timestamp"]
    assert pbj.decode(User, pbj.encode(User(at=ts(seconds=5)))).at.seconds == 5
    ref = weakref.ref(User)
    del ns, User
    gc.collect()
    assert ref() is None, "the loaded class was kept alive"
    assert pbj.decode(ts, pbj.encode(ts(seconds=6))).seconds == 6


def _timestamp_user_set() -> bytes:
    from google.protobuf import descriptor_pb2, timestamp_pb2

    fds = descriptor_pb2.FileDescriptorSet()
    fds.file.add().CopyFrom(descriptor_pb2.FileDescriptorProto.FromString(
        timestamp_pb2.DESCRIPTOR.serialized_pb))
    f = fds.file.add(name="life.proto", package="life", syntax="proto3",
                     dependency=["google/protobuf/timestamp.proto"])
    m = f.message_type.add(name="User")
    m.field.add(name="at", number=1, type=11, type_name=".google.protobuf.Timestamp", label=1)
    return fds.SerializeToString()


_LOADS = textwrap.dedent("""
    import gc, json, sys, tracemalloc
    from pathlib import Path
    import pbj
    loads, trace = int(sys.argv[1]), sys.argv[2] == "1"
    data = Path(sys.argv[3]).read_bytes()
    try:  # return freed heap pages to the system first, so RSS shows what is kept, not malloc's slack
        import ctypes
        trim = ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):
        trim = lambda pad: 0
    def rss_kb():
        trim(0)
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("VmRSS"))
    if trace:
        tracemalloc.start()
    out = []
    for _ in range(loads):
        ns = pbj.load_descriptor_set(data)
        block = ns["com.hedera.hapi.block.stream.Block"]
        pbj.source_of(block)               # compile the block and everything it reaches
        pbj.decode(block, b"")
        del ns, block
        gc.collect()
        out.append([rss_kb(), tracemalloc.get_traced_memory()[0] if trace else 0])
    print(json.dumps(out))
""")


def _measure(loads: int, trace: bool) -> list[list[int]]:
    from tests.conftest import REPO

    hapi = REPO / "pbj" / "data" / "hapi-v0.55.0.binpb"
    out = subprocess.run([sys.executable, "-c", _LOADS, str(loads), "1" if trace else "0", str(hapi)],
                         capture_output=True, text=True, check=True, cwd=REPO)
    return json.loads(out.stdout)


@pytest.mark.long
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
def test_successive_loads_keep_rss_flat():
    figures = _measure(5, trace=False)
    after_second = figures[1][0]
    print("\nRSS (KB) after each load:", [r for r, _ in figures])
    assert max(r for r, _ in figures[2:]) <= after_second * 1.05


#: CPython's process-wide table of interned strings (every name ``compile`` sees) is one block
#: that is resized with the churn of names from load to load, between two sizes about 1 MB apart
#: for this schema (seen: 5.50 MB traced, then 6.47 MB from some load on); it is not pbj's.
INTERNED_TABLE = 1 << 20


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
def test_twenty_loads_keep_rss_and_tracemalloc_flat():
    figures = _measure(20, trace=True)
    rss2, traced2 = figures[1]
    print("\nRSS (KB), traced bytes after each load:", figures)
    assert max(r for r, _ in figures[2:]) <= rss2 * 1.05
    assert max(t for _, t in figures[2:]) <= traced2 * 1.05 + INTERNED_TABLE
    # and no steady growth: the last load keeps no more than the third did, beyond that table
    assert figures[-1][1] <= figures[2][1] + INTERNED_TABLE
