"""Static types of the service stubs ``pbj stubs`` writes: the shapes of grpcio's multi-callables.

The ``.pyi`` files ``pbj stubs`` writes type each method of ``<Service>Stub`` as one of
these protocols, parametrized by the request and response classes, so that mypy and
pyright check what a call takes and returns; at run time the attribute is grpcio's own
multi-callable (:class:`pbj.grpc.Stub`). Nothing here imports grpcio.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Callable, Generator, Iterable, Iterator, Sequence
from typing import Any, Protocol, TypeVar

__all__ = ["UnaryUnary", "UnaryStream", "StreamUnary", "StreamStream", "AsyncUnaryUnary", "AsyncUnaryStream",
           "AsyncStreamUnary", "AsyncStreamStream", "ServicerBase", "Metadata", "Call", "ResponseStream",
           "AsyncCall", "AsyncUnaryCall", "AsyncResponseStream", "AsyncStreamUnaryCall", "AsyncStreamStreamCall"]

Req = TypeVar("Req", contravariant=True)
Resp = TypeVar("Resp", covariant=True)
#: Call metadata: ``(key, value)`` pairs (a ``bytes`` value for a key ending in ``-bin``).
Metadata = Sequence[tuple[str, "str | bytes"]]


class Call(Protocol):
    """What a call object of a ``grpc.Channel`` offers (``grpc.Call``): its status, metadata and cancellation."""

    def code(self) -> Any:
        """The call's ``grpc.StatusCode`` (blocks until the call ends)."""
        ...

    def details(self) -> str | None:
        """The status message."""
        ...

    def initial_metadata(self) -> Any:
        """The server's initial metadata, ``(key, value)`` pairs."""
        ...

    def trailing_metadata(self) -> Any:
        """The server's trailing metadata, ``(key, value)`` pairs."""
        ...

    def cancel(self) -> bool:
        """Cancel the call; ``True`` if it was still running."""
        ...

    def is_active(self) -> bool:
        """Whether the call is still running."""
        ...

    def time_remaining(self) -> float | None:
        """Seconds left before the deadline, ``None`` without one."""
        ...

    def add_callback(self, callback: Callable[[], None]) -> bool:
        """Run ``callback`` when the call ends; ``False`` if it has ended already."""
        ...


class ResponseStream(Iterator[Resp], Call, Protocol[Resp]):
    """The responses of a server-streaming call on a ``grpc.Channel``: an iterator that is also a :class:`Call`."""


class AsyncCall(Protocol):
    """What a call object of a ``grpc.aio.Channel`` offers (``grpc.aio.Call``)."""

    def cancel(self) -> bool:
        """Cancel the call; ``True`` if it was still running."""
        ...

    def cancelled(self) -> bool:
        """Whether the call was cancelled."""
        ...

    def done(self) -> bool:
        """Whether the call has ended."""
        ...

    def time_remaining(self) -> float | None:
        """Seconds left before the deadline, ``None`` without one."""
        ...

    async def code(self) -> Any:
        """The call's ``grpc.StatusCode``, once it ends."""
        ...

    async def details(self) -> str:
        """The status message, once the call ends."""
        ...

    async def initial_metadata(self) -> Any:
        """The server's initial metadata."""
        ...

    async def trailing_metadata(self) -> Any:
        """The server's trailing metadata, once the call ends."""
        ...

    async def wait_for_connection(self) -> None:
        """Wait until the call is connected (raises the call's error if it failed)."""
        ...


class AsyncUnaryCall(AsyncCall, Protocol[Resp]):
    """A call of a ``grpc.aio.Channel`` answering one response: ``await`` it."""

    def __await__(self) -> Generator[Any, None, Resp]:
        """The response."""
        ...


class AsyncResponseStream(AsyncCall, Protocol[Resp]):
    """A call of a ``grpc.aio.Channel`` answering a stream: ``async for`` over it, or ``await call.read()``."""

    def __aiter__(self) -> AsyncIterator[Resp]:
        """The responses."""
        ...

    async def read(self) -> Any:
        """The next response, or ``grpc.aio.EOF`` after the last."""
        ...


class AsyncStreamUnaryCall(AsyncUnaryCall[Resp], Protocol[Req, Resp]):
    """A client-streaming call of a ``grpc.aio.Channel``: ``await call.write(request)`` when no iterator was given."""

    async def write(self, request: Req) -> None:
        """Send one request."""
        ...

    async def done_writing(self) -> None:
        """Say that no more requests follow."""
        ...


class AsyncStreamStreamCall(AsyncResponseStream[Resp], Protocol[Req, Resp]):
    """A bidirectional call of a ``grpc.aio.Channel``: ``write``/``done_writing`` and ``read``/``async for``."""

    async def write(self, request: Req) -> None:
        """Send one request."""
        ...

    async def done_writing(self) -> None:
        """Say that no more requests follow."""
        ...


class UnaryUnary(Protocol[Req, Resp]):
    """A unary method on a ``grpc.Channel``: ``stub.M(request, timeout=...)``, ``.with_call``, ``.future``."""

    def __call__(self, request: Req, timeout: float | None = None, metadata: Metadata | None = None,
                 credentials: Any = None, wait_for_ready: bool | None = None, compression: Any = None) -> Resp: ...

    def with_call(self, request: Req, timeout: float | None = None, metadata: Metadata | None = None,
                  credentials: Any = None, wait_for_ready: bool | None = None,
                  compression: Any = None) -> tuple[Resp, Call]: ...

    def future(self, request: Req, timeout: float | None = None, metadata: Metadata | None = None,
               credentials: Any = None, wait_for_ready: bool | None = None, compression: Any = None) -> Any: ...


class UnaryStream(Protocol[Req, Resp]):
    """A server-streaming method on a ``grpc.Channel``: iterate the call for the responses."""

    def __call__(self, request: Req, timeout: float | None = None, metadata: Metadata | None = None,
                 credentials: Any = None, wait_for_ready: bool | None = None,
                 compression: Any = None) -> ResponseStream[Resp]: ...


class StreamUnary(Protocol[Req, Resp]):
    """A client-streaming method on a ``grpc.Channel``: an iterator of requests in, one response out."""

    def __call__(self, request_iterator: Iterable[Req], timeout: float | None = None,
                 metadata: Metadata | None = None, credentials: Any = None, wait_for_ready: bool | None = None,
                 compression: Any = None) -> Resp: ...

    def with_call(self, request_iterator: Iterable[Req], timeout: float | None = None,
                  metadata: Metadata | None = None, credentials: Any = None, wait_for_ready: bool | None = None,
                  compression: Any = None) -> tuple[Resp, Call]: ...

    def future(self, request_iterator: Iterable[Req], timeout: float | None = None,
               metadata: Metadata | None = None, credentials: Any = None, wait_for_ready: bool | None = None,
               compression: Any = None) -> Any: ...


class StreamStream(Protocol[Req, Resp]):
    """A bidirectional-streaming method on a ``grpc.Channel``."""

    def __call__(self, request_iterator: Iterable[Req], timeout: float | None = None,
                 metadata: Metadata | None = None, credentials: Any = None, wait_for_ready: bool | None = None,
                 compression: Any = None) -> ResponseStream[Resp]: ...


class AsyncUnaryUnary(Protocol[Req, Resp]):
    """A unary method on a ``grpc.aio.Channel``: ``await stub.M(request)``."""

    def __call__(self, request: Req, *, timeout: float | None = None, metadata: Metadata | None = None,
                 credentials: Any = None, wait_for_ready: bool | None = None,
                 compression: Any = None) -> AsyncUnaryCall[Resp]: ...


class AsyncUnaryStream(Protocol[Req, Resp]):
    """A server-streaming method on a ``grpc.aio.Channel``: ``async for`` over the call."""

    def __call__(self, request: Req, *, timeout: float | None = None, metadata: Metadata | None = None,
                 credentials: Any = None, wait_for_ready: bool | None = None,
                 compression: Any = None) -> AsyncResponseStream[Resp]: ...


class AsyncStreamUnary(Protocol[Req, Resp]):
    """A client-streaming method on a ``grpc.aio.Channel``: requests from an (async) iterable."""

    def __call__(self, request_iterator: Iterable[Req] | AsyncIterable[Req] | None = None, *,
                 timeout: float | None = None, metadata: Metadata | None = None, credentials: Any = None,
                 wait_for_ready: bool | None = None, compression: Any = None) -> AsyncStreamUnaryCall[Req, Resp]: ...


class AsyncStreamStream(Protocol[Req, Resp]):
    """A bidirectional-streaming method on a ``grpc.aio.Channel``."""

    def __call__(self, request_iterator: Iterable[Req] | AsyncIterable[Req] | None = None, *,
                 timeout: float | None = None, metadata: Metadata | None = None, credentials: Any = None,
                 wait_for_ready: bool | None = None,
                 compression: Any = None) -> AsyncStreamStreamCall[Req, Resp]: ...


class ServicerBase:
    """What the written servicer bases share (at run time they are :class:`pbj.grpc.Servicer` subclasses)."""

    def add_to_server(self, server: Any) -> None:
        """Serve this implementation on ``server`` (a ``grpc.Server`` or ``grpc.aio.Server``)."""
        ...
        raise NotImplementedError  # pragma: no cover - the run-time classes are pbj.grpc.Servicer's
