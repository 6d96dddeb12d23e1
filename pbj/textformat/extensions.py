"""Extensions in the text format: ``[pkg.ext]: value`` (protobuf.dev "Text Format
Language Specification", "Extension Fields").

The text format names an extension by its full name in brackets, and writes
its value as a field of its type. The extensions of a class are those
registered with it (:mod:`pbj.extensions`: declared with
:func:`pbj.extension`, or by a loaded schema, ``Namespace.extension``), so
printing and parsing need nothing more than the message class. Printed
extensions come in field-number order among the fields, as C++ prints them;
a message-set extension is printed as its message (the canonical one, declared in
its type's scope, named by the type: ``[pkg.Item] { ... }``, as protoc prints it).

:func:`extension_plan` gives the :class:`~pbj.textformat.plan.FieldPlan` an
extension is printed and parsed with: the plan of its holder's ``value``
field (a message-set extension's: the item's ``message`` field), named
``[full_name]``. :func:`find_extension` looks an extension of a class up by
full name. :func:`check_namespace` checks the ``extensions=`` argument
:func:`pbj.to_text` and :func:`pbj.from_text` still take (a namespace, whose
extensions are registered with its classes already).
"""

from __future__ import annotations

import weakref
from typing import Any

from pbj.extensions import Extension
from pbj.schema import info
from pbj.textformat.plan import FieldPlan

__all__ = ["extension_plan", "find_extension", "check_namespace"]

_plans: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def extension_plan(ext: Extension[Any]) -> FieldPlan:
    """The field plan of an extension, named ``[full_name]`` (cached per extension)."""
    plan = _plans.get(ext)
    if plan is None:
        f = ext.field
        if ext.message_set:
            f = info(info(ext.holder).fields[0].type).fields[1]  # the item's ``message = 3``
        plan = FieldPlan(f, ext.full_name.rpartition(".")[0])
        plan.name = f"[{printed_name(ext)}]"
        plan.path = ext.json_name  # errors name ``$.[pkg.ext]...``, as ProtoJSON's do
        _plans[ext] = plan
    return plan


def printed_name(ext: Extension[Any]) -> str:
    """The name the text format prints ``ext`` under: its full name, except for the canonical
    message-set extension (declared in the scope of its own message type, ``message Item {
    extend Set { optional Item ext = 1000; } }``), printed as its type's full name
    (``[pkg.Item]``), as protoc and Google's Python print it."""
    if ext.message_set:
        type_name = info(ext.type).full_name
        if ext.full_name.rpartition(".")[0] == type_name:
            return type_name  # type: ignore[no-any-return]
    return ext.full_name


def find_extension(cls: type, full_name: str) -> Extension[Any] | None:
    """The extension of ``cls`` named ``full_name`` (registered with the class), or ``None``.

    A message-set extension is also found by the full name of its message type, as
    :func:`printed_name` prints the canonical one (and Google's parsers accept).
    """
    by_type = None
    for ext in info(cls).extensions.values():
        if ext.full_name == full_name:
            return ext  # type: ignore[no-any-return]
        if ext.message_set and by_type is None and info(ext.type).full_name == full_name:
            by_type = ext
    return by_type


def check_namespace(extensions: Any) -> None:
    """Check the ``extensions=`` argument: ``None`` or a :class:`pbj.Namespace`.

    Raises:
        TypeError: it is something else.
    """
    if extensions is not None and getattr(extensions, "extensions", None) is None:
        raise TypeError(f"extensions must be a pbj.Namespace, not {type(extensions).__name__}")
