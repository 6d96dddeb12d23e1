"""The native engine's module keeps no process state and uses only CPython's public C API.

PEP 489 multi-phase initialisation with the state in the module object (``pbj/_native/module.c``,
``PbjState`` in ``engine.h``): the C sources are read here, with their comments and strings taken
out, and must hold

* no object at file scope that is not ``const`` (outside the tables CPython reads: method, slot and
  type-spec records), so every mutable thing the engine keeps is in a module's state or a plan;
* no call of, or reference to, an underscored CPython name (``_Py...``): where releases spell a
  public name differently, ``compat.h`` picks the spelling by version;
* no ``structmember.h``.

A second module object made from the same file has a state of its own (the switches it read), and
the module declares the slots a modern extension declares where the headers have them.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pbj import _native
from pbj.codec import codec_of

pytestmark = pytest.mark.once

NATIVE = Path(_native.__file__).parent
SOURCES = sorted([*NATIVE.glob("*.c"), *NATIVE.glob("*.h")])
#: CPython's table types: records the interpreter reads (never written by the engine after they are built)
TABLES = ("PyMethodDef", "PyModuleDef_Slot", "PyType_Slot", "PyType_Spec", "PyModuleDef", "PyMemberDef",
          "PyGetSetDef")


def code_of(path: Path) -> str:
    """The C source of ``path`` with comments, string and character literals blanked (lines kept)."""
    text = path.read_text()
    out = re.sub(r"/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group()), text, flags=re.S)
    out = re.sub(r"//[^\n]*", "", out)
    out = re.sub(r'"(\\.|[^"\\\n])*"', '""', out)
    return re.sub(r"'(\\.|[^'\\\n])*'", "' '", out)


def file_scope_statements(code: str) -> list[str]:
    """The statements at brace depth 0 that end with ``;`` (a braced part reads ``{}``), without the
    preprocessor's lines and function definitions."""
    lines, skip = [], False
    for line in code.splitlines():
        if skip or line.lstrip().startswith("#"):
            skip = line.rstrip().endswith("\\")
            continue
        lines.append(line)
    out, depth, current = [], 0, []
    for ch in "\n".join(lines):
        if ch == "{":
            if depth == 0:
                head = "".join(current).strip()
                current.append("{}")
                if head.endswith(")") and "=" not in head:  # a function's body
                    current = []
            depth += 1
        elif ch == "}":
            depth -= 1
        elif depth == 0:
            if ch == ";":
                out.append(" ".join("".join(current).split()))
                current = []
            else:
                current.append(ch)
    return out


def mutable_objects(path: Path) -> list[str]:
    """File-scope object definitions of ``path`` that are neither ``const`` nor one of :data:`TABLES`."""
    found = []
    for s in file_scope_statements(code_of(path)):
        if not s or re.match(r"^(typedef|extern)\b", s):
            continue
        if re.match(r"^(struct|enum|union)\s+\w*\s*\{\}$", s):
            continue  # a type's definition
        if re.search(r"\)$", s) and "=" not in s:
            continue  # a function's prototype
        words = re.findall(r"[A-Za-z_]\w*", s.split("=")[0])
        if "const" in words or any(t in words for t in TABLES):
            continue
        found.append(f"{path.name}: {s}")
    return found


def test_no_file_scope_mutable_state():
    found = [x for p in SOURCES for x in mutable_objects(p)]
    assert found == [], "state outside the module's state (engine.h, PbjState):\n" + "\n".join(found)


def test_the_source_check_finds_what_it_looks_for(tmp_path):
    """The checks above are not vacuous: a global, a static cache and an underscored call are found."""
    bad = tmp_path / "bad.c"
    bad.write_text('#include "engine.h"\nstatic PyObject *cache;\nint counter = 0;\n'
                   'static const int fine = 1;\nstatic PyMethodDef table[] = {{NULL}};\n'
                   'int f(void);\nstatic int g(int x) { static int inner; return x + _PyLong_Sign(0); }\n'
                   '/* _PyType_Lookup in a comment */ const char *s = "_PyObject_GC_New";\n')
    assert mutable_objects(bad) == ["bad.c: static PyObject *cache", "bad.c: int counter = 0"]
    assert private_names(bad) == ["_PyLong_Sign"]


def private_names(path: Path) -> list[str]:
    return re.findall(r"\b_Py[A-Za-z_]\w*", code_of(path))


def test_public_api_only():
    found = {p.name: private_names(p) for p in SOURCES}
    assert {k: v for k, v in found.items() if v} == {}
    for p in SOURCES:
        assert not re.search(r'#\s*include\s*[<"]structmember\.h', p.read_text()), p.name


@pytest.mark.skipif(not _native.available(), reason="the native engine is not built")
def test_state_is_per_module_object():
    """A module object made again from the extension's file (multi-phase init: not cached) has a state
    of its own: its switch (read at its exec) changes its decode only, with the main module's plans."""
    import gc

    import pbj
    from tests.native_switches import engine_with

    @pbj.message
    class Leaf:
        n: int = pbj.field(1, "int32")

    @pbj.message
    class Tree:
        leaves: tuple[Leaf, ...] = pbj.field(1, Leaf, repeated=True)

    data = pbj.encode(Tree(leaves=(Leaf(n=1), Leaf(n=1))))
    plan = codec_of(Tree).native
    mine = engine_with(untrack=1, share_min=0)
    assert mine is not _native._engine
    main = _native._engine.decode(plan, data, 100)
    other = mine.decode(plan, data, 100)
    assert main == other
    assert main.leaves[0] is not main.leaves[1] and other.leaves[0] is other.leaves[1]
    assert gc.is_tracked(main) and not gc.is_tracked(other)
    assert _native._engine.decode(plan, data, 100).leaves[0] is not _native._engine.decode(plan, data, 100).leaves[1]


def test_module_declares_its_slots():
    text = (NATIVE / "module.c").read_text()
    assert ".m_size = sizeof(PbjState)" in text and "PyModuleDef_Init(&module_def)" in text
    for name in ("module.c", "arrow_encode.c"):  # pbj._native._engine and pbj._native._arrow
        text = (NATIVE / name).read_text()
        assert "PyModuleDef_Init(" in text, name
        assert "#ifdef Py_mod_multiple_interpreters" in text and "Py_MOD_PER_INTERPRETER_GIL_SUPPORTED" in text, name
        assert "#ifdef Py_mod_gil" in text and "Py_MOD_GIL_USED" in text and "Py_MOD_GIL_NOT_USED" not in text, name
