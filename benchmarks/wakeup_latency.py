"""How soon an idle worker takes work pushed into an empty queue (wake-ups).

Starts a private Redis, a small demo shop and one real worker that waits for
work (``MAX_IDLE_TIME_BEFORE_CLOSE=0``); once it is open and idle, pushes one
product page at a time into the empty queue and measures the time until the
worker has taken it (the queue is empty again: popped under lease), with a
pause between pushes so that the worker is idle again each time. Prints each
latency, the median and the largest.

    .venv/bin/python -m benchmarks.wakeup_latency [--pushes 20] [--idle-poll-max 1]

``--idle-poll-max`` sets ``SCHEDULER_IDLE_POLL_MAX``: with wake-ups the latency
does not depend on it; ``-s SCHEDULER_WAKEUPS=False`` shows the idle poll alone.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import redis

from crawler.core.keys import CrawlKeys
from crawler.scheduling.lanes import push_requests, queued
from demoshop.process import ShopProcess
from master.requeue import encode, recrawl_request
from tools.redis_server import RedisServer
from tools.workers import WorkerProcess

KEYS = CrawlKeys()


def measure(pushes: int, settings: dict[str, str], pause: float) -> list[float]:
    """Milliseconds from each push to the worker's pop."""
    with (
        tempfile.TemporaryDirectory(prefix="wakeup-") as tmp,
        RedisServer(appendonly=False) as server,
        ShopProcess(products=max(pushes, 10), access_log=Path(tmp) / "access.log") as shop,
    ):
        env = {
            "REDIS_URL": server.url,
            "ALLOW_PRIVATE_NETWORKS": "127.0.0.1",
            "MAX_IDLE_TIME_BEFORE_CLOSE": "0",
            "EMBEDDED_STORE_PATH": str(Path(tmp) / "products.sqlite3"),
        }
        client = redis.Redis.from_url(server.url)
        worker = WorkerProcess("idle", env, Path(tmp) / "worker.log", settings=settings)
        try:
            deadline = time.monotonic() + 300

            def opened() -> bool:
                records = [json.loads(raw) for raw in client.hvals(KEYS.workers)]
                return any(record["state"] == "running" for record in records)

            while not opened():
                if time.monotonic() > deadline or not worker.running:
                    raise SystemExit(f"the worker did not open:\n{worker.log()[-3000:]}")
                time.sleep(0.1)
            base = shop.url.rstrip("/")
            paths = sorted(shop.catalog.product_paths())
            payloads = [encode(recrawl_request(base + path)) for path in paths]
            latencies = []
            for payload in payloads[:pushes]:
                time.sleep(pause)  # idle again: the last page is done, the queue empty
                pushed = time.perf_counter()
                push_requests(client, KEYS.requests, {payload: 0})
                while queued(client, KEYS.requests):
                    time.sleep(0.0005)
                latencies.append((time.perf_counter() - pushed) * 1000)
            return latencies
        finally:
            worker.stop()
            client.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pushes", type=int, default=20)
    parser.add_argument("--pause", type=float, default=1.5, help="seconds between pushes")
    parser.add_argument("--idle-poll-max", default="1", help="SCHEDULER_IDLE_POLL_MAX")
    parser.add_argument("-s", dest="settings", action="append", default=[], metavar="NAME=VALUE")
    args = parser.parse_args(argv)
    settings = {"SCHEDULER_IDLE_POLL_MAX": args.idle_poll_max, "LOG_LEVEL": "INFO"}
    settings.update(dict(item.split("=", 1) for item in args.settings))
    latencies = measure(args.pushes, settings, args.pause)
    print("push to pop, ms:", " ".join(f"{value:.1f}" for value in latencies))
    print(
        f"median {statistics.median(latencies):.1f} ms, largest {max(latencies):.1f} ms "
        f"({len(latencies)} pushes; settings {settings})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
