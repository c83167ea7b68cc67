"""The listing pages a crawl read and what their cards showed (crawler.core.listings), and
the refresh from listings planned from them (master.listings): real Redis."""

from __future__ import annotations

import pytest

from crawler.core.itemkinds import PRODUCT
from crawler.core.keys import CrawlKeys
from crawler.core.listings import ListingMemory
from master.listings import describe, gather_listings, plan_refresh, start_refresh

KEYS = CrawlKeys.layout("ecommerce")
FINANCE = CrawlKeys.layout("finance")
P = "https://shop.example/p/{}.html"


@pytest.fixture
def memory(redis_client) -> ListingMemory:
    return ListingMemory(redis_client, KEYS)


def test_a_product_page_is_queued_only_when_no_card_refreshes_it(redis_client, memory):
    memory.record("https://shop.example/c/a", [(P.format(1), ["price", "availability"]),
                                               (P.format(2), ["price"])])
    # a shelf that shows no stock does not hide what the category page showed
    memory.record("https://shop.example/new", [(P.format(1), ["price"])])
    stored = [
        {"url": P.format(1), "price": 10.0, "availability": "InStock"},
        {"url": P.format(2), "price": 5.0, "availability": "InStock"},  # stock not shown
        {"url": P.format(3), "price": 7.0, "availability": None},  # in no listing
        {"url": P.format(4), "price": None, "availability": None},  # in no listing
    ]
    memory.record("https://shop.example/c/b", [(P.format(5), ["price"])])
    stored.append({"url": P.format(5), "price": 3.0, "availability": None})  # nothing lacking
    plan = plan_refresh(redis_client, KEYS, stored, PRODUCT.refreshed_fields)
    assert plan.listing_pages == [
        "https://shop.example/c/a", "https://shop.example/c/b", "https://shop.example/new",
    ]
    assert plan.item_pages == [P.format(2), P.format(3), P.format(4)]
    assert (plan.unlisted, plan.lacking, plan.requests) == (2, 1, 6)


def test_the_refresh_counts_the_products_its_listings_showed(redis_client, memory):
    memory.record("https://shop.example/c/a", [(P.format(i), ["price"]) for i in range(20)],
                  now=100.0)
    assert gather_listings(redis_client, KEYS) == {
        "listing_pages": 1, "listed": 20, "refresh": None,
    }
    stored = [{"url": P.format(i), "price": 1.0} for i in range(21)]
    plan = plan_refresh(redis_client, KEYS, stored, PRODUCT.refreshed_fields)
    start_refresh(redis_client, KEYS, plan, now=200.0)
    memory.record("https://shop.example/c/a", [(P.format(i), ["price"]) for i in range(20)],
                  now=201.0)
    memory.record("https://shop.example/c/a", [(P.format(i), ["price"]) for i in range(20)],
                  now=202.0)  # read twice: each product counted once
    refresh = gather_listings(redis_client, KEYS)["refresh"]
    assert refresh["requests"] == 2  # the listing page, and product 20's page
    assert refresh["refreshed"] == 21
    assert refresh["requests_per_refreshed"] == round(2 / 21, 4)
    lines = list(describe(gather_listings(redis_client, KEYS)))
    assert lines[0] == "listed products: 20 on 1 listing pages"
    assert lines[1].endswith("0.095 requests per refreshed product")


def test_each_spider_has_its_own_memory(redis_client):
    ListingMemory(redis_client, FINANCE).record(
        "https://m.example/index", [("https://m.example/q/A", ["price"])]
    )
    assert gather_listings(redis_client, KEYS)["listing_pages"] == 0
    assert gather_listings(redis_client, FINANCE)["listed"] == 1
    assert all(k.startswith(b"finance:") for k in redis_client.keys("*listings*"))


def _store(tmp_path, items):  # type: ignore[no-untyped-def]
    """An embedded product store holding ``items``, written by the workers' pipeline."""
    from scrapy import Spider
    from scrapy.utils.test import get_crawler

    from crawler.pipelines.embedded import EmbeddedStorePipeline

    class EcommerceSpider(Spider):
        name = "ecommerce"

    path = tmp_path / "products.sqlite3"
    crawler = get_crawler(
        EcommerceSpider,
        settings_dict={
            "EMBEDDED_STORE_PATH": str(path),
            "EXTENSIONS": {"crawler.core.flow.FlowControl": 10},
        },
    )
    pipeline = EmbeddedStorePipeline.from_crawler(crawler)
    assert len(pipeline.store_batch(items).stored) == len(items)
    pipeline.disconnect()
    return path


def test_recrawl_listings_queues_the_listing_pages_and_the_unlisted_products(
    tmp_path, redis_url, redis_client, memory, capsys
):
    from crawler.scheduling import serializer
    from master.cli import main

    items = [
        {"url": P.format(i), "name": f"Lamp {i}", "price": 1.5 + i, "currency": "GBP",
         "availability": "InStock"}
        for i in range(3)
    ]
    path = _store(tmp_path, items)
    memory.record("https://shop.example/c/a", [(P.format(0), ["price", "availability"]),
                                               (P.format(1), ["price"])])
    args = ["--redis-url", redis_url, "recrawl", "--listings", "--store-path", str(path)]
    assert main([*args, "--dry-run"]) == 0
    out = capsys.readouterr()
    assert out.out.split() == ["https://shop.example/c/a", P.format(1), P.format(2)]
    assert main(args) == 0
    out = capsys.readouterr()
    assert "queued 3 of 3 pages: 1 listing pages and 2 product pages (1 in no listing, " \
        "1 whose card lacks a field)" in out.out
    payloads = [serializer.loads(p) for p in redis_client.zrange(KEYS.requests, 0, -1)]
    assert sorted(p["url"] for p in payloads) == [
        "https://shop.example/c/a", P.format(1), P.format(2),
    ]
    assert all(p["dont_filter"] for p in payloads)
    assert main([*args[:-2], "--older-than", "1h", "--store-path", str(path)]) == 2
