"""The writer and reader of an ordinary message, built once per class from its schema.

``build_writer`` and ``build_reader`` are the cattrs hook factories' work: the
first time a converter meets a message class they read its schema
(:func:`pbj.schema.info`) once and return a closure over a list of per-field
steps (the JSON key, the value function picked for the field's type, when the
field is skipped). A well-known type gets its special form from
:mod:`pbj.protojson.wellknown_forms` instead (protobuf.dev "ProtoJSON Format").
"""

from __future__ import annotations

from typing import Any, cast

import cattrs

from pbj.errors import EncodeError
from pbj.protojson.common import SKIP, JSONError, enter, json_type, leave
from pbj.protojson.jsontext import check_object
from pbj.protojson.registry import remember
from pbj.protojson.scalar_forms import map_key_reader, map_key_writer
from pbj.protojson.values import Options, is_zero, null_keeps, value_reader, value_writer
from pbj.protojson.wellknown_forms import WKT_READERS, WKT_WRITERS
from pbj.schema import FieldInfo, OneOf, info
from pbj.schema.constructor import build_unvalidated
from pbj.schema.name_rules import json_conflict
from pbj.schema.presence import DeclaredDefault
from pbj.schema.values import did_you_mean

__all__ = ["build_writer", "build_reader"]

# ---- writer (message -> JSON value)

_SCALAR, _PRESENT, _REPEATED, _MAP, _ONEOF, _MEMBER = 0, 1, 2, 3, 4, 5

#: One writer step: ``(attr, key, mode, writer, zero test)``; what writer and key hold depends on mode.
_WriteStep = tuple[str, Any, int, Any, Any]


def _key(f: Any, opts: Options) -> str:
    return f.proto_name if opts.proto_names else f.json_name


def _utf8_only(w: Any) -> Any:
    """``w`` (or as-is) for a string that may hold invalid UTF-8 (proto2, ``utf8_validation =
    NONE``): JSON text is Unicode (RFC 8259, section 8.1) and ProtoJSON has no form for other
    bytes, so such a value is an EncodeError, as Go's protojson refuses it."""
    def write_utf8_only(v: Any) -> Any:
        if not v.isascii():
            try:
                v.encode()
            except UnicodeEncodeError:
                raise EncodeError("string holds bytes that are not valid UTF-8 (kept from the wire: "
                                  "the field is not UTF-8-validated); JSON cannot hold them") from None
        return v if w is None else w(v)
    return write_utf8_only


def _value_writer(f: Any, conv: cattrs.Converter, opts: Options) -> Any:
    w = value_writer(f.type, conv, opts)
    return _utf8_only(w) if f.type == "string" and not f.utf8 else w


def _write_steps(mi: Any, conv: cattrs.Converter, opts: Options) -> list[_WriteStep]:
    """The writer's steps ``(attr, key, mode, writer, zero test)``, in field-number order.

    Keys come out in field-number order, as Google's runtimes print them, a set
    oneof member where its number falls: a oneof whose member numbers no other
    field's number falls between is one step at its lowest number; a oneof
    interleaved with other fields gets one step per member.
    """
    numbered: list[tuple[int, _WriteStep]] = []
    for f in mi.fields:
        key = _key(f, opts)
        if f.is_map:
            kw = map_key_writer(f.map_key)
            vw = value_writer(f.map_value, conv, opts)
            if not f.utf8:
                kw, vw = (_utf8_only(kw) if f.map_key == "string" else kw), \
                    (_utf8_only(vw) if f.map_value == "string" else vw)
            step = (f.name, key, _MAP, (kw, vw), None)
        elif f.repeated:
            step = (f.name, key, _REPEATED, _value_writer(f, conv, opts), None)
        elif f.optional:
            step = (f.name, key, _PRESENT, _value_writer(f, conv, opts), None)
        else:
            step = (f.name, key, _SCALAR, _value_writer(f, conv, opts), is_zero(f))
        numbered.append((f.number, step))
    for o in mi.oneofs:
        members = {m.name: (_key(m, opts), _value_writer(m, conv, opts)) for m in o.members}
        numbers = [m.number for m in o.members]
        lo, hi = min(numbers), max(numbers)
        others = (f.number for f in mi.all_fields() if f.oneof != o.name)
        if not any(lo < n < hi for n in others):
            numbered.append((lo, (o.name, None, _ONEOF, members, None)))
            continue
        for m in o.members:
            numbered.append((m.number, (o.name, members[m.name][0], _MEMBER, (m.name, members), None)))
    numbered.sort(key=lambda item: item[0])
    return [step for _, step in numbered]


def build_writer(cls: type, conv: cattrs.Converter, opts: Options):
    """The function writing an instance of ``cls`` as its JSON value (``to_dict_<Class>``).

    Keys are written in field-number order (see :func:`_write_steps`).
    """
    mi = info(cls)
    remember(mi.full_name, cls)
    special = WKT_WRITERS.get(mi.full_name)
    if special is not None:
        return special(mi, conv, opts)
    clash = None if opts.proto_names else json_conflict(mi.all_fields())
    if clash is not None:  # only a LEGACY_BEST_EFFORT class (pbj.schema.name_rules): one key for two fields
        a, b = clash
        reason = (f"fields {a.proto_name!r} and {b.proto_name!r} of {mi.full_name} share the JSON name "
                  f"{b.json_name!r} (protoc only warns with json_format = LEGACY_BEST_EFFORT): write with "
                  "proto_names=True")

        def refuse(obj: Any) -> dict:
            raise EncodeError(reason)

        refuse.__name__ = refuse.__qualname__ = f"to_dict_{cls.__name__}"
        return refuse
    steps = _write_steps(mi, conv, opts)
    emit = opts.emit_defaults
    # a field with a declared default is read as stored (its slot): an unset field is not printed
    raw = {attr: d.raw for attr in (step[0] for step in steps)
           if isinstance(d := cls.__dict__.get(attr), DeclaredDefault)}
    plan = [(attr, key, mode, w, zero, raw.get(attr)) for attr, key, mode, w, zero in steps]
    write_extensions = _extensions_writer(conv, opts) if mi.extension_ranges else None

    def write_message(obj: Any) -> dict:
        out: dict = {}
        for attr, key, mode, w, zero, slot in plan:
            v = getattr(obj, attr) if slot is None else slot(obj)
            if mode >= _ONEOF:
                if v is not None:
                    _write_member(out, attr, v, mode, w)
                continue
            try:
                if mode == _SCALAR:
                    if not emit and zero(v):
                        continue
                    out[key] = v if w is None else w(v)
                elif mode == _PRESENT:
                    if v is not None:
                        out[key] = v if w is None else w(v)
                elif mode == _REPEATED:
                    if v or emit:
                        out[key] = list(v) if w is None else [w(x) for x in v]
                else:
                    if v or emit:
                        kw, vw = w
                        out[key] = {(k if kw is None else kw(k)): (x if vw is None else vw(x))
                                    for k, x in v.items()}
            except EncodeError as exc:
                if mode == _REPEATED:
                    exc.path.insert(0, _failing_index(v, w))
                elif mode == _MAP:  # w is the (key writer, value writer) pair (the checker sees the None tests above)
                    exc.path.insert(0, (_failing_key(v, cast("tuple[Any, Any]", w)[1]),))
                exc.path.insert(0, attr)
                raise
        return out

    if write_extensions is not None:
        write_fields = write_message

        def write_message(obj: Any) -> dict:  # a class with extension ranges: its fields, then "[pkg.ext]" keys
            out = write_fields(obj)
            if obj._pbj_extensions:
                write_extensions(obj, out)
            return out

    write_message.__name__ = write_message.__qualname__ = f"to_dict_{cls.__name__}"
    return write_message


def _extensions_writer(conv: cattrs.Converter, opts: Options):
    """The writer of a message's extensions: ``"[pkg.ext]": value`` after its fields, in
    field-number order ("ProtoJSON Format": extensions are named by their full name in brackets)."""
    writers: dict[Any, Any] = {}

    def write_extensions(obj: Any, out: dict) -> None:
        for h in obj._pbj_extensions:
            ext = h.__pbj_extension__
            w = writers.get(ext)
            if w is None:
                # a proto2 string extension may hold bytes that are not UTF-8, as a field may
                w = value_writer(ext.type, conv, opts) if ext.message_set else _value_writer(ext.field, conv, opts)
                w = writers[ext] = w or _same
            v = ext.value_of(h)
            key = ext.json_name
            try:
                out[key] = [w(x) for x in v] if ext.repeated else w(v)
            except EncodeError as exc:
                if ext.repeated:
                    exc.path.insert(0, _failing_index(v, w))
                exc.path.insert(0, key)
                raise
    return write_extensions


def _same(v: Any) -> Any:
    return v


def _extension_step(mi: Any, key: str, conv: cattrs.Converter, opts: Options, cache: dict) -> Any:
    """``(extension, reader, null keeps)`` for a ``"[pkg.ext]"`` key of a class with extension ranges, or ``None``."""
    if not mi.extension_ranges or not (key.startswith("[") and key.endswith("]")):
        return None
    name = key[1:-1]
    for ext in mi.extensions.values():
        if ext.full_name == name:
            step = cache.get(ext)
            if step is None:
                read = value_reader(ext.type, conv, opts)
                if ext.repeated:
                    read = _repeated_reader(read, null_keeps(ext.type))
                step = cache[ext] = (ext, read, null_keeps(ext.type) and not ext.repeated)
            return step
    return None


def _write_member(out: dict, attr: str, v: Any, mode: int, w: Any) -> None:
    """Write the set member of oneof ``attr`` (a whole-oneof step, or the step of one member)."""
    which, x = v
    if mode == _MEMBER:
        name, members = w
        if which != name:
            if which not in members:
                raise EncodeError(f"{which!r} is not a member of oneof {attr}", path=[attr])
            return
    else:
        members = w
    try:
        key, write = members[which]
    except KeyError:
        raise EncodeError(f"{which!r} is not a member of oneof {attr}", path=[attr]) from None
    try:
        out[key] = x if write is None else write(x)
    except EncodeError as exc:
        exc.path.insert(0, which)
        raise


def _failing_index(items: Any, write: Any) -> int:
    """The index of the first element ``write`` fails on (for an error's path; rarely called)."""
    for i, x in enumerate(items):
        try:
            write(x)
        except EncodeError:
            return i
    return -1  # pragma: no cover


def _failing_key(items: Any, write: Any) -> Any:
    for k, x in items.items():
        try:
            if write is not None:
                write(x)
        except EncodeError:
            return k
    return None  # pragma: no cover


# ---- reader (JSON value -> message)

def _repeated_reader(read, null_ok: bool):
    def read_list(v: Any) -> tuple:
        if v.__class__ is not list:
            raise JSONError(f"expected a JSON array, got {json_type(v)}")
        out = []
        for i, x in enumerate(v):
            try:
                if x is None and not null_ok:
                    raise JSONError("null is not allowed as an element of a repeated field")
                y = read(x)
            except JSONError as exc:
                exc.path.insert(0, i)
                raise
            if y is not SKIP:
                out.append(y)
        return tuple(out)
    return read_list


def _map_reader(read_key, read_value, null_ok: bool):
    def read_map(v: Any) -> dict:
        check_object(v, "a map field")
        out = {}
        for k, x in v.items():
            try:
                key = read_key(k)
                if x is None and not null_ok:
                    raise JSONError("null is not allowed as a map value")
                y = read_value(x)
            except JSONError as exc:
                exc.path.insert(0, (k,))
                raise
            if y is not SKIP:
                out[key] = y
        return out
    return read_map


def _ambiguous(full_name: str, key: str, a: FieldInfo, b: FieldInfo):
    def read_ambiguous(v: Any) -> Any:
        raise JSONError(f"{key!r} is the JSON name of both {a.proto_name!r} and {b.proto_name!r} of {full_name} "
                        "(protoc only warns with json_format = LEGACY_BEST_EFFORT): give the field's .proto name")
    return read_ambiguous


def build_reader(cls: type, conv: cattrs.Converter, opts: Options):
    """The function reading a JSON value as an instance of ``cls`` (``from_dict_<Class>``)."""
    mi = info(cls)
    remember(mi.full_name, cls)
    special = WKT_READERS.get(mi.full_name)
    if special is not None:
        return special(mi, conv, opts)
    by_key: dict[str, tuple[str, str | None, Any, bool]] = {}  # key -> (attr, oneof member, reader, null keeps)
    by_json: dict[str, tuple[str, str | None, Any, bool]] = {}
    for f in mi.fields:
        if f.map_key is not None:  # a map field
            read = _map_reader(map_key_reader(f.map_key), value_reader(f.map_value, conv, opts),
                               null_keeps(f.map_value))
        elif f.repeated:
            read = _repeated_reader(value_reader(f.type, conv, opts), null_keeps(f.type))
        else:
            read = value_reader(f.type, conv, opts)
        step: tuple[str, str | None, Any, bool] = (f.name, None, read, null_keeps(f.type) and not f.repeated)
        by_json[f.json_name] = step
        by_key[f.proto_name] = step
    for o in mi.oneofs:
        for m in o.members:
            step = (o.name, m.name, value_reader(m.type, conv, opts), null_keeps(m.type))
            by_json[m.json_name] = step
            by_key[m.proto_name] = step
    # a JSON name wins over another field's .proto name, as upb reads it (json_name "b_c" beside a field b_c)
    by_proto = dict(by_key)
    by_key.update(by_json)
    seen: dict[str, FieldInfo] = {}
    for f in mi.all_fields():  # a JSON name two fields share (LEGACY_BEST_EFFORT only)
        other = seen.setdefault(f.json_name, f)
        if other is f:
            continue
        named = next((g for g in (other, f) if g.proto_name == f.json_name), None)
        if named is not None:  # the .proto name of one of them (which to_dict(proto_names=True) writes)
            by_key[f.json_name] = by_proto[named.proto_name]
        else:  # refused, by its path
            by_key[f.json_name] = ("", None, _ambiguous(mi.full_name, f.json_name, other, f), True)
    ignore = opts.ignore_unknown
    name = mi.full_name

    def read_message(d: Any, _cls: Any = None) -> Any:
        check_object(d, f"message {name}")
        enter()
        try:
            return read_fields(d)
        finally:
            leave()

    ext_steps: dict = {}

    def read_extension(k: str, v: Any, kw: dict) -> bool:
        """Read ``"[pkg.ext]": v`` into ``kw["_pbj_extensions"]``; False if ``k`` names no extension."""
        found = _extension_step(mi, k, conv, opts, ext_steps)
        if found is None:
            return False
        ext, read, keeps_null = found
        if v is None and not keeps_null:
            return True
        try:
            x = read(v)
        except JSONError as exc:
            exc.path.insert(0, k)
            raise
        if x is SKIP:
            return True
        values = kw.setdefault("_pbj_extensions", {})
        if ext in values:
            raise JSONError(f"extension {k!r} is given twice", path=[k])
        values[ext] = x
        return True

    def read_fields(d: dict) -> Any:
        kw: dict = {}
        given: dict = {}
        for k, v in d.items():
            step = by_key.get(k)
            if step is None:
                if read_extension(k, v, kw):
                    continue
                if ignore:
                    continue
                raise JSONError(f"unknown field {k!r} in message {name}{did_you_mean(k, by_key)}", path=[k])
            attr, member, read, keeps_null = step
            if v is None and not keeps_null:
                continue
            try:
                x = read(v)
            except JSONError as exc:
                exc.path.insert(0, k)
                raise
            if x is SKIP:
                continue
            if attr in kw:
                if member is not None:
                    raise JSONError(f"oneof {attr!r} has two members set: {given[attr]!r} and {k!r}", path=[k])
                raise JSONError(f"field {attr!r} is given twice, as {given[attr]!r} and as {k!r}", path=[k])
            given[attr] = k
            kw[attr] = x if member is None else OneOf(member, x)
        try:
            return build_unvalidated(cls, kw)
        except (TypeError, ValueError) as exc:  # pragma: no cover - readers check every value
            raise JSONError(f"cannot build {name}: {exc}") from None

    read_message.__name__ = read_message.__qualname__ = f"from_dict_{cls.__name__}"
    return read_message
