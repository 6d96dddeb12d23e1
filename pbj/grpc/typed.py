"""Static types of the service stubs ``pbj stubs`` writes: the shapes of grpcio's multi-callables.

The ``.pyi`` files ``pbj stubs`` writes type each method of ``<Service>Stub`` as one of
these protocols, parametrized by the request and response classes, so that mypy and
pyright check what a call takes and returns; at run time the attribute is grpcio's own
multi-callable (:class:`pbj.grpc.Stub`). Nothing here imports grpcio.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Iterable, Iterator, Sequence
from typing import Any, Protocol, TypeVar

__all__ = ["UnaryUnary", "UnaryStream", "StreamUnary", "StreamStream", "AsyncUnaryUnary", "AsyncUnaryStream",
           "AsyncStreamUnary", "AsyncStreamStream", "ServicerBase", "Metadata"]

Req = TypeVar("Req", contravariant=True)
Resp = TypeVar("Resp", covariant=True)
#: Call metadata: ``(key, value)`` pairs (a ``bytes`` value for a key ending in ``-bin``).
Metadata = Sequence[tuple[str, "str | bytes"]]


class UnaryUnary(Protocol[Req, Resp]):
    """A unary method on a ``grpc.Channel``: ``stub.M(request, timeout=...)``, ``.with_call``, ``.future``."""

    def __call__(self, request: Req, timeout: float | None = None, metadata: Metadata | None = None,
                 credentials: Any = None, wait_for_ready: bool | None = None, compression: Any = None) -> Resp: ...

    def with_call(self, request: Req, timeout: float | None = None, metadata: Metadata | None = None,
                  credentials: Any = None, wait_for_ready: bool | None = None,
                  compression: Any = None) -> tuple[Resp, Any]: ...

    def future(self, request: Req, timeout: float | None = None, metadata: Metadata | None = None,
               credentials: Any = None, wait_for_ready: bool | None = None, compression: Any = None) -> Any: ...


class UnaryStream(Protocol[Req, Resp]):
    """A server-streaming method on a ``grpc.Channel``: iterate the call for the responses."""

    def __call__(self, request: Req, timeout: float | None = None, metadata: Metadata | None = None,
                 credentials: Any = None, wait_for_ready: bool | None = None,
                 compression: Any = None) -> Iterator[Resp]: ...


class StreamUnary(Protocol[Req, Resp]):
    """A client-streaming method on a ``grpc.Channel``: an iterator of requests in, one response out."""

    def __call__(self, request_iterator: Iterable[Req], timeout: float | None = None,
                 metadata: Metadata | None = None, credentials: Any = None, wait_for_ready: bool | None = None,
                 compression: Any = None) -> Resp: ...

    def with_call(self, request_iterator: Iterable[Req], timeout: float | None = None,
                  metadata: Metadata | None = None, credentials: Any = None, wait_for_ready: bool | None = None,
                  compression: Any = None) -> tuple[Resp, Any]: ...

    def future(self, request_iterator: Iterable[Req], timeout: float | None = None,
               metadata: Metadata | None = None, credentials: Any = None, wait_for_ready: bool | None = None,
               compression: Any = None) -> Any: ...


class StreamStream(Protocol[Req, Resp]):
    """A bidirectional-streaming method on a ``grpc.Channel``."""

    def __call__(self, request_iterator: Iterable[Req], timeout: float | None = None,
                 metadata: Metadata | None = None, credentials: Any = None, wait_for_ready: bool | None = None,
                 compression: Any = None) -> Iterator[Resp]: ...


class AsyncUnaryUnary(Protocol[Req, Resp]):
    """A unary method on a ``grpc.aio.Channel``: ``await stub.M(request)``."""

    def __call__(self, request: Req, *, timeout: float | None = None, metadata: Metadata | None = None,
                 credentials: Any = None, wait_for_ready: bool | None = None,
                 compression: Any = None) -> Awaitable[Resp]: ...


class AsyncUnaryStream(Protocol[Req, Resp]):
    """A server-streaming method on a ``grpc.aio.Channel``: ``async for`` over the call."""

    def __call__(self, request: Req, *, timeout: float | None = None, metadata: Metadata | None = None,
                 credentials: Any = None, wait_for_ready: bool | None = None,
                 compression: Any = None) -> AsyncIterator[Resp]: ...


class AsyncStreamUnary(Protocol[Req, Resp]):
    """A client-streaming method on a ``grpc.aio.Channel``: requests from an (async) iterable."""

    def __call__(self, request_iterator: Iterable[Req] | AsyncIterable[Req] | None = None, *,
                 timeout: float | None = None, metadata: Metadata | None = None, credentials: Any = None,
                 wait_for_ready: bool | None = None, compression: Any = None) -> Awaitable[Resp]: ...


class AsyncStreamStream(Protocol[Req, Resp]):
    """A bidirectional-streaming method on a ``grpc.aio.Channel``."""

    def __call__(self, request_iterator: Iterable[Req] | AsyncIterable[Req] | None = None, *,
                 timeout: float | None = None, metadata: Metadata | None = None, credentials: Any = None,
                 wait_for_ready: bool | None = None, compression: Any = None) -> AsyncIterator[Resp]: ...


class ServicerBase:
    """What the written servicer bases share (at run time they are :class:`pbj.grpc.Servicer` subclasses)."""

    def add_to_server(self, server: Any) -> None:
        """Serve this implementation on ``server`` (a ``grpc.Server`` or ``grpc.aio.Server``)."""
        raise NotImplementedError  # pragma: no cover - the run-time classes are pbj.grpc.Servicer's
