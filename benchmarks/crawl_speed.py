"""Crawl speed with 1 and N workers: pages/s, CPU ms/page, Redis commands/page, speedup.

Each run uses a fresh private Redis and the demo shop, seeds it, runs the
workers to the end (MAX_IDLE_TIME_BEFORE_CLOSE=2) and reads the figures from
the workers' own records (``master report``), the kernel (CPU time of each
worker process, from ``wait4``) and Redis (``INFO stats``). Pages/s is measured
over the active window: from the first worker's start to the last worker's
last page, so the idle wait before closing does not count. Bounded: loopback
only, one shop, at most a few thousand pages per run.

    python -m benchmarks.crawl_speed --products 1000 --latency-ms 50 --workers 1 2 4
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import redis

from crawler.keys import CrawlKeys
from demoshop.process import ShopProcess
from tools.redis_server import RedisServer
from tools.workers import ROOT, WorkerProcess

KEYS = CrawlKeys()


def wait_with_rusage(workers: list[WorkerProcess], timeout: float) -> float:
    """Wait for every worker; return their total CPU seconds (user + system)."""
    cpu = 0.0
    pending = {w.process.pid: w for w in workers}
    deadline = time.monotonic() + timeout
    while pending:
        for pid in list(pending):
            done, status, usage = os.wait4(pid, os.WNOHANG)
            if done:
                cpu += usage.ru_utime + usage.ru_stime
                pending.pop(pid).process.returncode = os.waitstatus_to_exitcode(status)
        if time.monotonic() > deadline:
            raise TimeoutError("workers did not finish")
        time.sleep(0.05)
    return cpu


def run(n_workers: int, products: int, latency_ms: int, concurrency: int) -> dict[str, float]:
    with (
        tempfile.TemporaryDirectory(prefix="bench-") as tmp,
        RedisServer(data_dir=Path(tmp) / "redis", appendonly=False) as server,
        ShopProcess(
            products=products, latency_ms=latency_ms, access_log=Path(tmp) / "access.log"
        ) as shop,
    ):
        env = {
            "REDIS_URL": server.url,
            "ALLOW_PRIVATE_NETWORKS": "127.0.0.1",
            "MAX_IDLE_TIME_BEFORE_CLOSE": "2",
            "SITE_MAX_RPS": "0",  # measure the crawler, not the politeness budget
            "EMBEDDED_STORE_PATH": str(Path(tmp) / "products.sqlite3"),
        }
        subprocess.run(
            [sys.executable, "-m", "master", "seed", "-"],
            input=shop.url + "\n",
            text=True,
            check=True,
            capture_output=True,
            cwd=ROOT,
            env={**os.environ, **env},
        )
        client = redis.Redis.from_url(server.url)
        client.config_resetstat()
        workers = [
            WorkerProcess(
                f"bench-{n}",
                env,
                Path(tmp) / f"worker-{n}.log",
                settings={
                    "CONCURRENT_REQUESTS": concurrency,
                    "CONCURRENT_REQUESTS_PER_DOMAIN": concurrency,
                    "LOG_LEVEL": "WARNING",
                    "LOGSTATS_INTERVAL": 0,
                },
            )
            for n in range(n_workers)
        ]
        cpu = wait_with_rusage(workers, timeout=900)
        calls = {
            name[len("cmdstat_") :]: v["calls"] for name, v in client.info("commandstats").items()
        }
        commands = sum(calls.values())
        # Commands our workers only ever run inside Lua scripts; the rest are round trips.
        inside_lua = sum(
            calls.get(c, 0)
            for c in ("hset", "zadd", "sadd", "zrange", "zremrangebyrank", "lrange", "ltrim")
        )
        round_trips = commands - inside_lua
        records = [json.loads(raw) for raw in client.hvals(KEYS.workers)]
        pages = sum(r["pages"] for r in records)
        start = min(r["started_at"] for r in records)
        end = max(r["finished_at"] - r["idle_tail"] for r in records)
        fingerprints = int(client.scard(KEYS.dupefilter))
        df_bytes = int(client.memory_usage(KEYS.dupefilter) or 0)
        failed = [w.worker_id for w in workers if w.process.returncode != 0]
        if failed:
            raise RuntimeError(f"workers failed: {failed}")
        return {
            "workers": n_workers,
            "pages": pages,
            "seconds": end - start,
            "pages_per_s": pages / (end - start),
            "cpu_ms_per_page": cpu * 1000 / pages,
            "redis_cmds_per_page": commands / pages,
            "round_trips_per_page": round_trips / pages,
            "bytes_per_fingerprint": df_bytes / max(fingerprints, 1),
            "shop_requests": len(shop.read_access_log()),
        }


def hex_set_bytes_per_member(count: int) -> float:
    """What scrapy-redis's own format (40-char hex strings) costs, for comparison."""
    with RedisServer(appendonly=False) as server:
        client = redis.Redis.from_url(server.url)
        with client.pipeline(transaction=False) as pipe:
            for i in range(count):
                pipe.sadd("hex", f"{i:040x}")
            pipe.execute()
        return int(client.memory_usage("hex") or 0) / count


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--products", type=int, default=1000)
    parser.add_argument("--latency-ms", type=int, default=50)
    parser.add_argument(
        "--concurrency", type=int, default=16, help="CONCURRENT_REQUESTS per worker"
    )
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    args = parser.parse_args(argv)
    print(
        f"demo shop: {args.products} products, {args.latency_ms} ms latency; "
        f"CONCURRENT_REQUESTS={args.concurrency}; {os.cpu_count()} CPUs"
    )
    header = (
        f"{'workers':>7} {'pages':>6} {'seconds':>8} {'pages/s':>8} {'speedup':>7} "
        f"{'CPU ms/page':>11} {'Redis cmds/page':>15} {'round trips/page':>16} "
        f"{'B/fingerprint':>13}"
    )
    print(header)
    base = None
    last = None
    for n in args.workers:
        result = run(n, args.products, args.latency_ms, args.concurrency)
        base = base or result["pages_per_s"]
        last = result
        print(
            f"{n:>7} {result['pages']:>6} {result['seconds']:>8.2f} {result['pages_per_s']:>8.1f} "
            f"{result['pages_per_s'] / base:>7.2f} {result['cpu_ms_per_page']:>11.2f} "
            f"{result['redis_cmds_per_page']:>15.2f} {result['round_trips_per_page']:>16.2f} "
            f"{result['bytes_per_fingerprint']:>13.1f}",
            flush=True,
        )
    if last:
        count = int(last["pages"])
        print(
            f"scrapy-redis's hex fingerprints would take {hex_set_bytes_per_member(count):.1f} "
            f"B/fingerprint for the same {count} members"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
