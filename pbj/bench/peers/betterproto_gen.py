"""betterproto2 on a schema it is given at bench time: its own compiler generates the classes.

betterproto2 cannot load a schema at run time, but its compiler plugin (``betterproto2-compiler``,
the ``protoc-gen-python_betterproto2`` program) turns a ``CodeGeneratorRequest`` into Python
modules. :func:`generate` builds that request from a ``FileDescriptorSet`` (the one the
benchmark already ships or makes: the HAPI set, the OpenTelemetry set), runs the plugin in a
subprocess, as protoc would, and writes the modules it answers into a package of a temporary
folder; :func:`load_class` imports a message class from it. Nothing is written by hand, and the
classes are exactly what a betterproto2 user generates from the same schema.

The plugin reads every file's ``source_code_info`` (to turn comments into docstrings) and fails
on a file without it; the shipped sets are written without source info (``protoc
--descriptor_set_out`` without ``--include_source_info``), so each file missing it gets an
empty ``SourceCodeInfo``: the generated classes are the same, without the schema's comments.
Client and server stubs are not generated (``client_generation=none,server_generation=none``).

:class:`BetterprotoReader` reads every field of betterproto2 messages the way
:mod:`pbj.bench.readers` reads pbj's and Google's (plans from each class's own betterproto2
metadata), so the three give the same checksum. Needs the ``bench`` extra's ``betterproto2`` and
``betterproto2-compiler``, and Google's ``protobuf`` (for the plugin protocol's messages).
"""

# betterproto2 is the bench extra's, not installed for the tests: pyright checks this module without it
# pyright: reportMissingImports=false

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pbj.bench.readers import _FLOAT, _INT, _MAP, _MSG, _ONE, _ONEOF, _OPT, _REP, _SUBMSG, _TEXT, _Reader

if TYPE_CHECKING:
    from pbj.bench.suite import Codec

__all__ = ["PACKAGE", "PARAMETER", "version", "compiler_version", "plugin_request", "generate", "load_class",
           "BetterprotoReader", "codec"]

#: The package the generated modules are written into (inside the folder given to :func:`generate`).
PACKAGE = "pbj_bench_betterproto2"
#: The plugin's options: messages only, no gRPC stubs.
PARAMETER = "client_generation=none,server_generation=none"


def version() -> str:
    """The installed ``betterproto2`` version (the runtime the generated classes use)."""
    import betterproto2

    return betterproto2.__version__


def compiler_version() -> str:
    """The installed ``betterproto2-compiler`` version (the plugin that generates the classes)."""
    from importlib import metadata

    return metadata.version("betterproto2_compiler")


def plugin_request(descriptor_set: bytes) -> bytes:
    """The ``CodeGeneratorRequest`` protoc would send the plugin for every file of ``descriptor_set``.

    Every file is given (``proto_file``) and every file outside ``google/protobuf/`` is to be
    generated (the plugin makes the well-known types it needs itself); a file without
    ``source_code_info`` gets an empty one (see the module's docstring).

    Raises:
        google.protobuf.message.DecodeError: ``descriptor_set`` is not a ``FileDescriptorSet``.
    """
    from google.protobuf import descriptor_pb2
    from google.protobuf.compiler import plugin_pb2

    fds = descriptor_pb2.FileDescriptorSet.FromString(descriptor_set)
    request = plugin_pb2.CodeGeneratorRequest(parameter=PARAMETER)
    for f in fds.file:
        copy = request.proto_file.add()
        copy.CopyFrom(f)
        if not copy.HasField("source_code_info"):
            copy.source_code_info.SetInParent()
        if not f.name.startswith("google/protobuf/"):
            request.file_to_generate.append(f.name)
    return request.SerializeToString()


def generate(descriptor_set: bytes, folder: Path) -> list[str]:
    """Run betterproto2's compiler plugin on ``descriptor_set``; write its modules under ``folder/PACKAGE``.

    The plugin runs as ``python -m betterproto2_compiler.plugin`` with this interpreter (it formats
    its output with ``ruff``, found beside the interpreter).

    Returns:
        The paths of the written files, relative to ``folder/PACKAGE``.

    Raises:
        RuntimeError: the plugin failed or answered an error (its message is attached).
        ImportError: ``betterproto2-compiler`` or ``protobuf`` is not installed.
    """
    importlib.import_module("betterproto2_compiler")
    from google.protobuf.compiler import plugin_pb2

    env = dict(os.environ, PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    proc = subprocess.run([sys.executable, "-m", "betterproto2_compiler.plugin"], input=plugin_request(descriptor_set),
                          capture_output=True, env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"betterproto2's plugin failed ({proc.returncode}): "
                           f"{proc.stderr.decode(errors='replace')[-2000:]}")
    response = plugin_pb2.CodeGeneratorResponse.FromString(proc.stdout)
    if response.error:
        raise RuntimeError(f"betterproto2's plugin answered an error: {response.error}")
    root = folder / PACKAGE
    written = []
    for f in response.file:
        path = root / f.name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f.content)
        written.append(f.name)
    (root / "__init__.py").touch()
    return written


def load_class(folder: Path, descriptor_set: bytes, full_name: str) -> type:
    """The class :func:`generate` made in ``folder`` for the top-level message ``full_name`` of ``descriptor_set``.

    betterproto2 writes one module per proto package (``pkg.sub`` -> ``PACKAGE.pkg.sub``); the
    class keeps the message's name. Puts ``folder`` first on ``sys.path`` (this is meant for the
    benchmark's worker processes).

    Raises:
        KeyError: ``descriptor_set`` has no top-level message ``full_name``.
        ImportError: the module is not there (:func:`generate` did not write it).
        AttributeError: the module has no such class.
    """
    from google.protobuf import descriptor_pb2

    package = None
    for f in descriptor_pb2.FileDescriptorSet.FromString(descriptor_set).file:
        prefix = f"{f.package}." if f.package else ""
        if any(prefix + m.name == full_name for m in f.message_type):
            package = f.package
            break
    if package is None:
        raise KeyError(f"no top-level message {full_name} in the descriptor set")
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
    module = importlib.import_module(".".join(filter(None, [PACKAGE, package])))
    return getattr(module, full_name.removeprefix(f"{package}."))


def _kind(meta: Any) -> int:
    import betterproto2 as bp

    t = meta.proto_type
    if t == bp.TYPE_MESSAGE:
        if meta.unwrap is not None:  # a wrapper type, held as its Python value
            return _kind(meta.unwrap()._betterproto.meta_by_field_name["value"])
        return _MSG
    if t in (bp.TYPE_STRING, bp.TYPE_BYTES):
        return _TEXT
    if t in (bp.TYPE_FLOAT, bp.TYPE_DOUBLE):
        return _FLOAT
    return _INT


class BetterprotoReader(_Reader):
    """Reads every field of betterproto2 messages (plans from each class's ``_betterproto`` metadata).

    The same walk as :class:`pbj.bench.readers.PbjReader`: every field read, every element of a
    repeated field and map, the set member of each oneof (betterproto2 holds ``None`` in the
    others), every present sub-message recursively; wrapper types (``google.protobuf.*Value``),
    which betterproto2 holds as their plain value or ``None``, read as the wrapper's ``value``.
    """

    def __init__(self) -> None:
        self._plans: dict[type, tuple] = {}

    def plan(self, cls: type) -> tuple:
        """The reading plan of a betterproto2 message class: ``(attribute, mode, kind, extra)`` per field."""
        import betterproto2 as bp

        found = self._plans.get(cls)
        if found is not None:
            return found
        meta_of = cls._betterproto.meta_by_field_name  # type: ignore[attr-defined]
        steps: list = []
        groups: dict[str, dict[str, int]] = {}
        for name, meta in meta_of.items():
            if meta.group:
                groups.setdefault(meta.group, {})[name] = _kind(meta)
            elif meta.proto_type == bp.TYPE_MAP:
                key, value = meta.map_meta
                steps.append((name, _MAP, _kind(key), _kind(value)))
            elif meta.repeated:
                steps.append((name, _REP, _kind(meta), None))
            elif meta.proto_type == bp.TYPE_MESSAGE and meta.unwrap is None:
                steps.append((name, _SUBMSG, _MSG, None))
            elif meta.optional or meta.proto_type == bp.TYPE_MESSAGE:
                steps.append((name, _OPT, _kind(meta), None))
            else:
                steps.append((name, _ONE, _kind(meta), None))
        for group, members in groups.items():
            steps.append((group, _ONEOF, None, members))
        plan = tuple(steps)
        self._plans[cls] = plan
        return plan

    def _read(self, obj: Any) -> int:
        plan = self._plans.get(obj.__class__) or self.plan(obj.__class__)
        total = 0
        for name, mode, kind, extra in plan:
            if mode == _ONEOF:
                for member, member_kind in extra.items():
                    v = getattr(obj, member)
                    if v is not None:
                        total += self._value(member_kind, v)
                        break
                continue
            v = getattr(obj, name)
            if mode == _ONE:
                if kind == _INT:
                    total += v
                elif kind == _TEXT:
                    total += len(v)
            elif mode == _SUBMSG:
                if v is not None:
                    total += self._read(v)
            elif mode == _REP:
                total += self._repeated(kind, v)
            elif mode == _MAP:
                for k, x in v.items():
                    total += self._value(kind, k) + self._value(extra, x)
            elif v is not None:  # _OPT
                total += self._value(kind, v)
        return total


def codec(classes: dict[str, type], descriptor_set: bytes, full_names: dict[str, str]) -> Codec:
    """betterproto2's :class:`~pbj.bench.suite.Codec`: ``cls.parse`` and ``bytes(obj)``, as its users call them.

    ``classes`` maps each decoder's name (``"item"``, ``"block"``, ``"message"`` ...) to its generated
    class, ``full_names`` to its message's full name in ``descriptor_set``. betterproto2 caches no
    size, so its "sizes cached" cell encodes objects encoded once before, like every other
    library's. betterproto2 writes a message's fields in the order the schema declares them, not by
    field number (OTLP's ``Span`` declares ``flags = 16`` before ``name = 5``), so where its bytes
    differ from the input's the codec's ``same_message`` parses both with Google's protobuf (classes
    made from ``descriptor_set``) and compares the messages.
    """
    from pbj.bench.peers.google_peer import load_classes
    from pbj.bench.suite import Codec

    decode: dict[str, Any] = {name: cls.parse for name, cls in classes.items()}  # type: ignore[attr-defined]
    google: dict[str, Any] = {}

    def same_message(name: str, data: bytes, written: bytes) -> bool:
        if name not in google:
            google[name] = load_classes(descriptor_set, [full_names[name]])[full_names[name]]
        return bool(google[name].FromString(data) == google[name].FromString(written))

    return Codec(decode=decode, encoders={"encode": bytes}, read=BetterprotoReader().read, prime=bytes,
                 same_message=same_message)
