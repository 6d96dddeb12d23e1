"""The standard health service, ``grpc.health.v1.Health`` (grpc repository, ``doc/health-checking.md``).

:class:`Health` keeps a serving status per service name (``""`` is the whole
server) and serves ``Check`` (``NOT_FOUND`` for a name it does not know) and
``Watch`` (the current status at once, then every change; ``SERVICE_UNKNOWN``
for a name it does not know, until it is set) and ``List`` (every name and its
status, in one reply; ``RESOURCE_EXHAUSTED`` past :data:`LIST_LIMIT` names) on a
``grpc.server`` or a ``grpc.aio.server``. :func:`check` asks a server for a
status, :func:`list_statuses` for all of them.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from pbj.grpc._require import grpc
from pbj.grpc._schemas import health_schema
from pbj.grpc.client import Stub
from pbj.grpc.server import add_to_server
from pbj.schema import FrozenMap

__all__ = ["Health", "ServingStatus", "check", "check_async", "list_statuses", "list_statuses_async", "SERVICE",
           "SCHEMA", "LIST_LIMIT"]

#: The schema of ``grpc/health/v1/health.proto`` (a :class:`pbj.Namespace`): pass it to
#: :func:`pbj.grpc.reflection.add_reflection` to describe the health service too.
SCHEMA = _ns = health_schema()
#: The health service (a :class:`pbj.Service`).
SERVICE = _ns.service("grpc.health.v1.Health")
#: ``HealthCheckResponse.ServingStatus``: ``UNKNOWN``, ``SERVING``, ``NOT_SERVING``, ``SERVICE_UNKNOWN``.
ServingStatus: Any = _ns["grpc.health.v1.HealthCheckResponse.ServingStatus"]
_Request = _ns["grpc.health.v1.HealthCheckRequest"]
_Response = _ns["grpc.health.v1.HealthCheckResponse"]
_ListRequest = _ns["grpc.health.v1.HealthListRequest"]
_ListResponse = _ns["grpc.health.v1.HealthListResponse"]
#: The most service names ``List`` answers with by default; past it, ``RESOURCE_EXHAUSTED`` (the
#: protocol lets a server refuse a list too long; grpc-go's health server stops at 100 too).
LIST_LIMIT = 100


class Health:
    """The statuses a server reports, and their health service.

    Args:
        statuses: initial status per service name (``{"": ServingStatus.SERVING}``).
        list_limit: the most names ``List`` answers with (:data:`LIST_LIMIT`); with more,
            ``List`` answers ``RESOURCE_EXHAUSTED``.

    Thread-safe: :meth:`set` may be called from any thread while serving.
    """

    def __init__(self, statuses: dict[str, Any] | None = None, *, list_limit: int = LIST_LIMIT) -> None:
        self._statuses: dict[str, Any] = dict(statuses or {})
        self._list_limit = list_limit
        self._changed = threading.Condition()
        self._version = 0
        self._closed = False
        self._async_waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []

    def set(self, service: str, status: Any) -> None:
        """Set the status of ``service`` (``""``: the server) and wake its watchers.

        Args:
            service: a service's full name, or ``""``.
            status: a :data:`ServingStatus` member (or its number).
        """
        with self._changed:
            self._statuses[service] = ServingStatus(status)
            self._version += 1
            self._changed.notify_all()
            waiters = list(self._async_waiters)
        for loop, event in waiters:
            loop.call_soon_threadsafe(event.set)

    def status(self, service: str) -> Any:
        """The status of ``service``, or ``None`` when it is not known."""
        with self._changed:
            return self._statuses.get(service)

    def close(self) -> None:
        """End every ``Watch`` stream (call it before stopping the server, so its threads are freed)."""
        with self._changed:
            self._closed = True
            self._changed.notify_all()
            waiters = list(self._async_waiters)
        for loop, event in waiters:
            loop.call_soon_threadsafe(event.set)

    # ---------------------------------------------------------- handlers
    def Check(self, request: Any, context: Any) -> Any:
        """``Check``: the status of ``request.service``; ``NOT_FOUND`` for an unknown name."""
        status = self.status(request.service)
        if status is None:
            context.abort(grpc.StatusCode.NOT_FOUND, f"unknown service {request.service!r}")
        return _Response(status=status)

    def _listed(self) -> tuple[Any, str | None]:
        with self._changed:
            statuses = dict(self._statuses)
        if len(statuses) > self._list_limit:
            return None, f"{len(statuses)} services, more than List answers with ({self._list_limit})"
        return _ListResponse(statuses=FrozenMap({k: _Response(status=v) for k, v in statuses.items()})), None

    def List(self, request: Any, context: Any) -> Any:
        """``List``: every service name and its status (a snapshot); ``RESOURCE_EXHAUSTED`` past the limit."""
        reply, refused = self._listed()
        if refused is not None:
            context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, refused)
        return reply

    def Watch(self, request: Any, context: Any) -> Any:
        """``Watch``: the status now, then each change, until the client goes or :meth:`close`."""
        last = None
        while context.is_active():
            with self._changed:
                if self._closed:
                    return
                status = self._statuses.get(request.service, ServingStatus.SERVICE_UNKNOWN)
                version = self._version
            if status != last:
                last = status
                yield _Response(status=status)
            with self._changed:
                if self._version == version and not self._closed:
                    self._changed.wait(0.5)  # bounded: notices a cancelled client

    async def _check_async(self, request: Any, context: Any) -> Any:
        status = self.status(request.service)
        if status is None:
            await context.abort(grpc.StatusCode.NOT_FOUND, f"unknown service {request.service!r}")
        return _Response(status=status)

    async def _list_async(self, request: Any, context: Any) -> Any:
        reply, refused = self._listed()
        if refused is not None:
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, refused)
        return reply

    async def _watch_async(self, request: Any, context: Any) -> Any:
        event = asyncio.Event()
        entry = (asyncio.get_running_loop(), event)
        with self._changed:
            self._async_waiters.append(entry)
        try:
            last = None
            while True:
                event.clear()
                with self._changed:
                    if self._closed:
                        return
                    status = self._statuses.get(request.service, ServingStatus.SERVICE_UNKNOWN)
                if status != last:
                    last = status
                    yield _Response(status=status)
                await event.wait()
        finally:
            with self._changed:
                self._async_waiters.remove(entry)

    def add_to_server(self, server: Any) -> None:
        """Serve ``grpc.health.v1.Health`` on ``server`` (a ``grpc.Server`` or ``grpc.aio.Server``) before it starts."""
        if isinstance(server, grpc.aio.Server):
            add_to_server(server, SERVICE, {"Check": self._check_async, "List": self._list_async,
                                            "Watch": self._watch_async})
        else:
            add_to_server(server, SERVICE, {"Check": self.Check, "List": self.List, "Watch": self.Watch})


def check(channel: Any, service: str = "", *, timeout: float | None = 10.0) -> Any:
    """Ask the health service on ``channel`` (a ``grpc.Channel``) for the status of ``service``.

    Returns:
        The :data:`ServingStatus` member.

    Raises:
        grpc.RpcError: the call failed (``NOT_FOUND`` for a service the server does not know,
            ``UNIMPLEMENTED`` without a health service).
        TypeError: ``channel`` is a ``grpc.aio.Channel`` (use :func:`check_async`).
    """
    if isinstance(channel, grpc.aio.Channel):
        raise TypeError("check needs a grpc.Channel; on a grpc.aio.Channel use: await check_async(channel)")
    return Stub(channel, SERVICE).Check(_Request(service=service), timeout=timeout).status


async def check_async(channel: Any, service: str = "", *, timeout: float | None = 10.0) -> Any:
    """:func:`check` on a ``grpc.aio.Channel``: ``status = await check_async(channel, service)``.

    Args:
        channel: a ``grpc.aio.Channel``.
        service: the service's full name; ``""`` asks for the server as a whole.
        timeout: the call's deadline, in seconds (``None``: none).

    Returns:
        The :data:`ServingStatus` member.

    Raises:
        grpc.aio.AioRpcError: the call failed (``NOT_FOUND``, ``UNIMPLEMENTED`` as for :func:`check`).
        TypeError: ``channel`` is a ``grpc.Channel`` (use :func:`check`).
    """
    if isinstance(channel, grpc.Channel):
        raise TypeError("check_async needs a grpc.aio.Channel; on a grpc.Channel use: check(channel)")
    reply = await Stub(channel, SERVICE).Check(_Request(service=service), timeout=timeout)
    return reply.status


def list_statuses(channel: Any, *, timeout: float | None = 10.0) -> dict[str, Any]:
    """Ask the health service on ``channel`` (a ``grpc.Channel``) for every service's status (``List``).

    Returns:
        Service name (``""``: the server) -> :data:`ServingStatus` member, in the server's order.

    Raises:
        grpc.RpcError: the call failed (``UNIMPLEMENTED`` from a server whose health service has
            no ``List``, ``RESOURCE_EXHAUSTED`` from one with too many services to list).
        TypeError: ``channel`` is a ``grpc.aio.Channel`` (use :func:`list_statuses_async`).
    """
    if isinstance(channel, grpc.aio.Channel):
        raise TypeError("list_statuses needs a grpc.Channel; on a grpc.aio.Channel use: "
                        "await list_statuses_async(channel)")
    reply = Stub(channel, SERVICE).List(_ListRequest(), timeout=timeout)
    return {name: r.status for name, r in reply.statuses.items()}


async def list_statuses_async(channel: Any, *, timeout: float | None = 10.0) -> dict[str, Any]:
    """:func:`list_statuses` on a ``grpc.aio.Channel``.

    Raises:
        grpc.aio.AioRpcError: the call failed (as for :func:`list_statuses`).
        TypeError: ``channel`` is a ``grpc.Channel`` (use :func:`list_statuses`).
    """
    if isinstance(channel, grpc.Channel):
        raise TypeError("list_statuses_async needs a grpc.aio.Channel; on a grpc.Channel use: list_statuses(channel)")
    reply = await Stub(channel, SERVICE).List(_ListRequest(), timeout=timeout)
    return {name: r.status for name, r in reply.statuses.items()}
