"""The standard health service, ``grpc.health.v1.Health``, over Connect, gRPC and gRPC-Web.

The protocol is grpc's (``doc/health-checking.md``): ``Check`` answers the serving status of
a service name (``""`` is the whole server; ``not_found`` for a name it does not know),
``Watch`` streams the status now and then every change (``SERVICE_UNKNOWN`` for a name not
known yet), ``List`` answers every name and its status at once (``resource_exhausted`` past
:data:`LIST_LIMIT` names). :class:`Health` keeps the statuses and is served by an application
given ``health=``; :func:`check` and :func:`list_statuses` ask a server. The messages and the
service are :mod:`pbj.grpc.health`'s (the same schema; that module needs grpcio, this one not).
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from pbj.connect.client import ClientSync
from pbj.connect.errors import RpcError
from pbj.connect.server import endpoints
from pbj.grpc._schemas import health_schema
from pbj.schema import FrozenMap

__all__ = ["Health", "ServingStatus", "check", "list_statuses", "SCHEMA", "SERVICE", "LIST_LIMIT"]

#: The schema of ``grpc/health/v1/health.proto`` (a :class:`pbj.Namespace`).
SCHEMA = _ns = health_schema()
#: The health service (a :class:`pbj.Service`).
SERVICE = _ns.service("grpc.health.v1.Health")
#: ``HealthCheckResponse.ServingStatus``: ``UNKNOWN``, ``SERVING``, ``NOT_SERVING``, ``SERVICE_UNKNOWN``.
ServingStatus: Any = _ns["grpc.health.v1.HealthCheckResponse.ServingStatus"]
_Request = _ns["grpc.health.v1.HealthCheckRequest"]
_Response = _ns["grpc.health.v1.HealthCheckResponse"]
_ListRequest = _ns["grpc.health.v1.HealthListRequest"]
_ListResponse = _ns["grpc.health.v1.HealthListResponse"]
#: The most names ``List`` answers with by default (grpc-go's limit too).
LIST_LIMIT = 100
#: The longest a blocked ``Watch`` of a WSGI application sleeps before it looks at its deadline again, in seconds.
_WATCH_POLL = 0.5


class Health:
    """The statuses a server reports, and the endpoints of their health service.

    Args:
        statuses: initial status per service name (``{"": ServingStatus.SERVING}``).
        list_limit: the most names ``List`` answers with; past it, ``resource_exhausted``.

    Thread-safe: :meth:`set` may be called from any thread (or the event loop) while serving.
    """

    def __init__(self, statuses: dict[str, Any] | None = None, *, list_limit: int = LIST_LIMIT) -> None:
        self._statuses = {name: ServingStatus(s) for name, s in (statuses or {}).items()}
        self._list_limit = list_limit
        self._changed = threading.Condition()
        self._version = 0
        self._closed = False
        self._waiters: set[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = set()

    def set(self, service: str, status: Any) -> None:
        """Set the status of ``service`` (``""``: the server) and wake its watchers.

        Raises:
            ValueError: ``status`` is not a :data:`ServingStatus` (nor its number).
        """
        self._changed_to(lambda: self._statuses.__setitem__(service, ServingStatus(status)))

    def close(self) -> None:
        """End every ``Watch`` stream (before the server stops, so their threads and tasks end)."""
        self._changed_to(lambda: setattr(self, "_closed", True))

    def _changed_to(self, change: Any) -> None:
        with self._changed:
            change()
            self._version += 1
            self._changed.notify_all()
            waiters = list(self._waiters)
        for loop, event in waiters:
            loop.call_soon_threadsafe(event.set)

    def status(self, service: str) -> Any:
        """The status of ``service``, or ``None`` when it is not known."""
        with self._changed:
            return self._statuses.get(service)

    # ---------------------------------------------------------- the answers, shared by both kinds
    def _check(self, request: Any) -> Any:
        status = self.status(request.service)
        if status is None:
            raise RpcError("not_found", f"unknown service {request.service!r}")
        return _Response(status=status)

    def _list(self, request: Any) -> Any:
        with self._changed:
            statuses = dict(self._statuses)
        if len(statuses) > self._list_limit:
            raise RpcError("resource_exhausted",
                           f"{len(statuses)} services, more than List answers with ({self._list_limit})")
        return _ListResponse(statuses=FrozenMap({k: _Response(status=v) for k, v in statuses.items()}))

    def _now(self, service: str) -> tuple[int, Any]:
        """``(version, status)`` now; version ``-1`` once closed."""
        with self._changed:
            status = self._statuses.get(service, ServingStatus.SERVICE_UNKNOWN)
            return (-1 if self._closed else self._version), status

    # ---------------------------------------------------------- WSGI (threads)
    def _watch(self, request: Any, ctx: Any) -> Any:
        last = None
        while True:
            version, status = self._now(request.service)
            if version < 0:
                return
            if status != last:
                last = status
                yield _Response(status=status)
            left = ctx.timeout_ms
            if left is not None and left <= 0:
                raise RpcError("deadline_exceeded", "the Watch call's deadline passed")
            wait = _WATCH_POLL if left is None else min(_WATCH_POLL, left / 1000)
            with self._changed:
                if self._version == version and not self._closed:
                    self._changed.wait(wait)

    # ---------------------------------------------------------- ASGI (asyncio)
    async def _check_async(self, request: Any, ctx: Any) -> Any:
        return self._check(request)

    async def _list_async(self, request: Any, ctx: Any) -> Any:
        return self._list(request)

    async def _watch_async(self, request: Any, ctx: Any) -> Any:
        event = asyncio.Event()
        entry = (asyncio.get_running_loop(), event)
        with self._changed:
            self._waiters.add(entry)
        try:
            last = None
            while True:  # connectrpc cancels this at the deadline or when the client goes
                event.clear()
                version, status = self._now(request.service)
                if version < 0:
                    return
                if status != last:
                    last = status
                    yield _Response(status=status)
                await event.wait()
        finally:
            with self._changed:
                self._waiters.discard(entry)

    def endpoints(self, *, asyncio: bool) -> dict[str, Any]:
        """connectrpc endpoints of ``grpc.health.v1.Health`` (what an application given ``health=`` serves)."""
        if asyncio:
            return endpoints(SERVICE, {"Check": self._check_async, "List": self._list_async,
                                       "Watch": self._watch_async}, asyncio=True)
        return endpoints(SERVICE, {"Check": lambda r, ctx: self._check(r), "List": lambda r, ctx: self._list(r),
                                   "Watch": self._watch}, asyncio=False)


def check(address: str, service: str = "", *, protocol: Any = "connect", timeout: float | None = 10.0,
          http_client: Any = None) -> Any:
    """Ask the health service at ``address`` for the status of ``service`` (``""``: the server).

    Returns:
        The :data:`ServingStatus` member.

    Raises:
        ConnectError: the call failed (``not_found`` for a name the server does not know,
            ``unimplemented`` without a health service).
    """
    with ClientSync(address, SERVICE, protocol=protocol, http_client=http_client) as client:
        return client.Check(_Request(service=service), timeout=timeout).status


def list_statuses(address: str, *, protocol: Any = "connect", timeout: float | None = 10.0,
                  http_client: Any = None) -> dict[str, Any]:
    """Ask the health service at ``address`` for every service's status (``List``).

    Returns:
        Service name -> :data:`ServingStatus` member, in the server's order.

    Raises:
        ConnectError: the call failed (``unimplemented`` from a server without ``List``).
    """
    with ClientSync(address, SERVICE, protocol=protocol, http_client=http_client) as client:
        reply = client.List(_ListRequest(), timeout=timeout)
    return {name: r.status for name, r in reply.statuses.items()}

