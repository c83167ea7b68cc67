"""Crawling a shop that defends itself, at full size: 429 share, products, dead letters.

The scenario of issue 20: a demo shop of 600 products behind a rate limiter of
6 requests/s (over it: 429 with ``Retry-After: 2``) that also answers 503 to the
first request of every 10th product page; two workers. Runs, each on a fresh
private Redis and a fresh shop:

* ``budget 3x``: ``SITE_MAX_RPS`` three times the limiter's rate (18);
* ``budget 20``: ``SITE_MAX_RPS=20``, as the issue's first try;
* ``default``: the default budget (``SITE_MAX_RPS`` of ``crawler/core/defaults.py``);
* ``503 burst``: no limiter, every page answers 503 for 30 s after the first
  50 requests, budget 20.

Printed per run: requests the shop answered (robots.txt left out), how many
were 429 and 503, the 429 share, products stored of those in the shop, dead
letters, cuts of the site's rate, and the crawl's time. Not a test: nothing is
asserted.

    python -m benchmarks.backoff                    # every run
    python -m benchmarks.backoff --runs "budget 3x" --products 300
"""

from __future__ import annotations

import argparse
import sqlite3
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import redis

from crawler.core import defaults
from crawler.core.keys import CrawlKeys
from demoshop.process import ShopProcess
from tools.redis_server import RedisServer
from tools.workers import WorkerProcess, wait_all

KEYS = CrawlKeys()
RUNS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    # name: (shop options, worker settings)
    "budget 3x": (
        {"rate_limit": 6, "retry_after": 2, "fail_every": 10},
        {"SITE_MAX_RPS": 18},
    ),
    "budget 20": (
        {"rate_limit": 6, "retry_after": 2, "fail_every": 10},
        {"SITE_MAX_RPS": 20},
    ),
    "default": (
        {"rate_limit": 6, "retry_after": 2, "fail_every": 10},
        {"SITE_MAX_RPS": defaults.SITE_MAX_RPS},
    ),
    "503 burst": ({"outage_seconds": 30, "outage_after": 50}, {"SITE_MAX_RPS": 20}),
}


def run(name: str, products: int, workers: int, workdir: Path) -> dict[str, Any]:
    shop_options, settings = RUNS[name]
    server = RedisServer(data_dir=workdir / "redis").start()
    client = redis.Redis.from_url(server.url)
    store = workdir / "products.sqlite3"
    env = {
        "REDIS_URL": server.url,
        "ALLOW_PRIVATE_NETWORKS": "127.0.0.1",
        "MAX_IDLE_TIME_BEFORE_CLOSE": "5",
        "EMBEDDED_STORE_PATH": str(store),
    }
    started = time.monotonic()
    with ShopProcess(products=products, access_log=workdir / "access.log", **shop_options) as shop:
        client.rpush(KEYS.start_urls, shop.url)
        crawlers = [
            WorkerProcess(f"w{n}", env, workdir / f"w{n}.log", settings=settings)
            for n in range(workers)
        ]
        try:
            wait_all(crawlers, timeout=3600)
        finally:
            for worker in crawlers:
                worker.kill()
        elapsed = time.monotonic() - started
        log = [entry for entry in shop.read_access_log() if entry.path != "/robots.txt"]
        in_shop = len(shop.catalog.product_paths())
    with sqlite3.connect(store) as conn:
        (stored,) = conn.execute("SELECT count(DISTINCT url) FROM products").fetchone()
    statuses = Counter(entry.status for entry in log)
    figures = {
        "run": name,
        "requests": len(log),
        "429": statuses[429],
        "503": statuses[503],
        "429 share": f"{statuses[429] / max(1, len(log)):.1%}",
        "products": f"{stored}/{in_shop}",
        "dead letters": int(client.llen(KEYS.dead)),
        "rate cuts": int(client.hget(KEYS.stats, "site_rate_cuts") or 0),
        "seconds": f"{elapsed:.1f}",
    }
    client.close()
    server.cleanup()
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.backoff", description=__doc__)
    parser.add_argument("--products", type=int, default=600)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--runs", nargs="+", choices=sorted(RUNS), default=list(RUNS))
    args = parser.parse_args(argv)
    rows = []
    for name in args.runs:
        with tempfile.TemporaryDirectory(prefix="backoff-bench-") as tmp:
            rows.append(run(name, args.products, args.workers, Path(tmp)))
            print("  ".join(f"{k}={v}" for k, v in rows[-1].items()), flush=True)
    headers = list(rows[0])
    widths = [max(len(h), *(len(str(r[h])) for r in rows)) for h in headers]
    print("  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)))
    for row in rows:
        print("  ".join(str(row[h]).ljust(w) for h, w in zip(headers, widths, strict=True)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
