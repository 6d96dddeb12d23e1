"""pbj.grpc on grpc.aio: an async pbj servicer and pbj clients on grpc.aio channels, against Google's code.

Pairings: a pbj aio client and a Google aio client against a pbj aio server; a pbj aio client
against a Google (sync, generated) server. Each test runs its own event loop (``asyncio.run``)
and its own aio server on 127.0.0.1, stopped before the test ends; every call has a deadline.
"""

from __future__ import annotations

import asyncio

import grpc
import pytest

import pbj
import pbj.grpc
from tests.grpc_support import SERVICE, TIMEOUT, compile_google, google_servicer, load_pbj, serving

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(scope="module")
def ns():
    return load_pbj()


@pytest.fixture(scope="module")
def google(tmp_path_factory):
    return compile_google(tmp_path_factory.mktemp("google"))


def async_servicer(ns):
    svc = ns.service(SERVICE)
    Reply = ns["pbjtest.echo.v1.EchoReply"]
    Detail = ns["pbjtest.common.v1.Detail"]

    def meta(context):
        return [f"{k}={v}" for k, v in context.invocation_metadata() if k.startswith("x-")]

    class AsyncEcho(pbj.grpc.Servicer, service=svc):
        async def Unary(self, r, context):
            if r.delay:
                await asyncio.sleep(r.delay)
            if r.fail == "details":
                raise pbj.grpc.RpcError(grpc.StatusCode.FAILED_PRECONDITION, "not now",
                                        details=[Detail(reason="busy", meta={"retry": "1s"})])
            if r.fail == "unimplemented":
                raise NotImplementedError("later")
            context.set_trailing_metadata((("x-trailer", "t"),))
            return Reply(text=r.text, metadata=meta(context))

        async def ServerStream(self, r, context):
            for i in range(r.count):
                if r.delay:
                    await asyncio.sleep(r.delay)
                yield Reply(text=r.text, index=i)

        async def ClientStream(self, requests, context):
            texts = [r.text async for r in requests]
            return Reply(text=",".join(texts), index=len(texts))

        async def Bidi(self, requests, context):
            i = 0
            async for r in requests:
                yield Reply(text=r.text, index=i)
                i += 1
    return AsyncEcho()


def run_with_server(ns, body):
    """Start an aio pbj server, run ``await body(address)``, stop the server."""
    async def main():
        server = grpc.aio.server()
        async_servicer(ns).add_to_server(server)
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        try:
            return await asyncio.wait_for(body(f"127.0.0.1:{port}"), TIMEOUT * 3)
        finally:
            await server.stop(None)
    return asyncio.run(main())


def clients(ns, google, channel):
    echo_pb2, echo_grpc, _ = google
    return [(pbj.grpc.Stub(channel, ns.service(SERVICE)), ns["pbjtest.echo.v1.EchoRequest"]),
            (echo_grpc.EchoStub(channel), echo_pb2.EchoRequest)]


def test_four_kinds_pbj_and_google_clients_on_a_pbj_aio_server(ns, google):
    async def body(address):
        out = []
        async with grpc.aio.insecure_channel(address) as ch:
            for stub, Req in clients(ns, google, ch):
                call = stub.Unary(Req(text="u"), timeout=TIMEOUT, metadata=(("x-a", "1"),))
                reply = await call
                trailer = await call.trailing_metadata()
                streamed = [(r.text, r.index) async for r in stub.ServerStream(Req(text="s", count=2), timeout=TIMEOUT)]

                async def reqs(Req=Req):
                    for t in "ab":
                        yield Req(text=t)
                collected = await stub.ClientStream(reqs(), timeout=TIMEOUT)
                bidi = [(r.text, r.index) async for r in stub.Bidi(reqs(), timeout=TIMEOUT)]
                out.append((reply.text, list(reply.metadata), list(trailer.get_all("x-trailer")) == ["t"], streamed,
                            collected.text, bidi))
        return out
    results = run_with_server(ns, body)
    expected = ("u", ["x-a=1"], True, [("s", 0), ("s", 1)], "a,b", [("a", 0), ("b", 1)])
    assert results == [expected, expected]


def test_errors_on_a_pbj_aio_server(ns, google):
    async def body(address):
        out = []
        async with grpc.aio.insecure_channel(address) as ch:
            stub, Req = clients(ns, google, ch)[0]
            for req in (Req(fail="details"), Req(fail="unimplemented"), Req(delay=1.0)):
                try:
                    await stub.Unary(req, timeout=0.3)
                except grpc.aio.AioRpcError as exc:
                    out.append(exc)
            try:
                await stub.Missing(Req(), timeout=TIMEOUT)
            except grpc.aio.AioRpcError as exc:
                out.append(exc)
            raw = ch.unary_unary(f"/{SERVICE}/Unary")
            try:
                await raw(b"\x0a\x05ab", timeout=TIMEOUT)
            except grpc.aio.AioRpcError as exc:
                out.append(exc)
            raw_stream = ch.stream_stream(f"/{SERVICE}/Bidi")
            try:
                [r async for r in raw_stream(iter([b"\x0a\x01a", b"\x0a\x09"]), timeout=TIMEOUT)]
            except grpc.aio.AioRpcError as exc:
                out.append(exc)
            still = await stub.Unary(Req(text="ok"), timeout=TIMEOUT)
        return out, still
    errors, still = run_with_server(ns, body)
    codes = [e.code() for e in errors]
    assert codes == [grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.UNIMPLEMENTED,
                     grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.UNIMPLEMENTED,
                     grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.INVALID_ARGUMENT]
    rich = pbj.grpc.status_of(errors[0])
    assert [(d.reason, dict(d.meta)) for d in pbj.grpc.unpack_details(rich)] == [("busy", {"retry": "1s"})]
    assert errors[1].details() == "later"
    assert "not a valid pbjtest.echo.v1.EchoRequest" in errors[4].details()
    assert still.text == "ok"


def test_cancel_on_aio(ns):
    async def body(address):
        async with grpc.aio.insecure_channel(address) as ch:
            stub = pbj.grpc.Stub(ch, ns.service(SERVICE))
            call = stub.ServerStream(ns["pbjtest.echo.v1.EchoRequest"](count=1000, delay=0.01), timeout=TIMEOUT)
            it = call.__aiter__()
            first = await it.__anext__()
            call.cancel()
            try:
                await it.__anext__()
            except asyncio.CancelledError:
                pass
            return first.index, call.cancelled(), await call.code()
    assert run_with_server(ns, body) == (0, True, grpc.StatusCode.CANCELLED)


def test_pbj_aio_client_against_a_google_server(ns, google):
    with serving(lambda s: google[1].add_EchoServicer_to_server(google_servicer(*google), s)) as address:
        async def main():
            async with grpc.aio.insecure_channel(address) as ch:
                stub = pbj.grpc.Stub(ch, ns.service(SERVICE))
                Req = ns["pbjtest.echo.v1.EchoRequest"]
                reply = await stub.Unary(Req(text="g"), timeout=TIMEOUT, metadata=(("x-b", "2"),))
                streamed = [r.index async for r in stub.ServerStream(Req(count=3), timeout=TIMEOUT)]
                try:
                    await stub.Unary(Req(fail="details"), timeout=TIMEOUT)
                except grpc.aio.AioRpcError as exc:
                    error = exc
                return reply, streamed, error
        reply, streamed, error = asyncio.run(main())
    assert (reply.text, list(reply.metadata), streamed) == ("g", ["x-b=2"], [0, 1, 2])
    detail = pbj.grpc.unpack_details(pbj.grpc.status_of(error))[0]
    assert detail == ns["pbjtest.common.v1.Detail"](reason="busy", meta={"retry": "1s"})


def test_aio_server_refuses_sync_functions(ns):
    async def main():
        server = grpc.aio.server()
        with pytest.raises(TypeError, match="must be a coroutine function"):
            pbj.grpc.add_to_server(server, ns.service(SERVICE), {"Unary": lambda r, c: None})
        with pytest.raises(TypeError, match="must be an async generator"):
            pbj.grpc.add_to_server(server, ns.service(SERVICE), {"Bidi": lambda r, c: iter(())})
    asyncio.run(main())


def test_abort_with_details_sync_and_aio(ns):
    """pbj.grpc.abort(context, code, message, details=[...]) on both kinds of server."""
    svc = ns.service(SERVICE)
    Detail = ns["pbjtest.common.v1.Detail"]
    Req = ns["pbjtest.echo.v1.EchoRequest"]

    def sync_unary(request, context):
        pbj.grpc.abort(context, grpc.StatusCode.NOT_FOUND, "gone", details=[Detail(reason="sync")])

    async def async_unary(request, context):
        await pbj.grpc.abort(context, grpc.StatusCode.NOT_FOUND, "gone", details=[Detail(reason="aio")])

    with serving(lambda s: pbj.grpc.add_to_server(s, svc, {"Unary": sync_unary})) as address:
        with grpc.insecure_channel(address) as ch, pytest.raises(grpc.RpcError) as err:
            pbj.grpc.Stub(ch, svc).Unary(Req(), timeout=TIMEOUT)
    sync_status = pbj.grpc.status_of(err.value)

    async def main():
        server = grpc.aio.server()
        pbj.grpc.add_to_server(server, svc, {"Unary": async_unary})
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
                try:
                    await pbj.grpc.Stub(ch, svc).Unary(Req(), timeout=TIMEOUT)
                except grpc.aio.AioRpcError as exc:
                    return exc
        finally:
            await server.stop(None)
    aio_error = asyncio.run(main())
    aio_status = pbj.grpc.status_of(aio_error)
    assert (err.value.code(), aio_error.code()) == (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.NOT_FOUND)
    assert [pbj.grpc.unpack_details(s) for s in (sync_status, aio_status)] == [[Detail(reason="sync")],
                                                                              [Detail(reason="aio")]]
    assert sync_status.code == aio_status.code == grpc.StatusCode.NOT_FOUND.value[0]


def test_aio_writer_api_for_streamed_responses(ns):
    # grpc.aio's other form of a streaming handler: a coroutine sending with await context.write(reply)
    svc = ns.service(SERVICE)
    Req, Reply = ns["pbjtest.echo.v1.EchoRequest"], ns["pbjtest.echo.v1.EchoReply"]

    async def server_stream(r, context):
        for i in range(r.count):
            await context.write(Reply(text=r.text, index=i))
        if r.fail == "late":
            raise pbj.grpc.RpcError(grpc.StatusCode.ABORTED, "after the writes")

    async def bidi(requests, context):
        async for r in requests:
            await context.write(Reply(text=r.text.upper()))

    async def main():
        server = grpc.aio.server()
        pbj.grpc.add_to_server(server, svc, {"ServerStream": server_stream, "Bidi": bidi})
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                stub = pbj.grpc.Stub(channel, svc)
                many = [(r.text, r.index) async for r in stub.ServerStream(Req(text="w", count=3), timeout=TIMEOUT)]
                chat = [r.text async for r in stub.Bidi(iter([Req(text="a"), Req(text="b")]), timeout=TIMEOUT)]
                late = stub.ServerStream(Req(text="x", count=1, fail="late"), timeout=TIMEOUT)
                got = []
                with pytest.raises(grpc.RpcError) as err:
                    async for r in late:
                        got.append(r.text)
                garbage = channel.stream_stream(f"/{SERVICE}/Bidi")
                with pytest.raises(grpc.RpcError) as bad:
                    async for _ in garbage(iter([b"\xff"]), timeout=TIMEOUT):
                        pass
                return many, chat, got, err.value, bad.value
        finally:
            await server.stop(None)

    many, chat, got, err, bad = asyncio.run(asyncio.wait_for(main(), TIMEOUT * 3))
    assert many == [("w", 0), ("w", 1), ("w", 2)] and chat == ["A", "B"] and got == ["x"]
    assert (err.code(), err.details()) == (grpc.StatusCode.ABORTED, "after the writes")
    assert bad.code() is grpc.StatusCode.INVALID_ARGUMENT


def test_sync_server_refuses_async_functions(ns):
    # the coroutine was returned unawaited: INTERNAL "Failed to serialize response!" and a RuntimeWarning
    async def unary(r, c):
        return None

    async def stream(r, c):
        yield None

    server = grpc.server(None)
    for impl in ({"Unary": unary}, {"ServerStream": stream}):
        with pytest.raises(TypeError, match=r"is async: serve it on a grpc.aio.server\(\)"):
            pbj.grpc.add_to_server(server, ns.service(SERVICE), impl)


def test_a_message_of_another_type_fails_the_call_on_aio(ns, google, caplog):
    # grpc.aio logs a serializer's error and sends an empty message instead (the call returned OK);
    # pbj's stub checks the request first and fails the call as a sync channel does
    Req, Money = ns["pbjtest.echo.v1.EchoRequest"], ns["pbjtest.common.v1.Money"]
    _, echo_grpc, types_pb2 = google

    async def body(address):
        errors = []
        async with grpc.aio.insecure_channel(address) as ch:
            # Google's generated stub sends the Money's bytes, read as an EchoRequest (docs/grpc.md)
            assert (await echo_grpc.EchoStub(ch).Unary(types_pb2.Money(currency="EUR"), timeout=TIMEOUT)).text == "EUR"
            stub = pbj.grpc.Stub(ch, ns.service(SERVICE))
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await stub.Unary(Money(currency="EUR"), timeout=TIMEOUT)
            errors.append(err.value)
            with pytest.raises(grpc.aio.AioRpcError) as err:
                stub.ServerStream(Money(), timeout=TIMEOUT)
            errors.append(err.value)
            call = stub.ClientStream(timeout=TIMEOUT)
            await call.write(Req(text="a"))
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await call.write(Money())
            errors.append(err.value)
            assert call.cancelled()
            call = stub.Bidi(iter([Req(text="b"), Money()]), timeout=TIMEOUT)  # from an iterator: cancelled
            with pytest.raises(asyncio.CancelledError):
                [r async for r in call]
            assert (await stub.Unary(Req(text="still"), timeout=TIMEOUT)).text == "still"
        return errors

    errors = run_with_server(ns, body)
    assert len(errors) == 3
    for e, method in zip(errors, ["Unary", "ServerStream", "ClientStream"], strict=True):
        assert (e.code(), e.details()) == (grpc.StatusCode.INTERNAL, "Exception serializing request!")
        assert e.debug_error_string() == (f"/{SERVICE}/{method}: expected a pbjtest.echo.v1.EchoRequest message, "
                                          "got a pbjtest.common.v1.Money message (Money)")
        assert isinstance(e.__cause__, TypeError)
    assert [r.getMessage() for r in caplog.records if r.name == "pbj.grpc"] == [
        f"/{SERVICE}/Bidi: a request iterator gave a message of another type; the call is cancelled: "
        "expected a pbjtest.echo.v1.EchoRequest message, got a pbjtest.common.v1.Money message (Money)"]
