"""PostgresUpsertPipeline against a real PostgreSQL (a fresh database per test)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import psycopg2
import pytest
import redis
from scrapy.exceptions import NotConfigured

from crawler.core.flow import FlowControl
from crawler.pipelines.postgres import PostgresUpsertPipeline
from tests.support.products import (
    EcommerceSpider,
    StoredRecorder,
    make_crawler,
    make_product,
    run,
)


def make_pipeline(postgres_dsn: str, redis_url: str, **settings: Any) -> PostgresUpsertPipeline:
    crawler = make_crawler({"POSTGRES_DSN": postgres_dsn, "REDIS_URL": redis_url, **settings})
    pipeline = PostgresUpsertPipeline.from_crawler(crawler)
    assert isinstance(pipeline, PostgresUpsertPipeline)
    return pipeline


@pytest.fixture
def pipeline(postgres_dsn: str, redis_url: str) -> Iterator[PostgresUpsertPipeline]:
    pipeline = make_pipeline(postgres_dsn, redis_url)
    yield pipeline
    pipeline.disconnect()


@pytest.fixture
def db(postgres_dsn: str) -> Iterator[Any]:
    conn = psycopg2.connect(postgres_dsn)
    conn.autocommit = True
    yield conn
    conn.close()


def query(db: Any, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    with db.cursor() as cur:
        cur.execute(sql, args)
        return list(cur.fetchall())


def test_steps_aside_without_dsn(redis_url: str) -> None:
    with pytest.raises(NotConfigured):
        PostgresUpsertPipeline.from_crawler(make_crawler({"REDIS_URL": redis_url}))


def test_location_has_no_password(redis_url: str) -> None:
    pipeline = make_pipeline("postgresql://crawler:s3cret@db.example:5432/shop", redis_url)
    assert pipeline.store_location() == "postgresql://crawler:***@db.example:5432/shop"


def test_tables_are_created_on_first_use(pipeline: PostgresUpsertPipeline, db: Any) -> None:
    assert query(db, "SELECT to_regclass('products')") == [(None,)]
    pipeline.store_batch([make_product(1)])
    columns = dict(
        query(
            db,
            "SELECT column_name, data_type FROM information_schema.columns "
            "WHERE table_name = 'products'",
        )
    )
    assert columns == {
        "url": "text",
        "name": "text",
        "price": "numeric",
        "currency": "text",
        "availability": "text",
        "sku": "text",
        "worker": "text",
        "data": "jsonb",
        "first_seen": "timestamp with time zone",
        "last_seen": "timestamp with time zone",
    }
    indexes = {name for (name,) in query(db, "SELECT indexname FROM pg_indexes")}
    assert {"products_pkey", "product_price_history_url_seen_at"} <= indexes


def test_the_same_products_twice_give_one_row_each(
    pipeline: PostgresUpsertPipeline, db: Any
) -> None:
    products = [make_product(i) for i in range(50)]
    first = pipeline.store_batch(products)
    second = pipeline.store_batch([dict(p) for p in products])
    assert first.stored == second.stored == list(range(50))
    assert first.rejected == second.rejected == []
    assert query(db, "SELECT count(*), count(DISTINCT url) FROM products") == [(50, 50)]
    assert query(db, "SELECT count(*) FROM product_price_history") == [(50,)]
    url, name, price, currency, data = query(
        db,
        "SELECT url, name, price, currency, data FROM products WHERE url = %s",
        products[7]["url"],
    )[0]
    assert (name, price, currency) == ("Product 7", Decimal("17.99"), "EUR")
    assert data["price"] == 17.99 and data["images"] == products[7]["images"]


def test_changed_price_updates_the_row_and_adds_history(
    pipeline: PostgresUpsertPipeline, db: Any
) -> None:
    url = make_product(1)["url"]
    pipeline.store_batch([make_product(1, price=Decimal("19.90"))])
    [(first_seen, last_seen_1)] = query(
        db, "SELECT first_seen, last_seen FROM products WHERE url = %s", url
    )

    time.sleep(0.01)
    pipeline.store_batch([make_product(1, price=Decimal("19.9"))])  # same number
    assert query(db, "SELECT count(*) FROM product_price_history") == [(1,)]

    time.sleep(0.01)
    pipeline.store_batch([make_product(1, price=Decimal("17.50"), name="Renamed")])
    [(first_seen_2, last_seen_2, price, name)] = query(
        db, "SELECT first_seen, last_seen, price, name FROM products WHERE url = %s", url
    )
    assert first_seen_2 == first_seen
    assert last_seen_2 > last_seen_1
    assert (price, name) == (Decimal("17.50"), "Renamed")

    pipeline.store_batch([make_product(1, price=Decimal("17.50"), availability="OutOfStock")])
    pipeline.store_batch([make_product(1, price=None, currency=None, availability="OutOfStock")])
    pipeline.store_batch([make_product(1, price=None, currency=None, availability="OutOfStock")])
    history = query(
        db,
        "SELECT price, currency, availability FROM product_price_history "
        "WHERE url = %s ORDER BY id",
        url,
    )
    assert history == [
        (Decimal("19.90"), "EUR", "InStock"),
        (Decimal("17.50"), "EUR", "InStock"),
        (Decimal("17.50"), "EUR", "OutOfStock"),
        (None, None, "OutOfStock"),
    ]


def test_unchanged_recrawl_adds_no_history(pipeline: PostgresUpsertPipeline, db: Any) -> None:
    products = [make_product(i) for i in range(20)]
    for _ in range(3):
        pipeline.store_batch(products)
    assert query(db, "SELECT count(*) FROM product_price_history") == [(20,)]


def test_a_url_twice_in_one_batch_is_one_row(pipeline: PostgresUpsertPipeline, db: Any) -> None:
    batch = [
        make_product(1, price=Decimal("5")),
        make_product(2),
        make_product(1, price=Decimal("6")),
    ]
    result = pipeline.store_batch(batch)
    assert result.stored == [0, 1, 2]
    assert query(db, "SELECT price FROM products WHERE url = %s", batch[0]["url"]) == [
        (Decimal("6"),)
    ]


def test_bad_rows_are_kept_in_redis_and_the_rest_is_stored(
    postgres_dsn: str, redis_url: str, redis_client: redis.Redis, db: Any
) -> None:
    pipeline = make_pipeline(postgres_dsn, redis_url, STORE_BATCH_SIZE=100, WORKER_ID="w-pg")
    recorder = StoredRecorder(pipeline.crawler)
    batch = [make_product(i) for i in range(100)]
    batch[10]["name"] = "NUL \x00 inside"  # refused by PostgreSQL text
    batch[40]["description"] = "lone surrogate \ud800"  # cannot be encoded
    batch[70]["price"] = Decimal("NaN")  # not a price
    batch[90]["price"] = float("inf")

    async def scenario() -> None:
        await pipeline.open_spider(EcommerceSpider())
        for item in batch:
            pipeline.process_item(item)
        await pipeline.close_spider()

    run(scenario())

    assert query(db, "SELECT count(*) FROM products") == [(96,)]
    stored = {url for (url,) in query(db, "SELECT url FROM products")}
    assert batch[10]["url"] not in stored and batch[40]["url"] not in stored
    # every item, stored or kept as invalid, is acknowledged exactly once
    assert [id(item) for item in recorder.items] == [id(item) for item in batch]

    records = [json.loads(raw) for raw in redis_client.lrange("ecommerce:invalid", 0, -1)]
    assert sorted(r["url"] for r in records) == sorted(batch[i]["url"] for i in (10, 40, 70, 90))
    for record in records:
        assert record["worker"] == "w-pg"
        [error] = record["errors"]
        assert error["field"] is None and error["message"].startswith("storage rejected: ")
    assert redis_client.hget("ecommerce:stats", "items_invalid") == b"4"
    assert redis_client.hget("ecommerce:stats", "items_stored") == b"96"
    stats = pipeline.crawler.stats.get_stats()
    assert stats["store/items_stored"] == 96
    assert stats["store/items_rejected"] == 4


def test_batches_are_written_when_full_and_on_the_timer(
    postgres_dsn: str, redis_url: str, redis_client: redis.Redis, db: Any
) -> None:
    pipeline = make_pipeline(
        postgres_dsn, redis_url, STORE_BATCH_SIZE=100, STORE_FLUSH_INTERVAL=0.1
    )
    recorder = StoredRecorder(pipeline.crawler)
    items = [make_product(i) for i in range(250)]

    async def scenario() -> None:
        import asyncio

        await pipeline.open_spider(EcommerceSpider())
        assert pipeline.crawler.stats.get_value("store/location").endswith(
            postgres_dsn.rsplit("/", 1)[1]
        )
        for item in items:
            assert pipeline.process_item(item) is item  # returned at once
        deadline = time.monotonic() + 5
        while len(recorder.items) < 250 and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        # all written by full batches and the timer, before closing
        assert len(recorder.items) == 250
        assert [len(call) for call in recorder.calls] == [100, 100, 50]
        await pipeline.close_spider()

    run(scenario())
    assert query(db, "SELECT count(*) FROM products") == [(250,)]
    assert redis_client.hget("ecommerce:stats", "items_stored") == b"250"
    assert pipeline.crawler.stats.get_value("store/items_stored") == 250
    assert not FlowControl.of(pipeline.crawler).held


def test_two_workers_writing_the_same_urls_at_once(
    postgres_dsn: str, redis_url: str, db: Any
) -> None:
    workers = [make_pipeline(postgres_dsn, redis_url, WORKER_ID=f"w{n}") for n in range(2)]
    errors: list[BaseException] = []
    start = threading.Barrier(len(workers))

    def work(pipeline: PostgresUpsertPipeline, offset: int) -> None:
        try:
            start.wait()
            for round_ in range(10):
                # the same 200 urls; prices alternate between rounds and workers
                price = Decimal(10 + (round_ + offset) % 2)
                products = [make_product(i, price=price) for i in range(200)]
                for k in range(0, 200, 25):
                    result = pipeline.store_batch(products[k : k + 25])
                    assert result.rejected == []
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)
        finally:
            pipeline.disconnect()

    threads = [threading.Thread(target=work, args=(p, n)) for n, p in enumerate(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert errors == []
    assert query(db, "SELECT count(*), count(DISTINCT url) FROM products") == [(200, 200)]
    # history: exactly one first sight per url, then only real changes
    history: dict[str, list[Decimal]] = {}
    for url, price in query(db, "SELECT url, price FROM product_price_history ORDER BY id"):
        history.setdefault(url, []).append(price)
    assert len(history) == 200
    final = dict(query(db, "SELECT url, price FROM products"))
    for url, prices in history.items():
        assert all(a != b for a, b in zip(prices, prices[1:], strict=False)), prices
        assert prices[-1] == final[url]
