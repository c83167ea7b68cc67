"""An exception inside extraction never loses a page silently.

The extractor is made to fail the way a real page once made it fail
(``to_unicode must receive bytes or str, got list``); the worker's parse must
record a replayable dead letter with the URL and reason, count it, log a
WARNING, and still follow the page's links.
"""

from __future__ import annotations

import json
import logging

import pytest
from scrapy import Request
from scrapy.http import HtmlResponse
from scrapy.utils.test import get_crawler

from crawler.core.keys import CrawlKeys
from crawler.leasing.tracker import LeaseTracker
from crawler.scheduling.lanes import queued
from crawler.spiders import ecommerce
from master.deadletters import requeue

PAGE = (
    b"<html><body><h1>Thing</h1><p class=price>$5.00</p>"
    b"<a href='/c/more/'>more</a><a href='/p/other-2.html'>other</a></body></html>"
)


@pytest.fixture
def spider(redis_url, redis_client):
    from crawler import settings as project_settings

    settings = {
        name: getattr(project_settings, name) for name in dir(project_settings) if name.isupper()
    }
    settings.update(REDIS_URL=redis_url, WORKER_ID="w-extract")
    crawler = get_crawler(ecommerce.EcommerceSpider, settings_dict=settings)
    if getattr(crawler, "extensions", None) is None:  # else the enabled tracker claimed it
        LeaseTracker.from_crawler(crawler)
    spider = ecommerce.EcommerceSpider.from_crawler(crawler)
    crawler.spider = spider
    crawler.stats.open_spider()
    yield spider


def test_an_extraction_error_becomes_a_replayable_dead_letter(
    spider, redis_client, monkeypatch, caplog
):
    def broken(response, profile=None, site=None):
        raise TypeError("to_unicode must receive bytes or str, got list")

    monkeypatch.setattr(ecommerce, "extract", broken)
    url = "http://127.0.0.1:9/p/thing-1.html"
    request = Request(url, meta={"site": "127.0.0.1:9"})
    response = HtmlResponse(url=url, body=PAGE, encoding="utf-8", request=request)
    with caplog.at_level(logging.WARNING):
        output = list(spider.parse(response))

    followed = sorted(r.url for r in output if isinstance(r, Request))
    assert followed == ["http://127.0.0.1:9/c/more/", "http://127.0.0.1:9/p/other-2.html"]
    assert not [o for o in output if isinstance(o, dict)]
    assert spider.crawler.stats.get_value("extraction/errors") == 1
    assert any(r.levelno == logging.WARNING and url in r.getMessage() for r in caplog.records)
    keys = CrawlKeys(spider.name)
    dead = [json.loads(raw) for raw in redis_client.lrange(keys.dead, 0, -1)]
    assert len(dead) == 1
    assert dead[0]["url"] == url
    assert "to_unicode must receive bytes or str, got list" in dead[0]["reason"]
    assert dead[0]["request"]

    result = requeue(redis_client, keys)  # replay after a fix
    assert result.requests == 1 and result.remaining == 0
    assert queued(redis_client, keys.requests) == 1


def test_a_page_without_a_product_is_counted_by_its_reason(spider, caplog):
    url = "http://127.0.0.1:9/c/more/"
    body = (
        b"<html><head><title>Page not found</title></head><body><h1>Oops</h1>"
        b"<a href='/p/other-2.html'>other</a></body></html>"
    )
    response = HtmlResponse(
        url=url, body=body, encoding="utf-8", request=Request(url, meta={"site": "127.0.0.1:9"})
    )
    with caplog.at_level(logging.DEBUG, logger=spider.logger.logger.name):
        output = list(spider.parse(response))
    assert [r.url for r in output] == ["http://127.0.0.1:9/p/other-2.html"]
    assert spider.crawler.stats.get_value("extraction/rejected/error_page") == 1
    assert any(
        r.levelno == logging.DEBUG and r.getMessage() == f"No product on {url}: error_page"
        for r in caplog.records
    )


def test_a_failing_source_costs_only_its_fields(spider, redis_client, monkeypatch, caplog):
    from crawler.extraction import product as product_module

    def broken(*args, **kwargs):
        raise TypeError("to_unicode must receive bytes or str, got list")

    monkeypatch.setattr(product_module, "read_structured_data", broken)
    url = "http://127.0.0.1:9/p/thing-1.html"
    page = PAGE.replace(b"</h1>", b"</h1><p class=stock>In stock</p>")
    response = HtmlResponse(
        url=url, body=page, encoding="utf-8", request=Request(url, meta={"site": "127.0.0.1:9"})
    )
    with caplog.at_level(logging.WARNING):
        output = list(spider.parse(response))
    products = [o for o in output if isinstance(o, dict)]
    assert [(p["name"], str(p["price"])) for p in products] == [("Thing", "5.00")]
    assert spider.crawler.stats.get_value("extraction/errors/structured") == 1
    assert spider.crawler.stats.get_value("extraction/errors") is None
    assert any(
        r.levelno == logging.WARNING and "structured failed on " + url in r.getMessage()
        for r in caplog.records
    )
    assert redis_client.llen(CrawlKeys(spider.name).dead) == 0


def test_a_seeded_first_page_is_requested_as_its_bare_listing(spider):
    # links drop ?page=1 (tests/unit/test_first_page.py); a seed must give the same request
    request = spider.make_request_from_data(b'{"url": "http://127.0.0.1:9/c/10/?page=1"}')
    assert request is not None and request.url == "http://127.0.0.1:9/c/10/"


def test_a_page_every_source_of_which_fails_is_a_dead_letter(spider, redis_client, monkeypatch):
    from crawler.extraction import product as product_module

    def broken(*args, **kwargs):
        raise TypeError("to_unicode must receive bytes or str, got list")

    monkeypatch.setattr(product_module, "merge_sources", broken)
    url = "http://127.0.0.1:9/p/thing-1.html"
    page = PAGE.replace(b"</h1>", b"</h1><p class=stock>In stock</p>")
    response = HtmlResponse(
        url=url, body=page, encoding="utf-8", request=Request(url, meta={"site": "127.0.0.1:9"})
    )
    output = list(spider.parse(response))
    assert not [o for o in output if isinstance(o, dict)]
    assert len([o for o in output if isinstance(o, Request)]) == 2  # links still followed
    stats = spider.crawler.stats
    assert stats.get_value("extraction/errors/merge") == 1
    assert stats.get_value("extraction/errors") == 1
    dead = [json.loads(raw) for raw in redis_client.lrange(CrawlKeys(spider.name).dead, 0, -1)]
    assert [d["url"] for d in dead] == [url]
    assert "got list" in dead[0]["reason"]
