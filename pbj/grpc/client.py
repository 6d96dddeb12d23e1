"""Clients: a :class:`Stub` whose methods are grpcio's own multi-callables, fed by pbj's codec.

Each method of the stub is what ``channel.unary_unary(path, request_serializer=…,
response_deserializer=…)`` (or ``unary_stream``, ``stream_unary``,
``stream_stream``) returns, with the method's input encoder as the serializer
and its output decoder as the deserializer (:func:`pbj.encode` and
:func:`pbj.decode` with their look-ups done once). On a ``grpc.Channel`` no
wrapper of ours runs on a call. So everything grpcio offers passes through under its own
names: ``timeout`` (seconds), ``metadata`` (``(key, value)`` pairs),
``credentials`` (``grpc.CallCredentials``), ``wait_for_ready``,
``compression`` (``grpc.Compression``), ``.with_call(...)`` and
``.future(...)`` on a ``grpc.Channel``, and the call objects of a
``grpc.aio.Channel`` (``await stub.SayHello(req)``, ``async for`` over a
stream, ``call.initial_metadata()``, ``call.cancel()`` …).

A request of another message type than the method's input fails the call, sync and aio alike,
with ``grpc.StatusCode.INTERNAL`` and "Exception serializing request!": on a ``grpc.Channel``
the serializer refuses it (grpcio fails the call and logs the serializer's ``TypeError``). On a
``grpc.aio.Channel`` grpcio would log the serializer's error and send an *empty* message
instead, so there the stub checks the request first: a unary request, and each
``call.write(request)``, raise ``grpc.aio.AioRpcError`` (its ``debug_error_string()`` is the
``TypeError``'s text, the ``TypeError`` its ``__cause__``) before anything is sent; a wrong
message from a request iterator cancels the call (grpcio's answer to an iterator that raises),
with the ``TypeError`` logged on the ``pbj.grpc`` logger. Google's generated stubs check
nothing: they send the other message's bytes, read as the method's type by the server.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable
from typing import Any

from pbj.grpc._codec import decoder, encoder, type_check
from pbj.grpc._common import MethodLookup
from pbj.grpc._require import grpc
from pbj.loader.services import Method, Service

_LOGGER = logging.getLogger("pbj.grpc")

__all__ = ["Stub", "stub"]


class Stub(MethodLookup):
    """A client of one service on one channel.

    ``Stub(channel, service).SayHello(request, timeout=2.0)`` calls
    ``/pkg.Greeter/SayHello``. The methods are attributes named as in the
    schema (also ``stub["SayHello"]``).

    Args:
        channel: a ``grpc.Channel`` (``grpc.insecure_channel``,
            ``grpc.secure_channel``) or a ``grpc.aio.Channel``.
        service: the :class:`pbj.Service` (from ``ns.service(name)`` or :func:`pbj.service`).

    Raises:
        TypeError: ``service`` is not a :class:`pbj.Service`.

    A method called with a request of another message type fails the call with ``INTERNAL``,
    "Exception serializing request!" (``grpc.RpcError`` on a ``grpc.Channel``,
    ``grpc.aio.AioRpcError`` before anything is sent on a ``grpc.aio.Channel``; see the module).
    """

    _pbj_label = "pbj.grpc.Stub"

    def __init__(self, channel: Any, service: Service) -> None:
        if not isinstance(service, Service):
            raise TypeError(f"Stub needs a pbj.Service, not {type(service).__name__}")
        self._pbj_service = service
        self._pbj_channel = channel
        aio = isinstance(channel, grpc.aio.Channel)
        for m in service:
            make = getattr(channel, m.kind)
            extra = {"_registered_method": True} if _registers(make) else {}
            callable_ = make(m.path, request_serializer=encoder(m.input), response_deserializer=decoder(m.output),
                             **extra)
            if aio:
                callable_ = (_AioStreamRequest if m.client_streaming else _AioUnaryRequest)(callable_, m)
            self.__dict__[m.name] = callable_


def stub(channel: Any, service: Service) -> Stub:
    """``Stub(channel, service)``: a client of ``service`` on ``channel`` (see :class:`Stub`)."""
    return Stub(channel, service)


def _registers(make: Callable[..., Any]) -> bool:
    """Whether a channel's ``unary_unary`` (…) takes ``_registered_method``: grpcio's generated stubs
    pass ``_registered_method=True`` (the method is registered with the core once, not looked up
    per call), a keyword of grpcio's own that a release may drop; a channel without it (another
    release, a wrapper channel) is given only the public arguments."""
    try:
        return "_registered_method" in inspect.signature(make).parameters
    except (TypeError, ValueError):  # no signature to read (a builtin): the public arguments only
        return False


def _refused(m: Method, exc: TypeError) -> grpc.aio.AioRpcError:
    """The error of an aio call given a request of another type: what a sync call fails with."""
    return grpc.aio.AioRpcError(grpc.StatusCode.INTERNAL, details="Exception serializing request!",
                                debug_error_string=f"{m.path}: {exc}")


class _AioMethod:
    """A method of a stub on a ``grpc.aio.Channel``: grpcio's multi-callable, with the type of each
    request checked before grpcio sees it (grpcio's aio call sends an empty message for a request
    its serializer refuses). Everything else is the multi-callable's."""

    __slots__ = ("_check", "_method", "_multi_callable")

    def __init__(self, multi_callable: Any, method: Method) -> None:
        self._multi_callable = multi_callable
        self._method = method
        self._check = type_check(method.input)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._multi_callable, name)


class _AioUnaryRequest(_AioMethod):
    """An aio method taking one request.

    Raises (when called):
        grpc.aio.AioRpcError: ``INTERNAL``, "Exception serializing request!": a request of another type.
    """

    __slots__ = ()

    def __call__(self, request: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            self._check(request)
        except TypeError as exc:
            raise _refused(self._method, exc) from exc
        return self._multi_callable(request, *args, **kwargs)


class _AioStreamRequest(_AioMethod):
    """An aio method taking a stream of requests (``call.write(request)`` of another type raises
    ``AioRpcError`` and cancels the call; a request iterator's message of another type cancels it,
    with the ``TypeError`` logged)."""

    __slots__ = ()

    def __call__(self, request_iterator: Any = None, *args: Any, **kwargs: Any) -> Any:
        if request_iterator is not None:
            request_iterator = _checked_requests(request_iterator, self._check, self._method)
        call = self._multi_callable(request_iterator, *args, **kwargs)
        write, check, method = call.write, self._check, self._method

        async def checked_write(request: Any) -> None:
            try:
                check(request)
            except TypeError as exc:
                call.cancel()
                raise _refused(method, exc) from exc
            await write(request)
        call.write = checked_write
        return call


def _checked_requests(requests: Any, check: Callable[[Any], None], m: Method) -> Any:
    """``requests`` (an iterable or an async iterable), each message's type checked as it is taken."""

    def checked(request: Any) -> Any:
        try:
            check(request)
        except TypeError as exc:
            _LOGGER.error("%s: a request iterator gave a message of another type; the call is cancelled: %s",
                          m.path, exc)
            raise
        return request

    if hasattr(requests, "__aiter__"):
        async def each_async() -> Any:
            async for request in requests:
                yield checked(request)
        return each_async()
    return map(checked, requests)
