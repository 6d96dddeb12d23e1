"""Google's protobuf as the test oracle: compile .proto files with protoc and import them.

``protoc(files, include)`` compiles with the protoc that ``grpcio-tools``
ships into a descriptor set (cached for the session), adds its files to
Google's default descriptor pool and returns the set's bytes.
``google_class(full_name)`` then gives the Google message class of any
message in those files. ``protoc_sources(folder, sources)`` writes a test's
own ``.proto`` texts into ``folder`` first.
"""

from __future__ import annotations

import tempfile
from functools import cache
from pathlib import Path

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from tests.conftest import SHARED

GOOGLE_PROTOS = SHARED / "protos" / "google"
PBJ_IT = SHARED / "protos" / "pbj-it"
HAPI = SHARED / "protos" / "hapi-v0.55.0"
HAPI_ROOTS = [HAPI / "block", HAPI / "platform", HAPI / "services", HAPI / "streams"]

_out = Path(tempfile.mkdtemp(prefix="pbj-oracle-"))


@cache
def _compile(files: tuple[str, ...], include: tuple[str, ...]) -> bytes:
    import grpc_tools
    from grpc_tools import protoc as grpc_protoc

    out = _out / f"set{len(list(_out.iterdir()))}.binpb"
    builtin = Path(grpc_tools.__file__).parent / "_proto"
    # --experimental_editions: edition UNSTABLE (conformance's TestAllTypesEditionUnstable) compiles too.
    args = ["protoc", "--include_imports", "--experimental_editions", f"--descriptor_set_out={out}",
            *(f"-I{i}" for i in include), f"-I{builtin}", *files]
    if grpc_protoc.main(args) != 0:
        raise RuntimeError(f"protoc failed: {args}")
    data = out.read_bytes()
    fds = descriptor_pb2.FileDescriptorSet.FromString(data)
    pool = descriptor_pool.Default()
    for fd in fds.file:
        try:
            pool.FindFileByName(fd.name)
        except KeyError:
            pool.Add(fd)
    return data


def protoc(files: list[Path | str], include: list[Path | str]) -> bytes:
    """Compile ``files`` (with their imports) and add them to Google's default descriptor pool.

    Returns:
        The ``FileDescriptorSet`` bytes (imports included), e.g. for ``pbj.load_descriptor_set``.
        Files already in the pool (same name) are kept as they are.
    """
    return _compile(tuple(str(f) for f in files), tuple(str(i) for i in include))


def protoc_sources(folder: Path, sources: dict[str, str]) -> tuple[list[Path], bytes]:
    """Write ``sources`` (file name -> .proto text) into ``folder`` and compile them with :func:`protoc`.

    Returns:
        The written paths (for ``pbj.load_proto(paths, include=[folder])``) and the descriptor
        set's bytes (for ``pbj.load_descriptor_set``); Google's classes are in its pool.
    """
    paths = []
    for name, text in sources.items():
        (folder / name).write_text(text)
        paths.append(folder / name)
    return paths, protoc(paths, [folder])


def google_class(full_name: str):
    """The Google message class of ``full_name`` from the default pool."""
    desc = descriptor_pool.Default().FindMessageTypeByName(full_name)
    return message_factory.GetMessageClass(desc)


#: The schema suites the loaded-class property tests run over: name -> (files, include folders).
SCHEMA_SUITES = {
    "hapi": (lambda: sorted(str(p.relative_to(r)) for r in HAPI_ROOTS for p in r.rglob("*.proto")),
             lambda: [*HAPI_ROOTS, GOOGLE_PROTOS]),
    "pbj-it": (lambda: sorted(p.name for p in PBJ_IT.glob("*.proto")), lambda: [PBJ_IT]),
    "proto3": (lambda: ["google/protobuf/test_messages_proto3.proto"], lambda: [GOOGLE_PROTOS]),
    "proto2": (lambda: ["google/protobuf/test_messages_proto2.proto"], lambda: [GOOGLE_PROTOS]),
}


@cache
def suite_set(suite: str) -> bytes:
    """The ``FileDescriptorSet`` of a :data:`SCHEMA_SUITES` suite (compiled once, added to Google's pool)."""
    files, include = SCHEMA_SUITES[suite]
    return protoc(files(), include())


def suite_message_names(suite: str, *, skip_google: bool = False) -> list[str]:
    """Every message of a suite but map entries, by full name (read with Google's descriptor classes).

    ``skip_google`` leaves out the messages of ``google/protobuf/*.proto`` files the suite imports.
    """
    names: list[str] = []

    def walk(scope: str, desc) -> None:
        full = f"{scope}.{desc.name}" if scope else desc.name
        if not desc.options.map_entry:
            names.append(full)
        for nested in desc.nested_type:
            walk(full, nested)

    for fd in descriptor_pb2.FileDescriptorSet.FromString(suite_set(suite)).file:
        if skip_google and fd.name.startswith("google/protobuf/"):
            continue
        for desc in fd.message_type:
            walk(fd.package, desc)
    return names
