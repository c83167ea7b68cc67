"""Two real workers store the demo shop in a real PostgreSQL, through outages and re-crawls."""

from __future__ import annotations

import time
from decimal import Decimal

import psycopg2
import pytest

from tests.support.tcpproxy import TcpProxy

from .conftest import CRAWL_TIMEOUT, page_fetches, wait_until

pytestmark = pytest.mark.workers


def _rows(dsn: str, sql: str) -> list[tuple]:
    with psycopg2.connect(dsn) as conn, conn.cursor() as cur:
        cur.execute(sql)
        return cur.fetchall()


def _crawl_once(crawl, shop, dsn: str) -> None:
    crawl.env["POSTGRES_DSN"] = dsn
    crawl.seed(shop.url)
    crawl.start_worker("w1")
    crawl.start_worker("w2")
    crawl.wait_workers()
    crawl.assert_clean_logs()


def _assert_products_match(dsn: str, shop) -> dict[str, tuple]:
    rows = {
        row[0]: row[1:]
        for row in _rows(
            dsn,
            "select url, name, price, currency, availability, first_seen, last_seen from products",
        )
    }
    expected = shop.catalog.expected_products(shop.url.rstrip("/"))
    assert set(rows) == set(expected)
    for url, product in expected.items():
        name, price, currency, availability = rows[url][:4]
        assert (name, price, currency, availability) == (
            product["name"],
            Decimal(product["price"]),
            product["currency"],
            product["availability"],
        ), url
    return rows


def test_two_workers_store_one_row_per_product_and_a_recrawl_updates_them(
    crawl, shop_factory, postgres_dsn
):
    shop = shop_factory(products=90, latency_ms=5)
    _crawl_once(crawl, shop, postgres_dsn)
    first = _assert_products_match(postgres_dsn, shop)
    # the product pages' readings (a listing's cards may add their own: source 'listing')
    page_rows = "select count(*) from product_price_history where source = 'page'"
    assert _rows(postgres_dsn, page_rows) == [(90,)]

    # the shop changes its prices and stock; the crawl starts afresh on the same URLs
    port = shop.port
    shop.stop()
    repriced = shop_factory(products=90, latency_ms=5, price_version=1, port=port)
    changed = {
        url
        for url, product in repriced.catalog.expected_products(repriced.url.rstrip("/")).items()
        if (Decimal(product["price"]), product["availability"]) != (first[url][1], first[url][3])
    }
    assert changed, "price_version=1 should change some prices"
    assert crawl.master("reset", "--yes").returncode == 0
    crawl.workers.clear()
    time.sleep(1.1)  # last_seen must be able to move
    _crawl_once(crawl, repriced, postgres_dsn)

    second = _assert_products_match(postgres_dsn, repriced)
    assert len(second) == 90  # updated, never duplicated
    for url in second:
        assert second[url][4] == first[url][4], "first_seen is kept"
        assert second[url][5] > first[url][5], "last_seen moves"
    history = dict(
        _rows(postgres_dsn, "select url, count(*) from product_price_history "
                            "where source = 'page' group by url")
    )
    assert {url for url, n in history.items() if n == 2} == changed
    assert all(n in (1, 2) for n in history.values())


def test_products_survive_a_database_outage_in_the_middle_of_a_crawl(
    crawl, shop_factory, postgres_dsn
):
    host_port = postgres_dsn.split("@", 1)[1].split("/", 1)[0]
    host, port = host_port.split(":")
    shop = shop_factory(products=150, latency_ms=20)
    with TcpProxy(host, int(port)) as proxy:
        dsn = postgres_dsn.replace(host_port, f"127.0.0.1:{proxy.port}")
        crawl.env["POSTGRES_DSN"] = dsn
        crawl.seed(shop.url)
        crawl.start_worker("w1", STORE_BATCH_SIZE=10)
        crawl.start_worker("w2", STORE_BATCH_SIZE=10)
        wait_until(
            lambda: (
                _rows(postgres_dsn, "select count(*) from products")[0][0] >= 20
                if _has_products_table(postgres_dsn)
                else False
            ),
            CRAWL_TIMEOUT,
            "20 products stored",
        )
        proxy.cut()
        cut_at = len(page_fetches(shop))
        assert cut_at < len(shop.catalog.crawlable_paths()), "the crawl ended before the cut"
        wait_until(
            lambda: len(page_fetches(shop)) > cut_at,
            CRAWL_TIMEOUT,
            "the crawl to go on while the database is away",
        )
        proxy.restore()
        crawl.wait_workers()
    assert any("unreachable" in w.log() or "away" in w.log() for w in crawl.workers)
    rows = _rows(postgres_dsn, "select url from products")
    assert {url for (url,) in rows} == {
        shop.url.rstrip("/") + path for path in shop.catalog.product_paths()
    }
    assert len(rows) == 150


def _has_products_table(dsn: str) -> bool:
    return _rows(dsn, "select to_regclass('products') is not null")[0][0]
