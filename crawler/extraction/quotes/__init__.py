"""Zero-configuration quote extraction: the ``finance`` spider's counterpart of products'.

Pure functions from a response (or a page's text) to quotes; no spider state:

* :func:`extract_quotes`: the quotes of a response: the quote of a quote page
  (:mod:`.page`), or one per row of a CSV or JSON quote endpoint
  (:mod:`.endpoints`), with the reason when there is none;
* :func:`extract_quotes_from_text`: the same from a body, its address and its type
  (tests, tools);
* :func:`with_table_quotes`: a page's quotes with one per row of its market
  tables (:mod:`.tables`: an index's members, a market overview, a watch list);
* :func:`looks_like_quote_url`: the shape of a quote page's address (it orders
  the queue only).

Sources in order of trust: a site profile's selectors, structured data and
embedded state (:mod:`.structured`), meta tags, labels and their values in
several languages (:mod:`.vocabulary`, :mod:`.pairs`), elements named for a field,
the heading and the address, the first amount after the heading
(:mod:`.evidence`). Numbers of every locale and their suffixes: :mod:`.numbers`;
times: :mod:`.times`; exchanges' currencies and zones: :mod:`.markets`. See
``docs/quotes.md``.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from parsel import Selector
from scrapy.http import TextResponse

from crawler.extraction.tree import page_root

from .endpoints import endpoint_kind, read_csv, read_json
from .page import extract_quote_page
from .result import REJECTED_REASONS, QuoteExtraction
from .tables import read_market_tables

_QUOTE_URL = re.compile(
    r"(?i)/(?:quote|quotes|stock|stocks|symbol|ticker|equity|equities|aktie|aktien|cours|"
    r"cotizacion|cotacao|quotazione|instrument|instruments|shares|security|securities|etf|"
    r"fund|kurs|q)/[^/?#]+"
)


def looks_like_quote_url(url: str) -> bool:
    """Does the address have the shape of a quote page's (``/quote/AAPL``, ``/aktie/sap``)?"""
    return _QUOTE_URL.search(url) is not None


def extract_quotes_from_text(
    body: str,
    url: str,
    content_type: str = "text/html",
    profile: Any = None,
    fetched: dt.datetime | None = None,
) -> QuoteExtraction:
    """The quotes of a body of ``content_type`` fetched from ``url`` at ``fetched``."""
    fetched = fetched or dt.datetime.now(dt.UTC)
    kind = endpoint_kind(content_type, body[:2048].encode("utf-8", "replace"))
    currency = getattr(profile, "currency", None)
    if kind == "csv":
        return read_csv(body, url, fetched, currency)
    if kind == "json":
        return read_json(body, url, fetched, currency)
    selector = Selector(text=body, type="html")
    page = extract_quote_page(selector, url, fetched, profile)
    return with_table_quotes(page, selector.root, url, fetched, currency)


def extract_quotes(
    response: TextResponse, profile: Any = None, fetched: dt.datetime | None = None
) -> QuoteExtraction:
    """The quotes of a response (see the module's doc)."""
    fetched = fetched or dt.datetime.now(dt.UTC)
    content_type = (response.headers.get("Content-Type") or b"").decode("latin-1")
    kind = endpoint_kind(content_type, response.body[:2048])
    currency = getattr(profile, "currency", None)
    if kind == "csv":
        return read_csv(response.text, response.url, fetched, currency)
    if kind == "json":
        return read_json(response.text, response.url, fetched, currency)
    page_root(response)  # one parse, shared with link discovery
    page = extract_quote_page(response.selector, response.url, fetched, profile)
    return with_table_quotes(page, response.selector.root, response.url, fetched, currency)


def with_table_quotes(
    page: QuoteExtraction, root: Any, url: str, fetched: dt.datetime, currency: str | None
) -> QuoteExtraction:
    """The page's reading with one quote per row of its market tables: after the page's
    own quote (a quote page with a table of its peers keeps it; a row of its own symbol
    is the page's), and in its place when it has none (a market overview)."""
    try:
        tables = read_market_tables(root, url, fetched, currency)
    except Exception as exc:  # the tables' failure costs their quotes only
        page.errors.append(("quotes/tables", f"{type(exc).__name__}: {exc}"))
        return page
    page.market_tables = tables.tables
    urls = {q["url"] for q in page.quotes}
    symbols = {q["symbol"].upper() for q in page.quotes}
    rows = [q for q in tables.quotes if q["url"] not in urls and q["symbol"].upper() not in symbols]
    page.skipped.update(tables.skipped)
    if rows:
        page.quotes.extend(rows)
        page.rejected = None
    return page


def is_endpoint(response: TextResponse) -> bool:
    content_type = (response.headers.get("Content-Type") or b"").decode("latin-1")
    return endpoint_kind(content_type, response.body[:2048]) is not None


__all__ = [
    "REJECTED_REASONS",
    "QuoteExtraction",
    "extract_quotes",
    "extract_quotes_from_text",
    "is_endpoint",
    "looks_like_quote_url",
    "with_table_quotes",
]
