"""Shared pieces of the Connect tests: the echo schema's servicers for pbj.connect, and real servers.

The schema is the gRPC tests' (``tests/protos/grpc``: all four kinds, a method left out,
rich details, a delay for deadlines). Servers listen on 127.0.0.1 on a socket bound here
(port 0), run in a thread of the test process, and are stopped by the context manager that
started them, each wait bounded by :data:`TIMEOUT`:

* :func:`uvicorn_server`: an ASGI application on uvicorn (HTTP/1.1: Connect and gRPC-Web);
* :func:`hypercorn_server`: an ASGI application on hypercorn (HTTP/1.1 and cleartext HTTP/2,
  with ASGI's trailers: gRPC too);
* :func:`wsgi_server`: a WSGI application on the standard library's ``wsgiref``, a thread per request.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import socketserver
import threading
import time
from collections.abc import Iterator
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer

import pbj
import pbj.connect
from pbj.descriptor import FileDescriptorSet
from tests.grpc_support import load_pbj  # noqa: F401  (the schema, for the tests that import it from here)

#: Every wait of these tests is bounded by this many seconds.
TIMEOUT = 10.0
SERVICE = "pbjtest.echo.v1.Echo"


def descriptor_set(ns: pbj.Namespace) -> bytes:
    """The serialized ``FileDescriptorSet`` of a namespace's files (what ``buf curl --schema`` and connect-es read)."""
    return pbj.encode(FileDescriptorSet(file=list(ns.files)))


def _metadata(ctx) -> list[str]:
    return [f"{k}={v}" for k, v in ctx.request_headers.items() if k.startswith("x-")]


class _Echo:
    """What both servicers share: the reply to one request, its failures first."""

    def __init__(self, ns: pbj.Namespace) -> None:
        self.Reply = ns["pbjtest.echo.v1.EchoReply"]
        self.Detail = ns["pbjtest.common.v1.Detail"]
        self.ended: list[int] = []  # replies sent by each ServerStream call that ended

    def _reply(self, r, ctx, index=0):
        if r.fail == "details":
            raise pbj.connect.RpcError("failed_precondition", "not now",
                                       details=[self.Detail(reason="busy", meta={"retry": "1s"})],
                                       metadata=[("x-failed", "yes")])
        if r.fail == "abort":
            pbj.connect.abort(ctx, "permission_denied", "no")
        if r.fail == "crash":
            raise RuntimeError("boom")
        if r.fail == "unimplemented":
            raise NotImplementedError
        ctx.response_trailers["x-trailer"] = "t"
        ctx.response_headers["x-header"] = "h"
        return self.Reply(text=r.text, index=index, blob=r.blob, metadata=_metadata(ctx))


class SyncEcho(_Echo):
    """The echo behaviour with plain functions (a WSGI application); ``Missing`` is left out."""

    def Unary(self, r, ctx):
        if r.delay:
            time.sleep(r.delay)
        return self._reply(r, ctx)

    def ServerStream(self, r, ctx):
        sent = 0
        try:
            for i in range(r.count):
                if r.delay:
                    time.sleep(r.delay)
                yield self._reply(r, ctx, i)
                sent += 1
        finally:
            self.ended.append(sent)

    def ClientStream(self, requests, ctx):
        texts = [r.text for r in requests]
        return self.Reply(text=",".join(texts), index=len(texts), metadata=_metadata(ctx))

    def Bidi(self, requests, ctx):
        for i, r in enumerate(requests):
            yield self._reply(r, ctx, i)


class AsyncEcho(_Echo):
    """The echo behaviour with coroutines and async generators (an ASGI application)."""

    async def Unary(self, r, ctx):
        if r.delay:
            await asyncio.sleep(r.delay)
        return self._reply(r, ctx)

    async def ServerStream(self, r, ctx):
        sent = 0
        try:
            for i in range(r.count):
                if r.delay:
                    await asyncio.sleep(r.delay)
                yield self._reply(r, ctx, i)
                sent += 1
        finally:
            self.ended.append(sent)

    async def ClientStream(self, requests, ctx):
        texts = [r.text async for r in requests]
        return self.Reply(text=",".join(texts), index=len(texts), metadata=_metadata(ctx))

    async def Bidi(self, requests, ctx):
        i = 0
        async for r in requests:
            yield self._reply(r, ctx, i)
            i += 1


def _bound() -> socket.socket:
    # IPPROTO_TCP named: asyncio turns Nagle's algorithm off only on sockets whose proto says TCP, and a
    # response's head and body, written apart, would otherwise wait for a delayed acknowledgement (40 ms)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    return sock


def _wait_for(ready: threading.Event, thread: threading.Thread, what: str) -> None:
    if not ready.wait(TIMEOUT):
        raise RuntimeError(f"{what} did not start within {TIMEOUT} s")
    if not thread.is_alive():
        raise RuntimeError(f"{what} stopped while starting")


@contextlib.contextmanager
def uvicorn_server(app: Any) -> Iterator[str]:
    """Serve an ASGI app with uvicorn on 127.0.0.1; yields its base URL."""
    import uvicorn
    sock = _bound()
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=2))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True, name="uvicorn")
    thread.start()
    deadline = time.monotonic() + TIMEOUT
    while not server.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.01)
    if not server.started:
        raise RuntimeError("uvicorn did not start")
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(TIMEOUT)
        sock.close()


@contextlib.contextmanager
def hypercorn_server(app: Any) -> Iterator[str]:
    """Serve an ASGI app with hypercorn on 127.0.0.1 (HTTP/1.1 and cleartext HTTP/2); yields its base URL."""
    from hypercorn.asyncio import serve
    from hypercorn.config import Config
    sock = _bound()
    config = Config()
    config.bind = [f"fd://{os.dup(sock.fileno())}"]  # hypercorn closes the descriptor it is given
    config.loglevel = "WARNING"
    config.graceful_timeout = 2
    loop = asyncio.new_event_loop()
    stop = asyncio.Event()
    ready = threading.Event()

    async def main() -> None:
        loop.call_soon(ready.set)
        await serve(app, config, shutdown_trigger=stop.wait)

    thread = threading.Thread(target=loop.run_until_complete, args=(main(),), daemon=True, name="hypercorn")
    thread.start()
    _wait_for(ready, thread, "hypercorn")
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join(TIMEOUT)
        if not thread.is_alive():
            loop.close()
        sock.close()


class _ThreadingWSGIServer(socketserver.ThreadingMixIn, WSGIServer):
    daemon_threads = True
    block_on_close = False


class _QuietHandler(WSGIRequestHandler):
    disable_nagle_algorithm = True  # wsgiref writes a response's head and body apart

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextlib.contextmanager
def wsgi_server(app: Any) -> Iterator[str]:
    """Serve a WSGI app with ``wsgiref`` on 127.0.0.1, a thread per request; yields its base URL."""
    server = _ThreadingWSGIServer(("127.0.0.1", 0), _QuietHandler)
    server.set_app(app)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True, name="wsgi")
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        thread.join(TIMEOUT)
        server.server_close()
