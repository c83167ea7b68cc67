"""Nothing lost under repeated crashes: workers SIGKILLed one after another, Redis SIGKILLed.

``test_workers_killed_again_and_again`` is the long one (marked ``soak`` as well as
``workers``; it runs in the default suite, about two minutes): three workers crawl
a slow demo shop into PostgreSQL while, every 6 seconds, the oldest one is killed
with SIGKILL and a new one started, for up to 90 seconds.
"""

from __future__ import annotations

import pytest

from tools.killtest import run_kill_test

pytestmark = pytest.mark.workers

# About a minute of crawling for three workers at two requests each (440 pages at
# 250 ms), so that the kills land all along the crawl.
PRODUCTS = 400
LATENCY_MS = 250


def _logs(run, last: int = 3) -> str:
    names = sorted(run.logs, key=lambda name: int(name.lstrip("abcdefghijklmnopqrstuvwxyz")))
    return "\n".join(
        f"--- {name}:\n{run.logs[name].read_text(errors='replace')[-3000:]}"
        for name in names[-last:]
    )


@pytest.mark.soak
def test_workers_killed_again_and_again(private_redis, postgres_dsn, shop_factory, tmp_path):
    shop = shop_factory(products=PRODUCTS, latency_ms=LATENCY_MS)
    run = run_kill_test(
        shop,
        private_redis.url,
        postgres_dsn,
        tmp_path,
        workers=3,
        kill_every=6.0,
        kill_for=90.0,
        settings={"CONCURRENT_REQUESTS": 2},
    )
    # the kills were real and hit workers at work
    assert run.kills >= 5, f"only {run.kills} kills: the crawl ended too soon"
    assert run.kills_holding_leases >= 3, run
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
