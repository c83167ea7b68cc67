"""PostgreSQL goes away in the middle of a crawl: nothing is lost, nothing is doubled.

The pipeline writes through :class:`tests.support.tcpproxy.TcpProxy`; the test
cuts it (every connection closed, new ones refused) and restores it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg2
import pytest
import redis

from crawler.core.flow import FlowControl
from crawler.pipelines.postgres import PostgresUpsertPipeline
from tests.support.products import (
    EcommerceSpider,
    StoredRecorder,
    make_crawler,
    make_product,
    run,
)
from tests.support.tcpproxy import TcpProxy

FAST_RETRIES = {
    "STORE_BATCH_SIZE": 20,
    "STORE_FLUSH_INTERVAL": 0.05,
    "STORE_MAX_PENDING": 60,
    "STORE_RETRY_INITIAL_DELAY": 0.05,
    "STORE_RETRY_MAX_DELAY": 0.2,
}


@pytest.fixture
def proxy(postgres_dsn: str) -> Iterator[TcpProxy]:
    parts = urlsplit(postgres_dsn)
    with TcpProxy(parts.hostname or "127.0.0.1", parts.port or 5432) as proxy:
        yield proxy


def through(proxy: TcpProxy, dsn: str) -> str:
    parts = urlsplit(dsn)
    netloc = (
        f"{parts.username}@127.0.0.1:{proxy.port}" if parts.username else f"127.0.0.1:{proxy.port}"
    )
    return urlunsplit(parts._replace(netloc=netloc))


def count_rows(dsn: str) -> tuple[int, int, int]:
    with psycopg2.connect(dsn) as conn, conn.cursor() as cur:
        cur.execute("SELECT count(*), count(DISTINCT url) FROM products")
        rows, urls = cur.fetchone()
        cur.execute("SELECT count(*) FROM product_price_history")
        (history,) = cur.fetchone()
    conn.close()
    return rows, urls, history


async def wait_until(condition: Callable[[], bool], timeout: float = 60.0) -> None:
    """Wait for ``condition``: a bound on the wait (a busy machine writes slowly), not a speed."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.01)


def test_outage_in_the_middle_of_a_crawl(
    postgres_dsn: str,
    redis_url: str,
    redis_client: redis.Redis,
    proxy: TcpProxy,
    caplog: pytest.LogCaptureFixture,
) -> None:
    crawler = make_crawler(
        {"POSTGRES_DSN": through(proxy, postgres_dsn), "REDIS_URL": redis_url, **FAST_RETRIES}
    )
    pipeline = PostgresUpsertPipeline.from_crawler(crawler)
    recorder = StoredRecorder(crawler)
    flow = FlowControl.of(crawler)
    items = [make_product(i) for i in range(300)]
    seen: dict[str, Any] = {}

    async def feed(batch: list[Any]) -> None:
        for item in batch:
            assert pipeline.process_item(item) is item
            await asyncio.sleep(0.001)

    async def scenario() -> None:
        await pipeline.open_spider(EcommerceSpider())
        await feed(items[:100])
        await wait_until(lambda: len(recorder.items) >= 60)
        proxy.cut()  # PostgreSQL is away, with a batch likely in flight
        await feed(items[100:200])
        # more than STORE_MAX_PENDING wait: the worker stops taking requests
        await wait_until(lambda: flow.held)
        assert flow.reasons == ["storage backlog: postgres unreachable"]
        seen["stored_during_outage"] = len(recorder.items)
        await asyncio.sleep(0.5)  # several retries, all failing
        assert len(recorder.items) == seen["stored_during_outage"]
        await feed(items[200:230])  # items keep arriving while held
        proxy.restore()
        await wait_until(lambda: pipeline.pending_count == 0)
        assert not flow.held  # released once drained
        for start in range(230, 300, 20):  # fed no faster than written: no backlog now
            await feed(items[start : start + 20])
            await wait_until(lambda: pipeline.pending_count == 0)
        await pipeline.close_spider()

    with caplog.at_level(logging.INFO, logger="crawler.pipelines.batching"):
        run(scenario())

    # every item stored exactly once, and acknowledged exactly once
    assert count_rows(postgres_dsn) == (300, 300, 300)
    acknowledged = [id(item) for item in recorder.items]
    assert sorted(acknowledged) == sorted(id(item) for item in items)
    assert len(set(acknowledged)) == 300
    assert redis_client.hget("ecommerce:stats", "items_stored") == b"300"
    stats = crawler.stats.get_stats()
    assert stats["store/items_stored"] == 300
    assert stats["store/outages"] == 1
    assert stats["store/retries"] >= 3
    assert stats["store/flow_holds"] == 1
    assert "store/items_unwritten" not in stats

    # one WARNING when it went away, one INFO when it came back
    messages = [
        (r.levelname, r.getMessage()) for r in caplog.records if r.name.endswith("batching")
    ]
    warnings = [m for level, m in messages if level == "WARNING"]
    assert len(warnings) == 1 and "postgres unreachable" in warnings[0]
    assert sum("postgres reachable again" in m for level, m in messages if level == "INFO") == 1


def test_database_away_at_start_and_at_close(
    postgres_dsn: str,
    redis_url: str,
    redis_client: redis.Redis,
    proxy: TcpProxy,
    caplog: pytest.LogCaptureFixture,
) -> None:
    proxy.cut()
    crawler = make_crawler(
        {
            "POSTGRES_DSN": through(proxy, postgres_dsn),
            "REDIS_URL": redis_url,
            **FAST_RETRIES,
            "STORE_CLOSE_TIMEOUT": 0.5,
        }
    )
    pipeline = PostgresUpsertPipeline.from_crawler(crawler)
    recorder = StoredRecorder(crawler)
    items = [make_product(i) for i in range(50)]

    async def scenario() -> None:
        await pipeline.open_spider(EcommerceSpider())  # does not fail: items will wait
        for item in items[:30]:
            pipeline.process_item(item)
        await asyncio.sleep(0.2)
        proxy.restore()
        await wait_until(lambda: len(recorder.items) == 30)
        proxy.cut()
        for item in items[30:]:
            pipeline.process_item(item)
        started = time.monotonic()
        await pipeline.close_spider()
        assert time.monotonic() - started < 3

    with caplog.at_level(logging.WARNING):
        run(scenario())

    proxy.restore()
    assert count_rows(postgres_dsn)[:2] == (30, 30)
    # the 20 unwritten items were not acknowledged: their requests will be crawled again
    assert len(recorder.items) == 30
    assert crawler.stats.get_value("store/items_unwritten") == 20
    errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert any("20 items could not be written to postgres" in m for m in errors), errors
    assert "not reachable at start-up" in caplog.text
    # closed, the pipeline gave up on the store: its outage's reminders end with it
    assert not pipeline.outage_log.down


def test_a_long_outage_is_said_again_with_what_waits(
    postgres_dsn: str,
    redis_url: str,
    proxy: TcpProxy,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """While PostgreSQL stays away the log says so every OUTAGE_LOG_INTERVAL seconds, with
    the items kept, then once that it is back: the same log as a worker's Redis outage."""
    crawler = make_crawler(
        {
            "POSTGRES_DSN": through(proxy, postgres_dsn),
            "REDIS_URL": redis_url,
            **FAST_RETRIES,
            "OUTAGE_LOG_INTERVAL": 0.2,
        }
    )
    pipeline = PostgresUpsertPipeline.from_crawler(crawler)
    recorder = StoredRecorder(crawler)
    items = [make_product(i) for i in range(30)]

    def said(text: str) -> int:
        return sum(text in r.getMessage() for r in caplog.records)

    async def scenario() -> None:
        await pipeline.open_spider(EcommerceSpider())
        proxy.cut()
        for item in items:
            pipeline.process_item(item)
        await wait_until(lambda: said("postgres still unreachable after") >= 2)
        proxy.restore()
        await wait_until(lambda: len(recorder.items) == 30)
        await pipeline.close_spider()

    with caplog.at_level(logging.INFO, logger="crawler.pipelines.batching"):
        run(scenario())

    assert count_rows(postgres_dsn)[:2] == (30, 30)
    lost = [r.getMessage() for r in caplog.records if "postgres unreachable" in r.getMessage()]
    assert len(lost) == 1 and ": keeping 30 items, retrying every 0.05 to 0.2 s" in lost[0], lost
    reminder = next(r for r in caplog.records if "still unreachable" in r.getMessage())
    assert reminder.levelname == "WARNING" and "keeping 30 items" in reminder.getMessage()
    assert said("postgres reachable again after ") == 1
