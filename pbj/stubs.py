"""``pbj stubs``: typed Python modules for a schema loaded at run time.

A schema loaded with :func:`pbj.load_descriptor_set` or :func:`pbj.load_proto`
has no source a type checker can read. :func:`write_stubs` writes a small
package that gives it one::

    DIR/NAME/__init__.py        loads the schema once (NAME/schema.binpb): ``namespace`` (also
                                ``_pbj_namespace``, for a schema with a message named ``namespace``)
    DIR/NAME/__init__.pyi
    DIR/NAME/<a>/<b>/__init__.py    the classes of protobuf package ``a.b``: ``Block = namespace...``
    DIR/NAME/<a>/<b>/__init__.pyi   their stubs: fields, types, constructor, read-only attributes

so that ``from NAME.a.b import Block`` gives, at run time, the very class the
loader built (``NAME.namespace["a.b.Block"]``) and, to mypy and pyright, a
precisely typed class: each field a read-only attribute of its Python type
(``int``, ``str``, ``tuple[T, ...]`` for repeated, ``FrozenMap[K, V]`` for
maps, ``M | None`` for messages and explicit presence (a plain ``T`` for a field
with a declared default, which reads it when unset), ``OneOf[A | B] | None``
for oneofs, the ``IntEnum`` for enums: a number an open enum does not list is
a plain ``int`` at run time) and ``__init__`` taking every field as an optional
keyword (any iterable for repeated fields, any mapping for maps, bytes-likes for
``bytes``). The schema is
stored in the package, so the stubs and the classes always come from the same
descriptors; ``pbj stubs`` again after a schema change rewrites both.

Names in the stubs: every helper is imported under a ``_pbj`` name (no field
may start with ``_pbj``), builtins are spelled ``_pbj_b.int`` and classes of
other packages by their module, so no field name can hide a type.
"""

from __future__ import annotations

import keyword
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pbj.api import encode
from pbj.descriptor import FileDescriptorSet
from pbj.loader import Namespace
from pbj.scalars import SCALARS
from pbj.schema import FieldInfo, info, is_message

__all__ = ["write_stubs", "package_stub", "package_module", "SCHEMA_FILE"]

#: The schema's file inside the written package.
SCHEMA_FILE = "schema.binpb"


def _package_of(full_name: str, ns: Namespace) -> str:
    """The protobuf package of a top-level message or enum (its file's ``package``)."""
    return _packages(ns).get(full_name, "")


def _packages(ns: Namespace) -> dict[str, str]:
    cache = ns.__dict__.get("_pbj_stub_packages")
    if cache is None:
        cache = {}
        for fd in ns.files:
            pkg = fd.package or ""
            for m in (*fd.message_type, *fd.enum_type):
                cache[f"{pkg}.{m.name}" if pkg else m.name] = pkg
        ns.__dict__["_pbj_stub_packages"] = cache
    return cache


def _py_name(name: str) -> str:
    return name + "_" if keyword.iskeyword(name) else name


class _Module:
    """The stub text of one protobuf package: names of classes, the modules it imports."""

    def __init__(self, ns: Namespace, package: str, root: str) -> None:
        self.ns, self.package, self.root = ns, package, root
        self.imports: dict[str, str] = {}

    def module_of(self, package: str) -> str:
        return ".".join([self.root, *package.split(".")]) if package else self.root

    def ref(self, cls: Any) -> str:
        """How the stub of this package spells class ``cls`` (a message or an enum)."""
        full = _full_name(self.ns, cls)
        top, rest = self._split(full)
        pkg = _package_of(top, self.ns)
        local = ".".join(_py_name(p) for p in [top[len(pkg) + 1:] if pkg else top, *rest])
        alias = self.imports.setdefault(pkg, f"_pbj_m{len(self.imports)}")
        return f"{alias}.{local}"

    def _split(self, full: str) -> tuple[str, list[str]]:
        parts = full.split(".")
        for i in range(len(parts), 0, -1):
            head = ".".join(parts[:i])
            if head in _packages(self.ns):
                return head, parts[i:]
        return full, []

    def value_type(self, t: Any) -> str:
        if isinstance(t, str):
            return f"_pbj_b.{SCALARS[t].py_type.__name__}"
        return self.ref(t)

    def attr_type(self, f: FieldInfo) -> str:
        if f.is_map:
            return f"_pbj.FrozenMap[{self.value_type(f.map_key)}, {self.value_type(f.map_value)}]"
        if f.repeated:
            return f"_pbj_b.tuple[{self.value_type(f.type)}, ...]"
        base = self.value_type(f.type)
        # a field with a declared default reads it when unset (pbj.has tells presence)
        return f"{base} | None" if f.optional and f.default is None else base

    def param_type(self, f: FieldInfo) -> str:
        if f.is_map:
            return f"_pbj_t.Mapping[{self.value_type(f.map_key)}, {self.value_type(f.map_value)}]"
        if f.repeated and f.type == "string":  # a str is an Iterable[str]: the kinds of iterable, less str
            return "_pbj_Texts"
        if f.repeated:
            return f"_pbj_t.Iterable[{self.value_type(f.type)}]"
        base = self.value_type(f.type)
        if f.type == "bytes":
            base = "_pbj_b.bytes | _pbj_b.bytearray | _pbj_b.memoryview"
        return f"{base} | None" if f.optional else base


def _describe(ns: Namespace, f: FieldInfo) -> str:
    def name(t: Any) -> str:
        return t if isinstance(t, str) else _full_name(ns, t)
    if f.is_map:
        return f"map<{f.map_key}, {name(f.map_value)}>"
    label = "repeated " if f.repeated else "required " if f.required else \
        "optional " if f.optional and f.type.__class__ is str else ""
    return f"{label}{name(f.type)}"


def _message_lines(m: _Module, cls: type, indent: str) -> Iterator[str]:
    mi = info(cls)
    yield f"{indent}class {_py_name(cls.__name__)}:"
    yield f'{indent}    """The message {mi.full_name}."""'
    for nested in _nested(m.ns, mi.full_name):
        yield from (_message_lines(m, nested, indent + "    ") if is_message(nested)
                    else _enum_lines(m.ns, nested, indent + "    "))
    by_name: dict[str, Any] = {f.name: f for f in mi.fields}
    by_name.update({o.name: o for o in mi.oneofs})
    params = []
    for name in mi.attr_order:
        item = by_name[name]
        if isinstance(item, FieldInfo):
            kind, ann, param = f"field {item.number}: {_describe(m.ns, item)}", m.attr_type(item), m.param_type(item)
        else:
            members = ", ".join(f"{x.name} = {x.number} ({_describe(m.ns, x)})" for x in item.members)
            values = " | ".join(dict.fromkeys(m.value_type(x.type) for x in item.members))
            kind, ann = f"oneof: {members}", f"_pbj.OneOf[{values}] | None"
            param = ann
        yield f"{indent}    @_pbj_b.property"
        yield f"{indent}    def {name}(_pbj_self) -> {ann}:"
        yield f'{indent}        """{kind}"""'
        params.append(f"{name}: {param} = ...")
    head = ", ".join(["_pbj_self", "*", *params]) if params else "_pbj_self"
    yield f"{indent}    def __init__({head}) -> None: ..."


def _enum_lines(ns: Namespace, enum_cls: Any, indent: str) -> Iterator[str]:
    yield f"{indent}class {_py_name(enum_cls.__name__)}(_pbj_enum.IntEnum):"
    yield f'{indent}    """The enum {_full_name(ns, enum_cls)}."""'
    written = 0
    for name, member in enum_cls.__members__.items():
        if keyword.iskeyword(name):  # (a value named None, True or if: no stub can declare it)
            yield f"{indent}    # {name} = {int(member)}: a Python keyword, reached as the enum[{name!r}]"
            continue
        yield f"{indent}    {name} = {int(member)}"
        written += 1
    if not written:
        yield f"{indent}    ..."


def _nested(ns: Namespace, parent: str) -> list[Any]:
    """The messages and enums declared directly inside message ``parent``."""
    out = []
    for full, cls in (*ns.messages.items(), *ns.enums.items()):
        if full.startswith(parent + ".") and "." not in full[len(parent) + 1:]:
            out.append(cls)
    return out


def _top_level(ns: Namespace, package: str) -> list[Any]:
    return [cls for full, cls in (*ns.messages.items(), *ns.enums.items())
            if full in _packages(ns) and _packages(ns)[full] == package]


def _full_name(ns: Namespace, cls: Any) -> str:
    """The full name of a message class or an enum of ``ns``."""
    if is_message(cls):
        return info(cls).full_name
    names = ns.__dict__.get("_pbj_stub_enum_names")
    if names is None:
        names = ns.__dict__["_pbj_stub_enum_names"] = {id(c): full for full, c in ns.enums.items()}
    return names[id(cls)]  # type: ignore[no-any-return]


def package_stub(ns: Namespace, package: str, root: str) -> str:
    """The ``.pyi`` text of protobuf package ``package`` of ``ns``, in package ``root``."""
    m = _Module(ns, package, root)
    m.imports[package] = "_pbj_m0"
    body: list[str] = []
    for cls in _top_level(ns, package):
        body += [*(_message_lines(m, cls, "") if is_message(cls) else _enum_lines(ns, cls, "")), ""]
    from pbj.grpc.stubs import service_stub_lines  # the services' stubs (pbj.grpc.stubs imports no grpcio)
    body += service_stub_lines(ns, package, m)
    head = [f'"""Stubs of protobuf package {package or "(none)"}: written by pbj stubs, do not edit."""', "",
            "import builtins as _pbj_b", "import enum as _pbj_enum", "import typing as _pbj_t", "",
            "import pbj as _pbj"]
    head += [f"import {m.module_of(pkg)} as {alias}" for pkg, alias in m.imports.items()]
    head += ["", TEXTS_ALIAS]
    return "\n".join([*head, "", "", *body]).rstrip() + "\n"


#: The constructor type of a repeated ``string`` field: what the run time takes (any iterable but a
#: ``str``, ``bytes``-like or mapping), in kinds a ``str`` is not: a ``str`` is an ``Iterable[str]``
#: and a ``Sequence[str]``, and the checkers cannot subtract it, so those two are not used.
TEXTS_ALIAS = ("_pbj_Texts: _pbj_t.TypeAlias = _pbj_b.tuple[_pbj_b.str, ...] | _pbj_t.MutableSequence[_pbj_b.str] "
               "| _pbj_t.AbstractSet[_pbj_b.str] | _pbj_t.Iterator[_pbj_b.str] | _pbj_t.ValuesView[_pbj_b.str]")


def package_module(ns: Namespace, package: str, root: str) -> str:
    """The ``.py`` text of protobuf package ``package``: the loaded classes under their names."""
    lines = [f'"""The classes of protobuf package {package or "(none)"}: written by pbj stubs, do not edit."""', ""]
    if package:
        lines += [f"from {root} import _pbj_namespace", ""]
    for cls in _top_level(ns, package):
        full = _full_name(ns, cls)
        lines.append(f"{_py_name(cls.__name__)} = _pbj_namespace[{full!r}]")
    from pbj.grpc.stubs import service_module_lines
    lines += service_module_lines(ns, package)
    return "\n".join(lines) + "\n"


_LOADER = '''"""A schema loaded with pbj, with stubs for type checkers: written by pbj stubs, do not edit.

Import its classes by protobuf package: ``from {root}.<package> import <Message>``.
"""

from pathlib import Path as _pbj_Path

import pbj as _pbj

#: The loaded schema (a :class:`pbj.Namespace`), from the descriptors stored beside this file.
_pbj_namespace = namespace = _pbj.load_descriptor_set((_pbj_Path(__file__).parent / {schema!r}).read_bytes())
'''


def write_stubs(ns: Namespace, out_dir: str | os.PathLike[str], module: str = "protos") -> list[Path]:
    """Write the typed package of a loaded schema (see the module docstring).

    Args:
        ns: the loaded schema.
        out_dir: the directory to write the package into (created if needed).
        module: the package's name (a Python identifier).

    Returns:
        The files written.

    Raises:
        ValueError: ``module`` or a protobuf package part is not a Python identifier
            (or is a keyword: the text says so).
    """
    if keyword.iskeyword(module):
        raise ValueError(f"module name {module!r} is a Python keyword: choose another (e.g. {module + '_pb'!r})")
    if not module.isidentifier():
        raise ValueError(f"module name {module!r} is not a Python identifier")
    root = Path(out_dir) / module
    packages = sorted(set(_packages(ns).values()))
    for pkg in packages:
        for part in pkg.split(".") if pkg else ():
            if not part.isidentifier() or keyword.iskeyword(part):
                raise ValueError(f"protobuf package {pkg!r} cannot be a Python module name ({part!r})")
    written: list[Path] = []

    def put(path: Path, text: str | bytes) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")
        written.append(path)

    put(root / SCHEMA_FILE, encode(FileDescriptorSet(file=list(ns.files))))  # type: ignore[call-arg]
    loader = _LOADER.format(root=module, schema=SCHEMA_FILE)
    dirs = {root}
    for pkg in packages:
        parts = pkg.split(".") if pkg else []
        for i in range(1, len(parts)):
            dirs.add(root.joinpath(*parts[:i]))
        target = root.joinpath(*parts)
        py, pyi = package_module(ns, pkg, module), package_stub(ns, pkg, module)
        if not pkg:  # the root package's classes live beside the loader (a class may be named "namespace")
            py = loader + "\n" + py
            declared = "namespace: _pbj.Namespace\n" if "\nclass namespace" not in pyi else ""
            declared += "_pbj_namespace: _pbj.Namespace\n"
            pyi = pyi.replace("\n\n\n", f"\n\n{declared}\n\n", 1)
        put(target / "__init__.py", py)
        put(target / "__init__.pyi", pyi)
    for d in sorted(dirs):
        if d / "__init__.py" not in written:  # what this run writes, not what an earlier run left
            text = loader if d == root else '"""A protobuf package prefix: written by pbj stubs."""\n'
            put(d / "__init__.py", text)
            put(d / "__init__.pyi", "import pbj as _pbj\n\nnamespace: _pbj.Namespace\n_pbj_namespace: _pbj.Namespace\n"
                if d == root else "")
    put(root / "py.typed", "")
    return written
