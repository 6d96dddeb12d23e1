"""pbj.grpc on a real grpcio server and channel, both ways against Google's generated code.

Every behaviour test runs for the four pairings of a pbj or Google (``_pb2_grpc``) client with a
pbj or Google server, on the same ``.proto`` files: the four kinds of method, metadata both ways,
deadlines, cancellation and rich status details. The servers are module-scoped and listen on
127.0.0.1 (port 0); every call has a deadline.
"""

from __future__ import annotations

import threading

import grpc
import pytest

import pbj
import pbj.grpc
from tests.grpc_support import (
    SERVICE,
    TIMEOUT,
    PbjEcho,
    compile_google,
    google_servicer,
    load_pbj,
    serving,
)

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(scope="module")
def ns():
    return load_pbj()


@pytest.fixture(scope="module")
def google(tmp_path_factory):
    return compile_google(tmp_path_factory.mktemp("google"))


@pytest.fixture(scope="module")
def pbj_impl(ns):
    return PbjEcho(ns)


@pytest.fixture(scope="module")
def pbj_server(ns, pbj_impl):
    with serving(lambda s: pbj.grpc.add_to_server(s, ns.service(SERVICE), pbj_impl)) as address:
        yield address


@pytest.fixture(scope="module")
def google_server(google):
    _, echo_grpc, _ = google
    with serving(lambda s: echo_grpc.add_EchoServicer_to_server(google_servicer(*google), s)) as address:
        yield address


class Side:
    """A client: its stub and how it builds requests and reads details."""

    def __init__(self, kind, channel, ns, google):
        self.kind = kind
        if kind == "pbj":
            self.stub = pbj.grpc.Stub(channel, ns.service(SERVICE))
            self.Req = ns["pbjtest.echo.v1.EchoRequest"]
            self.Money = ns["pbjtest.common.v1.Money"]
        else:
            echo_pb2, echo_grpc, types_pb2 = google
            self.stub = echo_grpc.EchoStub(channel)
            self.Req = echo_pb2.EchoRequest
            self.Money = types_pb2.Money

    def details(self, error):
        """(code, message, [(reason, meta)]) of the rich status of a failed call."""
        if self.kind == "pbj":
            status = pbj.grpc.status_of(error)
            return status.code, status.message, [(d.reason, dict(d.meta)) for d in pbj.grpc.unpack_details(status)]
        from grpc_status import rpc_status

        from tests.grpc_support import compile_google  # noqa: F401  (the pb2 modules are imported)
        status = rpc_status.from_call(error)
        import importlib
        types_pb2 = importlib.import_module("pbjtest.common.v1.types_pb2")
        out = []
        for d in status.details:
            detail = types_pb2.Detail()
            assert d.Unpack(detail)
            out.append((detail.reason, dict(detail.meta)))
        return status.code, status.message, out


@pytest.fixture(scope="module", params=["pbj", "google"])
def server(request, pbj_server, google_server):
    return request.param, (pbj_server if request.param == "pbj" else google_server)


@pytest.fixture(scope="module", params=["pbj", "google"])
def client(request, server, ns, google):
    channel = grpc.insecure_channel(server[1])
    try:
        yield Side(request.param, channel, ns, google)
    finally:
        channel.close()


def test_unary_with_metadata_both_ways(client):
    req = client.Req(text="hi", blob=b"\x00\xff", money=client.Money(currency="HBAR", units=5))
    reply, call = client.stub.Unary.with_call(req, timeout=TIMEOUT, metadata=(("x-user", "ann"), ("other", "z")))
    assert (reply.text, reply.blob, list(reply.metadata)) == ("hi", b"\x00\xff", ["x-user=ann"])
    assert ("x-trailer", "t") in call.trailing_metadata()
    assert call.code() is grpc.StatusCode.OK


def test_unary_future_and_wait_for_ready(client):
    future = client.stub.Unary.future(client.Req(text="f"), timeout=TIMEOUT, wait_for_ready=True,
                                      compression=grpc.Compression.Gzip)
    assert future.result(timeout=TIMEOUT).text == "f"


def test_server_stream(client):
    replies = list(client.stub.ServerStream(client.Req(text="s", count=3), timeout=TIMEOUT))
    assert [(r.text, r.index) for r in replies] == [("s", 0), ("s", 1), ("s", 2)]


def test_client_stream(client):
    reply = client.stub.ClientStream(iter([client.Req(text=t) for t in "abc"]), timeout=TIMEOUT,
                                     metadata=(("x-k", "v"),))
    assert (reply.text, reply.index, list(reply.metadata)) == ("a,b,c", 3, ["x-k=v"])


def test_bidi_stream(client):
    replies = list(client.stub.Bidi(iter([client.Req(text=t) for t in ("x", "y")]), timeout=TIMEOUT))
    assert [(r.text, r.index) for r in replies] == [("x", 0), ("y", 1)]


def test_deadline_exceeded(client):
    with pytest.raises(grpc.RpcError) as err:
        client.stub.Unary(client.Req(text="slow", delay=0.5), timeout=0.05)
    assert err.value.code() is grpc.StatusCode.DEADLINE_EXCEEDED


def test_rich_status_details(client):
    with pytest.raises(grpc.RpcError) as err:
        client.stub.Unary(client.Req(fail="details"), timeout=TIMEOUT)
    assert err.value.code() is grpc.StatusCode.FAILED_PRECONDITION
    assert err.value.details() == "not now"
    code, message, details = client.details(err.value)
    assert (code, message, details) == (grpc.StatusCode.FAILED_PRECONDITION.value[0], "not now",
                                        [("busy", {"retry": "1s"})])


def test_context_abort(client):
    with pytest.raises(grpc.RpcError) as err:
        client.stub.Unary(client.Req(fail="abort"), timeout=TIMEOUT)
    assert (err.value.code(), err.value.details()) == (grpc.StatusCode.PERMISSION_DENIED, "no")


def test_unimplemented(client):
    with pytest.raises(grpc.RpcError) as err:
        client.stub.Missing(client.Req(), timeout=TIMEOUT)
    assert err.value.code() is grpc.StatusCode.UNIMPLEMENTED


def test_cancel_a_server_stream(client):
    call = client.stub.ServerStream(client.Req(text="c", count=1000, delay=0.01), timeout=TIMEOUT)
    first = next(call)
    assert first.index == 0
    assert call.cancel()
    with pytest.raises(grpc.RpcError) as err:
        list(call)
    assert err.value.code() is grpc.StatusCode.CANCELLED


# ------------------------------------------------------------------ the pbj server's own guarantees

@pytest.fixture(scope="module")
def pbj_channel(pbj_server):
    channel = grpc.insecure_channel(pbj_server)
    yield channel
    channel.close()


def test_garbage_request_is_invalid_argument_and_the_server_keeps_serving(pbj_channel, ns):
    raw = pbj_channel.unary_unary(f"/{SERVICE}/Unary")
    with pytest.raises(grpc.RpcError) as err:
        raw(b"\x22\x05\x0a", timeout=TIMEOUT)  # field 4 (money) claims 5 bytes, 1 follows
    assert err.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert err.value.details() == ("the request is not a valid pbjtest.echo.v1.EchoRequest: "
                                   "truncated input: length runs past the end of the message - at `$.money` at byte 0")
    stream = pbj_channel.stream_stream(f"/{SERVICE}/Bidi")
    good = pbj.encode(ns["pbjtest.echo.v1.EchoRequest"](text="ok"))
    with pytest.raises(grpc.RpcError) as err:
        list(stream(iter([good, b"\xff"]), timeout=TIMEOUT))
    assert err.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert "not a valid pbjtest.echo.v1.EchoRequest" in err.value.details()
    stub = pbj.grpc.Stub(pbj_channel, ns.service(SERVICE))
    assert stub.Unary(ns["pbjtest.echo.v1.EchoRequest"](text="still"), timeout=TIMEOUT).text == "still"


def test_a_message_of_another_type_is_not_sent(pbj_channel, ns):
    # pbj used to send its bytes, read as an EchoRequest at the server (as Google's stubs still do:
    # test_googles_stub_sends_a_message_of_another_type); on aio: test_grpc_aio.py
    stub = pbj.grpc.Stub(pbj_channel, ns.service(SERVICE))
    with pytest.raises(grpc.RpcError) as err:
        stub.Unary(ns["pbjtest.common.v1.Money"](currency="EUR"), timeout=TIMEOUT)
    assert (err.value.code(), err.value.details()) == (grpc.StatusCode.INTERNAL, "Exception serializing request!")
    svc = ns.service(SERVICE)
    wrong = {"Unary": lambda r, c: ns["pbjtest.common.v1.Money"](units=1)}  # a handler returning the wrong type
    with serving(lambda s: pbj.grpc.add_to_server(s, svc, wrong)) as address, grpc.insecure_channel(address) as ch:
        with pytest.raises(grpc.RpcError) as err:
            pbj.grpc.Stub(ch, svc).Unary(ns["pbjtest.echo.v1.EchoRequest"](), timeout=TIMEOUT)
    assert err.value.code() is grpc.StatusCode.INTERNAL


def test_googles_stub_sends_a_message_of_another_type(pbj_channel, google):
    # what docs/grpc.md says of Google's generated stubs: no check, the Money's bytes are read as an
    # EchoRequest (field 1, Money.currency, is EchoRequest.text); on aio: test_grpc_aio.py
    _, echo_grpc, types_pb2 = google
    assert echo_grpc.EchoStub(pbj_channel).Unary(types_pb2.Money(currency="EUR"), timeout=TIMEOUT).text == "EUR"


class PublicArgumentsOnly:
    """A channel whose methods take grpcio's public arguments only (no ``_registered_method``), as a
    grpcio release without it would; it records what each method was given."""

    def __init__(self, channel: grpc.Channel) -> None:
        self.channel = channel
        self.given: list[set[str]] = []

    def _make(self, kind: str, method: str, request_serializer=None, response_deserializer=None):
        self.given.append({"request_serializer", "response_deserializer"})
        return getattr(self.channel, kind)(method, request_serializer=request_serializer,
                                           response_deserializer=response_deserializer)

    def unary_unary(self, method, request_serializer=None, response_deserializer=None):
        return self._make("unary_unary", method, request_serializer, response_deserializer)

    def unary_stream(self, method, request_serializer=None, response_deserializer=None):
        return self._make("unary_stream", method, request_serializer, response_deserializer)

    def stream_unary(self, method, request_serializer=None, response_deserializer=None):
        return self._make("stream_unary", method, request_serializer, response_deserializer)

    def stream_stream(self, method, request_serializer=None, response_deserializer=None):
        return self._make("stream_stream", method, request_serializer, response_deserializer)


class Recording:
    """A ``grpc.Channel`` that records the keywords each multi-callable was made with."""

    def __init__(self, channel: grpc.Channel) -> None:
        self.channel = channel
        self.given: list[set[str]] = []

    def unary_unary(self, method, request_serializer=None, response_deserializer=None, _registered_method=False):
        self.given.append({"request_serializer", "response_deserializer", *(("_registered_method",)
                                                                               if _registered_method else ())})
        return self.channel.unary_unary(method, request_serializer=request_serializer,
                                        response_deserializer=response_deserializer,
                                        _registered_method=_registered_method)

    unary_stream = stream_unary = stream_stream = unary_unary


def test_registered_methods_where_the_channel_takes_them_public_arguments_elsewhere(pbj_channel, ns):
    # grpcio's generated stubs pass its private _registered_method=True; pbj does where the channel's
    # methods take it, and works with a channel (another grpcio release, a wrapper) that does not
    Req = ns["pbjtest.echo.v1.EchoRequest"]
    public = PublicArgumentsOnly(pbj_channel)
    stub = pbj.grpc.Stub(public, ns.service(SERVICE))
    assert stub.Unary(Req(text="a"), timeout=TIMEOUT).text == "a"
    assert [r.index for r in stub.ServerStream(Req(text="b", count=2), timeout=TIMEOUT)] == [0, 1]
    assert stub.ClientStream(iter([Req(text="c"), Req(text="d")]), timeout=TIMEOUT).text == "c,d"
    assert [r.text for r in stub.Bidi(iter([Req(text="e")]), timeout=TIMEOUT)] == ["e"]
    assert public.given and all(g == {"request_serializer", "response_deserializer"} for g in public.given)
    recording = Recording(pbj_channel)
    pbj.grpc.Stub(recording, ns.service(SERVICE))
    assert recording.given and all("_registered_method" in g for g in recording.given)


def test_other_exceptions_are_unknown(pbj_channel, ns):
    stub = pbj.grpc.Stub(pbj_channel, ns.service(SERVICE))
    with pytest.raises(grpc.RpcError) as err:
        stub.Unary(ns["pbjtest.echo.v1.EchoRequest"](fail="crash"), timeout=TIMEOUT)
    assert err.value.code() is grpc.StatusCode.UNKNOWN


def test_cancelled_stream_stops_the_pbj_handler(pbj_channel, ns, pbj_impl):
    stub = pbj.grpc.Stub(pbj_channel, ns.service(SERVICE))
    before = len(pbj_impl.ended)
    call = stub.ServerStream(ns["pbjtest.echo.v1.EchoRequest"](count=10_000, delay=0.01), timeout=TIMEOUT)
    next(call)
    call.cancel()
    for _ in range(500):  # grpcio runs the termination callback when it sees the cancellation
        if len(pbj_impl.ended) > before:
            break
        threading.Event().wait(0.01)
    cancelled, sent = pbj_impl.ended[before]
    assert cancelled and 1 <= sent < 10_000  # the handler was not run to its end


def test_a_message_over_the_size_limit_is_resource_exhausted(pbj_channel, ns):
    stub = pbj.grpc.Stub(pbj_channel, ns.service(SERVICE))
    Req = ns["pbjtest.echo.v1.EchoRequest"]
    big = Req(blob=b"x" * (4 * 1024 * 1024 + 16))
    with pytest.raises(grpc.RpcError) as err:
        stub.Unary(big, timeout=TIMEOUT)
    assert err.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "larger than max" in err.value.details()
    # a channel and server that raise the limit carry it
    limit = [("grpc.max_receive_message_length", 8 * 1024 * 1024), ("grpc.max_send_message_length", 8 * 1024 * 1024)]
    with serving(lambda s: pbj.grpc.add_to_server(s, ns.service(SERVICE), PbjEcho(ns)), options=limit) as address:
        with grpc.insecure_channel(address, options=limit) as channel:
            reply = pbj.grpc.Stub(channel, ns.service(SERVICE)).Unary(big, timeout=TIMEOUT)
    assert len(reply.blob) == 4 * 1024 * 1024 + 16


def test_functions_registered_by_name(ns):
    svc = ns.service(SERVICE)
    Reply = ns["pbjtest.echo.v1.EchoReply"]
    impl = {"Unary": lambda r, c: Reply(text=r.text.upper()),
            "ServerStream": lambda r, c: (Reply(index=i) for i in range(r.count))}
    with serving(lambda s: pbj.grpc.add_to_server(s, svc, impl)) as address, grpc.insecure_channel(address) as ch:
        stub = pbj.grpc.Stub(ch, svc)
        Req = ns["pbjtest.echo.v1.EchoRequest"]
        assert stub.Unary(Req(text="ab"), timeout=TIMEOUT).text == "AB"
        assert [r.index for r in stub.ServerStream(Req(count=2), timeout=TIMEOUT)] == [0, 1]
        with pytest.raises(grpc.RpcError) as err:
            stub.Bidi(iter([Req()]), timeout=TIMEOUT).next()
        assert err.value.code() is grpc.StatusCode.UNIMPLEMENTED
        assert err.value.details() == f"method {SERVICE}/Bidi is not implemented"
    with pytest.raises(KeyError, match="has no method 'Unray'"):
        pbj.grpc.add_to_server(grpc.server(None), svc, {"Unray": impl["Unary"]})


def test_not_implemented_error_is_unimplemented(ns):
    svc = ns.service(SERVICE)

    class Partial(pbj.grpc.Servicer, service=svc):
        def Unary(self, request, context):
            raise NotImplementedError("later")

    with serving(Partial().add_to_server) as address, grpc.insecure_channel(address) as ch:
        with pytest.raises(grpc.RpcError) as err:
            pbj.grpc.Stub(ch, svc).Unary(ns["pbjtest.echo.v1.EchoRequest"](), timeout=TIMEOUT)
    assert (err.value.code(), err.value.details()) == (grpc.StatusCode.UNIMPLEMENTED, "later")


def test_servicer_refuses_a_misspelt_method(ns):
    with pytest.raises(TypeError, match="has no method 'Unry'; did you mean 'Unary'"):
        class Bad(pbj.grpc.Servicer, service=ns.service(SERVICE)):
            def Unry(self, request, context): ...

    class WithHelper(pbj.grpc.Servicer, service=ns.service(SERVICE)):
        def load_config(self):  # a helper named like no method
            return 1
    assert WithHelper().load_config() == 1
    with pytest.raises(TypeError, match="needs a service"):
        class NoService(pbj.grpc.Servicer):
            pass
