"""Stopping workers mid-crawl, pausing them, killing one, restarting Redis: nothing lost."""

from __future__ import annotations

import json
import signal
import sqlite3
import time

import pytest

from crawler.scheduling.lanes import queued

from .conftest import CRAWL_TIMEOUT, KEYS, freeze_when, page_fetches, wait_until

pytestmark = pytest.mark.workers


def _stored_urls(crawl) -> set[str]:
    with sqlite3.connect(crawl.workdir / "products.sqlite3") as db:
        return {url for (url,) in db.execute("select url from products")}


def _product_urls(shop) -> set[str]:
    return {shop.url.rstrip("/") + path for path in shop.catalog.product_paths()}


def _quiet(shop, seconds: float):
    """A condition: the shop's access log has not grown for ``seconds``."""
    last = {"size": -1, "since": 0.0}

    def quiet() -> bool:
        size, now = len(shop.read_access_log()), time.monotonic()
        if size != last["size"]:
            last.update(size=size, since=now)
        return now - last["since"] >= seconds

    return quiet


@pytest.mark.timeout(600)  # two rounds of worker start-ups: minutes on a busy machine
def test_stopping_both_workers_and_starting_again_completes_the_crawl(crawl, shop_factory):
    shop = shop_factory(products=200, latency_ms=40)
    expected = shop.catalog.crawlable_paths()
    crawl.seed(shop.url)
    # both open before either crawls: a worker still starting would not stop cleanly
    crawl.pause()
    first = [crawl.start_worker("w1"), crawl.start_worker("w2")]
    crawl.wait_open(2)
    crawl.resume()
    wait_until(
        lambda: len(page_fetches(shop)) >= len(expected) // 3, CRAWL_TIMEOUT, "a third of the shop"
    )
    for worker in first:
        worker.process.send_signal(signal.SIGTERM if worker.worker_id == "w1" else signal.SIGINT)
    for worker in first:
        assert worker.wait(CRAWL_TIMEOUT) == 0, worker.log()[-3000:]
    fetched_before = page_fetches(shop)
    assert len(fetched_before) < len(expected), "the crawl ended before the workers were stopped"
    # the stop handed back every request the workers held
    assert not list(crawl.client.scan_iter(KEYS.inflight_pattern))
    assert queued(crawl.client, KEYS.requests) > 0

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
    wait_until(lambda: len(page_fetches(shop)) >= 20, CRAWL_TIMEOUT, "20 pages")
    crawl.pause()

    def paused() -> bool:
        records = [json.loads(raw) for raw in crawl.client.hvals(KEYS.workers)]
        return len(records) == 2 and {record["state"] for record in records} == {"paused"}

    # both workers saw the pause (their records say so), then what they were
    # downloading finished: the shop saw no request for a second
    wait_until(paused, CRAWL_TIMEOUT, "both workers paused")
    wait_until(_quiet(shop, 1.0), CRAWL_TIMEOUT, "the requests in flight to finish")
    during = len(shop.read_access_log())
    time.sleep(3)
    assert len(shop.read_access_log()) == during, "workers kept fetching while paused"
    assert all(worker.running for worker in crawl.workers), "paused workers must not exit"
    assert crawl.master("resume").returncode == 0
    crawl.wait_workers()
    fetched = page_fetches(shop)
    assert set(fetched) == expected
    assert {p: n for p, n in fetched.items() if n > 1} == {}


@pytest.mark.parametrize("flush_interval", ["0.005", "0"], ids=["batched", "plain"])
@pytest.mark.timeout(600)  # two rounds of worker start-ups
def test_a_killed_worker_loses_nothing(crawl, shop_factory, flush_interval):
    shop = shop_factory(products=150, latency_ms=40)
    expected = shop.catalog.crawlable_paths()
    crawl.seed(shop.url)
    # The victim crawls alone until it holds leases in the middle of the crawl, and
    # is killed then; the survivor starts after. (Started side by side, the two
    # finished their start-up seconds apart on a busy machine, and the survivor
    # crawled the whole shop before the victim took a request: the victim never
    # held a lease.) The test looks only while the victim is frozen, so it is killed
    # holding what the test saw.
    victim = crawl.start_worker(
        "victim", CONCURRENT_REQUESTS=8, SCHEDULER_FLUSH_INTERVAL=flush_interval
    )
    freeze_when(
        victim,
        lambda: crawl.client.hlen(KEYS.inflight("victim")) > 0 and len(page_fetches(shop)) > 30,
        CRAWL_TIMEOUT,
        "the victim to hold leases after 30 pages",
    )
    victim.kill()  # SIGKILL: no chance to hand anything back
    held = crawl.client.hlen(KEYS.inflight("victim"))
    assert held > 0
    assert len(page_fetches(shop)) < len(expected), "the victim crawled the whole shop"
    survivor = crawl.start_worker("survivor", SCHEDULER_FLUSH_INTERVAL=flush_interval)
    crawl.wait_workers()
    assert f"Worker victim stopped beating: requeued the {held} request(s)" in survivor.log()
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
    wait_until(lambda: len(page_fetches(shop)) >= 40, CRAWL_TIMEOUT, "40 pages")
    private_redis.stop()  # SIGTERM: Redis flushes its append-only file
    time.sleep(1)
    private_redis.start()
    crawl.wait_workers()
    fetched = page_fetches(shop)
    assert set(fetched) == expected, sorted(expected - set(fetched))[:10]
    assert _stored_urls(crawl) == _product_urls(shop)
