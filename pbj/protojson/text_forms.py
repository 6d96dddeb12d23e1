"""The text forms of ``Timestamp``, ``Duration`` and ``FieldMask`` (protobuf.dev "ProtoJSON Format").

Pure functions on plain values, shared by the JSON converters and by
:mod:`pbj.wkt`:

* a ``Timestamp`` is RFC 3339 text in UTC with ``Z``, 0, 3, 6 or 9 fractional
  digits (any UTC offset is read), between 0001-01-01T00:00:00Z and
  9999-12-31T23:59:59.999999999Z;
* a ``Duration`` is seconds with an ``s`` suffix (``"-1.5s"``), 0, 3, 6 or 9
  fractional digits, within about +-10,000 years;
* a ``FieldMask`` is its paths in lowerCamelCase joined by commas.

Writers raise :class:`pbj.EncodeError` and readers :class:`JSONError`, both
``ValueError`` subclasses, with a path relative to the value (empty here).
"""

from __future__ import annotations

import datetime
import re

from pbj.errors import EncodeError
from pbj.protojson.common import JSONError

__all__ = [
    "TIMESTAMP_MIN_SECONDS", "TIMESTAMP_MAX_SECONDS", "DURATION_MAX_SECONDS",
    "timestamp_text", "parse_timestamp", "duration_text", "parse_duration", "camel_path", "snake_path",
]

#: Timestamp range of the spec: 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999999999Z.
TIMESTAMP_MIN_SECONDS = -62_135_596_800
TIMESTAMP_MAX_SECONDS = 253_402_300_799
#: Duration range of the spec: about +-10,000 years.
DURATION_MAX_SECONDS = 315_576_000_000

_TIMESTAMP_RE = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]{1,9}))?(Z|[+-][0-9]{2}:[0-9]{2})")
_DURATION_RE = re.compile(r"(-)?([0-9]+)(?:\.([0-9]{1,9}))?s")
_EPOCH_ORDINAL = datetime.date(1970, 1, 1).toordinal()


def _fraction(n: int) -> str:
    """Nanoseconds as 0, 3, 6 or 9 fractional digits, as the spec prints them."""
    if n == 0:
        return ""
    if n % 1_000_000 == 0:
        return f".{n // 1_000_000:03d}"
    if n % 1000 == 0:
        return f".{n // 1000:06d}"
    return f".{n:09d}"


def timestamp_text(seconds: int, nanos: int, *, path: list | None = None) -> str:
    """A Timestamp (seconds since the Unix epoch, nanoseconds 0..999,999,999) as RFC 3339 text.

    Args:
        path: the attribute names of ``seconds`` and ``nanos`` for an error's path.

    Raises:
        EncodeError: ``seconds`` is outside 0001-01-01..9999-12-31 or ``nanos`` outside 0..999999999.
    """
    sec, nan = path or (None, None)
    if not TIMESTAMP_MIN_SECONDS <= seconds <= TIMESTAMP_MAX_SECONDS:
        raise EncodeError(f"Timestamp seconds {seconds} is outside 0001-01-01..9999-12-31",
                          path=[sec] if sec else None)
    if not 0 <= nanos <= 999_999_999:
        raise EncodeError(f"Timestamp nanos {nanos} is outside 0..999999999", path=[nan] if nan else None)
    days, rest = divmod(seconds, 86400)
    date = datetime.date.fromordinal(_EPOCH_ORDINAL + days)
    hh, rest = divmod(rest, 3600)
    mm, ss = divmod(rest, 60)
    return f"{date.year:04d}-{date.month:02d}-{date.day:02d}T{hh:02d}:{mm:02d}:{ss:02d}{_fraction(nanos)}Z"


def parse_timestamp(text: str) -> tuple[int, int]:
    """RFC 3339 text (any UTC offset, up to 9 fractional digits) as ``(seconds, nanos)`` since the epoch.

    Raises:
        JSONError: the text is not RFC 3339, names no such date or time of day,
            or lies outside 0001-01-01T00:00:00Z..9999-12-31T23:59:59Z.
    """
    m = _TIMESTAMP_RE.fullmatch(text)
    if m is None:
        raise JSONError(f"invalid Timestamp {text!r} (expected RFC 3339 like '1972-01-01T10:00:20.021Z')")
    y, mo, d, hh, mi, ss = (int(m.group(i)) for i in range(1, 7))
    try:
        ordinal = datetime.date(y, mo, d).toordinal()
    except ValueError:
        raise JSONError(f"invalid Timestamp {text!r}: no such date") from None
    if hh > 23 or mi > 59 or ss > 59:
        raise JSONError(f"invalid Timestamp {text!r}: no such time of day")
    seconds = (ordinal - _EPOCH_ORDINAL) * 86400 + hh * 3600 + mi * 60 + ss
    zone = m.group(8)
    if zone != "Z":
        oh, om = int(zone[1:3]), int(zone[4:6])
        if oh > 23 or om > 59:
            raise JSONError(f"invalid Timestamp {text!r}: bad UTC offset")
        offset = oh * 3600 + om * 60
        seconds -= offset if zone[0] == "+" else -offset
    if not TIMESTAMP_MIN_SECONDS <= seconds <= TIMESTAMP_MAX_SECONDS:
        raise JSONError(f"Timestamp {text!r} is outside 0001-01-01T00:00:00Z..9999-12-31T23:59:59Z")
    frac = m.group(7)
    return seconds, int(frac.ljust(9, "0")) if frac else 0


def duration_text(seconds: int, nanos: int, *, path: list | None = None) -> str:
    """A Duration as ProtoJSON text (``"-1.5s"``).

    Args:
        path: the attribute names of ``seconds`` and ``nanos`` for an error's path.

    Raises:
        EncodeError: ``seconds`` is outside +-315,576,000,000, or ``nanos`` is
            outside +-999,999,999 or of another sign than ``seconds``.
    """
    sec, nan = path or (None, None)
    if not -DURATION_MAX_SECONDS <= seconds <= DURATION_MAX_SECONDS:
        raise EncodeError(f"Duration seconds {seconds} is outside +-{DURATION_MAX_SECONDS}",
                          path=[sec] if sec else None)
    if not -999_999_999 <= nanos <= 999_999_999 or (seconds > 0 and nanos < 0) or (seconds < 0 and nanos > 0):
        raise EncodeError(f"Duration nanos {nanos} is out of range or of another sign than seconds {seconds}",
                          path=[nan] if nan else None)
    sign = "-" if seconds < 0 or nanos < 0 else ""
    return f"{sign}{abs(seconds)}{_fraction(abs(nanos))}s"


def parse_duration(text: str) -> tuple[int, int]:
    """ProtoJSON Duration text (``"-1.5s"``) as ``(seconds, nanos)``, both of the text's sign.

    Raises:
        JSONError: the text is not seconds with an ``s`` suffix, or is outside +-315,576,000,000 s.
    """
    m = _DURATION_RE.fullmatch(text)
    if m is None:
        raise JSONError(f"invalid Duration {text!r} (expected seconds with an 's' suffix, like '-1.5s')")
    seconds = int(m.group(2))
    nanos = int(m.group(3).ljust(9, "0")) if m.group(3) else 0
    if seconds > DURATION_MAX_SECONDS:
        raise JSONError(f"Duration {text!r} is outside +-{DURATION_MAX_SECONDS}s")
    if m.group(1):
        seconds, nanos = -seconds, -nanos
    return seconds, nanos


def camel_path(path: str) -> str:
    """A FieldMask path (``"user.display_name"``) in its JSON form (``"user.displayName"``).

    Raises:
        EncodeError: the path has no JSON form (an upper-case letter, ``__``,
            ``_`` before a non-letter or at the end).
    """
    out = []
    upper = False
    for ch in path:
        if ch.isupper():
            raise EncodeError(f"FieldMask path {path!r} has an upper-case letter; it has no JSON form")
        if ch == "_":
            if upper:
                raise EncodeError(f"FieldMask path {path!r} has '__'; it has no JSON form")
            upper = True
            continue
        if upper:
            if not ch.islower():
                raise EncodeError(f"FieldMask path {path!r} has '_' before {ch!r}; it has no JSON form")
            ch = ch.upper()
            upper = False
        out.append(ch)
    if upper:
        raise EncodeError(f"FieldMask path {path!r} ends with '_'; it has no JSON form")
    return "".join(out)


def snake_path(path: str) -> str:
    """A FieldMask path in JSON form (``"user.displayName"``) as the field path (``"user.display_name"``).

    Raises:
        JSONError: the path has a ``_`` (JSON paths are lowerCamelCase).
    """
    if "_" in path:
        raise JSONError(f"FieldMask path {path!r} must be lowerCamelCase (no '_')")
    return "".join("_" + ch.lower() if ch.isupper() else ch for ch in path)
