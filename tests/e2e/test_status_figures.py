"""``master status`` on a real worker: its pages and items keep up with the items stored."""

from __future__ import annotations

import json

import pytest

from .conftest import KEYS, wait_until

pytestmark = pytest.mark.workers


def test_worker_record_keeps_up_with_the_items_stored(crawl, shop_factory):
    shop = shop_factory(products=60, latency_ms=5)
    products = len(shop.catalog.product_paths())
    # a refresh period far longer than the test: only the records written when a batch
    # is stored can bring the worker's figures up to date
    crawl.start_worker("w1", WORKERSTATS_INTERVAL=600, MAX_IDLE_TIME_BEFORE_CLOSE=0)
    crawl.wait_running(1)
    crawl.seed(shop.url)

    def stored() -> int:
        return int(crawl.client.hget(KEYS.stats, "items_stored") or 0)

    wait_until(lambda: stored() == products, 180, f"{products} items stored")

    def status() -> dict:
        result = crawl.master("status", "--json")
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)

    def caught_up() -> bool:
        raw = crawl.client.hget(KEYS.workers, "w1")
        return raw is not None and json.loads(raw)["items"] == products

    # far less than WORKERSTATS_INTERVAL: only the refresh on a stored batch can do it
    wait_until(caught_up, 30, "the worker's record to show every stored item")
    now = status()
    (worker,) = now["workers"]
    assert now["items_stored"] == products
    assert worker["worker"] == "w1"
    assert worker["pages"] >= products  # product pages plus home and category pages
    assert worker["pages_per_min"] > 0

    assert crawl.workers[0].stop() == 0
    crawl.assert_clean_logs()
    record = json.loads(crawl.client.hget(KEYS.workers, "w1"))
    assert record["state"] == "finished"
    assert record["items"] == products
