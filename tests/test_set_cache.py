"""The schema cache's descriptor-set entries: a set's names and its classes' declarations, kept on disk.

A process's end is stood for by ``set_cache._write_pending()`` (what the process's exit runs);
a load that found its set in the cache does not decode it (``schema._index`` stays ``None``).
Every test has a cache folder of its own.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import pbj
from pbj import descriptor as d
from pbj.loader import cache, declarations, set_cache

# proto2: a required field, a declared default, a closed enum, a map, a oneof, a group, a packed field
SHOP = pbj.encode(d.FileDescriptorSet(file=(d.FileDescriptorProto(
    name="shop.proto", package="cachetest", syntax="proto2",
    enum_type=(d.EnumDescriptorProto(name="Size", value=(
        d.EnumValueDescriptorProto(name="SMALL", number=1), d.EnumValueDescriptorProto(name="LARGE", number=2))),),
    message_type=(
        d.DescriptorProto(name="Item", field=(
            d.FieldDescriptorProto(name="id", number=1, label=2, type=3),
            d.FieldDescriptorProto(name="size", number=2, label=1, type=14, type_name=".cachetest.Size",
                                   default_value="LARGE"),
            d.FieldDescriptorProto(name="name", number=3, label=1, type=9, default_value="none"),
            d.FieldDescriptorProto(name="tags", number=4, label=3, type=11, type_name=".cachetest.Item.TagsEntry"),
            d.FieldDescriptorProto(name="code", number=5, label=1, type=13, oneof_index=0),
            d.FieldDescriptorProto(name="label", number=6, label=1, type=9, oneof_index=0),
            d.FieldDescriptorProto(name="counts", number=7, label=3, type=5,
                                   options=d.FieldOptions(packed=True)),
            d.FieldDescriptorProto(name="parent", number=8, label=1, type=11, type_name=".cachetest.Item")),
            oneof_decl=(d.OneofDescriptorProto(name="key"),),
            nested_type=(d.DescriptorProto(name="TagsEntry", options=d.MessageOptions(map_entry=True), field=(
                d.FieldDescriptorProto(name="key", number=1, label=1, type=9),
                d.FieldDescriptorProto(name="value", number=2, label=1, type=5))),)),
        # refused when its class is built: field number 1 twice
        d.DescriptorProto(name="Twice", field=(
            d.FieldDescriptorProto(name="a", number=1, label=1, type=5),
            d.FieldDescriptorProto(name="b", number=1, label=1, type=5))),
        d.DescriptorProto(name="Other", field=(d.FieldDescriptorProto(name="n", number=1, label=1, type=5),)),
    )),)))


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.setenv("PBJ_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("PBJ_NO_CACHE", raising=False)
    set_cache._write_pending()  # entries other tests kept are not this test's
    return tmp_path


def _decoded(ns) -> bool:
    return ns._schema._index is not None


def _item_facts(ns):
    """What a class does: its bytes, its defaults, its errors."""
    Item = ns["cachetest.Item"]
    item = Item(id=7, tags={"a": 1}, key=pbj.OneOf("label", "x"), counts=(1, 2), parent=Item(id=1))
    data = pbj.encode(item)
    with pytest.raises(pbj.DecodeError) as missing:
        pbj.decode(Item, b"\x10\x01")  # no id: the required field
    with pytest.raises(pbj.SchemaError) as refused:
        ns["cachetest.Twice"]
    back = pbj.decode(Item, data)
    return (data, pbj.encode(item, reverse=True), back == item, back.size.name, back.name, str(missing.value),
            str(refused.value), [f.name for f in pbj.fields(Item)], Item.__qualname__, type(back.parent) is Item)


def test_a_second_process_reads_the_names_and_declarations(folder):
    first = pbj.load_descriptor_set(SHOP)
    cold = _item_facts(first)
    set_cache._write_pending()
    entries = [n for n in os.listdir(folder) if n.startswith("set-")]
    assert len(entries) == 1 and not any(n.startswith(".tmp") for n in os.listdir(folder))
    second = pbj.load_descriptor_set(SHOP)
    assert not _decoded(second)  # names and declarations from the cache: the set is not decoded
    assert set(cache.read_set_entry(folder, cache.set_key(pbj.__version__, set_cache._maker()), SHOP)[1]) == {
        "cachetest.Item", "cachetest.Size"}  # not Twice's: a record is kept once its class is built
    assert _item_facts(second) == cold
    assert cold[0] == bytes.fromhex("0807 2205 0a0161 1001 320178 3a020102 42020801")
    assert _decoded(second)  # Twice, refused again, had no record
    third = pbj.load_descriptor_set(SHOP)
    assert third["cachetest.Item"](id=1).id == 1 and third["cachetest.Size"].LARGE == 2
    assert not _decoded(third)  # every class it built had its record
    assert [f.name for f in third.files] == ["shop.proto"]  # the files: decoded when first read
    assert _decoded(third)


def test_a_damaged_truncated_or_foreign_entry_is_ignored_and_written_again(folder):
    cold = _item_facts(pbj.load_descriptor_set(SHOP))
    set_cache._write_pending()
    (path,) = [folder / n for n in os.listdir(folder) if n.startswith("set-")]
    whole = path.read_bytes()
    key = cache.set_key(pbj.__version__, set_cache._maker())
    content = cache.read_set_entry(folder, key, SHOP)
    assert content is not None
    for damaged in (whole[:-1] + bytes([whole[-1] ^ 1]), whole[: len(whole) // 2], b"", whole[:5]):
        path.write_bytes(damaged)
        ns = pbj.load_descriptor_set(SHOP)
        assert _decoded(ns) and _item_facts(ns) == cold
        set_cache._write_pending()
        assert cache.read_set_entry(folder, key, SHOP) == content  # written again, whole
    # an entry of the same name whose content marshal wrote but whose records have another shape
    summary = content[0]
    for bad in ({"cachetest.Item": ("message", "Item")}, {"cachetest.Item": 5}, {"cachetest.Size": ("enum",)}):
        cache.write_set_entry(folder, key, SHOP, (summary, bad))
        ns = pbj.load_descriptor_set(SHOP)
        assert not _decoded(ns)
        assert _item_facts(ns) == cold and _decoded(ns)  # the record was derived again
        set_cache._write_pending()
    # a record of the right shape naming an attribute that is not an identifier, a keyword, or pbj's own
    # (made into a class without @pbj.message's checks, its names would reach generated code), or a
    # field number out of range: derived again
    item = content[1]["cachetest.Item"]
    field = item[9][0]
    for attr, number in (("a b", 1), ("class", 1), ("_pbj_size", 1), ("__init__", 1), ("id", 0), ("id", 19000)):
        forged = (*item[:9], ((field[0], attr, number, *field[3:]), *item[9][1:]), *item[10:])
        cache.write_set_entry(folder, key, SHOP, (summary, {**content[1], "cachetest.Item": forged}))
        ns = pbj.load_descriptor_set(SHOP)
        assert _item_facts(ns) == cold and _decoded(ns)
        set_cache._write_pending()
    cache.write_set_entry(folder, key, SHOP, ("not a summary", {}))
    assert _decoded(pbj.load_descriptor_set(SHOP))


def test_another_version_of_pbj_is_another_entry(folder, monkeypatch):
    pbj.load_descriptor_set(SHOP)["cachetest.Item"]
    set_cache._write_pending()
    monkeypatch.setattr(pbj, "__version__", pbj.__version__ + ".post1")
    assert _decoded(pbj.load_descriptor_set(SHOP))
    set_cache._write_pending()
    assert len([n for n in os.listdir(folder) if n.startswith("set-")]) == 2


def test_no_cache_reads_and_writes_nothing(folder, monkeypatch):
    monkeypatch.setenv("PBJ_NO_CACHE", "1")
    ns = pbj.load_descriptor_set(SHOP)
    ns["cachetest.Item"]
    set_cache._write_pending()
    assert os.listdir(folder) == [] and _decoded(ns)
    assert set_cache.open_entry(SHOP) is None


def test_an_unwritable_folder_is_no_error(folder, monkeypatch):
    blocker = folder / "file"
    blocker.write_bytes(b"")
    monkeypatch.setenv("PBJ_CACHE_DIR", str(blocker / "cache"))  # a folder below a file: never made
    assert pbj.load_descriptor_set(SHOP)["cachetest.Item"](id=1).id == 1
    set_cache._write_pending()
    assert pbj.load_descriptor_set(SHOP)["cachetest.Item"](id=1).id == 1


def test_a_folder_that_cannot_be_reached_is_no_error(folder, monkeypatch):
    """A cache folder whose path the system refuses (a name longer than a file name may be; as for
    a parent folder the user may not read) is as a folder that cannot be written."""
    monkeypatch.setenv("PBJ_CACHE_DIR", str(folder / ("x" * 300) / "pbj"))
    assert pbj.load_descriptor_set(SHOP)["cachetest.Item"](id=1).id == 1
    set_cache._write_pending()
    assert pbj.load_descriptor_set(SHOP)["cachetest.Item"](id=1).id == 1
    assert os.listdir(folder) == []


_PROCESS = """
import sys, pbj
ns = pbj.load_descriptor_set(open(sys.argv[1], "rb").read())
cls = ns[sys.argv[2]]
print(int(ns._schema._index is None), pbj.encode(cls(**{sys.argv[3]: 5})).hex())
"""


@pytest.mark.slow
def test_two_processes_share_the_cache_and_add_to_it(folder):
    """The first process derives Item's record (and its enum's); the second reads them, derives
    Other's and adds it to the entry; the third builds Other from the cache without decoding the set."""
    path = folder / "shop.binpb"
    path.write_bytes(SHOP)
    env = {**os.environ, "PBJ_CACHE_DIR": str(folder)}
    env.pop("PBJ_NO_CACHE", None)
    key = cache.set_key(pbj.__version__, set_cache._maker())

    def run(name: str, attr: str) -> list[str]:
        return subprocess.run([sys.executable, "-c", _PROCESS, str(path), name, attr], env=env, check=True,
                              capture_output=True, text=True).stdout.split()

    assert run("cachetest.Item", "id") == ["0", "0805"]  # the first process decodes the set
    assert set(cache.read_set_entry(folder, key, SHOP)[1]) == {"cachetest.Item", "cachetest.Size"}
    assert run("cachetest.Other", "n") == ["0", "0805"]  # no record of Other: the set is decoded
    assert set(cache.read_set_entry(folder, key, SHOP)[1]) == {"cachetest.Item", "cachetest.Size", "cachetest.Other"}
    assert run("cachetest.Other", "n") == ["1", "0805"]
    assert run("cachetest.Item", "id") == ["1", "0805"]


def _shape(ns) -> dict:
    """Every class and enum of a load, built, as what tells them apart: fields, names, members."""
    ns.build_all()
    out = {}
    for name in ns.messages:
        cls = ns[name]
        out[name] = (repr(pbj.fields(cls)), cls.__qualname__, cls.__module__,
                     getattr(cls, "__pbj_json_rules__", None), sorted(getattr(cls, "__pbj_fields_taken__", ())))
    for name in ns.enums:
        cls = ns[name]
        out[name] = ([(m.name, int(m)) for m in cls], cls.__qualname__, cls.__pbj_closed__,
                     getattr(cls, "__pbj_proto_names__", None))
    return out


@pytest.mark.slow
def test_every_class_of_a_real_schema_is_the_same_from_the_cache(folder):
    """HAPI's every message and enum, made from declarations the cache kept, against a load without
    the cache; and the shipped block decodes and encodes to the same bytes."""
    from pbj.bench.workload import BLOCK_FILE, BLOCK_TYPE, SCHEMA_FILE, read_block_file

    data_dir = Path(pbj.__file__).parent / "data"
    schema = (data_dir / SCHEMA_FILE).read_bytes()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PBJ_NO_CACHE", "1")
        cold_ns = pbj.load_descriptor_set(schema)
        cold = _shape(cold_ns)
        cold_made = {n: _made(cold_ns[n]) for n in cold_ns.messages}
    pbj.load_descriptor_set(schema).build_all()
    set_cache._write_pending()
    warm_ns = pbj.load_descriptor_set(schema)
    assert _shape(warm_ns) == cold and not _decoded(warm_ns)
    assert {n: _made(warm_ns[n]) for n in warm_ns.messages} == cold_made
    payload = read_block_file(data_dir / BLOCK_FILE)[0]
    block = warm_ns[BLOCK_TYPE]
    assert pbj.encode(pbj.decode(block, payload)) == payload


def _made(cls) -> tuple:
    """Everything a class made from a record holds that tells it apart: its schema record
    (fields with their presence, packing, UTF-8 checks, defaults, group encoding), its
    namespace's names, what first use will build, its annotations."""
    info = cls.__pbj_info__
    ns_names = sorted(k for k in cls.__dict__ if k not in ("__pbj_load__", "__pbj_schema__", "__pbj_namespace__"))
    return (repr(info.fields), repr(info.oneofs), info.attr_order, info.syntax, info.map_entry, info.message_set,
            info.extension_ranges, sorted(info.reserved_names), info.full_name, cls.__name__, cls.__qualname__,
            cls.__module__, cls.__doc__, ns_names, cls.__dict__.get("__pbj_attrs_pending__"), repr(cls.__annotations__),
            cls.__pbj_slots__.__slots__, cls.__pbj_slots__.__name__, sorted(getattr(cls, "__pbj_fields_taken__", ())),
            cls.__pbj_defaults__, getattr(cls, "__pbj_json_rules__", None),
            [(f.name, getattr(f.type, "__pbj_closed__", None)) for f in info.all_fields()])


@pytest.mark.slow
@pytest.mark.parametrize("name", ["conformance.binpb", "editions.binpb"])
def test_a_class_made_from_its_kept_record_is_the_class_its_declaration_makes(folder, name, monkeypatch):
    """A record the cache kept is made into a class without ``@pbj.message``'s declaration step
    (``build_checked_from``): every message of the conformance sets (proto2 defaults, groups,
    closed enums, maps, oneofs, extension ranges, message sets; the editions features) is the
    same both ways, and its messages encode and refuse input alike."""
    schema = (Path(pbj.__file__).parent / "data" / "conformance" / name).read_bytes()
    cold_ns = pbj.load_descriptor_set(schema)
    cold_ns.build_all()
    set_cache._write_pending()
    made_from_records = []
    make = declarations.build_checked_from
    monkeypatch.setattr(declarations, "build_checked_from",
                        lambda schema, full, record: made_from_records.append(full) or make(schema, full, record))
    warm_ns = pbj.load_descriptor_set(schema)
    warm_ns.build_all()
    assert sorted(made_from_records) == sorted(n for n in warm_ns.messages if warm_ns[n].__module__ != "pbj.wellknown")
    assert {n: _made(warm_ns[n]) for n in warm_ns.messages} == {n: _made(cold_ns[n]) for n in cold_ns.messages}
    for full in ("protobuf_test_messages.proto2.TestAllTypesProto2",
                 "protobuf_test_messages.editions.proto2.TestAllTypesProto2",
                 "protobuf_test_messages.editions.TestAllTypesEdition2023"):
        if full not in cold_ns.messages:
            continue
        cold, warm = cold_ns[full], warm_ns[full]
        made = {}
        for cls in (cold, warm):
            obj = cls(optional_int32=-1, optional_string="é", repeated_int32=(1, 2), map_int32_int32={1: 2})
            with pytest.raises(pbj.DecodeError) as refused:
                pbj.decode(cls, b"\x0a\x05ab")  # a LEN field running past the end
            made[cls] = (pbj.encode(obj), pbj.encode(obj, reverse=True), repr(obj), str(refused.value),
                         getattr(obj, "default_int32", None), pbj.decode(cls, pbj.encode(obj)) == obj)
        assert made[cold] == made[warm]
        assert made[cold][0] == made[cold][1]
