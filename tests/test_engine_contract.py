"""The plan is the contract between the codec compiler and the engines.

* the compiler imports no engine: engines register (``pbj.codec.compiler.register_engine``) and
  get every finished batch plan;
* ``pbj.api`` calls one engine object (``pbj.engines.CURRENT.engine``), switched as a whole;
* the C engine refuses, at import, a plan layout (codes, record sizes) other than its own, and
  refuses a plan with a step or form it does not know;
* the import graph has no circle among pbj's units, packages and top-level modules (the codec
  core's first of all; :mod:`tests.import_graph`, read with ast, function-level imports included).
"""

from __future__ import annotations

import pytest

import pbj
from pbj import _native, engines
from pbj.codec import codec_of
from pbj.codec import plan as P
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


def test_no_circle_among_pbj_packages():
    """The whole graph: no circle among pbj's units (a circle inside one package's own files is allowed)."""
    units = import_graph.unit_graph()
    assert len(units) >= 30
    assert import_graph.cycles(units) == []


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
    """A code or record size that differs from the engine's own, a missing or an extra one: ImportError."""
    good = _native.layout()
    _native._engine.setup(FrozenMap, OneOf, EMPTY_MAP, good)
    bad = [{**good, "bool": good["bool"] + 1}, {**good, "field_items": good["field_items"] + 1}, {**good, "MEMBER": 9},
           {k: v for k, v in good.items() if k != "message"}, {**good, "float16": 17}]
    for layout in bad:
        with pytest.raises(ImportError, match="built for another codec plan"):
            _native._engine.setup(FrozenMap, OneOf, EMPTY_MAP, layout)
    assert good["message"] == P.MESSAGE and good["enum"] == 15


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
    writes = tuple(flat[8])
    bad_step = (*flat[:8], ((7, 0, ()), *writes[1:]), *flat[9:])
    dispatch = tuple(flat[7])
    bad_form = (*flat[:7], ((dispatch[0][0], dispatch[0][1], 5), *dispatch[1:]), *flat[8:])
    assert _native._engine.build((bad_step, bad_form), ()) == [None, None]
