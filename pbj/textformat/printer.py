"""Writing messages in the text format: :func:`to_text`.

The output is the canonical form Google's C++ printer gives
(``TextFormat::Printer``, what ``protoc --decode`` prints), so that text from
pbj and from protoc can be compared with ``diff``:

* fields in field-number order (oneof members and extensions among them),
  each on its own line, nested messages indented by two spaces:
  ``name: value`` for scalars, ``name {`` ... ``}`` for messages; one line
  with ``one_line=True`` (``a: 1 b { c: 2 }``, C++ ``ShortDebugString``);
* a field is written when it is present: a field with explicit presence when
  it is set, even to its default; one with implicit presence when it is not
  its zero value (a ``-0.0`` is written, its bits are not zero); a repeated
  field once per element; a map as one ``name { key: ... value: ... }`` entry
  per key, ascending by key, always with both ``key`` and ``value`` (Google's
  Python printer leaves out a zero ``value``; C++ writes it);
* integers in decimal, ``true``/``false``, enums by name (by number when the
  number is not a member of an open enum), floats as
  :mod:`pbj.textformat.numbers` writes them, strings and bytes C-escaped in
  double quotes (:mod:`pbj.textformat.escapes`);
* a group-like field under its type's name (:mod:`pbj.textformat.plan`);
* an ``Any`` whose type URL names a known message class (the ProtoJSON type
  registry: registered, loaded and well-known classes) in its expanded form
  ``[type.googleapis.com/pkg.Msg] { ... }`` (protobuf.dev "Text Format
  Language Specification", "Any Fields"); an ``Any`` of an unknown type or
  whose value does not decode as that type as its two plain fields;
* extensions (those registered with the class) as ``[pkg.ext]: value``,
  in field-number order among the fields (:mod:`pbj.textformat.extensions`);
* unknown fields, with ``print_unknown_fields=True``, after the known ones,
  by number as ``protoc --decode_raw`` shows them (:mod:`pbj.textformat.raw`);
  they can be read by eye but not parsed back (the spec's "Unknown Fields").
"""

from __future__ import annotations

import math
from typing import Any

from pbj import wire
from pbj.api import decode
from pbj.depth import too_deep
from pbj.errors import DecodeError, EncodeError
from pbj.protojson.registry import resolve_any
from pbj.schema import is_message, stored, unknown_fields
from pbj.schema.resolve import message_needed
from pbj.textformat.escapes import escape_bytes, escape_text
from pbj.textformat.extensions import check_namespace, extension_plan
from pbj.textformat.numbers import FLOAT32_MAX, format_double, format_float, to_float32
from pbj.textformat.plan import FieldPlan, MessagePlan, message_plan
from pbj.textformat.raw import print_unknown, walk_fields

__all__ = ["to_text"]

_copysign = math.copysign


def to_text(obj: Any, *, one_line: bool = False, print_unknown_fields: bool = False, expand_any: bool = True,
            utf8: bool = False, extensions: Any = None) -> str:
    """A message in the text format, as Google's C++ printer writes it.

    Implements the output side of protobuf.dev "Text Format Language
    Specification"; the layout and number formats are those of C++
    ``TextFormat::Printer`` (see the module docstring).

    Args:
        obj: a pbj message instance.
        one_line: write everything on one line, fields separated by one space
            (C++ ``SetSingleLineMode``); no trailing space.
        print_unknown_fields: also write the unknown fields kept on decoded
            messages, by field number (they cannot be parsed back).
        expand_any: write an ``Any`` of a known type in its expanded form
            ``[type URL] { ... }`` (default); ``False`` writes its
            ``type_url`` and ``value`` fields.
        utf8: write the characters of ``string`` fields as they are, escaping
            only ASCII controls, DEL and ``" ' \\``; by default their UTF-8
            bytes are escaped as octal, as ``protoc --decode`` does.
        extensions: a :class:`pbj.Namespace`, or ``None``; kept for
            compatibility: the extensions of a message (those registered with
            its class, :mod:`pbj.extensions`) are always printed, as
            ``[pkg.ext]: value``.

    Returns:
        The text: one field a line, each line ending with ``"\\n"`` (``""``
        for a message with no fields set), or one line without newline.

    Raises:
        TypeError: ``obj`` is not a pbj message instance, or ``extensions``
            is not a namespace.
        EncodeError: a field holds a value its type cannot have (a ``str`` in
            an ``int32`` field, an integer out of range, a lone surrogate in a
            ``string``, unknown fields that are not valid wire format), with
            the field path; or the message is nested too deep for Python's
            recursion limit, naming its depth (:mod:`pbj.depth`).
    """
    if not is_message(obj) or isinstance(obj, type):
        raise message_needed(obj, "pbj.to_text")
    check_namespace(extensions)
    printer = _Printer(one_line, print_unknown_fields, expand_any, utf8)
    out: list[str] = []
    try:
        printer.message(obj, "", out)
    except RecursionError:
        raise too_deep(obj, "pbj.to_text") from None
    text = "".join(out)
    return text.removesuffix(" ") if one_line else text


def _int_formatter(kind: str):
    lo, hi = wire.RANGES[kind]

    def format_int(v: Any) -> str:
        if not isinstance(v, int):
            raise EncodeError(f"{kind} field needs an int, got {type(v).__name__}")
        if not lo <= v <= hi:
            raise EncodeError(f"{v} is out of range for {kind} [{lo}, {hi}]")
        return str(int(v))

    return format_int


def _format_bool(v: Any) -> str:
    return "true" if v else "false"


def _format_double(v: Any) -> str:
    if not isinstance(v, float | int):
        raise EncodeError(f"double field needs a float, got {type(v).__name__}")
    try:
        return format_double(float(v))
    except OverflowError:
        raise EncodeError(f"{v} is out of range for double") from None


def _format_float(v: Any) -> str:
    if not isinstance(v, float | int):
        raise EncodeError(f"float field needs a float, got {type(v).__name__}")
    narrow = to_float32(float(v))
    if math.isinf(narrow) and not math.isinf(v) and abs(v) > FLOAT32_MAX:
        raise EncodeError(f"{v} is out of range for float")
    return format_float(narrow)


def _format_bytes(v: Any) -> str:
    if not isinstance(v, bytes | bytearray | memoryview):
        raise EncodeError(f"bytes field needs bytes, got {type(v).__name__}")
    return f'"{escape_bytes(bytes(v))}"'


def _string_formatter(utf8: bool):
    def format_string(v: Any) -> str:
        if not isinstance(v, str):
            raise EncodeError(f"string field needs a str, got {type(v).__name__}")
        try:
            return f'"{escape_text(v, utf8=utf8)}"'
        except UnicodeEncodeError:
            pass
        try:  # a field that keeps invalid UTF-8 (proto2, utf8_validation = NONE): its bytes, escaped
            return f'"{escape_bytes(v.encode("utf-8", "surrogateescape"))}"'
        except UnicodeEncodeError:
            raise EncodeError("string holds a lone surrogate, which is not valid UTF-8") from None

    return format_string


def _enum_formatter(p: FieldPlan):
    assert p.enum is not None  # an enum field's plan holds its EnumPlan
    names = p.enum.names  # the schema's names, not the Python member names (value_ for value)
    name = p.enum.name

    def format_enum(v: Any) -> str:
        if not isinstance(v, int):
            raise EncodeError(f"enum {name} field needs an int or a member, got {type(v).__name__}")
        text = names.get(v)
        return text if text is not None else str(int(v))

    return format_enum


_FORMATTERS: dict[str, Any] = {k: _int_formatter(k) for k in wire.RANGES}
_FORMATTERS.update({"bool": _format_bool, "double": _format_double, "float": _format_float,
                    "bytes": _format_bytes})


def _is_set(p: FieldPlan, v: Any) -> bool:
    """Whether a field counts as present (see the module docstring)."""
    presence = p.presence
    if presence == "explicit":
        return v is not None
    if presence == "repeated":
        return bool(v)
    if p.scalar in ("float", "double"):
        return v != 0 or _copysign(1.0, v) < 0
    return bool(v)


class _Printer:
    """One :func:`to_text` call: the options, and the writers of messages and fields."""

    __slots__ = ("expand_any", "formatters", "nl", "step", "unknown")

    def __init__(self, one_line: bool, unknown: bool, expand_any: bool, utf8: bool) -> None:
        self.nl = " " if one_line else "\n"
        self.step = "" if one_line else "  "
        self.unknown = unknown
        self.expand_any = expand_any
        self.formatters = dict(_FORMATTERS, string=_string_formatter(utf8))

    def formatter(self, kind: str, p: FieldPlan):
        if kind == "enum":
            return _enum_formatter(p)
        assert p.scalar is not None  # otherwise a scalar field, whose plan holds its type name
        return self.formatters[p.scalar]

    def message(self, obj: Any, prefix: str, out: list[str]) -> None:
        cls: type = type(obj)
        plan = message_plan(cls)
        if plan.is_any and self.expand_any and self.expanded_any(obj, plan, prefix, out):
            return
        extras: list[tuple[int, FieldPlan, Any]] = []
        # a field with a declared default is read as stored: an unset field is not printed
        get = stored if getattr(cls, "__pbj_defaults__", None) else getattr
        for attr, members in plan.oneofs.items():
            v = getattr(obj, attr)
            if v is not None:
                p = members.get(v[0]) if isinstance(v, tuple) and len(v) == 2 else None
                if p is None:
                    raise EncodeError(f"oneof value {v!r} names no member of the oneof", path=[attr])
                extras.append((p.number, p, v[1]))
        if cls.__pbj_info__.extension_ranges:  # type: ignore[attr-defined]
            for h in obj._pbj_extensions:
                ext = h.__pbj_extension__
                extras.append((ext.number, extension_plan(ext), ext.value_of(h)))
        unknown = unknown_fields(obj)
        if len(extras) > 1:
            extras.sort(key=lambda e: e[0])
        i, n = 0, len(extras)
        for p in plan.fields:
            while i < n and extras[i][0] < p.number:
                self.field(extras[i][1], extras[i][2], prefix, out)
                i += 1
            v = get(obj, p.attr)
            if _is_set(p, v):
                self.field(p, v, prefix, out)
        while i < n:
            self.field(extras[i][1], extras[i][2], prefix, out)
            i += 1
        if unknown and self.unknown:
            try:
                fields = walk_fields(unknown)
            except DecodeError as exc:
                raise EncodeError(f"the unknown fields are not valid wire format: {exc.reason}") from None
            print_unknown(unknown, fields, out, prefix, self.step, self.nl)

    def field(self, p: FieldPlan, v: Any, prefix: str, out: list[str]) -> None:
        """Write one present field (every element of a repeated one)."""
        name, nl, kind = p.name, self.nl, p.kind
        try:
            if p.presence == "repeated":
                if kind == "map":
                    self.map_entries(p, v, prefix, out)
                    return
                fmt = None if kind == "message" else self.formatter(kind, p)
                for index, x in enumerate(v):
                    try:
                        if fmt is None:
                            self.submessage(p, name, x, prefix, out)
                        else:
                            out.append(f"{prefix}{name}: {fmt(x)}{nl}")
                    except EncodeError as exc:
                        exc.path.insert(0, index)
                        raise
            elif kind == "message":
                self.submessage(p, name, v, prefix, out)
            else:
                out.append(f"{prefix}{name}: {self.formatter(kind, p)(v)}{nl}")
        except EncodeError as exc:
            exc.path.insert(0, p.path)
            raise

    def submessage(self, p: FieldPlan, name: str, v: Any, prefix: str, out: list[str]) -> None:
        assert p.message is not None  # a message field's (or map value's) plan holds its class
        if not isinstance(v, p.message):
            raise EncodeError(f"field needs a {p.message.__qualname__} message, got {type(v).__name__}")
        out.append(f"{prefix}{name} {{{self.nl}")
        self.message(v, prefix + self.step, out)
        out.append(f"{prefix}}}{self.nl}")

    def map_entries(self, p: FieldPlan, v: Any, prefix: str, out: list[str]) -> None:
        """A map: one entry per key, ascending by key (C++ ``MapFieldPrinterHelper::SortMap``)."""
        nl, inner = self.nl, prefix + self.step
        assert p.key is not None  # a map field's plan holds its key's type name
        key_fmt = self.formatters[p.key]
        value_fmt = None if p.value_kind == "message" else self.formatter(p.value_kind, p)
        try:
            keys = sorted(v)
        except TypeError:
            raise EncodeError(f"the keys of a map<{p.key}, ...> field cannot be sorted: mixed types") from None
        for k in keys:
            try:
                out.append(f"{prefix}{p.name} {{{nl}{inner}key: {key_fmt(k)}{nl}")
                if value_fmt is None:
                    self.submessage(p, "value", v[k], inner, out)
                else:
                    out.append(f"{inner}value: {value_fmt(v[k])}{nl}")
                out.append(f"{prefix}}}{nl}")
            except EncodeError as exc:
                exc.path.insert(0, (k,))
                raise

    def expanded_any(self, obj: Any, plan: MessagePlan, prefix: str, out: list[str]) -> bool:
        """Write an ``Any`` as ``[type URL] { ... }`` if its type is known and its value decodes."""
        by_number = {p.number: p for p in plan.fields}
        url, value = getattr(obj, by_number[1].attr), getattr(obj, by_number[2].attr)
        if not isinstance(url, str) or "/" not in url or not isinstance(value, bytes | bytearray):
            return False
        target = resolve_any(url)  # the registry ProtoJSON resolves "@type" with
        if target is None:
            return False
        try:
            inner: Any = decode(target, value)
        except DecodeError:
            return False
        out.append(f"{prefix}[{url}] {{{self.nl}")
        self.message(inner, prefix + self.step, out)
        out.append(f"{prefix}}}{self.nl}")
        return True
