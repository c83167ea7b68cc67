"""The kill test: a crawl of the demo shop while workers are SIGKILLed one after another.

Used by ``tests/e2e/test_kill_soak.py`` (on this project's settings) and by
``benchmarks/kill_test.py`` (on these settings and on stock scrapy-redis's). Every
``kill_every`` seconds the oldest worker that is at work (its record shows pages:
a worker still starting would hold nothing) gets SIGKILL, with no chance to hand
anything back, and a new worker (a fresh id) takes its place, until every
product is stored, the crawl has nothing left, or ``kill_for`` seconds have passed.
Then the last workers finish the crawl and close when idle.

What it measures, from the shop's access log and the ``products`` table:

* ``missing_products``: products of the catalog with no row (lost);
* ``missing_pages``: crawlable pages never fetched (lost);
* ``refetched_products``: product pages fetched more than once (each fetch is
  stored again: an upsert, so the row count stays one per product).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import psycopg2
import redis

from crawler.core.keys import CrawlKeys
from crawler.scheduling.lanes import QueueCount, count_queue
from demoshop.process import ShopProcess
from tools.workers import ROOT, WorkerProcess

KEYS = CrawlKeys()

# Short lease timings, so that a killed worker's requests come back within seconds.
FAST_LEASES: dict[str, object] = {
    "LEASE_HEARTBEAT_INTERVAL": 1,
    "LEASE_WORKER_TIMEOUT": 4,
    "LEASE_RECOVERY_INTERVAL": 1,
    "WORKERSTATS_INTERVAL": 1,
    "LOG_LEVEL": "INFO",
}

# Stock scrapy-redis: its scheduler, its queue, its dupefilter (hex fingerprints) and
# pickle, on the same spider, pipelines and shop. SCHEDULER_PERSIST stays True (the
# stock default False would let any worker closing normally wipe the shared queue);
# only the kills differ.
STOCK_SCRAPY_REDIS: dict[str, object] = {
    "SCHEDULER": "scrapy_redis.scheduler.Scheduler",
    "SCHEDULER_QUEUE_CLASS": "scrapy_redis.queue.PriorityQueue",
    "DUPEFILTER_CLASS": "scrapy_redis.dupefilter.RFPDupeFilter",
    "SCHEDULER_SERIALIZER": "scrapy_redis.picklecompat",
    "LOG_LEVEL": "INFO",
}


@dataclass
class KillRun:
    """What one kill test did and found."""

    products: int = 0
    pages: int = 0
    rows: int = 0
    distinct_urls: int = 0
    missing_products: list[str] = field(default_factory=list)
    missing_pages: list[str] = field(default_factory=list)
    refetched_products: int = 0
    extra_fetches: int = 0
    kills: int = 0
    kills_holding_leases: int = 0
    workers_started: int = 0
    seconds: float = 0.0
    finished: bool = False  # every worker closed on its own at the end
    logs: dict[str, Path] = field(default_factory=dict)

    @property
    def lost_products(self) -> int:
        return len(self.missing_products)


def postgres_rows(dsn: str) -> tuple[int, set[str]]:
    with psycopg2.connect(dsn) as conn, conn.cursor() as cur:
        cur.execute("select to_regclass('products') is not null")
        (exists,) = cur.fetchone()
        if not exists:
            return 0, set()
        cur.execute("select url from products")
        urls = [url for (url,) in cur.fetchall()]
    conn.close()
    return len(urls), set(urls)


def seed(redis_url: str, url: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "master", "seed", "-"],
        cwd=ROOT,
        env={**os.environ, "REDIS_URL": redis_url, "ALLOW_PRIVATE_NETWORKS": "127.0.0.1"},
        input=url + "\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    if result.returncode != 0:
        raise RuntimeError(f"seeding failed: {result.stderr}")


def _wait_while_progressing(
    workers: list[WorkerProcess], shop: ShopProcess, client: redis.Redis, stalled_for: float
) -> bool:
    """Wait for ``workers`` to close while the crawl is still going.

    The crawl left after the kills takes longer on a busy machine; only a crawl
    that fetched nothing for ``stalled_for`` seconds while every worker was open
    is given up (its workers killed, False returned). A worker still starting (no
    record in Redis yet: at a load of 30 on 2 cores one took minutes to import
    Scrapy) is progress too: the crawl waits for it, not for the clock.
    """

    def starting() -> bool:
        return any(w.running and not client.hexists(KEYS.workers, w.worker_id) for w in workers)

    fetched = len(shop.read_access_log())
    deadline = time.monotonic() + stalled_for
    for worker in workers:
        while True:
            try:
                worker.wait(min(5.0, max(0.1, deadline - time.monotonic())))
                break
            except subprocess.TimeoutExpired:
                now_fetched = len(shop.read_access_log())
                if now_fetched > fetched or starting():
                    fetched, deadline = now_fetched, time.monotonic() + stalled_for
                elif time.monotonic() >= deadline:
                    for left in workers:
                        left.kill()
                    return False
    return True


def run_kill_test(
    shop: ShopProcess,
    redis_url: str,
    postgres_dsn: str,
    workdir: Path,
    *,
    workers: int = 3,
    kill_every: float = 4.0,
    kill_for: float = 120.0,
    finish_timeout: float = 90.0,
    settings: Mapping[str, object] | None = None,
    prefix: str = "k",
    min_kills: int = 0,
) -> KillRun:
    """Crawl ``shop`` with ``workers`` workers, killing one every ``kill_every`` s.

    After ``kill_for`` seconds, and at least ``min_kills`` kills (a busy machine
    starts workers slowly, and only a worker at work is killed: the kills go on
    while the crawl does), the last workers finish the crawl; they are given up
    only when the shop saw no request for ``finish_timeout`` seconds with every
    worker open.
    """
    run = KillRun()
    client = redis.Redis.from_url(redis_url)
    env = {
        "REDIS_URL": redis_url,
        "POSTGRES_DSN": postgres_dsn,
        "ALLOW_PRIVATE_NETWORKS": "127.0.0.1",
        "MAX_IDLE_TIME_BEFORE_CLOSE": "3",
        "EMBEDDED_STORE_PATH": str(workdir / "unused.sqlite3"),
    }
    chosen = {**FAST_LEASES, **(settings or {})}
    product_urls = {shop.url.rstrip("/") + path for path in shop.catalog.product_paths()}
    expected_pages = shop.catalog.crawlable_paths()
    run.products, run.pages = len(product_urls), len(expected_pages)
    started = time.monotonic()
    running: list[WorkerProcess] = []

    def start() -> None:
        run.workers_started += 1
        worker_id = f"{prefix}{run.workers_started}"
        log = workdir / f"{worker_id}.log"
        running.append(WorkerProcess(worker_id, env, log, settings=chosen))
        run.logs[worker_id] = log

    def at_work(worker_id: str) -> bool:
        raw = client.hget(KEYS.workers, worker_id)
        return raw is not None and int(json.loads(raw).get("pages") or 0) > 0

    def crawl_is_over() -> bool:
        rows, _ = postgres_rows(postgres_dsn)
        if rows >= run.products:
            return True
        with client.pipeline(transaction=False) as pipe:
            count_queue(pipe, KEYS.requests)  # stock scrapy-redis's zset counts too
            pipe.llen(KEYS.start_urls)
            counted, seeds = pipe.execute()
        queued = QueueCount().add(counted).total
        inflight = sum(client.hlen(name) for name in client.scan_iter(KEYS.inflight_pattern))
        # stock scrapy-redis: lost requests never come back, the queue just runs dry
        return rows > 0 and queued == 0 and seeds == 0 and inflight == 0

    try:
        seed(redis_url, shop.url)
        for _ in range(workers):
            start()
        while time.monotonic() - started < kill_for or run.kills < min_kills:
            time.sleep(kill_every)
            if crawl_is_over():
                break
            victim = next((w for w in running if at_work(w.worker_id)), None)
            if victim is None:
                continue  # all still starting: nothing to lose yet
            running.remove(victim)
            if client.hlen(KEYS.inflight(victim.worker_id)):
                run.kills_holding_leases += 1
            victim.kill()
            run.kills += 1
            start()
        run.finished = _wait_while_progressing(running, shop, client, finish_timeout)
    finally:
        for worker in running:
            if worker.running:
                worker.kill()
        client.close()
    run.seconds = time.monotonic() - started

    run.rows, stored = postgres_rows(postgres_dsn)
    run.distinct_urls = len(stored)
    run.missing_products = sorted(product_urls - stored)
    fetched = Counter(shop.page_fetches())  # robots.txt and sitemaps aside
    run.missing_pages = sorted(expected_pages - set(fetched))
    product_paths = set(shop.catalog.product_paths())
    twice = {path: n for path, n in fetched.items() if path in product_paths and n > 1}
    run.refetched_products = len(twice)
    run.extra_fetches = sum(n - 1 for n in twice.values())
    return run
