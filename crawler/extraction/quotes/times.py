"""The time a quote is for (``as_of``), from the ways quote pages write it.

``"As of Mar 12, 2025 4:00 PM EDT"``, ``"Stand: 12.03.2025 17:35 Uhr MEZ"``,
``"Mis à jour le 12/03/2025 à 17h35 CET"``, ``"2025年3月12日 15:00 JST"``,
``"16:00:00 ET"`` (today in that zone), ISO 8601 (``<time datetime>``), and
Unix times of structured data (seconds or milliseconds). Parsing is
``dateutil``'s, after month names of German, French, Spanish, Italian, Portuguese
and Dutch are put in English and the CJK date signs in dashes; the day comes
first unless the page is in US English.

A time with no zone is read in the zone the caller knows (the exchange's), else
it is not taken: the caller uses the fetch time, as the contract says for a page
that shows no time.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from dateutil import parser as date_parser

from .vocabulary import label_prefix

# Abbreviations quote pages print after a time (class: US, European, Asian and
# Australian exchanges; German pages write MEZ/MESZ). "CST" is the US one, as most
# pages that write it are American.
_FIXED: dict[str, int] = {
    "UTC": 0, "GMT": 0, "Z": 0, "WET": 0, "WEST": 1, "BST": 1, "CET": 1, "CEST": 2,
    "MEZ": 1, "MESZ": 2, "EET": 2, "EEST": 3, "MSK": 3, "EST": -5, "EDT": -4, "CST": -6,
    "CDT": -5, "MST": -7, "MDT": -6, "PST": -8, "PDT": -7, "JST": 9, "KST": 9, "HKT": 8,
    "SGT": 8, "AWST": 8, "AEST": 10, "AEDT": 11, "NZST": 12, "NZDT": 13, "BRT": -3, "ART": -3,
}
_HALF = {"IST": dt.timedelta(hours=5, minutes=30)}
_REGIONAL = {"ET": "America/New_York", "CT": "America/Chicago", "PT": "America/Los_Angeles",
             "MT": "America/Denver"}
_TZ_WORD = re.compile(
    r"(?<![A-Za-z])(" + "|".join(sorted([*_FIXED, *_HALF, *_REGIONAL], key=len, reverse=True))
    + r")(?![A-Za-z])"
)
_OFFSET = re.compile(r"(?:UTC|GMT)\s?([+-−])\s?(\d{1,2})(?::?(\d{2}))?")
_IANA = re.compile(r"\b([A-Z][a-z]+/[A-Z][A-Za-z_]+)\b")

_MONTHS: dict[str, str] = {}
for _english, _names in {
    "Jan": "januar janvier enero gennaio janeiro januari jän jan. janv. ene. gen.",
    "Feb": "februar février fevrier febrero febbraio fevereiro februari feb. févr. fevr.",
    "Mar": "märz maerz mars marzo março marco maart mär. mrz. mrz",
    "Apr": "april avril abril aprile avr. abr.",
    "May": "mai mayo maggio maio mei mag.",
    "Jun": "juni juin junio giugno junho giu.",
    "Jul": "juli juillet julio luglio julho juil. lug.",
    "Aug": "august août aout agosto augustus ago.",
    "Sep": "september septembre septiembre settembre setembro sept. set. sep.",
    "Oct": "oktober octobre octubre ottobre outubro okt. oct. ott. out.",
    "Nov": "november novembre noviembre novembro nov.",
    "Dec": "dezember décembre decembre diciembre dicembre dezembro december dez. déc. dic.",
}.items():
    for _name in _names.split():
        _MONTHS[_name] = _english
_MONTH_WORD = re.compile(
    r"(?<![^\W\d_])(" + "|".join(re.escape(m) for m in sorted(_MONTHS, key=len, reverse=True))
    + r")(?![^\W\d_])",
    re.IGNORECASE,
)
# words between a date and its time, and after it ("à", "um", "Uhr")
_FILLER = re.compile(
    r"(?<![^\W\d_])(?:à|a las|alle|às|as|om|um|uhr|le|el|il|de|del|do|op|den|am|on|at|h|"
    r"heure|heures|hrs?)(?![^\W\d_])",
    re.IGNORECASE,
)
_FRENCH_HOUR = re.compile(r"(\d{1,2})\s?h\s?(\d{2})")
_CJK_DATE = re.compile(r"(\d{4})\s?[年/]\s?(\d{1,2})\s?[月/]\s?(\d{1,2})\s?日?")
_CJK_TIME = re.compile(r"(\d{1,2})\s?時\s?(\d{1,2})\s?分?")
_YEAR_FIRST = re.compile(r"(?<!\d)\d{4}[-/.]\d{1,2}[-/.]\d{1,2}(?!\d)")
_HAS_TIME = re.compile(r"\d{1,2}:\d{2}")
_HAS_DATE = re.compile(r"\d{1,4}[./-]\d{1,2}|\d{4}|[A-Za-z]{3}")


def zone_named(name: str | None) -> dt.tzinfo | None:
    if not name:
        return None
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return None


def _zone_of(text: str) -> tuple[dt.tzinfo | None, str]:
    """The zone a text names, and the text without it."""
    match = _OFFSET.search(text)
    if match:
        sign = -1 if match.group(1) in "-−" else 1
        delta = dt.timedelta(hours=int(match.group(2)), minutes=int(match.group(3) or 0))
        return dt.timezone(sign * delta), text[: match.start()] + text[match.end() :]
    match = _IANA.search(text)
    if match and zone_named(match.group(1)) is not None:
        return zone_named(match.group(1)), text.replace(match.group(1), " ")
    match = _TZ_WORD.search(text)
    if match:
        word = match.group(1)
        zone: dt.tzinfo | None
        if word in _FIXED:
            zone = dt.timezone(dt.timedelta(hours=_FIXED[word]))
        elif word in _HALF:
            zone = dt.timezone(_HALF[word])
        else:
            zone = zone_named(_REGIONAL[word])
        return zone, text[: match.start()] + " " + text[match.end() :]
    return None, text


def _plain(text: str) -> str:
    text = _CJK_DATE.sub(r"\1-\2-\3 ", text)
    text = _CJK_TIME.sub(r"\1:\2", text)
    text = _FRENCH_HOUR.sub(r"\1:\2", text)
    text = _MONTH_WORD.sub(lambda m: _MONTHS[m.group(1).lower()] if m.group(1).lower() in
                           _MONTHS else m.group(1), text)
    return _FILLER.sub(" ", text)


def parse_as_of(
    text: str | None,
    fetched: dt.datetime,
    language: str | None = None,
    zone: dt.tzinfo | None = None,
) -> dt.datetime | None:
    """The time ``text`` says, aware, or None (no date or time in it, or no zone known).

    ``fetched``: when the page was fetched (aware): the day of a time written alone,
    and the bound of what is plausible (a quote time more than a day ahead of it is
    refused). ``zone``: the zone of a time written without one (the exchange's).
    """
    if not text or not any(ch.isdigit() for ch in text) or len(text) > 200:
        return None
    text = text.strip()
    field, taken = label_prefix(text)
    if field == "as_of":
        text = text[taken:]
    iso = _iso(text)
    if iso is not None:
        return iso if iso.tzinfo is not None else _in_zone(iso, zone)
    named, rest = _zone_of(text)
    rest = _plain(rest)
    if not _HAS_TIME.search(rest) and not _HAS_DATE.search(rest):
        return None
    local_zone = named or zone
    if local_zone is None:
        return None
    today = fetched.astimezone(local_zone)
    us = (language or "").lower().replace("_", "-") in ("en-us", "en")
    year_first = _YEAR_FIRST.search(rest) is not None  # 2025-03-12, 2025/3/12
    order = {"dayfirst": not (us or year_first), "yearfirst": year_first}
    try:
        first = date_parser.parse(rest, fuzzy=True, default=_day(today, 0), **order)
        second = date_parser.parse(rest, fuzzy=True, default=_day(today, 1), **order)
    except (ValueError, OverflowError, TypeError):
        return None
    when = first.replace(tzinfo=None)
    if first.date() != second.date():  # a time alone: today where the quote is
        when = dt.datetime.combine(today.date(), when.time())
        if when.replace(tzinfo=local_zone) > fetched + dt.timedelta(hours=1):
            when -= dt.timedelta(days=1)
    elif not _HAS_TIME.search(rest):
        when = dt.datetime.combine(when.date(), dt.time())  # a date alone: its start
    aware = when.replace(tzinfo=local_zone)
    if aware > fetched + dt.timedelta(days=1) or aware.year < 1990:
        return None
    return aware


def _day(today: dt.datetime, shift: int) -> dt.datetime:
    day = today.replace(tzinfo=None, hour=0, minute=0, second=0, microsecond=0)
    return day + dt.timedelta(days=shift)


_ISO = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$")


def _iso(text: str) -> dt.datetime | None:
    if not _ISO.match(text):
        return None
    try:
        return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def _in_zone(when: dt.datetime, zone: dt.tzinfo | None) -> dt.datetime | None:
    return None if zone is None else when.replace(tzinfo=zone)


def from_epoch(value: Any) -> dt.datetime | None:
    """A Unix time of structured data: seconds, or milliseconds when it is that large."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    seconds = value / 1000 if value > 10**11 else value
    if not 631_152_000 <= seconds <= 4_102_444_800:  # 1990 .. 2100
        return None
    return dt.datetime.fromtimestamp(seconds, dt.UTC)
