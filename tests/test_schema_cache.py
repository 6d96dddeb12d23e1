"""``load_proto``'s schema cache: a second load of the same files reads protoc's descriptor set from disk.

Every test points ``PBJ_CACHE_DIR`` at a folder of its own and checks when protoc runs (by
counting calls of the loader's protoc runner), what is written, and that a stale, shadowed or
damaged entry is never used.
"""

from __future__ import annotations

import os
import textwrap

import pytest

import pbj
from pbj.loader import cache, protoc

SHOP = textwrap.dedent("""
    syntax = "proto3";
    package cached;
    import "money.proto";
    message Item { string name = 1; Money price = 2; }
""")
MONEY = 'syntax = "proto3";\npackage cached;\nmessage Money { int64 cents = 1; }\n'


@pytest.fixture
def runs(tmp_path, monkeypatch):
    """The number of protoc runs so far (a list of their arguments), with the cache in ``tmp_path/cache``."""
    monkeypatch.setenv("PBJ_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("PBJ_NO_CACHE", raising=False)
    calls: list = []
    real = protoc._run_protoc
    monkeypatch.setattr(protoc, "_run_protoc", lambda args: calls.append(args) or real(args))
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "shop.proto").write_text(SHOP)
    (tmp_path / "src" / "money.proto").write_text(MONEY)
    return calls


def _item_bytes(ns) -> bytes:
    Item, Money = ns["cached.Item"], ns["cached.Money"]
    return pbj.encode(Item(name="x", price=Money(cents=5)))


def test_a_second_load_reads_the_cache(tmp_path, runs):
    first = pbj.load_proto(tmp_path / "src" / "shop.proto")
    second = pbj.load_proto(tmp_path / "src" / "shop.proto")
    assert len(runs) == 1
    assert _item_bytes(first) == _item_bytes(second) == bytes.fromhex("0a0178 12020805")
    assert [f.name for f in second.files] == [f.name for f in first.files] == ["money.proto", "shop.proto"]
    entries = os.listdir(tmp_path / "cache")
    assert len(entries) == 1 and entries[0].endswith(".binpb")  # no temporary file left behind


def test_an_edited_import_runs_protoc_again(tmp_path, runs):
    pbj.load_proto(tmp_path / "src" / "shop.proto")
    (tmp_path / "src" / "money.proto").write_text(MONEY.replace("int64 cents = 1;", "int64 cents = 1; string c = 2;"))
    ns = pbj.load_proto(tmp_path / "src" / "shop.proto")
    assert len(runs) == 2 and [f.name for f in pbj.fields(ns["cached.Money"])] == ["cents", "c"]
    pbj.load_proto(tmp_path / "src" / "shop.proto")
    assert len(runs) == 2  # the new entry replaced the old one


def test_a_file_that_now_shadows_an_import_runs_protoc_again(tmp_path, runs):
    (tmp_path / "first").mkdir()
    include = [tmp_path / "first", tmp_path / "src"]
    pbj.load_proto("shop.proto", include=include)
    (tmp_path / "first" / "money.proto").write_text(MONEY.replace("cents", "pennies"))
    ns = pbj.load_proto("shop.proto", include=include)
    assert len(runs) == 2 and [f.name for f in pbj.fields(ns["cached.Money"])] == ["pennies"]


def test_other_include_directories_are_another_entry(tmp_path, runs):
    pbj.load_proto(tmp_path / "src" / "shop.proto")
    pbj.load_proto("shop.proto", include=[tmp_path / "src"])
    assert len(runs) == 1  # the same include directory, named two ways: one entry
    (tmp_path / "extra").mkdir()
    pbj.load_proto("shop.proto", include=[tmp_path / "src", tmp_path / "extra"])
    assert len(runs) == 2


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage"])
def test_a_damaged_entry_is_never_trusted(tmp_path, runs, damage):
    pbj.load_proto(tmp_path / "src" / "shop.proto")
    (entry,) = (tmp_path / "cache").iterdir()
    raw = entry.read_bytes()
    entry.write_bytes({"truncate": raw[:-7], "flip": raw[:-3] + bytes([raw[-3] ^ 1]) + raw[-2:],
                       "garbage": b"not an entry"}[damage])
    ns = pbj.load_proto(tmp_path / "src" / "shop.proto")
    assert len(runs) == 2 and _item_bytes(ns) == bytes.fromhex("0a0178 12020805")
    assert entry.read_bytes() == raw  # written again, whole


def test_another_pbj_version_is_another_entry(tmp_path, runs, monkeypatch):
    pbj.load_proto(tmp_path / "src" / "shop.proto")
    monkeypatch.setattr(protoc, "_version", lambda: "999.0")
    pbj.load_proto(tmp_path / "src" / "shop.proto")
    assert len(runs) == 2 and len(os.listdir(tmp_path / "cache")) == 2


def test_pbj_no_cache_reads_and_writes_nothing(tmp_path, runs, monkeypatch):
    monkeypatch.setenv("PBJ_NO_CACHE", "1")
    assert cache.cache_dir() is None
    pbj.load_proto(tmp_path / "src" / "shop.proto")
    pbj.load_proto(tmp_path / "src" / "shop.proto")
    assert len(runs) == 2 and not (tmp_path / "cache").exists()


def test_refused_files_are_not_cached(tmp_path, runs):
    (tmp_path / "src" / "bad.proto").write_text('syntax = "proto3";\nmessage Bad { strin x = 1; }\n')
    for _ in range(2):
        with pytest.raises(pbj.SchemaError, match="strin"):
            pbj.load_proto(tmp_path / "src" / "bad.proto")
    assert len(runs) == 2 and not (tmp_path / "cache").exists()


def test_an_unwritable_cache_folder_is_no_error(tmp_path, runs, monkeypatch):
    blocker = tmp_path / "file-not-folder"
    blocker.write_text("")
    monkeypatch.setenv("PBJ_CACHE_DIR", str(blocker / "cache"))
    ns = pbj.load_proto(tmp_path / "src" / "shop.proto")
    assert _item_bytes(ns) == bytes.fromhex("0a0178 12020805") and len(runs) == 1


def test_the_platform_folder(monkeypatch, tmp_path):
    monkeypatch.delenv("PBJ_CACHE_DIR", raising=False)
    monkeypatch.delenv("PBJ_NO_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    if os.name == "posix" and os.uname().sysname == "Linux":
        assert cache.cache_dir() == tmp_path / "xdg" / "pbj"
    monkeypatch.setenv("PBJ_NO_CACHE", "0")
    assert cache.cache_dir() is not None


def test_a_relative_cache_folder_is_where_the_program_loaded(monkeypatch, tmp_path):
    """PBJ_CACHE_DIR=relcache names the folder under the working directory of the load: a program
    that changes directory afterwards still writes its entries there (they are written at exit)."""
    monkeypatch.delenv("PBJ_NO_CACHE", raising=False)
    monkeypatch.setenv("PBJ_CACHE_DIR", "relcache")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    monkeypatch.chdir(tmp_path / "a")
    folder = cache.cache_dir()
    monkeypatch.chdir(tmp_path / "b")
    assert folder == tmp_path / "a" / "relcache" and folder.is_absolute()
