"""pbj's import graph, read from the source with :mod:`ast` (no module is imported).

Every ``import``/``from ... import`` counts, at module level or inside a function, except those
under ``if TYPE_CHECKING:`` (never run). Modules are grouped into *units*: a package's modules
(``pbj/codec/*.py``) are one unit, named after the package; a module directly under ``pbj/``
(``pbj/api.py``) is a unit of its own; ``pbj/__init__.py`` is the unit ``pbj``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "pbj"


def module_names() -> dict[str, Path]:
    """Every module of pbj, dotted name -> file."""
    out = {}
    for path in ROOT.rglob("*.py"):
        rel = path.relative_to(ROOT.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST, module: str, is_package: bool, modules: dict[str, Path]) -> set[str]:
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            for alias in node.names:
                found.add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg = module.split(".") if is_package else module.split(".")[:-1]
                pkg = pkg[: len(pkg) - (node.level - 1)]
                base = ".".join(pkg + ([base] if base else []))
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.add(sub if sub in modules else base)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return {m for m in found if m == "pbj" or m.startswith("pbj.")}


def module_graph() -> dict[str, set[str]]:
    """Module -> the pbj modules it imports (a submodule import also runs its packages' ``__init__``)."""
    modules = module_names()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        deps = _imports(ast.parse(path.read_text()), name, path.name == "__init__.py", modules)
        graph[name] = {d for d in deps if d in modules and d != name}
    return graph


def unit_of(module: str) -> str:
    """The unit a module belongs to: ``pbj.codec.plan`` -> ``pbj.codec``; ``pbj.api`` -> ``pbj.api``."""
    return ".".join(module.split(".")[:2])


def unit_graph() -> dict[str, set[str]]:
    """Unit -> the units its modules import (imports inside one unit left out)."""
    out: dict[str, set[str]] = {}
    for module, deps in module_graph().items():
        u = unit_of(module)
        out.setdefault(u, set()).update(unit_of(d) for d in deps if unit_of(d) != u)
    return out


def package_graph(package: str) -> dict[str, set[str]]:
    """The modules of ``package`` (``pbj.codec``) -> the modules of the same package they import."""
    inside = {m: deps for m, deps in module_graph().items() if unit_of(m) == package and m != package}
    return {m: {d for d in deps if d in inside} for m, deps in inside.items()}


def packages() -> list[str]:
    """Every package of pbj (a unit with modules of its own)."""
    return sorted({unit_of(m) for m in module_names() if m.count(".") >= 2})


_C_DEFINITION = re.compile(r"^(?!static)[A-Za-z_][\w \t\*]*?\b(\w+)\s*\([^;{]*\)\s*\{", re.M)
_C_CALL = re.compile(r"\b(pbj_\w+)\s*\(")
_C_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def _c_code(text: str) -> str:
    """C source without comments and string literals."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    return re.sub(r'"(\\.|[^"\\\n])*"', '""', text)


def _bodies(code: str) -> str:
    """The text inside braces (function bodies: where calls are; prototypes at file scope are not)."""
    out, depth = [], 0
    for ch in code:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif depth > 0:
            out.append(ch)
        elif ch == "\n":
            out.append(" ")
    return "".join(out)


def c_call_graph(folder: Path | None = None) -> dict[str, set[str]]:
    """The native engine's C files (``pbj/_native/*.c``) -> the C files whose functions they call.

    A function a file defines with external linkage (not ``static``) belongs to that file; a call
    by name (``pbj_...(``) in a file, or in a header it includes (the headers' inline functions run
    in their includer), is an edge to the file that defines it. Calls through a function pointer
    (a sink's functions, the decoder extensions.c is given) are not edges: the callee is the caller's
    choice.
    """
    folder = folder or ROOT / "_native"
    files = (*folder.glob("*.c"), *folder.glob("*.h"))
    code = {p.name: _c_code(p.read_text()) for p in files}
    includes = {p.name: _C_INCLUDE.findall(re.sub(r"/\*.*?\*/", " ", p.read_text(), flags=re.S)) for p in files}
    defined = {name: p for p, text in code.items() if p.endswith(".c") for name in _C_DEFINITION.findall(text)}

    def reach(name: str, seen: set[str]) -> set[str]:
        if name in seen or name not in code:
            return set()
        seen.add(name)
        calls = set(_C_CALL.findall(_bodies(code[name])))
        for header in includes[name]:
            calls |= reach(header, seen)
        return calls

    graph: dict[str, set[str]] = {}
    for p in code:
        if p.endswith(".c"):
            graph[p] = {defined[c] for c in reach(p, set()) if c in defined and defined[c] != p}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            node, it = work[-1]
            child = next(it, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    c = stack.pop()
                    on.discard(c)
                    comp.append(c)
                    if c == node:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def documented_graph(markdown: str) -> list[tuple[str, set[str]]]:
    """The graph of the first code block after ``## Import graph`` in ``markdown``, line by line.

    Each line is ``unit ──▶ dep, dep`` (``(nothing in pbj)`` for none), units named without
    ``pbj.`` (``pbj`` is the package). Returns ``(unit, deps)`` in the lines' order, full names.
    """
    section = markdown[markdown.index("## Import graph"):]
    block = section.split("```", 2)[1]

    def full(name: str) -> str:
        return name if name == "pbj" else f"pbj.{name}"

    out = []
    for line in block.splitlines():
        if "▶" not in line:
            continue
        left, right = line.split("▶")
        right = right.strip()
        deps = set() if right == "(nothing in pbj)" else {full(d.strip()) for d in right.split(",")}
        out.append((full(left.strip(" ─")), deps))
    return out


if __name__ == "__main__":
    g = unit_graph()
    for u in sorted(g):
        print(u, "->", ", ".join(sorted(g[u])))
    print("cycles:", cycles(g))


#: The names a comparison must not test a type against outside ``pbj/scalars.py``: the scalar types'
#: names, ``enum`` and ``message`` (the emitters' old stand-in for "a message field").
TYPE_NAMES = frozenset({"double", "float", "int64", "uint64", "int32", "fixed64", "fixed32", "bool", "string",
                        "bytes", "uint32", "sfixed32", "sfixed64", "sint32", "sint64", "enum", "message"})


def type_name_comparisons(source: str) -> list[tuple[int, str]]:
    """Every comparison in ``source`` (Python) of a value with a scalar type's name.

    ``x == "bool"``, ``kind != "string"``, ``kind in ("sint32", "sint64")`` and the like: a
    ``==``/``!=``/``in``/``not in`` whose other side is a string constant of :data:`TYPE_NAMES`
    (or a tuple, list or set of them). Returns ``(line, source text)`` of each.
    """
    found = []

    def named(node: ast.expr) -> bool:
        if isinstance(node, ast.Constant):
            return isinstance(node.value, str) and node.value in TYPE_NAMES
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            return any(named(e) for e in node.elts)
        return False

    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare) and any(
                isinstance(op, ast.Eq | ast.NotEq | ast.In | ast.NotIn) for op in node.ops):
            if any(named(side) for side in (node.left, *node.comparators)):
                found.append((node.lineno, ast.get_source_segment(source, node) or ""))
    return found
