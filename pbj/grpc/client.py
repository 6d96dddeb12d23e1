"""Clients: a :class:`Stub` whose methods are grpcio's own multi-callables, fed by pbj's codec.

Each method of the stub is what ``channel.unary_unary(path, request_serializer=…,
response_deserializer=…)`` (or ``unary_stream``, ``stream_unary``,
``stream_stream``) returns, with the method's input encoder as the serializer
and its output decoder as the deserializer (:func:`pbj.encode` and
:func:`pbj.decode` with their look-ups done once): no wrapper of ours runs on a
call. A request of another message type than the method's input is refused by
the serializer (``INTERNAL``, "Exception serializing request!", as with
Google's stubs), except on a ``grpc.aio`` channel, where grpcio logs the
serializer's error and sends an empty message instead. So everything grpcio offers passes through under its own
names: ``timeout`` (seconds), ``metadata`` (``(key, value)`` pairs),
``credentials`` (``grpc.CallCredentials``), ``wait_for_ready``,
``compression`` (``grpc.Compression``), ``.with_call(...)`` and
``.future(...)`` on a ``grpc.Channel``, and the call objects of a
``grpc.aio.Channel`` (``await stub.SayHello(req)``, ``async for`` over a
stream, ``call.initial_metadata()``, ``call.cancel()`` …).
"""

from __future__ import annotations

from typing import Any

from pbj.grpc._codec import decoder, encoder
from pbj.grpc._common import MethodLookup
from pbj.grpc._require import grpc as _grpc  # noqa: F401  (without grpcio: the ImportError naming the extra)
from pbj.loader.services import Service

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
    """

    _pbj_label = "pbj.grpc.Stub"

    def __init__(self, channel: Any, service: Service) -> None:
        if not isinstance(service, Service):
            raise TypeError(f"Stub needs a pbj.Service, not {type(service).__name__}")
        self._pbj_service = service
        self._pbj_channel = channel
        for m in service:
            make = getattr(channel, m.kind)
            # _registered_method: what grpcio's generated stubs pass (the method is registered with the core once)
            callable_ = make(m.path, request_serializer=encoder(m.input), response_deserializer=decoder(m.output),
                             _registered_method=True)
            self.__dict__[m.name] = callable_


def stub(channel: Any, service: Service) -> Stub:
    """``Stub(channel, service)``: a client of ``service`` on ``channel`` (see :class:`Stub`)."""
    return Stub(channel, service)
