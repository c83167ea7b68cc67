"""What ``recrawl --listings`` queues besides the listing pages a crawl read (issue 43,
point 3), through a real ``ecommerce`` spider reading the generated ``card-layouts``
shop's pages on real Redis, and the master's command on a real embedded store:

* the category pages a shop's sitemaps name (the URLs a sitemap lists that the spider
  does not take for item links) that the crawl has not read: queued, marked; read once
  (kept as listing pages when they show cards, dropped otherwise);
* the pages of the products that left their listings: the page that showed a
  product's card last was read again without it, showed no card any more, or was gone.
"""

from __future__ import annotations

import threading
import time
from decimal import Decimal

import pytest
from scrapy import Request
from scrapy.http import HtmlResponse, Response, XmlResponse
from scrapy.spidermiddlewares.httperror import HttpError
from scrapy.utils.test import get_crawler
from twisted.python.failure import Failure

from crawler.core.itemkinds import PRODUCT
from crawler.core.keys import CrawlKeys
from crawler.core.listings import SITEMAPPED_META_KEY
from crawler.leasing.tracker import LeaseTracker
from crawler.scheduling import serializer
from crawler.spiders import ecommerce
from demoshop.cardlayouts import CardLayoutShop
from demoshop.catalog import Catalog
from demoshop.generated import Shelf, build
from master.listings import plan_refresh

BASE = "http://127.0.0.1:8000"
KEYS = CrawlKeys.layout("ecommerce")
NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'


@pytest.fixture
def spider(redis_url, redis_client):
    from crawler import settings as project_settings

    settings = {
        name: getattr(project_settings, name) for name in dir(project_settings) if name.isupper()
    }
    settings.update(
        REDIS_URL=redis_url, WORKER_ID="w-listings", ALLOW_PRIVATE_NETWORKS="127.0.0.1"
    )
    crawler = get_crawler(ecommerce.EcommerceSpider, settings_dict=settings)
    if getattr(crawler, "extensions", None) is None:
        LeaseTracker.from_crawler(crawler)
    spider = ecommerce.EcommerceSpider.from_crawler(crawler)
    crawler.spider = spider
    crawler.stats.open_spider()
    return spider


@pytest.fixture(scope="module")
def shop() -> CardLayoutShop:
    generated = build("card-layouts", Catalog.build(products=60))
    assert isinstance(generated, CardLayoutShop)
    return generated


def read(spider, url: str, html: str, **meta) -> list:  # type: ignore[no-untyped-def]
    """The spider's parse of a page, as a worker runs it (its items and requests)."""
    request = Request(url, meta={"site": "127.0.0.1:8000", **meta})
    response = HtmlResponse(url=url, body=html.encode(), encoding="utf-8", request=request)
    return list(spider.parse(response))


def listing(shop: CardLayoutShop, path: str, products) -> str:  # type: ignore[no-untyped-def]
    shelf = Shelf(path, "Everything", tuple(products), len(products) or 1, "page")
    return shop.listing_page("list", shelf, 1)


def stored(shop: CardLayoutShop, count: int) -> list[dict]:
    return [{"url": BASE + p.path, "price": Decimal(p.price), "availability": "InStock"}
            for p in shop.products[:count]]


def _store(tmp_path, items):  # type: ignore[no-untyped-def]
    from tests.integration.test_listing_memory import _store as store

    return store(tmp_path, items)


def test_the_category_pages_a_sitemap_names_are_refreshed_and_read_once(
    spider, shop, redis_client, redis_url, tmp_path, capsys
):
    from master.cli import main

    products = [BASE + p.path for p in shop.products[:2]]
    unlike = BASE + "/lamp-blue"  # a product page whose URL does not look like one
    pages = [BASE + "/c/lamps/", BASE + "/about/", unlike]
    body = "".join(f"<url><loc>{u}</loc></url>" for u in (*products, *pages))
    sitemap = BASE + "/sitemap.xml"
    response = XmlResponse(
        sitemap, body=f'<?xml version="1.0"?><urlset {NS}>{body}</urlset>'.encode(),
        request=Request(sitemap, meta={"sitemap": 0, "site": "127.0.0.1:8000"}),
    )
    requests = {r.url: r for r in spider.parse_sitemap(response)}
    assert set(requests) == {*products, *pages}
    remembered = {k.decode(): v.decode() for k, v in redis_client.hgetall(KEYS.sitemapped).items()}
    assert remembered == dict.fromkeys(pages, sitemap)  # the product links are not
    assert all(SITEMAPPED_META_KEY not in requests[u].meta for u in products)

    # the crawl reads the about page (no listing) and the unlike product's page: dropped
    read(spider, BASE + "/about/", shop.home(), **requests[BASE + "/about/"].meta)
    assert not redis_client.hexists(KEYS.sitemapped, BASE + "/about/")
    # a stored item whose sitemap request the dupefilter dropped (seen through a link):
    # the refresh leaves it out, as it is an item
    path = _store(tmp_path, [
        {"url": unlike, "name": "Blue lamp", "price": 9.5, "currency": "GBP"},
        {"url": products[0], "name": "Mat", "price": 3.5, "currency": "GBP"},
    ])
    plan = plan_refresh(
        redis_client, KEYS, [{"url": unlike, "price": 9.5}], PRODUCT.refreshed_fields
    )
    assert (plan.sitemap_pages, plan.known) == ([BASE + "/c/lamps/"], [unlike])

    args = ["--redis-url", redis_url, "recrawl", "--listings", "--store-path", str(path)]
    assert main(args) == 0
    assert "0 listing pages and 2 product pages and 1 pages sitemaps name, not read yet" \
        in capsys.readouterr().out
    payloads = {
        p["url"]: p for p in map(serializer.loads, redis_client.zrange(KEYS.requests, 0, -1))
    }
    assert payloads[BASE + "/c/lamps/"]["meta"][SITEMAPPED_META_KEY] == BASE + "/c/lamps/"
    assert SITEMAPPED_META_KEY not in payloads[products[0]]["meta"]
    assert not redis_client.hexists(KEYS.sitemapped, unlike)  # known as an item: dropped

    # a worker reads the category page the refresh queued: a listing page from now on
    cards = read(spider, BASE + "/c/lamps/", listing(shop, "/c/lamps/", shop.products[:20]),
                 **payloads[BASE + "/c/lamps/"]["meta"])
    assert len([c for c in cards if isinstance(c, dict)]) == 20
    assert redis_client.hlen(KEYS.sitemapped) == 0
    plan = plan_refresh(redis_client, KEYS, stored(shop, 20), PRODUCT.refreshed_fields)
    assert (plan.listing_pages, plan.sitemap_pages, plan.item_pages) == (
        [BASE + "/c/lamps/"], [], [],
    )


def test_the_products_that_left_their_listings_are_fetched_at_the_next_refresh(
    spider, shop, redis_client
):
    a, b, c = (BASE + path for path in ("/c/a/", "/c/b/", "/c/c/"))
    first, second, third = shop.products[:20], shop.products[20:40], shop.products[40:60]
    for url, products in ((a, first), (b, second), (c, third)):
        read(spider, url, listing(shop, url[len(BASE):], products))
    items = stored(shop, 60)
    plan = plan_refresh(redis_client, KEYS, items, PRODUCT.refreshed_fields)
    assert (len(plan.listing_pages), plan.item_pages) == (3, [])  # every product listed

    # the refresh reads the listing pages again (each a later reading): product 5 left
    # page a, page b shows no card any more, page c is gone (404)
    time.sleep(0.01)
    gone = first[5]
    read(spider, a, listing(shop, "/c/a/", [p for p in first if p is not gone]), recrawl=True)
    read(spider, b, listing(shop, "/c/b/", []), recrawl=True)
    request = Request(c, meta={"site": "127.0.0.1:8000", "recrawl": True})
    failure = Failure(HttpError(Response(c, status=404, request=request)))
    failure.request = request  # as Scrapy hands it to the errback
    spider.errback(failure)

    assert {u.decode() for u in redis_client.hkeys(KEYS.listing_pages)} == {a}
    plan = plan_refresh(redis_client, KEYS, items, PRODUCT.refreshed_fields)
    expected = {BASE + p.path for p in (gone, *second, *third)}
    assert set(plan.item_pages) == expected
    assert (plan.unlisted, plan.left, plan.lacking) == (41, 41, 0)
    assert plan.listing_pages == [a]

    # a product back in a listing is refreshed by its card again; a listing page not
    # read again yet keeps its products (its last reading shows them)
    time.sleep(0.01)
    read(spider, a, listing(shop, "/c/a/", first), recrawl=True)
    plan = plan_refresh(redis_client, KEYS, items, PRODUCT.refreshed_fields)
    assert set(plan.item_pages) == expected - {BASE + gone.path}


def test_a_follow_up_queues_in_the_same_refresh_the_products_no_listing_shows_any_more(
    spider, shop, redis_client, redis_url, tmp_path, capsys
):
    from master.cli import main

    a = BASE + "/c/a/"
    first = shop.products[:20]
    read(spider, a, listing(shop, "/c/a/", first))
    path = _store(tmp_path, [
        {"url": BASE + p.path, "name": p.name, "price": p.price, "currency": "GBP"}
        for p in first
    ])
    args = ["--redis-url", redis_url, "recrawl", "--listings", "--store-path", str(path)]

    # no worker reads the listing page: the follow-up gives up at its limit, queues nothing
    assert main([*args, "--follow-up", "1s"]) == 0
    out = capsys.readouterr().out
    assert "follow-up: 0 of 1 listing pages read again; queued 0 of 0 product pages" in out
    redis_client.delete(KEYS.requests)

    gone = first[5]
    worked: list[str] = []

    def worker() -> None:  # reads the page the refresh queued: product 5 left it
        deadline = time.monotonic() + 20
        while not redis_client.zcard(KEYS.requests) and time.monotonic() < deadline:
            time.sleep(0.05)
        for raw, _ in redis_client.zpopmin(KEYS.requests):
            payload = serializer.loads(raw)
            time.sleep(0.01)
            worked.append(payload["url"])
            read(spider, a, listing(shop, "/c/a/", [p for p in first if p is not gone]),
                 **payload["meta"])

    reader = threading.Thread(target=worker)
    reader.start()
    try:
        assert main([*args, "--follow-up", "30s"]) == 0
    finally:
        reader.join(30)
    assert worked == [a]
    out = capsys.readouterr().out
    assert "follow-up: 1 of 1 listing pages read again; queued 1 of 1 product pages" in out
    queued = [p["url"] for p in map(serializer.loads, redis_client.zrange(KEYS.requests, 0, -1))]
    assert queued == [BASE + gone.path]
    refresh = redis_client.hgetall(KEYS.listings_refresh)
    assert (refresh[b"listing_pages"], refresh[b"item_pages"]) == (b"1", b"1")
