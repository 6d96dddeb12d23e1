"""What the two RPC runtimes' objects share, with no runtime imported: servicer bases, method lookup, health state.

:mod:`pbj.grpc` (grpcio) and :mod:`pbj.connect` (connectrpc) build the same kinds of objects on a
:class:`pbj.Service`; the parts that do not depend on the runtime live here once:

* :class:`ServicerBase`: ``class Greeter(Base, service=svc)`` keeps the service and refuses a
  public method spelt nearly like one of the service's (a typo);
* :class:`MethodLookup`: a client's methods by name (``client["SayHello"]``) and the errors
  naming the service's methods;
* :class:`HealthStatuses`: the serving statuses of ``grpc.health.v1.Health``, set from any
  thread, with what ``Check``, ``List`` and ``Watch`` answer (their messages from
  :func:`pbj.grpc._schemas.health_schema`).
"""

from __future__ import annotations

import asyncio
import difflib
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from typing import Any, ClassVar

from pbj.errors import PbjError
from pbj.grpc._schemas import health_schema
from pbj.loader.services import Service
from pbj.schema import FrozenMap

__all__ = ["ServicerBase", "near_method", "UnknownMethodError", "implementations", "implementation_of",
           "MethodLookup", "HealthStatuses", "HEALTH_SCHEMA", "HEALTH_SERVICE", "ServingStatus", "LIST_LIMIT"]


class ServicerBase:
    """The class-making part of a servicer base (``pbj.grpc.Servicer``, ``pbj.connect.Servicer``).

    Subclasses name the base in errors (``_pbj_base``) and the methods of their own that are not
    RPC methods (``_pbj_own``).

    Raises:
        TypeError: at class creation, ``service`` is not a :class:`pbj.Service`, no service is
            given, or a public method defined in the class is not one of the service's but is
            spelt nearly like one (``Unry`` for ``Unary``); other helper methods are left alone.
    """

    pbj_service: ClassVar[Service]
    _pbj_base: ClassVar[str] = "Servicer"
    _pbj_own: ClassVar[frozenset[str]] = frozenset()

    def __init_subclass__(cls, service: Service | None = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if service is not None:
            if not isinstance(service, Service):
                raise TypeError(f"{cls.__name__}: service= needs a pbj.Service, not {type(service).__name__}")
            cls.pbj_service = service
        svc = getattr(cls, "pbj_service", None)
        if svc is None:
            if cls.__module__.startswith("pbj.") and "_pbj_base" in vars(cls):
                return  # a runtime's own base class, made without a service
            raise TypeError(f"{cls.__name__} needs a service: class {cls.__name__}({cls._pbj_base}, service=...)")
        for name, value in vars(cls).items():
            if not callable(value) or name.startswith("_") or name in svc.methods or name in cls._pbj_own:
                continue
            close = near_method(name, svc)
            if close:  # a helper method of another name is fine; one spelt like a method is a typo
                raise TypeError(f"{cls.__name__}.{name}: service {svc.full_name} has no method {name!r}; "
                                f"did you mean {close!r}? (its methods: {', '.join(svc.methods)})")


def _folded(name: str) -> str:
    return name.replace("_", "").lower()


def near_method(name: str, service: Service) -> str | None:
    """The method of ``service`` that ``name`` (not one of them) looks like a misspelling of, or ``None``.

    The same name in another case or with underscores (``save``, ``say_hello``, ``SAVE`` for
    ``Save``, ``SayHello``), or one nearly so (difflib's ratio of 0.8 or more, with and without
    case and underscores: ``Unry`` for ``Unary``).
    """
    methods = list(service.methods)
    by_folded = {_folded(m): m for m in methods}
    same = by_folded.get(_folded(name))
    if same is not None:
        return same
    close = difflib.get_close_matches(name, methods, n=1, cutoff=0.8)
    if close:
        return close[0]
    close = difflib.get_close_matches(_folded(name), list(by_folded), n=1, cutoff=0.8)
    return by_folded[close[0]] if close else None


class UnknownMethodError(PbjError, KeyError):
    """A mapping of method name to function names a method its service does not have (a ``KeyError``)."""

    def __str__(self) -> str:
        return str(self.args[0])


def implementations(service: Service, implementation: Any) -> Iterator[tuple[Any, Callable[..., Any] | None]]:
    """``(method, function or None)`` for each method of ``service`` (:func:`implementation_of`).

    Raises:
        UnknownMethodError: ``implementation`` is a mapping naming a method the service does not
            have (a ``KeyError``; the message lists its methods, and names the one it looks like).
    """
    if isinstance(implementation, Mapping):
        for name in implementation:
            if name not in service.methods:
                close = near_method(name, service)
                hint = f"; did you mean {close!r}?" if close else ""
                raise UnknownMethodError(f"service {service.full_name} has no method {name!r}{hint} (its methods: "
                                         f"{', '.join(service.methods) or 'none'})")
    for m in service:
        yield m, implementation_of(implementation, m.name)


def implementation_of(implementation: Any, name: str) -> Callable[..., Any] | None:
    """The function serving method ``name`` in an implementation (an object with the methods, or a mapping of
    method name to function); ``None`` when it has none (or the object's is marked ``__pbj_unimplemented__``)."""
    if isinstance(implementation, Mapping):
        return implementation.get(name)  # type: ignore[no-any-return]
    fn = getattr(implementation, name, None)
    if fn is None or getattr(fn, "__pbj_unimplemented__", False):
        return None
    return fn  # type: ignore[no-any-return]


class MethodLookup:
    """A client's methods by name: attributes set per method, ``client["SayHello"]``, and errors naming them.

    Subclasses set ``_pbj_service`` and ``_pbj_label`` (the class's name in ``repr``) and put each
    method's callable in the instance's ``__dict__`` under the method's name.
    """

    _pbj_label: ClassVar[str] = "client"

    def __getitem__(self, name: str) -> Any:
        """The callable of method ``name``.

        Raises:
            KeyError: the service has no such method.
        """
        self.__dict__["_pbj_service"][name]  # the KeyError naming the methods
        return self.__dict__[name]

    def __getattr__(self, name: str) -> Any:
        service = self.__dict__.get("_pbj_service")
        raise AttributeError(f"service {service.full_name if service else '?'} has no method {name!r}")

    def __repr__(self) -> str:
        return f"<{self._pbj_label} {self.__dict__['_pbj_service'].full_name}>"


# ------------------------------------------------------------------ health

#: The schema of ``grpc/health/v1/health.proto`` (a :class:`pbj.Namespace`).
HEALTH_SCHEMA = _ns = health_schema()
#: The health service (a :class:`pbj.Service`).
HEALTH_SERVICE = _ns.service("grpc.health.v1.Health")
#: ``HealthCheckResponse.ServingStatus``: ``UNKNOWN``, ``SERVING``, ``NOT_SERVING``, ``SERVICE_UNKNOWN``.
ServingStatus: Any = _ns["grpc.health.v1.HealthCheckResponse.ServingStatus"]
HealthCheckRequest = _ns["grpc.health.v1.HealthCheckRequest"]
HealthCheckResponse = _ns["grpc.health.v1.HealthCheckResponse"]
HealthListRequest = _ns["grpc.health.v1.HealthListRequest"]
HealthListResponse = _ns["grpc.health.v1.HealthListResponse"]
#: The most service names ``List`` answers with by default; past it, ``RESOURCE_EXHAUSTED`` (the
#: protocol lets a server refuse a list too long; grpc-go's health server stops at 100 too).
LIST_LIMIT = 100
#: The longest a blocked ``Watch`` in a thread sleeps before it looks at its call again, in seconds.
WATCH_POLL = 0.5


class HealthStatuses:
    """The statuses a server reports (grpc repository, ``doc/health-checking.md``), and the answers about them.

    Args:
        statuses: initial status per service name (``{"": ServingStatus.SERVING}``; ``""`` is the
            whole server).
        list_limit: the most names ``List`` answers with (:data:`LIST_LIMIT`).

    Thread-safe: :meth:`set` may be called from any thread while serving.
    """

    def __init__(self, statuses: dict[str, Any] | None = None, *, list_limit: int = LIST_LIMIT) -> None:
        self._statuses: dict[str, Any] = {name: ServingStatus(s) for name, s in (statuses or {}).items()}
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

        Raises:
            ValueError: ``status`` is no :data:`ServingStatus`.
        """
        value = ServingStatus(status)
        self._change(lambda: self._statuses.__setitem__(service, value))

    def status(self, service: str) -> Any:
        """The status of ``service``, or ``None`` when it is not known."""
        with self._changed:
            return self._statuses.get(service)

    def close(self) -> None:
        """End every ``Watch`` stream (call it before stopping the server, so its threads and tasks end)."""
        self._change(lambda: setattr(self, "_closed", True))

    def _change(self, change: Callable[[], None]) -> None:
        with self._changed:
            change()
            self._version += 1
            self._changed.notify_all()
            waiters = list(self._async_waiters)
        for loop, event in waiters:
            loop.call_soon_threadsafe(event.set)

    def _check(self, request: Any) -> tuple[Any, str | None]:
        """``Check``'s reply, or ``(None, text)`` for ``NOT_FOUND``."""
        status = self.status(request.service)
        if status is None:
            return None, f"unknown service {request.service!r}"
        return HealthCheckResponse(status=status), None

    def _listed(self) -> tuple[Any, str | None]:
        """``List``'s reply (a snapshot), or ``(None, text)`` for ``RESOURCE_EXHAUSTED`` past the limit."""
        with self._changed:
            statuses = dict(self._statuses)
        if len(statuses) > self._list_limit:
            return None, f"{len(statuses)} services, more than List answers with ({self._list_limit})"
        return HealthListResponse(statuses=FrozenMap({k: HealthCheckResponse(status=v)
                                                      for k, v in statuses.items()})), None

    def _now(self, service: str) -> tuple[int, Any]:
        """``(version, status)`` of ``service`` now (``SERVICE_UNKNOWN`` for a name not known); version -1 once
        closed."""
        with self._changed:
            status = self._statuses.get(service, ServingStatus.SERVICE_UNKNOWN)
            return (-1 if self._closed else self._version), status

    def _step(self, service: str, last: Any) -> tuple[int, Any, Any]:
        """One look of ``Watch``: ``(version, status, reply)``, the reply ``None`` unless the status is not ``last``;
        version -1 once closed."""
        version, status = self._now(service)
        return version, status, (None if status == last else HealthCheckResponse(status=status))

    def _changes(self, service: str, go_on: Callable[[], float | None]) -> Iterator[Any]:
        """``Watch``'s replies in a thread: the status now, then each change, until :meth:`close`.

        ``go_on()`` is asked before each wait: the most seconds to wait next (``None``: the
        default poll), or a negative number to end (the call is over).
        """
        last = None
        while True:
            version, last, reply = self._step(service, last)
            if version < 0:
                return
            if reply is not None:
                yield reply
            wait = go_on()
            if wait is not None and wait < 0:
                return
            with self._changed:
                if self._version == version and not self._closed:
                    self._changed.wait(WATCH_POLL if wait is None else min(wait, WATCH_POLL))

    async def _changes_async(self, service: str) -> AsyncIterator[Any]:
        """``Watch``'s replies on an event loop: the status now, then each change, until :meth:`close` (or the
        task is cancelled)."""
        event = asyncio.Event()
        entry = (asyncio.get_running_loop(), event)
        with self._changed:
            self._async_waiters.append(entry)
        try:
            last = None
            while True:
                event.clear()
                version, last, reply = self._step(service, last)
                if version < 0:
                    return
                if reply is not None:
                    yield reply
                await event.wait()
        finally:
            with self._changed:
                self._async_waiters.remove(entry)
