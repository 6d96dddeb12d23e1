"""The value rules of fields: what a field of each type accepts, and what it is stored as.

One implementation serves the constructor (``__init__``, ``pbj.replace``,
``attrs.evolve``: see :mod:`pbj.schema.constructor`) and the encoder's error
diagnosis (:func:`pbj.api.encode` names the field that failed). The types come
from the rows of :mod:`pbj.scalars` ("Scalar Value Types" in protobuf.dev
"Language Guide (proto3)"):

* integral types take an ``int`` (or an object with ``__index__``, not a
  ``bool``) within the type's range;
* ``float``/``double`` take a ``float`` or an ``int`` (stored as ``float``);
  a finite ``float`` value must fit the 32-bit range and is stored rounded
  to the nearest binary32 value (ties to even), as Google's runtimes store a
  ``float`` field when it is set, so ``decode(encode(m)) == m`` holds; NaNs
  are kept as given (their 32 bits are taken when written, see
  :mod:`pbj.codec.float32`);
* ``bool`` takes ``True``/``False`` (the ints 0 and 1 become bools);
* ``string`` takes a ``str`` that can be encoded as UTF-8 (no lone surrogates);
  a field that is not UTF-8-validated (proto2, ``utf8_validation = NONE``) also
  takes the lone surrogates U+DC80..U+DCFF, which stand for the bytes of invalid
  UTF-8 (``surrogateescape``), so any bytes it was decoded from are kept;
* ``bytes`` takes ``bytes``, ``bytearray`` or ``memoryview``, stored as ``bytes``
  (so a later change to the buffer cannot change the message);
* an enum field takes a member of its enum or an int32 (a known number becomes
  the member; an unknown one stays an ``int``, as open enums keep it; a closed
  enum takes its members only);
* a message field takes an instance of exactly its class (``None`` for "not
  set"); an instance of the same message from another load of the schema is
  refused with a message that says so;
* a repeated field takes any iterable but ``str``, ``bytes``-like and mappings,
  stored as a ``tuple``; a map field a mapping, stored as a ``FrozenMap``;
* ``None`` is "not set" for a field with explicit presence, and an error for a
  field with implicit presence; a oneof takes ``None`` or a ``pbj.OneOf`` naming
  one of its members.

A wrong type raises ``TypeError``, a value out of range ``ValueError``; the
text names the class, the field (with the index, key or member) and the value.
"""

from __future__ import annotations

import enum
import math
import operator
import struct
from collections.abc import Mapping
from typing import Any, NoReturn

from pbj.scalars import ENUM, SCALARS
from pbj.schema.containers import FrozenMap, OneOf
from pbj.schema.records import FieldInfo, OneofInfo, is_message

__all__ = ["did_you_mean", "BadValue", "F32", "FLOAT_MAX", "FLOAT_MIN_NORMAL", "coerce_value", "coerce_field",
           "coerce_oneof", "construct_field", "construct_oneof", "problem", "none_problem", "an"]

#: The largest finite 32-bit float.
FLOAT_MAX = 3.4028234663852886e38
#: The smallest positive normal 32-bit float (2**-126).
FLOAT_MIN_NORMAL = 1.1754943508222875e-38
#: The binary32 packer: ``F32.unpack(F32.pack(x))[0]`` is ``x`` rounded to the nearest binary32 value.
F32 = struct.Struct("<f")
_NOT_SEQUENCES = (str, bytes, bytearray, memoryview, Mapping)


class BadValue(Exception):
    """A value a field does not accept: the exception class to raise, the reason, where.

    Attributes:
        error: ``TypeError`` or ``ValueError``.
        reason: the text, naming the value.
        where: the place inside the field (``"[2]"``, ``"['k']"``, ``".member"``), innermost last.
    """

    def __init__(self, error: type[Exception], reason: str, where: str = "") -> None:
        super().__init__(reason)
        self.error, self.reason, self.where = error, reason, where

    def inside(self, where: str) -> BadValue:
        """This problem, seen from one level further out (``where`` is prepended)."""
        self.where = where + self.where
        return self


def did_you_mean(name: str, candidates: Any) -> str:
    """``"; did you mean 'x'?"`` naming the candidate closest to ``name`` (``difflib``), or ``""``.

    Args:
        name: the name given (a field, member or type name).
        candidates: the names it could have been (any iterable of ``str``; others are skipped).
    """
    names = [c for c in candidates if isinstance(c, str) and c != name]
    import difflib  # on the error path only: not at import
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
    if not close:
        lowered = {c.lower().replace("_", ""): c for c in names}
        hit = lowered.get(name.lower().replace("_", ""))
        close = [hit] if hit else []
    return f"; did you mean {close[0]!r}?" if close else ""


def an(name: str) -> str:
    """``name`` with its indefinite article: ``"an Inner"``, ``"a Timestamp"``."""
    return ("an " if name[:1].lower() in "aeiou" else "a ") + name


def _show(value: Any) -> str:
    text = repr(value)
    if len(text) > 60 and type(value) is int:
        return f"int of {len(text.lstrip('-'))} digits"
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{type(value).__name__} {text}"


def _type_error(what: str, needs: str, value: Any) -> NoReturn:
    raise BadValue(TypeError, f"{what} field needs {needs}, got {_show(value)}")


def _check_escaped(value: str) -> None:
    """Check that the lone surrogates of a string that is not UTF-8-validated stand for bytes of
    invalid UTF-8 only, as decoding gives them: escapes spelling valid UTF-8 (``"\\udcc3\\udca9"``,
    the bytes of ``"é"``) would decode back as other text, so the value would not round-trip.

    Raises:
        BadValue: another lone surrogate, or escapes that spell valid UTF-8.
    """
    try:
        raw = value.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError as e:
        raise BadValue(ValueError, f"string cannot be encoded as UTF-8: {e.reason} ({_show(value)})") from None
    if raw.decode("utf-8", "surrogateescape") != value:
        raise BadValue(ValueError, f"string holds escaped bytes (U+DC80..U+DCFF) that spell valid UTF-8, "
                       f"which decode as other text: write the text itself ({_show(value)})")


def coerce_scalar(kind: str, value: Any, utf8: bool = True) -> Any:
    """The stored form of ``value`` for a field of scalar type ``kind``.

    ``utf8`` false (a ``string`` field that is not UTF-8-validated: proto2,
    ``utf8_validation = NONE``): a ``str`` is accepted when it encodes with
    ``surrogateescape`` (its lone surrogates U+DC80..U+DCFF stand for the bytes
    0x80..0xFF of invalid UTF-8, as decoding such a field gives them).

    Raises:
        BadValue: the value does not fit (the rules in the module docstring).
    """
    row = SCALARS[kind]
    if row.range is not None:
        if value.__class__ is not int:
            if isinstance(value, bool) or not hasattr(type(value), "__index__"):
                _type_error(kind, "an int", value)
            value = operator.index(value)
        lo, hi = row.range
        if not lo <= value <= hi:
            raise BadValue(ValueError, f"{value} is out of range for {kind} [{lo}, {hi}]")
        return value
    if row.is_float:
        if value.__class__ is not float:
            if isinstance(value, bool) or not isinstance(value, int | float):
                _type_error(kind, "a float", value)
            try:
                value = float(value)
            except OverflowError:
                raise BadValue(ValueError, f"{_show(value)} is out of range for {kind}") from None
        if kind == "float" and math.isfinite(value):
            if abs(value) > FLOAT_MAX:
                raise BadValue(ValueError, f"{value} is out of range for float")
            value = F32.unpack(F32.pack(value))[0]  # binary32 (a NaN is kept as it is: its bits matter)
        return value
    if kind == "bool":
        if value.__class__ is bool:
            return value
        if isinstance(value, int) and value in (0, 1):
            return bool(value)
        _type_error(kind, "a bool", value)
    if kind == "string":
        if not isinstance(value, str):
            _type_error(kind, "a str", value)
        if value.__class__ is not str:
            value = str.__str__(value)
        if not value.isascii():
            try:
                value.encode()
            except UnicodeEncodeError as e:
                if utf8:
                    raise BadValue(ValueError,
                                   f"string cannot be encoded as UTF-8: {e.reason} ({_show(value)})") from None
                _check_escaped(value)
        return value
    # bytes
    if value.__class__ is bytes:
        return value
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value)
    _type_error(kind, "bytes", value)


def coerce_enum(enum_cls: type[enum.IntEnum], value: Any) -> Any:
    """The stored form of ``value`` for a field of enum ``enum_cls``.

    A closed enum (proto2, editions ``enum_type = CLOSED``: "Enum Behavior" in
    the Language Guide) takes its members only; an open one keeps any int32.

    Raises:
        BadValue: not an int, outside the int32 range, or not a member of a closed enum.
    """
    if value.__class__ is enum_cls:
        return value
    if isinstance(value, bool) or not isinstance(value, int):
        _type_error(f"enum {enum_cls.__name__}", f"{an(enum_cls.__name__)} member or an int", value)
    lo, hi = ENUM.range  # type: ignore[misc]
    if not lo <= value <= hi:
        raise BadValue(ValueError, f"{value} is out of range for enum {enum_cls.__name__} [{lo}, {hi}]")
    try:
        return enum_cls(value)
    except ValueError:
        if getattr(enum_cls, "__pbj_closed__", False):
            raise BadValue(ValueError, f"{value} is not a value of closed enum {enum_cls.__name__} "
                           "(a closed enum holds its members only)") from None
        return int(value)


def coerce_message(cls: type, value: Any) -> Any:
    """``value`` itself when it is an instance of message class ``cls`` (its fields were checked when built).

    Raises:
        BadValue: another class; the text says so when it is the same message
            from another load of the same schema.
    """
    if value.__class__ is cls:
        return value
    name = cls.__name__
    other = type(value)
    if is_message(other) and other.__pbj_info__.full_name == cls.__pbj_info__.full_name:  # type: ignore[attr-defined]
        raise BadValue(TypeError, f"message field needs {an(name)} of this load of the schema, got the "
                                  f"{cls.__pbj_info__.full_name} of another load of the same schema; "  # type: ignore[attr-defined]
                                  "build it with the classes of one Namespace")
    raise BadValue(TypeError, f"message field needs {an(name)}, got {_show(value)}{_wkt_hint(cls, value)}")


#: For a well-known type, the Python value a user may give instead and the pbj.wkt function converting it.
_WKT_FROM = {"google.protobuf.Timestamp": ("datetime", "pbj.wkt.timestamp_from_datetime(value)"),
             "google.protobuf.Duration": ("timedelta", "pbj.wkt.duration_from_timedelta(value)")}


def _wkt_hint(cls: type, value: Any) -> str:
    """``"; convert it with pbj.wkt..."`` when ``value`` is the Python value of well-known type ``cls``."""
    full = getattr(getattr(cls, "__pbj_info__", None), "full_name", None)
    row = _WKT_FROM.get(full)  # type: ignore[arg-type]
    if row is None or type(value).__name__ != row[0] or type(value).__module__ != "datetime":
        return ""
    return f"; convert it with {row[1]}"


def coerce_value(f_type: Any, value: Any, utf8: bool = True) -> Any:
    """The stored form of one value (not ``None``) of type ``f_type`` (scalar name, enum or message class).

    ``utf8``: as for :func:`coerce_scalar` (the field's :attr:`FieldInfo.utf8`).

    Raises:
        BadValue: the value does not fit.
    """
    if isinstance(f_type, str):
        return coerce_scalar(f_type, value, utf8)
    if isinstance(f_type, type) and issubclass(f_type, enum.IntEnum):
        return coerce_enum(f_type, value)
    return coerce_message(f_type, value)


#: What a repeated field takes, as its errors say it.
_REPEATED_NEEDS = "an iterable of values such as a tuple, list, set or generator (not a str, bytes or mapping)"


def _coerce_repeated(f: FieldInfo, value: Any) -> tuple[Any, ...]:
    if isinstance(value, _NOT_SEQUENCES):
        _type_error("repeated", _REPEATED_NEEDS, value)
    try:
        items = tuple(value)
    except TypeError:
        _type_error("repeated", _REPEATED_NEEDS, value)
    out = list(items)
    for i, item in enumerate(items):
        try:
            out[i] = coerce_value(f.type, item, f.utf8)
        except BadValue as bad:
            raise bad.inside(f"[{i}]") from None
    return tuple(out)


def _coerce_map(f: FieldInfo, value: Any) -> FrozenMap[Any, Any]:
    if not isinstance(value, Mapping):
        try:
            value = dict(value)
        except (TypeError, ValueError):
            _type_error("map", "a dict (or a FrozenMap)", value)
    out = {}
    for k, v in value.items():
        try:
            out[coerce_scalar(f.map_key, k, f.utf8)] = coerce_value(f.map_value, v, f.utf8)  # type: ignore[arg-type]
        except BadValue as bad:
            raise bad.inside(f"[{k!r}]") from None
    return FrozenMap(out)


def _type_words(f: FieldInfo) -> str:
    t = f.type
    return t if isinstance(t, str) else getattr(t, "__name__", repr(t))


def none_problem(f: FieldInfo) -> str:
    """Why ``None`` is refused for field ``f`` (a field with implicit presence)."""
    return f"{_type_words(f)} field has implicit presence and cannot be None (leave it out for its default)"


def coerce_field(f: FieldInfo, value: Any) -> Any:
    """The stored form of ``value`` for field ``f`` (not a oneof member), ``None`` included.

    Raises:
        BadValue: the value does not fit.
    """
    if f.map_key is not None:
        return _coerce_map(f, value)
    if f.repeated:
        return _coerce_repeated(f, value)
    if value is None:
        if f.optional:
            return None
        raise BadValue(TypeError, none_problem(f))
    return coerce_value(f.type, value, f.utf8)


def coerce_oneof(o: OneofInfo, value: Any) -> Any:
    """The stored form of ``value`` for oneof ``o``: ``None`` or a ``OneOf`` of one of its members.

    Raises:
        BadValue: not a ``OneOf``, not a member's name, or a value the member does not accept.
    """
    if value is None:
        return None
    names = [m.name for m in o.members]
    if not isinstance(value, OneOf):
        _type_error("oneof", f"pbj.OneOf(member, value) with member one of {names}", value)
    which, item = value
    member = next((m for m in o.members if m.name == which), None)
    if member is None:
        import difflib  # on the error path only: not at import
        close = difflib.get_close_matches(str(which), names, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise BadValue(TypeError, f"{which!r} is not a member of oneof {o.name} (members: {names}){hint}")
    try:
        if item is None:
            raise BadValue(TypeError, f"a set member needs a value, got None (use None for the whole oneof "
                                      f"to leave {o.name} unset)")
        stored = coerce_value(member.type, item, member.utf8)
    except BadValue as bad:
        raise bad.inside(f".{which}") from None
    return value if stored is item else OneOf(which, stored)


def _raise(cls_name: str, attr: str, bad: BadValue) -> NoReturn:
    raise bad.error(f"{cls_name}.{attr}{bad.where}: {bad.reason}") from None


def construct_field(cls_name: str, f: FieldInfo, value: Any) -> Any:
    """:func:`coerce_field`, raising the ``TypeError``/``ValueError`` a constructor raises.

    Raises:
        TypeError: a value of the wrong type (``"Cls.field[2]: string field needs a str, got int 5"``).
        ValueError: a value out of range.
    """
    try:
        return coerce_field(f, value)
    except BadValue as bad:
        _raise(cls_name, f.name, bad)


def construct_oneof(cls_name: str, o: OneofInfo, value: Any) -> Any:
    """:func:`coerce_oneof`, raising the ``TypeError``/``ValueError`` a constructor raises."""
    try:
        return coerce_oneof(o, value)
    except BadValue as bad:
        _raise(cls_name, o.name, bad)


def problem(f_type: Any, value: Any, utf8: bool = True) -> str | None:
    """Why one value does not fit type ``f_type``, or ``None`` (for a message: its class only).

    Used by the encoder's error diagnosis, so that it says what the constructor says.
    """
    try:
        coerce_value(f_type, value, utf8)
    except BadValue as bad:
        return f"{bad.where}: {bad.reason}" if bad.where else bad.reason
    return None
