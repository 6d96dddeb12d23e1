"""``pbj stubs``: the written stubs and modules agree with the loaded classes, field by field.

For the shipped HAPI schema and the typing demo schema, every message and enum
of the namespace has a stub class at its place (nested classes inside their
parent), whose read-only attributes are the message's fields in declaration
order, each documented with its field number and protobuf type and annotated
with the Python type the loaded class holds, and whose ``__init__`` takes the
same names. The written ``.py`` modules give, at run time, classes with the
same schema.
"""

from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path

import pytest

import pbj
from pbj.cli import main as pbj_main
from pbj.stubs import write_stubs
from tests.conftest import REPO

HAPI = REPO / "pbj" / "data" / "hapi-v0.55.0.binpb"
DEMO = REPO / "tests" / "typing"
PY = {"double": "float", "float": "float", "bool": "bool", "string": "str", "bytes": "bytes"}


def _stub_classes(root: Path) -> dict[str, ast.ClassDef]:
    """Full name -> stub class, from the docstrings ("The message X." / "The enum X.") of every .pyi."""
    found: dict[str, ast.ClassDef] = {}
    for pyi in root.rglob("*.pyi"):
        for node in ast.walk(ast.parse(pyi.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                doc = ast.get_docstring(node) or ""
                kind, _, full = doc.rstrip(".").partition(" ")[2].partition(" ")
                if kind in ("client", "servicer"):  # a service's stub or base: tests/test_grpc_services.py
                    continue
                assert kind in ("message", "enum"), doc
                found[full] = node
    return found


def _properties(node: ast.ClassDef) -> list[ast.FunctionDef]:
    return [n for n in node.body if isinstance(n, ast.FunctionDef) and n.decorator_list]


def _expected_type(f: pbj.FieldInfo, ns: pbj.Namespace) -> str:
    """The core of the annotation a field must have (scalars: the Python type, else the class name)."""
    def core(t):
        return f"_pbj_b.{PY.get(t, 'int')}" if isinstance(t, str) else f".{t.__qualname__}"
    if f.is_map:
        return core(f.map_value) + "]"
    if f.repeated:
        return core(f.type) + ", ...]"
    return core(f.type)


def _check_namespace(ns: pbj.Namespace, root: Path) -> int:
    stubs = _stub_classes(root)
    assert set(stubs) == set(ns.messages) | set(ns.enums)
    checked = 0
    for full, cls in ns.messages.items():
        node = stubs[full]
        mi = pbj.schema.info(cls)
        props = _properties(node)
        assert [p.name for p in props] == mi.attr_order, full
        by_name = {f.name: f for f in mi.fields}
        oneofs = {o.name: o for o in mi.oneofs}
        for p in props:
            doc = ast.get_docstring(p)
            ann = ast.unparse(p.returns)
            if p.name in oneofs:
                members = oneofs[p.name].members
                assert doc == "oneof: " + ", ".join(f"{m.name} = {m.number} ({_desc(m, ns)})" for m in members)
                assert ann.startswith("_pbj.OneOf[") and ann.endswith("] | None")
                for m in members:
                    assert _expected_type(m, ns) in ann
            else:
                f = by_name[p.name]
                assert doc == f"field {f.number}: {_desc(f, ns)}", (full, p.name)
                assert _expected_type(f, ns) in ann, (full, p.name, ann)
                assert ann.startswith("_pbj.FrozenMap[") == f.is_map and ann.startswith("_pbj_b.tuple[") == (
                    f.repeated and not f.is_map), (full, p.name, ann)
                assert ann.endswith(" | None") == (f.optional and not f.repeated), (full, p.name, ann)
            checked += 1
        init = next(n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == "__init__")
        assert [a.arg for a in init.args.kwonlyargs] == mi.attr_order
    for full, enum_cls in ns.enums.items():
        members = [(t.targets[0].id, t.value.value) for t in stubs[full].body if isinstance(t, ast.Assign)]
        assert members == [(name, int(m)) for name, m in enum_cls.__members__.items()]
    return checked


def _desc(f: pbj.FieldInfo, ns: pbj.Namespace) -> str:
    names = {id(c): n for n, c in (*ns.messages.items(), *ns.enums.items())}

    def name(t):
        return t if isinstance(t, str) else names[id(t)]
    if f.is_map:
        return f"map<{f.map_key}, {name(f.map_value)}>"
    label = "repeated " if f.repeated else "optional " if f.optional and isinstance(f.type, str) else ""
    return label + name(f.type)


def test_hapi_stubs_match_the_loaded_classes(tmp_path):
    ns = pbj.load_descriptor_set(HAPI.read_bytes())
    write_stubs(ns, tmp_path, "hapi_types")
    assert _check_namespace(ns, tmp_path / "hapi_types") > 1000  # fields and oneofs of 353 messages


def test_written_modules_give_classes_of_the_same_schema(tmp_path):
    assert pbj_main(["stubs", "--proto", str(DEMO / "typedemo.proto"), "-I", str(DEMO), "-o", str(tmp_path),
                     "--module", "typedemo_rt"]) == 0
    ns = pbj.load_proto([str(DEMO / "typedemo.proto")], include=[str(DEMO)])
    assert _check_namespace(ns, tmp_path / "typedemo_rt") > 10
    sys.path.insert(0, str(tmp_path))
    try:
        v1 = importlib.import_module("typedemo_rt.demo.v1")
        package = importlib.import_module("typedemo_rt")
        assert v1.Account is package.namespace["demo.v1.Account"]
        assert v1.Account.Phone is package.namespace["demo.v1.Account.Phone"]
        for full, cls in ns.messages.items():
            loaded = package.namespace[full]
            mine = [(f.name, f.number, f.proto_name, f.repeated, f.optional) for f in pbj.fields(cls)]
            theirs = [(f.name, f.number, f.proto_name, f.repeated, f.optional) for f in pbj.fields(loaded)]
            assert mine == theirs, full
        obj = v1.Account(name="a", tags=["x"], self=2)
        assert pbj.decode(v1.Account, pbj.encode(obj)) == obj
    finally:
        sys.path.remove(str(tmp_path))
        for name in [m for m in sys.modules if m.startswith("typedemo_rt")]:
            del sys.modules[name]


def test_stubs_command_errors(tmp_path, capsys):
    assert pbj_main(["stubs", "--descriptor-set", str(HAPI), "-o", str(tmp_path), "--module", "not-a-name"]) == 1
    assert "module name 'not-a-name' is not a Python identifier" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        pbj_main(["stubs", "--descriptor-set", str(HAPI)])  # -o is required


def test_a_root_message_named_namespace(tmp_path):
    from google.protobuf import descriptor_pb2

    fds = descriptor_pb2.FileDescriptorSet()
    root = fds.file.add(name="root.proto", syntax="proto3")
    root.message_type.add(name="namespace").field.add(name="x", number=1, type=5, label=1)
    sub = fds.file.add(name="p.proto", package="p", syntax="proto3")
    sub.message_type.add(name="M").field.add(name="y", number=1, type=5, label=1)
    ns = pbj.load_descriptor_set(fds.SerializeToString())
    write_stubs(ns, tmp_path, "rootdemo")
    assert _check_namespace(ns, tmp_path / "rootdemo") == 2
    sys.path.insert(0, str(tmp_path))
    try:
        top = importlib.import_module("rootdemo")
        p = importlib.import_module("rootdemo.p")
        assert pbj.schema.info(top.namespace).full_name == "namespace"
        assert p.M is top._pbj_namespace["p.M"]
    finally:
        sys.path.remove(str(tmp_path))
        for name in [m for m in sys.modules if m.startswith("rootdemo")]:
            del sys.modules[name]


def test_a_required_field_is_described_as_required(tmp_path):
    from tests.oracle import protoc

    (tmp_path / "req.proto").write_text('syntax = "proto2";\npackage pbjstubreq;\n'
                                        "message R { required int32 need = 1; optional int32 may = 2; "
                                        "optional string s = 3; }\n")
    (tmp_path / "reqed.proto").write_text('edition = "2023";\npackage pbjstubreqed;\n'
                                          "message R { int32 need = 1 [features.field_presence = LEGACY_REQUIRED]; }\n")
    ns = pbj.load_descriptor_set(protoc(["req.proto", "reqed.proto"], [tmp_path]))
    write_stubs(ns, tmp_path / "out", "reqstubs")
    text = next((tmp_path / "out").rglob("pbjstubreq/__init__.pyi")).read_text()
    assert '"""field 1: required int32"""' in text and '"""field 2: optional int32"""' in text
    assert '"""field 3: optional string"""' in text
    edtext = next((tmp_path / "out").rglob("pbjstubreqed/__init__.pyi")).read_text()
    assert '"""field 1: required int32"""' in edtext


def test_stubs_run_twice_reports_the_same_counts(tmp_path, capsys):
    args = ["stubs", "--proto", str(DEMO / "typedemo.proto"), "-I", str(DEMO), "-o", str(tmp_path), "--module", "twice"]
    assert pbj_main(args) == 0
    first = capsys.readouterr().out
    files = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    assert pbj_main(args) == 0
    second = capsys.readouterr().out
    assert first == second and first.startswith(f"wrote {len(files)} files (")
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file()) == files


def test_repeated_string_parameter_is_not_a_plain_iterable(tmp_path):
    ns = pbj.load_proto([str(DEMO / "typedemo.proto")], include=[str(DEMO)])
    write_stubs(ns, tmp_path, "texts")
    stub = (tmp_path / "texts" / "demo" / "v1" / "__init__.pyi").read_text()
    assert "tags: _pbj_Texts = ..." in stub, stub
    assert "_pbj_Texts: _pbj_t.TypeAlias = _pbj_b.tuple[_pbj_b.str, ...] | _pbj_t.MutableSequence[_pbj_b.str]" in stub


def test_enum_values_named_by_keywords_leave_the_stub_valid(tmp_path):
    """protoc takes enum values named None, True or if, and the loaded enum keeps them (reached as
    ``E["None"]``); the stub wrote ``None = 1``, a syntax error that stops mypy and pyright from
    checking anything. Such a value is a comment in the stub; an enum of only such values is ``...``."""
    from google.protobuf import descriptor_pb2

    fds = descriptor_pb2.FileDescriptorSet()
    f = fds.file.add(name="kw.proto", package="kw", syntax="proto3")
    for enum_name, values in (("Kind", ("ZERO", "None", "True", "if")), ("Only", ("None",))):
        e = f.enum_type.add(name=enum_name)
        for number, name in enumerate(values):
            e.value.add(name=name, number=number)
    ns = pbj.load_descriptor_set(fds.SerializeToString())
    assert ns["kw.Kind"]["None"] == 1
    write_stubs(ns, tmp_path, "kwdemo")
    text = (tmp_path / "kwdemo" / "kw" / "__init__.pyi").read_text()
    tree = ast.parse(text)
    kind, only = (node for node in tree.body if isinstance(node, ast.ClassDef))
    assert [t.id for node in kind.body if isinstance(node, ast.Assign) for t in node.targets] == ["ZERO"]
    assert "# None = 1: a Python keyword, reached as the enum['None']" in text
    assert "# if = 3: a Python keyword" in text
    assert isinstance(only.body[-1], ast.Expr) and only.body[-1].value.value is Ellipsis
