"""Declaring extensions: :class:`Extension` and :func:`extension`.

An extension is a field declared outside the message it extends, in a field
number of one of that message's extension ranges (protobuf.dev "Language
Guide (proto2)", "Extensions")::

    @pbj.message(syntax="proto2", extensions=range(100, 200))
    class Extendee:
        a: int | None = pbj.field(1, "int32", optional=True)

    weight = pbj.extension(Extendee, 100, "double", name="pkg.weight")

:func:`extension` checks the declaration and registers the extension with the
extended class (``__pbj_info__.extensions``, by field number): the parser
reads the extensions registered there, whichever part of the program declared
them, as Google's runtimes read those of their generated registry.

Each extension has a *holder*: a hidden pbj message class with one field,
``value``, of the extension's number, type, label and encoding (a
message-set extension: the message-set item, a group of field 1 holding
``type_id`` = 2 and ``message`` = 3, "Encoding", "Groups"). A message's
extension values are stored as instances of these holders, so pbj's own
compiled codec reads and writes them (merging of messages, packed and
unpacked runs, closed enums, groups) exactly as it does a regular field.
"""

from __future__ import annotations

import builtins
import enum
import re
import typing
from typing import Any, Generic, TypeVar

from pbj import required
from pbj.codec.compiler import codec_of
from pbj.errors import SchemaError
from pbj.scalars import SCALARS
from pbj.schema import field as declare_field
from pbj.schema import info, is_message, message
from pbj.schema.declare import declared_default
from pbj.schema.extension_holders import holder_of
from pbj.schema.records import FieldInfo
from pbj.schema.specs import MISSING

__all__ = ["Extension", "extension", "register"]

T = TypeVar("T")


class Extension(Generic[T]):
    """One extension field: what :func:`extension` (or a loaded schema) declares.

    Used as the key of :func:`pbj.get_extension`, :func:`pbj.has_extension`,
    :func:`pbj.with_extensions` and the mapping :func:`pbj.extensions_of`.
    ``T`` is the Python type of its value (``int``, ``tuple[str, ...]``, a
    message class ...), for type checkers.

    Attributes:
        full_name: its full name (``pkg.weight``; a nested ``extend`` block:
            ``pkg.Scope.weight``), the name ProtoJSON (``"[pkg.weight]"``) and
            the text format (``[pkg.weight]: 1.5``) use.
        extendee: the message class it extends.
        number: its field number (a message-set extension: the item's ``type_id``).
        type: a scalar type name, an ``enum.IntEnum`` class or a message class.
        repeated: a repeated extension (the value is a tuple).
        packed: a repeated scalar written packed.
        group: a message written with the group encoding.
        message_set: written as a message-set item (the extendee has
            ``message_set_wire_format``).
        default: the value read when it is absent: the declared default, else
            ``None`` (``()`` when repeated).
        field: the :class:`~pbj.schema.FieldInfo` of the holder's ``value`` field.
        holder: the hidden one-field message class its values are stored in.
    """

    __slots__ = ("__weakref__", "default", "extendee", "field", "full_name", "group", "holder", "message_set",
                 "number", "packed", "repeated", "type")

    def __init__(self, *, full_name: str, extendee: type, number: int, type: Any, repeated: bool, packed: bool,
                 group: bool, message_set: bool, default: Any, field: FieldInfo, holder: type) -> None:
        self.full_name = full_name
        self.extendee = extendee
        self.number = number
        self.type = type
        self.repeated = repeated
        self.packed = packed
        self.group = group
        self.message_set = message_set
        self.default = default
        self.field = field
        self.holder = holder

    @property
    def json_name(self) -> str:
        """Its ProtoJSON and text-format name: ``[full_name]``."""
        return f"[{self.full_name}]"

    def compiled_holder(self) -> type:
        """The holder class, its codec compiled first (once; later calls only look it up).

        A holder is made only through this (:func:`pbj.schema.extension_holders.holder_of`), so
        no writer meets a holder whose class has no codec yet: the native writers, which run no
        Python code in the middle of a write, write every holder with its class's plan
        themselves.

        Raises:
            SchemaError: the holder's class does not compile (as at its first encode or decode).
        """
        codec_of(self.holder)
        return self.holder

    def value_of(self, holder: Any) -> Any:
        """The extension's value stored in a holder instance."""
        if self.message_set:
            return holder.item.message
        return holder.value

    def __repr__(self) -> str:
        return f"<pbj.Extension {self.full_name} = {self.number} of {info(self.extendee).full_name}>"


def _identifier(full_name: str) -> str:
    return "Ext_" + re.sub(r"\W", "_", full_name)


def _holder(full_name: str, number: int, type_: Any, *, repeated: bool, packed: bool, group: bool,
            message_set: bool, syntax: str) -> type:
    """The hidden holder class of an extension (see the module docstring)."""
    stem = _identifier(full_name)
    if message_set:
        item_body = {"__annotations__": {"type_id": typing.Any, "message": typing.Any},
                     "type_id": declare_field(2, "uint32", optional=True),
                     "message": declare_field(3, type_, optional=True), "__module__": __name__,
                     "__doc__": f"The message-set item of the extension {full_name}."}
        item = message(type(f"{stem}_Item", (), item_body), full_name=f"[{full_name}].Item", syntax="proto2")
        body = {"__annotations__": {"item": typing.Any}, "item": declare_field(1, item, group=True),
                "__module__": __name__, "__doc__": f"Holder of the message-set extension {full_name}."}
    else:
        spec = declare_field(number, type_, repeated=repeated, packed=packed if repeated else None,
                             optional=not repeated, group=group)
        body = {"__annotations__": {"value": typing.Any}, "value": spec, "__module__": __name__,
                "__doc__": f"Holder of the extension {full_name}."}
    body["__reduce__"] = _reduce_holder
    cls = message(type(stem, (), body), full_name=f"[{full_name}]", syntax=syntax)
    return cls


def _reduce_holder(self: Any) -> tuple:
    """Pickle a holder as (extended class, number, value): the class pickles by name."""
    ext = self.__pbj_extension__
    return (_restore_holder, (ext.extendee, ext.number, ext.value_of(self)))


def _restore_holder(extendee: type, number: int, value: Any) -> Any:
    """Rebuild a pickled holder with the extension registered now for ``number`` of ``extendee``."""
    ext = info(extendee).extensions.get(number)
    if ext is None:
        raise LookupError(f"cannot unpickle extension {number} of {info(extendee).full_name}: "
                          "no extension of that number is declared in this process")
    return holder_of(ext, value)


def register(ext: Extension[Any]) -> None:
    """Register ``ext`` with its extended class, so the parser reads it.

    Raises:
        SchemaError: another extension (of another full name) has its number, or
            another extension (of another number) has its full name: ProtoJSON
            and the text format name an extension by its full name, and
            Google's descriptor pool refuses a duplicate symbol.
    """
    registry = info(ext.extendee).extensions
    other = registry.get(ext.number)
    if other is not None and other.full_name != ext.full_name:
        raise SchemaError(f"extension {ext.full_name} = {ext.number}: the number is taken by the extension "
                          f"{other.full_name}", cls_name=info(ext.extendee).full_name)
    for other in registry.values():
        if other.full_name == ext.full_name and other.number != ext.number:
            raise SchemaError(f"extension {ext.full_name} = {ext.number}: the name is taken by the extension "
                              f"{other.full_name} = {other.number}", cls_name=info(ext.extendee).full_name)
    registry[ext.number] = ext
    if required.reaches_required(ext.holder):  # its extendee can now miss a required field
        required.forget_answers()


def extension(extendee: type, number: int, type: Any, *, name: str | None = None, repeated: bool = False,
              packed: bool | None = None, group: bool = False, default: Any = MISSING,
              syntax: str = "proto2") -> Extension[Any]:
    """Declare an extension of message class ``extendee`` and register it (protobuf.dev
    "Language Guide (proto2)", "Extensions").

    Args:
        extendee: a ``@pbj.message`` class declared with ``extensions=`` ranges
            (or ``message_set=True``).
        number: the extension's field number, inside one of those ranges (for
            a message set: the item's ``type_id``).
        type: a scalar type name (``"int32"``, ``"string"`` ...), an
            ``enum.IntEnum`` class or a ``@pbj.message`` class.
        name: its full name, as ``.proto`` files give it (``pkg.weight``, or
            ``pkg.Scope.weight`` in a nested ``extend`` block); ProtoJSON and the
            text format name it ``[name]``. Default: the extendee's full name,
            ``"."`` and ``ext_<number>``.
        repeated: a repeated extension (the value is a tuple).
        packed: write a repeated scalar packed; default as the declaring
            file's syntax says ("Packed Repeated Fields"): ``False`` in proto2,
            ``True`` in proto3 and editions (``repeated_field_encoding = PACKED``;
            a loaded extension follows its resolved features).
        group: write a message with the group encoding (proto2 ``group``).
        default: the declared default, the value :func:`pbj.get_extension`
            reads while the extension is absent: a singular scalar or enum
            extension only, checked as ``pbj.field(default=...)`` (a float's
            is rounded to float32).
        syntax: the syntax of the declaring file (``"proto2"``, ``"proto3"``
            or ``"editions"``): the holder class's syntax.

    Returns:
        The :class:`Extension`.

    Raises:
        SchemaError: ``extendee`` is not a message class with extension ranges;
            ``number`` is outside them; the number is taken by another
            extension; the type is not a scalar name, enum or message class; a
            message-set extension is not a singular message; ``packed`` or
            ``group`` does not fit the type; ``syntax`` is not one of
            ``"proto2"``, ``"proto3"``, ``"editions"``; another extension of ``extendee``
            has the full name.
    """
    if not (_is_class(extendee) and is_message(extendee)):
        raise SchemaError(f"an extension extends a @pbj.message class, not {extendee!r}")
    mi = info(extendee)
    full_name = name or f"{mi.full_name}.ext_{number}"
    if syntax not in _SYNTAXES:
        raise SchemaError(f"extension {full_name}: syntax {syntax!r} is not one of {', '.join(_SYNTAXES)}",
                          cls_name=mi.full_name)
    if not mi.extension_ranges:
        raise SchemaError(f"extension {full_name}: {mi.full_name} declares no extension ranges "
                          "(@pbj.message(extensions=range(...)))", cls_name=mi.full_name)
    if not isinstance(number, int) or isinstance(number, bool) or not any(
            lo <= number < hi for lo, hi in mi.extension_ranges):
        ranges = ", ".join(f"{lo} to {hi - 1}" for lo, hi in mi.extension_ranges)
        raise SchemaError(f"extension {full_name} = {number!r} is outside the extension ranges of "
                          f"{mi.full_name} ({ranges})", cls_name=mi.full_name)
    is_msg = _is_class(type) and is_message(type)
    if isinstance(type, str):
        if type not in SCALARS or type == "enum":
            raise SchemaError(f"extension {full_name}: unknown scalar type {type!r}", cls_name=mi.full_name)
    elif not is_msg and not _is_int_enum(type):
        raise SchemaError(f"extension {full_name}: type {type!r} is not a scalar type name, an IntEnum or a "
                          "@pbj.message class", cls_name=mi.full_name)
    if group and not is_msg:
        raise SchemaError(f"extension {full_name}: only a message can be a group", cls_name=mi.full_name)
    packable = not is_msg and type not in ("string", "bytes")
    if packed and not (repeated and packable):
        raise SchemaError(f"extension {full_name}: packed applies to repeated scalars only", cls_name=mi.full_name)
    if packed is None:  # proto3 and editions (repeated_field_encoding = PACKED) pack, proto2 does not
        packed = repeated and packable and syntax != "proto2"
    if mi.message_set and (repeated or not is_msg or group):
        raise SchemaError(f"extension {full_name} of the message set {mi.full_name} must be a singular "
                          "message (not a group)", cls_name=mi.full_name)
    if default is not MISSING and repeated:
        raise SchemaError(f"extension {full_name}: a repeated extension has no default", cls_name=mi.full_name)
    holder = _holder(full_name, number, type, repeated=repeated, packed=bool(packed), group=group,
                     message_set=mi.message_set, syntax=syntax)
    if default is MISSING:
        default = () if repeated else None
    elif default is not None:  # checked as pbj.field(default=...) is, on the holder's field
        try:
            default = declared_default(full_name, info(holder).fields[0], default, is_msg)
        except SchemaError as err:
            reason = str(err).removeprefix(f"{full_name}.{info(holder).fields[0].name}: ")
            raise SchemaError(f"extension {full_name}: {reason}", cls_name=mi.full_name) from None
    ext: Extension[Any] = Extension(
        full_name=full_name, extendee=extendee, number=number, type=type, repeated=repeated,
        packed=bool(packed), group=group, message_set=mi.message_set, default=default,
        field=info(holder).fields[0], holder=holder)
    holder.__pbj_extension__ = ext  # type: ignore[attr-defined]
    register(ext)
    return ext


_SYNTAXES = ("proto2", "proto3", "editions")


def _is_class(t: Any) -> bool:
    return isinstance(t, builtins.type)


def _is_int_enum(t: Any) -> bool:
    return _is_class(t) and issubclass(t, enum.IntEnum)
