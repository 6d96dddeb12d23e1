"""Server reflection both ways (with HAPI's services: imports across nested packages), and the health service.

* Google's ``ProtoReflectionDescriptorDatabase`` lists and resolves what a pbj server serves from
  its namespaces' own descriptors;
* ``pbj.grpc.reflect`` against a Google server with ``grpc_reflection`` gives classes and services
  that talk to it.
"""

from __future__ import annotations

import asyncio
import enum
from importlib.resources import files

import grpc
import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from grpc_reflection.v1alpha import reflection as google_reflection
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import ProtoReflectionDescriptorDatabase

import pbj
import pbj.grpc
from pbj.grpc.health import Health, ServingStatus, check
from pbj.grpc.reflection import ReflectionError, add_reflection, reflect, reflect_async
from pbj.wellknown import Timestamp
from tests.grpc_support import SERVICE, TIMEOUT, PbjEcho, compile_google, google_servicer, load_pbj, serving

pytestmark = pytest.mark.timeout(60)

#: A HAPI service in a nested package whose messages are small (HAPI's Query and Transaction take seconds to
#: compile on first use, in each namespace).
BLOCKS = "com.hedera.hapi.block.BlockStreamService"
HAPI_SET = (files("pbj") / "data" / "hapi-v0.55.0.binpb").read_bytes()


@pytest.fixture(scope="module")
def hapi():
    return pbj.load_descriptor_set(HAPI_SET)


@pytest.fixture(scope="module")
def echo():
    return load_pbj()


@pytest.fixture(scope="module")
def health():
    h = Health({"": ServingStatus.SERVING, SERVICE: ServingStatus.NOT_SERVING})
    yield h
    h.close()


@pytest.fixture(scope="module")
def pbj_server(hapi, echo, health):
    status = hapi.service(BLOCKS).serverStatus

    def register(server):
        pbj.grpc.add_to_server(server, echo.service(SERVICE), PbjEcho(echo))
        pbj.grpc.add_to_server(server, hapi.service(BLOCKS), {
            "serverStatus": lambda q, c: status.output(first_available_block=42)})
        health.add_to_server(server)
        add_reflection(server, hapi, echo)
    with serving(register) as address:
        yield address


@pytest.fixture(scope="module")
def channel(pbj_server):
    ch = grpc.insecure_channel(pbj_server)
    yield ch
    ch.close()


def test_google_database_lists_and_resolves_a_pbj_server(channel, hapi):
    db = ProtoReflectionDescriptorDatabase(channel)
    assert sorted(db.get_services()) == sorted([*hapi.services, SERVICE, "grpc.reflection.v1.ServerReflection"])
    pool = descriptor_pool.DescriptorPool(db)
    crypto = pool.FindServiceByName("proto.CryptoService")
    assert [m.name for m in crypto.methods] == list(hapi.service("proto.CryptoService").methods)
    assert crypto.methods_by_name["cryptoGetBalance"].input_type.full_name == "proto.Query"
    block = pool.FindMessageTypeByName("com.hedera.hapi.block.stream.Block")  # a nested package, many imports
    assert block.fields_by_name["items"].message_type.full_name == "com.hedera.hapi.block.stream.BlockItem"
    echo = pool.FindServiceByName(SERVICE)
    assert echo.methods_by_name["Unary"].output_type.fields_by_name["at"].message_type.full_name == \
        "google.protobuf.Timestamp"
    # Google's classes from the served descriptors read what pbj writes
    Money = message_factory.GetMessageClass(pool.FindMessageTypeByName("pbjtest.common.v1.Money"))
    assert Money.FromString(pbj.encode(load_pbj()["pbjtest.common.v1.Money"](units=7))).units == 7
    assert pool.FindFileContainingSymbol("proto.CryptoService").name == "crypto_service.proto"


def test_reflect_a_pbj_server(channel, hapi):
    ns = reflect(channel)
    assert set(ns.services) == {*hapi.services, SERVICE, "grpc.reflection.v1.ServerReflection"}
    assert ns.service("proto.CryptoService") == hapi.service("proto.CryptoService")
    stub = pbj.grpc.Stub(channel, ns.service(BLOCKS))
    reply = stub.serverStatus(ns["com.hedera.hapi.block.ServerStatusRequest"](), timeout=TIMEOUT)
    assert reply.first_available_block == 42
    assert type(reply) is ns["com.hedera.hapi.block.ServerStatusResponse"]


def test_reflection_errors(channel):
    ns = pbj.grpc.reflection.reflection_schema()
    stub = pbj.grpc.Stub(channel, ns.service("grpc.reflection.v1alpha.ServerReflection"))
    Req = ns["grpc.reflection.v1alpha.ServerReflectionRequest"]
    Ext = ns["grpc.reflection.v1alpha.ExtensionRequest"]
    answers = list(stub.ServerReflectionInfo(iter([
        Req(message_request=pbj.OneOf("file_containing_symbol", "no.such.Thing")),
        Req(message_request=pbj.OneOf("file_by_filename", "nope.proto")),
        Req(message_request=pbj.OneOf("file_containing_extension", Ext(containing_type="proto.Query",
                                                                       extension_number=1000))),
        Req(host="h", message_request=pbj.OneOf("all_extension_numbers_of_type", "proto.Query")),
        Req(),
    ]), timeout=TIMEOUT))
    kinds = [(a.message_response.which, getattr(a.message_response.value, "error_code", None)) for a in answers]
    assert kinds == [("error_response", 5), ("error_response", 5), ("error_response", 5),
                     ("all_extension_numbers_response", None), ("error_response", 3)]
    assert answers[3].valid_host == "h" and answers[3].original_request.host == "h"
    assert answers[0].message_response.value.error_message == "no symbol named 'no.such.Thing'"


def test_reflect_a_server_without_reflection(echo):
    # one line naming what to do, not grpcio's _MultiThreadedRendezvous; the failed call is the cause
    async def aio(address):
        async with grpc.aio.insecure_channel(address) as ch:
            with pytest.raises(ReflectionError) as err:
                await reflect_async(ch, timeout=TIMEOUT)
            return err.value

    with serving(lambda s: pbj.grpc.add_to_server(s, echo.service(SERVICE), PbjEcho(echo))) as address:
        with grpc.insecure_channel(address) as ch, pytest.raises(ReflectionError) as err:
            reflect(ch, timeout=TIMEOUT)
        aio_error = asyncio.run(aio(address))
    for e in (err.value, aio_error):
        assert str(e) == ("the server does not serve reflection (grpc.reflection.v1 and v1alpha answered "
                          "UNIMPLEMENTED): load its schema with pbj.load_proto or pbj.load_descriptor_set instead")
        assert isinstance(e.__cause__, grpc.RpcError)
    assert err.value.__cause__.code() is grpc.StatusCode.UNIMPLEMENTED
    # grpcio's aio client may still be sending the probe when the server answers; the send then fails
    # and grpcio reports INTERNAL "execute_batch" in place of the server's UNIMPLEMENTED (seen in CI)
    aio_cause = aio_error.__cause__
    assert aio_cause.code() is grpc.StatusCode.UNIMPLEMENTED or (
        aio_cause.code() is grpc.StatusCode.INTERNAL and "execute_batch" in aio_cause.debug_error_string())


def test_reflect_async_a_pbj_server(pbj_server, hapi):
    async def main():
        async with grpc.aio.insecure_channel(pbj_server) as ch:
            ns = await reflect_async(ch)
            reply = await pbj.grpc.Stub(ch, ns.service(BLOCKS)).serverStatus(
                ns["com.hedera.hapi.block.ServerStatusRequest"](), timeout=TIMEOUT)
            return ns, reply
    ns, reply = asyncio.run(main())
    assert ns.service(BLOCKS) == hapi.service(BLOCKS)
    assert reply.first_available_block == 42


@pytest.fixture(scope="module")
def google_server(tmp_path_factory):
    """A Google server: the echo service from generated code, HAPI's CryptoService from a descriptor pool
    (generic handler on Google's classes), reflection by grpc_reflection for both."""
    google = compile_google(tmp_path_factory.mktemp("google"))
    _, echo_grpc, _ = google
    fds = descriptor_pb2.FileDescriptorSet.FromString(HAPI_SET)
    pool = descriptor_pool.DescriptorPool()
    for fd in fds.file:
        pool.Add(fd)
    query = message_factory.GetMessageClass(pool.FindMessageTypeByName("com.hedera.hapi.block.ServerStatusRequest"))
    response = message_factory.GetMessageClass(pool.FindMessageTypeByName("com.hedera.hapi.block.ServerStatusResponse"))
    method = grpc.unary_unary_rpc_method_handler(
        lambda q, context: response(first_available_block=7), request_deserializer=query.FromString,
        response_serializer=response.SerializeToString)
    handler = grpc.method_handlers_generic_handler(BLOCKS, {"serverStatus": method})

    def register(server):
        echo_grpc.add_EchoServicer_to_server(google_servicer(*google), server)
        server.add_generic_rpc_handlers((handler,))
        google_reflection.enable_server_reflection([SERVICE, google_reflection.SERVICE_NAME], server)
    hapi_services = [BLOCKS, "proto.CryptoService", google_reflection.SERVICE_NAME]
    with serving(register) as echo_address, serving(lambda s: (
            s.add_generic_rpc_handlers((handler,)),
            google_reflection.enable_server_reflection(hapi_services, s, pool=pool))) as hapi_address:
        yield echo_address, hapi_address


def test_reflect_a_google_server(google_server, echo):
    with grpc.insecure_channel(google_server[0]) as ch:
        ns = reflect(ch)
        assert ns.service(SERVICE) == echo.service(SERVICE)
        assert "grpc.reflection.v1alpha.ServerReflection" in ns.services
        stub = pbj.grpc.Stub(ch, ns.service(SERVICE))
        reply = stub.Unary(ns["pbjtest.echo.v1.EchoRequest"](text="g"), timeout=TIMEOUT)
        assert reply.text == "g" and type(reply) is ns["pbjtest.echo.v1.EchoReply"]
        streamed = stub.ServerStream(ns["pbjtest.echo.v1.EchoRequest"](count=2), timeout=TIMEOUT)
        assert [r.index for r in streamed] == [0, 1]


def test_reflect_hapi_from_a_google_server(google_server, hapi):
    with grpc.insecure_channel(google_server[1]) as ch:
        ns = reflect(ch)
        assert ns.service("proto.CryptoService") == hapi.service("proto.CryptoService")
        assert ns.service(BLOCKS) == hapi.service(BLOCKS)
        reply = pbj.grpc.Stub(ch, ns.service(BLOCKS)).serverStatus(
            ns["com.hedera.hapi.block.ServerStatusRequest"](), timeout=TIMEOUT)
    assert reply == ns["com.hedera.hapi.block.ServerStatusResponse"](first_available_block=7)


def test_reflection_error_text():
    with pytest.raises(ReflectionError, match="answered error 5: gone"):
        ns = pbj.grpc.reflection.reflection_schema()
        R = ns["grpc.reflection.v1.ServerReflectionResponse"]
        E = ns["grpc.reflection.v1.ErrorResponse"]
        pbj.grpc.reflection._body(R(message_response=pbj.OneOf("error_response", E(error_code=5,
                                                                                   error_message="gone"))), "x")


# ------------------------------------------------------------------ health

def test_health_check_pbj_and_google_clients(channel, health):
    from grpc_health.v1 import health_pb2, health_pb2_grpc
    assert check(channel) is ServingStatus.SERVING
    assert check(channel, SERVICE) is ServingStatus.NOT_SERVING
    google = health_pb2_grpc.HealthStub(channel)
    assert google.Check(health_pb2.HealthCheckRequest(service=SERVICE), timeout=TIMEOUT).status == \
        health_pb2.HealthCheckResponse.NOT_SERVING
    with pytest.raises(grpc.RpcError) as err:
        check(channel, "nobody")
    assert err.value.code() is grpc.StatusCode.NOT_FOUND


def test_health_watch(channel, health):
    from grpc_health.v1 import health_pb2, health_pb2_grpc
    watch = health_pb2_grpc.HealthStub(channel).Watch(health_pb2.HealthCheckRequest(service="later"), timeout=TIMEOUT)
    assert next(watch).status == health_pb2.HealthCheckResponse.SERVICE_UNKNOWN
    health.set("later", ServingStatus.SERVING)
    assert next(watch).status == health_pb2.HealthCheckResponse.SERVING
    watch.cancel()


def test_health_list_pbj_and_google_clients():
    """``List``: every name and its status, to Google's generated client and to pbj's; too many: RESOURCE_EXHAUSTED."""
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    from pbj.grpc.health import list_statuses
    h = Health({"": ServingStatus.SERVING, "a.B": ServingStatus.NOT_SERVING}, list_limit=3)
    with serving(h.add_to_server) as address, grpc.insecure_channel(address) as ch:
        assert list_statuses(ch) == {"": ServingStatus.SERVING, "a.B": ServingStatus.NOT_SERVING}
        h.set("c.D", ServingStatus.SERVICE_UNKNOWN)
        google = health_pb2_grpc.HealthStub(ch).List(health_pb2.HealthListRequest(), timeout=TIMEOUT)
        assert {k: v.status for k, v in google.statuses.items()} == {
            "": health_pb2.HealthCheckResponse.SERVING, "a.B": health_pb2.HealthCheckResponse.NOT_SERVING,
            "c.D": health_pb2.HealthCheckResponse.SERVICE_UNKNOWN}
        h.set("e.F", ServingStatus.SERVING)
        with pytest.raises(grpc.RpcError) as err:
            list_statuses(ch)
        assert err.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED and "more than List" in err.value.details()
    h.close()


def test_the_health_schema_is_grpcs():
    """The health file pbj serves describes the same messages and methods as grpcio-health-checking's."""
    from grpc_health.v1 import health_pb2

    from pbj.grpc.health import SCHEMA
    google = descriptor_pb2.FileDescriptorProto()
    health_pb2.DESCRIPTOR.CopyToProto(google)
    [file] = [f for f in SCHEMA.files if f.name == "grpc/health/v1/health.proto"]
    ours = descriptor_pb2.FileDescriptorProto.FromString(pbj.encode(file))
    for p in (google, ours):
        p.ClearField("options")
        for m in p.message_type:
            for f in m.field:
                f.ClearField("json_name")
            for n in m.nested_type:
                for f in n.field:
                    f.ClearField("json_name")
    assert ours.service == google.service
    assert list(ours.message_type) == list(google.message_type)


def test_health_on_an_aio_server():
    async def main():
        h = Health({"": ServingStatus.SERVING})
        server = grpc.aio.server()
        h.add_to_server(server)
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
                stub = pbj.grpc.Stub(ch, pbj.grpc.health.SERVICE)
                Req = pbj.grpc.health._Request
                first = (await stub.Check(Req(), timeout=TIMEOUT)).status
                listed = await pbj.grpc.health.list_statuses_async(ch, timeout=TIMEOUT)
                with pytest.raises(TypeError, match="list_statuses_async"):
                    pbj.grpc.health.list_statuses(ch)
                call = stub.Watch(Req(service="w"), timeout=TIMEOUT)
                it = call.__aiter__()
                seen = [(await it.__anext__()).status]
                h.set("w", ServingStatus.NOT_SERVING)
                seen.append((await it.__anext__()).status)
                call.cancel()
                return first, seen, listed
        finally:
            h.close()
            await server.stop(None)
    first, seen, listed = asyncio.run(main())
    assert first is ServingStatus.SERVING and listed == {"": ServingStatus.SERVING}
    assert seen == [ServingStatus.SERVICE_UNKNOWN, ServingStatus.NOT_SERVING]


def test_extensions_over_reflection_and_an_aio_server():
    """An aio pbj server reflecting a proto2 schema with extensions; Google's database and reflect_async read it."""
    from tests.conftest import REPO
    ext = pbj.load_proto(REPO / "tests" / "protos" / "extensions.proto")

    async def main():
        server = grpc.aio.server()
        add_reflection(server, ext)
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
                ns = await reflect_async(ch, timeout=TIMEOUT)
                stub = pbj.grpc.Stub(ch, pbj.grpc.reflection.reflection_schema().service(
                    "grpc.reflection.v1.ServerReflection"))
                own = pbj.grpc.reflection.reflection_schema()
                Req = own["grpc.reflection.v1.ServerReflectionRequest"]
                Ext = own["grpc.reflection.v1.ExtensionRequest"]
                answers = [a async for a in stub.ServerReflectionInfo(iter([
                    Req(message_request=pbj.OneOf("all_extension_numbers_of_type", "pbjext.Host")),
                    Req(message_request=pbj.OneOf("file_containing_extension",
                                                  Ext(containing_type="pbjext.Host", extension_number=150))),
                    Req(message_request=pbj.OneOf("file_containing_symbol", "pbjext.Scope.nested")),
                ]), timeout=TIMEOUT)]
                return ns, answers
        finally:
            await server.stop(None)
    ns, answers = asyncio.run(main())
    # no services listed: the reflection service's own file is what list_services leads to
    assert list(ns.services) == ["grpc.reflection.v1.ServerReflection"]
    numbers = answers[0].message_response.value
    assert (numbers.base_type_name, list(numbers.extension_number)) == (
        "pbjext.Host", [100, 101, 102, 103, 104, 105, 106, 107, 150, 300])
    for answer in answers[1:]:
        which, files = answer.message_response
        assert which == "file_descriptor_response"
        assert pbj.decode(pbj.descriptor.FileDescriptorProto, files.file_descriptor_proto[0]).name == "extensions.proto"


def test_check_async_and_channels_of_the_wrong_kind(pbj_server):
    # reflect() on an aio channel failed with "'StreamStreamCall' object is not iterable"; aio had no health check
    from pbj.grpc.health import check_async

    async def main():
        async with grpc.aio.insecure_channel(pbj_server) as ach:
            status = await check_async(ach, timeout=TIMEOUT)
            with pytest.raises(grpc.aio.AioRpcError) as unknown:
                await check_async(ach, "no.Such", timeout=TIMEOUT)
            errors = []
            for fn in (reflect, check):
                with pytest.raises(TypeError) as err:
                    fn(ach, timeout=TIMEOUT)
                errors.append(str(err.value))
            return status, unknown.value.code(), errors

    status, code, errors = asyncio.run(asyncio.wait_for(main(), TIMEOUT * 3))
    assert (status, code) == (ServingStatus.SERVING, grpc.StatusCode.NOT_FOUND)
    assert errors == ["reflect needs a grpc.Channel; on a grpc.aio.Channel use: await reflect_async(channel)",
                      "check needs a grpc.Channel; on a grpc.aio.Channel use: await check_async(channel)"]
    with grpc.insecure_channel(pbj_server) as channel:
        with pytest.raises(TypeError, match=r"^reflect_async needs a grpc.aio.Channel"):
            asyncio.run(reflect_async(channel, timeout=TIMEOUT))
        with pytest.raises(TypeError, match=r"^check_async needs a grpc.aio.Channel"):
            asyncio.run(check_async(channel, timeout=TIMEOUT))


def test_add_reflection_and_add_to_server_refuse_what_they_cannot_serve(echo):
    # were AttributeErrors ("'Method' object has no attribute 'package'", "'str' object has no attribute 'name'")
    server = grpc.server(None)
    with pytest.raises(TypeError, match=r"^reflection serves pbj.Namespace objects, pbj.Service objects, message "
                                        r"classes, enums \(or FileDescriptorProtos\), not str$"):
        add_reflection(server, "echo.proto")
    with pytest.raises(ValueError, match=r"^services 'pbjtest.echo.v1.Eco' are not in the schemas served"):
        add_reflection(server, echo, services=["pbjtest.echo.v1.Eco"])
    with pytest.raises(TypeError, match=r"^add_to_server needs a pbj.Service \(ns.service\(name\)\), not Namespace$"):
        pbj.grpc.add_to_server(server, echo, {})
    index = add_reflection(server, echo, services=[SERVICE])
    assert index.services == (SERVICE,)


# ------------------------------------------------------------------ a service declared by hand

class Mood(enum.IntEnum):
    MOOD_UNSET = 0
    GLAD = 1


@pbj.message(full_name="pbjtest.hand.v1.Ping")
class Ping:
    text: str = pbj.field(1, "string")
    at: Timestamp | None = pbj.field(2, Timestamp)
    counts: dict[str, int] = pbj.map_field(3, "string", "int32")
    mood: Mood = pbj.field(4, Mood)
    body: pbj.OneOf | None = pbj.oneof(raw=(5, "bytes"), number=(6, "sint64"))


@pbj.message(full_name="pbjtest.hand.v1.Pong")
class Pong:
    ping: Ping | None = pbj.field(1, Ping)
    seen: tuple[int, ...] = pbj.field(2, "uint32", repeated=True)


PINGER = pbj.service("pbjtest.hand.v1.Pinger", pbj.rpc("Ping", Ping, Pong),
                     pbj.rpc("Pings", Ping, Pong, server_streaming=True))
PING = Ping(text="hi", at=Timestamp(seconds=9, nanos=1), counts={"a": 1, "b": -2}, mood=Mood.GLAD,
            body=pbj.OneOf("number", -5))


class Pinger(pbj.grpc.Servicer, service=PINGER):
    def Ping(self, request, context):
        return Pong(ping=request, seen=[len(request.text)])

    def Pings(self, request, context):
        for i in range(2):
            yield Pong(seen=[i])


@pytest.fixture(scope="module")
def hand_server(echo):
    def register(server):
        Pinger().add_to_server(server)
        pbj.grpc.add_to_server(server, echo.service(SERVICE), PbjEcho(echo))
        add_reflection(server, echo, PINGER)  # a namespace and a service declared by hand
    with serving(register) as address:
        yield address


def test_google_database_resolves_a_service_declared_by_hand(hand_server):
    with grpc.insecure_channel(hand_server) as ch:
        db = ProtoReflectionDescriptorDatabase(ch)
        assert list(db.get_services()) == [SERVICE, PINGER.full_name, "grpc.reflection.v1.ServerReflection"]
        pool = descriptor_pool.DescriptorPool(db)
        svc = pool.FindServiceByName(PINGER.full_name)
        assert [(m.name, m.input_type.full_name, m.output_type.full_name, m.server_streaming) for m in svc.methods] \
            == [("Ping", "pbjtest.hand.v1.Ping", "pbjtest.hand.v1.Pong", False),
                ("Pings", "pbjtest.hand.v1.Ping", "pbjtest.hand.v1.Pong", True)]
        assert svc.file.name == "pbjtest/hand/v1/declared.proto"
        assert [d.name for d in svc.file.dependencies] == ["google/protobuf/timestamp.proto"]
        GPing = message_factory.GetMessageClass(pool.FindMessageTypeByName("pbjtest.hand.v1.Ping"))
        GPong = message_factory.GetMessageClass(pool.FindMessageTypeByName("pbjtest.hand.v1.Pong"))
        google = GPing(text="hi", counts={"a": 1, "b": -2}, mood=1, number=-5)
        google.at.seconds, google.at.nanos = 9, 1
        data = pbj.encode(PING)
        assert google.SerializeToString(deterministic=True) == data == pbj.encode(PING, reverse=True)
        assert pbj.decode(Ping, google.SerializeToString()) == PING and GPing.FromString(data) == google
        # Google's classes from the reflected descriptors talk to the pbj server
        call = ch.unary_unary(PINGER.Ping.path, request_serializer=GPing.SerializeToString,
                              response_deserializer=GPong.FromString)
        reply = call(google, timeout=TIMEOUT)
        assert reply.ping == google and list(reply.seen) == [2]


def test_reflect_a_service_declared_by_hand(hand_server):
    with grpc.insecure_channel(hand_server) as ch:
        ns = reflect(ch, timeout=TIMEOUT)
        assert ns.service(PINGER.full_name) == PINGER  # names, message full names, streaming kinds
        stub = pbj.grpc.Stub(ch, ns.service(PINGER.full_name))
        RPing = ns["pbjtest.hand.v1.Ping"]
        request = pbj.decode(RPing, pbj.encode(PING))
        reply = stub.Ping(request, timeout=TIMEOUT)
        assert type(reply) is ns["pbjtest.hand.v1.Pong"] and pbj.encode(reply.ping) == pbj.encode(PING)
        assert [list(r.seen) for r in stub.Pings(RPing(), timeout=TIMEOUT)] == [[0], [1]]
        assert ns["pbjtest.hand.v1.Mood"].GLAD == 1


def test_pbj_call_lists_and_describes_a_service_declared_by_hand(hand_server, capsys):
    from pbj.cli import main
    assert main(["call", hand_server, "--list"]) == 0
    assert capsys.readouterr().out.split() == [SERVICE, PINGER.full_name, "grpc.reflection.v1.ServerReflection"]
    assert main(["call", hand_server, "--describe", "pbjtest.hand.v1.Pinger/Pings"]) == 0
    assert capsys.readouterr().out == \
        "rpc Pings(pbjtest.hand.v1.Ping) returns (stream pbjtest.hand.v1.Pong);\n"
    assert main(["call", hand_server, "pbjtest.hand.v1.Pinger/Ping", "--json", '{"text": "abc", "mood": "GLAD"}',
                 "--timeout", "10"]) == 0
    assert capsys.readouterr().out == '{"ping":{"text":"abc","mood":"GLAD"},"seen":[3]}\n'
