"""pbj.connect as a new user meets it: errors that name the user's mistake, never a hang.

A request the codec cannot encode raises the codec's error, not ``unavailable``; ``pbj.grpc``'s
``abort`` works in a ``pbj.grpc.Servicer`` served by pbj.connect; a chunked request body a WSGI
server cannot read is answered at once; method names spelt like the service's in another case
are refused. Servers on 127.0.0.1, started and stopped here.
"""

from __future__ import annotations

import asyncio
import socket

import pytest

import pbj
import pbj.connect
import pbj.wellknown
import pbj.wkt
from pbj.connect import Code, ConnectError
from tests.connect_support import TIMEOUT, uvicorn_server, wsgi_server


@pbj.message(full_name="pbjtest.usage.v1.Strict", syntax="proto2")
class Strict:
    a: int = pbj.field(1, "int32", required=True)
    any: pbj.wellknown.Any | None = pbj.field(2, pbj.wellknown.Any)


@pbj.message(full_name="pbjtest.usage.v1.Unregistered")
class Unregistered:
    x: int = pbj.field(1, "int32")


strict = pbj.service("pbjtest.usage.v1.Strict",
                     pbj.rpc("Unary", Strict, Strict),
                     pbj.rpc("ServerStream", Strict, Strict, server_streaming=True),
                     pbj.rpc("ClientStream", Strict, Strict, client_streaming=True),
                     pbj.rpc("Bidi", Strict, Strict, client_streaming=True, server_streaming=True))


class SyncStrict(pbj.connect.Servicer, service=strict):
    def __init__(self) -> None:
        self.calls = 0

    def Unary(self, r, ctx):
        self.calls += 1
        return r

    def ServerStream(self, r, ctx):
        self.calls += 1
        yield r

    def ClientStream(self, requests, ctx):
        self.calls += 1
        return list(requests)[-1]

    def Bidi(self, requests, ctx):
        self.calls += 1
        yield from requests


class AsyncStrict(pbj.connect.Servicer, service=strict):
    def __init__(self) -> None:
        self.calls = 0

    async def Unary(self, r, ctx):
        self.calls += 1
        return r

    async def ServerStream(self, r, ctx):
        self.calls += 1
        yield r

    async def ClientStream(self, requests, ctx):
        self.calls += 1
        return [r async for r in requests][-1]

    async def Bidi(self, requests, ctx):
        self.calls += 1
        async for r in requests:
            yield r


#: Requests no codec can encode (a required field unset), and ones only the JSON codec cannot (an Any of a type
#: no registry knows: the binary encoding carries its bytes as they are).
NOT_ENCODED = {"proto": [Strict()], "json": [Strict(), Strict(a=1, any=pbj.wkt.pack(Unregistered(x=1)))]}
ERRORS = {"proto": pbj.EncodeError, "json": (pbj.EncodeError, pbj.JSONError)}


@pytest.mark.parametrize("codec", ["proto", "json"])
def test_a_request_the_codec_cannot_encode_raises_the_codecs_error(codec):
    impl = SyncStrict()
    with wsgi_server(pbj.connect.WSGIApplication(impl)) as url, \
            pbj.connect.ClientSync(url, strict, codec=codec, timeout=TIMEOUT) as c:
        for bad in NOT_ENCODED[codec]:
            with pytest.raises(ERRORS[codec]) as caught:
                c.Unary(bad)
            assert not isinstance(caught.value, ConnectError)
            with pytest.raises(ERRORS[codec]):
                list(c.ServerStream(bad))
            with pytest.raises(ERRORS[codec]):
                c.ClientStream([Strict(a=1), bad])
            with pytest.raises(ERRORS[codec]):
                list(c.Bidi([bad]))
        assert impl.calls == 0  # nothing reached the server
        assert c.Unary(Strict(a=2)) == Strict(a=2)
        with pytest.raises(ConnectError) as caught:  # connectrpc's own errors stay as they are
            pbj.connect.ClientSync(url + "/nowhere", strict, codec=codec, timeout=TIMEOUT).Unary(Strict(a=1))
        assert caught.value.code is not Code.UNAVAILABLE


@pytest.mark.parametrize("codec", ["proto", "json"])
def test_a_request_the_codec_cannot_encode_raises_the_codecs_error_asyncio(codec):
    impl = AsyncStrict()

    async def calls(url):
        async with pbj.connect.Client(url, strict, codec=codec, timeout=TIMEOUT) as c:
            for bad in NOT_ENCODED[codec]:
                with pytest.raises(ERRORS[codec]):
                    await c.Unary(bad)
                with pytest.raises(ERRORS[codec]):
                    [r async for r in c.ServerStream(bad)]
                with pytest.raises(ERRORS[codec]):
                    await c.ClientStream([Strict(a=1), bad])
                with pytest.raises(ERRORS[codec]):
                    [r async for r in c.Bidi([bad])]
            return await c.Unary(Strict(a=3))

    with uvicorn_server(pbj.connect.ASGIApplication(impl)) as url:
        assert asyncio.run(calls(url)) == Strict(a=3)
    assert impl.calls == 1


@pbj.message(full_name="pbjtest.usage.v1.Why")
class Why:
    reason: str = pbj.field(1, "string")


def test_a_grpc_servicer_aborts_the_same_way_under_pbj_connect():
    grpc = pytest.importorskip("grpc")
    import pbj.grpc

    note = pbj.service("pbjtest.usage.v1.Notes", pbj.rpc("Save", Why, Why))

    class Shared(pbj.grpc.Servicer, service=note):  # the handler a grpcio server runs too
        def Save(self, request, context):
            if request.reason == "abort":
                context.abort(grpc.StatusCode.NOT_FOUND, "no such note")
            if request.reason == "pbj.grpc.abort":
                pbj.grpc.abort(context, grpc.StatusCode.FAILED_PRECONDITION, "locked", details=[Why(reason="held")])
            context.set_trailing_metadata([("x-kept", "yes"), ("x-blob-bin", b"\x00\x01")])
            context.send_initial_metadata([("x-early", "1")])
            seen = dict(context.invocation_metadata())
            left = context.time_remaining()
            return Why(reason=f"{seen.get('x-who')} {0 < left <= TIMEOUT}")

    with wsgi_server(pbj.connect.WSGIApplication(Shared())) as url:
        for protocol in ("connect", "grpc-web"):
            with pbj.connect.ClientSync(url, note, protocol=protocol, timeout=TIMEOUT) as c:
                with pbj.connect.ResponseMetadata() as meta:
                    assert c.Save(Why(reason="ok"), headers={"x-who": "ann"}) == Why(reason="ann True")
                assert meta.trailers["x-kept"] == "yes"
                assert meta.trailers["x-blob-bin"] == "AAE="
                assert meta.headers["x-early"] == "1"
                with pytest.raises(ConnectError) as caught:
                    c.Save(Why(reason="abort"))
                assert (caught.value.code, caught.value.message) == (Code.NOT_FOUND, "no such note")
                with pytest.raises(ConnectError) as caught:
                    c.Save(Why(reason="pbj.grpc.abort"))
                assert (caught.value.code, caught.value.message) == (Code.FAILED_PRECONDITION, "locked")
                assert pbj.connect.unpack_details(caught.value, Why) == [Why(reason="held")]


def _answer_to_chunked(url: str, path: str) -> bytes:
    """The status line a raw chunked POST gets (bounded wait: a server that hangs fails with a timeout)."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=TIMEOUT) as sock:
        body = pbj.encode(Strict(a=1))
        sock.sendall(f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/proto\r\n"
                     f"Transfer-Encoding: chunked\r\n\r\n{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n")
        return sock.recv(4096).partition(b"\r\n")[0]


def test_a_chunked_request_body_under_wsgiref_is_refused_at_once():
    impl = SyncStrict()
    with wsgi_server(pbj.connect.WSGIApplication(impl)) as url:
        assert _answer_to_chunked(url, "/pbjtest.usage.v1.Strict/Unary").endswith(b" 411 Length Required")
        with pbj.connect.ClientSync(url, strict, timeout=TIMEOUT) as c:
            with pytest.raises(ConnectError):  # a lazily streamed request is sent chunked
                c.ClientStream(iter([Strict(a=1)]))
            assert c.ClientStream([Strict(a=1), Strict(a=2)]) == Strict(a=2)  # a list: one body, its length
    assert impl.calls == 1


orders = pbj.service("pbjtest.usage.v1.Orders", pbj.rpc("Save", Why, Why), pbj.rpc("GetOrder", Why, Why),
                     pbj.rpc("SayHello", Why, Why))


def _servicer(base, name, is_async):
    async def async_handler(self, request, context):
        return request

    def handler(self, request, context):
        return request
    return type("Typo", (base,), {name: async_handler if is_async else handler}, service=orders)


def _bases():
    try:
        import pbj.grpc as pbj_grpc
    except ImportError:  # grpcio is not installed: pbj.connect's base alone
        return [pbj.connect.Servicer]
    return [pbj.connect.Servicer, pbj_grpc.Servicer]


@pytest.mark.parametrize("base", _bases(), ids=lambda b: b.__module__)
def test_a_method_name_in_another_case_is_a_typo(base):
    for name, meant in [("save", "Save"), ("SAVE", "Save"), ("get_order", "GetOrder"), ("say_hello", "SayHello"),
                        ("getorder", "GetOrder"), ("Sav", "Save")]:
        for is_async in (True, False):
            with pytest.raises(TypeError, match=f"Typo.{name}: service pbjtest.usage.v1.Orders has no method "
                                                f"'{name}'; did you mean '{meant}'"):
                _servicer(base, name, is_async)
    for helper in ("audit", "save_all", "order_total", "hello_text"):  # other names are helpers, left alone
        assert _servicer(base, helper, False).pbj_service is orders


def test_a_mapping_naming_no_method_is_pbjs_error():
    from pbj.errors import PbjError
    with pytest.raises(KeyError) as caught:
        pbj.connect.ASGIApplication((orders, {"say_hello": None}))
    assert isinstance(caught.value, PbjError)
    assert str(caught.value) == ("service pbjtest.usage.v1.Orders has no method 'say_hello'; did you mean 'SayHello'? "
                                 "(its methods: Save, GetOrder, SayHello)")
    with pytest.raises(KeyError, match=r"^service pbjtest.usage.v1.Orders has no method 'Nope' \(its methods"):
        pbj.connect.WSGIApplication((orders, {"Nope": None}))


def test_use_get_where_no_get_is_sent_is_refused():
    impl = SyncStrict()
    with wsgi_server(pbj.connect.WSGIApplication(impl)) as url:
        with pbj.connect.ClientSync(url, strict, protocol="grpc-web", timeout=TIMEOUT) as web:
            with pytest.raises(ValueError, match=r"Strict/Unary: use_get=True .* are not Connect"):
                web.Unary(Strict(a=1), use_get=True)
        with pbj.connect.ClientSync(url, strict, timeout=TIMEOUT) as c:
            with pytest.raises(ValueError, match=r"Strict/ServerStream: use_get=True .* are streams"):
                c.ServerStream(Strict(a=1), use_get=True)
            with pytest.raises(ValueError, match="are streams"):
                c.ClientStream([Strict(a=1)], use_get=True)
    assert impl.calls == 0


class Waits(pbj.connect.Servicer, service=strict):
    """Handlers that answer once (a stream's first reply; a unary call with ``a`` 0), then wait until their call
    is cancelled."""

    def __init__(self) -> None:
        self.started = asyncio.Event()

    async def Unary(self, r, ctx):
        self.started.set()
        if r.a != 0:
            await asyncio.sleep(TIMEOUT)
        return r

    async def ServerStream(self, r, ctx):
        yield r
        self.started.set()
        await asyncio.sleep(TIMEOUT)
        yield r


def test_a_cancelled_task_raises_its_cancellation():
    """connectrpc's asyncio client reports a cancelled call as ConnectError(CANCELED); pbj's gives the task its
    CancelledError back, so task.cancel(), asyncio.timeout and task groups work around a call."""
    from pyqwest import Client as HTTPClient
    from pyqwest.testing import ASGITransport

    async def main():
        impl = Waits()
        http = HTTPClient(ASGITransport(pbj.connect.ASGIApplication(impl)))
        async with pbj.connect.Client("http://strict", strict, http_client=http, timeout=TIMEOUT) as c:
            seen = []

            async def stream():
                async for r in c.ServerStream(Strict(a=2)):
                    seen.append(r)
            for call in (lambda: c.Unary(Strict(a=1)), stream):
                impl.started.clear()
                task = asyncio.create_task(call())
                await asyncio.wait_for(impl.started.wait(), TIMEOUT)
                task.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await task
            impl.started.clear()
            with pytest.raises(TimeoutError) as caught:
                async with asyncio.timeout(0.01):
                    await c.Unary(Strict(a=3))
            assert not isinstance(caught.value, ConnectError)
            return seen, await c.Unary(Strict(a=0))

    assert asyncio.run(main()) == ([Strict(a=2)], Strict(a=0))
