"""How the fields of a hand-declared class get presence, packing, group encoding and UTF-8 checks.

``@pbj.message`` builds one :class:`FieldRules` per class and applies it to
every field: without an edition the legacy keywords of ``pbj.field`` decide
("Language Guide (proto2)", "Language Guide (proto3)"); with one, each field's
resolved features do ("Feature Settings for Editions", see
:mod:`pbj.schema.declared_features`, imported when a class has an edition or
features, as are the feature enums of :mod:`pbj.feature_enums`).
"""

from __future__ import annotations

import enum
from typing import Any

from pbj.errors import SchemaError
from pbj.scalars import SCALAR_NAMES
from pbj.schema.records import FieldInfo

__all__ = ["FieldRules"]


def _is_enum(t: Any) -> bool:
    return isinstance(t, type) and issubclass(t, enum.IntEnum)


def close_plain_enum(t: Any) -> None:
    """Mark a plain ``enum.IntEnum`` (one nobody marked open or closed) closed: used by a
    proto2 class it is a proto2 enum, and proto2 enums are closed ("Language Guide (proto2)",
    "Enumerations"; "Enum Behavior"). Closedness belongs to the enum, as in protobuf, where the
    file declaring an enum decides it: the codec, the constructor, ProtoJSON and the text format
    read the mark. ``@pbj.enum_features(enum_type="OPEN")`` (or a loaded open enum) stays open.
    """
    if _is_enum(t) and not hasattr(t, "__pbj_closed__"):
        t.__pbj_closed__ = True


class FieldRules:
    """How a class's fields get presence, packing, group encoding and UTF-8 checks.

    Without an edition: the legacy keywords of ``pbj.field`` decide, and
    proto2's strings are not UTF-8-validated ("Language Guide (proto2)"). With
    one (``@pbj.message(edition="2023")``): the resolved features of each field
    decide (:mod:`pbj.schema.declared_features`), and the keywords say the same.
    """

    def __init__(self, cls_name: str, syntax: str, edition: Any, features: Any) -> None:
        self.editions = edition is not None
        self.proto2 = syntax == "proto2"
        self.base: Any = None
        if self.editions or features:
            from pbj.schema.declared_features import message_features

            self.base = message_features(edition, features, syntax, cls_name)

    def apply(self, fi: FieldInfo, features: Any, cls_name: str, *, optional_given: bool = False,
              packed_given: bool | None = None, group_given: bool = False, is_msg: bool = False,
              packable: bool = False, utf8: bool | None = None) -> None:
        """Set ``fi``'s presence, packing, group and ``utf8`` from the rules (see the class).

        ``utf8`` (the loader's resolved ``utf8_validation``) overrides the rules' choice.
        """
        strings = fi.type == "string" or (fi.is_map and "string" in (fi.map_key, fi.map_value))
        self.apply_rules(fi, features, cls_name, strings, optional_given, packed_given, group_given, is_msg,
                         packable)
        if utf8 is not None and strings:
            fi.utf8 = utf8

    def apply_rules(self, fi: FieldInfo, features: Any, cls_name: str, strings: bool, optional_given: bool,
                    packed_given: bool | None, group_given: bool, is_msg: bool, packable: bool) -> None:
        if not self.editions:
            if features:
                from pbj.schema.declared_features import field_features

                field_features(self.base, features, cls_name, fi.name, False)  # raises
            fi.utf8 = not (strings and self.proto2)
            if self.proto2 and packed_given is None:
                fi.packed = False  # proto2 packs only with [packed = true] ("Encoding", "Packed Repeated Fields")
            if self.proto2:
                close_plain_enum(fi.map_value if fi.is_map else fi.type)
            return
        from pbj.feature_enums import FieldPresence, MessageEncoding, RepeatedFieldEncoding, Utf8Validation
        from pbj.schema.declared_features import field_features

        feats = field_features(self.base, features, cls_name, fi.name, True)
        fi.utf8 = not strings or feats.utf8_validation == Utf8Validation.VERIFY
        own = features or {}
        member_msg = fi.oneof is not None and not _is_enum(fi.type) and fi.type not in SCALAR_NAMES
        _check_own_features(fi, own, feats, cls_name, strings=strings, is_msg=is_msg or member_msg,
                            packable=packable, packed_given=packed_given, group_given=group_given)
        if fi.oneof is None and not fi.repeated:
            presence = FieldPresence.LEGACY_REQUIRED if fi.required else \
                FieldPresence.EXPLICIT if optional_given else feats.field_presence
            if "field_presence" in own and own["field_presence"] not in (presence, presence.name):
                raise SchemaError(f"optional/required contradict field_presence {own['field_presence']!r}",
                                  cls_name=cls_name, field_name=fi.name)
            if is_msg and presence == FieldPresence.IMPLICIT and "field_presence" in own:
                raise SchemaError("a message field cannot have implicit presence", cls_name=cls_name,
                                  field_name=fi.name)
            fi.required = presence == FieldPresence.LEGACY_REQUIRED
            fi.optional = is_msg or presence != FieldPresence.IMPLICIT
        elif "field_presence" in own and fi.oneof is None:
            raise SchemaError("a repeated field has no presence to set", cls_name=cls_name, field_name=fi.name)
        if fi.repeated and not fi.is_map and packable and packed_given is None:
            fi.packed = feats.repeated_field_encoding == RepeatedFieldEncoding.PACKED
        if is_msg or member_msg:
            fi.group = group_given or feats.message_encoding == MessageEncoding.DELIMITED


def _check_own_features(fi: FieldInfo, own: dict, feats: Any, cls_name: str, *, strings: bool, is_msg: bool,
                        packable: bool, packed_given: bool | None, group_given: bool) -> None:
    """Refuse a field's own feature that does not apply to its kind, or that a legacy keyword
    contradicts, as protoc refuses them ("Feature Settings for Editions"; protoc's messages).

    Raises:
        SchemaError: ``repeated_field_encoding`` on a field that is not repeated, ``PACKED``
            on one that cannot be packed, or contradicted by ``packed=``;
            ``message_encoding`` on a field that is not a message, or contradicted by
            ``group=True``; ``utf8_validation`` on a field without strings;
            ``field_presence`` on a oneof member.
    """
    from pbj.feature_enums import MessageEncoding, RepeatedFieldEncoding

    def fail(reason: str) -> None:
        raise SchemaError(reason, cls_name=cls_name, field_name=fi.name)

    if "repeated_field_encoding" in own:
        packed = feats.repeated_field_encoding == RepeatedFieldEncoding.PACKED
        if not fi.repeated or fi.is_map:
            fail("only repeated fields can set repeated_field_encoding")
        if packed and not packable:
            fail("only repeated fields of numbers, bools and enums can be PACKED")
        if packed_given is not None and packed_given != packed:
            fail(f"packed={packed_given} contradicts repeated_field_encoding {feats.repeated_field_encoding.name}")
    if "message_encoding" in own:
        if not is_msg or fi.is_map:
            fail("only message fields can set message_encoding")
        if group_given and feats.message_encoding != MessageEncoding.DELIMITED:
            fail(f"group=True contradicts message_encoding {feats.message_encoding.name}")
    if "utf8_validation" in own and not strings:
        fail("only string fields (and maps with strings) can set utf8_validation")
    if "field_presence" in own and fi.oneof is not None:
        fail("a oneof member cannot set field_presence (it always has explicit presence)")
