"""Two real workers crawl the real demo shop through one real Redis."""

from __future__ import annotations

import json
import sqlite3

import pytest

from crawler.scheduling.lanes import queued

from .conftest import KEYS, page_fetches, parsed_pages

pytestmark = pytest.mark.workers


# batched: links, leases and pops in one script call per batch (the default);
# plain: one script call per new link; bloom: batched, on the Bloom dupefilter
@pytest.mark.parametrize(
    "variant",
    [
        {"SCHEDULER_FLUSH_INTERVAL": "0.005"},
        {"SCHEDULER_FLUSH_INTERVAL": "0"},
        {"DUPEFILTER_CLASS": "crawler.scheduling.bloom.BloomDupeFilter", "BLOOM_CAPACITY": 10000},
    ],
    ids=["batched", "plain", "bloom"],
)
def test_two_workers_fetch_every_page_exactly_once(crawl, shop_factory, variant):
    shop = shop_factory(products=120, latency_ms=30)
    # both workers up before the seed, and a pace that one worker alone cannot keep,
    # so that the test shows them sharing the work; started during a pause, the first
    # open neither closes for idleness nor starts alone while the other is starting
    crawl.pause()
    for worker_id in ("w1", "w2"):
        crawl.start_worker(
            worker_id,
            CONCURRENT_REQUESTS=4,
            MAX_IDLE_TIME_BEFORE_CLOSE=5,
            **variant,
        )
    crawl.wait_open(2)
    crawl.seed(shop.url)
    crawl.resume()
    crawl.wait_workers()
    crawl.assert_clean_logs()

    fetched = page_fetches(shop)
    expected = shop.catalog.crawlable_paths()
    assert set(fetched) == expected, {
        "missed": sorted(expected - set(fetched))[:10],
        "unexpected": sorted(set(fetched) - expected)[:10],
    }
    twice = {path: n for path, n in fetched.items() if n > 1}
    assert not twice, f"fetched more than once: {twice}"

    # both workers did work, and together their pages are the shop's pages
    records = {
        worker.decode(): json.loads(raw)
        for worker, raw in crawl.client.hgetall(KEYS.workers).items()
    }
    assert set(records) == {"w1", "w2"}
    assert all(record["pages"] > 0 for record in records.values()), records
    assert sum(record["pages"] for record in records.values()) == parsed_pages(shop)
    assert all(record["state"] == "finished" for record in records.values())

    # one item per product page, stored once
    with sqlite3.connect(crawl.workdir / "products.sqlite3") as db:
        rows = db.execute("select url from products").fetchall()
        by_worker = dict(db.execute("select worker, count(*) from products group by worker"))
    product_urls = {shop.url.rstrip("/") + path for path in shop.catalog.product_paths()}
    assert {url for (url,) in rows} == product_urls
    assert len(rows) == len(product_urls)
    assert sum(record["items"] for record in records.values()) == len(product_urls)
    assert set(by_worker) == {"w1", "w2"}

    # the shop saw the user agent rotate
    agents = {entry.user_agent for entry in shop.read_access_log()}
    assert len(agents) >= 5, agents

    # the elapsed-time line of the contract, one per worker
    for worker in crawl.workers:
        assert f"Spider ({worker.worker_id}) ran for " in worker.log()
    # nothing left behind: no request queued or leased, no dead letter
    assert queued(crawl.client, KEYS.requests) == 0
    assert not list(crawl.client.scan_iter(KEYS.inflight_pattern))
    assert crawl.client.llen(KEYS.dead) == 0
