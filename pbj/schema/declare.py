"""``@pbj.message``: check a class declaration and turn it into a message class.

The declaration rules are protobuf's ("Language Guide (proto3)": "Assigning
Field Numbers", "Maps", "Oneof") plus pbj's own (annotations that fit the
declared type). Every violation is a :class:`SchemaError` naming the class and
the field. The work is linear in the number of fields: the annotations are
read once and evaluated in one scope built once per class.
"""

from __future__ import annotations

import enum
import functools
import itertools
import keyword
import struct
import sys
import types
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar, overload

from pbj.errors import SchemaError
from pbj.scalars import SCALAR_NAMES, SCALARS
from pbj.schema.containers import EMPTY_MAP, FrozenMap, OneOf
from pbj.schema.field_rules import FieldRules
from pbj.schema.make_class import make_class
from pbj.schema.name_rules import check_field_names
from pbj.schema.records import FieldInfo, OneofInfo, enum_default, json_name_of
from pbj.schema.resolve import check_type, lookup_name, scalar_name_problem
from pbj.schema.specs import MISSING, FieldSpec
from pbj.schema.values import BadValue, coerce_field
from pbj.wire import MAX_FIELD_NUMBER

__all__ = ["message"]

C = TypeVar("C", bound=type)

_RESERVED_LO, _RESERVED_HI = 19000, 19999
_ONEOF_OPTIONS = frozenset({"json_name", "name", "group", "default", "features", "utf8"})


@overload
def message(cls: C, /, *, full_name: str | None = None, syntax: str | None = None, message_set: bool = False,
            map_entry: bool = False, edition: str | None = None, features: dict[str, Any] | None = None,
            extensions: Iterable[range | int] | None = None) -> C: ...
@overload
def message(*, full_name: str | None = None, syntax: str | None = None, message_set: bool = False,
            map_entry: bool = False, edition: str | None = None,
            features: dict[str, Any] | None = None,
            extensions: Iterable[range | int] | None = None) -> Callable[[C], C]: ...
@typing.dataclass_transform(kw_only_default=True, frozen_default=True, eq_default=True,
                            field_specifiers=())
def message(cls: Any = None, /, *, full_name: str | None = None, syntax: str | None = None,
            message_set: bool = False, map_entry: bool = False, edition: str | None = None,
            features: dict[str, Any] | None = None,
            extensions: Iterable[range | int] | None = None) -> Any:
    """Turn an annotated class into a protobuf message class.

    The result is a frozen attrs class with slots whose fields are the
    ``pbj.field``/``pbj.map_field``/``pbj.oneof`` attributes (keyword-only in
    ``__init__``, each with its protobuf default), plus a hidden keyword
    ``_pbj_unknown`` (the unknown fields' raw bytes, kept through
    ``pbj.replace``/``attrs.evolve``, not part of ``==`` or ``repr``; it must be
    bytes holding whole fields, as :func:`pbj.unknown_fields` gives them, else a
    ``TypeError`` or ``ValueError`` naming it).
    ``__init__`` checks every value (see :mod:`pbj.schema.values`).

    To type checkers (mypy, pyright) the decorator is a PEP 681
    ``dataclass_transform``: the constructor takes each field as an optional
    keyword of its annotated type, and instances are frozen.

    Args:
        cls: the class (when used as ``@pbj.message``).
        full_name: the protobuf full name (the loader sets it).
        syntax: ``"proto3"`` (the default without ``edition``) or ``"proto2"`` (whose ``string``
            fields are not UTF-8-validated: any bytes round-trip, see
            :mod:`pbj.codec.plan` ``utf8``).
        edition: ``"2023"`` or ``"2024"``: the class follows that edition's
            features ("Feature Settings for Editions"), overridden by
            ``features`` and by each field's ``features``
            (:mod:`pbj.schema.declared_features`).
        features: the message's feature settings (feature name -> value, e.g.
            ``{"field_presence": "IMPLICIT"}``); needs ``edition``.
        message_set: proto2 ``message_set_wire_format``: the extensions are
            written as message-set items (see :mod:`pbj.extensions`); without
            ``extensions`` the range is 4 to 2**29-1.
        map_entry: the class is a map entry (loader only).
        extensions: the field numbers reserved for extensions, as ``range``
            objects (``range(100, 200)`` is the ``.proto``'s ``extensions 100
            to 199``) or single numbers (protobuf.dev "Language Guide
            (proto2)", "Extensions"). Extensions are then declared with
            :func:`pbj.extension`.

    Returns:
        The new message class (or a decorator when called with options only).

    Raises:
        SchemaError: a field number is duplicated, outside 1..2**29-1 or in
            19000-19999; a map key type is illegal; a type is not a scalar
            name, enum or message class; an annotation does not fit the type;
            a oneof member is repeated or a map; an unknown edition, feature
            or feature value, features without an edition, or a keyword that
            contradicts a field's features (or a field's own feature that does
            not apply to it, as protoc refuses); ``syntax`` other than
            ``"proto2"``/``"proto3"``, or given with ``edition``; a declared default that does not
            fit its field; an extension range is empty, outside 1..2**29-1,
            or holds the number of a field.
    """
    if cls is None:
        return lambda c: _build_message(c, full_name=full_name, syntax=syntax, message_set=message_set,
                                        map_entry=map_entry, edition=edition, features=features,
                                        extensions=extensions)
    return _build_message(cls, full_name=full_name, syntax=syntax, message_set=message_set,
                          map_entry=map_entry, edition=edition, features=features, extensions=extensions)


class _Annotations:
    """A class's annotations, read once, evaluated in one scope built once."""

    def __init__(self, cls: type) -> None:
        self.cls = cls
        self.raw = _class_annotations(cls)
        self._scope: tuple[dict[str, Any], dict[str, Any]] | None = None

    def evaluated(self, name: str) -> Any:
        ann = self.raw[name]
        if not isinstance(ann, str):
            return ann
        if self._scope is None:
            module = sys.modules.get(self.cls.__module__)
            globals_ = vars(module) if module else {}
            # the class body's names (nested classes), but not the fields: a field named
            # ``int`` must not hide the builtin from the annotations
            locals_ = {k: v for k, v in vars(self.cls).items() if not isinstance(v, FieldSpec)}
            if self.cls.__name__ not in globals_:
                locals_.setdefault(self.cls.__name__, self.cls)
            self._scope = (globals_, locals_)
        try:
            return eval(_compiled(ann), *self._scope)
        except Exception:
            return Any


def _class_annotations(cls: type) -> dict[str, Any]:
    """A class's own annotations: values, or the text of those that cannot be evaluated yet.

    Before 3.14 they are what the class body made (strings under ``from __future__ import annotations``),
    read from the class's own ``__dict__`` as ``inspect.get_annotations`` does (without importing
    ``inspect``: ``import pbj`` stays small). From 3.14 annotations are evaluated when first asked for
    (PEP 649, PEP 749): one that names a class declared later, or the class itself (not bound while its
    decorator runs), raises ``NameError`` then, so they are read as their source text instead
    (``annotationlib``'s ``STRING`` format) and evaluated in the class's scope like strings
    (:meth:`_Annotations.evaluated`).
    """
    if sys.version_info >= (3, 14):
        import annotationlib

        try:
            return dict(annotationlib.get_annotations(cls))
        except Exception:  # a name not defined yet (3.14's lazy annotations): read the text
            return dict(annotationlib.get_annotations(cls, format=annotationlib.Format.STRING))
    ann = cls.__dict__.get("__annotations__")  # noqa: RUF063 (inspect.get_annotations: see above)
    return dict(ann) if isinstance(ann, dict) else {}


@functools.lru_cache(maxsize=512)
def _compiled(annotation: str) -> Any:
    """The code of an annotation's text: most declarations repeat a few (``int``, ``str | None``)."""
    return compile(annotation, "<annotation>", "eval")


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


def _static_check(t: Any, cls: type, fname: str) -> None:
    """Check a type reference as far as it can be checked at declaration time."""
    cls_name = cls.__qualname__
    if isinstance(t, str):
        if t in SCALAR_NAMES:
            return
        problem = scalar_name_problem(t)
        if problem is not None and not isinstance(lookup_name(t, cls), type):
            raise SchemaError(problem, cls_name=cls_name, field_name=fname)
        return  # a forward reference to a message class, resolved on first use
    if isinstance(t, type):
        check_type(t, cls_name, fname)
    elif not callable(t):
        raise SchemaError(f"type {t!r} is not a scalar type name, an IntEnum or a @pbj.message class",
                          cls_name=cls_name, field_name=fname)


def _is_enum(t: Any) -> bool:
    return isinstance(t, type) and issubclass(t, enum.IntEnum)


def _annotation_ok(ann: Any, spec: FieldSpec) -> bool:
    """Whether an evaluated annotation fits the declared protobuf type."""
    if ann is Any or ann is typing.Any:
        return True
    if spec.members is None and spec.map_key is None and not spec.repeated:
        # the common cases, without typing's introspection: a plain class (``int``) or ``X | None``
        fast = _plain_annotation_ok(ann, spec.type)
        if fast is not None:
            return fast
    origin = typing.get_origin(ann)
    args = typing.get_args(ann)
    if spec.members is not None:  # oneof: pbj.OneOf, OneOf[...] or a union of them, with None
        parts = args if origin in (typing.Union, types.UnionType) else (ann,)
        return any(p is OneOf or typing.get_origin(p) is OneOf for p in parts)
    if spec.map_key is not None:
        return origin in (dict, Mapping, FrozenMap, typing.Mapping) or ann in (dict, FrozenMap, Mapping)
    if spec.repeated:
        return origin in (tuple, list, Sequence, typing.Sequence) or ann in (tuple, list)
    t = spec.type
    allowed: set[Any] = set()
    if isinstance(t, str) and t in SCALARS:
        row = SCALARS[t]
        allowed.add(row.py_type)
        if row.is_float:
            allowed.add(int)
    elif isinstance(t, type):
        allowed.add(t)
        if _is_enum(t):
            allowed.add(int)
    else:
        return True  # a forward reference: checked when resolved
    given = set(args) if origin in (typing.Union, types.UnionType) else {ann}
    given.discard(type(None))
    if any(isinstance(p, (str, typing.ForwardRef)) for p in given):
        return True
    return bool(given) and given <= allowed


def _plain_annotation_ok(ann: Any, t: Any) -> bool | None:
    """:func:`_annotation_ok` for a singular field whose annotation is a class or ``A | B`` of classes,
    or ``None`` to leave it to the general rule."""
    if type(ann) is types.UnionType:
        given = [a for a in ann.__args__ if a is not _NONE_TYPE]
    elif type(ann) is type or type(ann) is enum.EnumType:
        given = [ann]
    else:
        return None
    if isinstance(t, str):
        row = SCALARS.get(t)
        if row is None:
            return None
        return bool(given) and all(g is row.py_type or (g is int and row.is_float) for g in given)
    if type(t) is enum.EnumType:
        return bool(given) and all(g is t or g is int for g in given)
    if isinstance(t, type):
        return bool(given) and all(g is t for g in given)
    return True  # a forward reference: checked when resolved


_NONE_TYPE = type(None)


def _describe(spec: FieldSpec) -> str:
    if spec.map_key is not None:
        return f"map<{spec.map_key}, {getattr(spec.map_value, '__name__', spec.map_value)}>"
    name = spec.type if isinstance(spec.type, str) else getattr(spec.type, "__name__", repr(spec.type))
    return f"repeated {name}" if spec.repeated else str(name)


def _collect_specs(cls: type, anns: _Annotations) -> list[tuple[str, FieldSpec]]:
    cls_name = cls.__qualname__
    specs: list[tuple[str, FieldSpec]] = []
    for attr_name, ann in anns.raw.items():
        value = cls.__dict__.get(attr_name, MISSING)
        if not isinstance(value, FieldSpec):
            if typing.get_origin(ann) is typing.ClassVar or (isinstance(ann, str) and "ClassVar" in ann):
                continue
            raise SchemaError("annotated attribute without pbj.field(...), pbj.map_field(...) or pbj.oneof(...)",
                              cls_name=cls_name, field_name=attr_name)
        if attr_name.startswith("_pbj") or keyword.iskeyword(attr_name):
            raise SchemaError(f"attribute name {attr_name!r} is not allowed", cls_name=cls_name, field_name=attr_name)
        specs.append((attr_name, value))
    for attr_name, value in cls.__dict__.items():
        if isinstance(value, FieldSpec) and attr_name not in anns.raw:
            raise SchemaError("pbj field without an annotation", cls_name=cls_name, field_name=attr_name)
    return specs


def _oneof_info(cls: type, attr_name: str, spec: FieldSpec, seen: dict[int, str], rules: FieldRules) -> OneofInfo:
    cls_name = cls.__qualname__
    assert spec.members is not None
    if not spec.members:
        raise SchemaError("a oneof needs at least one member", cls_name=cls_name, field_name=attr_name)
    members = []
    for mname, mdef in spec.members.items():
        if not isinstance(mdef, tuple) or len(mdef) not in (2, 3):
            raise SchemaError(f"oneof member {mname!r} must be (number, type) or (number, type, options)",
                              cls_name=cls_name, field_name=attr_name)
        opts = mdef[2] if len(mdef) == 3 else {}
        bad = set(opts) - _ONEOF_OPTIONS
        if bad:
            raise SchemaError(f"oneof member {mname!r}: unknown options {sorted(bad)}",
                              cls_name=cls_name, field_name=attr_name)
        _check_number(mdef[0], cls_name, mname, seen)
        if mdef[1] == "map":
            raise SchemaError("a oneof member cannot be a map", cls_name=cls_name, field_name=mname)
        _static_check(mdef[1], cls, mname)
        pname = opts.get("name") or mname
        member = FieldInfo(mname, mdef[0], mdef[1], proto_name=pname,
                           json_name=opts.get("json_name") or json_name_of(pname),
                           optional=True, oneof=attr_name, group=opts.get("group", False),
                           default=opts.get("default"))
        rules.apply(member, opts.get("features"), cls_name, group_given=opts.get("group", False),
                    utf8=opts.get("utf8"))
        members.append(member)
    return OneofInfo(attr_name, members)


def _field_info(cls: type, attr_name: str, spec: FieldSpec, seen: dict[int, str],
                rules: FieldRules) -> tuple[FieldInfo, Any]:
    """The FieldInfo of a regular or map field, and its default value."""
    cls_name = cls.__qualname__
    _check_number(spec.number, cls_name, attr_name, seen)
    assert spec.number is not None
    pname = spec.proto_name or attr_name
    jname = spec.json_name or json_name_of(pname)
    if spec.map_key is not None:
        check_type(spec.map_key, cls_name, attr_name, map_key=True)
        if spec.map_value == "map":
            raise SchemaError("a map value cannot be a map", cls_name=cls_name, field_name=attr_name)
        _static_check(spec.map_value, cls, attr_name)
        fi = FieldInfo(attr_name, spec.number, "map", proto_name=pname, json_name=jname, repeated=True,
                       map_key=spec.map_key, map_value=spec.map_value)
        rules.apply(fi, spec.features, cls_name, utf8=spec.utf8)
        return fi, EMPTY_MAP
    t = spec.type
    if t in ("map", "oneof"):
        raise SchemaError(f"unknown scalar type {t!r}", cls_name=cls_name, field_name=attr_name)
    _static_check(t, cls, attr_name)
    scalar = isinstance(t, str) and t in SCALAR_NAMES
    is_msg = not scalar and not _is_enum(t)  # a forward reference always names a message
    packable = (scalar and SCALARS[t].packable) or _is_enum(t)
    if spec.repeated and spec.optional:
        raise SchemaError("a repeated field cannot be optional", cls_name=cls_name, field_name=attr_name)
    if spec.packed and not spec.repeated:
        raise SchemaError("packed applies to repeated fields only", cls_name=cls_name, field_name=attr_name)
    if spec.packed and spec.repeated and scalar and not packable:
        raise SchemaError(f"a repeated {t} field cannot be packed", cls_name=cls_name, field_name=attr_name)
    fi = FieldInfo(attr_name, spec.number, t, proto_name=pname, json_name=jname,
                   repeated=spec.repeated, packed=spec.repeated and packable and (spec.packed is not False),
                   optional=spec.optional or (is_msg and not spec.repeated) or spec.required,
                   group=spec.group, required=spec.required)
    rules.apply(fi, spec.features, cls_name, optional_given=spec.optional, packed_given=spec.packed,
                group_given=spec.group, is_msg=is_msg, packable=packable, utf8=spec.utf8)
    if spec.default is not MISSING and spec.default is not None:
        fi.default = declared_default(cls_name, fi, spec.default, is_msg)
    if spec.repeated:
        return fi, ()
    if fi.optional:
        return fi, None
    return fi, (SCALARS[t].zero if scalar else enum_default(t))


def declared_default(cls_name: str, fi: FieldInfo, default: Any, is_msg: bool) -> Any:
    """The stored form of a declared default ("Language Guide (proto2)", "Default Values").

    Raises:
        SchemaError: the field is repeated, a message, or has implicit presence
            (only a singular scalar or enum field with explicit presence, or a
            ``required`` one, can declare a default), or the value does not fit
            the field's type.
    """
    if fi.repeated or is_msg:
        raise SchemaError("only a singular scalar or enum field can declare a default",
                          cls_name=cls_name, field_name=fi.name)
    if not fi.optional:
        raise SchemaError("a declared default needs explicit presence (optional=True or required=True): "
                          "a field with implicit presence always reads its zero value", cls_name=cls_name,
                          field_name=fi.name)
    try:
        value = coerce_field(fi, default)
    except BadValue as bad:
        raise SchemaError(f"default {default!r} does not fit the field: {bad.reason}", cls_name=cls_name,
                          field_name=fi.name) from None
    if fi.type == "float":  # a float field holds float32: read the value the wire would give back, as protoc's
        value = struct.unpack("<f", struct.pack("<f", value))[0]
    return value


def _extension_ranges(cls: type, extensions: Iterable[range | int] | None, message_set: bool,
                      seen: dict[int, str]) -> tuple[tuple[int, int], ...]:
    """The checked extension ranges of a declaration, as sorted ``(start, end)`` pairs, end exclusive."""
    cls_name = cls.__qualname__
    if extensions is None:
        return ((4, MAX_FIELD_NUMBER + 1),) if message_set else ()
    if isinstance(extensions, range | int):
        extensions = [extensions]
    out = []
    for r in extensions:
        if isinstance(r, int) and not isinstance(r, bool):
            r = range(r, r + 1)
        if not isinstance(r, range) or r.step != 1:
            raise SchemaError(f"an extension range must be a range with step 1 or an int, got {r!r}",
                              cls_name=cls_name)
        # a message set's "max" is 2**31-1 (its type_ids are int32), else 2**29-1
        if not r or r.start < 1 or r.stop > (2**31 if message_set else MAX_FIELD_NUMBER + 1):
            raise SchemaError(f"extension range {r.start} to {r.stop - 1} is empty or outside "
                              f"1..{MAX_FIELD_NUMBER}", cls_name=cls_name)
        for number, fname in seen.items():
            if number in r:
                raise SchemaError(f"field number {number} is inside the extension range {r.start} to "
                                  f"{r.stop - 1}", cls_name=cls_name, field_name=fname)
        out.append((r.start, r.stop))
    out.sort()
    for (_, end), (start, stop) in itertools.pairwise(out):
        if start < end:
            raise SchemaError(f"extension ranges overlap at {start} to {min(end, stop) - 1}", cls_name=cls_name)
    return tuple(out)


def _check_names(cls: type, cls_name: str, rules: FieldRules, fields: list[FieldInfo]) -> None:
    """Refuse two fields of one name or of clashing JSON names, as protoc does (:mod:`pbj.schema.name_rules`).

    The message's ``json_format`` is proto2's ``LEGACY_BEST_EFFORT`` or the declared feature;
    a loaded class says its own in ``__pbj_json_rules__`` (``"legacy"``, ``"allow"``, or
    ``"skip"`` for ``deprecated_legacy_json_field_conflicts``).
    """
    given = cls.__dict__.get("__pbj_json_rules__")
    if given is not None:
        legacy, skip = given == "legacy", given == "skip"
    else:
        base = rules.base
        # (pbj.descriptor's JsonFormat, by name: that module declares its classes through here)
        legacy = getattr(base.json_format, "name", "") == "LEGACY_BEST_EFFORT" if base is not None else rules.proto2
        skip = False
    check_field_names(cls_name, fields, legacy_json=legacy, skip_json=skip)


def _build_message(cls: type, *, full_name: str | None, syntax: str | None, message_set: bool,
                   map_entry: bool, edition: Any = None, features: Any = None,
                   extensions: Iterable[range | int] | None = None) -> type:
    cls_name = cls.__qualname__
    if syntax is not None and syntax not in ("proto2", "proto3", "editions"):
        raise SchemaError(f"syntax {syntax!r} is not \"proto2\" or \"proto3\"", cls_name=cls_name)
    if edition is not None and syntax not in (None, "editions"):
        raise SchemaError(f"syntax={syntax!r} and edition={edition!r}: a file has a syntax or an edition, "
                          "not both (as protoc says)", cls_name=cls_name)
    syntax = syntax or "proto3"
    rules = FieldRules(cls_name, syntax, edition, features)
    if edition is not None:
        syntax = "editions"
    anns = _Annotations(cls)
    specs = _collect_specs(cls, anns)
    seen: dict[int, str] = {}
    fields_: list[FieldInfo] = []
    oneofs: list[OneofInfo] = []
    defaults: dict[str, Any] = {}
    for attr_name, spec in specs:
        ann = anns.evaluated(attr_name)
        if spec.members is not None:
            oneofs.append(_oneof_info(cls, attr_name, spec, seen, rules))
            if not _annotation_ok(ann, spec):
                raise SchemaError(f"annotation {anns.raw[attr_name]!r} does not fit a oneof (use pbj.OneOf | None)",
                                  cls_name=cls_name, field_name=attr_name)
            defaults[attr_name] = None
            continue
        fi, defaults[attr_name] = _field_info(cls, attr_name, spec, seen, rules)
        if not _annotation_ok(ann, spec):
            raise SchemaError(f"annotation {anns.raw[attr_name]!r} does not fit protobuf type "
                              f"{_describe(spec)}", cls_name=cls_name, field_name=attr_name)
        fields_.append(fi)
    _check_names(cls, cls_name, rules, [*fields_, *(m for o in oneofs for m in o.members)])
    fields_.sort(key=lambda f: f.number)
    return make_class(cls, fields_, oneofs, [a for a, _ in specs], defaults, anns.raw,
                      full_name=full_name or f"{cls.__module__}.{cls.__qualname__}",
                      syntax=syntax, message_set=message_set, map_entry=map_entry,
                      extension_ranges=_extension_ranges(cls, extensions, message_set, seen))

