"""A failed ``buf.validate`` rule as pbj reports it: :class:`Violation` and :class:`ValidationError`.

protovalidate names the field of a violation by a ``buf.validate.FieldPath``: field numbers,
schema names and, for a repeated field or a map, the element's index or key. pbj keeps that
message (:attr:`Violation.proto`) and renders it two ways:

* :attr:`Violation.field_path`: protovalidate's text form, schema names
  (``items[2].name``, ``labels["env"]``), the form Buf's runtimes print;
* :attr:`Violation.path`: pbj's own path of attribute names, indexes and keys, the one every
  pbj error carries (``$.items[2].name``), with the value found there (:attr:`Violation.field_value`).
"""

from __future__ import annotations

import json
import weakref
from typing import Any

import attrs

from pbj.errors import PbjError, format_path
from pbj.schema import info, is_message
from pbj.schema.records import namespace_of
from pbj.validation.messages import FieldPath, ViolationMessage

__all__ = ["Violation", "ValidationError", "field_path_text", "pbj_path"]


@attrs.frozen
class Violation:
    """One rule of the schema that a message breaks.

    Attributes:
        field_path: protovalidate's path of the field, schema names (``items[2].name``,
            ``labels["env"]``); ``""`` for a rule of the message itself (a message-level CEL rule).
        path: pbj's path of the same field: attribute names (``str``), indexes (``int``) and
            map keys (a one-element ``tuple``), outermost first, as :class:`pbj.DecodeError`'s.
        rule_id: the rule's id: ``"string.min_len"`` for a standard rule, the ``id`` a CEL
            rule declares, ``"required"``, ``"message.oneof"`` ...
        message: what is wrong, protovalidate's English text (``"must be at least 3 characters"``).
        rule_path: the rule inside the rule messages, protovalidate's text form
            (``string.min_len``, ``cel[0]``, ``repeated.items.string.min_len``).
        for_key: the violation is about a map entry's key rather than its value.
        field_value: the pbj value at :attr:`path` (the key itself when :attr:`for_key`);
            ``None`` for a message-level rule.
        proto: the ``buf.validate.Violation`` message (:mod:`pbj.validation.messages`),
            to send as it is.
        rule_value: (a property, read on use) the rule's value (``3`` for ``min_len = 3``), as
            protovalidate gives it, a message of the rule schema as a pbj message.
    """

    field_path: str
    path: tuple
    rule_id: str
    message: str
    rule_path: str
    for_key: bool
    field_value: Any
    proto: ViolationMessage
    #: ``(validated message, protovalidate's violation)``: what :attr:`rule_value` is read from
    _source: tuple = attrs.field(eq=False, repr=False, alias="source")

    @property
    def rule_value(self) -> Any:
        """The rule's value (``3`` for ``min_len = 3``; a CEL rule: its ``buf.validate.Rule``), read
        from protovalidate's violation on use (reading it parses the rule's options)."""
        root, raw = self._source
        return pbj_value(root, raw.rule_value) if raw is not None else None

    def __str__(self) -> str:
        where = format_path(list(self.path)) if self.path else "$"
        key = " (key)" if self.for_key else ""
        return f"{where}{key}: {self.message} [{self.rule_id}]"


class ValidationError(PbjError, ValueError):
    """A message breaks ``buf.validate`` rules of its schema (:func:`pbj.validate`).

    Attributes:
        violations: every :class:`Violation` found (just the first with ``fail_fast``), in
            protovalidate's order.
        type_name: the full name of the validated message.

    The text lists each violation on its own line, with its path, message and rule id.
    """

    def __init__(self, type_name: str, violations: list[Violation]) -> None:
        self.type_name = type_name
        self.violations = violations
        lines = "".join(f"\n  {v}" for v in violations)
        n = len(violations)
        super().__init__(f"{type_name}: {n} validation rule{'s' if n != 1 else ''} broken:{lines}")

    def to_proto(self) -> Any:
        """The violations as one ``buf.validate.Violations`` message (pbj's)."""
        from pbj.validation.messages import ViolationsMessage

        return ViolationsMessage(violations=tuple(v.proto for v in self.violations))


def field_path_text(path: FieldPath | None) -> str:
    """protovalidate's text form of a ``FieldPath``: names joined by dots, each subscript in
    brackets (an index or a number as it is, a string key JSON-quoted, a bool as ``true``/``false``)."""
    if path is None:
        return ""
    parts = []
    for e in path.elements:
        text = e.field_name or ""
        sub = e.subscript
        if sub is not None:
            v = sub.value
            if sub.which == "string_key":
                text += f"[{json.dumps(v, ensure_ascii=False)}]"
            elif sub.which == "bool_key":
                text += "[true]" if v else "[false]"
            else:
                text += f"[{v}]"
        parts.append(text)
    return ".".join(parts)


def pbj_path(root: Any, path: FieldPath | None, for_key: bool) -> tuple[tuple, Any]:
    """pbj's path (attribute names, indexes, keys) of a ``FieldPath`` inside message ``root``,
    and the value there (the key itself when ``for_key``). A step pbj cannot follow (an
    extension, a field the class lacks) is kept by its schema name, and the value is ``None``."""
    if path is None:
        return (), None
    out: list = []
    value: Any = root
    for e in path.elements:
        name = e.field_name or str(e.field_number)
        f = _field_by_number(value, e.field_number)
        if f is None:
            out.append(name)
            value = None
        else:
            out.append(f.name)
            value = getattr(value, f.oneof).value if f.oneof is not None else getattr(value, f.name)
        sub = e.subscript
        if sub is None:
            continue
        if sub.which == "index":
            out.append(sub.value)
            value = value[sub.value] if isinstance(value, tuple) and sub.value < len(value) else None
        else:
            out.append((sub.value,))
            value = sub.value if for_key else (value.get(sub.value) if value is not None else None)
    return tuple(out), value


_BY_NUMBER: weakref.WeakKeyDictionary[type, dict[int, Any]] = weakref.WeakKeyDictionary()


def _field_by_number(obj: Any, number: int | None) -> Any:
    if obj is None or not is_message(obj) or number is None:
        return None
    cls = type(obj)
    table = _BY_NUMBER.get(cls)
    if table is None:
        table = _BY_NUMBER[cls] = {f.number: f for f in info(cls).all_fields()}
    return table.get(number)


def pbj_value(root: Any, value: Any) -> Any:
    """A rule's value as protovalidate gives it, with its messages (protobuf-py's: a CEL rule's
    ``buf.validate.Rule``, a ``Duration`` bound) made pbj messages of ``root``'s load (or
    :mod:`pbj.wellknown`'s) through their bytes; a message of a type neither knows stays as it is."""
    if isinstance(value, (list, tuple)):
        return type(value)(pbj_value(root, v) for v in value) if isinstance(value, tuple) else \
            [pbj_value(root, v) for v in value]
    desc = getattr(value, "desc", None)
    if desc is None or not hasattr(value, "to_binary"):
        return value
    from pbj.api import decode
    from pbj.wellknown import WELL_KNOWN

    full = desc().type_name
    ns = namespace_of(type(root))
    cls = WELL_KNOWN.get(full) or (ns.messages.get(full) if ns is not None else None)
    return value if cls is None else decode(cls, value.to_binary())


def violation_of(root: Any, proto: ViolationMessage, raw: Any) -> Violation:
    """The :class:`Violation` of message ``root`` from protovalidate's violation ``raw`` and its
    ``buf.validate.Violation`` message ``proto`` (read by pbj)."""
    for_key = bool(proto.for_key)
    path, value = pbj_path(root, proto.field, for_key)
    return Violation(field_path=field_path_text(proto.field), path=path, rule_id=proto.rule_id or "",
                     message=proto.message or "", rule_path=field_path_text(proto.rule), for_key=for_key,
                     field_value=value, proto=proto, source=(root, raw))
