"""``Duration`` <-> ``timedelta``, nanoseconds, ProtoJSON text (``"-1.5s"``)."""

from __future__ import annotations

import datetime
from typing import Any as _Any

from pbj.protojson.text_forms import DURATION_MAX_SECONDS, duration_text, parse_duration
from pbj.wkt._common import PKG, check, class_of, make, text_arg, whole_nanos

__all__ = ["duration_from_timedelta", "duration_to_timedelta", "duration_from_nanos", "duration_to_nanos",
           "duration_from_text", "duration_to_text"]

_NANOS = 1_000_000_000


def _duration_parts(total: int) -> tuple[int, int]:
    """Nanoseconds as ``(seconds, nanos)`` of the same sign, both toward zero."""
    seconds, nanos = divmod(abs(total), _NANOS)
    if total < 0:
        seconds, nanos = -seconds, -nanos
    if not -DURATION_MAX_SECONDS <= seconds <= DURATION_MAX_SECONDS:
        raise ValueError(f"Duration of {seconds} s is outside +-{DURATION_MAX_SECONDS} s")
    return seconds, nanos


def duration_from_timedelta(td: datetime.timedelta, *, cls: type | None = None) -> _Any:
    """A ``Duration`` of ``td``, exact (a ``timedelta`` holds microseconds).

    Raises:
        TypeError: ``td`` is not a ``timedelta``.
        ValueError: ``td`` is longer than +-315,576,000,000 s (about 10,000 years).
    """
    if not isinstance(td, datetime.timedelta):
        raise TypeError(f"expected a timedelta, got {type(td).__name__}")
    total = (td.days * 86400 + td.seconds) * _NANOS + td.microseconds * 1000
    seconds, nanos = _duration_parts(total)
    return make(class_of(cls, PKG + "Duration"), seconds=seconds, nanos=nanos)


def duration_to_timedelta(d: _Any) -> datetime.timedelta:
    """The ``Duration`` as a ``timedelta``; nanoseconds below a microsecond are dropped (toward zero).

    Raises:
        TypeError: ``d`` is not a ``google.protobuf.Duration``.
    """
    a = check(d, PKG + "Duration")
    nanos = getattr(d, a["nanos"])
    micros = abs(nanos) // 1000 * (-1 if nanos < 0 else 1)
    return datetime.timedelta(seconds=getattr(d, a["seconds"]), microseconds=micros)


def duration_from_nanos(nanos: int, *, cls: type | None = None) -> _Any:
    """A ``Duration`` of ``nanos`` nanoseconds (``seconds`` and ``nanos`` of the same sign).

    Raises:
        TypeError: ``nanos`` is not an ``int`` (a ``float`` or ``bool`` is refused, not rounded).
        ValueError: longer than +-315,576,000,000 s.
    """
    seconds, rest = _duration_parts(whole_nanos(nanos))
    return make(class_of(cls, PKG + "Duration"), seconds=seconds, nanos=rest)


def duration_to_nanos(d: _Any) -> int:
    """The ``Duration`` in nanoseconds (an ``int``: lossless)."""
    a = check(d, PKG + "Duration")
    return getattr(d, a["seconds"]) * _NANOS + getattr(d, a["nanos"])


def duration_from_text(text: str, *, cls: type | None = None) -> _Any:
    """A ``Duration`` from its ProtoJSON text (``"-1.5s"``, up to 9 fractional digits).

    Raises:
        TypeError: ``text`` is not a ``str``.
        ValueError: (:class:`pbj.JSONError`) the text is not seconds with an ``s`` suffix, or out of range.
    """
    seconds, nanos = parse_duration(text_arg(text, "duration_from_text"))
    return make(class_of(cls, PKG + "Duration"), seconds=seconds, nanos=nanos)


def duration_to_text(d: _Any) -> str:
    """The ``Duration`` as ProtoJSON text (``"-1.500s"``: 0, 3, 6 or 9 fractional digits).

    Raises:
        ValueError: (:class:`pbj.EncodeError`) out of range, or ``nanos`` of another sign than ``seconds``.
    """
    a = check(d, PKG + "Duration")
    return duration_text(getattr(d, a["seconds"]), getattr(d, a["nanos"]))
