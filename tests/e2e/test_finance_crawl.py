"""Real ``finance`` workers: a quote site nobody configured, observed again; both spiders at once.

The quote site is ``tests/support/quote_site.py`` (Spanish, markup of its own, not
the demo's), served in this process; the product site is the demo shop. Workers,
Redis, PostgreSQL and the SQLite store are real.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from crawler.core.sites import site_key
from tests.support.quote_site import QuoteSite
from tools.workers import ROOT

from .conftest import CRAWL_TIMEOUT, START_TIMEOUT, freeze_when, page_fetches, wait_until
from .finance import (
    ECOMMERCE,
    FINANCE,
    compare,
    pg_rows,
    records,
    seed,
    sqlite_rows,
    start,
    wait_open,
)

pytestmark = pytest.mark.workers

QUOTES = "select url, symbol, price, currency, volume, as_of from quotes"


def recrawl(crawl, *args: str) -> str:  # type: ignore[no-untyped-def]
    result = subprocess.run(
        [sys.executable, "-m", "master", "--spider", "finance", "recrawl", *args],
        cwd=ROOT,
        env={**os.environ, **crawl.env},
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def settled(crawl) -> bool:  # type: ignore[no-untyped-def]
    """Nothing queued, seeded or held by a finance worker."""
    from crawler.scheduling.lanes import queued

    return (
        queued(crawl.client, FINANCE.requests) == 0
        and crawl.client.llen(FINANCE.start_urls) == 0
        and not list(crawl.client.scan_iter(FINANCE.inflight_pattern))
    )


@pytest.mark.timeout(600)
def test_two_finance_workers_read_a_quote_site_nobody_configured_and_observe_it_again(
    crawl, postgres_dsn
):
    with QuoteSite(150, latency=0.01) as site:
        count = len(site.instruments)
        crawl.env.update(POSTGRES_DSN=postgres_dsn, MAX_IDLE_TIME_BEFORE_CLOSE="0")
        assert crawl.master("--spider", "finance", "pause").returncode == 0
        for worker_id in ("f1", "f2"):
            start(crawl, worker_id, CONCURRENT_REQUESTS=4)
        wait_open(crawl, FINANCE, 2, START_TIMEOUT)
        seed(crawl, "finance", site.url + "cotizaciones/")  # the index; no profile
        assert crawl.master("--spider", "finance", "resume").returncode == 0

        def stored(n: int, sql: str = "select count(*) from quotes") -> bool:
            return pg_rows(postgres_dsn, sql)[0][0] >= n and settled(crawl)

        wait_until(lambda: stored(count), CRAWL_TIMEOUT, f"{count} quotes stored")
        right, missed = compare(site, pg_rows(postgres_dsn, QUOTES))
        print(f"first crawl: {right} of {count} quotes right; misses {dict(missed)}")
        assert right >= 0.99 * count, missed
        assert pg_rows(postgres_dsn, "select count(*) from quote_history") == [(count,)]
        assert max(site.page_fetches().values()) == 1  # each quote page fetched once
        assert all(r["pages"] > 0 for r in records(crawl, FINANCE).values())  # both worked

        site.advance()  # the prices move: every quote page shows a new session
        out = recrawl(crawl, "--every", "1h", "--older-than", "0s", "--rounds", "1")
        assert f"queued {count} of {count} pages of quotes" in out
        history = "select count(*) from quote_history"
        wait_until(lambda: stored(2 * count, history), CRAWL_TIMEOUT, "a second observation each")
        right, missed = compare(site, pg_rows(postgres_dsn, QUOTES))
        print(f"after the prices moved: {right} of {count} quotes right; misses {dict(missed)}")
        assert right >= 0.99 * count, missed
        per_url = pg_rows(postgres_dsn, "select count(*) from quote_history group by url")
        assert sorted(n for (n,) in per_url) == [2] * count
        sessions = pg_rows(postgres_dsn, "select count(distinct as_of) from quotes")
        assert sessions == [(1,)]  # every quote updated to the new session

        recrawl(crawl, "--every", "1h", "--older-than", "0s", "--rounds", "1")  # unchanged
        wait_until(
            lambda: min(site.page_fetches().values()) == 3 and settled(crawl),
            CRAWL_TIMEOUT,
            "a third fetch of every quote page",
        )
        assert pg_rows(postgres_dsn, history) == [(2 * count,)]  # nothing new to observe
        assert pg_rows(postgres_dsn, "select count(*) from quotes") == [(count,)]
        for worker in crawl.workers:
            assert worker.stop() == 0
        crawl.assert_clean_logs()


@pytest.mark.timeout(600)
def test_both_spiders_at_once_and_a_killed_finance_worker_loses_nothing(crawl, shop_factory):
    shop = shop_factory(products=60, latency_ms=10)
    with QuoteSite(80, latency=0.05) as site:
        seed(crawl, "ecommerce", shop.url)
        seed(crawl, "finance", site.url + "cotizaciones/")
        shopper = start(crawl, "e1", "ecommerce")
        victim = start(crawl, "victim", CONCURRENT_REQUESTS=4)
        # killed while it holds leases, in the middle of the quote site
        freeze_when(
            victim,
            lambda: (
                crawl.client.hlen(FINANCE.inflight("victim")) > 0 and len(site.page_fetches()) > 15
            ),
            CRAWL_TIMEOUT,
            "the finance victim to hold leases after 15 quote pages",
        )
        victim.kill()  # SIGKILL
        held = crawl.client.hlen(FINANCE.inflight("victim"))
        assert 0 < held and len(site.page_fetches()) < len(site.instruments)
        survivor = start(crawl, "survivor")
        crawl.wait_workers()
        assert f"Worker victim stopped beating: requeued the {held} request(s)" in survivor.log()
        assert shopper.process.returncode == 0 and survivor.process.returncode == 0

        products = sqlite_rows(crawl, "select url from products")
        assert sorted(url for (url,) in products) == sorted(
            shop.url.rstrip("/") + path for path in shop.catalog.product_paths()
        )
        quotes = sqlite_rows(crawl, QUOTES)
        assert len(quotes) == len({row[0] for row in quotes}) == len(site.instruments)
        right, missed = compare(site, quotes)
        assert right == len(site.instruments), missed
        assert set(page_fetches(shop)) == shop.catalog.crawlable_paths()

        # every key is one spider's, and each spider's keys speak of its own site only
        keys = [key.decode() for key in crawl.client.scan_iter(count=1000)]
        assert keys and all(key.startswith(("ecommerce:", "finance:")) for key in keys), keys
        assert set(records(crawl, ECOMMERCE)) == {"e1"}
        assert set(records(crawl, FINANCE)) == {"victim", "survivor"}
        sites = {
            spider: {field.decode().split(" ", 1)[1] for field in crawl.client.hkeys(keys.sites)}
            for spider, keys in (("ecommerce", ECOMMERCE), ("finance", FINANCE))
        }
        assert sites == {"ecommerce": {site_key(shop.url)}, "finance": {site_key(site.url)}}
        stats = {k.decode(): v for k, v in crawl.client.hgetall(ECOMMERCE.stats).items()}
        assert int(stats["items_stored"]) == len(products)
        assert crawl.client.llen(ECOMMERCE.dead) == crawl.client.llen(FINANCE.dead) == 0
        assert json.loads(crawl.master("--spider", "finance", "status", "--json").stdout)[
            "items_stored"
        ] >= len(site.instruments)
