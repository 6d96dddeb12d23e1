"""The messages protovalidate reports violations with, declared with ``@pbj.message``.

``buf.validate.Violations``, ``Violation``, ``FieldPath`` and ``FieldPathElement`` of
``buf/validate/validate.proto`` (the ``bufbuild/protovalidate`` schema, Apache-2.0), with
their full names, field numbers and types: a violation pbj reports can be sent as it is (in
a gRPC status's details, say) and read by any other runtime. Declared by hand, as
:mod:`pbj.descriptor` declares the descriptor messages: the rest of ``validate.proto`` (the
rules themselves) comes with the user's own schema, which imports it.
"""

from __future__ import annotations

from pbj.descriptor import Type as FieldType
from pbj.schema import OneOf, message, oneof
from pbj.schema import field as _f

__all__ = ["FieldPathElement", "FieldPath", "ViolationMessage", "ViolationsMessage", "FieldType"]

_P = "buf.validate."


@message(full_name=_P + "FieldPathElement", syntax="proto2")
class FieldPathElement:
    """One step of a :class:`FieldPath`: a field, and for a repeated field or map the element.

    Attributes:
        field_number: the field's number.
        field_name: its name in the schema (an extension's: ``[pkg.ext]``).
        field_type: its type (``FieldDescriptorProto.Type``).
        key_type, value_type: a map field's key and value types.
        subscript: ``None``, or a ``pbj.OneOf`` of ``index`` (a repeated field's element),
            ``bool_key``, ``int_key``, ``uint_key`` or ``string_key`` (a map's key).
    """

    field_number: int | None = _f(1, "int32", optional=True)
    field_name: str | None = _f(2, "string", optional=True)
    field_type: FieldType | None = _f(3, FieldType, optional=True)
    key_type: FieldType | None = _f(4, FieldType, optional=True)
    value_type: FieldType | None = _f(5, FieldType, optional=True)
    subscript: OneOf | None = oneof(index=(6, "uint64"), bool_key=(7, "bool"), int_key=(8, "int64"),
                                    uint_key=(9, "uint64"), string_key=(10, "string"))


@message(full_name=_P + "FieldPath", syntax="proto2")
class FieldPath:
    """A path from the validated message to a field, outermost first."""

    elements: tuple[FieldPathElement, ...] = _f(1, FieldPathElement, repeated=True)


@message(full_name=_P + "Violation", syntax="proto2")
class ViolationMessage:
    """``buf.validate.Violation``: one failed rule.

    Attributes:
        field: where, from the validated message (``None`` for a message-level rule).
        rule: which rule, as a path into the rule messages (``string.min_len``, ``cel[0]``).
        rule_id: the rule's id (``"string.min_len"``, a CEL rule's own ``id``).
        message: what is wrong, in English.
        for_key: the violation is about a map entry's key, not its value.
    """

    field: FieldPath | None = _f(5, FieldPath)
    rule: FieldPath | None = _f(6, FieldPath)
    rule_id: str | None = _f(2, "string", optional=True)
    message: str | None = _f(3, "string", optional=True)
    for_key: bool | None = _f(4, "bool", optional=True)


@message(full_name=_P + "Violations", syntax="proto2")
class ViolationsMessage:
    """``buf.validate.Violations``: every violation of one message."""

    violations: tuple[ViolationMessage, ...] = _f(1, ViolationMessage, repeated=True)
