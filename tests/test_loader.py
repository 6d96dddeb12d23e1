"""Loading schemas at run time: ``pbj.load_descriptor_set`` and ``pbj.load_proto``.

Every loaded class is checked field by field against Google's descriptors
of the same schema (the oracle): numbers, names, json names, labels, packed,
presence, oneofs, maps and proto2 defaults.
"""

from __future__ import annotations

import enum
import math
import multiprocessing
import pickle
import subprocess
import sys
import textwrap
from importlib import resources

import pytest
from google.protobuf import descriptor_pb2, descriptor_pool

import pbj
from pbj import loader
from tests.conftest import REPO
from tests.oracle import GOOGLE_PROTOS, HAPI_ROOTS, PBJ_IT, google_class, protoc

PBJ_IT_FILES = sorted(p.name for p in PBJ_IT.glob("*.proto"))


def _shipped_hapi() -> bytes:
    return resources.files("pbj").joinpath("data", "hapi-v0.55.0.binpb").read_bytes()


@pytest.fixture(scope="module")
def hapi():
    return pbj.load_descriptor_set(_shipped_hapi())


def _google_messages(data: bytes) -> dict[str, object]:
    """Full name -> Google descriptor of every message (map entries excluded) of a descriptor set."""
    pool = descriptor_pool.DescriptorPool()
    fds = descriptor_pb2.FileDescriptorSet.FromString(data)
    for fd in fds.file:
        pool.Add(fd)
    out = {}

    def walk(desc):
        if not desc.GetOptions().map_entry:
            out[desc.full_name] = desc
        for nested in desc.nested_types:
            walk(nested)

    for fd in fds.file:
        for desc in pool.FindFileByName(fd.name).message_types_by_name.values():
            walk(desc)
    return out


def _check_against_google(cls, gdesc) -> None:
    """Every field of a loaded class agrees with Google's descriptor of the same message."""
    mi = pbj.schema.info(cls)
    assert mi.full_name == gdesc.full_name
    ours = {f.number: f for f in pbj.fields(cls)}
    theirs = {g.number: g for g in gdesc.fields}
    assert sorted(ours) == sorted(theirs), gdesc.full_name
    for number, g in theirs.items():
        f = ours[number]
        where = f"{gdesc.full_name}.{g.name}"
        assert f.proto_name == g.name, where
        assert f.json_name == g.json_name, where
        is_map = g.message_type is not None and g.message_type.GetOptions().map_entry
        assert f.is_map == bool(is_map), where
        assert f.repeated == g.is_repeated, where
        assert f.packed == g.is_packed, where
        assert f.required == g.is_required, where
        if not g.is_repeated:
            assert f.optional == g.has_presence, where
        if f.oneof is not None:
            assert g.containing_oneof is not None, where
        if g.type == g.TYPE_GROUP:
            assert f.group, where
        if g.has_default_value and not g.is_repeated and g.message_type is None:
            if isinstance(g.default_value, float) and math.isnan(g.default_value):
                assert math.isnan(f.default), where
            else:
                assert f.default == g.default_value, where
        if g.enum_type is not None:
            target = f.map_value if f.is_map else f.type
            assert issubclass(target, enum.IntEnum)
            assert {k: int(m) for k, m in target.__members__.items()} == {v.name: v.number for v in g.enum_type.values}


# ------------------------------------------------------------------ HAPI

def test_hapi_counts(hapi):
    fds = descriptor_pb2.FileDescriptorSet.FromString(_shipped_hapi())
    assert len(hapi.files) == len(fds.file) == 167
    top = [f"{fd.package}.{m.name}" if fd.package else m.name for fd in fds.file for m in fd.message_type]
    assert len(top) == 344
    assert all(name in hapi for name in top)


def test_hapi_matches_google(hapi):
    google = _google_messages(_shipped_hapi())
    assert set(hapi.messages) == set(google)
    for name, gdesc in google.items():
        _check_against_google(hapi[name], gdesc)


def test_hapi_from_proto_files_matches_shipped_set(hapi):
    files = sorted(str(p.relative_to(root)) for root in HAPI_ROOTS for p in root.rglob("*.proto"))
    ns = pbj.load_proto(files, include=[*HAPI_ROOTS, GOOGLE_PROTOS])
    assert set(ns.messages) == set(hapi.messages)
    assert set(ns.enums) == set(hapi.enums)


def test_namespace_access(hapi):
    block = hapi["com.hedera.hapi.block.stream.Block"]
    assert hapi[".com.hedera.hapi.block.stream.Block"] is block
    assert hapi.com.hedera.hapi.block.stream.Block is block
    assert pbj.schema.info(block).full_name == "com.hedera.hapi.block.stream.Block"
    assert "com.hedera.hapi.block.stream.Block" in hapi
    assert "com.hedera.hapi.block.stream.Nope" not in hapi
    assert list(hapi) == list(hapi.messages)
    assert len(hapi) == len(hapi.messages)
    assert all(isinstance(e, type) and issubclass(e, enum.IntEnum) for e in hapi.enums.values())
    assert hapi.proto.ResponseCodeEnum is hapi.enums["proto.ResponseCodeEnum"]
    assert hapi.proto.ResponseCodeEnum.OK == 0
    with pytest.raises(KeyError, match="Nope"):
        hapi["com.hedera.hapi.block.stream.Nope"]
    with pytest.raises(AttributeError, match="nope"):
        hapi.com.hedera.nope  # noqa: B018


def test_nested_types_are_attributes(hapi):
    nested = [n for n in hapi.messages if n.rsplit(".", 1)[0] in hapi.messages]
    assert nested
    for name in nested:
        outer, short = name.rsplit(".", 1)
        assert getattr(hapi[outer], short) is hapi[name]


def test_hapi_uses_well_known_classes(hapi):
    from pbj.wellknown import WELL_KNOWN

    assert hapi["google.protobuf.StringValue"] is WELL_KNOWN["google.protobuf.StringValue"]


# ------------------------------------------------------------------ pbj-it and Google's test messages

def test_pbj_it_load_proto_and_descriptor_set_agree():
    data = protoc(PBJ_IT_FILES, [PBJ_IT])
    from_set = pbj.load_descriptor_set(data)
    from_proto = pbj.load_proto(PBJ_IT_FILES, include=[PBJ_IT])
    assert set(from_set.messages) == set(from_proto.messages) == set(_google_messages(data))
    google = _google_messages(data)
    for name in from_proto:
        _check_against_google(from_proto[name], google[name])
        _check_against_google(from_set[name], google[name])


@pytest.mark.parametrize("name", ["test_messages_proto3.proto", "test_messages_proto2.proto"])
def test_google_test_messages(name):
    files = [f"google/protobuf/{name}"]
    data = protoc(files, [GOOGLE_PROTOS])
    ns = pbj.load_proto(files, include=[GOOGLE_PROTOS])
    google = _google_messages(data)
    assert set(ns.messages) == set(google)
    for full, gdesc in google.items():
        _check_against_google(ns[full], gdesc)


def test_proto3_field_names_kept():
    ns = pbj.load_proto(["google/protobuf/test_messages_proto3.proto"], include=[GOOGLE_PROTOS])
    cls = ns["protobuf_test_messages.proto3.TestAllTypesProto3"]
    names = {f.name for f in pbj.fields(cls)}
    assert {"_field_name3", "__field_name13", "field_name17__", "FIELD_NAME11"} <= names
    value = cls(_field_name3=3, __field_name13=13)
    gcls = google_class("protobuf_test_messages.proto3.TestAllTypesProto3")
    expected = gcls(_field_name3=3, __field_name13=13).SerializeToString(deterministic=True)
    assert pbj.encode(value) == expected
    assert pbj.encode(value, reverse=True) == expected
    assert pbj.decode(cls, expected) == value


# ------------------------------------------------------------------ features, on small schemas

def _write(tmp_path, text: str, name: str = "t.proto"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def test_keywords_oneofs_optional_and_maps(tmp_path):
    path = _write(tmp_path, """
        syntax = "proto3";
        package kw.test;
        enum Color { RED = 0; GREEN = 1; }
        message Msg {
          int32 from = 1;
          string class = 2;
          optional int64 maybe = 3;
          oneof choice { string text = 4; Msg again = 5; Color color = 6; }
          map<string, Msg> children = 7;
          repeated sint32 packed_ints = 8;
          repeated sint32 loose_ints = 9 [packed = false];
          int32 json = 10 [json_name = "jay"];
        }
    """)
    ns = pbj.load_proto([path])
    cls = ns.kw.test.Msg
    mi = pbj.schema.info(cls)
    by_proto = {f.proto_name: f for f in pbj.fields(cls)}
    assert by_proto["from"].name == "from_"
    assert by_proto["class"].name == "class_"
    assert by_proto["maybe"].optional and by_proto["maybe"].oneof is None
    assert [o.name for o in mi.oneofs] == ["choice"]
    assert [m.name for m in mi.oneofs[0].members] == ["text", "again", "color"]
    assert by_proto["children"].is_map and by_proto["children"].map_value is cls
    assert by_proto["packed_ints"].packed and not by_proto["loose_ints"].packed
    assert by_proto["json"].json_name == "jay"
    assert "kw.test.Msg.ChildrenEntry" not in ns  # map entries are not classes
    value = cls(from_=-1, class_="c", maybe=0, choice=pbj.OneOf("again", cls(from_=2)),
                children={"a": cls(json=5)}, packed_ints=(1, -2), loose_ints=(3, -4), json=7)
    protoc([path], [tmp_path])
    gcls = google_class("kw.test.Msg")
    expected = gcls.FromString(pbj.encode(value)).SerializeToString(deterministic=True)
    assert getattr(gcls.FromString(expected), "from") == -1
    assert pbj.encode(value) == expected
    assert pbj.encode(value, reverse=True) == expected
    assert pbj.decode(cls, expected) == value


def test_proto2_labels_defaults_and_groups(tmp_path):
    path = _write(tmp_path, r"""
        syntax = "proto2";
        package p2.test;
        enum E { A = 1; B = 2; }
        message M {
          optional int32 i = 1 [default = -7];
          optional double d = 2 [default = inf];
          optional string s = 3 [default = "he\"llo"];
          optional bytes b = 4 [default = "\001\xff\\z"];
          optional E e = 5 [default = B];
          optional bool t = 6 [default = true];
          required uint64 r = 7;
          repeated int32 unpacked = 8;
          repeated int32 packed = 9 [packed = true];
          optional group G = 10 { optional int32 x = 11; }
          optional float nan = 12 [default = nan];
        }
    """, "p2.proto")
    ns = pbj.load_proto([path])
    cls = ns["p2.test.M"]
    assert pbj.schema.info(cls).syntax == "proto2"
    data = protoc([path], [tmp_path])
    google = _google_messages(data)
    _check_against_google(cls, google["p2.test.M"])
    by_name = {f.proto_name: f for f in pbj.fields(cls)}
    assert by_name["b"].default == b"\x01\xff\\z"
    assert by_name["e"].default is ns["p2.test.E"].B
    group_cls = ns["p2.test.M.G"]
    value = cls(i=0, r=1, unpacked=(1, 2), packed=(3, 4), g=group_cls(x=5))
    gcls = google_class("p2.test.M")
    expected = gcls.FromString(pbj.encode(value)).SerializeToString(deterministic=True)
    assert expected == bytes.fromhex("0800" "3801" "4001" "4002" "4a020304" "53" "5805" "54")
    assert pbj.encode(value) == expected
    assert pbj.encode(value, reverse=True) == expected
    assert pbj.decode(cls, expected) == value


# ------------------------------------------------------------------ pickling

_SMALL = """
    syntax = "proto3";
    package pick.test;
    enum Kind { NONE = 0; BIG = 1; }
    message Leaf { string name = 1; Kind kind = 2; }
    message Tree { Leaf leaf = 1; repeated Tree kids = 2; map<int32, Leaf> index = 3;
                   oneof o { string s = 4; Leaf l = 5; } }
"""


def _small_tree(ns):
    tree, leaf = ns.pick.test.Tree, ns.pick.test.Leaf
    kind = ns.pick.test.Kind
    return tree(leaf=leaf(name="a", kind=kind.BIG), kids=(tree(o=pbj.OneOf("s", "x")),),
                index={3: leaf(name="b")}, _pbj_unknown=b"\xa0\x06\x01")


def test_pickle_same_process(tmp_path):
    ns = pbj.load_proto([_write(tmp_path, _SMALL)])
    value = _small_tree(ns)
    back = pickle.loads(pickle.dumps(value))
    assert back == value and type(back) is type(value)
    assert pbj.unknown_fields(back) == b"\xa0\x06\x01"
    assert pickle.loads(pickle.dumps(ns.pick.test.Tree)) is ns.pick.test.Tree
    assert pickle.loads(pickle.dumps(ns.pick.test.Kind.BIG)) is ns.pick.test.Kind.BIG


_CHILD = """
import pickle, sys
import pbj
ns = pbj.load_proto([sys.argv[1]])
value = pickle.loads(sys.stdin.buffer.read())
assert type(value) is ns.pick.test.Tree, type(value)
sys.stdout.write(pbj.encode(value).hex())
"""


def test_pickle_across_processes(tmp_path):
    path = _write(tmp_path, _SMALL)
    ns = pbj.load_proto([path])
    value = _small_tree(ns)
    out = subprocess.run([sys.executable, "-c", _CHILD, str(path)], input=pickle.dumps(value),
                         capture_output=True, check=True, cwd=REPO)
    assert bytes.fromhex(out.stdout.decode()) == pbj.encode(value)


_POOL_SCHEMA: list = []


def _pool_init(path: str) -> None:
    _POOL_SCHEMA.append(pbj.load_proto([path]))


def _pool_decode(data: bytes):
    return pbj.decode(_POOL_SCHEMA[0].pick.test.Tree, data)


def test_multiprocessing_returns_loaded_instances(tmp_path):
    path = _write(tmp_path, _SMALL)
    ns = pbj.load_proto([path])
    value = _small_tree(ns)
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(1, initializer=_pool_init, initargs=(str(path),)) as pool:
        results = pool.map(_pool_decode, [pbj.encode(value)] * 2)
    assert results == [value, value]
    assert all(type(r) is ns.pick.test.Tree for r in results)


# ------------------------------------------------------------------ errors

def test_protoc_errors_are_schema_errors(tmp_path):
    path = _write(tmp_path, """
        syntax = "proto3";
        message Broken { int32 a = 1; strin b = 2; }
    """, "broken.proto")
    with pytest.raises(pbj.SchemaError) as info:
        pbj.load_proto([path])
    assert "broken.proto" in str(info.value) and "strin" in str(info.value)


def test_missing_file_is_schema_error(tmp_path):
    with pytest.raises(pbj.SchemaError, match=r"no such \.proto file: .*missing\.proto"):
        pbj.load_proto([tmp_path / "missing.proto"])


def test_missing_grpc_tools_is_schema_error(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "grpc_tools", None)
    with pytest.raises(pbj.SchemaError, match="grpcio-tools"):
        pbj.load_proto([_write(tmp_path, _SMALL)])


@pytest.mark.parametrize("cut", [1, 100, 5000, 65000])
def test_truncated_descriptor_set(cut):
    with pytest.raises((pbj.DecodeError, pbj.SchemaError)):
        pbj.load_descriptor_set(_shipped_hapi()[:-cut])


def test_unknown_type_name_registers_nothing():
    fds = descriptor_pb2.FileDescriptorSet()
    fd = fds.file.add(name="bad.proto", package="bad.pkg", syntax="proto3")
    msg = fd.message_type.add(name="Good")
    msg.field.add(name="x", number=1, type=descriptor_pb2.FieldDescriptorProto.TYPE_INT32,
                  label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL)
    bad = fd.message_type.add(name="Bad")
    bad.field.add(name="y", number=1, type=descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE,
                  label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL, type_name=".bad.pkg.Missing")
    with pytest.raises(pbj.SchemaError, match="Missing"):
        pbj.load_descriptor_set(fds.SerializeToString())
    assert "bad.pkg.Good" not in loader._REGISTRY


def test_duplicate_field_number_is_schema_error():
    fds = descriptor_pb2.FileDescriptorSet()
    fd = fds.file.add(name="dup.proto", package="dup", syntax="proto3")
    msg = fd.message_type.add(name="Dup")
    for name in ("a", "b"):
        msg.field.add(name=name, number=1, type=descriptor_pb2.FieldDescriptorProto.TYPE_INT32,
                      label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL)
    _refused_on_use_and_eagerly(fds.SerializeToString(), "dup.Dup", "already used")


def _refused_on_use_and_eagerly(data: bytes, name: str, match: str) -> None:
    """A declaration pbj refuses raises when its class is first used, again on every later use, and
    when the load builds every class (``lazy=False``, which then registers nothing)."""
    ns = pbj.load_descriptor_set(data)  # the index only: the refused class is not built yet
    for _ in range(2):
        with pytest.raises(pbj.SchemaError, match=match):
            ns[name]
    with pytest.raises(pbj.SchemaError, match=match):
        ns.build_all()
    del ns
    with pytest.raises(pbj.SchemaError, match=match):
        pbj.load_descriptor_set(data, lazy=False)


def test_garbage_is_decode_error():
    with pytest.raises(pbj.DecodeError):
        pbj.load_descriptor_set(b"\x0a\xff\xff\xff\xff\x0f")


@pytest.mark.parametrize("name", ["__", "____", "_pbj_size", "_pbj", "__init__", "class"])
def test_reserved_field_names_load_quickly(name):
    """Names that clash with Python or pbj's own slots get a new attribute name (a dunder name used
    to loop forever, found by the CI run of the loader fuzz test)."""
    from google.protobuf import descriptor_pb2

    fds = descriptor_pb2.FileDescriptorSet()
    fd = fds.file.add(name="n.proto", package="n", syntax="proto3")
    msg = fd.message_type.add(name="M")
    msg.field.add(name=name, number=1, type=descriptor_pb2.FieldDescriptorProto.TYPE_INT32,
                  label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL)
    cls = pbj.load_descriptor_set(fds.SerializeToString())["n.M"]
    (info,) = pbj.fields(cls)
    assert info.proto_name == name and info.name != name
    value = cls(**{info.name: 7})
    assert pbj.decode(cls, pbj.encode(value)) == value
    assert pbj.encode(value) == b"\x08\x07" == pbj.encode(value, reverse=True)


def test_non_identifier_field_name_is_a_schema_error():
    fds = descriptor_pb2.FileDescriptorSet()
    fd = fds.file.add(name="n2.proto", package="n2", syntax="proto3")
    fd.message_type.add(name="M").field.add(name="a-b", number=1,
                                            type=descriptor_pb2.FieldDescriptorProto.TYPE_INT32)
    _refused_on_use_and_eagerly(fds.SerializeToString(), "n2.M", "not an identifier")
    with pytest.raises(pbj.SchemaError) as refused:
        pbj.load_descriptor_set(fds.SerializeToString())["n2.M"]
    assert refused.value.cls_name == "n2.M" and refused.value.field_name == "a-b"  # names its message


def test_non_identifier_enum_value_name_is_a_schema_error():
    """protoc refuses it; kept, the text format would write it as it is (a line break in a name
    wrote another field: 'ZERO\\nx: 99')."""
    fds = descriptor_pb2.FileDescriptorSet()
    fd = fds.file.add(name="n5.proto", package="n5", syntax="proto3")
    enum = fd.enum_type.add(name="E")
    enum.value.add(name="ZERO\nx: 99", number=0)
    enum.value.add(name="ONE", number=1)
    fd.message_type.add(name="M").field.add(name="k", number=1, type=descriptor_pb2.FieldDescriptorProto.TYPE_ENUM,
                                            type_name=".n5.E")
    _refused_on_use_and_eagerly(fds.SerializeToString(), "n5.E", "n5.E: enum value name .* is not an identifier")
    _refused_on_use_and_eagerly(fds.SerializeToString(), "n5.M", "not an identifier")


def test_open_enum_whose_first_value_is_not_zero_is_a_schema_error():
    """proto3 "Enumerations": an open enum's first value is its zero default (found by the loader fuzz test:
    an implicit-presence field then wrote its default)."""
    fds = descriptor_pb2.FileDescriptorSet()
    fd = fds.file.add(name="n3.proto", package="n3", syntax="proto3")
    fd.enum_type.add(name="E").value.add(name="E_MINUS", number=-1)
    _refused_on_use_and_eagerly(fds.SerializeToString(), "n3.E", "first enum value must be zero")


def test_field_names_renamed_for_python_as_documented(tmp_path):
    """docs/loading-schemas.md, "Fields, enums, oneofs": keywords get "_", _pbj* and dunder names an "f"."""
    from tests.oracle import protoc_sources

    _, data = protoc_sources(tmp_path, {"ren.proto": """
        syntax = "proto2";  // proto3 refuses "from" and "from_" (the same default JSON name)
        package ren;
        message R {
          optional int32 from = 1;
          optional int32 _pbj_unknown = 2;
          optional int32 __init__ = 3;
          optional int32 from_ = 4 [json_name = "fromAgain"];
          optional int32 plain = 5;
        }
    """})
    R = pbj.load_descriptor_set(data)["ren.R"]
    names = [(f.name, f.proto_name) for f in pbj.fields(R)]
    assert names == [("from_", "from"), ("f_pbj_unknown", "_pbj_unknown"), ("f__init__", "__init__"),
                     ("from__", "from_"), ("plain", "plain")]
    r = R(from_=1, f_pbj_unknown=2, f__init__=3, from__=4, plain=5)
    assert pbj.encode(r) == bytes.fromhex("0801100218032004" + "2805")
    assert pbj.unknown_fields(r) == b""
    assert pbj.from_json(R, pbj.to_json(r)) == r and '"fromAgain":4' in pbj.to_json(r)
    assert pbj.from_text(R, pbj.to_text(r)) == r and "_pbj_unknown: 2" in pbj.to_text(r)


def test_a_nested_type_named_by_a_keyword_is_also_reached_with_an_underscore(monkeypatch, tmp_path):
    """``message Holder { enum class {...} message def {...} }``: ``Holder.class_`` and ``Holder.def_`` (the names
    ``pbj stubs`` declares, since no Python source can write ``Holder.class``) are the classes ``getattr(Holder,
    "class")`` gives; a field that already holds ``class_`` (a field named ``class_``) keeps it."""
    fds = descriptor_pb2.FileDescriptorSet()
    fd = fds.file.add(name="n6.proto", package="n6", syntax="proto3")
    holder = fd.message_type.add(name="Holder")
    holder.enum_type.add(name="class").value.add(name="ZERO", number=0)
    int32 = descriptor_pb2.FieldDescriptorProto.TYPE_INT32
    holder.nested_type.add(name="def").field.add(name="x", number=1, type=int32)
    holder.nested_type.add(name="if")
    holder.field.add(name="if_", number=1, type=int32)
    from pbj.loader import set_cache

    monkeypatch.setenv("PBJ_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("PBJ_NO_CACHE", raising=False)
    set_cache._write_pending()  # (entries other tests kept are not this test's)
    for cached in (False, True):  # a first process, then one that makes the class from the kept declaration
        ns = pbj.load_descriptor_set(fds.SerializeToString())
        assert (ns._schema._index is None) is cached  # a load that found its set in the cache does not decode it
        h = ns["n6.Holder"]
        assert h.class_ is getattr(h, "class") is ns["n6.Holder.class"], cached
        assert h.def_ is getattr(h, "def") is ns["n6.Holder.def"]
        assert pbj.encode(h.def_(x=3)) == bytes.fromhex("0803")
        assert pbj.encode(h(if_=2)) == pbj.encode(h(if_=2), reverse=True) == bytes.fromhex("0802")
        set_cache._write_pending()  # what the process's exit runs
