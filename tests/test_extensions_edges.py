"""Extension edge cases found by a newcomer: presence kept by with_extensions, invalid UTF-8 in
ProtoJSON, duplicate names, packing by syntax, late registration (protobuf.dev "Language Guide
(proto2)", "Extensions"; "Encoding", "Packed Repeated Fields"), against Google's protobuf.
"""

from __future__ import annotations

import json
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

import pbj
from tests.oracle import google_class, protoc

PROTOS = Path(__file__).parent / "protos"


@pbj.message(full_name="pbjedge.Box", syntax="proto2", extensions=range(100, 200))
class Box:
    level: int = pbj.field(1, "int32", optional=True, default=5)


COLOUR = pbj.extension(Box, 100, "string", name="pbjedge.colour")
NAMES = pbj.extension(Box, 101, "string", name="pbjedge.names", repeated=True)
COUNT = pbj.extension(Box, 102, "int32", name="pbjedge.count")
UNPACKED = pbj.extension(Box, 103, "int32", name="pbjedge.unpacked", repeated=True)
HAND = {e.full_name: e for e in (COLOUR, NAMES, COUNT, UNPACKED)}


@cache
def loaded() -> pbj.Namespace:
    return pbj.load_descriptor_set(protoc(["ext_edges.proto"], [PROTOS]))


def _sources():
    return [pytest.param((Box, HAND.__getitem__), id="hand"),
            pytest.param((loaded()["pbjedge.Box"], loaded().extension), id="loaded")]


def both_writers(msg) -> bytes:
    forward, reverse = pbj.encode(msg), pbj.encode(msg, reverse=True)
    assert forward == reverse
    assert pbj.encoded_size(msg) == len(forward)
    return forward


def _google(**extensions):
    G = google_class("pbjedge.Box")
    g = G()
    for name, value in extensions.items():
        ext = G.DESCRIPTOR.file.pool.FindExtensionByName(f"pbjedge.{name}")
        if isinstance(value, tuple):
            g.Extensions[ext].extend(value)
        else:
            g.Extensions[ext] = value
    return g


@pytest.mark.parametrize("source", _sources())
def test_with_extensions_keeps_an_unset_defaulted_field_unset(source):
    cls, ext = source
    box = pbj.with_extensions(cls(), {ext("pbjedge.colour"): "red"})
    assert not pbj.has(box, "level") and box.level == 5
    assert both_writers(box) == _google(colour="red").SerializeToString() == bytes.fromhex("a20603726564")
    assert pbj.with_extensions(box, {ext("pbjedge.colour"): None}) == cls()
    set_level = pbj.with_extensions(cls(level=5), {ext("pbjedge.count"): 1})
    assert pbj.has(set_level, "level") and both_writers(set_level) == bytes.fromhex("0805b00601")


@pytest.mark.parametrize("source", _sources())
@pytest.mark.parametrize(("payload", "where"), [("a20602ff41", "[pbjedge.colour]"),
                                                 ("aa060141aa0602ff41", "[pbjedge.names][1]")])
def test_json_refuses_an_extension_string_that_is_not_utf8(source, payload, where):
    cls, _ = source
    data = bytes.fromhex(payload)
    google = google_class("pbjedge.Box").FromString(data)  # Google keeps the bytes of a proto2 string too
    assert google.SerializeToString() == data
    msg = pbj.decode(cls, data)
    assert both_writers(msg) == data
    with pytest.raises(pbj.EncodeError, match="not valid UTF-8") as err:
        pbj.to_json(msg)
    assert str(err.value).endswith(f"`$.{where}`")


@pytest.mark.parametrize("source", _sources())
def test_json_of_valid_string_extensions_matches_google(source):
    from google.protobuf import json_format

    cls, ext = source
    msg = pbj.with_extensions(cls(), {ext("pbjedge.colour"): "é", ext("pbjedge.names"): ("a", "b")})
    google = _google(colour="é", names=("a", "b"))
    assert both_writers(msg) == google.SerializeToString()
    assert json.loads(pbj.to_json(msg)) == json_format.MessageToDict(google)


def test_cli_decode_refuses_an_extension_string_that_is_not_utf8(tmp_path):
    fds = tmp_path / "edges.binpb"
    fds.write_bytes(protoc(["ext_edges.proto"], [PROTOS]))
    bad = tmp_path / "bad.bin"
    bad.write_bytes(bytes.fromhex("aa0602ff41"))
    done = subprocess.run([sys.executable, "-m", "pbj", "decode", "--descriptor-set", str(fds), "--type",
                           "pbjedge.Box", str(bad)], capture_output=True)
    assert done.returncode == 1 and done.stdout == b""
    assert b"not valid UTF-8" in done.stderr and b"`$.[pbjedge.names][0]`" in done.stderr


def test_two_extensions_cannot_share_a_full_name():
    from google.protobuf import descriptor_pb2, descriptor_pool

    @pbj.message(full_name="pbjedge.Twice", syntax="proto2", extensions=range(100, 200))
    class Twice:
        size: int | None = pbj.field(1, "int32", optional=True)

    first = pbj.extension(Twice, 100, "int32", name="pbjedge.twice")
    with pytest.raises(pbj.SchemaError, match=r"the name is taken by the extension pbjedge\.twice = 100"):
        pbj.extension(Twice, 101, "int32", name="pbjedge.twice")
    assert pbj.fields(Twice) and pbj.with_extensions(Twice(), {first: 1}) is not None
    assert [e.number for e in pbj.schema.info(Twice).extensions.values()] == [100]
    # Google's descriptor pool refuses the same schema
    fd = descriptor_pb2.FileDescriptorProto(name="twice.proto", package="pbjedge", syntax="proto2")
    msg = fd.message_type.add(name="Twice")
    msg.extension_range.add(start=100, end=200)
    for number in (100, 101):
        fd.extension.add(name="twice", number=number, extendee=".pbjedge.Twice",
                         type=descriptor_pb2.FieldDescriptorProto.TYPE_INT32,
                         label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL)
    with pytest.raises(TypeError, match="twice"):
        descriptor_pool.DescriptorPool().Add(fd)


@pbj.message(full_name="pbjedged.Holder", edition="2023", extensions=range(100, 200))
class EdHolder:
    a: int = pbj.field(1, "int32")


ED_NUMS = pbj.extension(EdHolder, 100, "int32", name="pbjedged.nums", repeated=True, syntax="editions")
ED_LOOSE = pbj.extension(EdHolder, 101, "int32", name="pbjedged.loose", repeated=True, packed=False,
                         syntax="editions")


@pytest.mark.parametrize("syntax", ["proto3", "editions"])
def test_hand_declared_repeated_scalar_extensions_pack_as_their_syntax_says(syntax):
    ns = pbj.load_descriptor_set(protoc(["ext_edges_ed.proto"], [PROTOS]))
    G = google_class("pbjedged.Holder")
    g = G()
    g.Extensions[G.DESCRIPTOR.file.pool.FindExtensionByName("pbjedged.nums")].extend([1, 2])
    g.Extensions[G.DESCRIPTOR.file.pool.FindExtensionByName("pbjedged.loose")].extend([3])
    expected = bytes.fromhex("a206020102" "a80603")
    assert g.SerializeToString() == expected
    loaded_host = pbj.with_extensions(ns["pbjedged.Holder"](), {ns.extension("pbjedged.nums"): (1, 2),
                                                                ns.extension("pbjedged.loose"): (3,)})
    assert both_writers(loaded_host) == expected
    nums = ED_NUMS if syntax == "editions" else pbj.extension(
        EdHolder, 102, "int32", name=f"pbjedged.nums_{syntax}", repeated=True, syntax=syntax)
    assert nums.packed and not ED_LOOSE.packed and not UNPACKED.packed  # UNPACKED: proto2's default
    hand = pbj.with_extensions(EdHolder(), {nums: (1, 2), ED_LOOSE: (3,)})
    if syntax == "editions":
        assert both_writers(hand) == expected
    else:  # number 102, after loose
        assert both_writers(hand) == bytes.fromhex("a80603" "b206020102")


def test_an_unknown_syntax_is_refused():
    with pytest.raises(pbj.SchemaError, match="syntax 'proto4'"):
        pbj.extension(EdHolder, 110, "int32", name="pbjedged.bad", syntax="proto4")


def test_an_extension_registered_after_decoding_is_read_and_replaced_not_written_twice():
    @pbj.message(full_name="pbjedge.Late", syntax="proto2", extensions=range(100, 200))
    class Late:
        size: int | None = pbj.field(1, "int32", optional=True)

    data = bytes.fromhex("0802" "a00605" "a80601" "f80101")  # [late] = 5, [rep] = (1,), field 31
    old = pbj.decode(Late, data)
    assert pbj.unknown_fields(old) == bytes.fromhex("a00605a80601f80101")
    late = pbj.extension(Late, 100, "int32", name="pbjedge.late")
    rep = pbj.extension(Late, 101, "int32", name="pbjedge.rep", repeated=True)
    assert pbj.has_extension(old, late) and pbj.get_extension(old, late) == 5
    assert pbj.get_extension(old, rep) == (1,) and dict(pbj.extensions_of(old)) == {late: 5, rep: (1,)}
    new = pbj.with_extensions(old, {late: 7})
    assert both_writers(new) == bytes.fromhex("0802" "a00607" "a80601" "f80101")
    assert pbj.get_extension(pbj.decode(Late, both_writers(new)), late) == 7
    assert pbj.unknown_fields(new) == bytes.fromhex("f80101")
    cleared = pbj.with_extensions(old, {late: None, rep: ()})
    assert both_writers(cleared) == bytes.fromhex("0802f80101") and not pbj.has_extension(cleared, late)
    assert both_writers(old) == data  # the decoded message itself is unchanged


@pytest.mark.parametrize("source", _sources())
def test_the_constructor_checks_its_extensions_keyword(source):
    cls, ext = source
    colour = ext("pbjedge.colour")
    built = cls(_pbj_extensions={colour: "red"})
    assert built == pbj.with_extensions(cls(), {colour: "red"})
    assert both_writers(built) == _google(colour="red").SerializeToString()
    holders = built._pbj_extensions
    assert pbj.replace(built, level=1)._pbj_extensions == holders  # the stored tuple passes through replace
    for bad in (((100, 5),), (holders[0], holders[0]), {100: "red"}, [("x", 1)]):
        with pytest.raises(TypeError, match="extensions"):
            cls(_pbj_extensions=bad)
    with pytest.raises(TypeError, match=r"pbjedge\.colour"):
        cls(_pbj_extensions={colour: 5})
    other = pbj.with_extensions(Box() if cls is not Box else loaded()["pbjedge.Box"](),
                                {(HAND.__getitem__ if cls is not Box else loaded().extension)("pbjedge.colour"): "x"})
    with pytest.raises(TypeError, match="extensions"):  # the holders of another class's extension
        cls(_pbj_extensions=other._pbj_extensions)


@pytest.mark.parametrize("source", _sources())
def test_repr_shows_extensions_by_their_text_format_names(source):
    cls, ext = source
    box = pbj.with_extensions(cls(), {ext("pbjedge.colour"): "red", ext("pbjedge.names"): ("a",)})
    assert repr(box) == "Box(level=None, [pbjedge.colour]='red', [pbjedge.names]=('a',))"
    assert repr(cls()) == "Box(level=None)" and eval(repr(cls()), {"Box": cls}) == cls()


def test_extension_defaults_are_checked_as_field_defaults():
    @pbj.message(full_name="pbjedge.Dflt", syntax="proto2", extensions=range(100, 200))
    class Dflt:
        size: int | None = pbj.field(1, "int32", optional=True)

    with pytest.raises(pbj.SchemaError, match="only a singular scalar or enum field can declare a default"):
        pbj.extension(Dflt, 100, Dflt, name="pbjedge.msg", default=Dflt(size=1))  # protoc refuses it too
    with pytest.raises(pbj.SchemaError, match="does not fit"):
        pbj.extension(Dflt, 101, "int32", name="pbjedge.big", default=2**31)
    raw = pbj.extension(Dflt, 102, "string", name="pbjedge.raw", default="\udcffA")  # proto2: any bytes
    assert pbj.get_extension(Dflt(), raw) == "\udcffA"
    f32 = pbj.extension(Dflt, 103, "float", name="pbjedge.f32", default=0.1)
    assert pbj.get_extension(Dflt(), f32) == 0.10000000149011612  # the float32 value, as a loaded one reads
