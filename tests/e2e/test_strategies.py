"""Sitemaps and crawl strategies on real workers and the real demo shop (issue 17).

Each test runs a small shop that serves robots.txt with ``Sitemap:``, a sitemap
index and gzip'd children, and products only the sitemaps list
(``sitemap_only``), and checks the shop's own access log.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import sqlite3
import urllib.request
from collections import Counter
from urllib.parse import urlsplit

import pytest

from demoshop.sitemaps import is_sitemap_path

_HREF = re.compile(r'href="([^"]+)"')


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=30) as answer:
        return str(answer.read().decode("utf-8"))


pytestmark = pytest.mark.workers


def stored_urls(crawl) -> set[str]:  # type: ignore[no-untyped-def]
    """The products read from their own pages (not those known from a listing's card)."""
    with sqlite3.connect(crawl.workdir / "products.sqlite3") as db:
        rows = db.execute("select url from products where "
                          "coalesce(json_extract(data, '$.source'), '') != 'listing'")
        return {url for (url,) in rows}


def seed_json(crawl, url: str, **meta: object) -> None:  # type: ignore[no-untyped-def]
    result = crawl.master("seed", "-", input=json.dumps({"url": url, "meta": meta}) + "\n")
    assert result.returncode == 0, result.stderr


def test_a_plain_seed_stores_every_product_sitemap_only_ones_included(crawl, shop_factory):
    shop = shop_factory(products=90, sitemap_only=12)
    hidden = shop.catalog.sitemap_only_paths()
    assert len(hidden) == 12
    crawl.seed(shop.url)
    crawl.start_worker("w1")
    crawl.wait_workers()
    crawl.assert_clean_logs()

    assert stored_urls(crawl) == set(shop.expected_products())
    fetches = Counter(shop.page_fetches())
    assert set(fetches) == shop.catalog.crawlable_paths()
    assert set(fetches.values()) == {1}
    # the index and each child read once, by one worker
    log = [entry.path for entry in shop.read_access_log()]
    sitemaps = Counter(path for path in log if is_sitemap_path(path))
    assert sitemaps == {"/sitemap_index.xml": 1, "/sitemaps/products-1.xml.gz": 1}


def test_sitemap_strategy_fetches_products_only(crawl, shop_factory):
    shop = shop_factory(products=150, sitemap_only=20)
    seed_json(crawl, shop.url, strategy="sitemap")
    crawl.start_worker("w1")
    crawl.wait_workers()
    crawl.assert_clean_logs()

    assert stored_urls(crawl) == set(shop.expected_products())
    pages = shop.page_fetches()
    assert not set(pages) & shop.catalog.listing_paths(), "a listing page was fetched"
    # robots.txt, sitemaps and the seed aside: one request per product
    assert len(pages) / len(shop.catalog.products) <= 1.02
    assert sorted(pages) == sorted(shop.catalog.product_paths())


def test_direct_strategy_fetches_exactly_the_seeded_urls(crawl, shop_factory):
    shop = shop_factory(products=40)
    chosen = sorted(shop.catalog.product_paths())[:3]
    lines = [
        json.dumps({"url": shop.url.rstrip("/") + path, "meta": {"strategy": "direct"}})
        for path in chosen
    ]
    result = crawl.master("seed", "-", input="\n".join(lines) + "\n")
    assert result.returncode == 0, result.stderr
    crawl.start_worker("w1")
    crawl.wait_workers()
    crawl.assert_clean_logs()

    assert sorted(shop.page_fetches()) == chosen
    assert not [e.path for e in shop.read_access_log() if is_sitemap_path(e.path)]
    assert stored_urls(crawl) == {shop.url.rstrip("/") + path for path in chosen}


def test_max_pages_is_never_exceeded_across_three_workers(crawl, shop_factory):
    shop = shop_factory(products=200, latency_ms=5)
    seed_json(crawl, shop.url, max_pages=40, source="budget")
    for name in ("w1", "w2", "w3"):
        crawl.start_worker(name)
    crawl.wait_workers()
    crawl.assert_clean_logs()

    requests = [e.path for e in shop.read_access_log() if e.path != "/robots.txt"]
    assert len(requests) == 40, Counter(requests)  # sitemaps are pages of the seed too
    assert len(set(requests)) == 40
    assert stored_urls(crawl)
    status = crawl.master("status", "--sites", "--json")
    assert status.returncode == 0, status.stderr
    sites = json.loads(status.stdout)["sites"]
    [site] = [s for s in sites["sites"] if s["site"] in shop.url]
    assert site["pages"] == 40
    assert site["products"] == len(stored_urls(crawl))
    [seed] = sites["seeds"]
    assert (seed["pages"], seed["max_pages"]) == (40, 40)


def test_recrawl_changed_queues_exactly_the_products_whose_lastmod_moved(crawl, shop_factory):
    from demoshop.sitemaps import changed_products

    shop = shop_factory(products=60)
    crawl.seed(shop.url)
    crawl.start_worker("first")
    crawl.wait_workers()
    assert len(stored_urls(crawl)) == 60

    # the shop's next version: some prices and stock states changed since the crawl
    shop.stop()
    changed_at = (dt.datetime.now(dt.UTC) + dt.timedelta(seconds=1)).isoformat(timespec="seconds")
    later = shop_factory(products=60, price_version=1, port=shop.port, changed_at=changed_at)
    base = later.url.rstrip("/")
    moved = {base + later.catalog.product(pid).path for pid in changed_products(later.catalog)}
    assert 5 <= len(moved) < 60

    dry = crawl.master("recrawl", "--changed", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert set(dry.stdout.split()) == moved
    result = crawl.master("recrawl", "--changed")
    assert result.returncode == 0, result.stderr
    assert f"queued {len(moved)} of {len(moved)} products" in result.stdout, result.stdout

    crawl.start_worker("recrawler")
    crawl.wait_workers()
    crawl.assert_clean_logs()
    # only the changed product pages were fetched again, each once
    assert sorted(later.page_fetches()) == sorted(url.removeprefix(base) for url in moved)


def test_pagination_and_max_depth_keep_to_their_seed(crawl, shop_factory):
    listing_shop = shop_factory(products=80, page_size=5)
    depth_shop = shop_factory(products=40)
    leaf = max(listing_shop.catalog.leaves(), key=lambda c: len(c.products))
    assert leaf.page_count(listing_shop.catalog.page_size) >= 2
    seed_json(crawl, listing_shop.url.rstrip("/") + leaf.path, strategy="pagination")
    seed_json(crawl, depth_shop.url, strategy="navigation", max_depth=1)
    crawl.start_worker("w1")
    crawl.wait_workers()
    crawl.assert_clean_logs()

    # pagination: the listing's pages and the products they list, nothing else
    pages = range(1, leaf.page_count(listing_shop.catalog.page_size) + 1)
    assert sorted(listing_shop.page_fetches()) == sorted(
        [leaf.page_path(n) for n in pages] + [p.path for p in leaf.products]
    )
    # max_depth 1: the home page and what it links to, not one link further
    home = depth_shop.catalog
    linked = {urlsplit(href).path for href in _HREF.findall(_get(depth_shop.url))}
    fetched = set(depth_shop.page_fetches())
    assert "/" in fetched and fetched - {"/"} <= linked  # depth 1: what the home page links
    assert {c.path for c in home.categories} <= fetched
    assert not fetched & {leaf.path for leaf in home.leaves()}  # depth 2
    assert not any(is_sitemap_path(e.path) for e in depth_shop.read_access_log())
