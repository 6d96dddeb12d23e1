"""Services of a schema: :class:`Service` and :class:`Method`, loaded or declared by hand.

A ``service`` of a ``.proto`` file ("Language Guide", "Defining Services";
``ServiceDescriptorProto``/``MethodDescriptorProto`` of ``descriptor.proto``)
is data: its full name, and per method a name, the input and output message
classes, whether the client and the server stream, and the options. Loading a
schema builds one :class:`Service` per service (``ns.service("pkg.Greeter")``);
:func:`service` and :func:`rpc` build the same object from pbj classes
declared in Python. Nothing here knows about a gRPC runtime: :mod:`pbj.grpc`
turns a :class:`Service` into grpcio clients and handlers.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from pbj.errors import SchemaError
from pbj.schema import info, is_message

__all__ = ["Method", "Service", "rpc", "service", "build_services"]

_KINDS = {(False, False): "unary_unary", (False, True): "unary_stream",
          (True, False): "stream_unary", (True, True): "stream_stream"}


class Method:
    """One RPC method of a service.

    Attributes:
        name: the method's name (``"SayHello"``).
        service_name: the full name of its service (``"pkg.Greeter"``).
        input: the request message class.
        output: the response message class.
        client_streaming: the client sends a stream of requests.
        server_streaming: the server answers with a stream of responses.
        options: the ``MethodOptions`` of the schema (:mod:`pbj.descriptor`), or ``None``.
        path: the HTTP/2 path gRPC calls it by, ``"/pkg.Greeter/SayHello"``.
        kind: ``"unary_unary"``, ``"unary_stream"``, ``"stream_unary"`` or
            ``"stream_stream"`` (grpcio's names of the four kinds).
    """

    __slots__ = (
        "client_streaming",
        "input",
        "kind",
        "name",
        "options",
        "output",
        "path",
        "server_streaming",
        "service_name",
    )

    def __init__(self, name: str, service_name: str, input: type, output: type, *,
                 client_streaming: bool = False, server_streaming: bool = False, options: Any = None) -> None:
        for role, cls in (("input", input), ("output", output)):
            if not (isinstance(cls, type) and is_message(cls)):
                raise SchemaError(f"method {name}: the {role} type {cls!r} is not a pbj message class",
                                  cls_name=service_name)
        if not name or not name.isidentifier():
            raise SchemaError(f"method name {name!r} is not an identifier", cls_name=service_name)
        self.name = name
        self.service_name = service_name
        self.input = input
        self.output = output
        self.client_streaming = bool(client_streaming)
        self.server_streaming = bool(server_streaming)
        self.options = options
        self.path = f"/{service_name}/{name}"
        self.kind = _KINDS[self.client_streaming, self.server_streaming]

    def _key(self) -> tuple:
        return (self.name, self.service_name, info(self.input).full_name, info(self.output).full_name,
                self.client_streaming, self.server_streaming)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Method) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        arg = ("stream " if self.client_streaming else "") + info(self.input).full_name
        ret = ("stream " if self.server_streaming else "") + info(self.output).full_name
        return f"<pbj.Method {self.path}({arg}) returns ({ret})>"


class Service:
    """A gRPC service: its full name and its methods, in declaration order.

    ``service["SayHello"]`` and ``service.SayHello`` give a :class:`Method`;
    iterating gives the methods. Two services are equal when their names and
    methods (names, message full names, streaming kinds) are.

    Attributes:
        full_name: ``"pkg.Greeter"``.
        name: the last part, ``"Greeter"``.
        package: the protobuf package, ``"pkg"`` (``""`` for none).
        methods: method name -> :class:`Method`.
        options: the ``ServiceOptions`` of the schema, or ``None``.
        file: the name of the ``.proto`` file that declares it, or ``None`` (declared by hand).
    """

    def __init__(self, full_name: str, methods: Iterable[Method], *, options: Any = None,
                 file: str | None = None) -> None:
        self.full_name = full_name
        self.package, _, self.name = full_name.rpartition(".")
        self.methods: dict[str, Method] = {}
        for m in methods:
            if m.name in self.methods:
                raise SchemaError(f"method {m.name!r} is declared twice", cls_name=full_name)
            self.methods[m.name] = m
        self.options = options
        self.file = file

    def __getitem__(self, name: str) -> Method:
        """The method named ``name``.

        Raises:
            KeyError: the service has no such method (the message lists its methods).
        """
        found = self.methods.get(name)
        if found is None:
            raise KeyError(f"service {self.full_name} has no method {name!r} (its methods: "
                           f"{', '.join(self.methods) or 'none'})")
        return found

    def __getattr__(self, name: str) -> Method:
        methods = self.__dict__.get("methods")
        if methods is None or name not in methods:
            raise AttributeError(f"service {self.__dict__.get('full_name')} has no method {name!r}")
        return methods[name]  # type: ignore[no-any-return]

    def __iter__(self) -> Iterator[Method]:
        return iter(self.methods.values())

    def __len__(self) -> int:
        return len(self.methods)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Service) and self.full_name == other.full_name
                and list(self.methods.values()) == list(other.methods.values()))

    def __hash__(self) -> int:
        return hash((self.full_name, tuple(self.methods)))

    def __repr__(self) -> str:
        return f"<pbj.Service {self.full_name}: {', '.join(self.methods)}>"


def rpc(name: str, input: type, output: type, *, client_streaming: bool = False,
        server_streaming: bool = False) -> tuple:
    """One method for :func:`service`: ``rpc("SayHello", HelloRequest, HelloReply)``.

    Args:
        name: the method's name.
        input: the request message class (a pbj message).
        output: the response message class.
        client_streaming: the client sends a stream (``rpc M(stream In)``).
        server_streaming: the server answers with a stream (``returns (stream Out)``).

    Returns:
        An opaque description that :func:`service` takes.
    """
    return (name, input, output, client_streaming, server_streaming)


def service(full_name: str, *methods: tuple) -> Service:
    """A service declared by hand on pbj classes, the object a load gives for the same ``.proto``.

    ``service("pkg.Greeter", rpc("SayHello", HelloRequest, HelloReply))`` equals
    ``pbj.load_proto("greeter.proto").service("pkg.Greeter")`` when the classes
    have the same full names.

    Args:
        full_name: the service's full name (package and name).
        methods: :func:`rpc` results, in declaration order.

    Returns:
        The :class:`Service`.

    Raises:
        SchemaError: a name is not an identifier, a method is declared twice, or a
            type is not a pbj message class.
    """
    if not full_name or not all(p.isidentifier() for p in full_name.split(".")):
        raise SchemaError(f"service name {full_name!r} is not a dotted name of identifiers")
    return Service(full_name, [Method(n, full_name, i, o, client_streaming=c, server_streaming=s)
                               for n, i, o, c, s in methods])


def build_services(files: Iterable[Any], messages: Mapping[str, type], complete: bool = True) -> dict[str, Service]:
    """The services of the ``FileDescriptorProto``s ``files``, by full name.

    Args:
        files: the decoded files of a load.
        messages: full name -> message class of the same load (well-known ones included).
        complete: whether ``messages`` holds every message of ``files``; when it does not
            (a load of some types only), a service whose types are not all there is left out.

    Raises:
        SchemaError: a method has no name, or names an input or output type
            that is not a message of the load; a service is defined twice.
    """
    out: dict[str, Service] = {}
    for fd in files:
        package = fd.package or ""
        for sd in fd.service:
            if not sd.name:
                raise SchemaError(f"a service in {fd.name} has no name")
            full = f"{package}.{sd.name}" if package else sd.name
            if full in out:
                raise SchemaError(f"service {full!r} is defined twice")
            if not complete and any(messages.get((ref or "").lstrip(".")) is None
                                    for md in sd.method for ref in (md.input_type, md.output_type)):
                continue
            methods = []
            for md in sd.method:
                types = []
                for role, ref in (("input", md.input_type), ("output", md.output_type)):
                    cls = messages.get((ref or "").lstrip("."))
                    if cls is None:
                        raise SchemaError(f"method {md.name}: its {role} type {ref!r} is not a message of the schema",
                                          cls_name=full)
                    types.append(cls)
                methods.append(Method(md.name or "", full, types[0], types[1],
                                      client_streaming=bool(md.client_streaming),
                                      server_streaming=bool(md.server_streaming), options=md.options))
            out[full] = Service(full, methods, options=sd.options, file=fd.name)
    return out
