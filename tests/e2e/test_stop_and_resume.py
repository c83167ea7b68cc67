"""Stopping workers mid-crawl, pausing them, killing one, restarting Redis: nothing lost."""

from __future__ import annotations

import json
import signal
import sqlite3
import time

import pytest

from .conftest import KEYS, page_fetches, wait_until

pytestmark = pytest.mark.workers


def _stored_urls(crawl) -> set[str]:
    with sqlite3.connect(crawl.workdir / "products.sqlite3") as db:
        return {url for (url,) in db.execute("select url from products")}


def _product_urls(shop) -> set[str]:
    return {shop.url.rstrip("/") + path for path in shop.catalog.product_paths()}


def test_stopping_both_workers_and_starting_again_completes_the_crawl(crawl, shop_factory):
    shop = shop_factory(products=200, latency_ms=40)
    expected = shop.catalog.crawlable_paths()
    crawl.seed(shop.url)
    first = [crawl.start_worker("w1"), crawl.start_worker("w2")]
    wait_until(lambda: len(page_fetches(shop)) >= len(expected) // 3, 90, "a third of the shop")
    for worker in first:
        worker.process.send_signal(signal.SIGTERM if worker.worker_id == "w1" else signal.SIGINT)
    for worker in first:
        assert worker.wait(60) == 0, worker.log()[-3000:]
    fetched_before = page_fetches(shop)
    assert len(fetched_before) < len(expected), "the crawl ended before the workers were stopped"
    # the stop handed back every request the workers held
    assert not list(crawl.client.scan_iter(KEYS.inflight_pattern))
    assert crawl.client.zcard(KEYS.requests) > 0

    crawl.start_worker("w1")
    crawl.start_worker("w2")
    crawl.wait_workers()
    crawl.assert_clean_logs()

    fetched = page_fetches(shop)
    assert set(fetched) == expected, sorted(expected - set(fetched))[:10]
    assert {p: n for p, n in fetched.items() if n > 1} == {}
    assert _stored_urls(crawl) == _product_urls(shop)


def test_pause_stops_fetching_and_resume_goes_on(crawl, shop_factory):
    shop = shop_factory(products=150, latency_ms=30)
    expected = shop.catalog.crawlable_paths()
    crawl.seed(shop.url)
    crawl.start_worker("w1")
    crawl.start_worker("w2")
    wait_until(lambda: len(page_fetches(shop)) >= 20, 60, "20 pages")
    result = crawl.master("pause")
    assert result.returncode == 0, result.stderr
    time.sleep(1.5)  # in-flight requests finish
    during = len(shop.read_access_log())
    time.sleep(3)
    assert len(shop.read_access_log()) == during, "workers kept fetching while paused"
    assert all(worker.running for worker in crawl.workers), "paused workers must not exit"
    states = {json.loads(raw)["state"] for raw in crawl.client.hvals(KEYS.workers)}
    assert states == {"paused"}
    assert crawl.master("resume").returncode == 0
    crawl.wait_workers()
    fetched = page_fetches(shop)
    assert set(fetched) == expected
    assert {p: n for p, n in fetched.items() if n > 1} == {}


@pytest.mark.parametrize("flush_interval", ["0.005", "0"], ids=["batched", "plain"])
def test_a_killed_worker_loses_nothing(crawl, shop_factory, flush_interval):
    shop = shop_factory(products=150, latency_ms=40)
    expected = shop.catalog.crawlable_paths()
    crawl.seed(shop.url)
    victim = crawl.start_worker(
        "victim", CONCURRENT_REQUESTS=8, SCHEDULER_FLUSH_INTERVAL=flush_interval
    )
    crawl.start_worker("survivor", SCHEDULER_FLUSH_INTERVAL=flush_interval)
    wait_until(
        lambda: crawl.client.hlen(KEYS.inflight("victim")) > 0 and len(page_fetches(shop)) > 30,
        60,
        "the victim to hold leases",
    )
    victim.kill()  # SIGKILL: no chance to hand anything back
    crawl.wait_workers()
    survivor_log = crawl.workers[1].log()
    assert "Worker victim stopped beating" in survivor_log
    fetched = page_fetches(shop)
    assert set(fetched) == expected, sorted(expected - set(fetched))[:10]
    assert _stored_urls(crawl) == _product_urls(shop)
    assert not list(crawl.client.scan_iter(KEYS.inflight_pattern))


def test_a_redis_restart_does_not_lose_the_crawl(crawl, shop_factory, private_redis):
    shop = shop_factory(products=150, latency_ms=30)
    expected = shop.catalog.crawlable_paths()
    crawl.seed(shop.url)
    crawl.start_worker("w1")
    crawl.start_worker("w2")
    wait_until(lambda: len(page_fetches(shop)) >= 40, 60, "40 pages")
    private_redis.stop()  # SIGTERM: Redis flushes its append-only file
    time.sleep(1)
    private_redis.start()
    crawl.wait_workers()
    fetched = page_fetches(shop)
    assert set(fetched) == expected, sorted(expected - set(fetched))[:10]
    assert _stored_urls(crawl) == _product_urls(shop)
