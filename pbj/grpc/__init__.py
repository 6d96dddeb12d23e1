"""gRPC with pbj messages on grpcio, with no generated code (``pip install 'pbj-protobuf[grpc]'``).

* services: :class:`pbj.Service` from a loaded schema (``ns.service("pkg.Greeter")``)
  or declared by hand (:func:`pbj.service`);
* clients: :class:`Stub` (a ``grpc.Channel`` or ``grpc.aio.Channel``), :mod:`pbj.grpc.client`;
* servers: :class:`Servicer` and :func:`add_to_server`, :mod:`pbj.grpc.server`;
* rich errors: :class:`RpcError`, :func:`status_of`, :mod:`pbj.grpc.status`;
* health (``grpc.health.v1``): :mod:`pbj.grpc.health`;
* server reflection (v1 and v1alpha), served from a namespace or from services
  declared by hand (:mod:`pbj.descriptor_writer`) and read back into a
  namespace with :func:`reflect`: :mod:`pbj.grpc.reflection`;
* ``pbj call``, the command line client: :mod:`pbj.grpc.cli`.

The names are imported on first use, so ``import pbj.grpc.cli`` (the command
line's parser) works without grpcio; using any of them without grpcio raises
``ImportError`` naming the extra to install. See ``docs/grpc.md``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pbj.grpc.client import Stub as Stub
    from pbj.grpc.client import stub as stub
    from pbj.grpc.reflection import ReflectionError as ReflectionError
    from pbj.grpc.reflection import add_reflection as add_reflection
    from pbj.grpc.reflection import reflect as reflect
    from pbj.grpc.reflection import reflect_async as reflect_async
    from pbj.grpc.server import Servicer as Servicer
    from pbj.grpc.server import add_to_server as add_to_server
    from pbj.grpc.server import method_handlers as method_handlers
    from pbj.grpc.status import DETAILS_KEY as DETAILS_KEY
    from pbj.grpc.status import RpcError as RpcError
    from pbj.grpc.status import Status as Status
    from pbj.grpc.status import abort as abort
    from pbj.grpc.status import status_of as status_of
    from pbj.grpc.status import unpack_details as unpack_details
    from pbj.loader.services import Method as Method
    from pbj.loader.services import Service as Service
    from pbj.loader.services import rpc as rpc
    from pbj.loader.services import service as service

_WHERE = {
    "Stub": "client", "stub": "client",
    "Servicer": "server", "add_to_server": "server", "method_handlers": "server",
    "RpcError": "status", "Status": "status", "abort": "status", "status_of": "status",
    "unpack_details": "status", "DETAILS_KEY": "status",
    "add_reflection": "reflection", "reflect": "reflection", "reflect_async": "reflection",
    "ReflectionError": "reflection",
}
_SERVICES = ("Method", "Service", "rpc", "service")

__all__ = [*_WHERE, *_SERVICES]


def __getattr__(name: str) -> Any:
    if name in _SERVICES:
        from pbj.loader import services
        return getattr(services, name)
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'pbj.grpc' has no attribute {name!r}")
    importlib.import_module("pbj.grpc._require")  # without grpcio: the ImportError naming the extra
    value = getattr(importlib.import_module(f"pbj.grpc.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
