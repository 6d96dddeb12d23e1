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

from typing import TYPE_CHECKING

from pbj._native import EngineChoice, engine, explain_engine, use_engine
from pbj.api import DEFAULT_MAX_DEPTH, decode, encode, encoded_size, write_reverse
from pbj.codec import ReverseBuffer, source_of
from pbj.errors import DecodeError, EncodeError, JSONError, PbjError, SchemaError, TextError, ValidationError
from pbj.extensions import (
    Extension,
    extension,
    extensions_of,
    get_extension,
    has_extension,
    with_extensions,
)
from pbj.loader import Namespace, load_descriptor_set, load_proto
from pbj.loader.services import Method, Service, rpc, service
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

# ProtoJSON, the text format, the editions tables and the bridges (Google's classes, options, validation,
# Python dicts) are imported on first use (pbj.deferred: no module __getattr__, so that ``pbj.encode`` is a
# plain module attribute, specialised by CPython).
if TYPE_CHECKING:
    from pbj import descriptor as descriptor
    from pbj import feature_rules as feature_rules
    from pbj import features as features
    from pbj import google as google
    from pbj import json_schema as json_schema
    from pbj import options as options
    from pbj import protojson as protojson
    from pbj import python_dict as python_dict
    from pbj import textformat as textformat
    from pbj import validation as validation
    from pbj.google import from_google, load_google, to_google
    from pbj.options import options_of
    from pbj.protojson import from_dict, from_json, to_dict, to_json
    from pbj.python_dict import from_python, to_python
    from pbj.schema.declared_features import enum_features
    from pbj.textformat import from_text, to_text
    from pbj.validation import validate, validate_on_build, violations
else:
    from pbj.deferred import DeferredFunction as _DeferredFunction
    from pbj.deferred import DeferredModule as _DeferredModule

    for _module, _names in (("pbj.protojson", ("from_dict", "from_json", "to_dict", "to_json")),
                            ("pbj.textformat", ("from_text", "to_text")),
                            ("pbj.schema.declared_features", ("enum_features",)),
                            ("pbj.google", ("from_google", "to_google", "load_google")),
                            ("pbj.options", ("options_of",)),
                            ("pbj.python_dict", ("to_python", "from_python")),
                            ("pbj.validation", ("validate", "violations", "validate_on_build"))):
        for _name in _names:
            globals()[_name] = _DeferredFunction(globals(), _module, _name)
    # subpackages a plain ``import pbj`` makes reachable (``pbj.protojson.register_types(...)``)
    for _name in ("descriptor", "feature_rules", "features", "protojson", "textformat", "google", "options",
                  "python_dict", "validation", "json_schema"):
        if _name not in globals():
            globals()[_name] = _DeferredModule(f"pbj.{_name}", "imported on first use")
    del _module, _names, _name, _DeferredFunction, _DeferredModule

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
