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
  and :data:`_HEADERS` for the words tables use and quote pages do not);
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
import functools
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any
from urllib.parse import urldefrag, urljoin, urlsplit

from w3lib.url import safe_url_string

from crawler.extraction.normalize.currency import DOLLAR_CURRENCIES, currency_from_text
from crawler.extraction.weigh import COUNTRY_CURRENCIES, LANGUAGE_CURRENCIES

from .endpoints import _row_url
from .markets import market_of_exchange, market_of_symbol
from .numbers import NumberStyle, find_numbers, infer_style, style_for_language
from .page import _COUNTRY_ZONES, _country, page_language
from .pairs import SKIP, words_text
from .times import parse_as_of, zone_named
from .values import is_value_text, to_amount, to_count, to_currency, to_percent, to_symbol
from .vocabulary import field_of_label, label_key, label_prefix

MIN_ROWS = 2
MAX_ROWS = 5000
MAX_COLUMNS = 40
SOURCE = "table"
# column headers of market tables the quote pages' label vocabulary has no need of
# (the name of an instrument, its "% change" as tables abbreviate it); compared as
# :func:`.vocabulary.label_key` writes labels
_HEADERS = {
    label_key(text): name
    for name, texts in {
        "name": ("instrument name", "security", "stock", "share", "company", "bezeichnung",
                 "wertpapier", "titel", "aktie", "nom", "libelle", "valeur", "societe",
                 "nombre", "valor", "titulo", "nome", "titolo", "naam", "fonds", "namn",
                 "nazwa", "spolka", "название", "компания", "銘柄", "名称", "股票名称",
                 "종목"),
        "symbol": ("code", "ticker code", "wkn", "kurzel", "kürzel", "isin code", "sigle"),
        "price": ("last trade price", "letzter kurs", "kurs aktuell", "akt kurs", "cours",
                  "ult", "ultimo", "último", "ultima", "senaste", "現在値", "最新价"),
        "change_percent": ("% chg", "chg %", "% change", "change %", "% var", "var %",
                           "variation %", "var", "veränd %", "veränderung %", "+/- %",
                           "perf %", "dif %", "diferencia %", "騰落率", "涨跌幅"),
        "change": ("chg", "+/-", "veränd", "veränderung", "dif", "diferencia", "variación",
                   "前日比", "涨跌额"),
    }.items()
    for text in texts
}
# fields a market table's row may give, and how each is read
_AMOUNTS = ("previous_close", "open", "day_low", "day_high", "market_cap")
_OTHER_FIELDS = frozenset(
    {"name", "change", "change_percent", "volume", "currency", "market_cap", "exchange",
     "previous_close", "open", "day_low", "day_high"}
)
_MAYBE_ROW = f"//*[count(*) >= 3 and count(*) <= {MAX_COLUMNS}]"
_PENCE = re.compile(r"GBX|GBp|(?<=\d)p\b")
_PENNY = re.compile(r"(?<=\d)p\b|\bGBp\b")


@dataclass
class Grid:
    """One table found on the page: what each column is, and its rows' cells."""

    element: Any
    columns: list[str | None]
    hints: list[str | None]  # a currency code a header names ("Last (EUR)")
    rows: list[list[Any]] = field(default_factory=list)


@dataclass
class TableQuotes:
    """The quotes of a page's market tables: ``tables`` is how many the page has (the
    page is a market page when it is one or more), ``skipped`` the rows that gave none,
    by reason."""

    quotes: list[dict[str, Any]] = field(default_factory=list)
    tables: int = 0
    skipped: Counter[str] = field(default_factory=Counter)


@functools.lru_cache(maxsize=20_000)
def header_field(text: str) -> tuple[str | None, str | None]:
    """The field a column header names, and a currency code its parentheses name."""
    named, code = field_of_label(text)
    if named is None:
        named = _HEADERS.get(label_key(text))
    if named == "day_range":
        return None, code  # "185.00 - 189.20" in one cell: left out
    return named, code


def _cells(row: Any) -> list[Any]:
    return [c for c in row if isinstance(c.tag, str) and c.tag not in SKIP]


def _short_text(cell: Any, limit: int = 60) -> str | None:
    """A header cell's words, or None when it has more than ``limit`` characters (read no
    further: a container is no header)."""
    children = len(cell)
    if children > 3:
        return None
    if not children:
        raw = cell.text or ""
    else:
        pieces, size = [], 0
        for piece in cell.itertext():
            size += len(piece)
            if size > 2 * limit:
                return None
            pieces.append(piece)
        raw = " ".join(pieces)
    if len(raw) > 2 * limit:
        return None
    text = " ".join(raw.split())
    return text if 0 < len(text) <= limit else None


def _columns(cells: list[Any]) -> tuple[list[str | None], list[str | None]] | None:
    """Each header cell's field, when they make a market table's headers."""
    if not MIN_ROWS < len(cells) + 1 <= MAX_COLUMNS:
        return None
    columns, hints = [], []
    unnamed = 0
    for cell in cells:
        text = _short_text(cell)
        named, hint = header_field(text) if text else (None, None)
        unnamed += named is None
        if unnamed > len(cells) - 3:
            return None  # fewer than three columns named: no market table's headers
        columns.append(named)
        hints.append(hint)
    fields = {c for c in columns if c}
    if "symbol" not in fields or not {"price", "close"} & fields:
        return None
    if not fields & _OTHER_FIELDS:
        return None
    if columns.count("symbol") > 1:
        return None  # two symbol columns: which one is the row's is unknown
    return columns, hints


def _table_rows(table: Any) -> list[Any]:
    rows = []
    for child in table:
        if not isinstance(child.tag, str):
            continue
        if child.tag == "tr":
            rows.append(child)
        elif child.tag in ("thead", "tbody"):  # a foot holds totals, not instruments
            rows.extend(r for r in child if isinstance(r.tag, str) and r.tag == "tr")
    return rows


def _tables(root: Any) -> Iterator[Grid]:
    for table in root.iter("table"):
        rows = _table_rows(table)
        if len(rows) <= MIN_ROWS:
            continue
        head = [r for r in rows if r.getparent().tag == "thead"]
        header = head[-1] if head else rows[0]
        found = _columns(_cells(header))
        if found is None:
            continue
        grid = Grid(table, *found)
        body = rows[rows.index(header) + 1 :]
        grid.rows = [c for c in (_cells(r) for r in body) if len(c) == len(grid.columns)]
        yield grid


def _grids(root: Any, taken: set[Any]) -> Iterator[Grid]:
    """Grids of elements: a header row of cells, then rows of as many cells (its
    following siblings, or the children of its next sibling: a head and a body)."""
    # elements of 3 to MAX_COLUMNS children, found by libxml2 (no Python object for others)
    for element in root.xpath(_MAYBE_ROW):
        if not isinstance(element.tag, str) or element.tag in SKIP or element in taken:
            continue
        if element.tag in ("table", "thead", "tbody", "tfoot", "tr"):
            continue
        cells = _cells(element)
        if not 3 <= len(cells) <= MAX_COLUMNS or any(len(c) > 3 for c in cells):
            continue
        found = _columns(cells)
        if found is None:
            continue
        grid = Grid(element, *found)
        grid.rows = _rows_after(element, len(grid.columns))
        yield grid


def _row(element: Any, width: int) -> list[Any] | None:
    """The cells of a row of ``width`` cells (a cell holds a few elements at most: an
    element of rows is a body, not a row)."""
    cells = _cells(element)
    if len(cells) != width or any(len(_cells(c)) > 3 for c in cells):
        return None
    return cells


def _rows_after(header: Any, width: int) -> list[list[Any]]:
    """The rows of ``width`` cells after a header row: its following siblings, else the
    children of its next sibling (a body after the header); the same from its parent when
    the header row is alone in a head."""
    for start in (header, header.getparent()):
        if start is None:
            break
        siblings = [s for s in start.itersiblings() if isinstance(s.tag, str)]
        rows = [r for r in (_row(s, width) for s in siblings) if r]
        if not rows and siblings:
            rows = [r for r in (_row(s, width) for s in _cells(siblings[0])) if r]
        if rows:
            return rows
        parent = start.getparent()
        if parent is None or len(_cells(parent)) != 1:
            break  # the header row is not alone in its parent: no head around it
    return []


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
    grids = list(_tables(root))
    taken = {g.element for g in grids}
    for grid in grids:  # a grid inside a table's cell is that table's
        taken.update(grid.element.iter())
    grids.extend(_grids(root, taken))
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
