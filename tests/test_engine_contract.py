"""The plan is the contract between the codec compiler and the engines.

* the compiler imports no engine: engines register (``pbj.codec.compiler.register_engine``) and
  get every finished batch plan;
* ``pbj.api`` calls one engine object (``pbj.engines.CURRENT.engine``), switched as a whole;
* the C engine refuses, at import, a plan layout (codes; the position of each attribute it reads in
  each record, by name; record sizes; the column plan's node kinds) other than its own, and refuses
  a plan with a step or form it does not know;
* the native adapter sends the plan's own records and derives nothing the plan lacks;
* the import graph has no circle among pbj's units, packages and top-level modules (the codec
  core's first of all; :mod:`tests.import_graph`, read with ast, function-level imports included).
"""

from __future__ import annotations

import ast
import re

import pytest

import pbj
from pbj import _native, engines
from pbj.codec import codec_of
from pbj.codec import plan as P
from pbj.errors import DecodeError
from pbj.schema import EMPTY_MAP, FrozenMap, OneOf
from tests import import_graph
from tests.conftest import REPO

built = pytest.mark.skipif(not _native.available(), reason="the native engine is not built")

#: The codec core: the compiler, the engines and what they stand on.
CORE = {"pbj.codec", "pbj._native", "pbj.api", "pbj.engines", "pbj.scalars", "pbj.wire", "pbj.errors"}


def test_the_compiler_imports_no_engine():
    """``pbj.codec`` (every module, function-level imports included) imports neither engine nor ``pbj.api``."""
    graph = import_graph.module_graph()
    codec = {m: deps for m, deps in graph.items() if import_graph.unit_of(m) == "pbj.codec"}
    assert len(codec) >= 10
    for module, deps in codec.items():
        assert not {d for d in deps if import_graph.unit_of(d) in {"pbj._native", "pbj.api", "pbj.engines", "pbj"}}, \
            module


def test_the_engines_and_api_form_no_circle():
    """Neither engine is imported by ``pbj.api`` or by the other; the core's unit graph has no circle."""
    units = import_graph.unit_graph()
    assert "pbj._native" not in units["pbj.api"] and "pbj.api" not in units["pbj._native"]
    core = {u: {d for d in deps if d in CORE} for u, deps in units.items() if u in CORE}
    assert set(core) == CORE
    assert import_graph.cycles(core) == []


@pytest.mark.static
def test_no_circle_among_pbj_packages():
    """The whole graph: no circle among pbj's units (a circle inside one package's own files is allowed)."""
    units = import_graph.unit_graph()
    assert len(units) >= 30
    assert import_graph.cycles(units) == []


#: Circles inside a package that remain (their packages' own business; a new one fails the test below).
KNOWN_PACKAGE_CIRCLES = {
    "pbj.arrow": [["pbj.arrow.convert", "pbj.arrow.encode", "pbj.arrow.split"]],
    "pbj.bench": [["pbj.bench.callgrind_worker", "pbj.bench.cases", "pbj.bench.instructions", "pbj.bench.run"]],
    "pbj.connect": [["pbj.connect.client", "pbj.connect.health", "pbj.connect.reflection", "pbj.connect.server"]],
    "pbj.schema": [["pbj.schema.presence", "pbj.schema.resolve"]],
}


@pytest.mark.static
def test_no_circle_inside_the_codec_or_among_the_engines_c_files():
    """Inside each package, modules import each other without a circle (pbj.codec first of all: its
    extensions helpers get the compiler by registration, not by import); the native engine's C files
    call each other without a circle (decode.c hands extensions.c its decoder)."""
    assert import_graph.cycles(import_graph.package_graph("pbj.codec")) == []
    assert import_graph.package_graph("pbj.codec")["pbj.codec.compiler"] >= {"pbj.codec.plan", "pbj.codec.emit"}
    found = {p: c for p in import_graph.packages() if (c := import_graph.cycles(import_graph.package_graph(p)))}
    assert found == KNOWN_PACKAGE_CIRCLES
    calls = import_graph.c_call_graph()
    assert import_graph.cycles(calls) == []
    assert "walk.c" in calls["decode.c"] and "extensions.c" in calls["decode.c"]
    assert "decode.c" not in calls["extensions.c"] and "walk.c" in calls["arrow.c"]


def test_the_c_call_finder_finds_a_circle(tmp_path):
    (tmp_path / "a.c").write_text('#include "x.h"\nint pbj_a(void) { return pbj_b(); }\n')
    (tmp_path / "b.c").write_text('int pbj_b(void) { /* pbj_c() */ return 1; }\nstatic int pbj_s(void) { return 0; }\n')
    (tmp_path / "c.c").write_text('int pbj_c(void) { return pbj_s() + pbj_a(); }\n')
    (tmp_path / "x.h").write_text("static inline int pbj_x(void) { return pbj_c(); }\n")
    graph = import_graph.c_call_graph(tmp_path)
    assert graph == {"a.c": {"b.c", "c.c"}, "b.c": set(), "c.c": {"a.c"}}
    assert import_graph.cycles(graph) == [["a.c", "c.c"]]


@pytest.mark.static
def test_the_documented_import_graph_is_the_real_one():
    """docs/codec-protobuf.md ("Import graph") names every unit once, with exactly the units it imports,
    and each line imports only units of the lines above it: the layering the docs show is the code's."""
    lines = import_graph.documented_graph((REPO / "docs" / "codec-protobuf.md").read_text(encoding="utf-8"))
    assert len(lines) >= 30
    assert len({unit for unit, _ in lines}) == len(lines)
    assert dict(lines) == import_graph.unit_graph()
    above: set[str] = set()
    for unit, deps in lines:
        assert deps <= above, (unit, deps - above)
        above.add(unit)


def test_no_scalar_type_name_comparison_in_the_emitters():
    """The codec (compiler, emitters, wide tables, run-time helpers) branches on the operation codes of
    :mod:`pbj.scalars` (``ScalarType.op``), never on a type's name."""
    codec = sorted((import_graph.ROOT / "codec").glob("*.py"))
    assert len(codec) >= 10
    found = {p.name: import_graph.type_name_comparisons(p.read_text()) for p in codec}
    assert {name: hits for name, hits in found.items() if hits} == {}


def test_no_scalar_type_name_in_the_c_engine():
    """No C file of the native engine holds a scalar type's name: it reads the codes the plan carries."""
    sources = sorted((import_graph.ROOT / "_native").glob("*.[ch]"))
    assert sources
    hits = [(p.name, n) for p in sources for n in sorted(import_graph.TYPE_NAMES - {"message"})
            if f'"{n}"' in p.read_text()]
    assert hits == []


#: The Python emitters: they turn a plan into source and read nothing of a class but what the plan holds.
EMITTERS = ("emit.py", "forward.py", "reverse.py", "parse.py", "wide.py")


def class_internals_read(source: str) -> list[tuple[int, str]]:
    """``(line, name)`` of each read of a class's pbj attributes (``__pbj_...__``, but the compiled codec,
    ``__pbj_codec__``) or of an attribute of a plan's class (``plan.cls.x``), in Python ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        names = []
        if isinstance(node, ast.Attribute):
            names.append(node.attr)
            if isinstance(node.value, ast.Attribute) and node.value.attr == "cls":
                found.append((node.lineno, f"cls.{node.attr}"))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names.append(node.value)
        found += [(node.lineno, n) for n in names
                  if re.fullmatch(r"__pbj_\w+__", n) and n != "__pbj_codec__"]
    return sorted(found)


@pytest.mark.static
def test_the_emitters_read_only_the_plan():
    """The writer and parser emitters read the facts of a class from its plan (``read_by_slot``,
    ``extension_registry``, ``message_set`` ...), never from the class's own pbj attributes."""
    found = {name: class_internals_read((import_graph.ROOT / "codec" / name).read_text()) for name in EMITTERS}
    assert {name: hits for name, hits in found.items() if hits} == {}


@pytest.mark.static
def test_the_class_internals_finder_finds_reads():
    source = ('a = plan.cls.__pbj_info__\nb = getattr(plan.cls, "__pbj_defaults__", ())\n'
              'c = cls.__pbj_codec__.plan\nd = plan.slots\n')
    assert class_internals_read(source) == [(1, "__pbj_info__"), (1, "cls.__pbj_info__"), (2, "__pbj_defaults__")]


def test_the_type_name_finder_finds_comparisons():
    """The check can fail: each form of comparison is found, an op-code comparison is not."""
    source = 'a = kind == "bool"\nb = "sint32" != k\nc = k in ("string", "bytes")\nd = r.op == OP_BOOL\ne = k == "x"\n'
    assert [line for line, _ in import_graph.type_name_comparisons(source)] == [1, 2, 3]


def test_the_cycle_finder_finds_a_circle():
    """The check can fail: a three-unit circle is found, a chain is not."""
    assert import_graph.cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert import_graph.cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_one_engine_object_in_use():
    """``pbj.engine()`` names the object ``pbj.api`` calls; ``use_engine`` switches it whole."""
    before = pbj.engine()
    try:
        pbj.use_engine("python")
        assert engines.CURRENT.engine is engines.PYTHON and engines.PYTHON.decode is None
        if _native.available():
            pbj.use_engine("native")
            assert engines.CURRENT.engine is _native.NATIVE and pbj.engine() == "native"
            assert _native.NATIVE.decode is _native._engine.decode
    finally:
        pbj.use_engine(before)


@built
def test_the_engine_refuses_another_layout():
    """A code, a record's attribute position or size that differs from the engine's own, a missing or an
    extra one: ImportError (the records the engine reads are checked by name, the node kinds too)."""
    good = _native.layout()
    _native._engine.setup(FrozenMap, OneOf, EMPTY_MAP, DecodeError, good)
    swapped = {**good, "FieldPlan.number": good["FieldPlan.slot"], "FieldPlan.slot": good["FieldPlan.number"]}
    bad = [{**good, "bool": good["bool"] + 1}, {**good, "FieldPlan.size": good["FieldPlan.size"] + 1},
           {**good, "MEMBER": 9}, swapped, {**good, "arrow.map": good["arrow.list"]},
           {k: v for k, v in good.items() if k != "message"}, {**good, "float16": 17},
           {k: v for k, v in good.items() if k != "MessagePlan.slot_kinds"}]
    for layout in bad:
        with pytest.raises(ImportError, match="built for another codec plan"):
            _native._engine.setup(FrozenMap, OneOf, EMPTY_MAP, DecodeError, layout)
    assert good["message"] == P.MESSAGE and good["enum"] == 15
    assert good["FieldPlan.number"] == P.FieldPlan._fields.index("number")
    assert good["NativeMessage.plan"] == 0 and good["arrow.present"] == len(_native.ARROW_KINDS) - 1


@built
def test_the_adapter_sends_the_plan_and_derives_nothing():
    """What the native adapter sends for a class is its plan record itself, field records and all, and
    the member descriptors of the slots it names: every fact the engine reads is an attribute of the plan."""
    from fuzz import targets as T

    for t in (*T.decode_targets(), *T.native_targets()):
        for cls in (t.cls, *_reached(t.cls)):
            mp = codec_of(cls).plan
            sent = _native.native_plan(mp)
            if sent is None:
                continue
            assert sent.plan is mp  # the plan's own record, every field record with it
            assert all(a is b for a, b in zip(sent.plan.fields, mp.fields, strict=True))
            base = mp.slots_class
            assert sent.slot_descriptors == tuple(base.__dict__[name] for name in mp.slots)
            assert sent.unknown_slot is base.__dict__["_pbj_unknown"] and sent.size_slot is base.__dict__["_pbj_size"]
            assert (sent.extensions_slot is None) == (not mp.extension_ranges)
            assert set(sent._fields) == set(_native.READS["NativeMessage"])
            for f in mp.fields:  # the facts the adapter used to derive, now the plan's
                if f.label == P.MAP:
                    assert f.key_tag and f.value_tag and (f.value_default is None) == (f.type == P.MESSAGE)
                assert (f.enum_members is None) == (f.enum is None)
                if f.enum is not None:
                    assert f.enum_members == {int(m): m for m in f.enum}
            assert len(mp.slot_kinds) == len(mp.slots) == len(mp.slot_defaults)


def _reached(cls: type) -> list[type]:
    """The message classes ``cls`` reaches, ``cls`` excluded."""
    out: list[type] = []
    todo = [cls]
    while todo:
        for fi in todo.pop().__pbj_info__.all_fields():
            t = fi.map_value if fi.is_map else fi.type
            if isinstance(t, type) and hasattr(t, "__pbj_info__") and t is not cls and t not in out:
                out.append(t)
                todo.append(t)
    return out


@built
def test_the_engine_refuses_an_unknown_step_or_form():
    """A plan with a write step or a parse form the engine does not know is declined (None), not run."""

    @pbj.message
    class Small:
        a: int = pbj.field(1, "int32")
        b: str = pbj.field(2, "string")

    mp = codec_of(Small).plan
    flat = _native.native_plan(mp)
    assert flat is not None and _native._engine.build((flat,), ())[0] is not None
    bad_step = flat._replace(plan=mp._replace(writes=((7, 0, ()), *mp.writes[1:])))
    bad_form = flat._replace(plan=mp._replace(dispatch=((mp.dispatch[0][0], mp.dispatch[0][1], 5), *mp.dispatch[1:])))
    assert _native._engine.build((bad_step, bad_form), ()) == [None, None]
