"""``recrawl --changed``'s reading of lastmod and its network rule (master/freshness.py)."""

from __future__ import annotations

import datetime as dt
import urllib.error

import pytest

from crawler.net.network import NetworkRule
from master.freshness import SitemapFetcher, changed_products, parse_lastmod

UTC = dt.UTC


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-01-02", dt.datetime(2026, 1, 2, tzinfo=UTC)),
        ("2026-01-02T10:20:30+00:00", dt.datetime(2026, 1, 2, 10, 20, 30, tzinfo=UTC)),
        ("2026-01-02T10:20:30Z", dt.datetime(2026, 1, 2, 10, 20, 30, tzinfo=UTC)),
        ("2026-01-02T12:20:30+02:00", dt.datetime(2026, 1, 2, 10, 20, 30, tzinfo=UTC)),
        ("2026-01-02T10:20:30", dt.datetime(2026, 1, 2, 10, 20, 30, tzinfo=UTC)),
        ("", None),
        ("yesterday", None),
    ],
)
def test_lastmod_forms(text: str, expected: dt.datetime | None) -> None:
    assert parse_lastmod(text) == expected


def test_the_master_reads_no_sitemap_the_network_rule_refuses() -> None:
    warnings: list[str] = []
    fetcher = SitemapFetcher(NetworkRule(""), warnings.append)  # loopback not allowed
    with pytest.raises(urllib.error.URLError, match="refused by the network rule"):
        fetcher.fetch("http://127.0.0.1:9/robots.txt")
    stored = [("http://127.0.0.1:9/p/a-1.html", dt.datetime(2020, 1, 1, tzinfo=UTC))]
    assert list(changed_products(stored, fetcher)) == []
    assert warnings and all("refused by the network rule" in w for w in warnings), warnings
