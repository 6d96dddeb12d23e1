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
from pbj.schema.resolve import class_needed, message_needed

__all__ = ["JSONError", "to_dict", "from_dict", "to_json", "from_json", "register_types", "type_registry",
           "MAX_DEPTH", "SPECIAL_FORMS", "TIMESTAMP_MIN_SECONDS", "TIMESTAMP_MAX_SECONDS", "DURATION_MAX_SECONDS"]

T = TypeVar("T")


def _option(value: bool, google: bool | None, name: str, google_name: str, where: str) -> bool:
    """pbj's option ``name``, or Google's ``google_name`` for the same option (``json_format``'s keyword).

    Raises:
        TypeError: both are given, with different values.
    """
    if google is None:
        return value
    if value and not google:
        raise TypeError(f"{where}: give {name} (or Google's name for it, {google_name}), not both")
    return bool(google)


#: pbj's output options and Google's names for them (``json_format.MessageToDict``), in that order.
_OUTPUT_OPTIONS = (("emit_defaults", "always_print_fields_with_no_presence"),
                   ("proto_names", "preserving_proto_field_name"),
                   ("enums_as_numbers", "use_integers_for_enums"))


def _output_options(where: str, values: tuple[bool, bool, bool],
                    google: tuple[bool | None, bool | None, bool | None]) -> tuple[bool, bool, bool]:
    """``(emit_defaults, proto_names, enums_as_numbers)`` from pbj's and Google's spellings (:func:`_option`)."""
    a, b, c = (_option(v, g, name, google_name, where)
               for v, g, (name, google_name) in zip(values, google, _OUTPUT_OPTIONS, strict=True))
    return a, b, c


def to_dict(obj: Any, *, emit_defaults: bool = False, proto_names: bool = False,
            enums_as_numbers: bool = False, allow_partial: bool = False,
            always_print_fields_with_no_presence: bool | None = None,
            preserving_proto_field_name: bool | None = None, use_integers_for_enums: bool | None = None) -> Any:
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
        always_print_fields_with_no_presence, preserving_proto_field_name, use_integers_for_enums:
            Google's names (``json_format.MessageToDict``) for ``emit_defaults``,
            ``proto_names`` and ``enums_as_numbers``, accepted as those.

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
            deep for Python's recursion limit, naming its depth (:mod:`pbj.depth`);
            or (``TypeError``) one of pbj's options and Google's name for it, both given, differ.
    """
    emit_defaults, proto_names, enums_as_numbers = _output_options(
        "pbj.to_dict", (emit_defaults, proto_names, enums_as_numbers),
        (always_print_fields_with_no_presence, preserving_proto_field_name, use_integers_for_enums))
    cls = type(obj)
    if not is_message(cls):
        raise message_needed(obj, "pbj.to_dict")
    if not allow_partial and getattr(obj, FREE, None) is not obj.__class__:
        check_encode(obj)
    conv = converter((emit_defaults, proto_names, enums_as_numbers, False), cls)
    try:
        return conv.unstructure(obj, cls)
    except RecursionError:
        raise too_deep(obj, "pbj.to_dict") from None


def from_dict(cls: type[T], d: Any, *, ignore_unknown: bool = False, allow_partial: bool = False,
              ignore_unknown_fields: bool | None = None) -> T:
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
        ignore_unknown_fields: Google's name (``json_format.ParseDict``) for ``ignore_unknown``,
            accepted as it.

    Returns:
        A new instance of ``cls``.

    Raises:
        TypeError: ``cls`` is not a pbj message class; ``ignore_unknown`` and
            ``ignore_unknown_fields`` both given, and different.
        JSONError: the value is not a valid ProtoJSON form of ``cls``: a wrong
            JSON type, an integer out of range or not integral, bad base64, a
            bad Timestamp or Duration, an unknown field name, two members of
            one oneof, a field given under both of its names; with the path;
            or (unless ``allow_partial``) a ``required`` field is missing,
            naming every missing path (attribute names, as :func:`pbj.decode`).
    """
    if not is_message_class(cls):
        raise class_needed(cls, "pbj.from_dict")
    ignore_unknown = _option(ignore_unknown, ignore_unknown_fields, "ignore_unknown", "ignore_unknown_fields",
                             "pbj.from_dict")
    conv = converter((False, False, False, ignore_unknown), cls)
    result = conv.get_structure_hook(cls)(d, cls)
    if not allow_partial and getattr(result, FREE, None) is not result.__class__:
        check_decode(result, JSONError)
    return result


def to_json(obj: Any, *, emit_defaults: bool = False, proto_names: bool = False,
            enums_as_numbers: bool = False, indent: int | None = None, allow_partial: bool = False,
            always_print_fields_with_no_presence: bool | None = None,
            preserving_proto_field_name: bool | None = None, use_integers_for_enums: bool | None = None) -> str:
    """A message as ProtoJSON text; see :func:`to_dict` for the mapping and options (Google's
    names for three of them included).

    Args:
        indent: pretty-print with this many spaces per level; ``None`` gives
            compact text without spaces (Google's ``MessageToJson`` indents by 2 unless told).

    Returns:
        The JSON text (non-ASCII characters written as they are).

    Raises:
        TypeError, EncodeError: as :func:`to_dict`.
    """
    emit_defaults, proto_names, enums_as_numbers = _output_options(
        "pbj.to_json", (emit_defaults, proto_names, enums_as_numbers),
        (always_print_fields_with_no_presence, preserving_proto_field_name, use_integers_for_enums))
    if not is_message(type(obj)):
        raise message_needed(obj, "pbj.to_json")
    value = to_dict(obj, emit_defaults=emit_defaults, proto_names=proto_names, enums_as_numbers=enums_as_numbers,
                    allow_partial=allow_partial)
    separators = (",", ":") if indent is None else (",", ": ")
    try:
        return json.dumps(value, indent=indent, separators=separators, ensure_ascii=False, allow_nan=False)
    except RecursionError:
        raise too_deep(obj, "pbj.to_json") from None


def from_json(cls: type[T], text: str | bytes, *, ignore_unknown: bool = False, allow_partial: bool = False,
              ignore_unknown_fields: bool | None = None) -> T:
    """Parse ProtoJSON text as a message of ``cls``; see :func:`from_dict` (``ignore_unknown_fields``:
    Google's name for ``ignore_unknown``, as ``json_format.Parse`` spells it).

    The text must be strict JSON (RFC 8259): ``NaN``/``Infinity`` literals
    and an object key given twice are errors.

    Raises:
        TypeError: ``cls`` is not a pbj message class, or ``text`` is not
            ``str``/``bytes`` (a ``dict`` points to :func:`from_dict`); or ``ignore_unknown``
            and ``ignore_unknown_fields`` both given, and different.
        JSONError: the text is not JSON, has a duplicate key, or is not a
            valid ProtoJSON form of ``cls`` (see :func:`from_dict`), with the path.
    """
    if not is_message_class(cls):
        raise class_needed(cls, "pbj.from_json")
    ignore_unknown = _option(ignore_unknown, ignore_unknown_fields, "ignore_unknown", "ignore_unknown_fields",
                             "pbj.from_json")
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
