"""Helpers of the finance spider's end-to-end tests: its workers, seeds and stored quotes."""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from collections import Counter
from decimal import Decimal
from typing import Any

import psycopg2

from crawler.core.keys import CrawlKeys
from tests.support.quote_site import QuoteSite
from tools.workers import WorkerProcess

from .conftest import FAST_SETTINGS, Crawl, wait_until

FINANCE = CrawlKeys("finance")
ECOMMERCE = CrawlKeys("ecommerce")


def start(
    crawl: Crawl, worker_id: str, spider: str = "finance", **settings: object
) -> WorkerProcess:
    """A worker of ``spider`` in ``crawl`` (logs in its workspace, killed at the end)."""
    worker = WorkerProcess(
        worker_id,
        crawl.env,
        crawl.workdir / f"{worker_id}.log",
        settings={**FAST_SETTINGS, **settings},
        spider=spider,
    )
    crawl.workers.append(worker)
    return worker


def seed(crawl: Crawl, spider: str, *lines: str) -> None:
    result = crawl.master("seed", "--spider", spider, "-", input="\n".join(lines) + "\n")
    assert result.returncode == 0, result.stderr


def records(crawl: Crawl, keys: CrawlKeys) -> dict[str, dict[str, Any]]:
    return {
        worker.decode(): json.loads(raw)
        for worker, raw in crawl.client.hgetall(keys.workers).items()
    }


def wait_open(crawl: Crawl, keys: CrawlKeys, count: int, timeout: float) -> None:
    def opened() -> bool:
        states = [r["state"] for r in records(crawl, keys).values()]
        return sum(state in ("running", "paused") for state in states) >= count

    wait_until(opened, timeout, f"{count} {keys.spider} workers open")


def pg_rows(dsn: str, sql: str) -> list[tuple[Any, ...]]:
    with psycopg2.connect(dsn) as conn, conn.cursor() as cur:
        cur.execute(sql)
        return cur.fetchall()


def sqlite_rows(crawl: Crawl, sql: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(crawl.workdir / "products.sqlite3") as db:
        return db.execute(sql).fetchall()


def compare(site: QuoteSite, rows: list[tuple[Any, ...]]) -> tuple[int, Counter[str]]:
    """How many of the site's instruments are stored with the right symbol, price, currency
    and volume (rows: url, symbol, price, currency, volume, as_of), and the misses by field.
    Each row is compared with the session its ``as_of`` says it is of."""
    by_url = {row[0]: row for row in rows}
    right, missed = 0, Counter[str]()
    for instrument in site.instruments:
        row = by_url.get(site.url_of(instrument))
        if row is None:
            missed["missing"] += 1
            continue
        _, symbol, price, currency, volume, as_of = row
        when = as_of if isinstance(as_of, dt.datetime) else dt.datetime.fromisoformat(as_of)
        session = round((when - site.quote(instrument, 0).as_of).total_seconds() / 3600)
        expected = site.quote(instrument, session)
        checks = {
            "symbol": symbol == instrument.symbol,
            "price": Decimal(str(price)) == expected.price,
            "currency": currency == instrument.currency,
            "volume": volume == expected.volume,
        }
        missed.update(field for field, ok in checks.items() if not ok)
        right += all(checks.values())
    return right, missed
