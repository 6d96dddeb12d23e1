"""pbj: Protocol Buffers for Python with plain classes and no code generation step.

Declare messages as annotated classes (or load real schemas at run time) and
encode and decode them byte-exact with every other protobuf runtime::

    import pbj

    @pbj.message
    class Timestamp:
        seconds: int = pbj.field(1, "int64")
        nanos: int = pbj.field(2, "int32")

    data = pbj.encode(Timestamp(seconds=1_700_000_000, nanos=5))
    assert pbj.decode(Timestamp, data) == Timestamp(seconds=1_700_000_000, nanos=5)

See ``docs/usage-guide.md``.
"""

from typing import TYPE_CHECKING, Any

from pbj._native import EngineChoice, engine, explain_engine, use_engine
from pbj.api import DEFAULT_MAX_DEPTH, decode, encode, encoded_size, write_reverse
from pbj.codec import ReverseBuffer, source_of
from pbj.errors import DecodeError, EncodeError, PbjError, SchemaError
from pbj.schema import (
    FieldInfo,
    FrozenMap,
    OneOf,
    field,
    fields,
    has,
    is_message,
    map_field,
    message,
    oneof,
    replace,
    unknown_fields,
)

if TYPE_CHECKING:  # imported on first use (below): ``import pbj`` loads what encode and decode need
    from pbj.extensions import (
        Extension,
        extension,
        extensions_of,
        get_extension,
        has_extension,
        with_extensions,
    )
    from pbj.google import from_google, load_google, to_google
    from pbj.loader import Namespace, load_descriptor_set, load_proto
    from pbj.loader.services import Method, Service, rpc, service
    from pbj.options import options_of
    from pbj.protojson import JSONError, from_dict, from_json, to_dict, to_json
    from pbj.python_dict import from_python, to_python
    from pbj.schema.declared_features import enum_features
    from pbj.textformat import TextError, from_text, to_text
    from pbj.validation import ValidationError, validate, validate_on_build, violations

#: The public names that live in modules imported on first use, and the module of each.
_LAZY = {
    **dict.fromkeys(("Extension", "extension", "extensions_of", "get_extension", "has_extension",
                     "with_extensions"), "pbj.extensions"),
    **dict.fromkeys(("Namespace", "load_descriptor_set", "load_proto"), "pbj.loader"),
    **dict.fromkeys(("Method", "Service", "rpc", "service"), "pbj.loader.services"),
    **dict.fromkeys(("JSONError", "from_dict", "from_json", "to_dict", "to_json"), "pbj.protojson"),
    **dict.fromkeys(("TextError", "from_text", "to_text"), "pbj.textformat"),
    "enum_features": "pbj.schema.declared_features",
    **dict.fromkeys(("from_google", "to_google", "load_google"), "pbj.google"),
    "options_of": "pbj.options",
    **dict.fromkeys(("to_python", "from_python"), "pbj.python_dict"),
    **dict.fromkeys(("validate", "violations", "validate_on_build", "ValidationError"), "pbj.validation"),
}


#: Subpackages that ``import pbj`` made reachable as attributes before they were loaded on first use:
#: ``pbj.protojson.register_types(...)`` after a plain ``import pbj`` keeps working.
_LAZY_MODULES = frozenset({"descriptor", "extensions", "feature_rules", "features", "loader", "protojson",
                           "textformat", "google", "options", "python_dict", "validation", "json_schema"})


def __getattr__(name: str) -> Any:
    """Import the module of a public name (or a subpackage) on its first use (JSON, text format, loader, extensions)."""
    import importlib
    if name in _LAZY_MODULES:
        return importlib.import_module(f"pbj.{name}")  # the import sets the attribute too
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'pbj' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY, *_LAZY_MODULES})


__all__ = [
    "DEFAULT_MAX_DEPTH", "DecodeError", "EncodeError", "FieldInfo", "FrozenMap", "OneOf",
    "PbjError", "ReverseBuffer", "SchemaError", "decode", "encode", "encoded_size", "enum_features", "field",
    "fields", "has", "is_message", "map_field", "message", "oneof", "replace", "source_of",
    "unknown_fields", "write_reverse",
    "Namespace", "load_descriptor_set", "load_proto",
    "JSONError", "from_dict", "from_json", "to_dict", "to_json",
    "TextError", "from_text", "to_text",
    "Extension", "extension", "extensions_of", "get_extension", "has_extension", "with_extensions",
    "engine", "use_engine", "explain_engine", "EngineChoice",
    "Method", "Service", "rpc", "service",
    "from_google", "to_google", "load_google", "options_of", "to_python", "from_python",
    "validate", "violations", "validate_on_build", "ValidationError",
]

__version__ = "0.1.0"
