"""A primary's failover mid-crawl, on a Redis Cluster with replicas: what is lost, what is redone.

Each run starts a private loopback cluster of 3 primaries with a replica each
(``tools/redis_cluster.py``), ``--shops`` demo shops of ``--products`` products
each, seeds them through the master and starts ``--workers`` workers with
``REDIS_CLUSTER=true``. When a third of the products are stored, the primary
holding the most of the crawl's queued, seen and leased requests is killed
with SIGKILL (a crash: what it had not sent to its replica is gone); its
replica takes over after the cluster's node timeout (1 s here). The crawl then
runs to its end.

Printed per run:

* ``lost``: products of the shops never stored (the at-least-once promise says 0);
* ``refetched``: product pages the shops served more than once (the price of
  redoing what may have been lost);
* ``redone``: requests the workers requeued when they met the new primary;
* ``dead``: dead letters; ``killed``: the killed node's port and the queue,
  fingerprint and lease entries it held;
* ``seconds``: from the first seed to the last worker's exit.

Not a test: nothing is asserted.

    python -m benchmarks.failover                     # 3 runs, 3 shops x 300 products
    python -m benchmarks.failover --runs 1 --products 500
"""

from __future__ import annotations

import argparse
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import redis

from crawler.core.keys import CrawlKeys
from crawler.scheduling.lanes import LANES_SUFFIX
from demoshop.process import ShopProcess
from tools.redis_cluster import RedisCluster
from tools.workers import ROOT, WorkerProcess, wait_all

KEYS = CrawlKeys.layout(cluster=True)


def stored_products(store: Path) -> set[str]:
    if not store.exists():
        return set()
    try:
        with sqlite3.connect(store, timeout=30) as conn:
            return {url for (url,) in conn.execute("SELECT url FROM products")}
    except sqlite3.OperationalError:  # not created yet
        return set()


def crawl_keys_by_node(cluster: RedisCluster) -> dict[int, int]:
    """Requests of the crawl queued, seen or leased on each live primary, by port
    (entries of its queues, fingerprint sets and lease hashes)."""
    counts = {}
    for node in cluster.nodes:
        if node.process is None:
            continue
        client = redis.Redis.from_url(node.url, socket_timeout=5)
        try:
            if client.info("replication").get("role") != "master":
                continue
            count = 0
            for key in client.scan_iter(match=f"{KEYS.prefix}{{s*}}:*", count=500):
                kind = client.type(key)
                if key.endswith(LANES_SUFFIX.encode()):
                    continue  # a queue's lane index: its lanes are counted
                if kind == b"list":  # a queue's lane
                    count += int(client.llen(key))
                elif kind == b"zset":
                    count += int(client.zcard(key))
                elif kind == b"set":
                    count += int(client.scard(key))
                elif kind == b"hash":
                    count += int(client.hlen(key))
            counts[node.port] = count
        finally:
            client.close()
    return counts


def run(index: int, args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    cluster = RedisCluster(primaries=3, replicas=1, data_dir=workdir / "cluster").start()
    store = workdir / "products.sqlite3"
    env = {
        "REDIS_CLUSTER": "true",
        "REDIS_URL": cluster.startup_urls,
        "ALLOW_PRIVATE_NETWORKS": "127.0.0.1",
        "MAX_IDLE_TIME_BEFORE_CLOSE": str(args.idle),
        "EMBEDDED_STORE_PATH": str(store),
    }
    shops = [
        ShopProcess(products=args.products, seed=n + 1, access_log=workdir / f"shop{n}.log")
        for n in range(args.shops)
    ]
    started = time.monotonic()
    killed: dict[str, Any] = {}
    try:
        for shop in shops:
            shop.start()
        seed = subprocess.run(
            [sys.executable, "-m", "master", "seed", "-"],
            input="".join(f"{shop.url}\n" for shop in shops),
            env={**os.environ, **env},
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
        if seed.returncode != 0:
            raise RuntimeError(f"master seed failed: {seed.stderr}")
        workers = [WorkerProcess(f"w{n}", env, workdir / f"w{n}.log") for n in range(args.workers)]
        total = args.products * args.shops
        try:
            deadline = time.monotonic() + args.timeout
            while len(stored_products(store)) < total // 3:
                if time.monotonic() > deadline or not any(w.running for w in workers):
                    raise RuntimeError("the crawl stopped before a third of it was stored")
                time.sleep(0.2)
            by_node = crawl_keys_by_node(cluster)
            port = max(by_node, key=lambda p: by_node[p])
            killed = {"port": port, "keys": by_node[port], "stored": len(stored_products(store))}
            cluster.kill(cluster.node_for_port(port))
            wait_all(workers, timeout=args.timeout)
        finally:
            for worker in workers:
                worker.kill()
        elapsed = time.monotonic() - started
        expected: set[str] = set()
        fetches: Counter[str] = Counter()
        for shop in shops:
            expected |= set(shop.expected_products())
            product_paths = set(shop.catalog.product_paths())
            fetches.update(
                shop.url.rstrip("/") + path for path in shop.page_fetches() if path in product_paths
            )
        stored = stored_products(store)
        client = cluster.client()
        try:
            dead = int(client.llen(KEYS.dead))
        finally:
            client.close()
        errors = sum(w.log().count(" ERROR: ") for w in workers)
        redone = sum(
            int(found)
            for w in workers
            for found in re.findall(r"requeued the (\d+) request\(s\) this worker held", w.log())
        )
        return {
            "run": index + 1,
            "products": f"{len(stored & expected)}/{len(expected)}",
            "lost": len(expected - stored),
            "refetched": sum(1 for count in fetches.values() if count > 1),
            "redone": redone,
            "dead": dead,
            "killed": f"{killed.get('port')} ({killed.get('keys')} entries, "
            f"at {killed.get('stored')} stored)",
            "worker errors": errors,
            "seconds": f"{elapsed:.1f}",
        }
    finally:
        for shop in shops:
            shop.cleanup()
        cluster.cleanup()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.failover",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--shops", type=int, default=3)
    parser.add_argument("--products", type=int, default=300, help="products per shop")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--idle", type=int, default=10, help="MAX_IDLE_TIME_BEFORE_CLOSE")
    parser.add_argument("--timeout", type=float, default=900, help="seconds a run may take")
    parser.add_argument(
        "--keep",
        metavar="DIR",
        help="keep each run's logs and store in DIR/run-<n> (else a temp dir)",
    )
    args = parser.parse_args(argv)
    rows = []
    for index in range(args.runs):
        if args.keep:
            workdir = Path(args.keep) / f"run-{index + 1}"
            workdir.mkdir(parents=True, exist_ok=True)
            rows.append(run(index, args, workdir))
        else:
            with tempfile.TemporaryDirectory(prefix="failover-bench-") as tmp:
                rows.append(run(index, args, Path(tmp)))
        print("  ".join(f"{k}={v}" for k, v in rows[-1].items()), flush=True)
    print(
        f"lost in all: {sum(r['lost'] for r in rows)}, "
        f"refetched in all: {sum(r['refetched'] for r in rows)}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
