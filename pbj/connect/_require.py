"""connectrpc's names pbj uses, imported in one place with an error that names the extra to install.

Every module of :mod:`pbj.connect` imports connectrpc (and protobuf-py, which it stands on)
through here, so that using them without the extra is one ``ImportError`` saying what to
install.
"""

from __future__ import annotations

try:
    from connectrpc.client import ConnectClient, ConnectClientSync, ResponseMetadata
    from connectrpc.code import Code
    from connectrpc.errors import ConnectError, ErrorDetail
    from connectrpc.method import IdempotencyLevel, MethodInfo, StreamType
    from connectrpc.protocol import ProtocolType
    from connectrpc.request import Headers, RequestContext
    from connectrpc.server import (
        DEFAULT_READ_MAX_BYTES,
        ConnectASGIApplication,
        ConnectWSGIApplication,
        Endpoint,
        EndpointSync,
    )
    from protobuf.wkt import Any as ProtobufPyAny
    from pyqwest import Client as HTTPClient
    from pyqwest import HTTPTransport, HTTPVersion, SyncHTTPTransport
    from pyqwest import SyncClient as SyncHTTPClient
except ImportError as exc:  # pragma: no cover - the tests run with connectrpc installed
    raise ImportError(f"pbj.connect needs connectrpc: pip install 'pbj-protobuf[connect]' ({exc})") from exc

__all__ = ["ConnectClient", "ConnectClientSync", "ResponseMetadata", "Code", "ConnectError", "ErrorDetail",
           "IdempotencyLevel", "MethodInfo", "StreamType", "ProtocolType", "Headers", "RequestContext",
           "DEFAULT_READ_MAX_BYTES", "ConnectASGIApplication", "ConnectWSGIApplication", "Endpoint", "EndpointSync",
           "ProtobufPyAny", "HTTPClient", "HTTPTransport", "HTTPVersion", "SyncHTTPTransport", "SyncHTTPClient"]
