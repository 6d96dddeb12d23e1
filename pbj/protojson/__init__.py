"""ProtoJSON: the canonical JSON form of every message (protobuf.dev "ProtoJSON Format").

``to_dict``/``to_json`` write a message as its JSON value; ``from_dict``/``from_json``
read one back, checking every value and raising :class:`JSONError` with the JSON
path of the first bad value (``$.transfers[3].amount``).

How it works: cattrs is the dispatch and caching engine. Each set of options has
its own ``cattrs.Converter`` (:mod:`pbj.protojson.converter`) whose hook
*factories* match pbj message classes; the first time a class is met, the
factory builds that class's two functions from its schema once
(:mod:`pbj.protojson.messages`): a list of per-field steps (the JSON key, the
value function picked for the field's type, when the field is skipped) and a
loop over them. cattrs caches the hook, so later calls never look at the schema
again. Nested message fields call the nested class's hook, looked up lazily on
the first value (recursive messages need no special case). A well-known type
(``google.protobuf.Timestamp`` …, recognised by its full name) gets a hook that
reads and writes its special JSON form instead (:mod:`pbj.protojson.wellknown_forms`).

The modules, one per concern:

* :mod:`~pbj.protojson.common`: :class:`JSONError`, the nesting guard;
* :mod:`~pbj.protojson.scalar_forms`: scalar values both ways (types from :mod:`pbj.scalars`);
* :mod:`~pbj.protojson.values`: the value function of a field's type, and the options;
* :mod:`~pbj.protojson.messages`: the writer and reader of an ordinary message;
* :mod:`~pbj.protojson.wellknown_forms` and :mod:`~pbj.protojson.text_forms`:
  the well-known types' forms;
* :mod:`~pbj.protojson.registry`: the classes an ``Any`` can hold;
* :mod:`~pbj.protojson.converter`: one converter per set of options;
* :mod:`~pbj.protojson.jsontext`: strict JSON text with duplicate-key detection;
* this package: the public entry points.

The package is named ``protojson`` so that it can never shadow the standard
library's ``json`` module.
"""

from __future__ import annotations

import json
from typing import Any, TypeVar

from pbj.depth import too_deep
from pbj.protojson.common import MAX_DEPTH, JSONError
from pbj.protojson.converter import converter
from pbj.protojson.jsontext import find_duplicate, loads
from pbj.protojson.registry import register_types, type_registry
from pbj.protojson.text_forms import DURATION_MAX_SECONDS, TIMESTAMP_MAX_SECONDS, TIMESTAMP_MIN_SECONDS
from pbj.protojson.values import is_message_class
from pbj.protojson.wellknown_forms import SPECIAL_FORMS
from pbj.required import FREE, check_decode, check_encode
from pbj.schema import is_message

__all__ = ["JSONError", "to_dict", "from_dict", "to_json", "from_json", "register_types", "type_registry",
           "MAX_DEPTH", "SPECIAL_FORMS", "TIMESTAMP_MIN_SECONDS", "TIMESTAMP_MAX_SECONDS", "DURATION_MAX_SECONDS"]

T = TypeVar("T")


def to_dict(obj: Any, *, emit_defaults: bool = False, proto_names: bool = False,
            enums_as_numbers: bool = False, allow_partial: bool = False) -> Any:
    """A message as its ProtoJSON value: ``dict``/``list``/``str``/numbers ready for ``json.dumps``.

    Follows protobuf.dev "ProtoJSON Format": lowerCamelCase ``json_name`` keys,
    64-bit integers as strings, NaN and infinities as strings, bytes as
    standard base64, enums by name (unknown numbers as numbers), well-known
    types in their special forms; fields at their default (implicit presence)
    and unknown fields are left out.

    Args:
        obj: a pbj message instance.
        emit_defaults: also write fields without presence that hold their
            default (zero scalars, empty repeated fields and maps).
        proto_names: use the ``.proto`` field names instead of ``json_name``.
        enums_as_numbers: write enum values as numbers.
        allow_partial: write the message even if a proto2 ``required`` field
            is not set (as Go's ``protojson.MarshalOptions.AllowPartial``).

    Returns:
        A JSON value: a ``dict`` for ordinary messages; a ``str``, number,
        ``list`` or ``None`` for well-known types with a special form.

    Raises:
        TypeError: ``obj`` is not a pbj message.
        EncodeError: a value has no JSON form (Timestamp or Duration out of
            range, an ``Any`` whose type is unknown, a float beyond float32),
            with the path of attribute names; or (unless ``allow_partial``) a
            ``required`` field is not set, naming every missing path (as
            :func:`pbj.encode`; docs/json.md); or the message is nested too
            deep for Python's recursion limit, naming its depth (:mod:`pbj.depth`).
    """
    cls = type(obj)
    if not is_message(cls):
        raise TypeError(f"{cls.__name__} is not a pbj message")
    if not allow_partial and getattr(obj, FREE, None) is not obj.__class__:
        check_encode(obj)
    conv = converter((emit_defaults, proto_names, enums_as_numbers, False), cls)
    try:
        return conv.unstructure(obj, cls)
    except RecursionError:
        raise too_deep(obj, "pbj.to_dict") from None


def from_dict(cls: type[T], d: Any, *, ignore_unknown: bool = False, allow_partial: bool = False) -> T:
    """Read a ProtoJSON value (as ``json.loads`` gives it) as a message of ``cls``.

    Accepts everything the spec allows: ``json_name`` and ``.proto`` names,
    numbers as strings or numbers (integral exponent forms included), enum
    names or numbers, URL-safe and unpadded base64, ``null`` for "default".

    Args:
        cls: a pbj message class.
        d: the JSON value (a ``dict`` for ordinary messages).
        ignore_unknown: skip unknown field names (and unknown enum names)
            instead of raising.
        allow_partial: accept a message whose proto2 ``required`` fields are
            not all set (as Go's ``protojson.UnmarshalOptions.AllowPartial``).

    Returns:
        A new instance of ``cls``.

    Raises:
        TypeError: ``cls`` is not a pbj message class.
        JSONError: the value is not a valid ProtoJSON form of ``cls``: a wrong
            JSON type, an integer out of range or not integral, bad base64, a
            bad Timestamp or Duration, an unknown field name, two members of
            one oneof, a field given under both of its names; with the path;
            or (unless ``allow_partial``) a ``required`` field is missing,
            naming every missing path (attribute names, as :func:`pbj.decode`).
    """
    if not is_message_class(cls):
        raise TypeError(f"{cls!r} is not a pbj message class")
    conv = converter((False, False, False, ignore_unknown), cls)
    result = conv.get_structure_hook(cls)(d, cls)
    if not allow_partial and getattr(result, FREE, None) is not result.__class__:
        check_decode(result, JSONError)
    return result


def to_json(obj: Any, *, emit_defaults: bool = False, proto_names: bool = False,
            enums_as_numbers: bool = False, indent: int | None = None, allow_partial: bool = False) -> str:
    """A message as ProtoJSON text; see :func:`to_dict` for the mapping and options.

    Args:
        indent: pretty-print with this many spaces per level; ``None`` gives
            compact text without spaces.

    Returns:
        The JSON text (non-ASCII characters written as they are).

    Raises:
        TypeError, EncodeError: as :func:`to_dict`.
    """
    value = to_dict(obj, emit_defaults=emit_defaults, proto_names=proto_names, enums_as_numbers=enums_as_numbers,
                    allow_partial=allow_partial)
    separators = (",", ":") if indent is None else (",", ": ")
    try:
        return json.dumps(value, indent=indent, separators=separators, ensure_ascii=False, allow_nan=False)
    except RecursionError:
        raise too_deep(obj, "pbj.to_json") from None


def from_json(cls: type[T], text: str | bytes, *, ignore_unknown: bool = False, allow_partial: bool = False) -> T:
    """Parse ProtoJSON text as a message of ``cls``; see :func:`from_dict`.

    The text must be strict JSON (RFC 8259): ``NaN``/``Infinity`` literals
    and an object key given twice are errors.

    Raises:
        TypeError: ``cls`` is not a pbj message class, or ``text`` is not
            ``str``/``bytes`` (a ``dict`` points to :func:`from_dict`).
        JSONError: the text is not JSON, has a duplicate key, or is not a
            valid ProtoJSON form of ``cls`` (see :func:`from_dict`), with the path.
    """
    if not isinstance(text, (str, bytes, bytearray)):
        hint = " (for a value json.loads gave, use pbj.from_dict)" if isinstance(text, (dict, list)) else ""
        raise TypeError(f"from_json takes JSON text (str or bytes), not {type(text).__name__}{hint}")
    duplicates: list = []
    value = loads(text, duplicates)
    result = from_dict(cls, value, ignore_unknown=ignore_unknown, allow_partial=True)
    if duplicates:  # a duplicate key the readers did not meet (inside a skipped member)
        dup = find_duplicate(value, [])
        if dup is not None:
            raise JSONError(f"duplicate key {dup[-1]!r} in a JSON object", path=dup)
    if not allow_partial and getattr(result, FREE, None) is not result.__class__:
        check_decode(result, JSONError)
    return result
