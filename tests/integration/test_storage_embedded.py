"""EmbeddedStorePipeline: the SQLite store that needs no server, shared by worker processes."""

from __future__ import annotations

import json
import multiprocessing
import sqlite3
import traceback
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import redis
from scrapy.exceptions import NotConfigured

from crawler.pipelines.embedded import EmbeddedStorePipeline
from tests.support.products import (
    EcommerceSpider,
    StoredRecorder,
    make_crawler,
    make_product,
    run,
)


def make_pipeline(
    path: Path, redis_url: str = "redis://127.0.0.1:1/0", **settings: Any
) -> EmbeddedStorePipeline:
    crawler = make_crawler({"EMBEDDED_STORE_PATH": str(path), "REDIS_URL": redis_url, **settings})
    pipeline = EmbeddedStorePipeline.from_crawler(crawler)
    assert isinstance(pipeline, EmbeddedStorePipeline)
    return pipeline


def rows(path: Path, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    with sqlite3.connect(path) as conn:
        return conn.execute(sql, args).fetchall()


@pytest.mark.parametrize(
    "settings", [{"POSTGRES_DSN": "postgresql://x@h/db"}, {"MONGO_URI": "mongodb://h/"}]
)
def test_steps_aside_when_a_database_server_is_configured(settings: dict[str, str]) -> None:
    with pytest.raises(NotConfigured):
        EmbeddedStorePipeline.from_crawler(make_crawler(settings))


def test_file_and_folders_created_in_wal_mode(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "products.sqlite3"
    pipeline = make_pipeline(path)
    assert pipeline.store_location() == f"sqlite:{path}"
    pipeline.store_batch([make_product(1)])
    pipeline.disconnect()
    assert rows(path, "PRAGMA journal_mode") == [("wal",)]
    tables = {name for (name,) in rows(path, "SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"products", "product_price_history"} <= tables


def test_relative_path_is_made_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    pipeline = make_pipeline(Path("data/products.sqlite3"))
    assert pipeline.store_location() == f"sqlite:{tmp_path / 'data' / 'products.sqlite3'}"


def test_upsert_and_history(tmp_path: Path) -> None:
    path = tmp_path / "p.sqlite3"
    pipeline = make_pipeline(path)
    products = [make_product(i) for i in range(50)]
    pipeline.store_batch(products)
    pipeline.store_batch(products)
    assert rows(path, "SELECT count(*), count(DISTINCT url) FROM products") == [(50, 50)]
    assert rows(path, "SELECT count(*) FROM product_price_history") == [(50,)]

    url = products[0]["url"]
    [(first_seen, last_seen)] = rows(
        path, "SELECT first_seen, last_seen FROM products WHERE url=?", url
    )
    pipeline.store_batch([make_product(0, price=Decimal("10.990"))])  # same number
    pipeline.store_batch([make_product(0, price=Decimal("1E+2"))])
    [(first_seen_2, last_seen_2, price, data)] = rows(
        path, "SELECT first_seen, last_seen, price, data FROM products WHERE url=?", url
    )
    assert first_seen_2 == first_seen and last_seen_2 > last_seen
    assert price == "100" and json.loads(data)["price"] == 100.0
    assert rows(path, "SELECT price FROM product_price_history WHERE url=? ORDER BY id", url) == [
        ("10.99",),
        ("100",),
    ]
    pipeline.disconnect()


def test_full_path_with_signal_and_rejected_rows(
    tmp_path: Path, redis_url: str, redis_client: redis.Redis
) -> None:
    path = tmp_path / "p.sqlite3"
    pipeline = make_pipeline(path, redis_url, STORE_BATCH_SIZE=10, STORE_FLUSH_INTERVAL=0.05)
    recorder = StoredRecorder(pipeline.crawler)
    items = [make_product(i) for i in range(25)]
    items[4]["name"] = "surrogate \udc80"

    async def scenario() -> None:
        await pipeline.open_spider(EcommerceSpider())
        for item in items:
            pipeline.process_item(item)
        await pipeline.close_spider()

    run(scenario())
    assert rows(path, "SELECT count(*) FROM products") == [(24,)]
    assert sorted(map(id, recorder.items)) == sorted(map(id, items))
    [raw] = redis_client.lrange("ecommerce:invalid", 0, -1)
    assert json.loads(raw)["url"] == items[4]["url"]
    assert redis_client.hget("ecommerce:stats", "items_stored") == b"24"
    assert pipeline.crawler.stats.get_value("store/location") == f"sqlite:{path}"


def _write_in_process(path: str, worker: int, rounds: int, start: Any, result: Any) -> None:
    try:
        pipeline = make_pipeline(Path(path), WORKER_ID=f"proc-{worker}")
        start.wait(30)  # both processes write at the same moment, on a new file
        for round_ in range(rounds):
            price = Decimal(5 + (round_ + worker) % 2)
            products = [make_product(i, price=price) for i in range(200)]
            for k in range(0, 200, 20):
                outcome = pipeline.store_batch(products[k : k + 20])
                if outcome.rejected:
                    raise AssertionError(f"rejected: {outcome.rejected}")
        pipeline.disconnect()
        result.put((worker, None))
    except BaseException:  # noqa: BLE001
        result.put((worker, traceback.format_exc()))


def test_two_processes_share_one_file(tmp_path: Path) -> None:
    path = tmp_path / "shared" / "products.sqlite3"
    context = multiprocessing.get_context("spawn")
    result = context.Queue()
    start = context.Barrier(2)
    processes = [
        context.Process(target=_write_in_process, args=(str(path), n, 10, start, result))
        for n in range(2)
    ]
    for process in processes:
        process.start()
    outcomes = dict(result.get(timeout=60) for _ in processes)
    for process in processes:
        process.join(10)
    assert outcomes == {0: None, 1: None}, outcomes  # no "database is locked", no error
    assert rows(path, "SELECT count(*), count(DISTINCT url) FROM products") == [(200, 200)]
    history: dict[str, list[str]] = {}
    for url, price in rows(path, "SELECT url, price FROM product_price_history ORDER BY id"):
        history.setdefault(url, []).append(price)
    final = dict(rows(path, "SELECT url, price FROM products"))
    assert len(history) == 200
    for url, prices in history.items():
        assert all(a != b for a, b in zip(prices, prices[1:], strict=False)), prices
        assert prices[-1] == final[url]


def test_registers_with_the_lease_tracker(tmp_path: Path, redis_url: str) -> None:
    from crawler.leasing.tracker import LeaseTracker

    crawler = make_crawler(
        {
            "EMBEDDED_STORE_PATH": str(tmp_path / "p.sqlite3"),
            "REDIS_URL": redis_url,
            "EXTENSIONS": {"crawler.leasing.tracker.LeaseTracker": 100},
        }
    )
    EmbeddedStorePipeline.from_crawler(crawler)
    assert LeaseTracker.of(crawler).stores == {"embedded"}
