"""Declaring messages: ``@pbj.message``, ``pbj.field``, ``pbj.map_field``, ``pbj.oneof``.

A message is an annotated class whose fields each name their field number and
protobuf type (protobuf.dev "Language Guide (proto3)")::

    @pbj.message
    class Transfer:
        account: Account | None = pbj.field(1, Account)
        amount: int = pbj.field(2, "sint64")
        memo: str = pbj.field(3, "string")
        tags: tuple[str, ...] = pbj.field(4, "string", repeated=True)

``@pbj.message`` checks the declaration (raising :class:`SchemaError`) and
turns the class into a frozen attrs class with slots. Its instances are
immutable, so the encoded size cached on them never goes stale: repeated
fields are tuples and maps are :class:`FrozenMap`. The constructor checks
every value (``TypeError``/``ValueError`` naming class, field and value);
``pbj.replace`` (or ``attrs.evolve``) makes a changed, checked copy.

Each message class keeps its schema in ``__pbj_info__`` (a :class:`MessageInfo`)
and its compiled codec, once built, in ``__pbj_codec__``.

The package, one module per concern:

* :mod:`~pbj.schema.containers`: the values of maps and oneofs (``FrozenMap``, ``OneOf``);
* :mod:`~pbj.schema.specs`: the field specifiers (``field``, ``map_field``, ``oneof``);
* :mod:`~pbj.schema.records`: the schema records (``FieldInfo``, ``OneofInfo``, ``MessageInfo``);
* :mod:`~pbj.schema.declare`: ``@pbj.message``, the declaration rules;
* :mod:`~pbj.schema.make_class`: the attrs class on its hidden slots base;
* :mod:`~pbj.schema.methods`: ``__eq__``, ``__hash__``, ``__repr__``, compiled on first call;
* :mod:`~pbj.schema.resolve`: forward references, introspection (``info``, ``fields``, ``replace``);
* :mod:`~pbj.schema.values`: what each field accepts (the construction checks);
* :mod:`~pbj.schema.constructor`: the generated checking ``__init__``;
* :mod:`~pbj.schema.presence`: declared defaults and presence (``has``, ``stored``);
* :mod:`~pbj.schema.declared_features`: editions features of hand-declared classes;
* :mod:`~pbj.schema.field_rules`: presence, packing, groups and UTF-8 checks of each declared field.
"""

from pbj.scalars import MAP_KEY_NAMES as MAP_KEY_TYPES
from pbj.scalars import SCALAR_NAMES as SCALAR_TYPES
from pbj.schema.containers import EMPTY_MAP, FrozenMap, OneOf
from pbj.schema.declare import message
from pbj.schema.presence import has, stored
from pbj.schema.records import FieldInfo, MessageInfo, OneofInfo, enum_default, is_message, json_name_of
from pbj.schema.resolve import fields, info, replace, resolve, unknown_fields
from pbj.schema.specs import field, map_field, oneof

__all__ = [
    "SCALAR_TYPES", "MAP_KEY_TYPES", "FieldInfo", "OneofInfo", "MessageInfo", "FrozenMap", "OneOf",
    "EMPTY_MAP", "field", "map_field", "oneof", "message", "is_message", "fields", "info", "resolve",
    "replace", "unknown_fields", "json_name_of", "enum_default", "has", "stored",
]
