"""Helpers that make Google's well-known types feel like Python (protobuf.dev "Protocol Buffers Well-Known Types").

They work on the classes of :mod:`pbj.wellknown` and on the same types loaded
from a descriptor set (``ns["google.protobuf.Timestamp"]``: the loader gives
the :mod:`pbj.wellknown` class itself), and on any class declared with the
well-known full name: fields are found by their ``.proto`` names. Functions
that build a message take ``cls=`` for such a class (default: the
:mod:`pbj.wellknown` one).

* ``Timestamp`` <-> ``datetime`` (timezone-aware, UTC), nanoseconds since the
  epoch (lossless), RFC 3339 text: :func:`timestamp_from_datetime`,
  :func:`timestamp_to_datetime`, :func:`timestamp_from_nanos`,
  :func:`timestamp_to_nanos`, :func:`timestamp_from_text`, :func:`timestamp_to_text`,
  :func:`timestamp_now`.
* ``Duration`` <-> ``timedelta``, nanoseconds (lossless), ProtoJSON text:
  :func:`duration_from_timedelta`, :func:`duration_to_timedelta`,
  :func:`duration_from_nanos`, :func:`duration_to_nanos`,
  :func:`duration_from_text`, :func:`duration_to_text`.
* ``Any``: :func:`pack`, :func:`unpack`, :func:`is_type`, :func:`type_name`.
* ``Struct``, ``Value``, ``ListValue`` <-> ``dict``, plain values, ``list``:
  :func:`struct_from_dict`, :func:`struct_to_dict`, :func:`value_from_python`,
  :func:`value_to_python`, :func:`list_value_from_list`, :func:`list_value_to_list`.
* wrappers (``Int32Value`` …) <-> a plain value or ``None``: :func:`wrap`, :func:`unwrap`.
* ``FieldMask`` <-> paths and ProtoJSON text: :func:`field_mask`,
  :func:`field_mask_paths`, :func:`field_mask_from_text`, :func:`field_mask_to_text`.

Precision: a ``datetime`` or ``timedelta`` holds microseconds, a ``Timestamp``
or ``Duration`` nanoseconds. Converting to ``datetime``/``timedelta`` drops the
last three digits (toward zero, as Google's ``ToDatetime``/``ToTimedelta``
do); the ``*_nanos`` and ``*_text`` functions keep every nanosecond.
"""

from pbj.wkt.anys import DEFAULT_TYPE_URL_PREFIX, UnknownTypeError, is_type, pack, type_name, unpack
from pbj.wkt.durations import (
    duration_from_nanos,
    duration_from_text,
    duration_from_timedelta,
    duration_to_nanos,
    duration_to_text,
    duration_to_timedelta,
)
from pbj.wkt.structs import (
    list_value_from_list,
    list_value_to_list,
    struct_from_dict,
    struct_to_dict,
    value_from_python,
    value_to_python,
)
from pbj.wkt.timestamps import (
    timestamp_from_datetime,
    timestamp_from_nanos,
    timestamp_from_text,
    timestamp_now,
    timestamp_to_datetime,
    timestamp_to_nanos,
    timestamp_to_text,
)
from pbj.wkt.wrappers import field_mask, field_mask_from_text, field_mask_paths, field_mask_to_text, unwrap, wrap

__all__ = [
    "UnknownTypeError", "DEFAULT_TYPE_URL_PREFIX",
    "timestamp_from_datetime", "timestamp_to_datetime", "timestamp_from_nanos", "timestamp_to_nanos",
    "timestamp_from_text", "timestamp_to_text", "timestamp_now",
    "duration_from_timedelta", "duration_to_timedelta", "duration_from_nanos", "duration_to_nanos",
    "duration_from_text", "duration_to_text",
    "pack", "unpack", "is_type", "type_name",
    "struct_from_dict", "struct_to_dict", "value_from_python", "value_to_python",
    "list_value_from_list", "list_value_to_list",
    "wrap", "unwrap", "field_mask", "field_mask_paths", "field_mask_from_text", "field_mask_to_text",
]
