"""MongoUpsertPipeline on mongomock: the same semantics as PostgreSQL, without a server.

mongomock 4.3 predates pymongo 4.20, whose ``UpdateOne`` passes ``sort=`` to the
bulk builder; the ``mongomock_client`` fixture teaches mongomock to accept it.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import mongomock
import pymongo.errors
import pytest
import redis
from bson import Decimal128
from scrapy.exceptions import NotConfigured

from crawler.pipelines.errors import ErrorKind, StoreUnavailable
from crawler.pipelines.mongo import MongoUpsertPipeline, to_decimal128
from tests.support.mongofake import install_pymongo_compat
from tests.support.products import (
    EcommerceSpider,
    StoredRecorder,
    make_crawler,
    make_product,
    run,
)


@pytest.fixture
def mongomock_client() -> Iterator[mongomock.MongoClient]:
    undo = install_pymongo_compat()
    yield mongomock.MongoClient()
    undo()


def make_pipeline(
    client: Any, redis_url: str = "redis://127.0.0.1:1/0", **settings: Any
) -> MongoUpsertPipeline:
    class MockedMongoPipeline(MongoUpsertPipeline):
        client_factory = staticmethod(lambda uri: client)

    crawler = make_crawler(
        {
            "MONGO_URI": "mongodb://mongo.example:27017",
            "MONGO_DATABASE": "shop",
            "REDIS_URL": redis_url,
            **settings,
        }
    )
    pipeline = MockedMongoPipeline.from_crawler(crawler)
    assert isinstance(pipeline, MongoUpsertPipeline)
    return pipeline


@pytest.fixture
def pipeline(mongomock_client: mongomock.MongoClient) -> MongoUpsertPipeline:
    return make_pipeline(mongomock_client)


def test_steps_aside_without_uri() -> None:
    with pytest.raises(NotConfigured):
        MongoUpsertPipeline.from_crawler(make_crawler({}))


def test_location_has_no_password() -> None:
    crawler = make_crawler({"MONGO_URI": "mongodb://app:pw@m1:27017,m2/?replicaSet=rs"})
    pipeline = MongoUpsertPipeline.from_crawler(crawler)
    assert isinstance(pipeline, MongoUpsertPipeline)
    assert pipeline.store_location() == "mongodb://app:***@m1:27017,m2/crawler"


def test_unique_index_on_url(pipeline: MongoUpsertPipeline, mongomock_client: Any) -> None:
    pipeline.store_batch([make_product(1)])
    info = mongomock_client.shop.products.index_information()
    assert info["url_unique"]["unique"] is True
    assert info["url_unique"]["key"] == [("url", 1)]


def test_the_same_products_twice_give_one_document_each(
    pipeline: MongoUpsertPipeline, mongomock_client: Any
) -> None:
    products = [make_product(i) for i in range(50)]
    assert pipeline.store_batch(products).stored == list(range(50))
    assert pipeline.store_batch([dict(p) for p in products]).stored == list(range(50))
    db = mongomock_client.shop
    assert db.products.count_documents({}) == 50
    assert len(db.products.distinct("url")) == 50
    assert db.price_history.count_documents({}) == 50
    document = db.products.find_one({"url": products[3]["url"]})
    assert document["price"] == Decimal128("13.99")
    assert document["name"] == "Product 3" and document["images"] == products[3]["images"]
    assert {"first_seen", "last_seen", "worker"} <= set(document)


def test_changed_price_updates_and_adds_history(
    pipeline: MongoUpsertPipeline, mongomock_client: Any
) -> None:
    db = mongomock_client.shop
    url = make_product(1)["url"]
    pipeline.store_batch([make_product(1, price=Decimal("19.90"))])
    first = db.products.find_one({"url": url})
    pipeline.store_batch([make_product(1, price=Decimal("19.9"))])  # same number
    pipeline.store_batch([make_product(1, price=Decimal("17.50"))])
    pipeline.store_batch([make_product(1, price=Decimal("17.50"))])
    pipeline.store_batch([make_product(1, price=None, currency=None, availability="OutOfStock")])
    latest = db.products.find_one({"url": url})
    assert latest["first_seen"] == first["first_seen"]
    assert latest["last_seen"] > first["last_seen"]
    assert latest["price"] is None and latest["availability"] == "OutOfStock"
    history = [
        (h["price"], h["availability"]) for h in db.price_history.find({"url": url}).sort("_id")
    ]
    assert history == [
        (Decimal128("19.90"), "InStock"),
        (Decimal128("17.50"), "InStock"),
        (None, "OutOfStock"),
    ]
    assert db.products.count_documents({}) == 1


def test_a_change_by_another_worker_between_read_and_write(
    pipeline: MongoUpsertPipeline, mongomock_client: Any
) -> None:
    db = mongomock_client.shop
    pipeline.store_batch([make_product(1, price=Decimal("10")), make_product(2)])
    real_bulk_write = db.products.bulk_write
    calls = []

    def bulk_write_after_another_worker(operations: Any, **kwargs: Any) -> Any:
        if not calls:  # another worker changes product 1 to 12 right after our read
            db.products.update_one(
                {"url": make_product(1)["url"]}, {"$set": {"price": Decimal128("12")}}
            )
            db.price_history.insert_one({"url": make_product(1)["url"], "price": Decimal128("12")})
        calls.append(len(operations))
        return real_bulk_write(operations, **kwargs)

    pipeline.products = type("Wrapped", (), {})()
    pipeline.products.find = db.products.find
    pipeline.products.bulk_write = bulk_write_after_another_worker
    result = pipeline.store_batch([make_product(1, price=Decimal("12")), make_product(2)])
    assert result.stored == [0, 1]
    assert calls == [2, 1]  # the changed row was read and written again
    prices = [
        h["price"] for h in db.price_history.find({"url": make_product(1)["url"]}).sort("_id")
    ]
    # 10 (first sight), 12 (the other worker); ours saw 12 already: no third entry
    assert prices == [Decimal128("10"), Decimal128("12")]


def test_history_is_not_lost_when_the_connection_drops_between_the_writes(
    pipeline: MongoUpsertPipeline, mongomock_client: Any
) -> None:
    db = mongomock_client.shop
    pipeline.store_batch([make_product(1)])
    real_insert_many = db.price_history.insert_many
    failures = [pymongo.errors.AutoReconnect("connection reset")]

    def insert_many(documents: Any, **kwargs: Any) -> Any:
        if failures:
            real_insert_many(documents[:1], **kwargs)  # half sent when it dropped
            raise failures.pop()
        return real_insert_many(documents, **kwargs)

    pipeline.history = type("Wrapped", (), {"insert_many": staticmethod(insert_many)})()
    changed = [make_product(1, price=Decimal("1")), make_product(2)]
    with pytest.raises(StoreUnavailable):
        pipeline.store_batch(changed)
    assert pipeline.history is None  # disconnected; the retry reconnects
    assert pipeline.store_batch(changed).stored == [0, 1]
    history = [(h["url"], h["price"]) for h in db.price_history.find().sort("_id")]
    assert history == [  # product 1: first sight, its change; product 2: first sight
        (make_product(1)["url"], Decimal128("11.99")),
        (make_product(1)["url"], Decimal128("1")),
        (make_product(2)["url"], Decimal128("12.99")),
    ]


def test_bad_rows_are_kept_and_the_rest_stored(
    mongomock_client: Any, redis_url: str, redis_client: redis.Redis
) -> None:
    pipeline = make_pipeline(mongomock_client, redis_url, STORE_BATCH_SIZE=50)
    recorder = StoredRecorder(pipeline.crawler)
    batch = [make_product(i) for i in range(50)]
    batch[7]["name"] = "lone surrogate \ud800"
    batch[30]["price"] = Decimal("NaN")

    async def scenario() -> None:
        await pipeline.open_spider(EcommerceSpider())
        for item in batch:
            pipeline.process_item(item)
        await pipeline.close_spider()

    run(scenario())
    assert mongomock_client.shop.products.count_documents({}) == 48
    assert sorted(map(id, recorder.items)) == sorted(map(id, batch))
    urls = {json.loads(raw)["url"] for raw in redis_client.lrange("ecommerce:invalid", 0, -1)}
    assert urls == {batch[7]["url"], batch[30]["url"]}
    assert redis_client.hget("ecommerce:stats", "items_stored") == b"48"
    assert redis_client.hget("ecommerce:stats", "items_invalid") == b"2"


def test_rows_refused_by_the_server_do_not_block_the_batch(
    pipeline: MongoUpsertPipeline, mongomock_client: Any
) -> None:
    db = mongomock_client.shop
    pipeline.store_batch([make_product(0)])
    real_bulk_write = db.products.bulk_write

    def bulk_write(operations: Any, **kwargs: Any) -> Any:
        # the server refuses the second operation (e.g. a document too large)
        real_bulk_write([op for i, op in enumerate(operations) if i != 1], **kwargs)
        raise pymongo.errors.BulkWriteError(
            {
                "writeErrors": [{"index": 1, "code": 10334, "errmsg": "object too large"}],
                "writeConcernErrors": [],
            }
        )

    pipeline.products = type(
        "Wrapped", (), {"find": db.products.find, "bulk_write": staticmethod(bulk_write)}
    )()
    result = pipeline.store_batch([make_product(i) for i in range(3)])
    assert result.stored == [0, 2]
    assert result.rejected == [(1, "MongoDB refused the document: object too large")]


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (pymongo.errors.ServerSelectionTimeoutError("no servers"), ErrorKind.OUTAGE),
        (pymongo.errors.AutoReconnect("reset"), ErrorKind.OUTAGE),
        (pymongo.errors.NetworkTimeout("timeout"), ErrorKind.OUTAGE),
        (pymongo.errors.DocumentTooLarge("too large"), ErrorKind.DATA),
        (UnicodeEncodeError("utf-8", "\ud800", 0, 1, "surrogate"), ErrorKind.DATA),
        (pymongo.errors.OperationFailure("unknown"), None),
    ],
)
def test_error_kinds(
    pipeline: MongoUpsertPipeline, error: Exception, kind: ErrorKind | None
) -> None:
    assert pipeline.error_kind(error) is kind


def test_server_away_keeps_the_batch(mongomock_client: Any) -> None:
    pipeline = make_pipeline(mongomock_client)
    pipeline.store_batch([make_product(1)])

    def away(*args: Any, **kwargs: Any) -> Any:
        raise pymongo.errors.ServerSelectionTimeoutError("no servers available")

    pipeline.products = type("Wrapped", (), {"find": staticmethod(away)})()
    with pytest.raises(StoreUnavailable):
        pipeline.store_batch([make_product(2)])
    assert pipeline.products is None  # disconnected: the retry reconnects
    assert pipeline.store_batch([make_product(2)]).stored == [0]


def test_decimal128_keeps_the_exact_price() -> None:
    assert to_decimal128(Decimal("19.99")) == Decimal128("19.99")
    assert to_decimal128(None) is None
    long = to_decimal128(Decimal("1." + "3" * 40))
    assert long is not None and len(str(long.to_decimal()).replace(".", "")) == 34


def test_first_seen_is_set_on_insert_only(
    pipeline: MongoUpsertPipeline, mongomock_client: Any
) -> None:
    pipeline.store_batch([make_product(1)])
    first = mongomock_client.shop.products.find_one()["first_seen"]
    pipeline.store_batch([make_product(1, price=Decimal("2"))])
    again = mongomock_client.shop.products.find_one()["first_seen"]
    assert again == first and isinstance(again, dt.datetime)
