"""gRPC with pbj messages on grpcio, with no generated code (``pip install 'pbj-protobuf[grpc]'``).

* services: :class:`pbj.Service` from a loaded schema (``ns.service("pkg.Greeter")``)
  or declared by hand (:func:`pbj.service`);
* clients: :class:`Stub` (a ``grpc.Channel`` or ``grpc.aio.Channel``), :mod:`pbj.grpc.client`;
* servers: :class:`Servicer` and :func:`add_to_server`, :mod:`pbj.grpc.server`;
* rich errors: :class:`RpcError`, :func:`status_of`, :mod:`pbj.grpc.status`;
* health (``grpc.health.v1``): :mod:`pbj.grpc.health`;
* server reflection (v1 and v1alpha), served from a namespace and read back
  into one with :func:`reflect`: :mod:`pbj.grpc.reflection`.

See ``docs/grpc.md``.
"""

from pbj.grpc._require import grpc as _grpc  # noqa: F401  (the ImportError naming the extra)
from pbj.grpc.client import Stub, stub
from pbj.grpc.server import Servicer, add_to_server, method_handlers
from pbj.grpc.status import DETAILS_KEY, RpcError, Status, abort, status_of, unpack_details
from pbj.loader.services import Method, Service, rpc, service

__all__ = ["Stub", "stub", "Servicer", "add_to_server", "method_handlers", "RpcError", "Status", "abort",
           "status_of", "unpack_details", "DETAILS_KEY", "Method", "Service", "rpc", "service"]
