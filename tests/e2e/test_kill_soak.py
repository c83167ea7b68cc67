"""Nothing lost under repeated crashes: workers SIGKILLed one after another, Redis SIGKILLed.

``test_workers_killed_again_and_again`` is the long one (marked ``soak`` as well as
``workers``; it runs in the default suite, about a minute): three
workers crawl a slow demo shop into PostgreSQL while, every 2 seconds, the oldest
one at work is killed with SIGKILL and a new one started, for 20 seconds and at
least six kills. What it proves: however often a worker dies mid-page, holding
leases (at least two of the kills), its work comes back to the others, and the
crawl still stores every product exactly once and fetches every page; the last
workers then close on their own. Six kills show that as well as the ten of the
minute-long version it replaced (each kill is the same event, and the refetch and
lease-recovery paths are the same every time); ``python -m benchmarks.kill_test``
runs longer soaks.
"""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from crawler.scheduling.lanes import queued
from tools.killtest import postgres_rows, run_kill_test

from .conftest import CRAWL_TIMEOUT, KEYS, page_fetches, wait_until

pytestmark = pytest.mark.workers

# Three workers at one request each, 129 pages at 500 ms: at least 21 s of crawling
# however fast the machine (3 pages in flight, 6 a second at most), so the kills go on
# for their 20 s (python -m benchmarks.kill_test runs longer soaks). Six kills 2 s
# apart need 12 s of it; in practice the kills slow the crawl far more (each costs a
# worker's start-up and its leases' 4 s timeout).
PRODUCTS = 100
LATENCY_MS = 500
KILL_FOR = 20.0
KILL_EVERY = 2.0
MIN_KILLS = 6


def _logs(run, last: int = 3) -> str:
    names = sorted(run.logs, key=lambda name: int(name.lstrip("abcdefghijklmnopqrstuvwxyz")))
    return "\n".join(
        f"--- {name}:\n{run.logs[name].read_text(errors='replace')[-3000:]}"
        for name in names[-last:]
    )


@pytest.mark.soak
@pytest.mark.timeout(600)  # 20 s of kills (longer when busy), then the rest of the crawl
def test_workers_killed_again_and_again(private_redis, postgres_dsn, shop_factory, tmp_path):
    shop = shop_factory(products=PRODUCTS, latency_ms=LATENCY_MS)
    run = run_kill_test(
        shop,
        private_redis.url,
        postgres_dsn,
        tmp_path,
        workers=3,
        kill_every=KILL_EVERY,
        kill_for=KILL_FOR,
        settings={"CONCURRENT_REQUESTS": 1},
        min_kills=MIN_KILLS,  # on a busy machine, past the 20 s: workers start slowly
    )
    # the kills were real, went on for their 20 s and hit workers at work
    assert run.seconds >= KILL_FOR, f"the crawl ended after {run.seconds:.0f} s"
    assert run.kills >= MIN_KILLS, f"only {run.kills} kills: the crawl ended first"
    assert run.kills_holding_leases >= 2, run
    # every product stored exactly once: one row per product, none missing
    assert run.missing_products == [], _logs(run)
    assert run.rows == run.distinct_urls == run.products
    # and no page lost
    assert run.missing_pages == [], run.missing_pages[:10]
    assert run.finished, _logs(run)
    print(
        f"kill test: {run.kills} kills ({run.kills_holding_leases} holding leases), "
        f"{run.workers_started} workers, {run.seconds:.0f} s, {run.products} products stored once, "
        f"{run.refetched_products} refetched"
    )
    for name, log in run.logs.items():
        text = log.read_text(errors="replace")
        assert "Deprecat" not in text, f"{name}:\n{text[-3000:]}"


def _truncate_aof_tail(data_dir: Path, fraction: float) -> int:
    """Cut the last ``fraction`` of the newest append-only increment: writes lost.

    A crash of the machine (not only of redis-server) loses what was written to the
    file but not yet fsynced: with ``appendfsync everysec``, about the last second.
    The test cuts more (30% of a crawl of a few seconds) so that the cut surely
    holds queued links, leases and acknowledgements. Redis loads a file cut in the
    middle of a command (``aof-load-truncated yes``) and drops a transaction cut
    before its EXEC.
    """
    increments = sorted((data_dir / "appendonlydir").glob("*.incr.aof"))
    assert increments, list(data_dir.iterdir())
    newest = increments[-1]
    size = newest.stat().st_size
    cut = int(size * fraction)
    with open(newest, "r+b") as aof:
        aof.truncate(size - cut)
    return cut


@pytest.mark.parametrize("lost_tail", [False, True], ids=["sigkill", "sigkill-lost-tail"])
def test_redis_killed_mid_crawl_and_restarted_from_its_aof(
    crawl, shop_factory, private_redis, postgres_dsn, lost_tail
):
    shop = shop_factory(products=200, latency_ms=40)
    expected = shop.catalog.crawlable_paths()
    crawl.env["POSTGRES_DSN"] = postgres_dsn
    crawl.seed(shop.url)
    # both open before the crash (a worker still starting then would exit: no Redis)
    crawl.pause()
    crawl.start_worker("w1", CONCURRENT_REQUESTS=4, MAX_IDLE_TIME_BEFORE_CLOSE=4)
    crawl.start_worker("w2", CONCURRENT_REQUESTS=4, MAX_IDLE_TIME_BEFORE_CLOSE=4)
    crawl.wait_open(2)
    crawl.resume()
    wait_until(lambda: len(page_fetches(shop)) >= 60, CRAWL_TIMEOUT, "60 pages")
    private_redis.stop(signal.SIGKILL)  # a crash: no shutdown, no final fsync
    if lost_tail:
        assert _truncate_aof_tail(private_redis.data_dir, 0.3) > 0
    time.sleep(1)
    assert len(page_fetches(shop)) < len(expected), "the crawl ended before the crash"
    private_redis.start()  # loads the append-only file
    crawl.wait_workers(timeout=240)
    crawl.assert_clean_logs()
    # every worker noticed the restart and redid what it held
    for worker in crawl.workers:
        assert "Redis restarted: requeued the " in worker.log(), worker.log()[-3000:]

    fetched = page_fetches(shop)
    assert set(fetched) == expected, sorted(expected - set(fetched))[:10]
    product_urls = {shop.url.rstrip("/") + path for path in shop.catalog.product_paths()}
    rows, stored = postgres_rows(postgres_dsn)
    assert stored == product_urls, sorted(product_urls - stored)[:10]
    assert rows == len(product_urls)
    # nothing left behind after the restart: no lease stuck, nothing queued
    assert not list(crawl.client.scan_iter(KEYS.inflight_pattern))
    assert queued(crawl.client, KEYS.requests) == 0
