"""A full crawl of the demo shop stores exactly its products, and no listing page.

The shop (its default size) holds the pages that fool extractors: listings of 1,
2 and 3 products in a markup other than its own, "Products in <category>" shelves
of 1, 2 and 3 cards each marked up as a Product, pagers linking page 1 as
``?page=1``, products whose model number looks like an error code ("... 404"),
product pages with carousels of other products, plain product pages in six
languages and currencies. A real worker crawls it all; the store must then hold
one row per product page, each with the product's own name, price, currency,
stock state and code and a provenance for its fields, and nothing else; every
other page is counted by the reason it gave no product.
"""

from __future__ import annotations

import json
import re
import sqlite3
from decimal import Decimal

import pytest

from crawler.scheduling.lanes import queued
from demoshop.catalog import ERROR_CODE_MODEL_EVERY
from demoshop.traps import PICK_SIZES, pick_path, shelf_paths

from .conftest import KEYS, page_fetches

pytestmark = pytest.mark.workers


def test_a_full_crawl_stores_exactly_the_products_and_no_listing_page(crawl, shop_factory):
    shop = shop_factory()  # the default shop
    catalog = shop.catalog
    crawl.seed(shop.url)
    crawl.start_worker("w1", CONCURRENT_REQUESTS=8)
    crawl.wait_workers(timeout=300)
    crawl.assert_clean_logs()

    fetched = set(page_fetches(shop))
    assert fetched == catalog.crawlable_paths()
    assert {pick_path(n) for n in PICK_SIZES} | shelf_paths(catalog) <= fetched  # the traps...
    assert not [p for p in fetched if re.search(r"[?&]page=1(?:&|$)", p)]  # page 1: one URL

    with sqlite3.connect(crawl.workdir / "products.sqlite3") as db:
        rows = db.execute(
            "select url, name, price, currency, availability, sku, data from products"
        ).fetchall()
    base = shop.url.rstrip("/")
    expected = catalog.expected_products(base)
    stored = {row[0]: row for row in rows}
    listings = {base + path for path in catalog.listing_paths()}
    assert not set(stored) & listings  # ...and none was stored as a product
    assert set(stored) == set(expected)
    assert len(rows) == len(expected) == len(catalog.products)
    for url, product in expected.items():
        _, name, price, currency, availability, sku, data = stored[url]
        got = (name, Decimal(price), currency, availability, sku)
        assert got == (
            product["name"],
            product["price"],
            product["currency"],
            product["availability"],
            product["sku"],
        ), url
        provenance = json.loads(data)["provenance"]
        assert {"name", "price", "currency", "availability", "sku"} <= set(provenance), url
        if product["markup"] == "plain":
            assert provenance["price"] == "visible", (url, provenance)
    assert {p["currency"] for p in expected.values()} >= {"USD", "EUR", "PLN", "SEK"}
    assert [p for p in catalog.products if p.id % 100 == ERROR_CODE_MODEL_EVERY]  # "... 404"
    # nothing lost silently: every page that gave no product is counted by its reason
    log = crawl.workers[0].log()
    rejected = {k: int(v) for k, v in re.findall(r"'extraction/rejected/(\w+)': (\d+)", log)}
    assert sum(rejected.values()) == len(catalog.listing_paths()), rejected
    assert rejected.get("listing", 0) >= len(shelf_paths(catalog)), rejected
    assert "extraction/errors" not in log
    assert crawl.client.llen(KEYS.dead) == 0
    assert queued(crawl.client, KEYS.requests) == 0
