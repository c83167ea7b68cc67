"""The sites' evidence is shared by every worker through Redis, in bounded memory, and
a page waiting for it is queued again, once (issue 29, point 2)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from scrapy import Request
from scrapy.http import HtmlResponse
from scrapy.utils.test import get_crawler

from crawler.core.keys import CrawlKeys
from crawler.extensions.siteevidence import RETRIED_META_KEY, SiteEvidenceStore
from crawler.extraction.evidence import MIN_PAGES, PageEvidence
from crawler.middlewares.evidenceretry import EvidenceRetryMiddleware
from crawler.spiders.ecommerce import EcommerceSpider

SITE = "shop.example"
BADGE = PageEvidence(False, statements=(("#main/div[1]/p[2]", "Sold out", "OutOfStock"),))


def _store(redis_url: str, **settings: object) -> SiteEvidenceStore:
    crawler = get_crawler(
        EcommerceSpider,
        settings_dict={"REDIS_URL": redis_url, "SITE_EVIDENCE_SYNC_INTERVAL": 0, **settings},
    )
    crawler.stats.open_spider()
    return SiteEvidenceStore(crawler)


def _response(url: str = "http://shop.example/p/1.html") -> HtmlResponse:
    return HtmlResponse(url=url, body=b"<html></html>", request=Request(url))


def test_two_workers_read_with_what_both_have_seen(redis_url, redis_client) -> None:
    first, second = _store(redis_url), _store(redis_url)
    half = MIN_PAGES // 2
    for store in (first, second):
        for _ in range(half):
            store.observe(_response(), SITE, SimpleNamespace(evidence=BADGE, uncertain=False))
    assert not first.knowledge(SITE).mature  # each alone has seen half
    first.sync()
    second.sync()
    first.knowledge(SITE)  # the first worker meets the site again: it reads the sums
    first.sync()
    for store in (first, second):
        known = store.knowledge(SITE)
        assert known.pages == 2 * half and known.mature
        assert known.is_template("#main/div[1]/p[2]", "Sold out")
    key = CrawlKeys().evidence(SITE)
    assert int(redis_client.hget(key, "pages")) == 2 * half
    assert redis_client.ttl(key) > 0


def test_memory_is_bounded_in_the_worker_and_in_redis(redis_url, redis_client) -> None:
    store = _store(redis_url, SITE_EVIDENCE_MAX_KEYS=40, SITE_EVIDENCE_MAX_SITES=3)
    for i in range(300):
        page = PageEvidence(False, statements=((f"body/p[{i}]", "Sold out", "OutOfStock"),))
        store.observe(_response(), SITE, SimpleNamespace(evidence=page, uncertain=False))
        if i % 50 == 0:
            store.sync()
    store.sync()
    assert len(store.knowledge(SITE).counts) <= 40
    assert redis_client.hlen(CrawlKeys().evidence(SITE)) <= 40
    for n in range(10):
        store.knowledge(f"site{n}.example")
    assert len(store.sites) == 3


def test_a_page_waiting_for_its_sites_evidence_is_queued_again_once(redis_url) -> None:
    store = _store(redis_url)
    crawler = get_crawler(EcommerceSpider, settings_dict={"REDIS_URL": redis_url})
    crawler.stats.open_spider()
    middleware = EvidenceRetryMiddleware(crawler)
    response = _response()
    waiting = SimpleNamespace(evidence=PageEvidence(True), uncertain=True)
    assert store.observe(response, SITE, waiting)
    links = [Request("http://shop.example/p/2.html")]
    out = list(middleware.process_spider_output(response, links))
    assert out[0] is links[0]
    again = out[1]
    assert isinstance(again, Request) and again.url == response.url and again.dont_filter
    assert again.priority < 0 and again.meta[RETRIED_META_KEY]
    # read again: never deferred a second time
    retried = HtmlResponse(url=again.url, body=b"<html></html>", request=again)
    assert not store.observe(retried, SITE, waiting)
    assert list(middleware.process_spider_output(retried, [])) == []


@pytest.mark.parametrize("setting", ["SITE_EVIDENCE_ENABLED", "SITE_EVIDENCE_RETRY"])
def test_the_retry_steps_aside_when_switched_off(redis_url, setting: str) -> None:
    from scrapy.exceptions import NotConfigured

    crawler = get_crawler(EcommerceSpider, settings_dict={"REDIS_URL": redis_url, setting: False})
    with pytest.raises(NotConfigured):
        EvidenceRetryMiddleware(crawler)
