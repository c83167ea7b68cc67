"""Shops built in the browser, crawled by ONE real worker from their home page.

The demo shop's browser section (``--browser-products``, :mod:`demoshop.browserapp`)
has two variants of the same products: ``/state/`` (the data embedded in a Next.js-like
``__NEXT_DATA__``: read from the HTML, no browser) and ``/app/`` (client-rendered over a
JSON API: only a browser shows it). Each is seeded from its own home page.
"""

from __future__ import annotations

import sqlite3
from decimal import Decimal
from typing import Any

import pytest

from crawler.browser.sites import read_browser_sites
from tests.support.browser_site import chromium_or_skip, logged_stats

from .conftest import KEYS

pytestmark = pytest.mark.workers

SECTION = 8  # products in the section


def stored(crawl) -> dict[str, dict[str, Any]]:  # type: ignore[no-untyped-def]
    with sqlite3.connect(crawl.workdir / "products.sqlite3") as db:
        rows = db.execute("select url, name, price, currency, availability, sku from products")
        return {
            url: {"name": name, "price": Decimal(str(price)), "currency": currency,
                  "availability": availability, "sku": sku}
            for url, name, price, currency, availability, sku in rows
        }


def crawl_section(crawl, shop, variant: str, **settings: object) -> dict[str, int]:  # type: ignore[no-untyped-def]
    home = shop.url + variant + "/"
    crawl.seed(f'{{"url": "{home}", "meta": {{"strategy": "navigation"}}}}')
    worker = crawl.start_worker("w1", **settings)
    crawl.wait_workers()
    crawl.assert_clean_logs()
    assert worker.process.returncode == 0, worker.log_tail()
    return logged_stats(worker.log())


def test_embedded_state_shop_needs_no_browser(crawl, shop_factory) -> None:  # type: ignore[no-untyped-def]
    shop = shop_factory(products=30, browser_products=SECTION)
    stats = crawl_section(crawl, shop, "state")
    assert stored(crawl) == shop.browser.expected_products("state", shop.url)
    assert not any(name.startswith("browser/") for name in stats), stats
    log = crawl.workers[0].log()
    assert "Launching browser" not in log and "playwright/browser_count" not in log
    fetched = shop.page_fetches()
    assert sorted(fetched) == sorted(shop.browser.page_paths("state"))  # each page once


def test_client_rendered_shop_renders_each_page_once(crawl, shop_factory) -> None:  # type: ignore[no-untyped-def]
    chromium_or_skip()
    shop = shop_factory(products=30, browser_products=SECTION)
    # a browser restarted every 4 pages (its leaks bounded), and when its memory, looked
    # at every 10 pages, is over 1 MiB (always), between two pages; a budget per page no
    # busy machine reaches (each page is to be rendered once)
    stats = crawl_section(
        crawl, shop, "app",
        BROWSER_RESTART_PAGES=4, BROWSER_MAX_MEMORY_MB=1, BROWSER_PAGE_TIMEOUT=120,
    )
    assert stored(crawl) == shop.browser.expected_products("app", shop.url)
    pages = shop.browser.page_paths("app")
    # the home page was fetched plainly, found a shell, and rendered; the site was then
    # remembered, so every other page was rendered from the start, each once
    assert stats["browser/rendered"] == len(pages)
    assert stats["browser/shells"] == 1 and stats["browser/marked/site"] == len(pages) - 1
    fetches = shop.page_fetches()
    assert fetches.count("/app/") == 2
    assert all(fetches.count(path) == 1 for path in pages - {"/app/"}), fetches
    # the section, not the whole shop: its other pages stay plain
    assert list(read_browser_sites(crawl.client, KEYS.browser_sites)) == [
        shop.url.split("//", 1)[1] + "app/"
    ]
    assert not stats.get("browser/errors/timeout") and not crawl.client.llen(KEYS.dead)
    restarts = stats["browser/restarts/pages"]
    assert restarts >= len(pages) // 4 and stats["browser/launches"] >= restarts, stats
    # its memory read at the 10th page (not a 4th: the restart for pages comes first)
    assert len(pages) >= 10 and stats.get("browser/restarts/memory") == 1, stats
