"""A live worker cut off from Redis by a network partition says so, and comes back.

The worker ``cut`` talks to Redis through a :class:`tools.tcpproxy.TcpProxy` on
loopback; ``steady`` talks to it directly. In the middle of the crawl the proxy
stops forwarding (``stall``: the traffic is dropped, no connection is closed or
refused, as in a partition) until the cut worker's log said it lost Redis, said
so again (``OUTAGE_LOG_INTERVAL``), and ``master status`` showed it stale (its
heartbeat expired, ``LEASE_WORKER_TIMEOUT``), and for at least
``PARTITION_SECONDS`` (the environment's ``TEST_PARTITION_SECONDS``; 0 by default:
as short as the test can be while it proves it, about 20 s; 60 is the issue's
partition). Then the proxy forwards again: the worker logs that Redis is back and
after how long, and the crawl ends with every product stored once.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import time
from urllib.parse import urlsplit

import pytest

from tools.tcpproxy import TcpProxy

from .conftest import CRAWL_TIMEOUT, START_TIMEOUT, wait_until

pytestmark = pytest.mark.workers

PARTITION_SECONDS = float(os.environ.get("TEST_PARTITION_SECONDS") or 0)
SOCKET_TIMEOUT = 2  # REDIS_SOCKET_TIMEOUT of the cut worker: it notices within this
REPEAT = 4  # OUTAGE_LOG_INTERVAL of the cut worker (60 by default)


def test_a_worker_cut_off_from_redis_says_so_and_nothing_is_lost(crawl, shop_factory):  # type: ignore[no-untyped-def]
    shop = shop_factory(products=60, latency_ms=40)
    parts = urlsplit(crawl.redis_url)
    with TcpProxy(parts.hostname or "127.0.0.1", parts.port or 6379) as proxy:
        through = f"redis://127.0.0.1:{proxy.port}{parts.path}"
        crawl.pause()
        cut = crawl.start_worker(
            "cut",
            REDIS_URL=through,
            REDIS_SOCKET_TIMEOUT=SOCKET_TIMEOUT,
            OUTAGE_LOG_INTERVAL=REPEAT,
            CONCURRENT_REQUESTS=4,
            MAX_IDLE_TIME_BEFORE_CLOSE=5,
        )
        crawl.start_worker("steady", CONCURRENT_REQUESTS=2, MAX_IDLE_TIME_BEFORE_CLOSE=5)
        crawl.wait_open(2)
        crawl.seed(shop.url)
        crawl.resume()

        def pages_of(worker: str) -> int:
            raw = crawl.client.hget("ecommerce:workers", worker)
            return json.loads(raw)["pages"] if raw else 0

        # in the middle of its work: it holds leases when the partition begins
        wait_until(lambda: pages_of("cut") >= 3, START_TIMEOUT, "the cut worker at work")
        proxy.stall()
        stalled_at = time.monotonic()
        lost = f"Redis at 127.0.0.1:{proxy.port} unreachable ("
        wait_until(lambda: lost in cut.log(), CRAWL_TIMEOUT, "the cut worker's warning")
        warned_by = time.monotonic()
        warning = next(line for line in cut.log().splitlines() if lost in line)
        # the first attempt to fail was bounded by the socket timeout (nothing was refused)
        assert "WARNING" in warning and "Timeout" in warning, warning
        # what it holds (it was at work: leased requests at least) and what it waits for
        assert re.search(r": holding \d+ requests? \(\d+ ", warning), warning
        assert "; waiting for its answer to " in warning, warning
        assert proxy.open_connections > 0  # dropped, not closed

        def stale() -> list[dict[str, object]]:
            result = crawl.master("status", "--json")
            assert result.returncode == 0, result.stderr
            return json.loads(result.stdout)["stale_workers"]

        wait_until(
            lambda: [w["worker"] for w in stale()] == ["cut"], CRAWL_TIMEOUT, "cut shown stale"
        )
        text = crawl.master("status").stdout
        assert re.search(r"^cut\s+\S+\s+running\s+\d{4}-\d\d-\d\d ", text, re.M), text
        assert "1 stale: below" in text, text
        report = json.loads(crawl.master("report", "--json").stdout)
        workers = {w["worker"]: w for w in report["workers"]}
        assert workers["cut"]["stale"] and workers["cut"]["stale_since"] is not None
        assert not workers["steady"]["stale"]
        again = f"Redis at 127.0.0.1:{proxy.port} still unreachable after "
        wait_until(lambda: again in cut.log(), CRAWL_TIMEOUT, "the cut worker's reminder")
        wait_until(
            lambda: time.monotonic() - stalled_at >= PARTITION_SECONDS,
            PARTITION_SECONDS + 10,
            "the partition's length",
        )
        assert "reachable again" not in cut.log()
        proxy.resume()
        resumed_at = time.monotonic()

        back = f"Redis at 127.0.0.1:{proxy.port} reachable again after "
        wait_until(lambda: back in cut.log(), CRAWL_TIMEOUT, "the cut worker back")
        line = next(line for line in cut.log().splitlines() if back in line)
        assert "INFO" in line and "(cut off since " in line, line
        cut_off = float(line.split(back)[1].split(" s ")[0])
        # from the start of the first failed attempt (before the warning) to the answer
        # (after the resume); the log rounds it to 0.1 s
        assert cut_off >= resumed_at - warned_by - 0.1, line
        lines = [ln for ln in cut.log().splitlines() if "[crawler.net.outage]" in ln]
        # one line when lost, one per interval, one when back: never one per failed call
        assert 3 <= len(lines) <= 2 + cut_off / REPEAT, "\n".join(lines)

        crawl.wait_workers()
        crawl.assert_clean_logs()

    # nothing lost: every product stored, once
    with sqlite3.connect(crawl.workdir / "products.sqlite3") as db:
        rows = [url for (url,) in db.execute("select url from products")]
    product_urls = {shop.url.rstrip("/") + path for path in shop.catalog.product_paths()}
    assert set(rows) == product_urls and len(rows) == len(product_urls)
    fetched = set(shop.page_fetches())
    assert fetched == shop.catalog.crawlable_paths()
    records = {
        k.decode(): json.loads(v) for k, v in crawl.client.hgetall("ecommerce:workers").items()
    }
    assert records["cut"]["state"] == "finished" and records["cut"]["pages"] > 0
    assert stale() == []
