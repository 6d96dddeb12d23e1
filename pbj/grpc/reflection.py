"""gRPC server reflection (v1 and v1alpha): served from pbj namespaces, and read back into one.

The protocol (grpc repository, ``doc/server-reflection.md``,
``grpc/reflection/v1/reflection.proto``) is one bidirectional stream: the
client asks for the list of services, for the file that declares a symbol or
an extension, or for a file by name, and the server answers with serialized
``FileDescriptorProto``\\ s. A pbj namespace keeps the decoded files of its
schema (``Namespace.files``), so :func:`add_reflection` serves exactly the
descriptors the classes were built from (a service declared with
:func:`pbj.service`, and its classes, get files written from the classes by
:func:`pbj.descriptor_writer.describe`), and :func:`reflect` turns a server's
answers back into a :class:`pbj.Namespace` with its messages and services:
a client for any reflecting server with no ``.proto`` file at hand.

Answers: a file is sent with every file it imports, directly or not, that
this stream has not sent yet (the requested file always, first), as grpc's
C++ server does; a symbol may be a package-qualified message, enum, enum
value, field, service, method or extension; an unknown name answers an
``ErrorResponse`` with ``NOT_FOUND`` (5), as the protocol says.
"""

from __future__ import annotations

import enum
from collections.abc import Generator, Iterable, Iterator
from typing import Any

from pbj.api import decode, encode
from pbj.descriptor import FileDescriptorProto, FileDescriptorSet
from pbj.descriptor_writer import describe
from pbj.errors import PbjError
from pbj.grpc._require import grpc
from pbj.grpc._schemas import REFLECTION_PACKAGES, reflection_schema
from pbj.grpc.client import Stub
from pbj.grpc.server import add_to_server
from pbj.loader import Namespace, load_descriptor_set
from pbj.loader.services import Service
from pbj.schema import OneOf, is_message

__all__ = ["ReflectionIndex", "add_reflection", "reflect", "reflect_async", "ReflectionError"]

_NOT_FOUND = grpc.StatusCode.NOT_FOUND.value[0]
_INVALID = grpc.StatusCode.INVALID_ARGUMENT.value[0]


class ReflectionError(PbjError):
    """A server serves no reflection, or its answers cannot be made into a namespace (an error
    response, a missing file)."""


#: The error of :func:`reflect` on a server without reflection (every version answered ``UNIMPLEMENTED``).
NO_REFLECTION = ("the server does not serve reflection (grpc.reflection.v1 and v1alpha answered UNIMPLEMENTED): "
                 "load its schema with pbj.load_proto or pbj.load_descriptor_set instead")


def _is_type(obj: Any) -> bool:
    """Whether ``obj`` is a pbj message class or an ``enum.IntEnum`` (which :func:`pbj.descriptor_writer.describe`
    describes)."""
    return isinstance(obj, type) and (is_message(obj) or issubclass(obj, enum.IntEnum))


def _is_file(fd: Any) -> bool:
    """Whether ``fd`` is a decoded ``FileDescriptorProto`` (a function: the index keeps ``fd`` typed ``Any``)."""
    return isinstance(fd, FileDescriptorProto)


class ReflectionIndex:
    """The files of some namespaces, indexed for reflection answers.

    Args:
        schemas: :class:`pbj.Namespace` objects (or iterables of decoded
            ``FileDescriptorProto``), whose files are served as they are (a
            file of the same name in two is taken once); and
            :class:`pbj.Service` objects, message classes and enums declared in
            Python, whose files :func:`pbj.descriptor_writer.describe` writes
            (a type a namespace above declares is imported from its file).
        services: the full names ``list_services`` answers (default: every service of ``schemas``).

    Attributes:
        files: file name -> decoded ``FileDescriptorProto``.
        encoded: file name -> its serialized bytes.
        symbols: full name -> the name of the file that declares it.
        extensions: (extended message's full name, field number) -> file name.
        services: the service names listed.

    Raises:
        TypeError: a schema is none of these.
        ValueError: ``services`` names a service that is not in the schemas.
        SchemaError: a declared type cannot be described (see :func:`pbj.descriptor_writer.describe`).
    """

    def __init__(self, schemas: Iterable[Any], services: Iterable[str] | None = None) -> None:
        self.files: dict[str, Any] = {}
        self.symbols: dict[str, str] = {}
        self.extensions: dict[tuple[str, int], str] = {}
        found_services: list[str] = []
        declared: list[Any] = []
        for schema in schemas:
            if isinstance(schema, Service) or _is_type(schema):
                declared.append(schema)
                continue
            if not isinstance(schema, Namespace) and (isinstance(schema, (str, bytes)) or
                                                      not isinstance(schema, Iterable)):
                raise TypeError(f"reflection serves pbj.Namespace objects, pbj.Service objects, message classes, "
                                f"enums (or FileDescriptorProtos), not {type(schema).__name__}")
            for fd in (schema.files if isinstance(schema, Namespace) else schema):
                if not _is_file(fd):
                    raise TypeError(f"reflection serves pbj.Namespace objects or FileDescriptorProtos, "
                                    f"not {type(fd).__name__}")
                found_services += self._take(fd)
        # services and classes declared in Python: their descriptors written, importing the files above
        for fd in describe(*declared, known=self.symbols):
            found_services += self._take(fd)
        self.encoded = {name: encode(fd) for name, fd in self.files.items()}
        self.services = tuple(found_services if services is None else services)
        missing = [n for n in self.services if n not in found_services]
        if missing:
            raise ValueError(f"services {', '.join(map(repr, missing))} are not in the schemas served "
                             f"(a client could list them but not describe them); their services: "
                             f"{', '.join(found_services)}")

    def _take(self, fd: Any) -> list[str]:
        """Add a file (unless one of its name is there); the services it declares."""
        if fd.name in self.files:
            return []
        self.files[fd.name] = fd
        return self._index_file(fd)

    def _add(self, full: str, file: str) -> None:
        self.symbols.setdefault(full, file)

    def _index_file(self, fd: Any) -> list[str]:
        pkg = fd.package or ""
        prefix = f"{pkg}." if pkg else ""
        name = fd.name
        for ed in fd.enum_type:
            self._enum(ed, prefix, pkg, name)
        for md in fd.message_type:
            self._message(md, prefix, pkg, name)
        for ext in fd.extension:
            self._extension(ext, prefix, name)
        out = []
        for sd in fd.service:
            full = prefix + (sd.name or "")
            self._add(full, name)
            out.append(full)
            for m in sd.method:
                self._add(f"{full}.{m.name}", name)
        return out

    def _enum(self, ed: Any, prefix: str, package: str, file: str) -> None:
        self._add(prefix + (ed.name or ""), file)
        for v in ed.value:  # enum values are siblings of their enum (C++ scoping)
            self._add(prefix + (v.name or ""), file)

    def _message(self, md: Any, prefix: str, package: str, file: str) -> None:
        full = prefix + (md.name or "")
        self._add(full, file)
        for f in md.field:
            self._add(f"{full}.{f.name}", file)
        for od in md.oneof_decl:
            self._add(f"{full}.{od.name}", file)
        for ed in md.enum_type:
            self._enum(ed, full + ".", package, file)
        for nd in md.nested_type:
            self._message(nd, full + ".", package, file)
        for ext in md.extension:
            self._extension(ext, full + ".", file)

    def _extension(self, ext: Any, prefix: str, file: str) -> None:
        self._add(prefix + (ext.name or ""), file)
        if ext.extendee and ext.number is not None:
            self.extensions[(ext.extendee.lstrip("."), ext.number)] = file

    def closure(self, name: str, sent: set[str]) -> list[bytes]:
        """The encoded file ``name`` and the files it imports (transitively) not in ``sent``; adds them to ``sent``."""
        out = [self.encoded[name]]
        sent.add(name)
        stack = list(self.files[name].dependency)
        while stack:
            dep = stack.pop(0)
            if dep in sent or dep not in self.files:
                continue
            sent.add(dep)
            out.append(self.encoded[dep])
            stack += self.files[dep].dependency
        return out


class _Answers:
    """The answers of one reflection stream (it remembers which files it sent)."""

    def __init__(self, index: ReflectionIndex, ns: Namespace, package: str) -> None:
        self.index = index
        self.sent: set[str] = set()
        self.Response = ns[f"{package}.ServerReflectionResponse"]
        self.Files = ns[f"{package}.FileDescriptorResponse"]
        self.Numbers = ns[f"{package}.ExtensionNumberResponse"]
        self.List = ns[f"{package}.ListServiceResponse"]
        self.Entry = ns[f"{package}.ServiceResponse"]
        self.Error = ns[f"{package}.ErrorResponse"]

    def answer(self, request: Any) -> Any:
        body = self._body(request.message_request)
        return self.Response(valid_host=request.host, original_request=request, message_response=body)

    def _error(self, code: int, text: str) -> OneOf:
        return OneOf("error_response", self.Error(error_code=code, error_message=text))

    def _file(self, name: str | None) -> OneOf:
        if name is None or name not in self.index.files:
            return self._error(_NOT_FOUND, f"no file named {name!r}")
        return OneOf("file_descriptor_response", self.Files(file_descriptor_proto=self.index.closure(name, self.sent)))

    def _body(self, which: Any) -> OneOf:
        if which is None:
            return self._error(_INVALID, "the request asks for nothing")
        kind, value = which
        ix = self.index
        if kind == "list_services":
            return OneOf("list_services_response", self.List(service=[self.Entry(name=n) for n in ix.services]))
        if kind == "file_by_filename":
            return self._file(value)
        if kind == "file_containing_symbol":
            name = ix.symbols.get(value.lstrip("."))
            return self._file(name) if name else self._error(_NOT_FOUND, f"no symbol named {value!r}")
        if kind == "file_containing_extension":
            name = ix.extensions.get((value.containing_type.lstrip("."), value.extension_number))
            if name is None:
                return self._error(_NOT_FOUND, f"no extension {value.extension_number} of {value.containing_type!r}")
            return self._file(name)
        if kind == "all_extension_numbers_of_type":
            base = value.lstrip(".")
            if base not in ix.symbols:
                return self._error(_NOT_FOUND, f"no message named {value!r}")
            numbers = sorted(n for t, n in ix.extensions if t == base)
            return OneOf("all_extension_numbers_response", self.Numbers(base_type_name=base, extension_number=numbers))
        return self._error(_INVALID, f"unknown request {kind!r}")  # pragma: no cover - the oneof has no other member


def add_reflection(server: Any, *schemas: Any, services: Iterable[str] | None = None) -> ReflectionIndex:
    """Serve the reflection protocol, v1 and v1alpha, on ``server`` from ``schemas``' own descriptors.

    Call it before ``server.start()``.

    Args:
        server: a ``grpc.Server`` or ``grpc.aio.Server``.
        schemas: the :class:`pbj.Namespace` objects whose files are served (a
            service served with :func:`pbj.grpc.add_to_server` from a loaded
            schema is described by that schema's namespace), and services
            declared with :func:`pbj.service` (message classes and enums too),
            whose descriptors are written from their classes
            (:func:`pbj.descriptor_writer.describe`).
        services: the service names ``list_services`` answers (default: every
            service of ``schemas``, and the reflection service itself).

    Returns:
        The :class:`ReflectionIndex` served.

    Raises:
        TypeError: ``server`` is not a grpcio server, or a schema is none of
            the above (nor an iterable of ``FileDescriptorProto``).
        ValueError: ``services`` names a service that is not in the schemas.
        SchemaError: a declared service or class cannot be described (a full
            name that is not a protobuf name, packages that would import each
            other in a circle; see :func:`pbj.descriptor_writer.describe`).
    """
    own = reflection_schema()
    listed = None if services is None else list(services)
    index = ReflectionIndex([*schemas, own], services=listed)
    if services is None:  # the reflection service last, as grpcio-reflection lists it
        index.services = (*[s for s in index.services if not s.startswith("grpc.reflection.")],
                          f"{REFLECTION_PACKAGES[0]}.ServerReflection")
    aio = isinstance(server, grpc.aio.Server)
    for package in REFLECTION_PACKAGES:
        svc = own.service(f"{package}.ServerReflection")

        if aio:
            async def info_async(requests: Any, context: Any, package: str = package) -> Any:
                answers = _Answers(index, own, package)
                async for request in requests:
                    yield answers.answer(request)
            add_to_server(server, svc, {"ServerReflectionInfo": info_async})
        else:
            def info(requests: Iterator[Any], context: Any, package: str = package) -> Iterator[Any]:
                answers = _Answers(index, own, package)
                for request in requests:
                    yield answers.answer(request)
            add_to_server(server, svc, {"ServerReflectionInfo": info})
    return index


# ------------------------------------------------------------------ the client side

def _collect(Request: Any, host: str) -> Generator[list[Any], list[Any], list[Any]]:
    """The ``FileDescriptorProto``\\ s of every listed service and their imports, in import order.

    A generator, so that a sync and an async caller drive it alike: it yields each list of
    requests to send on one stream, is sent back that stream's responses, and returns the files.
    """
    (listing,) = yield [Request(host=host, message_request=OneOf("list_services", ""))]
    names = [s.name for s in _body(listing, "list_services_response").service]
    files: dict[str, Any] = {}

    def take(responses: list[Any], what: list[str], optional: set[str]) -> None:
        for response, asked in zip(responses, what, strict=True):
            which = response.message_response
            if which is not None and which.which == "error_response" and asked in optional:
                continue
            for raw in _body(response, "file_descriptor_response").file_descriptor_proto:
                fd = decode(FileDescriptorProto, raw)
                if not fd.name:
                    raise ReflectionError("the server's reflection sent a file with no name")
                files.setdefault(fd.name, fd)
    # the reflection services may be listed without their descriptors (grpcio-reflection has them, others may not)
    optional = {n for n in names if n.startswith("grpc.reflection.")}
    answers = yield [Request(host=host, message_request=OneOf("file_containing_symbol", n)) for n in names]
    take(answers, names, optional)
    while True:
        missing = sorted({d for fd in files.values() for d in fd.dependency} - set(files))
        if not missing:
            break
        answers = yield [Request(host=host, message_request=OneOf("file_by_filename", n)) for n in missing]
        take(answers, missing, set())
    ordered: list[Any] = []
    done: set[str] = set()

    def visit(name: str) -> None:
        if name in done:
            return
        done.add(name)
        for dep in files[name].dependency:
            visit(dep)
        ordered.append(files[name])
    for name in files:
        visit(name)
    return ordered


def _body(response: Any, expected: str) -> Any:
    which = response.message_response
    if which is None:
        raise ReflectionError("the server's reflection response is empty")
    if which.which == "error_response":
        err = which.value
        raise ReflectionError(f"the server's reflection answered error {err.error_code}: {err.error_message}")
    if which.which != expected:
        raise ReflectionError(f"the server's reflection answered {which.which}, not {expected}")
    return which.value


def _load(files: list[Any]) -> Namespace:
    return load_descriptor_set(encode(FileDescriptorSet(file=files)))  # type: ignore[call-arg]


def reflect(channel: Any, *, host: str = "", timeout: float | None = 10.0,
            metadata: Any = None) -> Namespace:
    """Ask a server for its schemas over the reflection protocol and load them.

    Tries ``grpc.reflection.v1``, then ``v1alpha`` when the server does not implement v1.

    Args:
        channel: a ``grpc.Channel`` to the server.
        host: the ``host`` field of the requests (servers commonly ignore it).
        timeout: the deadline of each reflection call, in seconds (``None``: none).
        metadata: metadata sent with each call, ``(key, value)`` pairs.

    Returns:
        A :class:`pbj.Namespace` with the messages, enums and services of every
        listed service's files and their imports (``ns.service(name)``; the
        reflection services themselves are included when the server describes them).

    Raises:
        grpc.RpcError: a call failed (unreachable server, deadline).
        ReflectionError: the server serves no reflection (both versions answered ``UNIMPLEMENTED``:
            the error's ``__cause__`` is the last call's ``grpc.RpcError``), or answered with an
            error or an inconsistent set of files.
        SchemaError: the files cannot be loaded.
        TypeError: ``channel`` is a ``grpc.aio.Channel`` (use :func:`reflect_async`).
    """
    if isinstance(channel, grpc.aio.Channel):
        raise TypeError("reflect needs a grpc.Channel; on a grpc.aio.Channel use: await reflect_async(channel)")
    own = reflection_schema()
    for i, package in enumerate(REFLECTION_PACKAGES):
        stub = Stub(channel, own.service(f"{package}.ServerReflection"))

        steps = _collect(own[f"{package}.ServerReflectionRequest"], host)
        try:
            requests = next(steps)
            while True:
                requests = steps.send(list(stub.ServerReflectionInfo(iter(requests), timeout=timeout,
                                                                     metadata=metadata)))
        except StopIteration as done:
            return _load(done.value)
        except grpc.RpcError as exc:
            code = exc.code() if isinstance(exc, grpc.Call) else None
            if code is not grpc.StatusCode.UNIMPLEMENTED:
                raise
            if i + 1 == len(REFLECTION_PACKAGES):
                raise ReflectionError(NO_REFLECTION) from exc
    raise AssertionError("unreachable")  # pragma: no cover


async def reflect_async(channel: Any, *, host: str = "", timeout: float | None = 10.0,
                        metadata: Any = None) -> Namespace:
    """:func:`reflect` on a ``grpc.aio.Channel``: ``ns = await reflect_async(channel)``.

    Same arguments, result and errors (``grpc.aio.AioRpcError`` for a failed call; a
    ``TypeError`` for a ``grpc.Channel``, which :func:`reflect` takes).
    """
    if isinstance(channel, grpc.Channel):
        raise TypeError("reflect_async needs a grpc.aio.Channel; on a grpc.Channel use: reflect(channel)")
    own = reflection_schema()
    for i, package in enumerate(REFLECTION_PACKAGES):
        stub = Stub(channel, own.service(f"{package}.ServerReflection"))
        questions = _collect(own[f"{package}.ServerReflectionRequest"], host)
        try:
            requests = next(questions)
            while True:
                call = stub.ServerReflectionInfo(iter(requests), timeout=timeout, metadata=metadata)
                requests = questions.send([r async for r in call])
        except StopIteration as done:
            return _load(done.value)
        except grpc.aio.AioRpcError as exc:
            if exc.code() is not grpc.StatusCode.UNIMPLEMENTED:
                raise
            if i + 1 == len(REFLECTION_PACKAGES):
                raise ReflectionError(NO_REFLECTION) from exc
    raise AssertionError("unreachable")  # pragma: no cover
