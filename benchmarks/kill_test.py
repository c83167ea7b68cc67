"""The kill test on our settings and on stock scrapy-redis's: lost and duplicated products.

The same spider, pipelines and demo shop; only the scheduling differs. For each
configuration: a fresh private Redis, a fresh PostgreSQL database, the shop, and
three workers of which the oldest one at work is SIGKILLed every few seconds and replaced
(``tools/killtest.py``). Printed per configuration: products lost (no row in
PostgreSQL), pages never fetched, products fetched and stored more than once
(duplicated: the upsert keeps one row, but the work was done twice), kills, and
time. Not a test: nothing is asserted.

    python -m benchmarks.kill_test --products 400 --latency-ms 250 --kill-every 6 --kill-for 90

``ours`` is this project's defaults (leased requests, binary fingerprints, JSON);
``stock`` overrides, with ``-s``, ``SCHEDULER=scrapy_redis.scheduler.Scheduler``,
``SCHEDULER_QUEUE_CLASS=scrapy_redis.queue.PriorityQueue``,
``DUPEFILTER_CLASS=scrapy_redis.dupefilter.RFPDupeFilter`` and
``SCHEDULER_SERIALIZER=scrapy_redis.picklecompat``.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg2

from demoshop.process import ShopProcess
from tools.killtest import STOCK_SCRAPY_REDIS, KillRun, run_kill_test
from tools.redis_server import RedisServer

DEFAULT_ADMIN_DSN = os.environ.get(
    "TEST_POSTGRES_DSN", "postgresql://postgres@127.0.0.1:5432/postgres"
)
CONFIGURATIONS = {"ours": {}, "stock": STOCK_SCRAPY_REDIS}


@contextmanager
def fresh_database(admin_dsn: str) -> Iterator[str]:
    admin = psycopg2.connect(admin_dsn, connect_timeout=5)
    admin.autocommit = True
    name = f"kill_bench_{uuid.uuid4().hex[:12]}"
    with admin.cursor() as cur:
        cur.execute(f'CREATE DATABASE "{name}"')
    try:
        yield urlunsplit(urlsplit(admin_dsn)._replace(path="/" + name))
    finally:
        with admin.cursor() as cur:
            cur.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.close()


def run_one(name: str, args: argparse.Namespace, workdir: Path) -> KillRun:
    settings = {"CONCURRENT_REQUESTS": args.concurrency, **CONFIGURATIONS[name]}
    with (
        RedisServer(data_dir=workdir / "redis") as redis_server,
        ShopProcess(
            products=args.products,
            latency_ms=args.latency_ms,
            access_log=workdir / "access.log",
        ) as shop,
        fresh_database(args.postgres_admin_dsn) as dsn,
    ):
        return run_kill_test(
            shop,
            redis_server.url,
            dsn,
            workdir,
            workers=args.workers,
            kill_every=args.kill_every,
            kill_for=args.kill_for,
            settings=settings,
            prefix=f"{name}-",
        )


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.kill_test",
        description="Kill workers with SIGKILL during a crawl, on our settings and on stock "
        "scrapy-redis's; print lost and duplicated products for both.",
    )
    parser.add_argument("--products", type=int, default=400, help="shop products (400)")
    parser.add_argument("--latency-ms", type=int, default=250, help="shop latency (250)")
    parser.add_argument("--workers", type=int, default=3, help="workers at a time (3)")
    parser.add_argument("--concurrency", type=int, default=2, help="CONCURRENT_REQUESTS (2)")
    parser.add_argument("--kill-every", type=float, default=6.0, help="seconds between kills")
    parser.add_argument("--kill-for", type=float, default=90.0, help="seconds of killing at most")
    parser.add_argument(
        "--only", choices=sorted(CONFIGURATIONS), action="append", help="run one configuration"
    )
    parser.add_argument(
        "--postgres-admin-dsn",
        default=DEFAULT_ADMIN_DSN,
        help="a PostgreSQL role that may create databases ($TEST_POSTGRES_DSN)",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    print(
        f"demo shop: {args.products} products, {args.latency_ms} ms latency; {args.workers} "
        f"workers, CONCURRENT_REQUESTS={args.concurrency}; the oldest worker at work "
        f"SIGKILLed every {args.kill_every:g} s (for at most {args.kill_for:g} s) and replaced",
        flush=True,
    )
    header = (
        f"{'settings':8} {'kills':>5} {'holding':>7} {'seconds':>7} {'products':>8} "
        f"{'rows':>5} {'lost':>5} {'pages lost':>10} {'duplicated':>10} {'extra fetches':>13}"
    )
    rows = []
    for name in args.only or list(CONFIGURATIONS):
        with tempfile.TemporaryDirectory(prefix=f"kill-{name}-") as tmp:
            run = run_one(name, args, Path(tmp))
        rows.append(
            f"{name:8} {run.kills:>5} {run.kills_holding_leases:>7} {run.seconds:>7.1f} "
            f"{run.products:>8} {run.rows:>5} {run.lost_products:>5} "
            f"{len(run.missing_pages):>10} {run.refetched_products:>10} {run.extra_fetches:>13}"
        )
        print(f"{name}: done in {run.seconds:.1f} s", flush=True)
    print(header)
    print("\n".join(rows))
    print(
        "lost: products with no row; duplicated: products fetched and stored more than once; "
        "holding: kills of a worker that held leased requests (ours only)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
