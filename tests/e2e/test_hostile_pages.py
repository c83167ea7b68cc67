"""Nasty pages are reported, never crash a worker, and the rest of the crawl goes on."""

from __future__ import annotations

import json
import sqlite3

import pytest

from tests.support.hostile_site import HostileSite

from .conftest import KEYS

pytestmark = pytest.mark.workers


def test_hostile_pages_become_dead_letters_and_good_products_are_stored(crawl):
    # a timeout that a good page answered by a busy machine stays well under, and a
    # slow page that stays well over it
    with HostileSite(slow_seconds=8, huge_bytes=300_000) as site:
        crawl.seed(site.url)
        worker = crawl.start_worker(
            "w1",
            DOWNLOAD_TIMEOUT=4,
            RETRY_TIMES=1,
            RETRY_THROTTLE_TIMES=1,  # the timeout too: one retry
            RETRY_BACKOFF_BASE=0.2,
            DOWNLOAD_MAXSIZE=100_000,
            DOWNLOAD_WARNSIZE=0,
        )
        crawl.wait_workers()
        requests = site.requests
    assert worker.process.returncode == 0, worker.log()[-4000:]
    crawl.assert_clean_logs()

    dead = {
        json.loads(raw)["url"].split("/", 3)[-1]: json.loads(raw)["reason"]
        for raw in crawl.client.lrange(KEYS.dead, 0, -1)
    }
    assert dead["error"] == "HTTP 500 after 2 attempts (500, 500)"  # what was tried
    assert dead["not-found"] == "HTTP 404"
    assert "Timeout" in dead["slow"] or "timeout" in dead["slow"].lower()
    assert "huge" in dead  # cancelled: larger than DOWNLOAD_MAXSIZE
    for record in crawl.client.lrange(KEYS.dead, 0, -1):
        assert json.loads(record)["request"], "a dead letter keeps its request for requeueing"

    # retried once, then given up; the redirect loop stops at REDIRECT_MAX_TIMES
    assert requests.count("/error") == 2
    assert requests.count("/redirect-loop") <= 6
    # the redirect to an address outside ALLOW_PRIVATE_NETWORKS is refused, not followed,
    # and kept as a dead letter that says why
    assert "network/refused_private" in worker.log()
    assert dead[""].startswith("refused: 127.0.0.2 is a loopback address"), dead

    with sqlite3.connect(crawl.workdir / "products.sqlite3") as db:
        names = {name for (name,) in db.execute("select name from products")}
    assert names == {"Good product 1", "Good product 2"}

    [invalid] = [json.loads(raw) for raw in crawl.client.lrange(KEYS.invalid, 0, -1)]
    assert invalid["url"].endswith("/p/no-currency.html")
    assert any(error["field"] == "currency" for error in invalid["errors"])
    status = json.loads(crawl.master("status", "--json").stdout)
    assert status["items_invalid"] == 1
    assert status["dead_letters"] == len(dead)
