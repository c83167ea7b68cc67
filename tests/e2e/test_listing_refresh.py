"""A shop's prices and stock refreshed from its listing pages (issue 43, points 2 and 3).

The generated shop ``card-layouts`` (:mod:`demoshop.cardlayouts`) shows its 300
products on category pages of 20 to 40 cards in four layouts (a list, a grid with a
promotion and a category tile, a table, sale cards with a struck-through price) and a
"New in" shelf without stock wording. Real workers crawl it into a real PostgreSQL;
the shop's prices and stock then move; ``master recrawl --listings`` queues the listing
pages again and a worker refreshes every product from them: every product's new price
and stock stored, at most 0.06 requests per refreshed product (the shop's access log
counts them), the price history holding the page's reading and the listing's.
"""

from __future__ import annotations

import json
from decimal import Decimal

import psycopg2
import pytest

from crawler.core.keys import CrawlKeys

from .conftest import page_fetches

pytestmark = pytest.mark.workers

PRODUCTS = 300


def _rows(dsn: str) -> dict[str, tuple[Decimal, str, dict]]:
    with psycopg2.connect(dsn) as conn, conn.cursor() as cur:
        cur.execute("SELECT url, price, availability, data FROM products")
        return {url: (price, availability, data) for url, price, availability, data in cur}


def test_recrawl_listings_refreshes_every_product_from_its_category_pages(
    crawl, shop_factory, postgres_dsn
):
    crawl.env["POSTGRES_DSN"] = postgres_dsn
    shop = shop_factory(products=PRODUCTS, generated="card-layouts")
    generated = shop.catalog
    base = shop.url.rstrip("/")
    crawl.seed(shop.url)
    crawl.start_worker("first", CONCURRENT_REQUESTS=8)
    crawl.wait_workers()
    crawl.assert_clean_logs()

    rows = _rows(postgres_dsn)
    expected = generated.expected_products(shop.url)
    assert set(rows) == set(expected)
    for url, product in expected.items():
        assert rows[url][:2] == (product["price"], product["availability"]), url
    keys = CrawlKeys.layout("ecommerce")
    listing_paths = generated.listing_paths() - {"/"}  # the home page shows no card
    remembered = {u.decode() for u in crawl.client.hkeys(keys.listing_pages)}
    assert remembered == {base + p for p in listing_paths}
    status = json.loads(crawl.master("status", "--json").stdout)
    assert status["listed_products"] == PRODUCTS
    assert status["items_stored"] == PRODUCTS  # the cards are observations, not items

    # the shop's next price version: a third of the prices move, some stock flips
    shop.stop()
    later = shop_factory(
        products=PRODUCTS, generated="card-layouts", price_version=1, port=shop.port
    )
    now = later.catalog.expected_products(later.url)
    moved = [u for u in now if now[u]["price"] != expected[u]["price"]]
    flipped = [u for u in now if now[u]["availability"] != expected[u]["availability"]]
    assert len(moved) > 50 and flipped

    result = crawl.master("recrawl", "--listings")
    assert result.returncode == 0, result.stderr
    assert f"{len(listing_paths)} listing pages and 0 product pages" in result.stdout
    crawl.start_worker("refresher", CONCURRENT_REQUESTS=8)
    crawl.wait_workers()
    crawl.assert_clean_logs()

    # only the listing pages were fetched, each once; no product page
    assert page_fetches(later) == {path: 1 for path in listing_paths}
    requests = len(later.read_access_log())  # robots.txt included
    assert requests / PRODUCTS <= 0.06, requests

    rows = _rows(postgres_dsn)
    for url, product in now.items():
        price, availability, data = rows[url]
        assert (price, availability) == (product["price"], product["availability"]), url
        assert data["reading"]["source"] == "listing"
        assert data["sku"] == product["sku"]  # the page's fields stay
    with psycopg2.connect(postgres_dsn) as conn, conn.cursor() as cur:
        cur.execute(
            "SELECT source, price, listing_url FROM product_price_history WHERE url = %s "
            "ORDER BY seen_at, id",
            (moved[0],),
        )
        history = cur.fetchall()
    sources = [source for source, _, _ in history]
    assert "page" in sources and sources[-1] == "listing"
    assert history[-1][1] == now[moved[0]]["price"]
    assert history[-1][2].startswith(base + "/c/")
    page_rows = [price for source, price, _ in history if source == "page"]
    assert page_rows == [expected[moved[0]]["price"]]

    report = crawl.master("report")
    assert report.returncode == 0, report.stderr
    figures = json.loads(crawl.master("status", "--json").stdout)["listings"]["refresh"]
    assert figures["refreshed"] == PRODUCTS
    assert figures["requests"] == len(listing_paths)
    assert "requests per refreshed product" in report.stdout

    # every product still shows in a listing (none left its page, the "New in" shelf
    # included): the next refresh plans no product page
    again = crawl.master("recrawl", "--listings", "--dry-run")
    assert again.returncode == 0, again.stderr
    assert f"dry run: {len(listing_paths)} listing pages and 0 product pages;" in again.stderr
