"""The idle clock of a worker starts when it is open and has read Redis, not at start-up."""

from __future__ import annotations

import time

import pytest

from crawler.net.network import NetworkRule
from master.seeding import SeedLoader

from .conftest import KEYS, page_fetches

pytestmark = pytest.mark.workers


def test_a_worker_started_before_the_seed_waits_for_it(crawl, shop_factory):
    shop = shop_factory(products=20, latency_ms=5)
    started = time.monotonic()
    worker = crawl.start_worker("early", MAX_IDLE_TIME_BEFORE_CLOSE=6)
    crawl.wait_running(1)  # the spider is open
    opened = time.monotonic()
    # Seeded 3 s after the spider opened: 3 s before its 6 s once open run out (the
    # margin for a test that wakes late on a busy machine), but after 6 s counted from
    # before its start-up whenever that took over 3 s (2 to 5 s on a quiet machine).
    time.sleep(3)
    assert worker.running, f"closed before any seed:\n{worker.log()[-3000:]}"
    loader = SeedLoader(crawl.client, KEYS, rule=NetworkRule("127.0.0.1"))
    assert loader.load_lines([shop.url]).accepted == 1
    crawl.wait_workers()
    crawl.assert_clean_logs()

    fetched = page_fetches(shop)
    assert set(fetched) == shop.catalog.crawlable_paths(), worker.log()[-3000:]
    assert "Spider (early) ran for " in worker.log()
    print(f"start-up {opened - started:.1f} s (the test tells the two clocks apart above 3 s)")
