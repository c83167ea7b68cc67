"""The Bloom-filter dupefilter on a real Redis: sizes, atomic check-and-add, the scheduler."""

from __future__ import annotations

import hashlib

import pytest
from scrapy import Request
from scrapy.exceptions import NotConfigured
from scrapy.utils.test import get_crawler

from crawler.core.keys import CrawlKeys
from crawler.leasing.tracker import LeaseTracker
from crawler.scheduling.bloom import BloomFilter, BloomSize, bloom_status
from crawler.scheduling.scheduler import ReliableScheduler
from master.inspection import gather_status
from master.render import render_status
from tests.integration.test_scheduler import _Spider

KEYS = CrawlKeys("ecommerce")
BLOOM = "crawler.scheduling.bloom.BloomDupeFilter"


def _fp(text: str) -> bytes:
    return hashlib.sha1(text.encode()).digest()


def test_sizes_follow_capacity_and_error_rate():
    size = BloomSize.for_capacity(1_000_000, 0.001)
    assert size.hashes == 10
    assert 1.7 < size.bits / 8 / 1_000_000 < 1.9  # bytes per URL
    assert size.estimated_error_rate(1_000_000) == pytest.approx(0.001, rel=0.05)
    assert size.estimated_error_rate(0) == 0
    with pytest.raises(ValueError):
        BloomSize.for_capacity(1000, 1.5)


def test_check_and_add_is_exact_for_a_few_fingerprints(redis_client):
    bloom = BloomFilter(redis_client, KEYS, BloomSize.for_capacity(10_000, 0.001))
    assert bloom.check_and_add([_fp("a"), _fp("b"), _fp("a")]) == [True, True, False]
    assert bloom.check_and_add([_fp("b"), _fp("c")]) == [False, True]
    assert bloom.contains([_fp("a"), _fp("c"), _fp("zzz")]) == [True, True, False]
    status = bloom_status(redis_client, KEYS)
    assert status is not None
    assert status["count"] == 3 and status["hashes"] == 10
    assert status["memory_bytes"] >= status["bits"] // 8
    assert 0 < status["estimated_error_rate"] < 1e-6


def test_a_second_worker_uses_the_sizes_of_the_first(redis_client):
    first = BloomFilter(redis_client, KEYS, BloomSize.for_capacity(10_000, 0.001))
    second = BloomFilter(redis_client, KEYS, BloomSize.for_capacity(99_000, 0.01))
    assert second.size == first.size
    first.check_and_add([_fp("x")])
    assert second.check_and_add([_fp("x")]) == [False]


def _scheduler(redis_url, **extra):
    from crawler import settings as project_settings

    settings = {
        name: getattr(project_settings, name) for name in dir(project_settings) if name.isupper()
    }
    settings.update(
        REDIS_URL=redis_url,
        WORKER_ID="w1",
        SCHEDULER_IDLE_POLL_INTERVAL=0,
        DUPEFILTER_CLASS=BLOOM,
        BLOOM_CAPACITY=10_000,
        **extra,
    )
    crawler = get_crawler(_Spider, settings_dict=settings)
    if getattr(crawler, "extensions", None) is None:  # else the enabled tracker claimed it
        LeaseTracker.from_crawler(crawler)
    spider = _Spider.from_crawler(crawler)
    crawler.spider = spider
    scheduler = ReliableScheduler.from_crawler(crawler)
    scheduler.open(spider)
    return scheduler


def test_the_scheduler_filters_through_the_bloom_filter(redis_url, redis_client):
    scheduler = _scheduler(redis_url)
    spider = scheduler.spider
    for i in range(20):
        scheduler.enqueue_request(Request(f"http://shop.test/{i}", callback=spider.parse))
    scheduler.df._known.clear()  # forget locally: Redis must filter
    for i in range(20):
        scheduler.enqueue_request(Request(f"http://shop.test/{i}", callback=spider.parse))
    popped = {scheduler.next_request().url for _ in range(20)}
    assert popped == {f"http://shop.test/{i}" for i in range(20)}
    assert scheduler.next_request() is None
    assert not redis_client.exists(KEYS.dupefilter)  # no exact set
    assert bloom_status(redis_client, KEYS)["count"] == 20
    assert scheduler.stats.get_value("dupefilter/filtered") == 20
    scheduler.close("finished")


def test_the_bloom_filter_needs_batching(redis_url):
    with pytest.raises(NotConfigured):
        _scheduler(redis_url, SCHEDULER_FLUSH_INTERVAL=0)


def test_status_shows_the_bloom_filter(redis_url, redis_client):
    from master.cli import main

    bloom = BloomFilter(redis_client, KEYS, BloomSize.for_capacity(1_000_000, 0.001))
    bloom.check_and_add([_fp(str(i)) for i in range(1000)])
    status = gather_status(redis_client, KEYS)
    assert status["bloom"]["count"] == 1000
    assert status["bloom"]["memory_bytes"] >= 1_797_000
    text = render_status(status, redis_url)
    line = next(line for line in text.splitlines() if "Bloom dupefilter" in line)
    assert "1000 of 1000000 URLs" in line and "k=10" in line and "sized for 0.1 %" in line
    assert "1.8" in line.split(" MB")[0]  # 1.8 MB: the filter, allocated whole
    assert main(["status", "--redis-url", redis_url]) == 0


def test_status_without_bloom_filter(redis_client):
    assert gather_status(redis_client, KEYS)["bloom"] is None
