"""A full crawl of a plain shop stores exactly its products and no listing page (issue 29).

The generated shop ``plain-lists`` (:mod:`demoshop.plainlists`) has no class and no
structured data; its category pages are ordered lists of 1 to 60 cards (a linked name,
cut short on every other card, a price, a stock line, stars), and their pagers link
page 1 as ``?<param>=1`` under four parameter names, two of them unknown to the
crawler by name. A real worker crawls it: the store must hold one row per product
page, right, and nothing else; every listing page is fetched once and counted as
``extraction/rejected/listing``.
"""

from __future__ import annotations

import json
import re
import sqlite3
from decimal import Decimal

import pytest

from .conftest import page_fetches

pytestmark = pytest.mark.workers


def test_a_crawl_of_a_plain_shop_stores_its_products_and_rejects_its_listings(
    crawl, shop_factory
):
    shop = shop_factory(products=120, generated="plain-lists")
    generated = shop.catalog
    sizes = {len(s.page(n)) for s in generated.shelf_list for n in range(1, s.pages + 1)}
    assert {1, 2, 3, 60} <= sizes and max(sizes) == 60  # 1 to 60 cards a page
    crawl.seed(shop.url)
    crawl.start_worker("w1", CONCURRENT_REQUESTS=8)
    crawl.wait_workers()
    crawl.assert_clean_logs()

    fetches = page_fetches(shop)
    assert set(fetches) == generated.crawlable_paths()
    listings = generated.listing_paths()
    assert all(fetches[path] == 1 for path in listings), {
        p: n for p, n in fetches.items() if n > 1
    }  # page 1 once, whatever its pager's parameter is called

    with sqlite3.connect(crawl.workdir / "products.sqlite3") as db:
        rows = db.execute(
            "select url, name, price, currency, availability, sku from products"
        ).fetchall()
    expected = generated.expected_products(shop.url)
    stored = {row[0]: row for row in rows}
    assert set(stored) == set(expected)
    for url, product in expected.items():
        _, name, price, currency, availability, sku = stored[url]
        assert (name, Decimal(price), currency, availability, sku) == (
            product["name"], product["price"], product["currency"],
            product["availability"], product["sku"],
        ), url
    log = crawl.workers[0].log()
    rejected = {k: int(v) for k, v in re.findall(r"'extraction/rejected/(\w+)': (\d+)", log)}
    assert rejected == {"listing": len(listings)}, rejected


def test_a_crawl_reads_a_templated_shop_with_the_whole_shops_evidence(crawl, shop_factory):
    """The ``templated`` shop (:mod:`demoshop.templated`): a delivery notice and a
    sold-out "Don't miss" box on every page, the buy box before the heading, JSON-LD
    on two product pages of three. Read one by one, the pages without JSON-LD give no
    product (no price after the heading); a crawl reads them where the JSON-LD pages
    show price and stock, past the template's "Sold out": every product right."""
    shop = shop_factory(products=90, generated="templated")
    generated = shop.catalog
    crawl.seed(shop.url)
    crawl.start_worker("w1", CONCURRENT_REQUESTS=4)
    crawl.wait_workers()
    crawl.assert_clean_logs()

    with sqlite3.connect(crawl.workdir / "products.sqlite3") as db:
        rows = db.execute("select url, price, availability, data from products").fetchall()
    expected = generated.expected_products(shop.url)
    stored = {row[0]: row for row in rows}
    assert set(stored) == set(expected)
    sources = set()
    for url, product in expected.items():
        _, price, availability, data = stored[url]
        assert (Decimal(price), availability) == (product["price"], product["availability"]), url
        sources.add(json.loads(data)["provenance"]["price"])
    assert sources == {"json-ld", "site"}  # a third of the pages read where the site shows it
    log = crawl.workers[0].log()
    rejected = {k: int(v) for k, v in re.findall(r"'extraction/rejected/(\w+)': (\d+)", log)}
    assert rejected == {"listing": len(generated.listing_paths())}, rejected
