"""What quote extraction gives: the quotes, or why a page gave none, and what failed."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

#: Why a page (or a row of an endpoint) gave no quote (:attr:`QuoteExtraction.rejected`).
REJECTED_REASONS = {
    "no_quote": "neither a price nor a symbol: not a quote page (an index, an article)",
    "no_price": "a symbol but no price",
    "no_symbol": "a price but no symbol",
    "conflicting_prices": "two prices of equal trust disagree: which is the quote's is unknown",
    "product_page": "the page declares itself a product (schema.org Product, og:type product)",
    "not_a_quote_page": "the site profile's is_quote selector does not match",
    "empty_endpoint": "a CSV or JSON quote endpoint with no row",
    "bad_endpoint": "a CSV or JSON response that cannot be read",
    "failed": "every source of the extractor raised (the errors say why)",
}


@dataclass
class QuoteExtraction:
    """The quotes of one response (a page gives at most one, an endpoint one per row).

    ``rejected``: a key of :data:`REJECTED_REASONS` when there is none; ``skipped``:
    the rows of an endpoint that gave no quote, by reason; ``errors``: ``(source,
    message)`` of each part of the extractor that raised (the others still ran).
    """

    quotes: list[dict[str, Any]] = field(default_factory=list)
    rejected: str | None = None
    skipped: Counter[str] = field(default_factory=Counter)
    errors: list[tuple[str, str]] = field(default_factory=list)
    #: how many market tables the page lists instruments in (:mod:`.tables`): a page with
    #: one or more is a market page, whose quotes a refresh can read again from it
    market_tables: int = 0

    def reject(self, reason: str) -> QuoteExtraction:
        self.quotes, self.rejected = [], reason
        return self
