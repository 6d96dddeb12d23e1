"""Names a message may not give twice: protoc's rules for field names and JSON names.

protoc refuses a message (``FileDescriptorProto`` validation, the same for ``.proto``
files and descriptor sets) with:

* two fields (oneof members included) of the same name;
* a custom ``json_name`` that looks like an extension name (``"[x]"``);
* two fields whose *default* JSON names (the lowerCamelCase of the name, whatever
  ``json_name`` says: "ProtoJSON Format") are equal, when the message's
  ``json_format`` is ``ALLOW`` (proto3, and editions' default);
* two fields whose JSON names (``json_name`` where it differs from the default, else
  the default) are equal, when both are custom names (in proto2 too), or when one is
  custom and the message's ``json_format`` is ``ALLOW``.

With ``json_format = LEGACY_BEST_EFFORT`` (proto2's) a conflict that involves a default
name is only a warning of protoc's: such a class loads, and ProtoJSON refuses to write or
read it (:func:`json_conflict`), as two fields would share one key. Comparisons are
case-sensitive, as protoc's (``Foo`` and ``foo`` are two names). A message with
``option deprecated_legacy_json_field_conflicts = true`` skips the JSON checks (protoc does).
"""

from __future__ import annotations

from collections.abc import Iterable

from pbj.errors import SchemaError
from pbj.schema.records import FieldInfo, json_name_of

__all__ = ["check_field_names", "json_conflict"]


def check_field_names(cls_name: str, fields: Iterable[FieldInfo], *, legacy_json: bool,
                      skip_json: bool = False) -> None:
    """Refuse what protoc refuses about a message's field names and JSON names (see the module).

    Args:
        cls_name: the message's name, for the error.
        fields: every field of the message, oneof members included, in declaration order.
        legacy_json: the message's ``json_format`` is ``LEGACY_BEST_EFFORT`` (proto2).
        skip_json: the message sets ``deprecated_legacy_json_field_conflicts``.

    Raises:
        SchemaError: naming both fields (the second is ``field_name``).
    """
    fields = list(fields)
    by_name: dict[str, FieldInfo] = {}
    for f in fields:
        name = f.proto_name or f.name
        other = by_name.setdefault(name, f)
        if other is not f:
            raise SchemaError(f"fields {other.number} and {f.number} are both named {name!r} (protoc: "
                              "\"is already defined\")", cls_name=cls_name, field_name=name)
    if skip_json:
        return
    defaults: dict[str, FieldInfo] = {}
    for f in fields:
        name = f.proto_name or f.name
        default = json_name_of(name)
        custom = f.json_name and f.json_name != default
        if custom and f.json_name.startswith("[") and f.json_name.endswith("]"):
            raise SchemaError(f"the custom JSON name {f.json_name!r} of field {name!r} is invalid: JSON names may "
                              "not start with "
                              "'[' and end with ']' (those name extensions)", cls_name=cls_name, field_name=name)
        other = defaults.setdefault(default, f)
        if other is not f and not legacy_json:
            raise SchemaError(f"the default JSON name of field {name!r} ({default!r}) conflicts with the default "
                              f"JSON name of field {(other.proto_name or other.name)!r} (protoc refuses it with "
                              "json_format = ALLOW, proto3's)", cls_name=cls_name, field_name=name)
    effective: dict[str, FieldInfo] = {}
    for f in fields:
        name = f.proto_name or f.name
        default = json_name_of(name)
        key = f.json_name or default
        other = effective.setdefault(key, f)
        if other is f:
            continue
        mine, theirs = key != default, key != json_name_of(other.proto_name or other.name)
        if not (mine or theirs):
            continue  # two default names: the check above
        if (mine and theirs) or not legacy_json:
            raise SchemaError(f"the {'custom' if mine else 'default'} JSON name of field {name!r} ({key!r}) "
                              f"conflicts with the {'custom' if theirs else 'default'} JSON name of field "
                              f"{(other.proto_name or other.name)!r}", cls_name=cls_name, field_name=name)


def json_conflict(fields: Iterable[FieldInfo]) -> tuple[FieldInfo, FieldInfo] | None:
    """The first two fields that share a JSON name (only a ``LEGACY_BEST_EFFORT`` class has them), or ``None``."""
    seen: dict[str, FieldInfo] = {}
    for f in fields:
        key = f.json_name or json_name_of(f.proto_name or f.name)
        other = seen.setdefault(key, f)
        if other is not f:
            return other, f
    return None
