"""The messages of ``google/protobuf/descriptor.proto`` that a ``FileDescriptorSet`` needs.

A descriptor set (what ``protoc --descriptor_set_out`` or ``buf build -o``
writes) is itself a protobuf message. pbj decodes it with pbj: the messages
below are declared by hand with ``@pbj.message`` (``syntax="proto2"``: every
singular scalar has explicit presence, so an absent option is ``None``).

Only what the loader reads, and what a round trip should keep, is declared;
everything else a descriptor carries (options this module does not declare,
custom options as extensions) is kept as unknown fields and written back
unchanged. Enums are open in pbj, so a newer ``Edition`` or ``Type`` number
decodes to a plain ``int``.

Field numbers and names follow ``descriptor.proto`` of protobuf v30+.
"""

from __future__ import annotations

from pbj.feature_enums import (
    EnumType,
    FieldPresence,
    JsonFormat,
    MessageEncoding,
    RepeatedFieldEncoding,
    Utf8Validation,
)
from pbj.feature_enums import OpenEnum as _OpenEnum
from pbj.schema import field as _f
from pbj.schema import message

__all__ = [
    "Edition", "SymbolVisibility", "FileDescriptorSet", "FileDescriptorProto", "DescriptorProto",
    "ExtensionRange", "ReservedRange", "ExtensionRangeOptions", "FieldDescriptorProto",
    "OneofDescriptorProto", "EnumDescriptorProto", "EnumReservedRange", "EnumValueDescriptorProto",
    "ServiceDescriptorProto", "MethodDescriptorProto", "FileOptions", "MessageOptions",
    "FieldOptions", "OneofOptions", "EnumOptions", "EnumValueOptions", "ServiceOptions",
    "MethodOptions", "UninterpretedOption", "NamePart", "FeatureSet", "SourceCodeInfo",
    "Location", "GeneratedCodeInfo", "Annotation",
    # FeatureSet's enums, from pbj.feature_enums
    "FieldPresence", "EnumType", "RepeatedFieldEncoding", "Utf8Validation", "MessageEncoding", "JsonFormat",
]

_P = "google.protobuf."


def _msg(name: str):
    return message(full_name=_P + name, syntax="proto2")


class Edition(_OpenEnum):
    """The edition of a ``.proto`` file (``syntax = "proto2"`` is ``EDITION_PROTO2`` …)."""

    EDITION_UNKNOWN = 0
    EDITION_LEGACY = 900
    EDITION_PROTO2 = 998
    EDITION_PROTO3 = 999
    EDITION_2023 = 1000
    EDITION_2024 = 1001
    EDITION_2026 = 1002
    EDITION_UNSTABLE = 9999
    EDITION_MAX = 0x7FFFFFFF


class SymbolVisibility(_OpenEnum):
    """The ``export``/``local`` visibility of a message or enum (edition 2024)."""

    VISIBILITY_UNSET = 0
    VISIBILITY_LOCAL = 1
    VISIBILITY_EXPORT = 2


# ----------------------------------------------------------------- features
# The six feature enums (FieldPresence ... JsonFormat) and the open-enum base live in
# pbj.feature_enums, below pbj.schema, which reads them too; they are importable from here.

@_msg("FeatureSet")
class FeatureSet:
    """Editions features (``FeatureSet``); language extensions are kept as unknown fields."""

    field_presence: FieldPresence | None = _f(1, FieldPresence, optional=True)
    enum_type: EnumType | None = _f(2, EnumType, optional=True)
    repeated_field_encoding: RepeatedFieldEncoding | None = _f(3, RepeatedFieldEncoding, optional=True)
    utf8_validation: Utf8Validation | None = _f(4, Utf8Validation, optional=True)
    message_encoding: MessageEncoding | None = _f(5, MessageEncoding, optional=True)
    json_format: JsonFormat | None = _f(6, JsonFormat, optional=True)


# ------------------------------------------------------------------ options

@_msg("UninterpretedOption.NamePart")
class NamePart:
    """``UninterpretedOption.NamePart``: one dotted part of an option's name."""

    name_part: str | None = _f(1, "string", required=True)
    is_extension: bool | None = _f(2, "bool", required=True)


@_msg("UninterpretedOption")
class UninterpretedOption:
    """An option protoc could not interpret (only in descriptors made by a parser)."""

    name: tuple[NamePart, ...] = _f(2, NamePart, repeated=True)
    identifier_value: str | None = _f(3, "string", optional=True)
    positive_int_value: int | None = _f(4, "uint64", optional=True)
    negative_int_value: int | None = _f(5, "int64", optional=True)
    double_value: float | None = _f(6, "double", optional=True)
    string_value: bytes | None = _f(7, "bytes", optional=True)
    aggregate_value: str | None = _f(8, "string", optional=True)


class OptimizeMode(_OpenEnum):
    """``FileOptions.OptimizeMode``."""

    SPEED = 1
    CODE_SIZE = 2
    LITE_RUNTIME = 3


@_msg("FileOptions")
class FileOptions:
    """Options of a ``.proto`` file."""

    java_package: str | None = _f(1, "string", optional=True)
    java_outer_classname: str | None = _f(8, "string", optional=True)
    optimize_for: OptimizeMode | None = _f(9, OptimizeMode, optional=True)
    java_multiple_files: bool | None = _f(10, "bool", optional=True)
    go_package: str | None = _f(11, "string", optional=True)
    cc_generic_services: bool | None = _f(16, "bool", optional=True)
    java_generic_services: bool | None = _f(17, "bool", optional=True)
    py_generic_services: bool | None = _f(18, "bool", optional=True)
    java_generate_equals_and_hash: bool | None = _f(20, "bool", optional=True)
    deprecated: bool | None = _f(23, "bool", optional=True)
    java_string_check_utf8: bool | None = _f(27, "bool", optional=True)
    cc_enable_arenas: bool | None = _f(31, "bool", optional=True)
    objc_class_prefix: str | None = _f(36, "string", optional=True)
    csharp_namespace: str | None = _f(37, "string", optional=True)
    swift_prefix: str | None = _f(39, "string", optional=True)
    php_class_prefix: str | None = _f(40, "string", optional=True)
    php_namespace: str | None = _f(41, "string", optional=True)
    php_metadata_namespace: str | None = _f(44, "string", optional=True)
    ruby_package: str | None = _f(45, "string", optional=True)
    features: FeatureSet | None = _f(50, FeatureSet)
    uninterpreted_option: tuple[UninterpretedOption, ...] = _f(999, UninterpretedOption, repeated=True)


@_msg("MessageOptions")
class MessageOptions:
    """Options of a message; ``map_entry`` marks the synthetic entry message of a map field."""

    message_set_wire_format: bool | None = _f(1, "bool", optional=True)
    no_standard_descriptor_accessor: bool | None = _f(2, "bool", optional=True)
    deprecated: bool | None = _f(3, "bool", optional=True)
    map_entry: bool | None = _f(7, "bool", optional=True)
    deprecated_legacy_json_field_conflicts: bool | None = _f(11, "bool", optional=True)
    features: FeatureSet | None = _f(12, FeatureSet)
    uninterpreted_option: tuple[UninterpretedOption, ...] = _f(999, UninterpretedOption, repeated=True)


class CType(_OpenEnum):
    """``FieldOptions.CType``."""

    STRING = 0
    CORD = 1
    STRING_PIECE = 2


class JSType(_OpenEnum):
    """``FieldOptions.JSType``."""

    JS_NORMAL = 0
    JS_STRING = 1
    JS_NUMBER = 2


class OptionRetention(_OpenEnum):
    """``FieldOptions.OptionRetention``."""

    RETENTION_UNKNOWN = 0
    RETENTION_RUNTIME = 1
    RETENTION_SOURCE = 2


@_msg("FieldOptions")
class FieldOptions:
    """Options of a field; ``packed`` overrides the syntax's packed default."""

    ctype: CType | None = _f(1, CType, optional=True)
    packed: bool | None = _f(2, "bool", optional=True)
    deprecated: bool | None = _f(3, "bool", optional=True)
    lazy: bool | None = _f(5, "bool", optional=True)
    jstype: JSType | None = _f(6, JSType, optional=True)
    weak: bool | None = _f(10, "bool", optional=True)
    unverified_lazy: bool | None = _f(15, "bool", optional=True)
    debug_redact: bool | None = _f(16, "bool", optional=True)
    retention: OptionRetention | None = _f(17, OptionRetention, optional=True)
    features: FeatureSet | None = _f(21, FeatureSet)
    uninterpreted_option: tuple[UninterpretedOption, ...] = _f(999, UninterpretedOption, repeated=True)


@_msg("OneofOptions")
class OneofOptions:
    """Options of a oneof."""

    features: FeatureSet | None = _f(1, FeatureSet)
    uninterpreted_option: tuple[UninterpretedOption, ...] = _f(999, UninterpretedOption, repeated=True)


@_msg("EnumOptions")
class EnumOptions:
    """Options of an enum (``allow_alias``: several names may share a number)."""

    allow_alias: bool | None = _f(2, "bool", optional=True)
    deprecated: bool | None = _f(3, "bool", optional=True)
    deprecated_legacy_json_field_conflicts: bool | None = _f(6, "bool", optional=True)
    features: FeatureSet | None = _f(7, FeatureSet)
    uninterpreted_option: tuple[UninterpretedOption, ...] = _f(999, UninterpretedOption, repeated=True)


@_msg("EnumValueOptions")
class EnumValueOptions:
    """Options of an enum value."""

    deprecated: bool | None = _f(1, "bool", optional=True)
    features: FeatureSet | None = _f(2, FeatureSet)
    debug_redact: bool | None = _f(3, "bool", optional=True)
    uninterpreted_option: tuple[UninterpretedOption, ...] = _f(999, UninterpretedOption, repeated=True)


@_msg("ServiceOptions")
class ServiceOptions:
    """Options of a service."""

    deprecated: bool | None = _f(33, "bool", optional=True)
    features: FeatureSet | None = _f(34, FeatureSet)
    uninterpreted_option: tuple[UninterpretedOption, ...] = _f(999, UninterpretedOption, repeated=True)


class IdempotencyLevel(_OpenEnum):
    """``MethodOptions.IdempotencyLevel``."""

    IDEMPOTENCY_UNKNOWN = 0
    NO_SIDE_EFFECTS = 1
    IDEMPOTENT = 2


@_msg("MethodOptions")
class MethodOptions:
    """Options of an RPC method."""

    deprecated: bool | None = _f(33, "bool", optional=True)
    idempotency_level: IdempotencyLevel | None = _f(34, IdempotencyLevel, optional=True)
    features: FeatureSet | None = _f(35, FeatureSet)
    uninterpreted_option: tuple[UninterpretedOption, ...] = _f(999, UninterpretedOption, repeated=True)


@_msg("ExtensionRangeOptions")
class ExtensionRangeOptions:
    """Options of an extension range (declarations are kept as unknown fields)."""

    features: FeatureSet | None = _f(50, FeatureSet)
    uninterpreted_option: tuple[UninterpretedOption, ...] = _f(999, UninterpretedOption, repeated=True)


# -------------------------------------------------------------- descriptors

class Type(_OpenEnum):
    """``FieldDescriptorProto.Type``: the protobuf type of a field."""

    TYPE_DOUBLE = 1
    TYPE_FLOAT = 2
    TYPE_INT64 = 3
    TYPE_UINT64 = 4
    TYPE_INT32 = 5
    TYPE_FIXED64 = 6
    TYPE_FIXED32 = 7
    TYPE_BOOL = 8
    TYPE_STRING = 9
    TYPE_GROUP = 10
    TYPE_MESSAGE = 11
    TYPE_BYTES = 12
    TYPE_UINT32 = 13
    TYPE_ENUM = 14
    TYPE_SFIXED32 = 15
    TYPE_SFIXED64 = 16
    TYPE_SINT32 = 17
    TYPE_SINT64 = 18


class Label(_OpenEnum):
    """``FieldDescriptorProto.Label``."""

    LABEL_OPTIONAL = 1
    LABEL_REQUIRED = 2
    LABEL_REPEATED = 3


@_msg("FieldDescriptorProto")
class FieldDescriptorProto:
    """A field (or an extension) of a message.

    ``type_name`` is fully qualified with a leading dot (``.pkg.Msg``) in
    descriptors protoc writes; ``oneof_index`` points into the containing
    message's ``oneof_decl``; ``proto3_optional`` marks a proto3 ``optional``
    field, whose oneof is synthetic.
    """

    name: str | None = _f(1, "string", optional=True)
    extendee: str | None = _f(2, "string", optional=True)
    number: int | None = _f(3, "int32", optional=True)
    label: Label | None = _f(4, Label, optional=True)
    type: Type | None = _f(5, Type, optional=True)
    type_name: str | None = _f(6, "string", optional=True)
    default_value: str | None = _f(7, "string", optional=True)
    options: FieldOptions | None = _f(8, FieldOptions)
    oneof_index: int | None = _f(9, "int32", optional=True)
    json_name: str | None = _f(10, "string", optional=True)
    proto3_optional: bool | None = _f(17, "bool", optional=True)


@_msg("OneofDescriptorProto")
class OneofDescriptorProto:
    """A oneof of a message."""

    name: str | None = _f(1, "string", optional=True)
    options: OneofOptions | None = _f(2, OneofOptions)


@_msg("DescriptorProto.ExtensionRange")
class ExtensionRange:
    """``DescriptorProto.ExtensionRange``: field numbers ``start`` (inclusive) to ``end`` (exclusive)."""

    start: int | None = _f(1, "int32", optional=True)
    end: int | None = _f(2, "int32", optional=True)
    options: ExtensionRangeOptions | None = _f(3, ExtensionRangeOptions)


@_msg("DescriptorProto.ReservedRange")
class ReservedRange:
    """``DescriptorProto.ReservedRange``: ``start`` inclusive, ``end`` exclusive."""

    start: int | None = _f(1, "int32", optional=True)
    end: int | None = _f(2, "int32", optional=True)


@_msg("EnumValueDescriptorProto")
class EnumValueDescriptorProto:
    """One named value of an enum."""

    name: str | None = _f(1, "string", optional=True)
    number: int | None = _f(2, "int32", optional=True)
    options: EnumValueOptions | None = _f(3, EnumValueOptions)


@_msg("EnumDescriptorProto.EnumReservedRange")
class EnumReservedRange:
    """``EnumDescriptorProto.EnumReservedRange``: ``start`` and ``end`` both inclusive."""

    start: int | None = _f(1, "int32", optional=True)
    end: int | None = _f(2, "int32", optional=True)


@_msg("EnumDescriptorProto")
class EnumDescriptorProto:
    """An enum type."""

    name: str | None = _f(1, "string", optional=True)
    value: tuple[EnumValueDescriptorProto, ...] = _f(2, EnumValueDescriptorProto, repeated=True)
    options: EnumOptions | None = _f(3, EnumOptions)
    reserved_range: tuple[EnumReservedRange, ...] = _f(4, EnumReservedRange, repeated=True)
    reserved_name: tuple[str, ...] = _f(5, "string", repeated=True)
    visibility: SymbolVisibility | None = _f(6, SymbolVisibility, optional=True)


@_msg("DescriptorProto")
class DescriptorProto:
    """A message type, with its nested messages and enums."""

    name: str | None = _f(1, "string", optional=True)
    field: tuple[FieldDescriptorProto, ...] = _f(2, FieldDescriptorProto, repeated=True)
    nested_type: tuple[DescriptorProto, ...] = _f(3, "DescriptorProto", repeated=True)
    enum_type: tuple[EnumDescriptorProto, ...] = _f(4, EnumDescriptorProto, repeated=True)
    extension_range: tuple[ExtensionRange, ...] = _f(5, ExtensionRange, repeated=True)
    extension: tuple[FieldDescriptorProto, ...] = _f(6, FieldDescriptorProto, repeated=True)
    options: MessageOptions | None = _f(7, MessageOptions)
    oneof_decl: tuple[OneofDescriptorProto, ...] = _f(8, OneofDescriptorProto, repeated=True)
    reserved_range: tuple[ReservedRange, ...] = _f(9, ReservedRange, repeated=True)
    reserved_name: tuple[str, ...] = _f(10, "string", repeated=True)
    visibility: SymbolVisibility | None = _f(11, SymbolVisibility, optional=True)


@_msg("MethodDescriptorProto")
class MethodDescriptorProto:
    """An RPC method of a service."""

    name: str | None = _f(1, "string", optional=True)
    input_type: str | None = _f(2, "string", optional=True)
    output_type: str | None = _f(3, "string", optional=True)
    options: MethodOptions | None = _f(4, MethodOptions)
    client_streaming: bool | None = _f(5, "bool", optional=True)
    server_streaming: bool | None = _f(6, "bool", optional=True)


@_msg("ServiceDescriptorProto")
class ServiceDescriptorProto:
    """A service."""

    name: str | None = _f(1, "string", optional=True)
    method: tuple[MethodDescriptorProto, ...] = _f(2, MethodDescriptorProto, repeated=True)
    options: ServiceOptions | None = _f(3, ServiceOptions)


@_msg("SourceCodeInfo.Location")
class Location:
    """``SourceCodeInfo.Location``: where a schema element is in its ``.proto`` text."""

    path: tuple[int, ...] = _f(1, "int32", repeated=True, packed=True)
    span: tuple[int, ...] = _f(2, "int32", repeated=True, packed=True)
    leading_comments: str | None = _f(3, "string", optional=True)
    trailing_comments: str | None = _f(4, "string", optional=True)
    leading_detached_comments: tuple[str, ...] = _f(6, "string", repeated=True)


@_msg("SourceCodeInfo")
class SourceCodeInfo:
    """Source locations and comments (``protoc --include_source_info``)."""

    location: tuple[Location, ...] = _f(1, Location, repeated=True)


class Semantic(_OpenEnum):
    """``GeneratedCodeInfo.Annotation.Semantic``."""

    NONE = 0
    SET = 1
    ALIAS = 2


@_msg("GeneratedCodeInfo.Annotation")
class Annotation:
    """``GeneratedCodeInfo.Annotation``."""

    path: tuple[int, ...] = _f(1, "int32", repeated=True, packed=True)
    source_file: str | None = _f(2, "string", optional=True)
    begin: int | None = _f(3, "int32", optional=True)
    end: int | None = _f(4, "int32", optional=True)
    semantic: Semantic | None = _f(5, Semantic, optional=True)


@_msg("GeneratedCodeInfo")
class GeneratedCodeInfo:
    """Links generated code back to its ``.proto`` source."""

    annotation: tuple[Annotation, ...] = _f(1, Annotation, repeated=True)


@_msg("FileDescriptorProto")
class FileDescriptorProto:
    """One ``.proto`` file: its package, imports, types, services and options.

    ``syntax`` is ``"proto3"``, ``"editions"`` or absent/``"proto2"``;
    ``edition`` says which edition an ``"editions"`` file uses.
    """

    name: str | None = _f(1, "string", optional=True)
    package: str | None = _f(2, "string", optional=True)
    dependency: tuple[str, ...] = _f(3, "string", repeated=True)
    message_type: tuple[DescriptorProto, ...] = _f(4, DescriptorProto, repeated=True)
    enum_type: tuple[EnumDescriptorProto, ...] = _f(5, EnumDescriptorProto, repeated=True)
    service: tuple[ServiceDescriptorProto, ...] = _f(6, ServiceDescriptorProto, repeated=True)
    extension: tuple[FieldDescriptorProto, ...] = _f(7, FieldDescriptorProto, repeated=True)
    options: FileOptions | None = _f(8, FileOptions)
    source_code_info: SourceCodeInfo | None = _f(9, SourceCodeInfo)
    public_dependency: tuple[int, ...] = _f(10, "int32", repeated=True, packed=False)
    weak_dependency: tuple[int, ...] = _f(11, "int32", repeated=True, packed=False)
    syntax: str | None = _f(12, "string", optional=True)
    edition: Edition | None = _f(14, Edition, optional=True)
    option_dependency: tuple[str, ...] = _f(15, "string", repeated=True)


@_msg("FileDescriptorSet")
class FileDescriptorSet:
    """A set of ``.proto`` files: what ``protoc --descriptor_set_out`` writes."""

    file: tuple[FileDescriptorProto, ...] = _f(1, FileDescriptorProto, repeated=True)
