"""MongoUpsertPipeline against a real MongoDB: runs when ``MONGO_URI`` is set, skipped otherwise.

Each test uses a database of its own (``crawler_test_<random>``), dropped afterwards.
"""

from __future__ import annotations

import os
import threading
import uuid
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pymongo
import pytest
from bson import Decimal128

from crawler.pipelines.mongo import MongoUpsertPipeline
from tests.support.products import (
    EcommerceSpider,
    StoredRecorder,
    make_crawler,
    make_product,
    run,
)

MONGO_URI = os.environ.get("MONGO_URI", "")

pytestmark = [
    pytest.mark.mongo_server,
    pytest.mark.skipif(not MONGO_URI, reason="MONGO_URI is not set: no MongoDB server to test"),
]


@pytest.fixture
def database() -> Iterator[str]:
    name = f"crawler_test_{uuid.uuid4().hex[:12]}"
    yield name
    client: Any = pymongo.MongoClient(MONGO_URI, serverSelectionTimeoutMS=5000)
    client.drop_database(name)
    client.close()


def make_pipeline(database: str, redis_url: str, **settings: Any) -> MongoUpsertPipeline:
    crawler = make_crawler(
        {"MONGO_URI": MONGO_URI, "MONGO_DATABASE": database, "REDIS_URL": redis_url, **settings}
    )
    pipeline = MongoUpsertPipeline.from_crawler(crawler)
    assert isinstance(pipeline, MongoUpsertPipeline)
    return pipeline


def test_upserts_history_and_signal(database: str, redis_url: str) -> None:
    pipeline = make_pipeline(database, redis_url, STORE_BATCH_SIZE=25)
    recorder = StoredRecorder(pipeline.crawler)
    items = [make_product(i) for i in range(50)]
    again = [make_product(i) for i in range(50)]
    again[0]["price"] = Decimal("1.00")
    again[1]["name"] = "lone surrogate \ud800"

    async def scenario() -> None:
        await pipeline.open_spider(EcommerceSpider())
        for item in items + again:
            pipeline.process_item(item)
        await pipeline.close_spider()

    run(scenario())
    assert len(recorder.items) == 100
    client: Any = pymongo.MongoClient(MONGO_URI)
    db = client[database]
    assert db.products.count_documents({}) == 50
    assert db.products.index_information()["url_unique"]["unique"] is True
    assert db.price_history.count_documents({}) == 51
    first = db.products.find_one({"url": items[0]["url"]})
    assert first["price"] == Decimal128("1.00") and first["first_seen"] < first["last_seen"]
    assert db.products.find_one({"url": items[1]["url"]})["name"] == "Product 1"
    client.close()


def test_two_workers_writing_the_same_urls_at_once(database: str, redis_url: str) -> None:
    workers = [make_pipeline(database, redis_url, WORKER_ID=f"w{n}") for n in range(2)]
    errors: list[BaseException] = []
    start = threading.Barrier(2)

    def work(pipeline: MongoUpsertPipeline, offset: int) -> None:
        try:
            start.wait()
            for round_ in range(8):
                price = Decimal(10 + (round_ + offset) % 2)
                products = [make_product(i, price=price) for i in range(100)]
                for k in range(0, 100, 25):
                    assert pipeline.store_batch(products[k : k + 25]).rejected == []
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)
        finally:
            pipeline.disconnect()

    threads = [threading.Thread(target=work, args=(p, n)) for n, p in enumerate(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert errors == []
    client: Any = pymongo.MongoClient(MONGO_URI)
    db = client[database]
    assert db.products.count_documents({}) == 100
    history: dict[str, list[Any]] = {}
    for entry in db.price_history.find().sort([("seen_at", 1), ("_id", 1)]):
        history.setdefault(entry["url"], []).append(entry["price"])
    assert len(history) == 100
    for url, prices in history.items():
        assert all(a != b for a, b in zip(prices, prices[1:], strict=False)), prices
        assert prices[-1] == db.products.find_one({"url": url})["price"]
    client.close()
