"""Servers: grpcio method handlers for a :class:`pbj.Service`, from a servicer or plain functions.

:func:`add_to_server` registers a service's handlers on a ``grpc.server(...)``
or a ``grpc.aio.server()`` (as grpcio's generated ``add_XServicer_to_server``
does: a generic handler and, where grpcio has them, registered method
handlers). The implementation is a :class:`Servicer` subclass instance (or any
object with methods named as the service's), or a mapping of method name to
function. Each implementation takes ``(request, context)`` as grpcio's
handlers do: a request message (or an iterator of them when the client
streams) and the ``grpc.ServicerContext``; it returns a response message (or
yields them when the server streams). On a ``grpc.aio`` server they are
coroutines (``async def``) and async generators, and a streamed request is an
async iterator; a server-streaming handler may also be a coroutine that sends
with ``await context.write(reply)`` (grpc.aio's writer API). Read a streamed
request by iterating it, not with ``context.read()``, which bypasses the
``INVALID_ARGUMENT`` check.

Status codes (grpc.io "Status codes and their use in gRPC"):

* a method the implementation lacks answers ``UNIMPLEMENTED``, and so does a
  handler raising ``NotImplementedError``;
* :class:`pbj.grpc.RpcError` ends the call with its code, message and rich
  details (``grpc-status-details-bin``, :mod:`pbj.grpc.status`);
* a request that is not a valid encoding of the input message answers
  ``INVALID_ARGUMENT`` with the :class:`pbj.DecodeError`'s text (field path and
  byte offset) and never reaches the handler; the server keeps serving;
* ``context.abort(...)`` works as in any grpcio handler; any other exception
  is left to grpcio, which answers ``UNKNOWN``.

Requests are decoded and responses encoded by pbj's codec directly (grpcio's
``request_deserializer`` and ``response_serializer``).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from pbj.errors import DecodeError
from pbj.grpc._codec import decoder, encoder
from pbj.grpc._common import ServicerBase, implementations
from pbj.grpc._require import grpc
from pbj.grpc.status import RpcError, to_grpc_status
from pbj.loader.services import Method, Service
from pbj.schema import info

__all__ = ["Servicer", "add_to_server", "method_handlers"]

_INVALID = grpc.StatusCode.INVALID_ARGUMENT
_UNIMPLEMENTED = grpc.StatusCode.UNIMPLEMENTED


class _BadRequest:
    """What the request deserializer returns for bytes that do not decode (grpcio would answer INTERNAL)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def _deserializer(cls: type) -> Callable[[bytes], Any]:
    name = info(cls).full_name

    def bad_request(exc: BaseException) -> _BadRequest:
        return _BadRequest(f"the request is not a valid {name}: {exc}")
    return decoder(cls, DecodeError, bad_request)  # no Python frame per request, unless it does not decode


def _unimplemented_text(m: Method) -> str:
    return f"method {m.path[1:]} is not implemented"


# ------------------------------------------------------------------ sync handlers

def _sync_handler(m: Method, fn: Callable[..., Any]) -> Callable[..., Any]:
    bad = _BadRequest
    if inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn):
        raise TypeError(f"{m.path[1:]}: {fn!r} is async: serve it on a grpc.aio.server(); a grpc.server(...) "
                        f"runs plain functions (its coroutine would never be awaited)")

    def failed(exc: BaseException, context: Any) -> None:
        if isinstance(exc, RpcError):
            context.abort_with_status(to_grpc_status(exc))
        context.abort(_UNIMPLEMENTED, str(exc) or _unimplemented_text(m))

    def requests(it: Any, context: Any) -> Any:
        for r in it:
            if r.__class__ is bad:
                context.abort(_INVALID, r.text)
            yield r

    if m.kind == "unary_unary":
        def unary_unary(request: Any, context: Any) -> Any:
            if request.__class__ is bad:
                context.abort(_INVALID, request.text)
            try:
                return fn(request, context)
            except (RpcError, NotImplementedError) as exc:
                failed(exc, context)
        return unary_unary
    if m.kind == "unary_stream":
        def unary_stream(request: Any, context: Any) -> Any:
            if request.__class__ is bad:
                context.abort(_INVALID, request.text)
            try:
                yield from fn(request, context)
            except (RpcError, NotImplementedError) as exc:
                failed(exc, context)
        return unary_stream
    if m.kind == "stream_unary":
        def stream_unary(request_iterator: Any, context: Any) -> Any:
            try:
                return fn(requests(request_iterator, context), context)
            except (RpcError, NotImplementedError) as exc:
                failed(exc, context)
        return stream_unary

    def stream_stream(request_iterator: Any, context: Any) -> Any:
        try:
            yield from fn(requests(request_iterator, context), context)
        except (RpcError, NotImplementedError) as exc:
            failed(exc, context)
    return stream_stream


# ------------------------------------------------------------------ asyncio handlers

def _async_handler(m: Method, fn: Callable[..., Any]) -> Callable[..., Any]:
    bad = _BadRequest
    writer = m.server_streaming and inspect.iscoroutinefunction(fn)  # grpc.aio's API: await context.write(reply)
    if m.server_streaming and not writer and not inspect.isasyncgenfunction(fn):
        raise TypeError(f"{m.path[1:]} streams its responses: on a grpc.aio server its handler must be an async "
                        f"generator (async def ... yield) or a coroutine function that calls "
                        f"await context.write(reply), not {fn!r}")
    if not m.server_streaming and not inspect.iscoroutinefunction(fn):
        raise TypeError(f"{m.path[1:]}: on a grpc.aio server the handler must be a coroutine function "
                        f"(async def), not {fn!r}")

    async def failed(exc: BaseException, context: Any) -> None:
        if isinstance(exc, RpcError):
            status = to_grpc_status(exc)
            await context.abort(status.code, status.details, status.trailing_metadata)
        await context.abort(_UNIMPLEMENTED, str(exc) or _unimplemented_text(m))

    async def requests(it: Any, context: Any) -> Any:
        async for r in it:
            if r.__class__ is bad:
                await context.abort(_INVALID, r.text)
            yield r

    if m.kind == "unary_unary":
        async def unary_unary(request: Any, context: Any) -> Any:
            if request.__class__ is bad:
                await context.abort(_INVALID, request.text)
            try:
                return await fn(request, context)
            except (RpcError, NotImplementedError) as exc:
                await failed(exc, context)
        return unary_unary
    if m.kind == "unary_stream" and writer:
        async def unary_stream_writer(request: Any, context: Any) -> None:
            if request.__class__ is bad:
                await context.abort(_INVALID, request.text)
            try:
                await fn(request, context)
            except (RpcError, NotImplementedError) as exc:
                await failed(exc, context)
        return unary_stream_writer
    if m.kind == "unary_stream":
        async def unary_stream(request: Any, context: Any) -> Any:
            if request.__class__ is bad:
                await context.abort(_INVALID, request.text)
            try:
                async for r in fn(request, context):
                    yield r
            except (RpcError, NotImplementedError) as exc:
                await failed(exc, context)
        return unary_stream
    if m.kind == "stream_unary":
        async def stream_unary(request_iterator: Any, context: Any) -> Any:
            try:
                return await fn(requests(request_iterator, context), context)
            except (RpcError, NotImplementedError) as exc:
                await failed(exc, context)
        return stream_unary

    if writer:
        async def stream_stream_writer(request_iterator: Any, context: Any) -> None:
            try:
                await fn(requests(request_iterator, context), context)
            except (RpcError, NotImplementedError) as exc:
                await failed(exc, context)
        return stream_stream_writer

    async def stream_stream(request_iterator: Any, context: Any) -> Any:
        try:
            async for r in fn(requests(request_iterator, context), context):
                yield r
        except (RpcError, NotImplementedError) as exc:
            await failed(exc, context)
    return stream_stream


def _unimplemented(m: Method, asyncio: bool) -> Callable[..., Any]:
    text = _unimplemented_text(m)
    if asyncio:
        async def unimplemented_async(request: Any, context: Any) -> Any:
            await context.abort(_UNIMPLEMENTED, text)
        return unimplemented_async

    def unimplemented(request: Any, context: Any) -> Any:
        context.abort(_UNIMPLEMENTED, text)
    return unimplemented


_MAKERS = {"unary_unary": grpc.unary_unary_rpc_method_handler, "unary_stream": grpc.unary_stream_rpc_method_handler,
           "stream_unary": grpc.stream_unary_rpc_method_handler,
           "stream_stream": grpc.stream_stream_rpc_method_handler}


def method_handlers(service: Service, implementation: Any, *, asyncio: bool = False) -> dict[str, Any]:
    """grpcio ``RpcMethodHandler``s of every method of ``service``, by method name.

    Args:
        service: the :class:`pbj.Service`.
        implementation: an object with a method per RPC method (a :class:`Servicer`),
            or a mapping of method name to function; a method it lacks answers ``UNIMPLEMENTED``.
        asyncio: build handlers for a ``grpc.aio`` server (the functions are coroutine
            functions and async generators).

    Returns:
        ``{method name: grpc.RpcMethodHandler}``, for ``grpc.method_handlers_generic_handler``.

    Raises:
        KeyError: a mapping names a method the service does not have.
        TypeError: ``service`` is not a :class:`pbj.Service`; with ``asyncio``, a function is
            not ``async``; without it, a function is.
    """
    if not isinstance(service, Service):
        raise TypeError(f"add_to_server needs a pbj.Service (ns.service(name)), not {type(service).__name__}")
    out: dict[str, Any] = {}
    for m, fn in implementations(service, implementation):
        behaviour = (_unimplemented(m, asyncio) if fn is None
                     else _async_handler(m, fn) if asyncio else _sync_handler(m, fn))
        out[m.name] = _MAKERS[m.kind](behaviour, request_deserializer=_deserializer(m.input),
                                      response_serializer=encoder(m.output))
    return out


def add_to_server(server: Any, service: Service, implementation: Any) -> None:
    """Serve ``service`` on a grpcio server with ``implementation`` (see the module docstring).

    Call it before ``server.start()``.

    Args:
        server: a ``grpc.Server`` (``grpc.server(futures.ThreadPoolExecutor())``) or a
            ``grpc.aio.Server`` (``grpc.aio.server()``: then the functions must be ``async``).
        service: the :class:`pbj.Service`.
        implementation: a :class:`Servicer` instance (or any object with the methods),
            or a mapping of method name to function.

    Raises:
        KeyError: a mapping names a method the service does not have.
        TypeError: ``server`` is not a grpcio server, ``service`` is not a :class:`pbj.Service`, an aio server gets a
            function that is not ``async``, or a ``grpc.Server`` gets one that is.
    """
    if isinstance(server, grpc.aio.Server):
        asyncio = True
    elif isinstance(server, grpc.Server):
        asyncio = False
    else:
        raise TypeError(f"add_to_server needs a grpc.Server or grpc.aio.Server, not {type(server).__name__}")
    handlers = method_handlers(service, implementation, asyncio=asyncio)
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(service.full_name, handlers),))
    register = getattr(server, "add_registered_method_handlers", None)
    if register is not None:
        register(service.full_name, handlers)


class Servicer(ServicerBase):
    """Base class of a service's implementation: ``class Greeter(pbj.grpc.Servicer, service=svc)``.

    Define a method per RPC method, named as in the schema, taking
    ``(self, request, context)``; the ones left out answer ``UNIMPLEMENTED``.
    ``Greeter().add_to_server(server)`` serves it (on a ``grpc.aio`` server the
    methods are ``async def``). A subclass of a subclass keeps its service.

    Raises:
        TypeError: at class creation, ``service`` is not a :class:`pbj.Service`, no
            service is given, or a public method defined in the class is not one of the
            service's but is spelt like one in another case or with underscores, or nearly
            (a typo: ``say_hello`` for ``SayHello``, ``Unry`` for ``Unary``); other
            helper methods are left alone.
    """

    _pbj_base = "pbj.grpc.Servicer"
    _pbj_own = frozenset({"add_to_server"})

    def add_to_server(self, server: Any) -> None:
        """Serve this implementation on ``server`` (``grpc.Server`` or ``grpc.aio.Server``): :func:`add_to_server`."""
        add_to_server(server, self.pbj_service, self)
