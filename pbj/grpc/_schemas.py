"""The schemas of gRPC's own services (reflection v1 and v1alpha, health v1), loaded from descriptors built here.

Each file is written as a ``FileDescriptorProto`` (what protoc makes of
``grpc/reflection/v1/reflection.proto``, ``grpc/reflection/v1alpha/reflection.proto``
and ``grpc/health/v1/health.proto`` of the grpc repository; field numbers and
names as there) and loaded like any schema, so the classes, the services and
the descriptors that reflection serves about these services all come from one
place. Built on first use (:func:`reflection_schema`, :func:`health_schema`).
"""

from __future__ import annotations

import functools
from typing import Any

from pbj import descriptor as _descriptor
from pbj.api import encode
from pbj.loader import Namespace, load_descriptor_set
from pbj.schema import replace as _replace

__all__ = ["reflection_schema", "health_schema", "REFLECTION_PACKAGES"]

#: The packages of the two versions of the reflection protocol, newest first.
REFLECTION_PACKAGES = ("grpc.reflection.v1", "grpc.reflection.v1alpha")

# typed Any: the descriptor classes are declared through a helper the checkers do not see through
D: Any = _descriptor
_SCALARS = {"string": D.Type.TYPE_STRING, "bytes": D.Type.TYPE_BYTES, "int32": D.Type.TYPE_INT32}


def _field(package: str, name: str, number: int, type_: str, *, repeated: bool = False,
           oneof: int | None = None) -> Any:
    scalar = _SCALARS.get(type_)
    kind = scalar if scalar is not None else D.Type.TYPE_ENUM if type_.startswith("enum:") else D.Type.TYPE_MESSAGE
    ref = None if scalar is not None else f".{package}.{type_.removeprefix('enum:')}"
    json = "".join(p if i == 0 else p.capitalize() for i, p in enumerate(name.split("_")))
    label = D.Label.LABEL_REPEATED if repeated else D.Label.LABEL_OPTIONAL
    return D.FieldDescriptorProto(name=name, number=number, label=label, type=kind, type_name=ref,
                                oneof_index=oneof, json_name=json)


def _message(package: str, name: str, fields: list[tuple], oneofs: tuple[str, ...] = (),
             enums: tuple[Any, ...] = ()) -> Any:
    return D.DescriptorProto(name=name, field=[_field(package, *f[:3], **(f[3] if len(f) > 3 else {})) for f in fields],
                           oneof_decl=[D.OneofDescriptorProto(name=o) for o in oneofs], enum_type=list(enums))


def _reflection_file(package: str) -> Any:
    o = {"oneof": 0}
    messages = [
        _message(package, "ServerReflectionRequest", [
            ("host", 1, "string"), ("file_by_filename", 3, "string", o), ("file_containing_symbol", 4, "string", o),
            ("file_containing_extension", 5, "ExtensionRequest", o),
            ("all_extension_numbers_of_type", 6, "string", o), ("list_services", 7, "string", o)],
            ("message_request",)),
        _message(package, "ExtensionRequest", [("containing_type", 1, "string"), ("extension_number", 2, "int32")]),
        _message(package, "ServerReflectionResponse", [
            ("valid_host", 1, "string"), ("original_request", 2, "ServerReflectionRequest"),
            ("file_descriptor_response", 4, "FileDescriptorResponse", o),
            ("all_extension_numbers_response", 5, "ExtensionNumberResponse", o),
            ("list_services_response", 6, "ListServiceResponse", o), ("error_response", 7, "ErrorResponse", o)],
            ("message_response",)),
        _message(package, "FileDescriptorResponse", [("file_descriptor_proto", 1, "bytes", {"repeated": True})]),
        _message(package, "ExtensionNumberResponse", [("base_type_name", 1, "string"),
                                                      ("extension_number", 2, "int32", {"repeated": True})]),
        _message(package, "ListServiceResponse", [("service", 1, "ServiceResponse", {"repeated": True})]),
        _message(package, "ServiceResponse", [("name", 1, "string")]),
        _message(package, "ErrorResponse", [("error_code", 1, "int32"), ("error_message", 2, "string")]),
    ]
    method = D.MethodDescriptorProto(name="ServerReflectionInfo", input_type=f".{package}.ServerReflectionRequest",
                                   output_type=f".{package}.ServerReflectionResponse",
                                   client_streaming=True, server_streaming=True)
    return D.FileDescriptorProto(name=f"{package.replace('.', '/')}/reflection.proto", package=package,
                               message_type=messages, syntax="proto3",
                               service=[D.ServiceDescriptorProto(name="ServerReflection", method=[method])])


def _health_file() -> Any:
    package = "grpc.health.v1"
    status = D.EnumDescriptorProto(name="ServingStatus", value=[
        D.EnumValueDescriptorProto(name=n, number=i) for i, n in enumerate(
            ("UNKNOWN", "SERVING", "NOT_SERVING", "SERVICE_UNKNOWN"))])
    # map<string, HealthCheckResponse> statuses = 1: a repeated field of its synthetic entry message
    entry = _replace(_message(package, "StatusesEntry", [("key", 1, "string"), ("value", 2, "HealthCheckResponse")]),
                     options=D.MessageOptions(map_entry=True))
    listed = _replace(_message(package, "HealthListResponse", [("statuses", 1, "HealthListResponse.StatusesEntry",
                                                                {"repeated": True})]), nested_type=[entry])
    messages = [_message(package, "HealthCheckRequest", [("service", 1, "string")]),
                _message(package, "HealthCheckResponse", [("status", 1, "enum:HealthCheckResponse.ServingStatus")],
                         enums=(status,)),
                _message(package, "HealthListRequest", []), listed]
    methods = [D.MethodDescriptorProto(name="Check", input_type=f".{package}.HealthCheckRequest",
                                     output_type=f".{package}.HealthCheckResponse"),
               D.MethodDescriptorProto(name="List", input_type=f".{package}.HealthListRequest",
                                     output_type=f".{package}.HealthListResponse"),
               D.MethodDescriptorProto(name="Watch", input_type=f".{package}.HealthCheckRequest",
                                     output_type=f".{package}.HealthCheckResponse", server_streaming=True)]
    return D.FileDescriptorProto(name="grpc/health/v1/health.proto", package=package, message_type=messages,
                               syntax="proto3", service=[D.ServiceDescriptorProto(name="Health", method=methods)])


@functools.cache
def reflection_schema() -> Namespace:
    """The messages and services of both reflection versions (``grpc.reflection.v1``, ``…v1alpha``)."""
    files = [_reflection_file(p) for p in REFLECTION_PACKAGES]
    return load_descriptor_set(encode(D.FileDescriptorSet(file=files)))


@functools.cache
def health_schema() -> Namespace:
    """The messages and the service of ``grpc.health.v1``."""
    return load_descriptor_set(encode(D.FileDescriptorSet(file=[_health_file()])))
