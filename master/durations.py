"""Durations and points in time given on the master's command line (``6h``, ``2d``, ISO 8601)."""

from __future__ import annotations

import datetime as dt
import re

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$", re.IGNORECASE)


def parse_duration(text: str) -> dt.timedelta:
    """``90s``, ``30m``, ``6h``, ``2d``, ``1w`` (a number and one unit); raises ValueError."""
    match = _DURATION.match(text)
    if not match:
        raise ValueError(f"{text!r} is not a duration such as 30m, 6h or 2d")
    return dt.timedelta(seconds=float(match.group(1)) * _UNITS[match.group(2).lower()])


def parse_since(text: str, now: dt.datetime | None = None) -> dt.datetime:
    """A point in time: ISO 8601 (UTC unless it says), or a duration back from ``now``."""
    now = now or dt.datetime.now(dt.UTC)
    try:
        return now - parse_duration(text)
    except ValueError:
        pass
    try:
        when = dt.datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(
            f"{text!r} is neither an ISO 8601 time (2026-01-31T12:00) nor a duration (6h)"
        ) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return when
