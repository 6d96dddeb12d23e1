"""Replay every input that ever made a fuzz check fail (``tests/regressions/``).

A file's name says which check replays it: ``decode-<target>-…`` runs
:func:`fuzz.targets.check_decode` on the named target (``maps``, ``node``,
``proto2``, ``blockitem`` …), ``native-<target>-…`` runs
:func:`fuzz.native_checks.check_same` (the native engine against the Python one) on the
target of ``fuzz/fuzz_native.py`` it names, ``json-<target>-…`` runs
:func:`fuzz.targets.check_json` on that target's class, ``loader-…`` runs
:func:`fuzz.targets.check_loader`. New failures from a long run land in
``fuzz/crashes/`` (see ``fuzz/README.md``); once fixed, move them here.

The faults these files found, and their fixes, are listed in ``docs/security.md``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import pbj
from fuzz import targets as T

CORPUS = Path(__file__).resolve().parent / "regressions"
FILES = sorted(p for p in CORPUS.iterdir() if p.is_file() and p.name != "README.md")


def test_corpus_is_not_empty():
    assert {p.name.split("-")[0] for p in FILES} >= {"decode", "loader"}


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_replay(path):
    data = path.read_bytes()
    kind, _, rest = path.name.partition("-")
    if kind == "decode":
        T.check_decode(T.target(rest.split("-")[0]), data)
    elif kind == "json":
        T.check_json(T.target(rest.split("-")[0]).cls, data)
    elif kind == "loader":
        T.check_loader(data)
    elif kind == "native":
        from fuzz.native_checks import check_same
        from pbj import _native

        if not _native.available():
            pytest.skip("the native engine is not built")
        name = rest.rsplit("-", 1)[0]  # field cases' target names hold dashes
        check_same(next(t for t in _native_targets() if t.name == name).cls, data)
    else:
        pytest.fail(f"{path.name}: unknown check {kind!r}")


def _native_targets():
    """fuzz/fuzz_native.py's targets, without loading every schema it has for the usual ones."""
    return T.decode_targets() + T.native_targets() + T.conformance_targets()


def test_counting_sink_names_the_failing_element():
    """A repeated sub-message that fails inside: count_values (the walker's counting sink) gave the
    index of the element after it in the path (it counted the element before walking it); the path
    is the one pbj.decode and the Python parser give."""
    from fuzz.native_checks import same_error
    from pbj import _native, api
    from pbj.codec import codec_of

    if not _native.available():
        pytest.skip("the native engine is not built")

    @pbj.message
    class Kid:
        name: str = pbj.field(1, "string")

    @pbj.message
    class Kids:
        kids: tuple[Kid, ...] = pbj.field(2, Kid, repeated=True)

    data = b"\x12\x00\x12\x02\x0a\x00\x12\x03\x0a\x01\xff"  # kids[2].name is not UTF-8
    with pytest.raises(pbj.DecodeError) as python:
        api.python_decode(Kids, data)
    assert python.value.path == ["kids", 2, "name"] and python.value.offset == 8
    with pytest.raises(pbj.DecodeError) as counted:
        _native._engine.count_values(codec_of(Kids).native, data, 100)
    assert same_error(counted.value, python.value), (counted.value.path, python.value.path)
    assert _native._engine.count_values(codec_of(Kids).native, data[:6], 100) == {(Kids, "kids"): 2, (Kid, "name"): 1}

    @pbj.message
    class Tree:  # nested messages of one class: each has its own elements (the sink counted per class)
        kids: tuple[Tree, ...] = pbj.field(1, "Tree", repeated=True)
        name: str = pbj.field(2, "string")

    data = b"\x0a\x04\x0a\x00\x0a\x00" b"\x0a\x05\x0a\x03\x12\x01\xff"  # kids[1].kids[0].name is not UTF-8
    with pytest.raises(pbj.DecodeError) as python:
        api.python_decode(Tree, data)
    assert python.value.path == ["kids", 1, "kids", 0, "name"]
    with pytest.raises(pbj.DecodeError) as counted:
        _native._engine.count_values(codec_of(Tree).native, data, 100)
    assert same_error(counted.value, python.value), (counted.value.path, python.value.path)


def test_field_numbers_from_2_pow_28_get_a_native_plan():
    """A field number of 2**28 or more has a tag past 2**31: plan.c read each tag of the dispatch table
    into an int, got a negative number and declined the class (the field case
    ``enc-field-numbers-above-2-pow-28`` of ../shared/cases ran on the Python engine only)."""
    from fuzz.native_checks import check_same
    from pbj import _native
    from pbj.codec import codec_of

    if not _native.available():
        pytest.skip("the native engine is not built")

    @pbj.message
    class Wide:
        a: int = pbj.field(1, "int32")
        b: int = pbj.field(268435456, "int32")
        c: str = pbj.field(536870911, "string")
        d: tuple[int, ...] = pbj.field(300000000, "sint32", repeated=True)

    assert codec_of(Wide).native is not None
    data = bytes.fromhex("0801" "8080808008" "ffffffffffffffffff01" "82b0b4f808" "020203" "faffffff0f0178")
    value = check_same(Wide, data)  # both engines decode it alike, and every writer gives the same bytes
    assert value == Wide(a=1, b=-1, c="x", d=(1, -2))
    assert pbj.encode(value) == pbj.encode(value, reverse=True) == data


@pytest.mark.parametrize("data", [
    b"\x1a\x03\x0a\xff\xff" + b"\xff" * 7 + b"\x01" + b"\x01k\x12\x01v",  # a key length of 10 bytes, past the entry
    b"\x08\x07\x1a\x07\x0a\x03",                                           # the entry and its key cut by the end
    b"\x12\x02\x08\xff\x01",                                                 # a uint32 key's varint runs on
], ids=["key-length-past-entry", "entry-cut", "varint-past-entry"])
def test_a_map_key_past_its_entry_is_not_in_the_path(data):
    """An error inside a map entry names the entry's key in its path only when the key lies inside the
    entry: the Python parser's error path (runtime._map_key) named the rest of the input as the key of
    an entry whose key length ran past it, the native one (walk.c map_key) a key cut at the input's end
    (an empty string), or none through a negative length; both now read it alike (fuzz/native_asan.sh,
    field cases dec-map-missing-key-or-value and dec-open-enum-unknown-value)."""
    from fuzz.native_checks import same_error
    from pbj import _native
    from pbj.codec import codec_of

    @pbj.message
    class Named:
        n: int = pbj.field(1, "int32")
        m: pbj.FrozenMap[int, int] = pbj.map_field(2, "uint32", "int32")
        s: pbj.FrozenMap[str, int] = pbj.map_field(3, "string", "int32")

    with pytest.raises(pbj.DecodeError) as python:
        codec_of(Named).parse(data, 0, len(data), 100, None)
    assert python.value.path in (["m"], ["s"]), python.value.path
    if _native.available():
        with pytest.raises(pbj.DecodeError) as native:
            _native._engine.decode(codec_of(Named).native, data, 100)
        assert same_error(native.value, python.value), (native.value.path, python.value.path)


@pytest.mark.parametrize("cut", [bytes([0x08, 0x80]), bytes([0x15, 0x01, 0x02])], ids=["varint", "fixed32"])
def test_an_element_cut_at_a_sub_message_end_has_its_own_index(cut):
    """A repeated scalar whose element runs past the end of a sub-message that occurs again: the
    Python parser reads the element from the next occurrence's bytes and appends it before it checks
    the end, and named the next index (``xs[2]``); the native engine names the cut element
    (``xs[1]``). Both now say ``xs[1]`` (fuzz/native_asan.sh)."""
    from pbj import _native
    from pbj.codec import codec_of

    @pbj.message
    class Inner:
        xs: tuple[int, ...] = pbj.field(1, "int32", repeated=True, packed=False)
        fs: tuple[int, ...] = pbj.field(2, "fixed32", repeated=True, packed=False)

    @pbj.message
    class Outer:
        a: Inner | None = pbj.field(1, Inner)

    first = (b"\x08\x01" if cut[0] == 0x08 else b"\x15\x00\x00\x00\x00") + cut
    again = b"\x08\x05\x08\x06\x08\x07"
    data = bytes([0x0A, len(first)]) + first + bytes([0x0A, len(again)]) + again
    name = "xs" if cut[0] == 0x08 else "fs"
    with pytest.raises(pbj.DecodeError) as python:
        codec_of(Outer).parse(data, 0, len(data), 100, None)
    assert python.value.path == ["a", name, 1], python.value.path
    if _native.available():
        with pytest.raises(pbj.DecodeError) as native:
            _native._engine.decode(codec_of(Outer).native, data, 100)
        assert native.value.path == python.value.path and native.value.offset == python.value.offset


@pytest.mark.parametrize(("cut", "inner_path"), [
    (b"\x0a\x81", []),                 # ys[1]'s length varint goes on past Inner's end
    (b"\x0a\x02\x08\x81", ["x"]),      # ys[1].x's varint goes on past ys[1]'s end (and Inner's)
])
def test_an_element_refused_before_it_is_kept_is_the_next_index(cut, inner_path):
    """A repeated sub-message's element that is refused before it is kept (its length runs past the
    enclosing message's end, or its own last field runs past its end) is named by the next index,
    ``ys[1]``, on both engines. The rule of the test above (the last field of *this* message ran
    past its end: the element was kept) once applied to these too and named ``ys[0]``; found by the
    ASan run (fuzz/native_asan.sh, target ``node``) and the block-item mutation test."""
    from pbj import _native
    from pbj.codec import codec_of

    @pbj.message
    class Leaf:
        x: int = pbj.field(1, "int32")

    @pbj.message
    class Inner:
        ys: tuple[Leaf, ...] = pbj.field(1, Leaf, repeated=True)

    @pbj.message
    class Outer:
        a: Inner | None = pbj.field(1, Inner)

    first = b"\x0a\x00" + cut  # ys[0] empty, then the cut ys[1]
    again = b"\x0a\x00"
    data = bytes([0x0A, len(first)]) + first + bytes([0x0A, len(again)]) + again
    with pytest.raises(pbj.DecodeError) as python:
        codec_of(Outer).parse(data, 0, len(data), 100, None)
    assert python.value.path == ["a", "ys", 1, *inner_path], python.value.path
    if _native.available():
        with pytest.raises(pbj.DecodeError) as native:
            _native._engine.decode(codec_of(Outer).native, data, 100)
        assert native.value.path == python.value.path and native.value.offset == python.value.offset


@pytest.mark.parametrize("length", [
    b"\xd6\x86\xe0\xff\xff\xff\xff\xff\xff\x01",  # 10 bytes: past 2^63 (negative in C)
    b"\x80\x80\x80\x80\x10",                        # 5 bytes: 2^32, past 2^31-1
])
def test_a_map_entry_whose_length_is_refused_names_no_key(length):
    """A map entry whose length prefix the decoder refuses holds no key for the error path, on both
    engines; the Python parser read the rest of the input as the entry and named the key it found
    there (``int32_key[1]``, where the native engine said ``int32_key``). Found by CI's ASan run
    (fuzz/native_asan.sh -seed=1, target ``maps``)."""
    from pbj import _native
    from pbj.codec import codec_of

    @pbj.message
    class Maps:
        int32_key: dict[int, str] = pbj.map_field(1, "int32", "string")

    data = b"\x0a" + length + b"\x08\x01\x12\x00"  # the bytes after it look like an entry with key 1
    with pytest.raises(pbj.DecodeError) as python:
        codec_of(Maps).parse(data, 0, len(data), 100, None)
    assert python.value.path == ["int32_key"], python.value.path
    if _native.available():
        with pytest.raises(pbj.DecodeError) as native:
            _native._engine.decode(codec_of(Maps).native, data, 100)
        assert native.value.path == python.value.path and native.value.offset == python.value.offset
        assert str(native.value) == str(python.value)


def test_map_entry_with_an_unknown_field_is_kept_whole():
    """The first fault (upb as oracle): the entry goes to the unknown fields, not into the map."""
    t = T.target("maps")
    data = (CORPUS / "decode-maps-entry-with-unknown-field.bin").read_bytes()
    expected = t.google.FromString(data)
    assert len(expected.int64_key) == 0
    obj = pbj.decode(t.cls, data)
    assert len(obj.int64_key) == 0
    assert pbj.unknown_fields(obj) == data
    assert pbj.encode(obj) == expected.SerializeToString(deterministic=True)
    assert pbj.encode(obj, reverse=True) == expected.SerializeToString(deterministic=True)


def test_reference_to_a_map_entry_fails_the_load():
    """The loader fault: a group typed as a map entry left a class that could not compile."""
    data = (CORPUS / "loader-group-typed-as-map-entry.binpb").read_bytes()
    with pytest.raises(pbj.SchemaError):
        pbj.load_descriptor_set(data, lazy=False)
    with pytest.raises(pbj.SchemaError):  # a lazy load refuses the class when it is built
        pbj.load_descriptor_set(data).build_all()
