"""Idle workers wake when work arrives (crawler/scheduling/wakeup.py), with real workers.

An idle worker whose own looks at Redis are too rare to find anything (its idle
poll once an hour) takes a request pushed into the queue at once: the push woke
it (its ``scheduler/wakeups`` stat says so). Two workers started together on a
crawl of a few seconds each fetch a fair share of it: the one that takes the seed
does not take the crawl.
"""

from __future__ import annotations

import json
import re
import time

import pytest

from crawler.net.network import NetworkRule
from crawler.scheduling.lanes import push_requests, queued
from master.requeue import encode, recrawl_request
from master.seeding import SeedLoader

from .conftest import CRAWL_TIMEOUT, KEYS, page_fetches, parsed_pages, wait_until

pytestmark = pytest.mark.workers


def _stat(log: str, name: str) -> int:
    found = re.search(rf"'{re.escape(name)}': (\d+)", log)
    return int(found.group(1)) if found else 0


def test_an_idle_worker_takes_a_pushed_request_when_it_is_pushed(crawl, shop_factory):
    shop = shop_factory(products=3)
    worker = crawl.start_worker(
        "idle",
        MAX_IDLE_TIME_BEFORE_CLOSE=0,  # waits for work as long as it runs
        SCHEDULER_IDLE_POLL_INTERVAL=3600,  # its own looks at Redis: too rare to matter
        SCHEDULER_IDLE_POLL_MAX=3600,
    )
    crawl.wait_running(1)
    time.sleep(1)  # idle for a while: starved, listening
    url = shop.url.rstrip("/") + sorted(shop.catalog.product_paths())[0]
    payload = encode(recrawl_request(url))
    pushed = time.monotonic()
    push_requests(crawl.client, KEYS.requests, {payload: 0})
    wait_until(lambda: queued(crawl.client, KEYS.requests) == 0, CRAWL_TIMEOUT, "the request taken")
    taken = time.monotonic() - pushed
    wait_until(lambda: page_fetches(shop), CRAWL_TIMEOUT, "the page fetched")
    worker.stop()
    crawl.assert_clean_logs()
    log = worker.log()
    assert _stat(log, "scheduler/wakeups") >= 1, log[-4000:]
    print(f"pushed to taken: {taken * 1000:.0f} ms (the worker's idle poll: once an hour)")


def test_two_workers_started_together_share_a_short_crawl(crawl, shop_factory):
    shop = shop_factory(products=200)
    crawl.pause()  # both open before the seed: they start together
    for worker_id in ("w1", "w2"):
        crawl.start_worker(worker_id, MAX_IDLE_TIME_BEFORE_CLOSE=3)
    crawl.wait_open(2)
    loader = SeedLoader(crawl.client, KEYS, rule=NetworkRule("127.0.0.1"))
    assert loader.load_lines([shop.url]).accepted == 1
    crawl.resume()
    crawl.wait_workers()
    crawl.assert_clean_logs()

    fetched = page_fetches(shop)
    assert set(fetched) == shop.catalog.crawlable_paths()
    assert max(fetched.values()) == 1
    records = {
        worker.decode(): json.loads(raw)
        for worker, raw in crawl.client.hgetall(KEYS.workers).items()
    }
    pages = {worker: record["pages"] for worker, record in records.items()}
    total = parsed_pages(shop)
    assert sum(pages.values()) == total
    active = max(record["elapsed"] - record["idle_tail"] for record in records.values())
    print(f"pages per worker: {pages} of {total}, in {active:.1f} s of crawling")
    # a fair share: neither worker took the crawl (an even split is 50 % each)
    assert all(count >= total / 4 for count in pages.values()), pages
