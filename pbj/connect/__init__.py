"""Connect, gRPC and gRPC-Web over plain HTTP for pbj services, on Buf's connectrpc (extra ``connect``).

No generated code on either side: the services come from a loaded schema
(``ns.service("pkg.Greeter")``) or are declared in Python (:func:`pbj.service`), and
connectrpc's protocol code runs with pbj's codecs.

* servers: :class:`ASGIApplication` (uvicorn, hypercorn; Starlette/FastAPI mounts) and
  :class:`WSGIApplication` (gunicorn, waitress), implementations as :class:`Servicer`
  subclasses or mappings, :mod:`pbj.connect.server`;
* clients: :class:`ClientSync` and :class:`Client` (asyncio), :mod:`pbj.connect.client`;
* codecs: :class:`ProtoCodec`, :class:`JSONCodec` (ProtoJSON), :mod:`pbj.connect.codec`;
* errors: :class:`RpcError`, :func:`abort`, :func:`unpack_details`, :mod:`pbj.connect.errors`;
* reflection (served with ``reflection=``, read with :func:`reflect`): :mod:`pbj.connect.reflection`;
* health (``health=``): :mod:`pbj.connect.health`.

The names are imported on first use, so ``import pbj.connect`` works without connectrpc;
using any of them without it raises ``ImportError`` naming the extra. See ``docs/connect.md``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pbj.connect._require import Code as Code
    from pbj.connect._require import ConnectError as ConnectError
    from pbj.connect._require import ResponseMetadata as ResponseMetadata
    from pbj.connect.client import Client as Client
    from pbj.connect.client import ClientSync as ClientSync
    from pbj.connect.codec import JSONCodec as JSONCodec
    from pbj.connect.codec import ProtoCodec as ProtoCodec
    from pbj.connect.errors import RpcError as RpcError
    from pbj.connect.errors import abort as abort
    from pbj.connect.errors import code_of as code_of
    from pbj.connect.errors import unpack_details as unpack_details
    from pbj.connect.reflection import reflect as reflect
    from pbj.connect.reflection import reflect_async as reflect_async
    from pbj.connect.server import ASGIApplication as ASGIApplication
    from pbj.connect.server import Servicer as Servicer
    from pbj.connect.server import WSGIApplication as WSGIApplication

_WHERE = {
    "ASGIApplication": "server", "WSGIApplication": "server", "Servicer": "server",
    "Client": "client", "ClientSync": "client",
    "ProtoCodec": "codec", "JSONCodec": "codec",
    "RpcError": "errors", "abort": "errors", "code_of": "errors", "unpack_details": "errors",
    "reflect": "reflection", "reflect_async": "reflection",
    "Code": "_require", "ConnectError": "_require", "ResponseMetadata": "_require",
}

__all__ = list(_WHERE)


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'pbj.connect' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"pbj.connect.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
