"""The ``__init__`` of a message class: generated per class, checking every value.

The source is emitted by :func:`init_source` (plain text, testable on its own)
and compiled by :func:`compile_init`, which registers it in ``linecache`` as
``<pbj generated init module.Qualname>`` so tracebacks and ``inspect.getsource``
show it. For every field a fast test accepts the values that are already in
their stored form (an ``int`` in range, a ``float`` that is already a binary32
value for a ``float`` field, a ``str`` that is ASCII, an instance
of exactly the field's class, a tuple whose items pass); anything else goes to
the field's slow path, :func:`pbj.schema.values.construct_field`, which
converts it (a list to a tuple, a ``bytearray`` to ``bytes``) or raises the
``TypeError``/``ValueError`` naming class, field and value. So the rules live
in one place (:mod:`pbj.schema.values`) and the fast tests only ever say
"certainly fine".

Names in the generated code: the parameters are the field names; every other
name starts with ``_pbj`` (the instance is ``_pbj_self``), a prefix no field
may have, so no field name can shadow a helper or a builtin. Field names that
Python would change when compiling them (NFKC normalisation of non-ASCII
identifiers) get a generic ``__init__(**kwargs)`` instead.

``decode`` does not call ``__init__``: the parser builds instances through
the hidden slots base (see :mod:`pbj.schema.make_class`), unchecked.
"""

from __future__ import annotations

import functools
import unicodedata
import weakref
from collections.abc import Callable
from typing import Any

from pbj.errors import DecodeError
from pbj.generated_text import comment
from pbj.scalars import SCALARS
from pbj.schema.containers import FrozenMap, OneOf
from pbj.schema.generated import ClassRef, run_source
from pbj.schema.records import FieldInfo, MessageInfo, OneofInfo
from pbj.schema.resolve import resolve
from pbj.schema.values import FLOAT_MAX, FLOAT_MIN_NORMAL, construct_field, construct_oneof
from pbj.wire import check_fields

__all__ = ["init_source", "compile_init", "bootstrap_init", "build_unvalidated", "PLAIN_INIT"]

#: Oneofs with at most this many members test their members inline; larger ones call the slow path.
_INLINE_MEMBERS = 8


class _Globals:
    """The globals of one generated ``__init__``: every constant under a ``_pbj`` name."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {"_pbj_int": int, "_pbj_float": float, "_pbj_bool": bool,
                                       "_pbj_str": str, "_pbj_bytes": bytes, "_pbj_tuple": tuple,
                                       "_pbj_list": list, "_pbj_dict": dict,
                                       "_pbj_FrozenMap": FrozenMap, "_pbj_OneOf": OneOf}
        self._ids: dict[int, str] = {}

    def add(self, value: Any, stem: str) -> str:
        """The global name holding ``value`` (one name per distinct object)."""
        name = self._ids.get(id(value))
        if name is None:
            name = f"_pbj_{stem}{len(self.values)}"
            self.values[name] = value
            self._ids[id(value)] = name
        return name


def _needs_slow(t: Any, v: str, g: _Globals) -> str:
    """A Python expression, true unless value ``v`` of type ``t`` is certainly in its stored form."""
    if isinstance(t, str):
        row = SCALARS[t]
        if row.range is not None:
            lo, hi = row.range
            return f"{v}.__class__ is not _pbj_int or not {lo} <= {v} <= {hi}"
        if t == "float":
            # in range (NaN and the infinities fail), 24 significant bits at most (Veltkamp's split
            # by 2**29 + 1 keeps the top 24 bits of a double) and not below the binary32 normals
            return (f"{v}.__class__ is not _pbj_float or not {-FLOAT_MAX!r} <= {v} <= {FLOAT_MAX!r} "
                    f"or (_pbj_c := {v} * 536870913.0) - (_pbj_c - {v}) != {v} "
                    f"or ({v} != 0.0 and {-FLOAT_MIN_NORMAL!r} < {v} < {FLOAT_MIN_NORMAL!r})")  # 0.0 first
        if t == "string":
            return f"{v}.__class__ is not _pbj_str or not {v}.isascii()"
        return f"{v}.__class__ is not _pbj_{row.py_type.__name__}"
    return f"{v}.__class__ is not {g.add(t, 'T')}"


def _exact_class(t: Any) -> type | None:
    """The one class a value of type ``t`` has in its stored form, when that alone makes it right."""
    if isinstance(t, str):
        row = SCALARS[t]
        return row.py_type if row.range is None and t not in ("float", "string") else None
    return t if isinstance(t, type) else None


def _field_lines(f: FieldInfo, g: _Globals, fix: str) -> list[str]:
    v = f.name
    if f.map_key is not None:
        return [f"if {v}.__class__ is not _pbj_FrozenMap or {v}:",
                f"    if {v}.__class__ is not _pbj_dict and {v}.__class__ is not _pbj_FrozenMap:",
                f"        {v} = {fix}({v})",
                "    else:",
                f"        for _pbj_k, _pbj_e in {v}.items():",
                f"            if ({_needs_slow(f.map_key, '_pbj_k', g)}) or ({_needs_slow(f.map_value, '_pbj_e', g)}):",
                f"                {v} = {fix}({v})",
                "                break",
                "        else:",
                f"            if {v}.__class__ is _pbj_dict:",
                f"                {v} = _pbj_FrozenMap({v})"]
    if f.repeated:
        return [f"if {v}.__class__ is _pbj_list:", f"    {v} = _pbj_tuple({v})",
                f"if {v}.__class__ is not _pbj_tuple:", f"    {v} = {fix}({v})",
                "else:", f"    for _pbj_e in {v}:", f"        if {_needs_slow(f.type, '_pbj_e', g)}:",
                f"            {v} = {fix}({v})", "            break"]
    test = _needs_slow(f.type, v, g)
    if f.optional:
        test = f"{v} is not None and ({test})"
    return [f"if {test}:", f"    {v} = {fix}({v})"]


def _oneof_lines(o: OneofInfo, g: _Globals, fix: str) -> list[str]:
    v = o.name
    if len(o.members) > _INLINE_MEMBERS:
        # one dict look-up: member name -> the exact class its value has when no check is needed
        # (messages, enums, bytes, bool, double); other members always take the slow path
        exact = {m.name: _exact_class(m.type) for m in o.members if _exact_class(m.type) is not None}
        table = g.add(exact, "classes")
        return [f"if {v} is not None and ({v}.__class__ is not _pbj_OneOf or "
                f"{table}.get({v}[0]) is not {v}[1].__class__):", f"    {v} = {fix}({v})"]
    lines = [f"if {v} is not None:", f"    if {v}.__class__ is not _pbj_OneOf:", f"        {v} = {fix}({v})"]
    for m in o.members:
        lines += [f"    elif {v}[0] == {m.name!r}:",
                  f"        if {_needs_slow(m.type, f'{v}[1]', g)}:", f"            {v} = {fix}({v})"]
    lines += ["    else:", f"        {v} = {fix}({v})"]
    return lines


def _describe(f: FieldInfo) -> str:
    if f.map_key is not None:
        return f"map<{f.map_key}, {getattr(f.map_value, '__name__', f.map_value)}>"
    t = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", repr(f.type))
    return f"repeated {t}" if f.repeated else str(t)


def init_source(mi: MessageInfo, defaults: dict[str, Any], slots: type) -> tuple[str, dict[str, Any]]:
    """The source of the checking ``__init__`` of a resolved message class, and its globals.

    Args:
        mi: the class's resolved schema.
        defaults: attribute name -> default value.
        slots: the hidden slots base, whose slot descriptors store the values.

    Returns:
        ``(source, globals)``: the text of ``def __init__(...)`` and the names it uses.
    """
    cls_name = mi.cls.__qualname__
    g = _Globals()
    by_name: dict[str, Any] = {f.name: f for f in mi.fields}
    by_name.update({o.name: o for o in mi.oneofs})
    params, body, stores = [], [], []
    for i, name in enumerate(mi.attr_order):
        item = by_name[name]
        params.append(f"{name}={g.add(defaults[name], 'd')}")
        if isinstance(item, OneofInfo):
            fix = g.add(functools.partial(construct_oneof, cls_name, item), "fix")
            members = ", ".join(f"{comment(m.name)} = {m.number}" for m in item.members)
            body.append(f"# {comment(name)}: oneof {members}")
            body += _oneof_lines(item, g, fix)
        else:
            fix = g.add(functools.partial(construct_field, cls_name, item), "fix")
            body.append(f"# {comment(name)} = {item.number} ({comment(_describe(item))})")
            body += _field_lines(item, g, fix)
        stores.append(f"{g.add(slots.__dict__[name].__set__, f'set{i}_')}(_pbj_self, {name})")
    fix_unknown = g.add(functools.partial(unknown_fields, cls_name, mi), "fix_unknown")
    stores.append(f"{g.add(slots.__dict__['_pbj_unknown'].__set__, 'set_unknown')}(_pbj_self, _pbj_unknown "
                  f"if _pbj_unknown.__class__ is bytes and not _pbj_unknown else {fix_unknown}(_pbj_unknown))")
    stores.append(f"{g.add(slots.__dict__['_pbj_size'].__set__, 'set_size')}(_pbj_self, -1)")
    extra = ["_pbj_unknown=b''"]
    if mi.extension_ranges:  # the extension values: kept as given by pbj.replace, else checked
        extra.append("_pbj_extensions=()")
        fix = g.add(functools.partial(_extension_values, mi.cls), "fix_ext")
        stores.append(f"{g.add(slots.__dict__['_pbj_extensions'].__set__, 'set_ext')}(_pbj_self, "
                      f"_pbj_extensions if _pbj_extensions == () else {fix}(_pbj_extensions))")
    if mi.oneofs:  # a oneof member's name given as a keyword: refused by _unexpected, pointing to pbj.OneOf
        extra.append("**_pbj_other")
        body.insert(0, f"if _pbj_other: {g.add(functools.partial(_unexpected, mi), 'unexpected')}(_pbj_other)")
    head = ", ".join(["_pbj_self", "*", *params, *extra])
    lines = [f"def __init__({head}):", *(f"    {line}" for line in body + stores)]
    return "\n".join(lines) + "\n", g.values


def _generic_init(mi: MessageInfo, defaults: dict[str, Any], slots: type) -> Callable[..., None]:
    """An ``__init__(**kwargs)`` for classes whose field names cannot be parameters in source."""
    cls_name = mi.cls.__qualname__
    steps: list[tuple[str, Any, Callable[[Any], Any], Any]] = []
    by_name: dict[str, Any] = {f.name: f for f in mi.fields}
    for o in mi.oneofs:
        by_name[o.name] = o
    for name in mi.attr_order:
        item = by_name[name]
        check = functools.partial(construct_oneof if isinstance(item, OneofInfo) else construct_field,
                                  cls_name, item)
        steps.append((name, defaults[name], check, slots.__dict__[name].__set__))
    known = frozenset(mi.attr_order)
    set_unknown = slots.__dict__["_pbj_unknown"].__set__
    set_size = slots.__dict__["_pbj_size"].__set__
    set_ext = slots.__dict__["_pbj_extensions"].__set__ if mi.extension_ranges else None

    def __init__(self: Any, /, **kwargs: Any) -> None:
        unknown = kwargs.pop("_pbj_unknown", b"")
        if unknown.__class__ is not bytes or unknown:
            unknown = unknown_fields(cls_name, mi, unknown)
        if set_ext is not None:
            ext = kwargs.pop("_pbj_extensions", ())
            set_ext(self, ext if ext == () else _extension_values(mi.cls, ext))
        other = {key: kwargs[key] for key in kwargs if key not in known}
        if other:
            _unexpected(mi, other)
        for name, default, check, store in steps:
            store(self, check(kwargs.get(name, default)))
        set_unknown(self, unknown)
        set_size(self, -1)

    return __init__


def unknown_fields(cls_name: str, mi: MessageInfo, value: Any) -> bytes:
    """The checked ``_pbj_unknown`` argument of a constructor: the raw bytes of unknown fields.

    Args:
        cls_name: the class's qualified name, for the error.
        mi: the class's schema record (its fields' tags are refused, see below).
        value: ``bytes`` (or a ``bytearray``/``memoryview``, copied) holding whole fields
            ("Encoding": tag, then value; groups closed), as :func:`pbj.unknown_fields` gives them.
            A field of the class may be among them only as the parser keeps it: with a wire
            type the field does not read, or (a closed enum or a map) with any tag.

    Returns:
        ``value`` as ``bytes``.

    Raises:
        TypeError: ``value`` is not bytes-like.
        ValueError: ``value`` is not a run of whole fields (names the first bad byte), or holds
            a tag the class's parser reads as one of its fields (the message would decode to
            another value than it holds; names the field).
    """
    if not isinstance(value, (bytes, bytearray, memoryview)):
        raise TypeError(f"{cls_name}._pbj_unknown: expected the bytes of unknown fields, got "
                        f"{type(value).__name__}")
    data = bytes(value)
    try:
        tags = check_fields(data)
    except DecodeError as exc:
        raise ValueError(f"{cls_name}._pbj_unknown: not a run of whole fields: {exc.reason} "
                         f"(at byte {exc.offset})") from None
    known = known_tag(mi, tags)
    if known is not None:
        raise ValueError(f"{cls_name}._pbj_unknown: holds field {known[1].name} (number {known[1].number}, "
                         f"wire type {known[0] & 7}), which the parser reads as that field, not as an "
                         "unknown field; set the field instead")
    return data


def known_tag(mi: MessageInfo, tags: list[int]) -> tuple[int, FieldInfo] | None:
    """The first of ``tags`` that the parser of ``mi``'s class reads as one of its fields.

    Closed enums and maps are left out: their parser keeps a non-member value, or a map
    entry holding one or an unknown field, as an unknown field of that very tag.

    Returns:
        ``(tag, field)``, or ``None`` when every tag would be kept as an unknown field.
    """
    if not tags:
        return None
    read = _read_tags(mi)
    for tag in tags:
        field = read.get(tag)
        if field is not None:
            return tag, field
    return None


def _read_tags(mi: MessageInfo) -> dict[int, FieldInfo]:
    cached = _READ_TAGS.get(mi.cls)
    if cached is not None:
        return cached
    read: dict[int, FieldInfo] = {}
    for f in [*mi.fields, *(m for o in mi.oneofs for m in o.members)]:
        kind = f.kind
        if kind == "map" or (kind == "enum" and getattr(f.type, "__pbj_closed__", False)):
            continue
        if f.group:
            read[(f.number << 3) | 3] = f
        elif kind == "message":
            read[(f.number << 3) | 2] = f
        else:
            row = SCALARS[f.type] if kind == "scalar" else SCALARS["int32"]
            read[(f.number << 3) | row.wire_type] = f
            if f.repeated and row.packable:
                read[(f.number << 3) | 2] = f
    _READ_TAGS[mi.cls] = read
    return read


# class -> {tag: field} of the tags its parser reads (see _read_tags); weak so classes can go.
_READ_TAGS: weakref.WeakKeyDictionary[type, dict[int, FieldInfo]] = weakref.WeakKeyDictionary()


def _unexpected(mi: MessageInfo, given: dict[str, Any]) -> None:
    """Refuse keywords that name no field of the class, pointing to what was meant.

    A oneof member's name points to ``pbj.OneOf`` (the oneof is set as
    ``oneof=pbj.OneOf("member", value)``); another name gets a did-you-mean.

    Raises:
        TypeError: always (``"Cls.__init__() got an unexpected keyword argument 'x'..."``).
    """
    from pbj.schema.values import did_you_mean

    name = next(iter(given))
    cls_name = mi.cls.__qualname__
    text = f"{cls_name}.__init__() got an unexpected keyword argument {name!r}"
    for o in mi.oneofs:
        if any(m.name == name for m in o.members):
            raise TypeError(f"{text}: {name} is a member of oneof {o.name}; set it as "
                            f"{o.name}=pbj.OneOf({name!r}, value)")
    raise TypeError(text + did_you_mean(name, mi.attr_order))


def _extension_values(cls: type, values: Any) -> tuple:
    """The stored form of the extension values given to a constructor: a mapping extension ->
    value (checked), or the stored tuple of holders ``pbj.replace`` passes (checked to be one).

    Raises:
        TypeError: a tuple that is not the holders of extensions of ``cls`` in number order,
            or what :func:`pbj.schema.extension_holders.stored_extensions` refuses.
    """
    from pbj.schema.extension_holders import stored_extensions
    if values.__class__ is tuple:
        last = 0
        for h in values:
            ext = getattr(type(h), "__pbj_extension__", None)
            if ext is None or ext.extendee is not cls or type(h) is not ext.holder or ext.number <= last:
                raise TypeError(f"{cls.__qualname__}._pbj_extensions: give a mapping of pbj.Extension to value "
                                f"(or use pbj.with_extensions), not {values!r}")
            last = ext.number
        return values
    return stored_extensions(cls, values)


def compile_init(cls: type, defaults: dict[str, Any]) -> Callable[..., None]:
    """Resolve ``cls`` and compile its checking ``__init__``.

    Raises:
        SchemaError: a forward reference of the class cannot be resolved.
    """
    mi = resolve(cls)
    slots = cls.__pbj_slots__  # type: ignore[attr-defined]
    names_ok = all(unicodedata.normalize("NFKC", n) == n and n.isidentifier() for n in mi.attr_order)
    if not names_ok:
        init = _generic_init(mi, defaults, slots)
    else:
        source, globals_ = init_source(mi, defaults, slots)
        run_source(cls, "init", source, globals_)
        init = globals_["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__doc__ = f"Build a {cls.__qualname__}: every field an optional keyword, each value checked."
    return init


def bootstrap_init(ref: ClassRef, defaults: dict[str, Any], qualname: str) -> Callable[..., None]:
    """The first ``__init__`` of the class ``ref`` holds (named ``qualname``): compiles the real one
    (when the forward references can be resolved), installs it on the class and runs it."""

    def __init__(self: Any, /, **kwargs: Any) -> None:
        cls = ref.cls
        init = compile_init(cls, defaults)
        cls.__init__ = init  # type: ignore[misc]
        init(self, **kwargs)

    __init__.__qualname__ = f"{qualname}.__init__"
    return __init__


#: The class attribute where :func:`pbj.validate_on_build` keeps a class's own checking ``__init__``
#: while a validating one is installed in its place.
PLAIN_INIT = "__pbj_unvalidated_init__"


def build_unvalidated(cls: type, kwargs: dict[str, Any]) -> Any:
    """An instance of message class ``cls`` built from ``kwargs`` by its checking ``__init__``,
    but not the ``buf.validate`` check :func:`pbj.validate_on_build` may have put in front of it.

    Every parser (ProtoJSON, text format, ``from_dict``/``from_python``, unpickling) builds through
    this, as ``decode`` builds without ``__init__`` at all: reading data never validates.

    Raises:
        TypeError, ValueError: as the class's constructor, naming class, field and value.
    """
    plain = cls.__dict__.get(PLAIN_INIT)
    if plain is None:
        return cls(**kwargs)
    obj: Any = object.__new__(cls)
    plain(obj, **kwargs)
    return obj
