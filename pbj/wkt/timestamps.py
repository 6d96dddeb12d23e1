"""``Timestamp`` <-> ``datetime`` (aware, UTC), nanoseconds since the epoch, RFC 3339 text."""

from __future__ import annotations

import datetime
import time
from typing import Any as _Any

from pbj.protojson.text_forms import TIMESTAMP_MAX_SECONDS, TIMESTAMP_MIN_SECONDS, parse_timestamp, timestamp_text
from pbj.wkt._common import PKG, check, class_of, make, text_arg, whole_nanos

__all__ = ["timestamp_from_datetime", "timestamp_to_datetime", "timestamp_from_nanos", "timestamp_to_nanos",
           "timestamp_from_text", "timestamp_to_text", "timestamp_now"]

_NANOS = 1_000_000_000
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


def timestamp_from_datetime(dt: datetime.datetime, *, cls: type | None = None) -> _Any:
    """A ``Timestamp`` of the instant ``dt``, exact to the microsecond.

    Args:
        dt: a ``datetime``; a naive one is taken as UTC (as Google's ``FromDatetime`` does).
        cls: the ``google.protobuf.Timestamp`` class to build (default :class:`pbj.wellknown.Timestamp`).

    Raises:
        TypeError: ``dt`` is not a ``datetime``, or ``cls`` is not a Timestamp class.
        ValueError: the instant, in UTC, is outside 0001-01-01..9999-12-31 (an aware ``datetime``
            near either end can fall outside it once its offset is applied).
    """
    if not isinstance(dt, datetime.datetime):
        raise TypeError(f"expected a datetime, got {type(dt).__name__}")
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=datetime.UTC)
    delta = dt - _EPOCH
    seconds, nanos = delta.days * 86400 + delta.seconds, delta.microseconds * 1000
    _timestamp_range(seconds, nanos)
    return make(class_of(cls, PKG + "Timestamp"), seconds=seconds, nanos=nanos)


def timestamp_to_datetime(ts: _Any) -> datetime.datetime:
    """The ``Timestamp`` as a timezone-aware UTC ``datetime``; nanoseconds below a microsecond are dropped.

    For every nanosecond use :func:`timestamp_to_nanos` or :func:`timestamp_to_text`.

    Raises:
        TypeError: ``ts`` is not a ``google.protobuf.Timestamp``.
        ValueError: ``seconds`` is outside 0001-01-01..9999-12-31 or ``nanos`` outside 0..999,999,999.
    """
    a = check(ts, PKG + "Timestamp")
    seconds, nanos = getattr(ts, a["seconds"]), getattr(ts, a["nanos"])
    _timestamp_range(seconds, nanos)
    return _EPOCH + datetime.timedelta(seconds=seconds, microseconds=nanos // 1000)


def _timestamp_range(seconds: int, nanos: int) -> None:
    if not TIMESTAMP_MIN_SECONDS <= seconds <= TIMESTAMP_MAX_SECONDS:
        raise ValueError(f"Timestamp seconds {seconds} is outside 0001-01-01..9999-12-31")
    if not 0 <= nanos < _NANOS:
        raise ValueError(f"Timestamp nanos {nanos} is outside 0..999999999")


def timestamp_from_nanos(nanos: int, *, cls: type | None = None) -> _Any:
    """A ``Timestamp`` ``nanos`` nanoseconds after the Unix epoch (negative: before), exactly.

    Raises:
        TypeError: ``nanos`` is not an ``int`` (a ``float`` or ``bool`` is refused, not rounded).
        ValueError: the instant is outside 0001-01-01..9999-12-31.
    """
    seconds, rest = divmod(whole_nanos(nanos), _NANOS)
    _timestamp_range(seconds, rest)
    return make(class_of(cls, PKG + "Timestamp"), seconds=seconds, nanos=rest)


def timestamp_to_nanos(ts: _Any) -> int:
    """The ``Timestamp`` as nanoseconds since the Unix epoch (an ``int``: lossless)."""
    a = check(ts, PKG + "Timestamp")
    return getattr(ts, a["seconds"]) * _NANOS + getattr(ts, a["nanos"])


def timestamp_from_text(text: str, *, cls: type | None = None) -> _Any:
    """A ``Timestamp`` from RFC 3339 text (``"1972-01-01T10:00:20.021Z"``, any UTC offset, up to 9 digits).

    Raises:
        TypeError: ``text`` is not a ``str``.
        ValueError: (:class:`pbj.JSONError`) the text is not RFC 3339 or is out of range.
    """
    seconds, nanos = parse_timestamp(text_arg(text, "timestamp_from_text"))
    return make(class_of(cls, PKG + "Timestamp"), seconds=seconds, nanos=nanos)


def timestamp_to_text(ts: _Any) -> str:
    """The ``Timestamp`` as RFC 3339 text in UTC (``Z``, 0, 3, 6 or 9 fractional digits), as ProtoJSON writes it.

    Raises:
        ValueError: (:class:`pbj.EncodeError`) the Timestamp is out of range.
    """
    a = check(ts, PKG + "Timestamp")
    return timestamp_text(getattr(ts, a["seconds"]), getattr(ts, a["nanos"]))


def timestamp_now(*, cls: type | None = None) -> _Any:
    """A ``Timestamp`` of the current time (``time.time_ns()``)."""
    return timestamp_from_nanos(time.time_ns(), cls=cls)
