"""Quotes from market tables: one quote per row of a table of instruments.

The class of pages served: a page that lists many instruments in a table, one a
row, under column headers that say what each column is (an index's members, a
market overview, a watch list, the "peers" of a quote page): ``Symbol | Name |
Last | Change | % Change | Volume``, ``Kürzel | Name | Kurs | Veränd. | Veränd. %``,
``Mnémo | Libellé | Cours | Var. %``, ``Código | Valor | Último | Dif. %``,
``コード | 銘柄名 | 現在値 | 前日比``... Three layouts: a ``<table>`` with a
``<thead>``, a ``<table>`` whose first row is its headers, and a grid of
elements (``<div>`` rows of cells, ARIA ``role="row"``) whose first row is its
headers.

Precision before recall:

* a column is read only when its header says what it is (:func:`.vocabulary.field_of_label`,
  and :data:`.grids._HEADERS` for the words tables use and quote pages do not);
* a table is a market table only when its headers name a symbol, a price (``Last``,
  ``Price``, ``Kurs``; ``Close`` when there is no last price) and at least one other
  field of a quote, and at least two rows give two different symbols: a table of
  one instrument's prices by date (``Date | Open | High | Low | Close | Volume``) or a
  financial statement (``Revenue | 2023 | 2024``) gives nothing;
* a row gives a quote only when its symbol cell holds a symbol and its price cell
  exactly one amount above zero (``187.44``, ``$187.44``, ``1.234,56 €``); a cell of
  two amounts, a dash, a symbol shown twice with two prices: none (counted in
  :attr:`.result.QuoteExtraction.skipped` by reason).

Each row's ``url``: the address its symbol (or name) cell links to, absolute and
without fragment, as a worker fetches it: the row's quote joins the quote page's
in the stores. A row that links nowhere: the table page's URL with ``#<symbol>``
(as an endpoint's rows). ``as_of``: the row's own time column, else the time the
page states (``As of 4:00 PM EDT``, ``Stand: 12.03.2025 17:35``, a ``<time
datetime>`` in or beside the table), else the fetch time (provenance ``fetch``).
The currency: the price cell's sign or code, a currency column, a code in the
price's header (``Last (EUR)``), the exchange (a column, a symbol's suffix), the
page's language and country, the profile's. The fields a row gives have the
provenance ``table``.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any
from urllib.parse import urldefrag, urljoin, urlsplit

from w3lib.url import safe_url_string

from crawler.extraction.normalize.currency import DOLLAR_CURRENCIES, currency_from_text
from crawler.extraction.weigh import COUNTRY_CURRENCIES, LANGUAGE_CURRENCIES

from .endpoints import _row_url
from .grids import MIN_ROWS, Grid, find_grids, find_tables, header_field
from .markets import market_of_exchange, market_of_symbol
from .numbers import NumberStyle, find_numbers, infer_style, style_for_language
from .page import _COUNTRY_ZONES, _country, page_language
from .pairs import SKIP, words_text
from .times import parse_as_of, zone_named
from .values import is_value_text, to_amount, to_count, to_currency, to_percent, to_symbol
from .vocabulary import label_prefix

MAX_ROWS = 5000
SOURCE = "table"
# fields a market table's row may give, and how each is read
_AMOUNTS = ("previous_close", "open", "day_low", "day_high", "market_cap")
_PENCE = re.compile(r"GBX|GBp|(?<=\d)p\b")
_PENNY = re.compile(r"(?<=\d)p\b|\bGBp\b")


@dataclass
class TableQuotes:
    """The quotes of a page's market tables: ``tables`` is how many the page has (the
    page is a market page when it is one or more), ``skipped`` the rows that gave none,
    by reason."""

    quotes: list[dict[str, Any]] = field(default_factory=list)
    tables: int = 0
    skipped: Counter[str] = field(default_factory=Counter)


def _page_time(
    root: Any, grid: Grid, fetched: dt.datetime, language: str | None, zone: Any
) -> dt.datetime | None:
    """The time the page states for its table: a ``<time>`` in or beside it, else the
    first time label of the page (``As of ...``, ``Stand: ...``)."""
    box = grid.element
    for _ in range(3):  # the table, its box, the section around it
        box = box.getparent() if box.getparent() is not None else box
    for element in box.iter("time"):
        when = parse_as_of(element.get("datetime") or words_text(element), fetched, language,
                           zone)
        if when is not None:
            return when
    for element in root.iter():
        if not isinstance(element.tag, str) or element.tag in SKIP:
            continue
        text = element.text or ""
        if not text.strip():
            continue
        text = words_text(element)
        if len(text) > 120:
            continue
        named, width = label_prefix(text)
        if named == "as_of" and width < len(text):
            when = parse_as_of(text[width:], fetched, language, zone)
            if when is not None:
                return when
    return None


def _amount(text: str, style: NumberStyle | None, language: str | None) -> Decimal | None:
    """The one amount of a price cell, above zero; None when it shows none or two."""
    if len(text) > 60:
        return None
    numbers = find_numbers(text, style, language)
    if not numbers or not is_value_text(text, numbers):
        return None
    amounts = [n for n in numbers if not n.percent]
    if len(amounts) != 1 or amounts[0].value <= 0:
        return None
    return amounts[0].value


def _link(cell: Any, base: str) -> str | None:
    for anchor in cell.iter("a"):
        href = (anchor.get("href") or "").strip()
        if not href or href.startswith(("#", "javascript:", "mailto:")):
            continue
        absolute = urldefrag(safe_url_string(urljoin(base, href)))[0]
        if urlsplit(absolute).scheme in ("http", "https") and absolute != urldefrag(base)[0]:
            return absolute
    return None


@dataclass
class _Context:
    url: str
    fetched: dt.datetime
    style: NumberStyle | None
    language: str | None
    default_currency: str | None
    page_time: dt.datetime | None


def _row_quote(grid: Grid, cells: list[Any], ctx: _Context) -> dict[str, Any] | str:
    """One row's quote, or the reason it gives none."""
    texts: dict[str, list[str]] = {}
    elements: dict[str, Any] = {}
    hint = None
    for column, (named, cell) in enumerate(zip(grid.columns, cells, strict=True)):
        if named is None:
            continue
        texts.setdefault(named, []).append(words_text(cell))
        elements.setdefault(named, cell)
        if named in ("price", "close") and grid.hints[column]:
            hint = grid.hints[column]
    price_field = "price" if "price" in texts else "close"
    price_text = texts[price_field][0]
    pence = _PENCE.search(price_text) is not None
    if pence:  # "245.5p", "GBX 245.5": amounts in pence, the "p" no part of them
        texts = {name: [_PENNY.sub("", t) for t in values] for name, values in texts.items()}
    prices = {_amount(text, ctx.style, ctx.language) for text in texts[price_field]}
    symbol, exchange = to_symbol(texts["symbol"][0])
    if symbol is None:
        return "no_symbol"
    if prices == {None} or not prices:
        return "no_price"
    if len(prices) != 1 or None in prices:
        return "conflicting_prices"  # two price columns that disagree
    price = prices.pop()
    assert price is not None
    single = {name: values[0] for name, values in texts.items() if len(values) == 1}
    link = _link(elements["symbol"], ctx.url) or (
        _link(elements["name"], ctx.url) if "name" in elements else None
    )
    quote: dict[str, Any] = {"url": link or _row_url(ctx.url, symbol), "symbol": symbol}
    name = single.get("name")
    if name and name != symbol and len(name) <= 120:
        quote["name"] = name
    exchange = single.get("exchange") or exchange
    if exchange:
        quote["exchange"] = exchange
    quote["price"] = price / 100 if pence else price
    change_text = single.get("change")
    if change_text is not None:
        change = to_amount(change_text, ctx.style, ctx.language, signed=True)
        if change is not None:
            quote["change"] = change / 100 if pence else change
        elif "change_percent" not in single:  # "Var." showing "+1.2 %"
            single["change_percent"] = change_text
    if "change_percent" in single:
        percent = to_percent(single["change_percent"], ctx.style, ctx.language)
        if percent is not None and percent >= -100:
            quote["change_percent"] = percent
    if "volume" in single:
        volume = to_count(single["volume"], ctx.style, ctx.language)
        if volume is not None and volume >= 0:
            quote["volume"] = volume
    for named in _AMOUNTS:
        if named in single:
            value = to_amount(single[named], ctx.style, ctx.language)
            if value is not None and value > 0:
                quote[named] = value / 100 if pence and named != "market_cap" else value
    provenance = {name: SOURCE for name in quote if name != "url"}
    currency, source = _currency(price_text, single, hint, exchange, symbol, ctx)
    if pence:
        currency, source = "GBP", SOURCE
    if currency is not None:
        quote["currency"], provenance["currency"] = currency, source
    zone = _zone(exchange, symbol, ctx.language)
    when = parse_as_of(single["as_of"], ctx.fetched, ctx.language, zone) \
        if "as_of" in single else None
    if when is not None:
        provenance["as_of"] = SOURCE
    elif ctx.page_time is not None:
        when, provenance["as_of"] = ctx.page_time, "visible"
    else:
        when, provenance["as_of"] = ctx.fetched, "fetch"
    quote["as_of"] = when.isoformat(timespec="seconds")
    quote["provenance"] = provenance
    return quote


def _currency(
    price_text: str, single: dict[str, str], hint: str | None, exchange: str | None,
    symbol: str, ctx: _Context,
) -> tuple[str | None, str]:
    market = market_of_exchange(exchange) or market_of_symbol(symbol)
    language, country = _country(ctx.language)
    local = market.currency if market else COUNTRY_CURRENCIES.get(country)
    code = currency_from_text(price_text, local)
    if code is None and "$" in price_text:
        code = local if local in DOLLAR_CURRENCIES else "USD"
    if code is not None:
        return code, SOURCE
    column = to_currency(single.get("currency"))
    if column is not None:
        return column, SOURCE
    if hint:
        return hint, SOURCE
    if market is not None:
        return market.currency, "exchange"
    by_language = COUNTRY_CURRENCIES.get(country) or LANGUAGE_CURRENCIES.get(language)
    if by_language:
        return by_language, "language"
    if ctx.default_currency:
        return ctx.default_currency, "profile"
    return None, ""


def _zone(exchange: str | None, symbol: str, language: str | None) -> Any:
    market = market_of_exchange(exchange) or market_of_symbol(symbol)
    if market is not None:
        return zone_named(market.zone)
    return zone_named(_COUNTRY_ZONES.get(_country(language)[1], ""))


def read_market_tables(
    root: Any,
    url: str,
    fetched: dt.datetime,
    default_currency: str | None = None,
) -> TableQuotes:
    """The quotes of the market tables of a page (``root``: its parsed tree;
    ``default_currency``: the site profile's)."""
    result = TableQuotes()
    language = page_language(root)
    grids = list(find_tables(root))
    taken = {g.element for g in grids}
    for grid in grids:  # a grid inside a table's cell is that table's
        taken.update(grid.element.iter())
    grids.extend(find_grids(root, taken))
    taken_urls: set[str] = set()
    for grid in grids:
        rows = grid.rows[:MAX_ROWS]
        if len(rows) < MIN_ROWS:
            continue
        symbols = _symbols(grid, rows)
        if len(symbols) < MIN_ROWS:
            continue  # one instrument's rows (its prices by date): not a market table
        result.tables += 1
        style = style_for_language(language) or infer_style(words_text(grid.element)[:20000])
        zone = _zone(None, "", language)
        ctx = _Context(url, fetched, style, language, default_currency,
                       _page_time(root, grid, fetched, language, zone))
        decided = [_row_quote(grid, cells, ctx) for cells in rows]
        quotes = [q for q in decided if isinstance(q, dict)]
        prices: dict[str, set[Decimal]] = {}
        for quote in quotes:
            prices.setdefault(quote["url"], set()).add(quote["price"])
        for quote in quotes:
            if len(prices[quote["url"]]) > 1:
                result.skipped["conflicting_prices"] += 1  # one symbol, two prices
            elif quote["url"] not in taken_urls:  # a row shown twice (or in two tables)
                taken_urls.add(quote["url"])
                result.quotes.append(quote)
        for reason in (q for q in decided if isinstance(q, str)):
            result.skipped[reason] += 1
    return result


def _symbols(grid: Grid, rows: list[list[Any]]) -> set[str]:
    column = grid.columns.index("symbol")
    return {words_text(cells[column]).upper() for cells in rows if words_text(cells[column])}


__all__ = ["TableQuotes", "header_field", "read_market_tables"]
