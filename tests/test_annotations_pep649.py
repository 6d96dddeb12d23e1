"""Message classes whose annotations name classes declared later, under each way Python evaluates annotations.

Python 3.14 evaluates annotations lazily (PEP 649, PEP 749): a class body's annotations are computed when
they are first asked for, so an annotation may name a class declared further down (or the class itself)
without quotes and without ``from __future__ import annotations``. Before 3.14 the annotation is evaluated
when the class body runs, so such names are written as strings or the module uses the ``__future__``
import (every annotation a string). pbj reads the annotations when ``@pbj.message`` runs, before the
later class exists: each way must give the same class, the same checks and the same bytes. The suite
runs on 3.11 (CI), 3.13 (Debian's) and 3.14 (Pyodide, tests/pyodide/suite.txt).
"""

from __future__ import annotations

import importlib.util
import sys
import textwrap

import pytest

import pbj

HEADER_FUTURE = "from __future__ import annotations\nimport pbj\n"
HEADER_PLAIN = "import pbj\n"

# Tree names itself and Owner (declared after it); Owner names Tree. ``{q}`` quotes the forward names or not.
BODY = """
@pbj.message
class Tree:
    label: str = pbj.field(1, "string")
    children: {q}tuple[Tree, ...]{q} = pbj.field(2, "Tree", repeated=True)
    owner: {q}Owner | None{q} = pbj.field(3, lambda: Owner)

@pbj.message
class Owner:
    name: str = pbj.field(1, "string")
    favourite: {q}Tree | None{q} = pbj.field(2, Tree)
"""

def expected_bytes() -> bytes:
    """Tree(label="root", children=(Tree(label="leaf"),), owner=Owner(name="ann", favourite=Tree(label="f")))."""
    leaf = b"\x0a\x04leaf"
    favourite = b"\x0a\x01f"
    owner = b"\x0a\x03ann" + b"\x12" + bytes([len(favourite)]) + favourite
    return b"\x0a\x04root" + b"\x12" + bytes([len(leaf)]) + leaf + b"\x1a" + bytes([len(owner)]) + owner


def load(tmp_path, name: str, source: str):
    path = tmp_path / f"{name}.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # pbj resolves names in the class's module, as for a user's module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


VARIANTS = {
    "future-import": HEADER_FUTURE + BODY.format(q=""),
    "quoted": HEADER_PLAIN + BODY.format(q='"'),
    "lazy (3.14)": HEADER_PLAIN + BODY.format(q=""),
}


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_forward_references_give_the_same_class_and_bytes(tmp_path, variant):
    if variant == "lazy (3.14)" and sys.version_info < (3, 14):
        with pytest.raises(NameError, match="Tree"):  # Python's own rule before PEP 649: the class is not bound yet
            load(tmp_path, f"pep649_{len(variant)}", VARIANTS[variant])
        return
    name = "pep649_" + "".join(c for c in variant if c.isalnum())
    module = load(tmp_path, name, VARIANTS[variant])
    try:
        tree = module.Tree(label="root", children=(module.Tree(label="leaf"),),
                           owner=module.Owner(name="ann", favourite=module.Tree(label="f")))
        data = expected_bytes()
        assert pbj.encode(tree) == data
        assert pbj.encode(tree, reverse=True) == data
        assert pbj.decode(module.Tree, data) == tree
        types = {f.name: f for f in pbj.fields(module.Tree)}
        assert types["children"].repeated and types["owner"].number == 3
        assert pbj.to_json(tree) == ('{"label":"root","children":[{"label":"leaf"}],'
                                     '"owner":{"name":"ann","favourite":{"label":"f"}}}')
    finally:
        del sys.modules[name]


@pytest.mark.parametrize("header", [HEADER_FUTURE, HEADER_PLAIN], ids=["future-import", "plain"])
def test_an_annotation_that_does_not_fit_is_refused_either_way(tmp_path, header):
    source = header + textwrap.dedent("""
        @pbj.message
        class Wrong:
            count: str = pbj.field(1, "int32")
        """)
    name = f"pep649_wrong_{len(header)}"
    with pytest.raises(pbj.SchemaError, match="count"):
        load(tmp_path, name, source)
    sys.modules.pop(name, None)
