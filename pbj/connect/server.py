"""Servers: ASGI and WSGI applications that serve pbj services over Connect, gRPC and gRPC-Web.

:class:`ASGIApplication` and :class:`WSGIApplication` are connectrpc's
``ConnectASGIApplication`` and ``ConnectWSGIApplication`` (the protocols, content types,
compression, deadlines and read limits are connectrpc's), with endpoints built from
:class:`pbj.Service` objects and pbj's codecs (:mod:`pbj.connect.codec`). One application
serves any number of services, and optionally gRPC server reflection
(:mod:`pbj.connect.reflection`) and the health service (:mod:`pbj.connect.health`) beside them.

Each implementation has the shape of a :mod:`pbj.grpc` servicer: a :class:`Servicer` subclass
(or any object with methods named as the service's, a ``pbj.grpc.Servicer`` included), or a
mapping of method name to function. Each method takes ``(request, context)``: the request
message (or an iterator of them when the client streams) and connectrpc's ``RequestContext``
(``request_headers``, ``response_headers``, ``response_trailers``, ``timeout_ms``,
``method``); it returns the response message (or yields them when the server streams).
Under ASGI the methods are coroutines (``async def``) and async generators, and a streamed
request is an async iterator; under WSGI they are plain functions and generators.

Status codes (connectrpc.com "Connect Protocol", "Error codes"; grpc.io "Status codes and
their use in gRPC"):

* a method the implementation lacks answers ``unimplemented``, and so does a handler raising
  ``NotImplementedError``;
* :class:`pbj.connect.RpcError` (or connectrpc's ``ConnectError``, or a ``pbj.grpc.RpcError``
  from a handler shared with grpcio) ends the call with its code, message, details and
  trailing metadata;
* a request that is not a valid encoding of the input message answers ``invalid_argument``
  with the :class:`pbj.DecodeError`'s text (field path and byte offset) and never reaches the
  handler; the server keeps serving;
* a response of another message type than the method's output raises ``TypeError`` (the
  server logs it; the client gets ``unknown``); any other exception is connectrpc's to answer
  (``unknown``).
"""

from __future__ import annotations

import base64
import contextlib
import inspect
import logging
from collections.abc import Callable, Iterable
from typing import Any

from pbj.connect._require import (
    DEFAULT_READ_MAX_BYTES,
    ConnectASGIApplication,
    ConnectWSGIApplication,
    Endpoint,
    EndpointSync,
    IdempotencyLevel,
    MethodInfo,
    StreamType,
)
from pbj.connect.codec import default_codecs
from pbj.connect.errors import RpcError, from_grpc_error
from pbj.errors import PbjError
from pbj.grpc._common import ServicerBase, implementations
from pbj.loader.services import Method, Service
from pbj.schema import info, is_message

__all__ = ["Servicer", "ASGIApplication", "WSGIApplication", "GrpcContext", "method_info", "endpoints"]

_LOGGER = logging.getLogger("pbj.connect")

_STREAM_TYPES = {"unary_unary": StreamType.UNARY, "unary_stream": StreamType.SERVER_STREAM,
                 "stream_unary": StreamType.CLIENT_STREAM, "stream_stream": StreamType.BIDI_STREAM}


def method_info(m: Method) -> Any:
    """connectrpc's ``MethodInfo`` of a :class:`pbj.Method` (its idempotency level from the method's options)."""
    level = getattr(getattr(m.options, "idempotency_level", None), "name", "")
    return MethodInfo(name=m.name, service_name=m.service_name, input=m.input, output=m.output,
                      idempotency_level=getattr(IdempotencyLevel, level, IdempotencyLevel.UNKNOWN),
                      stream_type=_STREAM_TYPES[m.kind])


def _unimplemented_text(m: Method) -> str:
    return f"method {m.path[1:]} is not implemented"


def _translated(exc: BaseException, ctx: Any, m: Method) -> BaseException:
    """What a handler's exception becomes: the status an error of pbj's stands for, else itself."""
    error = exc if isinstance(exc, RpcError) else from_grpc_error(exc)
    if error is None and isinstance(exc, NotImplementedError):
        error = RpcError("unimplemented", str(exc) or _unimplemented_text(m))
    if error is None:
        return exc
    for key, value in error.metadata:
        ctx.response_trailers.add(key, _trailer_value(value))
    return error


def _check_reply(reply: Any, m: Method) -> Any:
    """``reply``, when it is a message of the method's output type (another class of the same full name too)."""
    if is_message(type(reply)) and info(type(reply)).full_name == info(m.output).full_name:
        return reply
    what = f"a {info(type(reply)).full_name} message" if is_message(type(reply)) else type(reply).__qualname__
    raise TypeError(f"the handler of {m.path[1:]} returned {what}, not a {info(m.output).full_name} message")


_CAUGHT = (NotImplementedError, PbjError)


def _trailer_value(value: str | bytes) -> str:
    return base64.b64encode(value).decode() if isinstance(value, bytes) else value


class GrpcContext:
    """The context a ``pbj.grpc.Servicer``'s handler gets under pbj.connect: connectrpc's ``RequestContext``
    (every attribute of it) with the calls of grpcio's ``ServicerContext`` a handler shared with grpcio makes.

    * ``abort(code, details)``: raises :class:`RpcError` (the status sent as the call's protocol says);
    * ``set_trailing_metadata(pairs)``, ``send_initial_metadata(pairs)``: added to the response's
      trailers and headers (a ``bytes`` value in base64, as gRPC's binary metadata);
    * ``invocation_metadata()``: the request headers as ``(key, value)`` pairs;
    * ``time_remaining()``: seconds left before the deadline, or ``None``.
    """

    __slots__ = ("_ctx",)

    def __init__(self, ctx: Any) -> None:
        self._ctx = ctx

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ctx, name)

    def abort(self, code: Any, details: str = "") -> Any:
        """End the call with ``code`` (a ``grpc.StatusCode``, or any form :func:`code_of` takes) and message.

        Raises:
            RpcError: always.
        """
        raise RpcError(code, details)

    def set_trailing_metadata(self, metadata: Iterable[tuple[str, str | bytes]]) -> None:
        """Add ``(key, value)`` pairs to the response's trailers."""
        for key, value in metadata:
            self._ctx.response_trailers.add(key, _trailer_value(value))

    def send_initial_metadata(self, metadata: Iterable[tuple[str, str | bytes]]) -> None:
        """Add ``(key, value)`` pairs to the response's headers (before the first response is written)."""
        for key, value in metadata:
            self._ctx.response_headers.add(key, _trailer_value(value))

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        """The request's headers, ``(key, value)`` pairs."""
        return tuple(self._ctx.request_headers.allitems())

    def time_remaining(self) -> float | None:
        """Seconds left before the call's deadline, or ``None`` without one."""
        left = self._ctx.timeout_ms  # a property: what is left now
        return None if left is None else max(0.0, left / 1000)


# ------------------------------------------------------------------ asyncio (ASGI)

def _async_function(m: Method, fn: Callable[..., Any], adapt: Any) -> Callable[..., Any]:
    out = m.output
    if m.server_streaming and not inspect.isasyncgenfunction(fn):
        raise TypeError(f"{m.path[1:]} streams its responses: under ASGI its handler must be an async generator "
                        f"(async def ... yield), not {fn!r}")
    if not m.server_streaming and not inspect.iscoroutinefunction(fn):
        raise TypeError(f"{m.path[1:]}: under ASGI the handler must be a coroutine function (async def), "
                        f"not {fn!r}")
    if not m.server_streaming:
        async def unary_reply(request: Any, ctx: Any) -> Any:
            try:
                reply = await fn(request, ctx if adapt is None else adapt(ctx))
            except _CAUGHT as exc:
                raise _translated(exc, ctx, m) from None
            return reply if reply.__class__ is out else _check_reply(reply, m)
        return unary_reply

    async def streamed_replies(request: Any, ctx: Any) -> Any:
        try:
            async with contextlib.aclosing(fn(request, ctx if adapt is None else adapt(ctx))) as replies:
                async for reply in replies:
                    yield reply if reply.__class__ is out else _check_reply(reply, m)
        except _CAUGHT as exc:
            raise _translated(exc, ctx, m) from None
    return streamed_replies


def _async_unimplemented(m: Method) -> Callable[..., Any]:
    text = _unimplemented_text(m)
    if m.server_streaming:
        async def unimplemented_stream(request: Any, ctx: Any) -> Any:
            raise RpcError("unimplemented", text)
            yield  # an async generator, as connectrpc iterates it
        return unimplemented_stream

    async def unimplemented(request: Any, ctx: Any) -> Any:
        raise RpcError("unimplemented", text)
    return unimplemented


# ------------------------------------------------------------------ threads (WSGI)

def _sync_function(m: Method, fn: Callable[..., Any], adapt: Any) -> Callable[..., Any]:
    out = m.output
    if inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn):
        raise TypeError(f"{m.path[1:]}: {fn!r} is async: serve it with pbj.connect.ASGIApplication; a WSGI "
                        f"application runs plain functions (its coroutine would never be awaited)")
    if not m.server_streaming:
        def unary_reply(request: Any, ctx: Any) -> Any:
            try:
                reply = fn(request, ctx if adapt is None else adapt(ctx))
            except _CAUGHT as exc:
                raise _translated(exc, ctx, m) from None
            return reply if reply.__class__ is out else _check_reply(reply, m)
        return unary_reply

    def streamed_replies(request: Any, ctx: Any) -> Any:
        try:
            with contextlib.closing(iter(fn(request, ctx if adapt is None else adapt(ctx)))) as replies:  # type: ignore[type-var]
                for reply in replies:
                    yield reply if reply.__class__ is out else _check_reply(reply, m)
        except _CAUGHT as exc:
            raise _translated(exc, ctx, m) from None
    return streamed_replies


def _sync_unimplemented(m: Method) -> Callable[..., Any]:
    text = _unimplemented_text(m)

    def unimplemented(request: Any, ctx: Any) -> Any:
        raise RpcError("unimplemented", text)
    return unimplemented


# ------------------------------------------------------------------ endpoints


_ASYNC_MAKERS: dict[str, Callable[..., Any]] = {
    "unary_unary": Endpoint.unary, "unary_stream": Endpoint.server_stream,
    "stream_unary": Endpoint.client_stream, "stream_stream": Endpoint.bidi_stream}
_SYNC_MAKERS: dict[str, Callable[..., Any]] = {
    "unary_unary": EndpointSync.unary, "unary_stream": EndpointSync.server_stream,
    "stream_unary": EndpointSync.client_stream, "stream_stream": EndpointSync.bidi_stream}


def endpoints(service: Service, implementation: Any, *, asyncio: bool) -> dict[str, Any]:
    """connectrpc endpoints of every method of ``service``, by URL path (``"/pkg.Greeter/SayHello"``).

    Args:
        service: the :class:`pbj.Service`.
        implementation: an object with a method per RPC method (a :class:`Servicer`), or a
            mapping of method name to function; a method it lacks answers ``unimplemented``.
        asyncio: ``Endpoint``\\ s for an ASGI application (the functions are coroutine
            functions and async generators), else ``EndpointSync``\\ s for a WSGI one.

    Raises:
        KeyError: a mapping names a method the service does not have.
        TypeError: ``service`` is not a :class:`pbj.Service`; with ``asyncio`` a function is
            not ``async``; without it, a function is.
    """
    if not isinstance(service, Service):
        raise TypeError(f"pbj.connect serves a pbj.Service (ns.service(name) or pbj.service(...)), "
                        f"not {type(service).__name__}")
    out: dict[str, Any] = {}
    # a pbj.grpc.Servicer's handlers, shared with grpcio, call grpcio's ServicerContext methods
    adapt = GrpcContext if getattr(type(implementation), "_pbj_base", None) == "pbj.grpc.Servicer" else None
    for m, fn in implementations(service, implementation):
        if asyncio:
            function = _async_unimplemented(m) if fn is None else _async_function(m, fn, adapt)
            out[m.path] = _ASYNC_MAKERS[m.kind](method_info(m), function)
        else:
            function = _sync_unimplemented(m) if fn is None else _sync_function(m, fn, adapt)
            out[m.path] = _SYNC_MAKERS[m.kind](method=method_info(m), function=function)  # keywords only
    return out


def _pairs(implementations: Iterable[Any]) -> list[tuple[Service, Any]]:
    out = []
    for item in implementations:
        if isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], Service):
            out.append(item)
            continue
        service = getattr(item, "pbj_service", None)
        if not isinstance(service, Service):
            raise TypeError(f"serve a Servicer instance (class Greeter(pbj.connect.Servicer, service=...)) or a "
                            f"(pbj.Service, implementation) pair, not {type(item).__name__}")
        out.append((service, item))
    return out


def _all_endpoints(implementations: Iterable[Any], reflection: Any, health: Any, *, asyncio: bool) -> dict[str, Any]:
    pairs = _pairs(implementations)
    out: dict[str, Any] = {}
    for service, implementation in pairs:
        for path, endpoint in endpoints(service, implementation, asyncio=asyncio).items():
            if path in out:
                raise ValueError(f"{path[1:]} is served twice")
            out[path] = endpoint
    extra_schemas: list[Any] = []
    if health is not None:
        from pbj.connect.health import SCHEMA
        out.update(health.endpoints(asyncio=asyncio))
        extra_schemas.append(SCHEMA)
    if reflection is not None and reflection is not False:
        from pbj.connect.reflection import reflection_endpoints
        schemas = [s for s, _ in pairs] if reflection is True else list(reflection)
        out.update(reflection_endpoints(*schemas, *extra_schemas, asyncio=asyncio))
    return out


#: What a server that cannot send trailers answers a gRPC request with: HTTP 415 and the content types it takes
#: (gRPC over HTTP/2, "Requests": a server answers an unsupported content type with 415).
_NO_GRPC_HEADERS = [("accept-post", "application/proto, application/json, application/connect+proto, "
                                    "application/connect+json, application/grpc-web+proto, application/grpc-web+json")]


def _is_grpc(content_type: str) -> bool:
    """Whether a content type is gRPC's (``application/grpc``, ``application/grpc+proto`` ...), not gRPC-Web's."""
    ct = content_type.partition(";")[0].strip().lower()
    return ct == "application/grpc" or ct.startswith("application/grpc+")


class ASGIApplication(ConnectASGIApplication):  # type: ignore[misc]
    """An ASGI application serving pbj services over Connect, gRPC and gRPC-Web (connectrpc's).

    ``uvicorn.run(ASGIApplication(Greeter()))``, or mounted in Starlette/FastAPI
    (``app.mount("/", ...)``; connectrpc finds the method below a mount's ``root_path``).
    gRPC needs an HTTP/2 server with ASGI's trailers extension (hypercorn); Connect and
    gRPC-Web work over HTTP/1.1 too (uvicorn), bidirectional streams only over HTTP/2.

    Args:
        implementations: :class:`Servicer` instances (``async def`` methods), or
            ``(service, implementation)`` pairs (an object with the methods, or a mapping of
            method name to function).
        reflection: serve gRPC server reflection (v1 and v1alpha): ``True`` describes the
            services served (their descriptors written from their classes), or give the
            schemas to serve as :func:`pbj.grpc.reflection.add_reflection` takes them
            (``[ns]`` serves a loaded schema's own files); ``None``: no reflection.
        health: a :class:`pbj.connect.health.Health` to serve ``grpc.health.v1.Health`` with.
        interceptors: connectrpc interceptors (``connectrpc.interceptor``).
        read_max_bytes: the largest request message accepted, in bytes (after
            decompression; ``None``: no limit); a larger one answers ``resource_exhausted``.
        compressions: connectrpc ``Compression``\\ s accepted and offered (default: gzip;
            ``()``: none).
        codecs: the codecs served (default: :func:`pbj.connect.codec.default_codecs`, binary
            and ProtoJSON).

    Attributes:
        endpoint_paths: the URL paths served (``"/pkg.Service/Method"``), in order.

    Raises:
        TypeError: an implementation is none of the above, or a handler is not ``async``.
        ValueError: a method is served twice.
        KeyError: a mapping names a method its service does not have.
    """

    def __init__(self, *implementations: Any, reflection: Any = None, health: Any = None,
                 interceptors: Iterable[Any] = (), read_max_bytes: int | None = DEFAULT_READ_MAX_BYTES,
                 compressions: Iterable[Any] | None = None, codecs: Iterable[Any] | None = None) -> None:
        served = _all_endpoints(implementations, reflection, health, asyncio=True)
        self.endpoint_paths = tuple(served)
        # connectrpc resolves the endpoints from its "service" when it starts: here, a copy of the mapping
        super().__init__(service=served, endpoints=dict, interceptors=interceptors, read_max_bytes=read_max_bytes,
                         compressions=compressions, codecs=default_codecs() if codecs is None else codecs)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        """Answer one ASGI event (connectrpc's), except a gRPC request on a server without ASGI's trailers
        extension (uvicorn): HTTP 415, where connectrpc would raise to the server.

        A handler's exception (other than the statuses above) is answered ``unknown`` by
        connectrpc, which then raises it to the server for its log; a server that sees an
        exception after the response has started closes the connection (uvicorn does), and the
        next call a client sends on that kept-alive connection fails (``unavailable``, a reset
        connection). Here an ``Exception`` that leaves connectrpc is logged instead (logger
        ``pbj.connect``, level ERROR, with its traceback), as connectrpc's WSGI application
        writes it to ``wsgi.errors``, and the server ends the exchange as it ends one whose
        application returned: after a complete response the connection stays open; a response
        not started or not complete (the connection lost while it was sent) is the server's
        to end (uvicorn: HTTP 500, or the connection closed). ``BaseException``\\ s that are not
        ``Exception``\\ s (a cancellation, ``KeyboardInterrupt``) reach the server.
        """
        if scope.get("type") == "http" and "http.response.trailers" not in scope.get("extensions", {}):
            content_type = next((v for k, v in scope.get("headers", ()) if k.lower() == b"content-type"), b"")
            if _is_grpc(content_type.decode("latin-1")):
                await send({"type": "http.response.start", "status": 415,
                            "headers": [(k.encode(), v.encode()) for k, v in _NO_GRPC_HEADERS]})
                await send({"type": "http.response.body", "body": b""})
                return
        try:
            await super().__call__(scope, receive, send)
        except Exception as exc:
            _LOGGER.error("exception serving %s (answered 'unknown' unless the connection was lost)",
                          scope.get("path", "?"), exc_info=exc)

    @property
    def path(self) -> str:
        """``"/"``: the application answers its methods' paths (``/pkg.Service/Method``) itself."""
        return "/"


class WSGIApplication(ConnectWSGIApplication):  # type: ignore[misc]
    """A WSGI application serving pbj services over Connect and gRPC-Web (connectrpc's).

    Served by any WSGI server (gunicorn, waitress, ``wsgiref``), or beside a Flask or Django
    app. gRPC needs a server with the ``wsgi.ext.http.send_trailers`` extension; streams are
    half-duplex (the request is read whole before the responses are sent).

    Args:
        implementations: as :class:`ASGIApplication`, with plain functions and generators.
        reflection, health, interceptors, read_max_bytes, compressions, codecs: as
            :class:`ASGIApplication` (``interceptors`` are connectrpc's sync ones).

    Raises:
        TypeError, ValueError, KeyError: as :class:`ASGIApplication` (a handler that is
            ``async`` is the ``TypeError``).
    """

    def __init__(self, *implementations: Any, reflection: Any = None, health: Any = None,
                 interceptors: Iterable[Any] = (), read_max_bytes: int | None = DEFAULT_READ_MAX_BYTES,
                 compressions: Iterable[Any] | None = None, codecs: Iterable[Any] | None = None) -> None:
        served = _all_endpoints(implementations, reflection, health, asyncio=False)
        self.endpoint_paths = tuple(served)
        super().__init__(endpoints=served, interceptors=interceptors, read_max_bytes=read_max_bytes,
                         compressions=compressions, codecs=default_codecs() if codecs is None else codecs)

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        """Answer one request (PEP 3333).

        An HTTP/1.x request with neither ``Content-Length`` nor ``Transfer-Encoding`` has an empty
        body (RFC 9112, "Message Body Length"); such a request is given ``CONTENT_LENGTH`` 0 first,
        so that its body is not read until the connection closes (``wsgiref`` hands the socket
        itself as ``wsgi.input``, and an empty protobuf message is an empty body). A gRPC request
        on a server without the ``wsgi.ext.http.send_trailers`` extension is answered HTTP 415.

        A chunked request body (``Transfer-Encoding: chunked``) is read only where the server
        decodes it and says so (``wsgi.input_terminated``, as gunicorn does); elsewhere
        (``wsgiref``, which hands over the raw socket) it is answered HTTP 411 Length Required at
        once (RFC 9110, "411 Length Required"), where reading it would wait for the connection
        to close.
        """
        if (environ.get("HTTP_TRANSFER_ENCODING") and not environ.get("wsgi.input_terminated")
                and "chunked" in environ["HTTP_TRANSFER_ENCODING"].lower()):
            start_response("411 Length Required", [("content-type", "text/plain")])
            return [b"this server cannot read a chunked request body: send it with a Content-Length"]
        if (not environ.get("CONTENT_LENGTH") and not environ.get("HTTP_TRANSFER_ENCODING")
                and not environ.get("wsgi.input_terminated")
                and str(environ.get("SERVER_PROTOCOL", "")).startswith("HTTP/1")):
            environ["CONTENT_LENGTH"] = "0"
        if _is_grpc(environ.get("CONTENT_TYPE", "")) and not environ.get("wsgi.ext.http.send_trailers"):
            # connectrpc would raise, log it and answer a gRPC status the client cannot read
            start_response("415 Unsupported Media Type", _NO_GRPC_HEADERS)
            return []
        return super().__call__(environ, start_response)

    @property
    def path(self) -> str:
        """``"/"``: the application answers its methods' paths (``/pkg.Service/Method``) itself."""
        return "/"


class Servicer(ServicerBase):
    """Base class of a service's implementation: ``class Greeter(pbj.connect.Servicer, service=svc)``.

    Define a method per RPC method, named as in the schema, taking ``(self, request,
    context)``; the ones left out answer ``unimplemented``. ``ASGIApplication(Greeter())``
    serves it (``async def`` methods), ``WSGIApplication(Greeter())`` too (plain methods).
    A subclass of a subclass keeps its service.

    Raises:
        TypeError: at class creation, ``service`` is not a :class:`pbj.Service`, no service is
            given, or a public method defined in the class is not one of the service's but is
            spelt like one in another case or with underscores, or nearly (a typo: ``say_hello``
            for ``SayHello``, ``Unry`` for ``Unary``); other helpers are left alone.
    """

    _pbj_base = "pbj.connect.Servicer"
