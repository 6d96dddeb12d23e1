"""The reflection protocol with no transport: what a server answers, what a client asks.

gRPC server reflection (grpc repository, ``doc/server-reflection.md``,
``grpc/reflection/v1/reflection.proto``) is one bidirectional stream of
``ServerReflectionRequest``/``ServerReflectionResponse`` messages. This module holds
both ends of it as plain Python over pbj's classes of those messages
(:func:`pbj.grpc._schemas.reflection_schema`), with no RPC runtime imported, so that
grpcio (:mod:`pbj.grpc.reflection`) and Connect (:mod:`pbj.connect.reflection`)
serve and read it alike:

* :class:`ReflectionIndex` indexes the files of namespaces (and of services declared
  in Python, written by :func:`pbj.descriptor_writer.describe`); :func:`serving_index`
  adds the reflection service's own; :class:`Answers` answers one stream's requests;
* :func:`collect` is the client's questions, a generator driven by the transport,
  and :func:`load_files` makes the files it gathered into a :class:`pbj.Namespace`.
"""

from __future__ import annotations

import enum
from collections.abc import Generator, Iterable
from typing import Any

from pbj.api import decode, encode
from pbj.descriptor import FileDescriptorProto, FileDescriptorSet
from pbj.descriptor_writer import describe
from pbj.errors import PbjError
from pbj.grpc._schemas import REFLECTION_PACKAGES, reflection_schema
from pbj.loader import Namespace, load_descriptor_set
from pbj.loader.services import Service
from pbj.schema import OneOf, is_message

__all__ = ["ReflectionError", "ReflectionIndex", "Answers", "serving_index", "collect", "response_body",
           "load_files"]

#: ``google.rpc.Code`` numbers of an ``ErrorResponse`` (``NOT_FOUND``, ``INVALID_ARGUMENT``).
_NOT_FOUND = 5
_INVALID = 3

class ReflectionError(PbjError):
    """A server serves no reflection, or its answers cannot be made into a namespace (an error
    response, a missing file)."""


def _is_type(obj: Any) -> bool:
    """Whether ``obj`` is a pbj message class or an ``enum.IntEnum`` (which :func:`pbj.descriptor_writer.describe`
    describes)."""
    return isinstance(obj, type) and (is_message(obj) or issubclass(obj, enum.IntEnum))


def _is_file(fd: Any) -> bool:
    """Whether ``fd`` is a decoded ``FileDescriptorProto`` (a function: the index keeps ``fd`` typed ``Any``)."""
    return isinstance(fd, FileDescriptorProto)


class ReflectionIndex:
    """The files of some namespaces, indexed for reflection answers.

    Args:
        schemas: :class:`pbj.Namespace` objects (or iterables of decoded
            ``FileDescriptorProto``), whose files are served as they are (a
            file of the same name in two is taken once); and
            :class:`pbj.Service` objects, message classes and enums declared in
            Python, whose files :func:`pbj.descriptor_writer.describe` writes
            (a type a namespace above declares is imported from its file).
        services: the full names ``list_services`` answers (default: every service of ``schemas``).

    Attributes:
        files: file name -> decoded ``FileDescriptorProto``.
        encoded: file name -> its serialized bytes.
        symbols: full name -> the name of the file that declares it.
        extensions: (extended message's full name, field number) -> file name.
        services: the service names listed.

    Raises:
        TypeError: a schema is none of these.
        ValueError: ``services`` names a service that is not in the schemas.
        SchemaError: a declared type cannot be described (see :func:`pbj.descriptor_writer.describe`).
    """

    def __init__(self, schemas: Iterable[Any], services: Iterable[str] | None = None) -> None:
        self.files: dict[str, Any] = {}
        self.symbols: dict[str, str] = {}
        self.extensions: dict[tuple[str, int], str] = {}
        found_services: list[str] = []
        declared: list[Any] = []
        for schema in schemas:
            if isinstance(schema, Service) or _is_type(schema):
                declared.append(schema)
                continue
            if not isinstance(schema, Namespace) and (isinstance(schema, (str, bytes)) or
                                                      not isinstance(schema, Iterable)):
                raise TypeError(f"reflection serves pbj.Namespace objects, pbj.Service objects, message classes, "
                                f"enums (or FileDescriptorProtos), not {type(schema).__name__}")
            for fd in (schema.files if isinstance(schema, Namespace) else schema):
                if not _is_file(fd):
                    raise TypeError(f"reflection serves pbj.Namespace objects or FileDescriptorProtos, "
                                    f"not {type(fd).__name__}")
                found_services += self._take(fd)
        # services and classes declared in Python: their descriptors written, importing the files above
        for fd in describe(*declared, known=self.symbols):
            found_services += self._take(fd)
        self.encoded = {name: encode(fd) for name, fd in self.files.items()}
        self.services = tuple(found_services if services is None else services)
        missing = [n for n in self.services if n not in found_services]
        if missing:
            raise ValueError(f"services {', '.join(map(repr, missing))} are not in the schemas served "
                             f"(a client could list them but not describe them); their services: "
                             f"{', '.join(found_services)}")

    def _take(self, fd: Any) -> list[str]:
        """Add a file (unless one of its name is there); the services it declares."""
        if fd.name in self.files:
            return []
        self.files[fd.name] = fd
        return self._index_file(fd)

    def _add(self, full: str, file: str) -> None:
        self.symbols.setdefault(full, file)

    def _index_file(self, fd: Any) -> list[str]:
        pkg = fd.package or ""
        prefix = f"{pkg}." if pkg else ""
        name = fd.name
        for ed in fd.enum_type:
            self._enum(ed, prefix, pkg, name)
        for md in fd.message_type:
            self._message(md, prefix, pkg, name)
        for ext in fd.extension:
            self._extension(ext, prefix, name)
        out = []
        for sd in fd.service:
            full = prefix + (sd.name or "")
            self._add(full, name)
            out.append(full)
            for m in sd.method:
                self._add(f"{full}.{m.name}", name)
        return out

    def _enum(self, ed: Any, prefix: str, package: str, file: str) -> None:
        self._add(prefix + (ed.name or ""), file)
        for v in ed.value:  # enum values are siblings of their enum (C++ scoping)
            self._add(prefix + (v.name or ""), file)

    def _message(self, md: Any, prefix: str, package: str, file: str) -> None:
        full = prefix + (md.name or "")
        self._add(full, file)
        for f in md.field:
            self._add(f"{full}.{f.name}", file)
        for od in md.oneof_decl:
            self._add(f"{full}.{od.name}", file)
        for ed in md.enum_type:
            self._enum(ed, full + ".", package, file)
        for nd in md.nested_type:
            self._message(nd, full + ".", package, file)
        for ext in md.extension:
            self._extension(ext, full + ".", file)

    def _extension(self, ext: Any, prefix: str, file: str) -> None:
        self._add(prefix + (ext.name or ""), file)
        if ext.extendee and ext.number is not None:
            self.extensions[(ext.extendee.lstrip("."), ext.number)] = file

    def closure(self, name: str, sent: set[str]) -> list[bytes]:
        """The encoded file ``name`` and the files it imports (transitively) not in ``sent``; adds them to ``sent``."""
        out = [self.encoded[name]]
        sent.add(name)
        stack = list(self.files[name].dependency)
        while stack:
            dep = stack.pop(0)
            if dep in sent or dep not in self.files:
                continue
            sent.add(dep)
            out.append(self.encoded[dep])
            stack += self.files[dep].dependency
        return out


class Answers:
    """The answers of one reflection stream (it remembers which files it sent)."""

    def __init__(self, index: ReflectionIndex, ns: Namespace, package: str) -> None:
        self.index = index
        self.sent: set[str] = set()
        self.Response = ns[f"{package}.ServerReflectionResponse"]
        self.Files = ns[f"{package}.FileDescriptorResponse"]
        self.Numbers = ns[f"{package}.ExtensionNumberResponse"]
        self.List = ns[f"{package}.ListServiceResponse"]
        self.Entry = ns[f"{package}.ServiceResponse"]
        self.Error = ns[f"{package}.ErrorResponse"]

    def answer(self, request: Any) -> Any:
        body = self._body(request.message_request)
        return self.Response(valid_host=request.host, original_request=request, message_response=body)

    def _error(self, code: int, text: str) -> OneOf:
        return OneOf("error_response", self.Error(error_code=code, error_message=text))

    def _file(self, name: str | None) -> OneOf:
        if name is None or name not in self.index.files:
            return self._error(_NOT_FOUND, f"no file named {name!r}")
        return OneOf("file_descriptor_response", self.Files(file_descriptor_proto=self.index.closure(name, self.sent)))

    def _body(self, which: Any) -> OneOf:
        if which is None:
            return self._error(_INVALID, "the request asks for nothing")
        kind, value = which
        ix = self.index
        if kind == "list_services":
            return OneOf("list_services_response", self.List(service=[self.Entry(name=n) for n in ix.services]))
        if kind == "file_by_filename":
            return self._file(value)
        if kind == "file_containing_symbol":
            name = ix.symbols.get(value.lstrip("."))
            return self._file(name) if name else self._error(_NOT_FOUND, f"no symbol named {value!r}")
        if kind == "file_containing_extension":
            name = ix.extensions.get((value.containing_type.lstrip("."), value.extension_number))
            if name is None:
                return self._error(_NOT_FOUND, f"no extension {value.extension_number} of {value.containing_type!r}")
            return self._file(name)
        if kind == "all_extension_numbers_of_type":
            base = value.lstrip(".")
            if base not in ix.symbols:
                return self._error(_NOT_FOUND, f"no message named {value!r}")
            numbers = sorted(n for t, n in ix.extensions if t == base)
            return OneOf("all_extension_numbers_response", self.Numbers(base_type_name=base, extension_number=numbers))
        return self._error(_INVALID, f"unknown request {kind!r}")  # pragma: no cover - the oneof has no other member


def serving_index(*schemas: Any, services: Iterable[str] | None = None) -> ReflectionIndex:
    """The index a server answers from: ``schemas`` and the reflection service's own file.

    Args and errors: :func:`pbj.grpc.reflection.add_reflection`'s (``services`` default: every
    service of ``schemas``, then ``grpc.reflection.v1.ServerReflection`` last, as
    grpcio-reflection lists them).
    """
    own = reflection_schema()
    listed = None if services is None else list(services)
    index = ReflectionIndex([*schemas, own], services=listed)
    if services is None:  # the reflection service last, as grpcio-reflection lists it
        index.services = (*[s for s in index.services if not s.startswith("grpc.reflection.")],
                          f"{REFLECTION_PACKAGES[0]}.ServerReflection")
    return index


# ------------------------------------------------------------------ the client side

def collect(Request: Any, host: str) -> Generator[list[Any], list[Any], list[Any]]:
    """The ``FileDescriptorProto``\\ s of every listed service and their imports, in import order.

    A generator, so that a sync and an async caller drive it alike: it yields each list of
    requests to send on one stream, is sent back that stream's responses, and returns the files.
    """
    (listing,) = yield [Request(host=host, message_request=OneOf("list_services", ""))]
    names = [s.name for s in response_body(listing, "list_services_response").service]
    files: dict[str, Any] = {}

    def take(responses: list[Any], what: list[str], optional: set[str]) -> None:
        for response, asked in zip(responses, what, strict=True):
            which = response.message_response
            if which is not None and which.which == "error_response" and asked in optional:
                continue
            for raw in response_body(response, "file_descriptor_response").file_descriptor_proto:
                fd = decode(FileDescriptorProto, raw)
                if not fd.name:
                    raise ReflectionError("the server's reflection sent a file with no name")
                files.setdefault(fd.name, fd)
    # the reflection services may be listed without their descriptors (grpcio-reflection has them, others may not)
    optional = {n for n in names if n.startswith("grpc.reflection.")}
    answers = yield [Request(host=host, message_request=OneOf("file_containing_symbol", n)) for n in names]
    take(answers, names, optional)
    while True:
        missing = sorted({d for fd in files.values() for d in fd.dependency} - set(files))
        if not missing:
            break
        answers = yield [Request(host=host, message_request=OneOf("file_by_filename", n)) for n in missing]
        take(answers, missing, set())
    ordered: list[Any] = []
    done: set[str] = set()

    def visit(name: str) -> None:
        if name in done:
            return
        done.add(name)
        for dep in files[name].dependency:
            visit(dep)
        ordered.append(files[name])
    for name in files:
        visit(name)
    return ordered


def response_body(response: Any, expected: str) -> Any:
    which = response.message_response
    if which is None:
        raise ReflectionError("the server's reflection response is empty")
    if which.which == "error_response":
        err = which.value
        raise ReflectionError(f"the server's reflection answered error {err.error_code}: {err.error_message}")
    if which.which != expected:
        raise ReflectionError(f"the server's reflection answered {which.which}, not {expected}")
    return which.value


def load_files(files: list[Any]) -> Namespace:
    return load_descriptor_set(encode(FileDescriptorSet(file=files)))  # type: ignore[call-arg]

