"""The ``finance`` spider: quotes, on the shared machinery of :mod:`crawler.spiders.base`.

Start any number of workers with ``scrapy crawl finance``; their keys are under
``finance:`` (:mod:`crawler.core.keys`), so they crawl beside ``ecommerce`` workers
on the same Redis without sharing a key. Seed them with ``python -m master seed
--spider finance FILE``: a quote site's index (its quote pages are found through
its links and sitemaps, quote-shaped addresses first), quote pages, or CSV and
JSON quote endpoints.

Each response gives its quotes (:func:`crawler.extraction.quotes.extract_quotes`):
one per quote page, one per row of an endpoint; a page that gives none is counted
by its reason (``extraction/rejected/<reason>``: ``no_quote``, ``no_price``,
``no_symbol``, ``conflicting_prices``, ``product_page``...), as is each row of an
endpoint that gives none. Quotes are validated against
``crawler/schema/quote.schema.json`` and kept by the quote stores (``quotes``,
``quote_history``). ``python -m master recrawl --spider finance --every 5m``
fetches the stored quotes again at that interval.

A market page (a table of instruments, one a row: :mod:`crawler.extraction.quotes.tables`)
gives one quote per row; its reading says so (``QuoteExtraction.market_tables``), and
the page is counted (``extraction/market_pages``) and recorded as a listing of its rows'
quotes (:class:`~crawler.core.listings.ListingMemory`), so ``python -m master recrawl --spider
finance --listings [--every 5m]`` refreshes a market from its tables: the table pages
again, and a quote's own page only when no table shows its symbol.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar

from scrapy.http import TextResponse

from crawler.core.itemkinds import QUOTE
from crawler.core.listings import ListingMemory, shown_fields
from crawler.extraction.quotes import extract_quotes, is_endpoint, looks_like_quote_url
from crawler.extraction.quotes.tables import SOURCE as TABLE_SOURCE
from crawler.spiders.base import DistributedSpider


class FinanceSpider(DistributedSpider):
    """One quote per quote page, one per row of a CSV or JSON quote endpoint."""

    name = "finance"
    item_kind: ClassVar[str] = QUOTE.name

    def extract_items(self, response: TextResponse, profile: Any) -> Iterator[dict[str, Any]]:
        result = extract_quotes(response, profile)
        for reason, count in result.skipped.items():  # an endpoint's rows without a quote
            self.crawler.stats.inc_value(f"extraction/rejected/{reason}", count)
        if result.market_tables:
            self.crawler.stats.inc_value("extraction/market_pages")
            self.remember_market_page(response, result.quotes)
        if self.accepted(response, result):
            yield from result.quotes

    def remember_market_page(self, response: TextResponse, quotes: list[dict[str, Any]]) -> None:
        """Record a market page and the quotes its tables' rows gave (their price read
        from the table: provenance ``table``) for ``recrawl --listings``."""
        rows = [q for q in quotes if (q.get("provenance") or {}).get("price") == TABLE_SOURCE]
        fields = QUOTE.refreshed_fields
        ListingMemory(self.server, self.keys).record(
            response.url, [(q["url"], shown_fields(q, fields)) for q in rows]
        )

    def is_item_link(self, url: str) -> bool:
        return looks_like_quote_url(url)

    def follows_links_of(self, response: TextResponse) -> bool:
        return not is_endpoint(response)  # a CSV or JSON endpoint has no links
