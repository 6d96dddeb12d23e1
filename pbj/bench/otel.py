"""The OpenTelemetry case of the benchmarks: a real OTLP trace export request, its schema, its codecs.

The payload is what an OpenTelemetry exporter sends: an ``ExportTraceServiceRequest``
(``opentelemetry/proto/collector/trace/v1/trace_service.proto``) made by the OpenTelemetry SDK's
own code, not by hand:

* a ``TracerProvider`` of ``opentelemetry-sdk`` with a service ``Resource`` (service, host,
  process, cloud and deployment attributes), spans from three instrumentation scopes (an HTTP
  server, a database client, a message producer) in traces of one server span and its
  children, each span with attributes of every OTLP value kind (strings, integers, floats,
  booleans, arrays), some with events (one an ``exception`` with its stack trace) and links to
  spans of the previous trace, some with an error status;
* the OTLP encoder of ``opentelemetry-exporter-otlp-proto-common`` (``encode_spans``, what the
  OTLP exporters call) turns the finished spans into Google protobuf's message, and
  ``SerializeToString()`` gives the bytes that go on the wire.

The trace is the same on every run and every machine: span and trace ids come from a seeded
generator and every timestamp is given explicitly, so the bytes (and every figure's input) are
reproducible. :data:`SPANS` is 512, the SDK's ``BatchSpanProcessor`` default batch
(``OTEL_BSP_MAX_EXPORT_BATCH_SIZE``): the largest request an SDK exports by default.

pbj loads the schema at run time from the descriptors the ``opentelemetry-proto`` package
itself was generated from (:func:`descriptor_set`: a ``FileDescriptorSet`` of
``trace_service.proto`` and every file it imports, passed to :func:`pbj.load_descriptor_set`),
so pbj and Google's protobuf decode with the same schema. Needs the ``bench`` extra
(``pip install 'pbj-protobuf[bench]'``); importing this module does not.
"""

# OpenTelemetry is the bench extra's, not installed for the tests: pyright checks this module without it
# pyright: reportMissingImports=false

from __future__ import annotations

import random
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pbj.bench.suite import Codec

__all__ = ["SPANS", "REQUEST_TYPE", "TRACE_SERVICE_MODULE", "descriptor_set", "build_spans", "build_request",
           "describe", "pbj_class", "google_class", "pbj_codec", "google_codec"]

#: Spans in the benchmark's request: the SDK's default export batch (``BatchSpanProcessor``).
SPANS = 512
#: The full name of the request message.
REQUEST_TYPE = "opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest"
#: The ``opentelemetry-proto`` module that defines it (Google protobuf's generated code).
TRACE_SERVICE_MODULE = "opentelemetry.proto.collector.trace.v1.trace_service_pb2"

#: Spans per trace: one server span and its children (database calls, cache, a message sent).
_TRACE_SPANS = 16
#: Nanoseconds since the epoch of the first span (2026-01-01T00:00:00Z).
_EPOCH_NS = 1_767_225_600_000_000_000


def descriptor_set() -> bytes:
    """The ``FileDescriptorSet`` of ``trace_service.proto`` and every file it imports, dependencies first.

    Taken from the descriptors ``opentelemetry-proto``'s generated modules were built from (each
    file's ``serialized_pb``), so it is exactly the schema the OTLP encoder wrote with.

    Raises:
        ImportError: ``opentelemetry-proto`` is not installed (``pip install 'pbj-protobuf[bench]'``).
    """
    import importlib

    from google.protobuf import descriptor_pb2

    top = importlib.import_module(TRACE_SERVICE_MODULE).DESCRIPTOR
    ordered: list = []
    seen: set[str] = set()

    def visit(fd: Any) -> None:
        if fd.name in seen:
            return
        seen.add(fd.name)
        for dep in fd.dependencies:
            visit(dep)
        ordered.append(fd)

    visit(top)
    fds = descriptor_pb2.FileDescriptorSet()
    for fd in ordered:
        fds.file.add().ParseFromString(fd.serialized_pb)
    return fds.SerializeToString()


def _seeded_ids(seed: int) -> Any:
    """An ``opentelemetry.sdk.trace.IdGenerator`` of span and trace ids drawn from ``random.Random(seed)``."""
    from opentelemetry.sdk.trace.id_generator import IdGenerator

    class SeededIds(IdGenerator):
        def __init__(self) -> None:
            self._random = random.Random(seed)

        def generate_span_id(self) -> int:
            return self._random.getrandbits(64) or 1

        def generate_trace_id(self) -> int:
            return self._random.getrandbits(128) or 1

        def is_trace_id_random(self) -> bool:
            """The ids are random (seeded): the SDK sets W3C's "random trace id" flag on the spans."""
            return True

    return SeededIds()


_RESOURCE: dict[str, Any] = {
    "service.name": "checkout", "service.namespace": "shop", "service.version": "2.14.1",
    "service.instance.id": "checkout-7d9f8b6c4-x2k9p", "deployment.environment.name": "production",
    "host.name": "ip-10-0-3-17.eu-west-1.compute.internal", "host.arch": "amd64",
    "os.type": "linux", "process.pid": 4242, "process.runtime.name": "cpython",
    "process.runtime.version": "3.11.7", "process.command_args": ["gunicorn", "checkout.app:app", "-w", "4"],
    "cloud.provider": "aws", "cloud.region": "eu-west-1", "k8s.pod.name": "checkout-7d9f8b6c4-x2k9p",
    "telemetry.sdk.language": "python", "telemetry.sdk.name": "opentelemetry",
}

_STACK = "".join(f'  File "/app/checkout/{m}.py", line {n}, in {f}\n'
                 for m, n, f in [("app", 88, "dispatch"), ("orders", 212, "place_order"),
                                 ("payment", 57, "charge"), ("gateway", 140, "post")])


def _server_attributes(i: int) -> dict:
    return {"http.request.method": "POST" if i % 3 else "GET", "url.path": f"/api/v2/orders/{100_000 + i}",
            "url.scheme": "https", "http.route": "/api/v2/orders/{order_id}", "server.address": "shop.example.com",
            "server.port": 443, "client.address": f"203.0.113.{i % 250}", "user_agent.original":
            "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36",
            "http.response.status_code": 500 if i % 7 == 3 else 200, "network.protocol.version": "1.1"}


def _db_attributes(i: int, j: int) -> dict:
    return {"db.system.name": "postgresql", "db.namespace": "orders", "db.operation.name": "SELECT",
            "db.query.text": f"SELECT id, status, total_cents FROM orders WHERE customer_id = $1 AND id > $2 "
                             f"ORDER BY id LIMIT {10 + j}", "server.address": "orders-db.internal",
            "server.port": 5432, "db.response.returned_rows": (i * 7 + j) % 50, "db.query.cached": j % 2 == 0,
            "db.client.connection.pool.usage": 0.25 + (j % 4) / 8}


def _messaging_attributes(i: int) -> dict:
    return {"messaging.system": "kafka", "messaging.destination.name": "orders.placed",
            "messaging.operation.type": "send", "messaging.message.body.size": 512 + i,
            "messaging.kafka.message.key": f"order-{100_000 + i}", "messaging.batch.message_count": 1,
            "messaging.destination.partition.ids": [i % 12, (i + 1) % 12]}


def build_spans(spans: int = SPANS, seed: int = 2026) -> list:
    """Make ``spans`` finished spans with the OpenTelemetry SDK (``ReadableSpan`` objects, in end order).

    Args:
        spans: how many spans (>= 1); traces of up to 16 spans each.
        seed: seeds the span and trace ids; the same arguments give the same spans.

    Raises:
        ImportError: ``opentelemetry-sdk`` is not installed.
        ValueError: ``spans`` < 1.
    """
    if spans < 1:
        raise ValueError(f"spans must be at least 1, not {spans}")
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.trace import Link, SpanKind, Status, StatusCode, set_span_in_context

    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create(_RESOURCE), id_generator=_seeded_ids(seed))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    http = provider.get_tracer("opentelemetry.instrumentation.flask", "0.52b1",
                               schema_url="https://opentelemetry.io/schemas/1.30.0")
    db = provider.get_tracer("opentelemetry.instrumentation.psycopg", "0.52b1",
                             schema_url="https://opentelemetry.io/schemas/1.30.0")
    mq = provider.get_tracer("opentelemetry.instrumentation.kafka-python", "0.52b1",
                             attributes={"instrumentation.library.kind": "messaging"})
    made, t, previous = 0, _EPOCH_NS, None
    i = 0
    while made < spans:
        start = t
        root = http.start_span(f"POST /api/v2/orders/{{order_id}} #{i}" if i % 3 else "GET /api/v2/orders",
                               kind=SpanKind.SERVER, attributes=_server_attributes(i), start_time=start,
                               links=[Link(previous, {"link.reason": "retry of the previous request"})]
                               if previous is not None and i % 4 == 1 else ())
        made += 1
        ctx = set_span_in_context(root)
        children = min(_TRACE_SPANS - 1, spans - made)
        for j in range(children):
            begin = start + 120_000 + j * 850_000
            if j == children - 1 and j % 5 == 4:
                child = mq.start_span("orders.placed send", context=ctx, kind=SpanKind.PRODUCER,
                                      attributes=_messaging_attributes(i), start_time=begin)
                child.add_event("message.sent", {"messaging.message.id": f"m-{i}-{j}"}, timestamp=begin + 90_000)
            else:
                child = db.start_span(f"SELECT orders #{j}", context=ctx, kind=SpanKind.CLIENT,
                                      attributes=_db_attributes(i, j), start_time=begin)
                if j % 3 == 0:
                    child.add_event("db.connection.acquired", {"db.client.connection.pool.name": "orders-pool",
                                                               "wait.ms": 0.4 + j / 10}, timestamp=begin + 15_000)
                if j % 6 == 5:
                    child.set_status(Status(StatusCode.ERROR, "canceling statement due to statement timeout"))
                    child.add_event("exception", {"exception.type": "psycopg.errors.QueryCanceled",
                                                  "exception.message": "canceling statement due to statement "
                                                                       "timeout", "exception.stacktrace": _STACK,
                                                  "exception.escaped": False}, timestamp=begin + 700_000)
            child.end(end_time=begin + 600_000 + (j * 37_000) % 200_000)
            made += 1
        root.add_event("order.validated", {"order.items": 3 + i % 5, "order.total": 42.5 + i}, timestamp=start + 80_000)
        if i % 7 == 3:
            root.set_status(Status(StatusCode.ERROR, "payment gateway returned 502"))
        else:
            root.set_status(Status(StatusCode.OK))
        root.end(end_time=start + 120_000 + children * 850_000 + 300_000)
        previous = root.get_span_context()
        t += 25_000_000
        i += 1
    provider.shutdown()
    return list(exporter.get_finished_spans())


def build_request(spans: int = SPANS, seed: int = 2026) -> bytes:
    """The OTLP bytes of an export request holding ``spans`` SDK spans (see :func:`build_spans`).

    Encoded by ``opentelemetry.exporter.otlp.proto.common.trace_encoder.encode_spans`` then
    Google protobuf's ``SerializeToString()``, as the OTLP exporters do.

    Raises:
        ImportError: the ``bench`` extra (OpenTelemetry SDK, OTLP encoder) is not installed.
        ValueError: ``spans`` < 1.
    """
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    return encode_spans(build_spans(spans, seed)).SerializeToString()


def pbj_class(schema: bytes | None = None) -> type:
    """pbj's ``ExportTraceServiceRequest`` class, loaded at run time from the ``FileDescriptorSet`` ``schema``
    (default :func:`descriptor_set`)."""
    import pbj

    return pbj.load_descriptor_set(descriptor_set() if schema is None else schema)[REQUEST_TYPE]


def google_class() -> type:
    """Google protobuf's ``ExportTraceServiceRequest`` (the class the OTLP exporter serializes)."""
    import importlib

    return importlib.import_module(TRACE_SERVICE_MODULE).ExportTraceServiceRequest


def describe(request: Any) -> dict:
    """Counts of a decoded pbj request: ``{"resource_spans", "scope_spans", "spans", "events", "links",
    "attributes"}`` (``attributes``: every ``KeyValue`` of resources, scopes, spans, events and links)."""
    out = dict.fromkeys(("resource_spans", "scope_spans", "spans", "events", "links", "attributes"), 0)
    for rs in request.resource_spans:
        out["resource_spans"] += 1
        out["attributes"] += len(rs.resource.attributes) if rs.resource is not None else 0
        for ss in rs.scope_spans:
            out["scope_spans"] += 1
            out["attributes"] += len(ss.scope.attributes) if ss.scope is not None else 0
            for span in ss.spans:
                out["spans"] += 1
                out["events"] += len(span.events)
                out["links"] += len(span.links)
                out["attributes"] += (len(span.attributes) + sum(len(e.attributes) for e in span.events)
                                      + sum(len(x.attributes) for x in span.links))
    return out


def pbj_codec(cls: type) -> Codec:
    """pbj's :class:`~pbj.bench.suite.Codec` for the request class: ``pbj.decode``/``pbj.encode``, both writers."""
    import pbj
    from pbj.bench.readers import PbjReader
    from pbj.bench.suite import Codec

    decode: Callable[[bytes], Any] = lambda b: pbj.decode(cls, b)
    return Codec(decode={"request": decode},
                 encoders={"forward": pbj.encode, "reverse": lambda o: pbj.encode(o, reverse=True)},
                 read=PbjReader().read, prime=pbj.encode)


def google_codec() -> Codec:
    """Google protobuf's :class:`~pbj.bench.suite.Codec` (the backend this process loaded), on
    ``opentelemetry-proto``'s own class: ``FromString`` and ``SerializeToString()``, as OTLP exporters call."""
    from pbj.bench.readers import GoogleReader
    from pbj.bench.suite import Codec

    cls: Any = google_class()
    return Codec(decode={"request": cls.FromString}, encoders={"encode": lambda o: o.SerializeToString()},
                 read=GoogleReader().read, prime=lambda o: o.SerializeToString())
