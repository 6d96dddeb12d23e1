"""gRPC server reflection over Connect, gRPC and gRPC-Web: served by a pbj application, and read back.

The protocol (grpc repository, ``doc/server-reflection.md``) is one bidirectional stream;
``buf curl``, ``grpcurl`` and :func:`reflect` use it to learn a server's schema. An
application serves it when given ``reflection=`` (:class:`pbj.connect.ASGIApplication`),
with the same index and answers as :func:`pbj.grpc.reflection.add_reflection`
(:mod:`pbj.grpc._reflection`): a namespace's own files, the files written for services
declared in Python, v1 and v1alpha.

Why not ``connectrpc-grpcreflect``: it serves protobuf-py descriptors, so every file would be
built again as a protobuf-py registry when the application starts (7.7 s of CPU for the 167
files of the Hedera schema, against 6 ms for pbj's index of the same files, on the machine
of docs/connect.md), and its messages would need a second codec on the application.

:func:`reflect` and :func:`reflect_async` ask any reflecting server (connectrpc's, grpcio's,
connect-go's, pbj's) over Connect, gRPC or gRPC-Web and load the answers into a
:class:`pbj.Namespace`. A bidirectional call needs HTTP/2 for the gRPC protocol; over
HTTP/1.1, a Connect or gRPC-Web server that reads the whole request first (connectrpc's do)
answers too, each round's requests being sent together.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any

from pbj.connect._require import Code, ConnectError
from pbj.connect.client import ClientSync
from pbj.connect.server import endpoints
from pbj.grpc._reflection import Answers, ReflectionError, collect, load_files, serving_index
from pbj.grpc._schemas import REFLECTION_PACKAGES, reflection_schema
from pbj.loader import Namespace

__all__ = ["reflection_endpoints", "reflect", "reflect_async", "ReflectionError"]


def reflection_endpoints(*schemas: Any, asyncio: bool) -> dict[str, Any]:
    """connectrpc endpoints of reflection v1 and v1alpha, answering from ``schemas``.

    Args:
        schemas: as :func:`pbj.grpc.reflection.add_reflection` takes them: namespaces (their
            own files), services, message classes and enums declared in Python.
        asyncio: endpoints for an ASGI application, else for a WSGI one.

    Raises:
        TypeError, SchemaError: as :func:`pbj.grpc.reflection.add_reflection`.
    """
    index = serving_index(*schemas)
    own = reflection_schema()
    out: dict[str, Any] = {}
    for package in REFLECTION_PACKAGES:
        svc = own.service(f"{package}.ServerReflection")
        if asyncio:
            async def info_async(requests: AsyncIterator[Any], ctx: Any, package: str = package) -> Any:
                answers = Answers(index, own, package)
                async for request in requests:
                    yield answers.answer(request)
            out.update(endpoints(svc, {"ServerReflectionInfo": info_async}, asyncio=True))
        else:
            def info(requests: Iterator[Any], ctx: Any, package: str = package) -> Iterator[Any]:
                answers = Answers(index, own, package)
                for request in requests:
                    yield answers.answer(request)
            out.update(endpoints(svc, {"ServerReflectionInfo": info}, asyncio=False))
    return out


def reflect(address: str, *, protocol: Any = "connect", host: str = "", timeout: float | None = 10.0,
            headers: Any = None, http_client: Any = None) -> Namespace:
    """Ask a server for its schemas over the reflection protocol and load them.

    Tries ``grpc.reflection.v1``, then ``v1alpha`` when the server does not implement v1.

    Args:
        address: the server's base URL (``http://127.0.0.1:8080``).
        protocol: ``"connect"``, ``"grpc"`` or ``"grpc-web"``.
        host: the ``host`` field of the requests (servers commonly ignore it).
        timeout: the deadline of each reflection call, in seconds (``None``: none).
        headers: request metadata sent with each call.
        http_client: a ``pyqwest.SyncClient`` (see :class:`pbj.connect.ClientSync`).

    Returns:
        A :class:`pbj.Namespace` with the messages, enums and services of every listed
        service's files and their imports.

    Raises:
        ConnectError: a call failed (unreachable server, deadline, no reflection service).
        ReflectionError: the server answered with an error or an inconsistent set of files.
        SchemaError: the files cannot be loaded.
    """
    own = reflection_schema()
    for i, package in enumerate(REFLECTION_PACKAGES):
        with ClientSync(address, own.service(f"{package}.ServerReflection"), protocol=protocol, timeout=timeout,
                        http_client=http_client) as client:
            questions = collect(own[f"{package}.ServerReflectionRequest"], host)
            try:
                requests = next(questions)
                while True:
                    requests = questions.send(list(client.ServerReflectionInfo(requests, headers=headers)))
            except StopIteration as done:
                return load_files(done.value)
            except ConnectError as exc:
                if exc.code is not Code.UNIMPLEMENTED or i + 1 == len(REFLECTION_PACKAGES):
                    raise
    raise AssertionError("unreachable")  # pragma: no cover


async def reflect_async(address: str, *, protocol: Any = "connect", host: str = "", timeout: float | None = 10.0,
                        headers: Any = None, http_client: Any = None) -> Namespace:
    """:func:`reflect` for asyncio: ``ns = await reflect_async(url)``, run in a worker thread so that the event
    loop goes on (a few short calls, once per schema).

    Same arguments, result and errors (``http_client`` a ``pyqwest.SyncClient``).
    """
    return await asyncio.to_thread(reflect, address, protocol=protocol, host=host, timeout=timeout, headers=headers,
                                   http_client=http_client)
