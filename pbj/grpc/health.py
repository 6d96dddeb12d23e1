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

from typing import Any

from pbj.grpc._common import HEALTH_SCHEMA, HEALTH_SERVICE, LIST_LIMIT, HealthStatuses, ServingStatus
from pbj.grpc._common import HealthCheckRequest as _Request
from pbj.grpc._common import HealthListRequest as _ListRequest
from pbj.grpc._require import grpc
from pbj.grpc.client import Stub
from pbj.grpc.server import add_to_server

__all__ = ["Health", "ServingStatus", "check", "check_async", "list_statuses", "list_statuses_async", "SERVICE",
           "SCHEMA", "LIST_LIMIT"]

#: The schema of ``grpc/health/v1/health.proto`` (a :class:`pbj.Namespace`): pass it to
#: :func:`pbj.grpc.reflection.add_reflection` to describe the health service too.
SCHEMA = HEALTH_SCHEMA
#: The health service (a :class:`pbj.Service`).
SERVICE = HEALTH_SERVICE


class Health(HealthStatuses):
    """The statuses a server reports, and their health service.

    Args:
        statuses: initial status per service name (``{"": ServingStatus.SERVING}``).
        list_limit: the most names ``List`` answers with (:data:`LIST_LIMIT`); with more,
            ``List`` answers ``RESOURCE_EXHAUSTED``.

    Thread-safe: :meth:`set` may be called from any thread while serving.
    """

    # ---------------------------------------------------------- handlers
    def Check(self, request: Any, context: Any) -> Any:
        """``Check``: the status of ``request.service``; ``NOT_FOUND`` for an unknown name."""
        reply, unknown = self._check(request)
        if unknown is not None:
            context.abort(grpc.StatusCode.NOT_FOUND, unknown)
        return reply

    def List(self, request: Any, context: Any) -> Any:
        """``List``: every service name and its status (a snapshot); ``RESOURCE_EXHAUSTED`` past the limit."""
        reply, refused = self._listed()
        if refused is not None:
            context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, refused)
        return reply

    def Watch(self, request: Any, context: Any) -> Any:
        """``Watch``: the status now, then each change, until the client goes or :meth:`close`."""
        return self._changes(request.service, lambda: None if context.is_active() else -1.0)

    async def _check_async(self, request: Any, context: Any) -> Any:
        reply, unknown = self._check(request)
        if unknown is not None:
            await context.abort(grpc.StatusCode.NOT_FOUND, unknown)
        return reply

    async def _list_async(self, request: Any, context: Any) -> Any:
        reply, refused = self._listed()
        if refused is not None:
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, refused)
        return reply

    async def _watch_async(self, request: Any, context: Any) -> Any:
        async for reply in self._changes_async(request.service):
            yield reply

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
