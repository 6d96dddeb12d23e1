"""The services' part of ``pbj stubs``: typed client stubs and servicer bases, per protobuf package.

For each service ``Greeter`` of a package, the package's ``.pyi`` (written by :mod:`pbj.stubs`)
gets four classes:

* ``GreeterStub(channel)`` and ``GreeterAsyncStub(channel)``: each method an attribute typed as
  :mod:`pbj.grpc.typed`'s protocol for its kind, with the request and response classes
  (``UnaryUnary[HelloRequest, HelloReply]``);
* ``GreeterServicer`` and ``GreeterAsyncServicer``: servicer bases whose methods carry the types a
  handler takes and returns (``async def`` and async iterators for the second).

At run time the package's module gives these names on first use (a module ``__getattr__``, so
importing the package needs no grpcio): the stubs are :class:`pbj.grpc.Stub` subclasses bound to the
service, the bases :class:`pbj.grpc.Servicer` subclasses (the same classes for sync and asyncio:
the channel and the server decide). A name that a message or enum of the package already has is
not written; a method named like a Python keyword (``rpc from(...)``, which protoc accepts) is
left out of the typed attributes (``stub["from"]`` reaches it, typed ``Any``).
"""

from __future__ import annotations

import keyword
import types
from typing import Any

__all__ = ["service_stub_lines", "service_module_lines", "runtime_attr"]

_SUFFIXES = ("AsyncStub", "AsyncServicer", "Stub", "Servicer")
_PROTOCOLS = {"unary_unary": "UnaryUnary", "unary_stream": "UnaryStream", "stream_unary": "StreamUnary",
              "stream_stream": "StreamStream"}


def _typable(name: str) -> bool:
    """A method name the stubs can declare: not a Python keyword, not dunder, not a name the classes use."""
    return not keyword.iskeyword(name) and not name.startswith("_") and name != "add_to_server"


def _services(ns: Any, package: str) -> list[Any]:
    return [s for s in ns.services.values() if s.package == package]


def _taken(ns: Any, package: str) -> set[str]:
    prefix = f"{package}." if package else ""
    return {full[len(prefix):] for full in (*ns.messages, *ns.enums)
            if full.startswith(prefix) and "." not in full[len(prefix):]}


def _names(ns: Any, package: str, service: Any) -> list[str]:
    taken = _taken(ns, package)
    return [n for n in (service.name + s for s in _SUFFIXES) if n not in taken]


def service_stub_lines(ns: Any, package: str, module: Any) -> list[str]:
    """The ``.pyi`` lines of the services of ``package`` (none without services).

    Args:
        ns: the loaded schema.
        package: the protobuf package.
        module: :mod:`pbj.stubs`' module writer of this package (its ``ref(cls)`` spells a class).
    """
    out: list[str] = []
    for svc in _services(ns, package):
        names = set(_names(ns, package, svc))
        if not out:
            out += ["import pbj.grpc.typed as _pbj_grpc", ""]
        for suffix, aio in (("Stub", False), ("AsyncStub", True)):
            if svc.name + suffix not in names:
                continue
            out += [f"class {svc.name}{suffix}:",
                    f'    """The client stub of {svc.full_name}, on a grpc{".aio" if aio else ""}.Channel."""',
                    "    def __init__(self, channel: _pbj_t.Any) -> None: ...",
                    *(f"    {m.name}: _pbj_grpc.{'Async' if aio else ''}{_PROTOCOLS[m.kind]}"
                      f"[{module.ref(m.input)}, {module.ref(m.output)}]" for m in svc if _typable(m.name)),
                    "    def __getitem__(self, name: _pbj_b.str) -> _pbj_t.Any: ...", "", ""]
        for suffix, aio in (("Servicer", False), ("AsyncServicer", True)):
            if svc.name + suffix not in names:
                continue
            out += [f"class {svc.name}{suffix}(_pbj_grpc.ServicerBase):",
                    f'    """The servicer base of {svc.full_name}, on a grpc{".aio" if aio else ""} server."""']
            for m in svc:
                if not _typable(m.name):  # served by name (a mapping to add_to_server), not declarable here
                    continue
                req, resp = module.ref(m.input), module.ref(m.output)
                it = "_pbj_t.AsyncIterator" if aio else "_pbj_t.Iterator"
                arg = f"request_iterator: {it}[{req}]" if m.client_streaming else f"request: {req}"
                ret = f"{it}[{resp}]" if m.server_streaming else resp
                head = "async def" if aio and not m.server_streaming else "def"
                out.append(f"    {head} {m.name}(self, {arg}, context: _pbj_t.Any) -> {ret}: ...")
            out += ["", ""]
    return out


def service_module_lines(ns: Any, package: str) -> list[str]:
    """The ``.py`` lines that give the services' names of ``package`` on first use (none without services)."""
    names = [n for svc in _services(ns, package) for n in _names(ns, package, svc)]
    if not names:
        return []
    return ["", "",
            f"_pbj_service_names = {tuple(names)!r}", "",
            "",
            "def __getattr__(name):",
            '    """The services\' stubs and servicer bases, made on first use (they need grpcio)."""',
            "    if name not in _pbj_service_names:",
            "        raise AttributeError(f'module {__name__!r} has no attribute {name!r}')",
            "    from pbj.grpc.stubs import runtime_attr",
            f"    value = globals()[name] = runtime_attr(_pbj_namespace, {package!r}, name)",
            "    return value"]


def runtime_attr(ns: Any, package: str, name: str) -> Any:
    """The class named ``name`` (``GreeterStub``, ``GreeterServicer`` …) of a service of ``package``.

    Raises:
        AttributeError: no service of ``package`` gives that name.
    """
    from pbj.grpc.client import Stub
    from pbj.grpc.server import Servicer
    for svc in _services(ns, package):
        for suffix in _SUFFIXES:
            if name == svc.name + suffix:
                if suffix.endswith("Stub"):
                    def __init__(self: Any, channel: Any, _svc: Any = svc) -> None:
                        Stub.__init__(self, channel, _svc)
                    return type(name, (Stub,), {"__init__": __init__, "__module__": _module_name(package),
                                                "__doc__": f"The client stub of {svc.full_name}."})
                attrs = {"__module__": _module_name(package), "__doc__": f"The servicer base of {svc.full_name}."}

                def fill(body: dict[str, Any], attrs: dict[str, Any] = attrs) -> None:
                    body.update(attrs)
                return types.new_class(name, (Servicer,), {"service": svc}, fill)
    raise AttributeError(f"no service of package {package!r} gives {name!r}")


def _module_name(package: str) -> str:
    return f"pbj.services.{package}" if package else "pbj.services"
