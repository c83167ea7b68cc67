"""Quote endpoints: a CSV or JSON response that gives one quote per row.

CSV: a header row, then one row per instrument; the columns are named as JSON keys
are (:func:`.vocabulary.field_of_key`): ``Symbol,Date,Time,Open,High,Low,Close,Volume``
(the price is ``Close`` or ``Last``), ``Ticker;Datum;Zeit;Letzter;...``; the
delimiter (``,``, ``;``, tab, ``|``) is sniffed; numbers are read with the comma
decimal when the delimiter is not a comma and the numbers say so. ``Date`` and
``Time`` make ``as_of``, in the zone of the symbol's exchange suffix (``SAP.DE``)
or UTC. JSON: every quote object of the document (:func:`.structured.walk_quotes`:
a list of objects, ``{"quotes": [...]}``, ``{"AAPL": {...}}``...).

Each quote's ``url`` is the endpoint's with ``#<symbol>``: one row per instrument
in the stores. A row with no symbol or no price is counted by its reason
(:attr:`QuoteExtraction.skipped`) and gives nothing.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
from typing import Any
from urllib.parse import quote as url_quote
from urllib.parse import urldefrag

from .evidence import AMOUNTS
from .markets import market_of_exchange, market_of_symbol
from .numbers import COMMA, DOT, NumberStyle, infer_style
from .result import QuoteExtraction
from .structured import walk_quotes
from .times import from_epoch, parse_as_of, zone_named
from .values import to_amount, to_count, to_currency, to_percent, to_symbol, to_text
from .vocabulary import field_of_key

MAX_ROWS = 100_000
_CSV_TYPES = ("text/csv", "application/csv", "text/comma-separated-values")
_JSON_TYPES = ("application/json", "text/json", "application/x-ndjson")


def endpoint_kind(content_type: str, body: bytes) -> str | None:
    """``"csv"``, ``"json"`` or None (a page) from the response's type and first bytes."""
    kind = content_type.split(";")[0].strip().lower()
    if kind in _CSV_TYPES:
        return "csv"
    if kind in _JSON_TYPES or kind.endswith("+json"):
        return "json"
    head = body[:2048].lstrip()
    if kind in ("", "text/plain", "application/octet-stream"):
        if head[:1] in (b"{", b"["):
            return "json"
        first = head.split(b"\n", 1)[0].decode("utf-8", "replace")
        columns = [c.strip() for c in first.replace(";", ",").replace("\t", ",").split(",")]
        fields = {field_of_key(c) for c in columns if c}
        if "symbol" in fields and ({"price", "close"} & fields):
            return "csv"
    return None


def _row_url(url: str, symbol: str) -> str:
    return f"{urldefrag(url)[0]}#{url_quote(symbol, safe='.-_^=:')}"


def quote_of_fields(
    fields: dict[str, Any],
    url: str,
    fetched: dt.datetime,
    style: NumberStyle | None,
    default_currency: str | None = None,
) -> dict[str, Any] | str:
    """One endpoint row's quote (its fields by name), or the reason it has none."""
    symbol, exchange = to_symbol(fields.get("symbol"))
    price = to_amount(fields.get("price", fields.get("close")), style, None)
    if symbol is None and price is None:
        return "no_quote"
    if price is None:
        return "no_price"
    if symbol is None:
        return "no_symbol"
    quote: dict[str, Any] = {"url": _row_url(url, symbol), "symbol": symbol, "price": price}
    for field in ("name", "exchange"):
        text = to_text(fields.get(field), 120)
        if text:
            quote[field] = text
    if exchange and "exchange" not in quote:
        quote["exchange"] = exchange
    for field in AMOUNTS:
        if field not in ("price", "close") and field in fields:
            value = to_amount(fields[field], style, None)
            if value is not None:
                quote[field] = value
    parsed: dict[str, Any] = {
        "change": to_amount(fields.get("change"), style, None, signed=True),
        "change_percent": to_percent(fields.get("change_percent"), style, None),
        "volume": to_count(fields.get("volume"), style, None),
    }
    quote.update({field: value for field, value in parsed.items() if value is not None})
    market = market_of_exchange(quote.get("exchange")) or market_of_symbol(symbol)
    currency = to_currency(fields.get("currency")) if fields.get("currency") else None
    source = "endpoint"
    if currency is None and market is not None:
        currency, source = market.currency, "exchange"
    if currency is None and default_currency:
        currency, source = default_currency, "profile"
    provenance = {name: "endpoint" for name in quote if name != "url"}
    if currency is not None:
        quote["currency"], provenance["currency"] = currency, source
    zone = zone_named(market.zone) if market else dt.UTC
    when = _when(fields, fetched, zone)
    quote["as_of"] = (when or fetched).isoformat(timespec="seconds")
    provenance["as_of"] = "endpoint" if when else "fetch"
    quote["provenance"] = provenance
    return quote


def _when(fields: dict[str, Any], fetched: dt.datetime, zone: Any) -> dt.datetime | None:
    value = fields.get("as_of")
    extra = fields.get("time_of_day")
    if isinstance(value, int | float) and not isinstance(value, bool):
        return from_epoch(value)
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    if text.isdigit() and len(text) == 8:  # 20250312
        text = f"{text[:4]}-{text[4:6]}-{text[6:]}"
    if isinstance(extra, str) and extra.strip():
        clock = extra.strip()
        if clock.isdigit() and len(clock) in (4, 6):  # 2200 / 220000
            clock = ":".join(clock[i : i + 2] for i in range(0, len(clock), 2))
        text = f"{text} {clock}"
    return parse_as_of(text, fetched, None, zone)


def _csv_fields(header: list[str]) -> list[str | None]:
    fields: list[str | None] = []
    dates = 0
    for name in header:
        field = field_of_key(name)
        if field == "as_of":
            dates += 1
            # "Date" then "Time": the second is the time of day
            lowered = name.strip().lower()
            if dates > 1 or lowered in ("time", "zeit", "heure", "hora", "ora", "tijd", "czas"):
                field = "time_of_day"
        fields.append(field)
    return fields


def read_csv(text: str, url: str, fetched: dt.datetime, currency: str | None) -> QuoteExtraction:
    result = QuoteExtraction()
    sample = text[:4096]
    try:
        dialect: Any = csv.Sniffer().sniff(sample, delimiters=",;\t|")
    except csv.Error:
        dialect = csv.excel
    rows = csv.reader(io.StringIO(text), dialect)
    header = next(rows, None)
    if not header:
        return result.reject("empty_endpoint")
    fields = _csv_fields(header)
    if "symbol" not in fields:
        return result.reject("bad_endpoint")
    style = DOT if dialect.delimiter == "," else (infer_style(sample) or COMMA)
    for count, row in enumerate(rows):
        if count >= MAX_ROWS or not any(cell.strip() for cell in row):
            continue
        named = {
            f: cell.strip() for f, cell in zip(fields, row, strict=False) if f and cell.strip()
        }
        decided = quote_of_fields(named, url, fetched, style, currency)
        if isinstance(decided, str):
            result.skipped[decided] += 1
        else:
            result.quotes.append(decided)
    if not result.quotes and not result.skipped:
        result.rejected = "empty_endpoint"
    return result


def read_json(text: str, url: str, fetched: dt.datetime, currency: str | None) -> QuoteExtraction:
    result = QuoteExtraction()
    try:
        data = json.loads(text)
    except ValueError:
        return result.reject("bad_endpoint")
    seen: set[str] = set()
    for fields in walk_quotes(data):
        decided = quote_of_fields(fields, url, fetched, DOT, currency)
        if isinstance(decided, str):
            result.skipped[decided] += 1
        elif decided["url"] not in seen:
            seen.add(decided["url"])
            result.quotes.append(decided)
    if not result.quotes and not result.skipped:
        result.rejected = "empty_endpoint"
    return result
