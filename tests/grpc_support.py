"""Shared pieces of the gRPC tests: the echo schema for pbj and Google, and one servicer per runtime.

The same ``.proto`` files (``tests/protos/grpc``) are loaded by pbj and compiled by
``grpc_tools.protoc`` (``--python_out``, ``--grpc_python_out``) into a temporary
directory, so every test can pair a pbj or a Google client with a pbj or a Google server.
Servers listen on 127.0.0.1, port 0, and are stopped by the fixtures that start them.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
import time
from concurrent import futures
from pathlib import Path

import grpc

import pbj
import pbj.grpc

PROTOS = Path(__file__).parent / "protos" / "grpc"
FILES = ["pbjtest/echo/v1/echo.proto", "pbjtest/common/v1/types.proto"]
SERVICE = "pbjtest.echo.v1.Echo"
#: Every test call gets a deadline: nothing waits for ever.
TIMEOUT = 10.0


def load_pbj() -> pbj.Namespace:
    return pbj.load_proto([PROTOS / f for f in FILES], include=[PROTOS])


def compile_google(out: Path):
    """Compile the echo schema with grpc_tools into ``out``; import (echo_pb2, echo_pb2_grpc, types_pb2)."""
    import grpc_tools
    from grpc_tools import protoc
    builtin = Path(grpc_tools.__file__).parent / "_proto"
    status = protoc.main(["protoc", f"-I{PROTOS}", f"-I{builtin}", f"--python_out={out}", f"--grpc_python_out={out}",
                          *(str(PROTOS / f) for f in FILES)])
    assert status == 0
    sys.path.insert(0, str(out))
    try:
        echo_pb2 = importlib.import_module("pbjtest.echo.v1.echo_pb2")
        echo_grpc = importlib.import_module("pbjtest.echo.v1.echo_pb2_grpc")
        types_pb2 = importlib.import_module("pbjtest.common.v1.types_pb2")
    finally:
        sys.path.remove(str(out))
    return echo_pb2, echo_grpc, types_pb2


def _metadata(context) -> list[str]:
    return [f"{k}={v}" for k, v in context.invocation_metadata() if k.startswith("x-")]


class PbjEcho:
    """The echo behaviour on pbj classes (sync); ``Missing`` is left out."""

    def __init__(self, ns: pbj.Namespace) -> None:
        self.Reply = ns["pbjtest.echo.v1.EchoReply"]
        self.Detail = ns["pbjtest.common.v1.Detail"]
        self.ended: list[tuple[bool, int]] = []  # per ServerStream call: (cancelled, replies sent)

    def _reply(self, r, context, index=0):
        if r.delay:
            time.sleep(r.delay)
        if r.fail == "details":
            raise pbj.grpc.RpcError(grpc.StatusCode.FAILED_PRECONDITION, "not now",
                                    details=[self.Detail(reason="busy", meta={"retry": "1s"})])
        if r.fail == "abort":
            context.abort(grpc.StatusCode.PERMISSION_DENIED, "no")
        if r.fail == "crash":
            raise RuntimeError("boom")
        context.set_trailing_metadata((("x-trailer", "t"),))
        return self.Reply(text=r.text, index=index, blob=r.blob, metadata=_metadata(context))

    def Unary(self, r, context):
        return self._reply(r, context)

    def ServerStream(self, r, context):
        sent = [0]
        context.add_callback(lambda: self.ended.append((not context.is_active(), sent[0])))
        for i in range(r.count):
            reply = self._reply(r, context, i)
            sent[0] += 1
            yield reply

    def ClientStream(self, requests, context):
        texts = [r.text for r in requests]
        return self.Reply(text=",".join(texts), index=len(texts), metadata=_metadata(context))

    def Bidi(self, requests, context):
        for i, r in enumerate(requests):
            yield self._reply(r, context, i)


def google_servicer(echo_pb2, echo_grpc, types_pb2):
    """The same behaviour on Google's generated classes."""
    from google.protobuf import any_pb2
    from google.rpc import status_pb2
    from grpc_status import rpc_status

    class GoogleEcho(echo_grpc.EchoServicer):
        def _reply(self, r, context, index=0):
            if r.delay:
                time.sleep(r.delay)
            if r.fail == "details":
                detail = any_pb2.Any()
                detail.Pack(types_pb2.Detail(reason="busy", meta={"retry": "1s"}))
                context.abort_with_status(rpc_status.to_status(status_pb2.Status(
                    code=grpc.StatusCode.FAILED_PRECONDITION.value[0], message="not now", details=[detail])))
            if r.fail == "abort":
                context.abort(grpc.StatusCode.PERMISSION_DENIED, "no")
            context.set_trailing_metadata((("x-trailer", "t"),))
            return echo_pb2.EchoReply(text=r.text, index=index, blob=r.blob, metadata=_metadata(context))

        def Unary(self, r, context):
            return self._reply(r, context)

        def ServerStream(self, r, context):
            for i in range(r.count):
                yield self._reply(r, context, i)

        def ClientStream(self, requests, context):
            texts = [r.text for r in requests]
            return echo_pb2.EchoReply(text=",".join(texts), index=len(texts), metadata=_metadata(context))

        def Bidi(self, requests, context):
            for i, r in enumerate(requests):
                yield self._reply(r, context, i)

    return GoogleEcho()


@contextlib.contextmanager
def serving(register, *, options=()):
    """A started ``grpc.server`` on 127.0.0.1 (port 0) with ``register(server)`` applied; yields its address."""
    pool = futures.ThreadPoolExecutor(max_workers=8)
    server = grpc.server(pool, options=options)
    register(server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        server.stop(grace=None).wait(TIMEOUT)
        pool.shutdown(wait=False, cancel_futures=True)
