"""PostgreSQL and MongoDB together: a request is finished once BOTH have its item.

PostgreSQL is real; MongoDB is mongomock (no server runs here), whose write is
held back to show that the lease waits for it.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from typing import Any

import mongomock
import psycopg2
import pytest
import redis

from crawler.core.keys import CrawlKeys
from crawler.leasing.tracker import LeaseTracker
from crawler.pipelines.mongo import MongoUpsertPipeline
from crawler.pipelines.postgres import PostgresUpsertPipeline
from crawler.pipelines.product_record import ProductRecord
from tests.support.mongofake import install_pymongo_compat
from tests.support.products import EcommerceSpider, StoredRecorder, make_crawler, make_product, run

KEYS = CrawlKeys()
LEASE = "r|0|0123456789abcdef"


@pytest.fixture
def mongomock_client() -> Iterator[mongomock.MongoClient]:
    undo = install_pymongo_compat()
    yield mongomock.MongoClient()
    undo()


async def wait_for(predicate: Any, message: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for: {message}"
        await asyncio.sleep(0.02)


def test_a_lease_waits_for_every_store(
    postgres_dsn: str, redis_url: str, redis_client: redis.Redis, mongomock_client: Any
) -> None:
    mongo_may_write = threading.Event()

    class HeldBackMongoPipeline(MongoUpsertPipeline):
        client_factory = staticmethod(lambda uri: mongomock_client)

        def write_records(self, records: list[ProductRecord]) -> dict[str, str]:
            assert mongo_may_write.wait(60), "the test never let MongoDB write"
            return super().write_records(records)

    crawler = make_crawler(
        {
            "POSTGRES_DSN": postgres_dsn,
            "MONGO_URI": "mongodb://mongo.example:27017",
            "REDIS_URL": redis_url,
            "WORKER_ID": "w1",
            "STORE_FLUSH_INTERVAL": 0.05,
            "EXTENSIONS": {"crawler.leasing.tracker.LeaseTracker": 100},
        }
    )
    tracker = LeaseTracker.of(crawler)
    postgres = PostgresUpsertPipeline.from_crawler(crawler)
    mongo = HeldBackMongoPipeline.from_crawler(crawler)
    assert tracker.stores == {"postgres", "mongo"}
    recorder = StoredRecorder(crawler)

    # a page under lease that yielded one product, its output all taken
    redis_client.hset(KEYS.inflight("w1"), LEASE, b"{}")
    item = make_product(1)
    tracker.item_pending(item, LEASE)
    tracker.output_done(LEASE)

    def leased() -> bool:
        tracker.flush()
        return bool(redis_client.hexists(KEYS.inflight("w1"), LEASE))

    async def scenario() -> None:
        spider = EcommerceSpider()
        await postgres.open_spider(spider)
        await mongo.open_spider(spider)
        assert postgres.process_item(item) is item
        assert mongo.process_item(item) is item
        await wait_for(lambda: recorder.items == [item], "PostgreSQL has the item")
        await asyncio.sleep(0.3)  # a few flush intervals: MongoDB is still held back
        assert recorder.items == [item]
        assert leased(), "the lease was finished while MongoDB had not written the item"
        mongo_may_write.set()
        await wait_for(lambda: len(recorder.items) == 2, "MongoDB has the item")
        assert not leased(), "the lease outlived the last store's write"
        await mongo.close_spider()
        await postgres.close_spider()

    try:
        run(scenario())
    finally:
        mongo_may_write.set()
    with psycopg2.connect(postgres_dsn) as conn, conn.cursor() as cur:
        cur.execute("SELECT url FROM products")
        assert cur.fetchall() == [(item["url"],)]
    assert mongomock_client["crawler"]["products"].count_documents({"url": item["url"]}) == 1
    # one product in two stores: the crawl-wide count (master status) says 1, not 2
    assert postgres.counts_crawl_wide and not mongo.counts_crawl_wide
    assert redis_client.hget(KEYS.stats, "items_stored") == b"1"
    assert crawler.stats.get_value("store/items_stored") == 2  # each store's own writes
    location = crawler.stats.get_value("store/location")  # the worker record's "store"
    assert location.startswith("postgresql://") and " + mongodb://" in location
