"""pbj message classes as pydantic v2 types (and so as FastAPI request and response bodies).

Every message class has the two hooks pydantic looks for on a foreign type
(``__get_pydantic_core_schema__`` and ``__get_pydantic_json_schema__``, installed when the
class is made, :mod:`pbj.schema.protocols`); they call this module, which imports pydantic
only then. A message field of a pydantic model, or a FastAPI body typed with a message class:

* **validates** with pbj's own checks: a message of the class is taken as it is; any other
  value is read as ProtoJSON (:func:`pbj.from_dict`; JSON text, ``str`` or ``bytes``, with
  :func:`pbj.from_json`). A bad value is a ``pydantic.ValidationError`` whose ``loc`` ends
  with the JSON path of the bad field (``("body", "age")`` in FastAPI's 422 answer) and whose
  ``msg`` is pbj's;
* **serializes** in JSON mode as ProtoJSON (:func:`pbj.to_dict`), and in Python mode as the
  message itself;
* has the **JSON Schema** of its ProtoJSON form (:mod:`pbj.json_schema`: 64-bit integers as
  strings, enums by name, oneofs, maps, well-known types), nested messages as definitions
  (``components/schemas`` of FastAPI's OpenAPI document) named by full name.
"""

from __future__ import annotations

from typing import Any

__all__ = ["core_schema", "json_schema"]


def _fail(cls: type, exc: Exception, value: Any) -> Exception:
    """A ``pydantic_core.ValidationError`` for pbj's error ``exc``, located at its JSON path."""
    from pydantic_core import InitErrorDetails, PydanticCustomError, ValidationError

    path = getattr(exc, "path", None) or []
    loc = tuple(p[0] if isinstance(p, tuple) else p for p in path)
    reason = getattr(exc, "reason", None) or str(exc)
    detail = InitErrorDetails(type=PydanticCustomError("protobuf", "{reason}", {"reason": reason}), loc=loc,
                              input=value)
    return ValidationError.from_exception_data(cls.__name__, [detail])


def core_schema(cls: type, handler: Any) -> Any:
    """The pydantic-core schema of message class ``cls`` (its ``__get_pydantic_core_schema__``)."""
    from pydantic_core import core_schema as cs

    from pbj.errors import PbjError
    from pbj.protojson import from_dict, from_json, to_dict
    from pbj.schema import info, is_message

    def from_python(value: Any) -> Any:
        if type(value) is cls:
            return value
        if is_message(value):
            raise _fail(cls, TypeError(f"expected a {info(cls).full_name} message, got a "
                                       f"{info(type(value)).full_name}"), value)
        try:
            if isinstance(value, (str, bytes, bytearray)):
                return from_json(cls, bytes(value) if isinstance(value, bytearray) else value)
            return from_dict(cls, value)
        except (PbjError, TypeError, ValueError) as exc:
            raise _fail(cls, exc, value) from None

    def from_json_value(value: Any) -> Any:
        try:
            return from_dict(cls, value)
        except (PbjError, TypeError, ValueError) as exc:
            raise _fail(cls, exc, value) from None

    return cs.json_or_python_schema(
        json_schema=cs.no_info_plain_validator_function(from_json_value),
        python_schema=cs.no_info_plain_validator_function(from_python),
        serialization=cs.plain_serializer_function_ser_schema(lambda m: to_dict(m), when_used="json"),
        ref=f"pbj.message:{info(cls).full_name}:{id(cls)}",
    )


def json_schema(cls: type, handler: Any) -> dict[str, Any]:
    """The JSON Schema of message class ``cls`` (its ``__get_pydantic_json_schema__``).

    With pydantic's own schema generator (``handler.generate_json_schema``), each nested
    message class becomes a definition of the document (a ``$ref``), as a pydantic model
    would; with another handler, the schema is self-contained (:func:`pbj.json_schema.json_schema`).
    """
    from pbj import json_schema as js
    from pbj.schema import info

    gen = getattr(handler, "generate_json_schema", None)
    if gen is None or not hasattr(gen, "get_cache_defs_ref_schema") or not isinstance(
            getattr(gen, "definitions", None), dict):
        return js.json_schema(cls)

    def ref(t: type) -> dict[str, Any]:
        from pydantic.json_schema import CoreRef

        defs_ref, ref_schema = gen.get_cache_defs_ref_schema(CoreRef(f"pbj.message:{info(t).full_name}:{id(t)}"))
        if defs_ref not in gen.definitions:
            gen.definitions[defs_ref] = {}  # a recursive message refers to itself while it is written
            gen.definitions[defs_ref] = js.message_schema(t, ref)
        return dict(ref_schema)

    return js.message_schema(cls, ref)
