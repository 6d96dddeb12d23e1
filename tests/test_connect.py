"""pbj.connect end to end: pbj's clients against pbj's applications on real servers over 127.0.0.1.

Every call kind over every protocol a server can carry (uvicorn: HTTP/1.1, Connect and gRPC-Web;
hypercorn: cleartext HTTP/2 too, so gRPC; wsgiref: a WSGI application), both codecs, errors with
rich details, deadlines, metadata, compression, read limits, reflection and health.
"""

from __future__ import annotations

import asyncio
import gzip
import http.client
import json
import time
import urllib.error
import urllib.request

import pytest

import pbj
import pbj.connect
from pbj.connect import Code, ConnectError, ResponseMetadata
from pbj.connect.health import Health, ServingStatus, check, list_statuses
from tests.connect_support import (
    SERVICE,
    TIMEOUT,
    AsyncEcho,
    SyncEcho,
    hypercorn_server,
    load_pbj,
    uvicorn_server,
    wsgi_server,
)

ns = load_pbj()
echo = ns.service(SERVICE)
Request, Reply = ns["pbjtest.echo.v1.EchoRequest"], ns["pbjtest.echo.v1.EchoReply"]
Detail = ns["pbjtest.common.v1.Detail"]


@pytest.fixture(scope="module")
def servers():
    """One server of each kind, serving the echo service, reflection and health; name -> (base URL, servicer)."""
    health = Health({"": ServingStatus.SERVING, SERVICE: ServingStatus.SERVING})
    a_echo, h_echo, w_echo = AsyncEcho(ns), AsyncEcho(ns), SyncEcho(ns)
    with (uvicorn_server(pbj.connect.ASGIApplication((echo, a_echo), reflection=[ns], health=health)) as uv,
          hypercorn_server(pbj.connect.ASGIApplication((echo, h_echo), reflection=[ns], health=health)) as hc,
          wsgi_server(pbj.connect.WSGIApplication((echo, w_echo), reflection=[ns], health=health)) as ws):
        yield {"uvicorn": (uv, a_echo), "hypercorn": (hc, h_echo), "wsgi": (ws, w_echo), "health": health}
    health.close()


#: (server, protocol) pairs each server carries: gRPC needs HTTP/2 and trailers (hypercorn only).
CARRIED = [("uvicorn", "connect"), ("uvicorn", "grpc-web"), ("hypercorn", "connect"), ("hypercorn", "grpc-web"),
           ("hypercorn", "grpc"), ("wsgi", "connect"), ("wsgi", "grpc-web")]


def client(servers, server, protocol, **kw):
    return pbj.connect.ClientSync(servers[server][0], echo, protocol=protocol, timeout=TIMEOUT, **kw)


@pytest.mark.parametrize(("server", "protocol"), CARRIED)
def test_every_call_kind(servers, server, protocol):
    with client(servers, server, protocol) as c:
        assert c.Unary(Request(text="a", blob=b"\x00\xff")) == Reply(text="a", blob=b"\x00\xff")
        assert [(r.text, r.index) for r in c.ServerStream(Request(text="s", count=3))] == [("s", 0), ("s", 1), ("s", 2)]
        assert list(c.ServerStream(Request(count=0))) == []
        requests = [Request(text="x"), Request(text="y"), Request(text="z")]
        # wsgiref cannot read a chunked request body: a list is sent as one body with its length
        gathered = c.ClientStream(requests if server == "wsgi" else iter(requests))
        assert (gathered.text, gathered.index) == ("x,y,z", 3)
        assert [(r.text, r.index) for r in c.Bidi([Request(text="p"), Request(text="q")])] == [("p", 0), ("q", 1)]


@pytest.mark.parametrize(("server", "protocol"), [("uvicorn", "connect"), ("hypercorn", "grpc"), ("wsgi", "grpc-web")])
def test_the_json_codec(servers, server, protocol):
    with client(servers, server, protocol, codec="json") as c:
        assert c.Unary(Request(text="j", blob=b"\x01")) == Reply(text="j", blob=b"\x01")
        assert [r.index for r in c.ServerStream(Request(count=2))] == [0, 1]
        assert c.ClientStream([Request(text="a"), Request(text="b")]).text == "a,b"


def test_the_async_client(servers):
    async def calls(url, protocol):
        async with pbj.connect.Client(url, echo, protocol=protocol, timeout=TIMEOUT) as c:
            one = await c.Unary(Request(text="a"))
            many = [r.index async for r in c.ServerStream(Request(count=3))]

            async def requests():
                for t in "uvw":
                    yield Request(text=t)
            gathered = await c.ClientStream(requests())
            chat = [r.text async for r in c.Bidi([Request(text="m"), Request(text="n")])]
            return one.text, many, gathered.text, chat

    for server, protocol in [("uvicorn", "connect"), ("hypercorn", "grpc"), ("hypercorn", "grpc-web")]:
        assert asyncio.run(calls(servers[server][0], protocol)) == ("a", [0, 1, 2], "u,v,w", ["m", "n"])


@pytest.mark.parametrize(("server", "protocol"), CARRIED)
def test_errors_carry_code_message_details_and_trailers(servers, server, protocol):
    with client(servers, server, protocol) as c:
        with ResponseMetadata() as meta, pytest.raises(ConnectError) as caught:
            c.Unary(Request(fail="details"))
        assert (caught.value.code, caught.value.message) == (Code.FAILED_PRECONDITION, "not now")
        assert pbj.connect.unpack_details(caught.value, Detail) == [Detail(reason="busy", meta={"retry": "1s"})]
        assert meta.trailers.get("x-failed") == "yes"
        with pytest.raises(ConnectError) as caught:
            list(c.ServerStream(Request(count=2, fail="details")))
        assert pbj.connect.unpack_details(caught.value, Detail)[0].reason == "busy"
        with pytest.raises(ConnectError) as caught:
            c.Unary(Request(fail="abort"))
        assert (caught.value.code, caught.value.message) == (Code.PERMISSION_DENIED, "no")
        with pytest.raises(ConnectError) as caught:
            c.Missing(Request())
        assert (caught.value.code, caught.value.message) == (
            Code.UNIMPLEMENTED, "method pbjtest.echo.v1.Echo/Missing is not implemented")
        with pytest.raises(ConnectError) as caught:
            c.Unary(Request(fail="unimplemented"))
        assert caught.value.code is Code.UNIMPLEMENTED
        assert c.Unary(Request(text="after")).text == "after"


def test_a_handler_crash_is_unknown_and_the_server_goes_on(servers, capsys, caplog):
    with client(servers, "wsgi", "connect") as c:
        with pytest.raises(ConnectError) as caught:
            c.Unary(Request(fail="crash"))
        assert (caught.value.code, caught.value.message) == (Code.UNKNOWN, "boom")
        assert c.Unary(Request(text="ok")).text == "ok"
    # uvicorn closes a connection whose application raised after answering: the crash is logged instead, and
    # the next call on the same kept-alive connection (a unary call, then a stream that crashes) is answered
    conn = http.client.HTTPConnection(servers["uvicorn"][0].removeprefix("http://"), timeout=TIMEOUT)
    crash_stream = pbj.encode(Request(fail="crash", count=2))
    try:
        for path, body, expected in [
                ("Unary", pbj.encode(Request(fail="crash")), 500), ("Unary", pbj.encode(Request(text="ok")), 200),
                ("ServerStream", b"\0" + len(crash_stream).to_bytes(4, "big") + crash_stream, 200),
                ("Unary", pbj.encode(Request(text="ok")), 200)]:
            stream = path == "ServerStream"
            conn.request("POST", f"/{SERVICE}/{path}", body=body,
                         headers={"content-type": "application/connect+proto" if stream else "application/proto"})
            answer = conn.getresponse()
            assert (answer.status, answer.getheader("connection")) == (expected, None), path
            answered = answer.read()
            if stream:  # the end message: its error, after the flag and length
                assert json.loads(answered[5:])["error"] == {"code": "unknown", "message": "boom"}
    finally:
        conn.close()
    crashes = [r for r in caplog.records if r.name == "pbj.connect"]
    assert [(r.levelname, r.exc_info[1].args) for r in crashes] == [("ERROR", ("boom",))] * 2


@pytest.mark.parametrize(("server", "protocol"), CARRIED)
def test_metadata_both_ways(servers, server, protocol):
    with client(servers, server, protocol) as c, ResponseMetadata() as meta:
        reply = c.Unary(Request(text="m"), headers={"x-trace": "7", "x-user": "ann"})
    assert sorted(reply.metadata) == ["x-trace=7", "x-user=ann"]
    assert meta.headers.get("x-header") == "h"
    assert meta.trailers.get("x-trailer") == "t"


@pytest.mark.parametrize(("server", "protocol"), [("uvicorn", "connect"), ("uvicorn", "grpc-web"),
                                                  ("hypercorn", "grpc")])
def test_a_deadline_expires_on_both_sides(servers, server, protocol):
    servicer = servers[server][1]
    before = len(servicer.ended)
    with client(servers, server, protocol) as c:
        with pytest.raises(ConnectError) as caught:
            c.Unary(Request(delay=5.0), timeout=0.3)
        assert caught.value.code is Code.DEADLINE_EXCEEDED
        with pytest.raises(ConnectError) as caught:
            list(c.ServerStream(Request(count=200, delay=0.05), timeout=0.5))  # 10 s of replies
        assert caught.value.code is Code.DEADLINE_EXCEEDED
    # the server cancelled the handler at the deadline: its stream ended, well short of 200 replies
    deadline = time.monotonic() + TIMEOUT
    while len(servicer.ended) == before and time.monotonic() < deadline:
        time.sleep(0.02)
    assert len(servicer.ended) > before and servicer.ended[-1] < 200


def test_a_wsgi_handler_sees_its_deadline(servers):
    seen = []

    def unary(request, ctx):
        seen.append(ctx.timeout_ms)
        return Reply()
    app = pbj.connect.WSGIApplication((echo, {"Unary": unary}))
    with wsgi_server(app) as url, pbj.connect.ClientSync(url, echo) as c:
        c.Unary(Request(), timeout=60)
    assert 0 < seen[0] <= 60_000


def test_compression_both_ways(servers):
    from connectrpc.compression.gzip import GzipCompression
    big = Request(text="z" * 5000)
    for server, protocol in [("uvicorn", "connect"), ("hypercorn", "grpc"), ("wsgi", "grpc-web")]:
        with client(servers, server, protocol, send_compression=GzipCompression()) as c, ResponseMetadata() as meta:
            assert c.Unary(big).text == big.text
            assert [r.text for r in c.ServerStream(Request(text="s" * 3000, count=2))] == ["s" * 3000] * 2
        encoding = "connect-content-encoding" if protocol == "connect" else "grpc-encoding"  # the stream, the last call
        assert meta.headers.get(encoding) == "gzip"
    # a server that takes no compression refuses a compressed request
    with (wsgi_server(pbj.connect.WSGIApplication((echo, SyncEcho(ns)), compressions=())) as url,
          pbj.connect.ClientSync(url, echo, send_compression=GzipCompression()) as c):
        with pytest.raises(ConnectError) as caught:
            c.Unary(big)
        assert caught.value.code is Code.UNIMPLEMENTED
        assert "unknown compression" in caught.value.message


def test_read_limits_on_both_sides():
    app = pbj.connect.ASGIApplication((echo, AsyncEcho(ns)), read_max_bytes=1000)
    with uvicorn_server(app) as url:
        for protocol in ("connect", "grpc-web"):
            with pbj.connect.ClientSync(url, echo, protocol=protocol, timeout=TIMEOUT) as c:
                assert c.Unary(Request(blob=b"x" * 900)).blob == b"x" * 900
                with pytest.raises(ConnectError) as caught:
                    c.Unary(Request(blob=b"x" * 2000))
                assert caught.value.code is Code.RESOURCE_EXHAUSTED
                with pytest.raises(ConnectError) as caught:
                    c.ClientStream([Request(blob=b"x" * 10), Request(blob=b"x" * 2000)])
                assert caught.value.code is Code.RESOURCE_EXHAUSTED
        with pbj.connect.ClientSync(url, echo, read_max_bytes=100, timeout=TIMEOUT) as c:
            with pytest.raises(ConnectError) as caught:
                c.Unary(Request(blob=b"y" * 500))
            assert caught.value.code is Code.RESOURCE_EXHAUSTED


def _post(url, path, body, content_type, extra=()):
    req = urllib.request.Request(url + path, data=body, method="POST",
                                 headers={"content-type": content_type, **dict(extra)})
    try:
        with urllib.request.urlopen(req, timeout=TIMEOUT) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


@pytest.mark.parametrize("server", ["uvicorn", "wsgi"])
def test_bytes_that_do_not_decode_answer_invalid_argument_with_the_decode_error(servers, server):
    url = servers[server][0]
    status, _, body = _post(url, "/pbjtest.echo.v1.Echo/Unary", b"\x0a\x05ab", "application/proto")
    error = json.loads(body)
    assert (status, error["code"]) == (400, "invalid_argument")
    assert error["message"].endswith("truncated input: length runs past the end of the message - at `$.text` "
                                     "at byte 0")
    status, _, body = _post(url, "/pbjtest.echo.v1.Echo/Unary", b'{"text": 5}', "application/json")
    assert (status, json.loads(body)["code"]) == (400, "invalid_argument")
    status, _, body = _post(url, "/pbjtest.echo.v1.Echo/Unary", b'{"text": "fine"}', "application/json")
    assert (status, json.loads(body)) == (200, {"text": "fine"})


def test_a_get_request_for_a_method_without_side_effects(servers):
    with client(servers, "uvicorn", "connect") as c:
        assert c.Unary(Request(text="get"), use_get=True).text == "get"
    with client(servers, "wsgi", "connect", codec="json") as c:
        assert c.Unary(Request(text="get"), use_get=True).text == "get"
    with urllib.request.urlopen(servers["uvicorn"][0] + "/pbjtest.echo.v1.Echo/Unary?encoding=json&message="
                                + urllib.request.quote('{"text":"q"}'), timeout=TIMEOUT) as resp:
        assert json.loads(resp.read()) == {"text": "q"}


@pytest.mark.parametrize(("server", "protocol"), [("hypercorn", "grpc"), ("hypercorn", "connect"),
                                                  ("uvicorn", "grpc-web"), ("wsgi", "connect")])
def test_reflection_and_health_on_the_same_application(servers, server, protocol):
    url = servers[server][0]
    remote = pbj.connect.reflect(url, protocol=protocol, timeout=TIMEOUT)
    assert list(remote.services) == [SERVICE, "grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection"]
    assert remote.service(SERVICE) == echo
    with pbj.connect.ClientSync(url, remote.service(SERVICE), protocol=protocol, timeout=TIMEOUT) as c:
        assert c.Unary(remote["pbjtest.echo.v1.EchoRequest"](text="r")).text == "r"
    assert check(url, protocol=protocol) is ServingStatus.SERVING
    assert list_statuses(url, protocol=protocol) == {"": ServingStatus.SERVING, SERVICE: ServingStatus.SERVING}
    with pytest.raises(ConnectError) as caught:
        check(url, "no.Such", protocol=protocol)
    assert caught.value.code is Code.NOT_FOUND


@pytest.mark.parametrize("kind", ["asgi", "wsgi"])
def test_health_watch_streams_each_change(kind):
    from pbj.connect.health import SERVICE as HEALTH
    from pbj.grpc._common import HealthCheckRequest
    health = Health({"watched": ServingStatus.NOT_SERVING})
    app = (pbj.connect.ASGIApplication(health=health) if kind == "asgi" else pbj.connect.WSGIApplication(health=health))
    with (uvicorn_server if kind == "asgi" else wsgi_server)(app) as url:
        with pbj.connect.ClientSync(url, HEALTH) as c:  # a watch nothing changes ends at its deadline
            with pytest.raises(ConnectError) as caught:
                list(c.Watch(HealthCheckRequest(service="new"), timeout=1.0))
            assert caught.value.code is Code.DEADLINE_EXCEEDED
        with pbj.connect.ClientSync(url, HEALTH, timeout=TIMEOUT) as c:
            stream = iter(c.Watch(HealthCheckRequest(service="watched")))
            assert next(stream).status is ServingStatus.NOT_SERVING
            health.set("watched", ServingStatus.SERVING)
            assert next(stream).status is ServingStatus.SERVING
            health.set("other", ServingStatus.SERVING)  # another name's change sends nothing
            health.close()  # the server's end: the stream ends
            assert list(stream) == []


def test_a_declared_service_with_reflection_from_its_classes():
    @pbj.message(full_name="notes.v1.Note")
    class Note:
        title: str = pbj.field(1, "string")
        tags: tuple[str, ...] = pbj.field(2, "string", repeated=True)

    @pbj.message(full_name="notes.v1.Saved")
    class Saved:
        id: int = pbj.field(1, "uint64")

    notes = pbj.service("notes.v1.Notes", pbj.rpc("Save", Note, Saved))

    class Notes(pbj.connect.Servicer, service=notes):
        def Save(self, request, ctx):
            return Saved(id=len(request.tags))

    with wsgi_server(pbj.connect.WSGIApplication(Notes(), reflection=True)) as url:
        remote = pbj.connect.reflect(url)
        assert remote.service("notes.v1.Notes") == notes
        with pbj.connect.ClientSync(url, notes) as c:
            assert c.Save(Note(tags=("a", "b"))) == Saved(id=2)
        with pbj.connect.ClientSync(url, remote.service("notes.v1.Notes")) as c:  # the loaded twin, same bytes
            assert c.Save(remote["notes.v1.Note"](tags=["a"])).id == 1


def test_handlers_of_the_wrong_kind_are_refused_when_the_application_is_made():
    class Sync(pbj.connect.Servicer, service=echo):
        def Unary(self, r, ctx):
            return Reply()

    class Async(pbj.connect.Servicer, service=echo):
        async def Unary(self, r, ctx):
            return Reply()

        async def ServerStream(self, r, ctx):
            return Reply()  # a coroutine, not an async generator

    with pytest.raises(TypeError, match="under ASGI the handler must be a coroutine function"):
        pbj.connect.ASGIApplication(Sync())
    with pytest.raises(TypeError, match="is async: serve it with pbj\\.connect\\.ASGIApplication"):
        pbj.connect.WSGIApplication(Async())
    with pytest.raises(TypeError, match="must be an async generator"):
        pbj.connect.ASGIApplication((echo, {"ServerStream": Async().ServerStream}))
    with pytest.raises(KeyError, match="has no method 'Unry'"):
        pbj.connect.WSGIApplication((echo, {"Unry": Sync().Unary}))
    with pytest.raises(TypeError, match="did you mean 'Unary'"):
        class Typo(pbj.connect.Servicer, service=echo):
            def Unray(self, r, ctx):
                return Reply()
    with pytest.raises(ValueError, match="served twice"):
        pbj.connect.WSGIApplication(Sync(), Sync())
    with pytest.raises(TypeError, match="Servicer instance"):
        pbj.connect.WSGIApplication(object())


def test_a_reply_of_another_type_and_a_request_of_another_type():
    app = pbj.connect.WSGIApplication((echo, {"Unary": lambda r, ctx: Request(text="wrong")}))
    with wsgi_server(app) as url, pbj.connect.ClientSync(url, echo, timeout=TIMEOUT) as c:
        with pytest.raises(ConnectError) as caught:
            c.Unary(Request())
        assert caught.value.code is Code.UNKNOWN
        assert caught.value.message == ("the handler of pbjtest.echo.v1.Echo/Unary returned a "
                                        "pbjtest.echo.v1.EchoRequest message, not a pbjtest.echo.v1.EchoReply message")
        with pytest.raises(TypeError, match=r"takes a pbjtest\.echo\.v1\.EchoRequest message, not a "
                                            r"pbjtest\.echo\.v1\.EchoReply message"):
            c.Unary(Reply())
        with pytest.raises(TypeError, match="not str"):
            list(c.Bidi(["text"]))
        from google.protobuf import timestamp_pb2
        with pytest.raises(TypeError, match=r"EchoRequest message, not Timestamp \(a Google protobuf message: "
                                            r"convert it with pbj\.from_google\)"):
            c.Unary(timestamp_pb2.Timestamp())


def test_a_grpc_rpc_error_raised_by_a_shared_handler():
    import grpc

    import pbj.grpc

    def unary(r, ctx):
        raise pbj.grpc.RpcError(grpc.StatusCode.NOT_FOUND, "gone", details=[Detail(reason="r")],
                                metadata=[("x-m", "1")])
    with (wsgi_server(pbj.connect.WSGIApplication((echo, {"Unary": unary}))) as url,
          pbj.connect.ClientSync(url, echo, timeout=TIMEOUT) as c, ResponseMetadata() as meta):
        with pytest.raises(ConnectError) as caught:
            c.Unary(Request())
    assert (caught.value.code, caught.value.message) == (Code.NOT_FOUND, "gone")
    assert pbj.connect.unpack_details(caught.value, Detail) == [Detail(reason="r")]
    assert meta.trailers.get("x-m") == "1"


def test_codes_in_every_spelling():
    from pbj.connect.errors import code_of, grpc_code
    assert code_of("not_found") is code_of("NOT_FOUND") is code_of(5) is Code.NOT_FOUND
    import grpc
    assert code_of(grpc.StatusCode.UNAVAILABLE) is Code.UNAVAILABLE
    assert [grpc_code(c) for c in Code] == list(range(1, 17))
    for bad in (0, 17, "ok", "nope", True, None):
        with pytest.raises(ValueError):
            code_of(bad)
    error = pbj.connect.RpcError(3, "bad", details=[Detail(reason="x")])
    assert str(error) == "INVALID_ARGUMENT: bad" and isinstance(error, pbj.PbjError)
    with pytest.raises(TypeError, match="must be a pbj message"):
        pbj.connect.RpcError(3, "bad", details=["text"])


def test_a_gzip_body_the_server_cannot_inflate_is_invalid_argument(servers):
    status, _, body = _post(servers["uvicorn"][0], "/pbjtest.echo.v1.Echo/Unary", b"not gzip", "application/proto",
                            [("content-encoding", "gzip")])
    assert (status, json.loads(body)["code"]) == (400, "invalid_argument")
    status, _, body = _post(servers["uvicorn"][0], "/pbjtest.echo.v1.Echo/Unary",
                            gzip.compress(pbj.encode(Request(text="gz"))), "application/proto",
                            [("content-encoding", "gzip")])
    assert (status, pbj.decode(Reply, body).text) == (200, "gz")


def test_a_grpc_servicer_serves_under_wsgi_too():
    """A pbj.grpc.Servicer whose methods use only the request (and raise pbj.grpc.RpcError) is a WSGI implementation."""
    import grpc

    import pbj.grpc

    class Shared(pbj.grpc.Servicer, service=echo):
        def Unary(self, request, context):
            if request.fail:
                raise pbj.grpc.RpcError(grpc.StatusCode.OUT_OF_RANGE, request.fail)
            return Reply(text=request.text)

    with wsgi_server(pbj.connect.WSGIApplication(Shared())) as url, pbj.connect.ClientSync(url, echo) as c:
        assert c.Unary(Request(text="shared")).text == "shared"
        with pytest.raises(ConnectError) as caught:
            c.Unary(Request(fail="too far"))
        assert (caught.value.code, caught.value.message) == (Code.OUT_OF_RANGE, "too far")


def test_the_json_codec_reads_any_with_pbjs_registry_and_unknown_members_as_asked():
    from pbj.connect.codec import JSONCodec
    from pbj.wellknown import Any as AnyMessage
    from pbj.wkt import pack
    codec = JSONCodec()
    packed = pack(Detail(reason="r", meta={"k": "v"}))
    text = codec.encode(packed)
    assert json.loads(text) == {"@type": "type.googleapis.com/pbjtest.common.v1.Detail", "reason": "r",
                                "meta": {"k": "v"}}
    assert codec.decode(bytearray(text), AnyMessage) == packed
    assert codec.decode(b'{"text": "t", "later": 1}', Request) == Request(text="t")  # Connect's default
    with pytest.raises(pbj.JSONError, match="later"):
        JSONCodec(ignore_unknown=False).decode(b'{"text": "t", "later": 1}', Request)
    assert JSONCodec(emit_defaults=True).encode(Reply()).startswith(b'{"text":"","index":0')
    with pytest.raises(TypeError, match="pbj message classes"):
        codec.decode(b"{}", dict)


@pytest.mark.parametrize("timeout", [0, -1, float("nan"), float("inf"), 1e300, 1e10])
def test_a_deadline_connect_cannot_send_is_a_value_error(timeout):
    # connect-timeout-ms holds 10 digits: a longer deadline was an OverflowError (inf) or a Rust panic
    # of the HTTP client (pyo3's PanicException, a BaseException), raised by the call, not pbj's error
    for make in (pbj.connect.ClientSync, pbj.connect.Client):
        with pytest.raises(ValueError, match=r"timeout must be a positive number of seconds up to 9,999,999\.999"):
            make("http://127.0.0.1:9", echo, timeout=timeout)
    with pbj.connect.ClientSync("http://127.0.0.1:9", echo) as c:
        with pytest.raises(ValueError, match=r"up to 9,999,999\.999"):
            c.Unary(Request(), timeout=timeout)
