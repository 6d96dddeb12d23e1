"""Clients: :class:`ClientSync` and :class:`Client` (asyncio), one attribute per method of a pbj service.

Both are connectrpc's clients (``ConnectClientSync``, ``ConnectClient``: the protocol,
compression, deadlines and the HTTP client, pyqwest, are connectrpc's) with pbj's codec, so
each call encodes and decodes with pbj. ``client.SayHello(request, timeout=2.0)`` calls
``/pkg.Greeter/SayHello`` over Connect (the default), gRPC or gRPC-Web:

* unary: the response message; client-streaming: an iterable of requests (an async
  iterable too on :class:`Client`), one response; server-streaming and bidirectional: an
  iterator of responses (``for``, or ``async for`` on :class:`Client`);
* ``timeout``: the call's deadline in seconds, at most :data:`MAX_TIMEOUT` (sent as
  ``connect-timeout-ms`` or ``grpc-timeout``; past it the call fails with ``deadline_exceeded``); ``headers``: request
  metadata (a mapping or ``(key, value)`` pairs); ``use_get=True`` sends a unary call of a
  method with ``idempotency_level = NO_SIDE_EFFECTS`` as an HTTP GET (Connect only: with
  another protocol, or on a streaming method, it is a ``ValueError`` before anything is sent);
* a failed call raises connectrpc's ``ConnectError`` (``.code``, ``.message``,
  ``.details``: :func:`pbj.connect.unpack_details`); a call of :class:`Client` whose task is
  cancelled (``task.cancel()``, ``asyncio.timeout``) raises the ``asyncio.CancelledError``,
  not connectrpc's ``ConnectError(CANCELED)``; a request of another message type than
  the method's is a ``TypeError`` before anything is sent, and one the codec cannot encode
  (a proto2 ``required`` field unset, an ``Any`` of a type the JSON codec does not know) raises
  the codec's own error (:class:`pbj.EncodeError`, :class:`pbj.JSONError`), not ``unavailable``;
* response headers and trailers: ``with pbj.connect.ResponseMetadata() as meta:`` around the
  call, then ``meta.headers``, ``meta.trailers`` (connectrpc's).

gRPC over ``http://`` needs HTTP/2 without TLS ("prior knowledge"): for ``protocol="grpc"`` the
client makes its own HTTP/2 transport unless ``http_client`` is given. Bidirectional streams
are full duplex only over HTTP/2.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator, Mapping
from typing import Any

from pbj.connect._require import (
    ConnectClient,
    ConnectClientSync,
    ConnectError,
    HTTPClient,
    HTTPTransport,
    HTTPVersion,
    ProtocolType,
    SyncHTTPClient,
    SyncHTTPTransport,
)
from pbj.connect.codec import JSONCodec, ProtoCodec
from pbj.connect.server import method_info
from pbj.grpc._common import MethodLookup
from pbj.loader.services import Method, Service
from pbj.schema import info, is_message
from pbj.schema.resolve import message_needed

__all__ = ["ClientSync", "Client", "protocol_type"]

_PROTOCOLS = {"connect": ProtocolType.CONNECT, "grpc": ProtocolType.GRPC, "grpc-web": ProtocolType.GRPC_WEB,
              "grpc_web": ProtocolType.GRPC_WEB}


def protocol_type(protocol: Any) -> Any:
    """connectrpc's ``ProtocolType`` of ``"connect"``, ``"grpc"`` or ``"grpc-web"`` (or of itself).

    Raises:
        ValueError: another name.
    """
    if isinstance(protocol, ProtocolType):
        return protocol
    found = _PROTOCOLS.get(str(protocol).lower())
    if found is None:
        raise ValueError(f"protocol {protocol!r} is not 'connect', 'grpc' or 'grpc-web'")
    return found


def _codec(codec: Any) -> Any:
    if codec is None or codec == "proto":
        return ProtoCodec()
    if codec == "json":
        return JSONCodec()
    if isinstance(codec, str):
        raise ValueError(f"codec {codec!r} is not 'proto' or 'json' (or a connectrpc Codec)")
    return codec


class _RequestNotEncoded(Exception):
    """What :class:`_RequestCodec` raises when the codec cannot encode a request: connectrpc's client turns any
    exception in its sending code into ``unavailable``; this one carries the codec's own error back out."""

    def __init__(self, error: Exception) -> None:
        super().__init__(str(error))
        self.error = error


class _RequestCodec:
    """A client's codec: the given one, with its encode errors marked as the request's (see :func:`_unwrapped`)."""

    __slots__ = ("_encode", "decode", "name")

    def __init__(self, codec: Any) -> None:
        self._encode = codec.encode
        self.name = codec.name
        self.decode = codec.decode

    def encode(self, message: Any) -> bytes:
        try:
            return self._encode(message)  # type: ignore[no-any-return]
        except Exception as exc:
            raise _RequestNotEncoded(exc) from exc


def _codec_error(error: BaseException) -> BaseException | None:
    """The codec's error when ``error`` (connectrpc's) stands for a request the codec could not encode, else None."""
    cause = error.__cause__
    for _ in range(8):  # connectrpc's error, or a transport's around it: a short chain
        if cause is None:
            return None
        if isinstance(cause, _RequestNotEncoded):
            return cause.error
        cause = cause.__cause__ or cause.__context__
    return None


def _raise_codec_error(error: BaseException) -> None:
    """Raise the codec's error (:func:`_codec_error`) in place of ``error`` when there is one; else return."""
    found = _codec_error(error)
    if found is not None:
        raise found from None


def _called(execute: Any, **kwargs: Any) -> Any:
    try:
        return execute(**kwargs)
    except ConnectError as exc:
        _raise_codec_error(exc)
        raise


def _iterated(replies: Iterator[Any]) -> Iterator[Any]:
    try:
        yield from replies
    except ConnectError as exc:
        _raise_codec_error(exc)
        raise


def _raise_cancellation(error: BaseException) -> None:
    """Raise the task's cancellation when ``error`` (connectrpc's ``canceled``) stands for it; else return.

    connectrpc's asyncio client turns the ``CancelledError`` of a call whose task is cancelled into
    ``ConnectError(CANCELED)``; given back, ``task.cancel()``, ``asyncio.timeout`` and task groups
    work around a call as around any other await."""
    cause = error.__cause__
    if isinstance(cause, asyncio.CancelledError):
        raise cause from None


async def _awaited(reply: Any) -> Any:
    try:
        return await reply
    except ConnectError as exc:
        _raise_codec_error(exc)
        _raise_cancellation(exc)
        raise


async def _iterated_async(replies: AsyncIterator[Any]) -> AsyncIterator[Any]:
    try:
        async for reply in replies:
            yield reply
    except ConnectError as exc:
        _raise_codec_error(exc)
        _raise_cancellation(exc)
        raise


MAX_TIMEOUT = 9_999_999.999
"""The longest deadline a call can send, in seconds: Connect's ``connect-timeout-ms`` holds at most
10 digits (connectrpc.com/docs/protocol, "Unary-Request" and "Streaming-Request"), so 9,999,999,999 ms,
about 115 days. A longer one would overflow the HTTP client's clock (a Rust panic) or the header."""


def _timeout_ms(timeout: float | None) -> int | None:
    if timeout is None:
        return None
    if not 0 < timeout <= MAX_TIMEOUT:  # also refuses nan and the infinities
        raise ValueError(f"timeout must be a positive number of seconds up to {MAX_TIMEOUT:,} "
                         f"(Connect's connect-timeout-ms has at most 10 digits), not {timeout!r}")
    return max(1, math.ceil(timeout * 1000))


def _headers(headers: Any) -> Any:
    if headers is None or isinstance(headers, Mapping):
        return headers
    from pbj.connect._require import Headers
    return Headers(list(headers))


def _wrong_request(request: Any, m: Method) -> TypeError:
    if is_message(type(request)):
        return TypeError(f"{m.path[1:]} takes a {info(m.input).full_name} message, "
                         f"not a {info(type(request)).full_name} message")
    return message_needed(request, m.path[1:], f"a {info(m.input).full_name} message")


def _checked(request: Any, m: Method) -> Any:
    if request.__class__ is not m.input and not (
            is_message(type(request)) and info(type(request)).full_name == info(m.input).full_name):
        raise _wrong_request(request, m)
    return request


def _checked_each(requests: Iterable[Any], m: Method) -> Iterator[Any] | list[Any]:
    """The requests of a client stream, each checked: a list stays a list (connectrpc sends it as one body,
    with its length: HTTP/1.1 servers that cannot read a chunked body take it), others are read as sent."""
    if isinstance(requests, (list, tuple)):
        return [r if r.__class__ is m.input else _checked(r, m) for r in requests]
    return _checked_lazily(requests, m)


def _checked_lazily(requests: Iterable[Any], m: Method) -> Iterator[Any]:
    cls = m.input
    for r in requests:
        yield r if r.__class__ is cls else _checked(r, m)


def _checked_each_async(requests: AsyncIterable[Any] | Iterable[Any], m: Method) -> AsyncIterator[Any] | list[Any]:
    """The requests of a client stream, each checked: a list stays a list (as :func:`_checked_each`)."""
    if isinstance(requests, (list, tuple)):
        return [r if r.__class__ is m.input else _checked(r, m) for r in requests]
    return _checked_lazily_async(requests, m)


async def _checked_lazily_async(requests: AsyncIterable[Any] | Iterable[Any], m: Method) -> AsyncIterator[Any]:
    cls = m.input
    if isinstance(requests, AsyncIterable):
        async for r in requests:
            yield r if r.__class__ is cls else _checked(r, m)
    else:
        for r in requests:
            yield r if r.__class__ is cls else _checked(r, m)


class _Options:
    """What both clients take (see :class:`ClientSync`), checked once."""

    def __init__(self, address: str, service: Service, protocol: Any, codec: Any, timeout: float | None,
                 accept_compression: Any, send_compression: Any, read_max_bytes: int | None) -> None:
        if not isinstance(service, Service):
            raise TypeError(f"a pbj.connect client needs a pbj.Service, not {type(service).__name__}")
        if not isinstance(address, str) or not address.startswith(("http://", "https://")):
            raise ValueError(f"the address must be an http:// or https:// URL, not {address!r}")
        self.address = address.rstrip("/")
        self.protocol = protocol_type(protocol)
        self.kwargs = {"codec": _RequestCodec(_codec(codec)), "protocol": self.protocol,
                       "accept_compression": accept_compression, "send_compression": send_compression,
                       "timeout_ms": _timeout_ms(timeout),
                       "read_max_bytes": read_max_bytes}
        # gRPC over cleartext HTTP needs HTTP/2 from the first byte (pyqwest speaks HTTP/1.1 there otherwise)
        self.h2c = self.protocol is ProtocolType.GRPC and self.address.startswith("http://")


class _Method:
    """One method of a client: ``(request or requests, *, timeout=None, headers=None, use_get=False)``."""

    __slots__ = ("_asyncio", "_check_each", "_client", "_connect", "_info", "_m")

    def __init__(self, client: Any, m: Method, asyncio: bool, protocol: Any) -> None:
        self._client = client
        self._connect = protocol is ProtocolType.CONNECT
        self._m = m
        self._info = method_info(m)
        self._asyncio = asyncio
        self._check_each = _checked_each_async if asyncio else _checked_each

    def __call__(self, request: Any, *, timeout: float | None = None, headers: Any = None,
                 use_get: bool = False) -> Any:
        # a request the codec cannot encode raises the codec's error (pbj's EncodeError, JSONError), not
        # connectrpc's "unavailable": nothing was sent
        m, client, aio = self._m, self._client, self._asyncio
        timeout_ms, headers = _timeout_ms(timeout), _headers(headers)
        if use_get and (m.client_streaming or m.server_streaming or not self._connect):
            raise ValueError(f"{m.path[1:]}: use_get=True sends a unary call over the Connect protocol as an HTTP GET; "
                             f"this client's calls of this method are "
                             f"{'streams' if m.client_streaming or m.server_streaming else 'not Connect'}")
        if m.client_streaming:
            requests = self._check_each(request, m)
            if m.server_streaming:
                replies = client.execute_bidi_stream(request=requests, method=self._info, headers=headers,
                                                     timeout_ms=timeout_ms)
                return _iterated_async(replies) if aio else _iterated(replies)
            if aio:
                return _awaited(client.execute_client_stream(request=requests, method=self._info, headers=headers,
                                                             timeout_ms=timeout_ms))
            return _called(client.execute_client_stream, request=requests, method=self._info, headers=headers,
                           timeout_ms=timeout_ms)
        if request.__class__ is not m.input:
            _checked(request, m)
        if m.server_streaming:
            replies = client.execute_server_stream(request=request, method=self._info, headers=headers,
                                                   timeout_ms=timeout_ms)
            return _iterated_async(replies) if aio else _iterated(replies)
        if aio:
            return _awaited(client.execute_unary(request=request, method=self._info, headers=headers,
                                                 timeout_ms=timeout_ms, use_get=use_get))
        return _called(client.execute_unary, request=request, method=self._info, headers=headers,
                       timeout_ms=timeout_ms, use_get=use_get)

    def __repr__(self) -> str:
        return f"<pbj.connect method {self._m.path}>"


class _Client(MethodLookup):
    """What both clients share: the options checked, connectrpc's client made, a callable per method."""

    _asyncio = False

    def __init__(self, address: str, service: Service, *, protocol: Any = "connect", codec: Any = None,
                 timeout: float | None = None, accept_compression: Iterable[Any] | None = None,
                 send_compression: Any = None, read_max_bytes: int | None = None,
                 interceptors: Iterable[Any] = (), http_client: Any = None) -> None:
        options = _Options(address, service, protocol, codec, timeout, accept_compression, send_compression,
                           read_max_bytes)
        aio = self._asyncio
        self._pbj_service = service
        self._pbj_transport: Any = None
        if http_client is None and options.h2c:
            self._pbj_transport = (HTTPTransport if aio else SyncHTTPTransport)(http_version=HTTPVersion.HTTP2)
            http_client = (HTTPClient if aio else SyncHTTPClient)(self._pbj_transport)
        self._pbj_client: Any = (ConnectClient if aio else ConnectClientSync)(
            options.address, interceptors=interceptors, http_client=http_client, **options.kwargs)
        for m in service:
            self.__dict__[m.name] = _Method(self._pbj_client, m, aio, options.protocol)


class ClientSync(_Client):
    """A client of one service, blocking: ``ClientSync("http://127.0.0.1:8080", service).SayHello(req)``.

    Args:
        address: the server's base URL (``http://host:port``, or with a path prefix where the
            application is mounted below one).
        service: the :class:`pbj.Service` (``ns.service(name)`` or :func:`pbj.service`).
        protocol: ``"connect"`` (default), ``"grpc"`` or ``"grpc-web"``.
        codec: ``"proto"`` (default), ``"json"``, or a connectrpc ``Codec``
            (:class:`pbj.connect.codec.JSONCodec` with options).
        timeout: the default deadline of every call, in seconds, up to :data:`MAX_TIMEOUT`
            (``None``: none).
        accept_compression: connectrpc ``Compression``\\ s accepted in responses (default: gzip;
            ``()``: none).
        send_compression: the ``Compression`` requests are sent with (default: none).
        read_max_bytes: the largest response message accepted, in bytes (``None``: no limit).
        interceptors: connectrpc's sync interceptors.
        http_client: a ``pyqwest.SyncClient`` (TLS settings, HTTP version, timeouts); the
            caller closes it. Without one the client uses pyqwest's shared transport (for gRPC
            over ``http://``, an HTTP/2 transport of its own, closed by :meth:`close`).

    Raises:
        TypeError: ``service`` is not a :class:`pbj.Service`.
        ValueError: ``address`` is not an ``http://`` or ``https://`` URL, or a protocol,
            codec name or timeout is not one of the above.
    """

    _pbj_label = "pbj.connect.ClientSync"

    def close(self) -> None:
        """Close the client (and the HTTP/2 transport it made for gRPC, if any)."""
        self._pbj_client.close()
        if self._pbj_transport is not None:
            self._pbj_transport.close()
            self._pbj_transport = None

    def __enter__(self) -> ClientSync:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Client(_Client):
    """A client of one service, for asyncio: ``await Client(url, service).SayHello(req)``.

    Unary and client-streaming calls are coroutines; server-streaming and bidirectional calls
    return async iterators (``async for reply in client.Chat(requests)``). A client-streamed
    request is an iterable or an async iterable. ``async with Client(...) as client:`` closes it.

    Args: as :class:`ClientSync` (``http_client`` a ``pyqwest.Client``; ``interceptors``
    connectrpc's async ones).

    Raises:
        TypeError, ValueError: as :class:`ClientSync`.
    """

    _pbj_label = "pbj.connect.Client"
    _asyncio = True

    async def close(self) -> None:
        """Close the client (and the HTTP/2 transport it made for gRPC, if any)."""
        await self._pbj_client.close()
        if self._pbj_transport is not None:
            await self._pbj_transport.aclose()
            self._pbj_transport = None

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
