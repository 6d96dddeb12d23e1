"""The standard health service, ``grpc.health.v1.Health``, over Connect, gRPC and gRPC-Web.

The protocol is grpc's (``doc/health-checking.md``): ``Check`` answers the serving status of
a service name (``""`` is the whole server; ``not_found`` for a name it does not know),
``Watch`` streams the status now and then every change (``SERVICE_UNKNOWN`` for a name not
known yet), ``List`` answers every name and its status at once (``resource_exhausted`` past
:data:`LIST_LIMIT` names). :class:`Health` keeps the statuses and is served by an application
given ``health=``; :func:`check` and :func:`list_statuses` ask a server. The messages, the
service and the keeping of statuses are :mod:`pbj.grpc.health`'s (that module needs grpcio,
this one not).
"""

from __future__ import annotations

from typing import Any

from pbj.connect.client import ClientSync
from pbj.connect.errors import RpcError
from pbj.connect.server import endpoints
from pbj.grpc._common import HEALTH_SCHEMA, HEALTH_SERVICE, LIST_LIMIT, HealthStatuses, ServingStatus
from pbj.grpc._common import HealthCheckRequest as _Request
from pbj.grpc._common import HealthListRequest as _ListRequest

__all__ = ["Health", "ServingStatus", "check", "list_statuses", "SCHEMA", "SERVICE", "LIST_LIMIT"]

#: The schema of ``grpc/health/v1/health.proto`` (a :class:`pbj.Namespace`).
SCHEMA = HEALTH_SCHEMA
#: The health service (a :class:`pbj.Service`).
SERVICE = HEALTH_SERVICE


class Health(HealthStatuses):
    """The statuses a server reports, and the endpoints of their health service.

    Args:
        statuses: initial status per service name (``{"": ServingStatus.SERVING}``).
        list_limit: the most names ``List`` answers with; past it, ``resource_exhausted``.

    Thread-safe: :meth:`set` may be called from any thread (or the event loop) while serving.
    """

    def _answer(self, found: tuple[Any, str | None], code: str) -> Any:
        reply, refused = found
        if refused is not None:
            raise RpcError(code, refused)
        return reply

    def _watch_sync(self, request: Any, ctx: Any) -> Any:
        """``Watch`` under WSGI: ends at :meth:`close` or at the call's deadline (a thread has no other way to
        learn that the client went, until a write fails)."""
        def go_on() -> float | None:
            left = ctx.timeout_ms
            if left is not None and left <= 0:
                raise RpcError("deadline_exceeded", "the Watch call's deadline passed")
            return None if left is None else left / 1000
        return self._changes(request.service, go_on)

    async def _watch_asgi(self, request: Any, ctx: Any) -> Any:
        async for reply in self._changes_async(request.service):  # connectrpc cancels it at the deadline
            yield reply

    def endpoints(self, *, asyncio: bool) -> dict[str, Any]:
        """connectrpc endpoints of ``grpc.health.v1.Health`` (what an application given ``health=`` serves)."""
        def check(r: Any, ctx: Any) -> Any:
            return self._answer(self._check(r), "not_found")

        def listed(r: Any, ctx: Any) -> Any:
            return self._answer(self._listed(), "resource_exhausted")
        if not asyncio:
            return endpoints(SERVICE, {"Check": check, "List": listed, "Watch": self._watch_sync}, asyncio=False)

        async def check_async(r: Any, ctx: Any) -> Any:
            return check(r, ctx)

        async def listed_async(r: Any, ctx: Any) -> Any:
            return listed(r, ctx)
        return endpoints(SERVICE, {"Check": check_async, "List": listed_async, "Watch": self._watch_asgi},
                         asyncio=True)


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
