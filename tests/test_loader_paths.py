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


@pytest.mark.parametrize("args, where", [
    (("nope.proto",), "the current directory"),
    (("proto/nope.proto",), "the current directory"),
    (("nope.proto", "proto"), "the current directory and the include directories "),
])
def test_load_proto_missing_file(project, args, where):
    with pytest.raises(pbj.SchemaError) as err:
        pbj.load_proto(*args)
    text = str(err.value)
    assert text.startswith(f"load_proto: no such .proto file: {args[0]!r} (looked in {where}"), text
    assert "Could not make proto path relative" not in text


@pytest.mark.parametrize("include", ["proto", Path("proto"), ["proto"]], ids=["str", "path", "list"])
def test_load_proto_single_include_is_one_directory(project, include):
    _check_shop(pbj.load_proto("shop.proto", include=include))


CLASH = """
    syntax = "proto3";
    message Clash { int32 foo_bar = 1; int32 fooBar = 2; }
"""


def test_protoc_json_name_clash_once_with_paths_as_passed(project):
    (project / "proto" / "clash.proto").write_text(textwrap.dedent(CLASH))
    (project / "proto" / "user.proto").write_text('syntax = "proto3";\nimport "clash.proto";\n'
                                                   "message User { Clash c = 1; }\n")
    with pytest.raises(pbj.SchemaError) as err:
        pbj.load_proto("proto/clash.proto")
    lines = str(err.value).splitlines()
    assert lines == ["protoc failed:", 'proto/clash.proto:3:42: The default JSON name of field "fooBar" '
                     '("fooBar") conflicts with the default JSON name of field "foo_bar".'], lines
    with pytest.raises(pbj.SchemaError) as err:
        pbj.load_proto("proto/user.proto")  # the imported file: by its path from the current directory
    lines = str(err.value).splitlines()
    assert lines[1].startswith("proto/clash.proto:3:42: The default JSON name") and len(lines) == len(set(lines))
    assert str(project) not in str(err.value)


def test_protoc_output_repeated_or_glued_is_kept_once():
    from pbj.loader.protoc import _user_paths
    line = 'a.proto:1:2: The default JSON name of field "x" conflicts.'
    assert _user_paths(f"{line}\n{line}\n{line}{line}", {"dir/a.proto": "a.proto"}) == "dir/" + line
    absl = "WARNING: All log messages before absl::InitializeLog() are written to STDERR"
    assert _user_paths(f"{absl}\n{line}", {"dir/a.proto": "a.proto"}) == "dir/" + line


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


@pytest.mark.parametrize("args", [
    (["one/same.proto", "two/same.proto"],),     # two files, both "same.proto" to protoc
    ("one/same.proto", ["two"]),                 # an include directory holds another "same.proto"
], ids=["two-files-one-name", "include-shadows"])
def test_load_proto_refuses_a_file_another_shadows(tmp_path, monkeypatch, args):
    """protoc takes the first file a name finds in its include directories: a file passed by path that
    another one shadows would load the other schema (message Same with field y instead of x) or load once."""
    for folder, field in (("one", "x"), ("two", "y")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "same.proto").write_text(
            f'syntax = "proto3";\nmessage Same {{ int32 {field} = 1; }}\n')
    monkeypatch.chdir(tmp_path)
    with pytest.raises(pbj.SchemaError, match=r"is the file 'same.proto' to protoc, but that name finds"):
        pbj.load_proto(*args)
    same = pbj.load_proto("one/same.proto", ["one", "two"])["Same"]  # told apart: the first include wins
    assert pbj.encode(same(x=3)) == b"\x08\x03"
