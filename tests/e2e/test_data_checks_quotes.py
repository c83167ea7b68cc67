"""Data checks of quotes over a real crawl (issue 45): two finance workers crawl a quote
site whose pages give no time of their own and the demo shop's market; the former
raises ``as_of_from_fetch`` (its quotes' ``as_of`` is the fetch time), the demo market
raises nothing."""

from __future__ import annotations

import json

import pytest

from tests.support.quote_site import QuoteSite

from .conftest import START_TIMEOUT, wait_until
from .finance import FINANCE, seed, start, wait_open

pytestmark = pytest.mark.workers


@pytest.mark.timeout(600)
def test_a_quote_site_without_times_raises_as_of_from_fetch(crawl, shop_factory):
    shop = shop_factory(products=12, market=60)
    market = shop.url.rstrip("/") + "/market/"
    with QuoteSite(60, timeless=True) as timeless:
        assert crawl.master("--spider", "finance", "pause").returncode == 0
        for worker_id in ("f1", "f2"):
            start(crawl, worker_id, CONCURRENT_REQUESTS=4)
        wait_open(crawl, FINANCE, 2, START_TIMEOUT)
        seed(crawl, "finance", timeless.url + "cotizaciones/",
             json.dumps({"url": market, "meta": {"allow": ["/market/"]}}))
        assert crawl.master("--spider", "finance", "resume").returncode == 0
        for worker in crawl.workers:
            wait_until(lambda w=worker: w.process.poll() is not None, 300, "workers done")

    result = crawl.master("checks", "--spider", "finance", "--json")
    assert result.returncode == 0, result.stderr
    by_site = {entry["site"]: entry for entry in json.loads(result.stdout)["sites"]}
    timeless_site = timeless.url.split("//", 1)[1].rstrip("/")
    market_site = shop.url.split("//", 1)[1].rstrip("/")
    assert by_site[timeless_site]["failing"] == ["as_of_from_fetch"]
    failing = by_site[timeless_site]["checks"][0]
    assert failing["figures"]["rows"] == 60 and failing["figures"]["share"] == 1.0
    assert len(failing["examples"]) == 3
    assert by_site[market_site]["rows"] >= 60
    statuses = {r["check"]: r["status"] for r in by_site[market_site]["checks"]}
    assert statuses == {"as_of_from_fetch": "ok", "price_unchanged": "ok"}
    logs = "".join(worker.log() for worker in crawl.workers)
    assert f"Data check as_of_from_fetch fails on {timeless_site}" in logs
    assert f"fails on {market_site}" not in logs
    assert crawl.master("checks", "--spider", "finance", "--fail-on", "warn").returncode == 1
