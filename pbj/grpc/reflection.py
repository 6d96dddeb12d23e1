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

from collections.abc import Iterable, Iterator
from typing import Any

from pbj.grpc._reflection import Answers as _Answers
from pbj.grpc._reflection import ReflectionError, ReflectionIndex, serving_index
from pbj.grpc._reflection import collect as _collect
from pbj.grpc._reflection import load_files as _load
from pbj.grpc._reflection import response_body as _body  # noqa: F401  (pbj.grpc.reflection._body, as before)
from pbj.grpc._require import grpc
from pbj.grpc._schemas import REFLECTION_PACKAGES, reflection_schema
from pbj.grpc.client import Stub
from pbj.grpc.server import add_to_server
from pbj.loader import Namespace

__all__ = ["ReflectionIndex", "add_reflection", "reflect", "reflect_async", "ReflectionError"]

#: The error of :func:`reflect` on a server without reflection (every version answered ``UNIMPLEMENTED``).
NO_REFLECTION = ("the server does not serve reflection (grpc.reflection.v1 and v1alpha answered UNIMPLEMENTED): "
                 "load its schema with pbj.load_proto or pbj.load_descriptor_set instead")


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
    index = serving_index(*schemas, services=services)
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
            if exc.code() is not grpc.StatusCode.UNIMPLEMENTED and not _ended_unread(exc):
                raise
            if i + 1 == len(REFLECTION_PACKAGES):
                raise ReflectionError(NO_REFLECTION) from exc
    raise AssertionError("unreachable")  # pragma: no cover


def _ended_unread(exc: Any) -> bool:
    """Whether an aio call failed because the server ended it before reading a request.

    A server without the method answers at once; when grpcio's aio client is still sending the
    request then, the send fails and grpcio reports ``INTERNAL`` ("Failed execute_batch") in place
    of the server's status. A reflection server reads its requests, so for the probe this is
    the answer of a server that does not serve that version.
    """
    return exc.code() is grpc.StatusCode.INTERNAL and "execute_batch" in (exc.debug_error_string() or "")
