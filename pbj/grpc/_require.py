"""grpcio, imported once with an error that names the extra to install."""

from __future__ import annotations

try:
    import grpc
    import grpc.aio
except ImportError as exc:  # pragma: no cover - the tests run with grpcio installed
    raise ImportError(f"pbj.grpc needs grpcio: pip install 'pbj-protobuf[grpc]' ({exc})") from exc

__all__ = ["grpc"]
