"""Declaring messages: ``@pbj.message``, ``pbj.field``, ``pbj.map_field``, ``pbj.oneof``.

A message is an annotated class whose fields each name their field number and
protobuf type (protobuf.dev "Language Guide (proto3)")::

    @pbj.message
    class Transfer:
        account: Account | None = pbj.field(1, Account)
        amount: int = pbj.field(2, "sint64")
        memo: str = pbj.field(3, "string")
        tags: tuple[str, ...] = pbj.field(4, "string", repeated=True)

``@pbj.message`` checks the declaration (raising :class:`SchemaError`) and
turns the class into a frozen attrs class with slots. Its instances are
immutable, so the encoded size cached on them never goes stale: repeated
fields are tuples and maps are :class:`FrozenMap`. ``pbj.replace`` (or
``attrs.evolve``) makes a changed copy.

Each message class keeps its schema in ``__pbj_info__`` (a :class:`MessageInfo`)
and its compiled codec, once built, in ``__pbj_codec__``.
"""

from __future__ import annotations

import enum
import inspect
import keyword
import sys
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from pbj.errors import SchemaError
from pbj.wire import MAX_FIELD_NUMBER

__all__ = [
    "SCALAR_TYPES", "FieldInfo", "OneofInfo", "MessageInfo", "FrozenMap", "OneOf",
    "field", "map_field", "oneof", "message", "is_message", "fields", "info",
    "replace", "unknown_fields", "json_name_of",
]

#: The 15 scalar value types of protobuf ("Scalar Value Types").
SCALAR_TYPES = frozenset({
    "double", "float", "int32", "int64", "uint32", "uint64", "sint32", "sint64",
    "fixed32", "fixed64", "sfixed32", "sfixed64", "bool", "string", "bytes",
})
_INT_TYPES = frozenset(SCALAR_TYPES - {"double", "float", "bool", "string", "bytes"})
_FLOAT_TYPES = frozenset({"double", "float"})
#: Scalar types a map key may have ("Maps": any integral or string type).
MAP_KEY_TYPES = frozenset(_INT_TYPES | {"bool", "string"})
_PY_TYPE = {**{t: int for t in _INT_TYPES}, "double": float, "float": float,
            "bool": bool, "string": str, "bytes": bytes}
_ZERO = {**{t: 0 for t in _INT_TYPES}, "double": 0.0, "float": 0.0,
         "bool": False, "string": "", "bytes": b""}
_RESERVED_LO, _RESERVED_HI = 19000, 19999

_MISSING = object()


class FrozenMap(dict):
    """An immutable ``dict``: the value of every map field.

    Reads work as on a ``dict``; every method that would change it raises
    ``TypeError``. It is hashable when its values are, so messages holding
    maps can be hashed.
    """

    __slots__ = ()

    def _immutable(self, *args: Any, **kwargs: Any) -> typing.NoReturn:
        raise TypeError("a pbj map is immutable; build a new one and use pbj.replace")

    __setitem__ = __delitem__ = __ior__ = _immutable  # type: ignore[assignment]
    clear = pop = popitem = setdefault = update = _immutable  # type: ignore[assignment]

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(frozenset(self.items()))

    def __repr__(self) -> str:
        return f"FrozenMap({dict.__repr__(self)})"

    def __reduce__(self):
        return (FrozenMap, (dict(self),))


EMPTY_MAP = FrozenMap()


class OneOf(tuple):
    """The value of a oneof: which member is set, and its value.

    ``OneOf("transfer", Transfer(...))``. Two members of the same type stay
    distinct because the member name is kept. It matches positionally in
    ``match`` statements::

        match body.data:
            case pbj.OneOf("transfer", t): ...
            case pbj.OneOf("memo", text): ...
            case None: ...  # no member set

    Attributes:
        which: the member's field name (a ``str``).
        value: the member's value.
    """

    __slots__ = ()
    __match_args__ = ("which", "value")

    def __new__(cls, which: str, value: Any) -> OneOf:
        return tuple.__new__(cls, (which, value))

    @property
    def which(self) -> str:
        """The name of the member that is set."""
        return self[0]

    @property
    def value(self) -> Any:
        """The member's value."""
        return self[1]

    def __repr__(self) -> str:
        return f"OneOf({self[0]!r}, {self[1]!r})"

    def __reduce__(self):
        return (OneOf, (self[0], self[1]))


@attrs.define(eq=False)
class FieldInfo:
    """The schema of one field (or one oneof member) of a message.

    Attributes:
        name: the Python attribute name (for a oneof member: the member name).
        number: the field number, 1 to 2**29-1.
        type: a scalar type name (``"int32"`` …), an ``enum.IntEnum`` class or a
            message class; a forward reference to a message (its name or a
            callable) is resolved on first use.
        proto_name: the field's name in the ``.proto`` schema.
        json_name: its ProtoJSON name (lowerCamelCase unless declared).
        repeated: a repeated field (stored as a tuple).
        packed: for repeated scalars, whether it is written packed.
        optional: explicit presence (``None`` when absent).
        map_key, map_value: for a map field, the key type (a scalar name) and
            the value type (like ``type``); ``type`` is then ``"map"``.
        oneof: the name of the oneof attribute holding this member, or ``None``.
        default: the declared default (proto2), or ``None``.
        group: proto2 group encoding (wire types 3/4) for a message field.
        required: proto2 ``required``.
    """

    name: str
    number: int
    type: Any
    proto_name: str = ""
    json_name: str = ""
    repeated: bool = False
    packed: bool = False
    optional: bool = False
    map_key: str | None = None
    map_value: Any = None
    oneof: str | None = None
    default: Any = None
    group: bool = False
    required: bool = False

    @property
    def is_map(self) -> bool:
        """True for a map field."""
        return self.map_key is not None

    @property
    def kind(self) -> str:
        """``"map"``, ``"message"``, ``"enum"`` or ``"scalar"``."""
        if self.map_key is not None:
            return "map"
        t = self.type
        if isinstance(t, str):
            return "scalar"
        if isinstance(t, type) and issubclass(t, enum.IntEnum):
            return "enum"
        return "message"


@attrs.define(eq=False)
class OneofInfo:
    """A oneof: the attribute ``name`` holds a :class:`OneOf` or ``None``.

    Attributes:
        name: the attribute name.
        members: the member fields, in declaration order.
        synthetic: a proto3 ``optional`` field's synthetic oneof (loader only).
    """

    name: str
    members: list[FieldInfo]
    synthetic: bool = False


@attrs.define(eq=False)
class MessageInfo:
    """The schema of a message class, kept in its ``__pbj_info__``.

    Attributes:
        cls: the message class.
        full_name: the protobuf full name (``package.Message``), or the Python
            qualified name for a hand-declared class.
        fields: regular fields (not oneof members), in field-number order.
        oneofs: the oneofs, in declaration order.
        attr_order: attribute names in declaration order.
        syntax: ``"proto3"`` or ``"proto2"``.
        map_entry: the class is a map entry (loader only).
        message_set: proto2 ``message_set_wire_format``.
        reserved_names: the schema's ``reserved`` field names (loader only;
            the text format skips them).
    """

    cls: Any
    full_name: str
    fields: list[FieldInfo]
    oneofs: list[OneofInfo]
    attr_order: list[str]
    syntax: str = "proto3"
    map_entry: bool = False
    message_set: bool = False
    resolved: bool = False
    reserved_names: frozenset = frozenset()

    def all_fields(self) -> list[FieldInfo]:
        """Every field and oneof member, in field-number order."""
        out = list(self.fields)
        for o in self.oneofs:
            out.extend(o.members)
        return sorted(out, key=lambda f: f.number)


def json_name_of(proto_name: str) -> str:
    """The default ProtoJSON name of a field: lowerCamelCase, as protoc makes it.

    Underscores are dropped and the letter after each is upper-cased
    ("ProtoJSON Format": "the field name is converted to lowerCamelCase").
    """
    out = []
    upper = False
    for ch in proto_name:
        if ch == "_":
            upper = True
        elif upper:
            out.append(ch.upper())
            upper = False
        else:
            out.append(ch)
    return "".join(out)


@attrs.define
class _FieldSpec:
    """What ``pbj.field``/``map_field``/``oneof`` leave in the class body."""

    number: int | None
    type: Any
    repeated: bool = False
    packed: bool | None = None
    optional: bool = False
    map_key: str | None = None
    map_value: Any = None
    members: dict[str, tuple] | None = None
    json_name: str | None = None
    proto_name: str | None = None
    default: Any = _MISSING
    group: bool = False
    required: bool = False


def field(number: int, type: Any, *, repeated: bool = False, packed: bool | None = None,
          optional: bool = False, json_name: str | None = None, name: str | None = None,
          default: Any = _MISSING, group: bool = False, required: bool = False) -> Any:
    """Declare a message field (as the default value of an annotated attribute).

    Args:
        number: the field number, 1 to 2**29-1, not 19000-19999
            ("Assigning Field Numbers").
        type: a scalar type name (``"int32"``, ``"string"`` …), an
            ``enum.IntEnum`` class, a ``@pbj.message`` class, or a forward
            reference to a message class (for recursive and mutually recursive
            messages): its name as a string (looked up in the class's module)
            or a zero-argument callable returning it.
        repeated: a repeated field; the value is a tuple (lists are converted).
        packed: write a repeated scalar packed (default: ``True``, as proto3
            does, "Packed Repeated Fields"); ``False`` writes one tag per element.
        optional: explicit presence: the value is ``None`` when absent and a set
            zero is written ("Field Presence"). Message fields always have it.
        json_name: the ProtoJSON name; default lowerCamelCase of ``name``.
        name: the field's name in the ``.proto`` schema, when it differs from
            the attribute (a Python keyword such as ``from`` is declared as
            ``from_`` with ``name="from"``).
        default: a proto2 default value (kept as schema information).
        group: proto2 group encoding for a message field.
        required: proto2 ``required``.

    Returns:
        A marker that ``@pbj.message`` turns into an attrs field.
    """
    return _FieldSpec(number, type, repeated=repeated, packed=packed, optional=optional,
                      json_name=json_name, proto_name=name, default=default, group=group,
                      required=required)


def map_field(number: int, key: str, value: Any, *, json_name: str | None = None,
              name: str | None = None) -> Any:
    """Declare a map field ("Maps"); the value is a :class:`FrozenMap`.

    Args:
        number: the field number.
        key: the key type: any integral scalar type, ``"bool"`` or ``"string"``.
        value: the value type: a scalar type name, an enum or a message class
            (or a forward reference to one, as for :func:`field`).
        json_name, name: as for :func:`field`.

    Returns:
        A marker that ``@pbj.message`` turns into an attrs field.
    """
    return _FieldSpec(number, "map", map_key=key, map_value=value, json_name=json_name,
                      proto_name=name)


def oneof(**members: tuple) -> Any:
    """Declare a oneof: one attribute holding a :class:`OneOf` or ``None``.

    Each keyword names a member and gives ``(number, type)`` or
    ``(number, type, {"json_name": ..., "name": ..., "group": ...})``::

        data: pbj.OneOf | None = pbj.oneof(transfer=(14, Transfer), memo=(15, "string"))

    Members may not be repeated or maps ("Oneof").

    Returns:
        A marker that ``@pbj.message`` turns into an attrs field.
    """
    return _FieldSpec(None, "oneof", members=members)


def _resolve_ref(ref: Any, cls: type, fname: str | None = None) -> Any:
    """Resolve a forward reference (name or callable) to an enum or message class.

    Raises:
        SchemaError: the name is not found, or the callable fails.
    """
    if isinstance(ref, str):
        if ref in SCALAR_TYPES:
            return ref
        module = sys.modules.get(cls.__module__)
        scope: dict = dict(vars(module)) if module else {}
        obj: Any = None
        head, *rest = ref.split(".")
        obj = scope.get(head)
        if obj is None and head == cls.__name__:
            obj = cls
        for part in rest:
            obj = getattr(obj, part, None)
        if obj is None:
            raise SchemaError(f"cannot resolve type {ref!r}", cls_name=cls.__qualname__, field_name=fname)
        return obj
    if isinstance(ref, type):
        return ref
    if callable(ref):
        try:
            return ref()
        except Exception as exc:
            raise SchemaError(f"cannot resolve forward reference {ref!r}: {type(exc).__name__}: {exc}",
                              cls_name=cls.__qualname__, field_name=fname) from exc
    return ref


def _check_type(t: Any, cls_name: str, fname: str, *, map_key: bool = False) -> None:
    if isinstance(t, str):
        if t not in SCALAR_TYPES:
            raise SchemaError(f"unknown scalar type {t!r}", cls_name=cls_name, field_name=fname)
        if map_key and t not in MAP_KEY_TYPES:
            raise SchemaError(f"map key type {t!r} is not allowed (integral types, bool or string only)",
                              cls_name=cls_name, field_name=fname)
        return
    if map_key:
        raise SchemaError(f"map key type {t!r} is not allowed (integral types, bool or string only)",
                          cls_name=cls_name, field_name=fname)
    if isinstance(t, type) and issubclass(t, enum.IntEnum):
        return
    if isinstance(t, type) and is_message(t):
        return
    raise SchemaError(f"type {t!r} is not a scalar type name, an IntEnum or a @pbj.message class",
                      cls_name=cls_name, field_name=fname)


def resolve(cls: type) -> MessageInfo:
    """Resolve the forward references of a message class and check its types.

    Called on first use (encode, decode, introspection), when every class a
    declaration refers to exists.

    Raises:
        SchemaError: a reference cannot be resolved or names a wrong type.
    """
    mi: MessageInfo = cls.__pbj_info__
    if mi.resolved:
        return mi
    name = cls.__qualname__
    for f in mi.all_fields():
        if f.map_key is not None:
            f.map_value = _resolve_ref(f.map_value, cls, f.name)
            _check_type(f.map_value, name, f.name)
        else:
            forward = not isinstance(f.type, type) and not (isinstance(f.type, str) and f.type in SCALAR_TYPES)
            f.type = _resolve_ref(f.type, cls, f.name)
            _check_type(f.type, name, f.name)
            if forward and f.kind != "message":
                raise SchemaError("a forward reference (name or callable) must name a message class; "
                                  "give enums as the class itself", cls_name=name, field_name=f.name)
            if f.group and f.kind != "message":
                raise SchemaError("only a message field can be a group", cls_name=name, field_name=f.name)
    mi.resolved = True
    return mi


def _annotation_ok(ann: Any, spec: _FieldSpec) -> bool:
    """Whether an evaluated annotation fits the declared protobuf type."""
    if ann is Any or ann is typing.Any:
        return True
    origin = typing.get_origin(ann)
    args = typing.get_args(ann)
    if spec.members is not None:  # oneof
        return ann is OneOf or OneOf in args
    if spec.map_key is not None:
        return origin in (dict, Mapping, FrozenMap, typing.Mapping) or ann in (dict, FrozenMap, Mapping)
    if spec.repeated:
        return origin in (tuple, list, Sequence, typing.Sequence) or ann in (tuple, list)
    t = spec.type
    allowed: set = set()
    if isinstance(t, str) and t in _PY_TYPE:
        allowed.add(_PY_TYPE[t])
        if t in _FLOAT_TYPES:
            allowed.add(int)
    elif isinstance(t, type):
        allowed.add(t)
        if issubclass(t, enum.IntEnum):
            allowed.add(int)
    else:
        return True  # a forward reference: checked when resolved
    parts = set(args) if origin in (typing.Union, types.UnionType) else {ann}
    parts.discard(type(None))
    if any(isinstance(p, (str, typing.ForwardRef)) for p in parts):
        return True
    return bool(parts) and parts <= allowed


def _eval_annotation(ann: Any, cls: type) -> Any:
    if not isinstance(ann, str):
        return ann
    module = sys.modules.get(cls.__module__)
    scope = dict(vars(module)) if module else {}
    scope.setdefault(cls.__name__, cls)
    try:
        return eval(ann, scope, dict(vars(cls)))
    except Exception:
        return Any


def _check_number(number: Any, cls_name: str, fname: str, seen: dict[int, str]) -> None:
    if not isinstance(number, int) or isinstance(number, bool):
        raise SchemaError(f"field number must be an int, got {number!r}", cls_name=cls_name, field_name=fname)
    if not 1 <= number <= MAX_FIELD_NUMBER:
        raise SchemaError(f"field number {number} is outside 1..{MAX_FIELD_NUMBER}",
                          cls_name=cls_name, field_name=fname)
    if _RESERVED_LO <= number <= _RESERVED_HI:
        raise SchemaError(f"field number {number} is in 19000-19999, reserved for the protobuf implementation",
                          cls_name=cls_name, field_name=fname)
    if number in seen:
        raise SchemaError(f"field number {number} is already used by {seen[number]!r}",
                          cls_name=cls_name, field_name=fname)
    seen[number] = fname


def enum_default(enum_cls: type) -> Any:
    """The default of an enum field: its member numbered 0, else its first member (proto2)."""
    try:
        return enum_cls(0)
    except ValueError:
        return next(iter(enum_cls))


def _scalar_default(t: Any) -> Any:
    if isinstance(t, str):
        return _ZERO.get(t, 0)
    if isinstance(t, type) and issubclass(t, enum.IntEnum):
        return enum_default(t)
    return None


def _static_check(t: Any, cls_name: str, fname: str) -> None:
    """Check a type reference that can be checked at declaration time."""
    if isinstance(t, str):
        return  # scalar names are checked in _check_type; other strings are references
    if isinstance(t, type):
        _check_type(t, cls_name, fname)
    elif not callable(t):
        raise SchemaError(f"type {t!r} is not a scalar type name, an IntEnum or a @pbj.message class",
                          cls_name=cls_name, field_name=fname)


def message(cls: type | None = None, *, full_name: str | None = None, syntax: str = "proto3",
            message_set: bool = False, map_entry: bool = False) -> Any:
    """Turn an annotated class into a protobuf message class.

    The result is a frozen attrs class with slots whose fields are the
    ``pbj.field``/``pbj.map_field``/``pbj.oneof`` attributes (keyword-only in
    ``__init__``, each with its protobuf default), plus a hidden keyword
    ``_pbj_unknown`` (the unknown fields' raw bytes, kept through
    ``pbj.replace``/``attrs.evolve``, not part of ``==`` or ``repr``).

    Args:
        cls: the class (when used as ``@pbj.message``).
        full_name: the protobuf full name (the loader sets it).
        syntax: ``"proto3"`` (default) or ``"proto2"``.
        message_set: proto2 ``message_set_wire_format``.
        map_entry: the class is a map entry (loader only).

    Returns:
        The new message class (or a decorator when called with options only).

    Raises:
        SchemaError: a field number is duplicated, outside 1..2**29-1 or in
            19000-19999; a map key type is illegal; a type is not a scalar
            name, enum or message class; an annotation does not fit the type;
            a oneof member is repeated or a map.
    """
    if cls is None:
        return lambda c: message(c, full_name=full_name, syntax=syntax,
                                 message_set=message_set, map_entry=map_entry)
    return _build_message(cls, full_name=full_name, syntax=syntax, message_set=message_set,
                          map_entry=map_entry)


def _build_message(cls: type, *, full_name: str | None, syntax: str, message_set: bool,
                   map_entry: bool) -> type:
    cls_name = cls.__qualname__
    anns = inspect.get_annotations(cls)
    seen: dict[int, str] = {}
    specs: list[tuple[str, _FieldSpec]] = []
    for attr_name, ann in anns.items():
        value = cls.__dict__.get(attr_name, _MISSING)
        if not isinstance(value, _FieldSpec):
            if typing.get_origin(ann) is typing.ClassVar or (isinstance(ann, str) and "ClassVar" in ann):
                continue
            raise SchemaError("annotated attribute without pbj.field(...), pbj.map_field(...) or pbj.oneof(...)",
                              cls_name=cls_name, field_name=attr_name)
        if attr_name.startswith("_pbj") or keyword.iskeyword(attr_name):
            raise SchemaError(f"attribute name {attr_name!r} is not allowed", cls_name=cls_name, field_name=attr_name)
        specs.append((attr_name, value))
    for attr_name, value in cls.__dict__.items():
        if isinstance(value, _FieldSpec) and attr_name not in anns:
            raise SchemaError("pbj field without an annotation", cls_name=cls_name, field_name=attr_name)

    fields_: list[FieldInfo] = []
    oneofs: list[OneofInfo] = []
    attr_defaults: dict[str, Any] = {}
    for attr_name, spec in specs:
        ann = _eval_annotation(anns[attr_name], cls)
        if spec.members is not None:
            members = []
            if not spec.members:
                raise SchemaError("a oneof needs at least one member", cls_name=cls_name, field_name=attr_name)
            for mname, mdef in spec.members.items():
                if not isinstance(mdef, tuple) or len(mdef) not in (2, 3):
                    raise SchemaError(f"oneof member {mname!r} must be (number, type) or (number, type, options)",
                                      cls_name=cls_name, field_name=attr_name)
                opts = mdef[2] if len(mdef) == 3 else {}
                bad = set(opts) - {"json_name", "name", "group", "default"}
                if bad:
                    raise SchemaError(f"oneof member {mname!r}: unknown options {sorted(bad)}",
                                      cls_name=cls_name, field_name=attr_name)
                _check_number(mdef[0], cls_name, mname, seen)
                _static_check(mdef[1], cls_name, mname)
                if mdef[1] == "map":
                    raise SchemaError("a oneof member cannot be a map", cls_name=cls_name, field_name=mname)
                pname = opts.get("name") or mname
                members.append(FieldInfo(mname, mdef[0], mdef[1], proto_name=pname,
                                         json_name=opts.get("json_name") or json_name_of(pname),
                                         optional=True, oneof=attr_name, group=opts.get("group", False),
                                         default=opts.get("default")))
            if not _annotation_ok(ann, spec):
                raise SchemaError(f"annotation {anns[attr_name]!r} does not fit a oneof (use pbj.OneOf | None)",
                                  cls_name=cls_name, field_name=attr_name)
            oneofs.append(OneofInfo(attr_name, members))
            attr_defaults[attr_name] = None
            continue
        _check_number(spec.number, cls_name, attr_name, seen)
        pname = spec.proto_name or attr_name
        jname = spec.json_name or json_name_of(pname)
        if spec.map_key is not None:
            _check_type(spec.map_key, cls_name, attr_name, map_key=True)
            mv = spec.map_value
            if mv == "map":
                raise SchemaError("a map value cannot be a map", cls_name=cls_name, field_name=attr_name)
            _static_check(mv, cls_name, attr_name)
            if isinstance(mv, str) and mv not in SCALAR_TYPES and not mv[:1].isupper() and "." not in mv:
                raise SchemaError(f"unknown map value type {mv!r}", cls_name=cls_name, field_name=attr_name)
            fi = FieldInfo(attr_name, spec.number, "map", proto_name=pname, json_name=jname,
                           repeated=True, map_key=spec.map_key, map_value=mv)
            attr_defaults[attr_name] = EMPTY_MAP
        else:
            t = spec.type
            _static_check(t, cls_name, attr_name)
            if isinstance(t, str) and t not in SCALAR_TYPES and (t in ("map", "oneof") or t.islower()):
                raise SchemaError(f"unknown scalar type {t!r}", cls_name=cls_name, field_name=attr_name)
            # A forward reference (a name or a callable) always names a message.
            is_msg = not (isinstance(t, str) and t in SCALAR_TYPES) \
                and not (isinstance(t, type) and issubclass(t, enum.IntEnum))
            packable = (isinstance(t, str) and t in SCALAR_TYPES and t not in ("string", "bytes")) \
                or (isinstance(t, type) and issubclass(t, enum.IntEnum))
            if spec.repeated and spec.optional:
                raise SchemaError("a repeated field cannot be optional", cls_name=cls_name, field_name=attr_name)
            if spec.packed and not spec.repeated:
                raise SchemaError("packed applies to repeated fields only", cls_name=cls_name, field_name=attr_name)
            packed = spec.repeated and packable and (spec.packed is not False)
            if spec.packed and spec.repeated and isinstance(t, str) and t in ("string", "bytes"):
                raise SchemaError(f"a repeated {t} field cannot be packed", cls_name=cls_name, field_name=attr_name)
            default = None if spec.default is _MISSING else spec.default
            fi = FieldInfo(attr_name, spec.number, t, proto_name=pname, json_name=jname,
                           repeated=spec.repeated, packed=packed,
                           optional=spec.optional or (is_msg and not spec.repeated) or spec.required,
                           default=default, group=spec.group, required=spec.required)
            if spec.repeated:
                attr_defaults[attr_name] = ()
            elif fi.optional:
                attr_defaults[attr_name] = None
            else:
                attr_defaults[attr_name] = _scalar_default(t)
        if not _annotation_ok(ann, spec):
            raise SchemaError(f"annotation {anns[attr_name]!r} does not fit protobuf type "
                              f"{_describe(spec)}", cls_name=cls_name, field_name=attr_name)
        fields_.append(fi)
    fields_.sort(key=lambda f: f.number)
    order = [a for a, _ in specs]
    return _make_class(cls, fields_, oneofs, order, attr_defaults,
                       full_name=full_name or f"{cls.__module__}.{cls.__qualname__}",
                       syntax=syntax, message_set=message_set, map_entry=map_entry)


def _describe(spec: _FieldSpec) -> str:
    if spec.map_key is not None:
        return f"map<{spec.map_key}, {getattr(spec.map_value, '__name__', spec.map_value)}>"
    name = spec.type if isinstance(spec.type, str) else getattr(spec.type, "__name__", repr(spec.type))
    return f"repeated {name}" if spec.repeated else str(name)


def _to_tuple(value: Any) -> tuple:
    return value if value.__class__ is tuple else tuple(value)


def _to_map(value: Any) -> FrozenMap:
    return value if value.__class__ is FrozenMap else FrozenMap(value)


def _make_class(cls: type, fields_: list[FieldInfo], oneofs: list[OneofInfo], order: list[str],
                defaults: dict[str, Any], **info: Any) -> type:
    """Build the frozen attrs class on top of a hidden slots base.

    The base (``_<Name>Slots``) owns the slots and has Python's default
    ``__setattr__``: the generated parser builds instances of it with plain
    attribute stores, then switches their ``__class__`` to the frozen class,
    which costs about a third of calling the frozen ``__init__``.
    """
    slot_names = (*tuple(order), "_pbj_unknown", "_pbj_size")
    # Created under an all-underscore name, which turns off private-name mangling of
    # slot names such as "__x" (legal protobuf field names), then renamed.
    base = type("_", (), {"__slots__": slot_names, "__module__": cls.__module__})
    base.__name__ = base.__qualname__ = f"_{cls.__name__}Slots"
    by_name = {f.name: f for f in fields_}
    ns: dict[str, Any] = {}
    for key, value in cls.__dict__.items():
        if key in ("__dict__", "__weakref__") or isinstance(value, _FieldSpec):
            continue
        ns[key] = value
    ann: dict[str, Any] = {}
    for name in order:
        f = by_name.get(name)
        ann[name] = inspect.get_annotations(cls)[name]
        if f is not None and f.is_map:
            ns[name] = attrs.field(default=defaults[name], converter=_to_map, kw_only=True, alias=name)
        elif f is not None and f.repeated:
            ns[name] = attrs.field(default=defaults[name], converter=_to_tuple, kw_only=True, alias=name)
        else:
            ns[name] = attrs.field(default=defaults[name], kw_only=True, alias=name)
    ann["_pbj_unknown"] = bytes
    ns["_pbj_unknown"] = attrs.field(default=b"", eq=False, repr=False, kw_only=True, alias="_pbj_unknown")
    ann["_pbj_size"] = int
    ns["_pbj_size"] = attrs.field(default=-1, init=False, eq=False, repr=False)
    ns["__annotations__"] = ann
    ns["__pbj_codec__"] = None
    new_cls = type(cls.__name__, (base,), ns)
    new_cls = attrs.define(frozen=True, slots=True, weakref_slot=False, eq=True, hash=True,
                           auto_attribs=False, getstate_setstate=True)(new_cls)
    mi = MessageInfo(new_cls, info["full_name"], fields_, oneofs, order, syntax=info["syntax"],
                     map_entry=info["map_entry"], message_set=info["message_set"])
    new_cls.__pbj_info__ = mi
    new_cls.__pbj_slots__ = base
    return new_cls


def is_message(obj: Any) -> bool:
    """True if ``obj`` is a pbj message class or instance."""
    return getattr(obj, "__pbj_info__", None) is not None


def info(cls: type) -> MessageInfo:
    """The resolved schema of a message class.

    Raises:
        TypeError: ``cls`` is not a pbj message class.
        SchemaError: a forward reference cannot be resolved.
    """
    if not is_message(cls):
        raise TypeError(f"{cls!r} is not a pbj message class")
    if not isinstance(cls, type):
        cls = type(cls)
    return resolve(cls)


def fields(cls: type) -> list[FieldInfo]:
    """Every field and oneof member of a message class, in field-number order.

    Raises:
        TypeError: ``cls`` is not a pbj message class.
    """
    return info(cls).all_fields()


def replace(obj: Any, /, **changes: Any) -> Any:
    """Return a copy of message ``obj`` with some fields changed.

    Unknown fields are kept; the copy's encoded size is measured afresh.

    Raises:
        TypeError: an unknown field name (from attrs).
    """
    return attrs.evolve(obj, **changes)


def unknown_fields(obj: Any) -> bytes:
    """The unknown fields kept on a decoded message: their raw bytes, tags included,
    in arrival order ("Unknown Fields" in the Language Guide). ``b""`` if none."""
    return obj._pbj_unknown
