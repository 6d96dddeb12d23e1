"""Loading schemas the way a new user first tries: relative paths, paths instead of bytes, protoc's errors."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import pbj
from pbj.wellknown import Duration
from tests.conftest import REPO

SHOP = """
    syntax = "proto3";
    package shop;
    import "money.proto";
    message Item { string name = 1; Money price = 2; }
"""
MONEY = """
    syntax = "proto3";
    package shop;
    message Money { int64 cents = 1; }
"""
BAD = """
    syntax = "proto3";
    message Bad { strin x = 1 }
"""


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A project folder with proto/shop.proto (importing money.proto) and bad/bad.proto; cwd is its root."""
    (tmp_path / "proto").mkdir()
    (tmp_path / "proto" / "shop.proto").write_text(textwrap.dedent(SHOP))
    (tmp_path / "proto" / "money.proto").write_text(textwrap.dedent(MONEY))
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "bad.proto").write_text(textwrap.dedent(BAD))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _check_shop(ns: pbj.Namespace) -> None:
    Item, Money = ns["shop.Item"], ns["shop.Money"]
    item = Item(name="tea", price=Money(cents=250))
    assert pbj.encode(item) == b"\n\x03tea\x12\x03\x08\xfa\x01"
    assert pbj.decode(Item, pbj.encode(item)) == item


@pytest.mark.parametrize("args", [
    ("proto/shop.proto",),                              # relative to the current directory, no include
    (Path("proto/shop.proto"),),                        # a Path
    ("proto/shop.proto", ["proto"]),                    # relative path and relative include
    ("shop.proto", ["proto"]),                          # a name inside the include directory
    ("./proto/../proto/shop.proto", ["./proto"]),       # spellings protoc would compare as text
], ids=["relative", "path", "relative-include", "name-in-include", "dotted"])
def test_load_proto_relative_paths(project, args):
    _check_shop(pbj.load_proto(*args))


def test_load_proto_absolute_path_from_elsewhere(project, monkeypatch, tmp_path_factory):
    monkeypatch.chdir(tmp_path_factory.mktemp("elsewhere"))
    _check_shop(pbj.load_proto(project / "proto" / "shop.proto"))


def test_load_proto_syntax_error_reaches_the_user(project):
    with pytest.raises(pbj.SchemaError) as err:
        pbj.load_proto("bad/bad.proto")
    text = str(err.value)
    assert "bad.proto:3:27: Expected \";\"." in text, text
    assert "proto_path" not in text


def test_load_proto_missing_file(project):
    with pytest.raises(pbj.SchemaError, match=r"^protoc failed:\n.*nope\.proto: No such file or directory"):
        pbj.load_proto("nope.proto")


def test_cli_decode_shows_protocs_error(project):
    out = subprocess.run([sys.executable, "-m", "pbj", "decode", "--proto", "bad/bad.proto", "--type", "Bad"],
                         input=b"", capture_output=True, cwd=project, timeout=300,
                         env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 1
    err = out.stderr.decode().strip()
    assert err.startswith("pbj: error: protoc failed:") and "bad.proto:3:27: Expected \";\"." in err, err
    assert "proto_path" not in err


def test_cli_decode_with_relative_proto(project):
    data = b"\n\x03tea\x12\x03\x08\xfa\x01"
    out = subprocess.run([sys.executable, "-m", "pbj", "decode", "--proto", "proto/shop.proto",
                          "--type", "shop.Item"], input=data, capture_output=True, cwd=project, timeout=300,
                         env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr.decode()
    assert out.stdout.decode().split() == ["{", '"name":', '"tea",', '"price":', "{", '"cents":', '"250"', "}", "}"]


HAPI = REPO / "pbj" / "data" / "hapi-v0.55.0.binpb"


@pytest.mark.parametrize("as_path", [str, Path], ids=["str", "Path"])
def test_load_descriptor_set_reads_a_path(as_path):
    ns = pbj.load_descriptor_set(as_path(HAPI))
    assert "com.hedera.hapi.block.stream.Block" in ns
    assert len(ns.messages) == len(pbj.load_descriptor_set(HAPI.read_bytes()).messages)


def test_load_descriptor_set_missing_path():
    with pytest.raises(FileNotFoundError):
        pbj.load_descriptor_set("no/such/set.binpb")


def test_load_descriptor_set_refuses_other_types():
    with pytest.raises(TypeError, match="the bytes of a FileDescriptorSet or a path to its file, not int"):
        pbj.load_descriptor_set(7)


@pytest.mark.parametrize("value", [{"seconds": "1"}, ["1s"]])
def test_from_json_given_a_dict_points_to_from_dict(value):
    with pytest.raises(TypeError, match=r"from_json takes JSON text \(str or bytes\), not .*use pbj.from_dict"):
        pbj.from_json(Duration, value)
    assert pbj.from_json(Duration, '"1.5s"') == Duration(seconds=1, nanos=500_000_000)
