"""``master recrawl`` refetches only the stale products, and the price change is recorded."""

from __future__ import annotations

import datetime as dt

import psycopg2
import pytest

from .conftest import page_fetches

pytestmark = pytest.mark.workers


def test_recrawl_refetches_only_stale_products_and_records_price_changes(
    crawl, shop_factory, postgres_dsn
):
    crawl.env["POSTGRES_DSN"] = postgres_dsn
    shop = shop_factory(products=20)
    crawl.seed(shop.url)
    crawl.start_worker("first")
    crawl.wait_workers()
    base = shop.url.rstrip("/")
    assert len(page_fetches(shop)) == len(shop.catalog.crawlable_paths())

    # the shop's next price version: some stale products change price, some do not
    shop.stop()
    later = shop_factory(products=20, price_version=1, port=shop.port)
    paths = sorted(shop.catalog.product_paths())
    changed = [
        p
        for p in paths
        if later.catalog.expected_product(p)["price"] != shop.catalog.expected_product(p)["price"]
    ][:3]
    unchanged = [p for p in paths if p not in changed][:3]
    assert len(changed) == 3
    stale = {base + path for path in changed + unchanged}
    with psycopg2.connect(postgres_dsn) as conn, conn.cursor() as cur:
        cur.execute(
            "UPDATE products SET last_seen = now() - interval '7 hours' WHERE url = ANY(%s)",
            (sorted(stale),),
        )

    dry = crawl.master("recrawl", "--older-than", "6h", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert set(dry.stdout.split()) == stale
    result = crawl.master("recrawl", "--older-than", "6h")
    assert result.returncode == 0, result.stderr
    assert "queued 6 of 6 products" in result.stdout
    again = crawl.master("recrawl", "--older-than", "6h")  # before any worker ran: no doubles
    assert "queued 0 of 6 products" in again.stdout, again.stdout

    crawl.start_worker("recrawler")
    crawl.wait_workers()
    crawl.assert_clean_logs()

    # only the stale product pages were fetched again (robots.txt aside), each once
    assert page_fetches(later) == {path: 1 for path in changed + unchanged}

    with psycopg2.connect(postgres_dsn) as conn, conn.cursor() as cur:
        cur.execute(
            "SELECT url, price, data->>'crawled_at', last_seen FROM products WHERE url = ANY(%s)",
            (sorted(stale),),
        )
        rows = {url: (price, crawled_at, last_seen) for url, price, crawled_at, last_seen in cur}
        cur.execute(
            # the product pages' readings (the category pages' cards add their own,
            # source 'listing': tests/e2e/test_listing_refresh.py)
            "SELECT url, price, seen_at FROM product_price_history WHERE url = ANY(%s) "
            "AND source = 'page' ORDER BY url, seen_at",
            (sorted(stale),),
        )
        history: dict[str, list[tuple]] = {}
        for url, price, seen_at in cur:
            history.setdefault(url, []).append((price, seen_at))
    now = dt.datetime.now(dt.UTC)
    for path in changed + unchanged:
        url = base + path
        price, crawled_at, last_seen = rows[url]
        assert price == later.catalog.expected_product(path)["price"]
        assert now - last_seen < dt.timedelta(minutes=5)  # fresh again
        # (a page's reading after a card's adds a row even when unchanged: both kept)
        if path in changed:
            (old_price, _), (new_price, seen_at) = history[url][0], history[url][-1]
            assert old_price == shop.catalog.expected_product(path)["price"]
            assert new_price == price
            # the change is recorded at the crawl time of the page, not the write time
            assert seen_at == dt.datetime.fromisoformat(crawled_at)
        else:
            assert {p for p, _ in history[url]} == {price}, history[url]
