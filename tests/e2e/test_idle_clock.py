"""The idle clock of a worker starts when it is open and has read Redis, not at start-up."""

from __future__ import annotations

import time

import pytest

from crawler.network import NetworkRule
from master.seeding import SeedLoader

from .conftest import KEYS, page_fetches

pytestmark = pytest.mark.workers


def test_a_worker_started_before_the_seed_waits_for_it(crawl, shop_factory):
    shop = shop_factory(products=20, latency_ms=5)
    worker = crawl.start_worker("early", MAX_IDLE_TIME_BEFORE_CLOSE=5)
    crawl.wait_running(1, timeout=60)  # the spider is open
    # Seeded 3.5 s after the spider opened: within its 5 s once open, but after
    # 5 s counted from before its start-up (which takes seconds).
    time.sleep(3.5)
    assert worker.running, f"closed before any seed:\n{worker.log()[-3000:]}"
    loader = SeedLoader(crawl.client, KEYS, rule=NetworkRule("127.0.0.1"))
    assert loader.load_lines([shop.url]).accepted == 1
    crawl.wait_workers()
    crawl.assert_clean_logs()

    fetched = page_fetches(shop)
    assert set(fetched) == shop.catalog.crawlable_paths(), worker.log()[-3000:]
    assert "Spider (early) ran for " in worker.log()
