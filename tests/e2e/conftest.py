"""Fixtures for tests that run real worker processes against the real demo shop."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import redis

from crawler.keys import CrawlKeys
from demoshop.process import ShopProcess
from demoshop.sitemaps import sitemap_paths
from tools.workers import ROOT, WorkerProcess

KEYS = CrawlKeys()

# Short timings so that a crawl of a small shop takes seconds.
FAST_SETTINGS = {
    "LEASE_HEARTBEAT_INTERVAL": 1,
    "LEASE_WORKER_TIMEOUT": 4,
    "LEASE_RECOVERY_INTERVAL": 1,
    "WORKERSTATS_INTERVAL": 1,
    "PAUSE_POLL_INTERVAL": 0.2,
    "LOG_LEVEL": "INFO",
}


class Crawl:
    """One crawl: a private Redis, a workspace, and the workers started in it."""

    def __init__(self, redis_url: str, workdir: Path) -> None:
        self.redis_url = redis_url
        self.workdir = workdir
        self.client = redis.Redis.from_url(redis_url)
        self.workers: list[WorkerProcess] = []
        self.env = {
            "REDIS_URL": redis_url,
            "ALLOW_PRIVATE_NETWORKS": "127.0.0.1",
            "MAX_IDLE_TIME_BEFORE_CLOSE": "2",
            "SITE_MAX_RPS": "0",  # the politeness tests set their own budget
            "EMBEDDED_STORE_PATH": str(workdir / "products.sqlite3"),
        }

    def master(self, *args: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "master", *args],
            cwd=ROOT,
            env={**os.environ, **self.env},
            input=input,
            capture_output=True,
            text=True,
            timeout=60,
        )

    def seed(self, *urls: str) -> None:
        result = self.master("seed", "-", input="\n".join(urls) + "\n")
        assert result.returncode == 0, result.stderr

    def start_worker(
        self,
        worker_id: str | None,
        *,
        name: str | None = None,
        prefix: tuple[str, ...] = (),
        **settings: object,
    ) -> WorkerProcess:
        """Start a worker; ``worker_id`` None leaves ``WORKER_ID`` unset (log: ``name``)."""
        log_name = name or worker_id or f"worker-{len(self.workers) + 1}"
        worker = WorkerProcess(
            worker_id,
            self.env,
            self.workdir / f"{log_name}.log",
            settings={**FAST_SETTINGS, **settings},
            prefix=prefix,
        )
        self.workers.append(worker)
        return worker

    def wait_running(self, count: int, timeout: float = 30) -> None:
        """Wait until ``count`` workers have opened (their records say "running")."""

        def running() -> bool:
            records = [json.loads(raw) for raw in self.client.hvals(KEYS.workers)]
            return sum(record["state"] == "running" for record in records) >= count

        wait_until(running, timeout, f"{count} workers running")

    def wait_workers(self, timeout: float = 180) -> None:
        deadline = time.monotonic() + timeout
        for worker in self.workers:
            try:
                worker.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pytest.fail(
                    f"{worker.worker_id} did not finish in {timeout}s:\n{worker.log()[-4000:]}"
                )

    def assert_clean_logs(self) -> None:
        for worker in self.workers:
            log = worker.log()
            assert "Traceback" not in log, f"{worker.worker_id}:\n{log[-6000:]}"
            assert "Deprecat" not in log, f"{worker.worker_id}:\n{log[-6000:]}"

    def cleanup(self) -> None:
        for worker in self.workers:
            if worker.running:
                worker.kill()
        self.client.close()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):  # type: ignore[no-untyped-def]
    """A failed test shows the tail of each of its workers' logs, where they say what went wrong."""
    report = yield
    crawl = getattr(item, "funcargs", {}).get("crawl")
    if report.failed and isinstance(crawl, Crawl):
        for worker in crawl.workers:
            tail = worker.log_tail() or "(empty)"
            report.sections.append((f"worker {worker.worker_id}: {worker.log_path}", tail))
    return report


@pytest.fixture
def crawl(private_redis, tmp_path) -> Iterator[Crawl]:  # type: ignore[no-untyped-def]
    crawl = Crawl(private_redis.url, tmp_path)
    yield crawl
    crawl.cleanup()


@pytest.fixture
def shop_factory(tmp_path) -> Iterator[Callable[..., ShopProcess]]:  # type: ignore[no-untyped-def]
    shops: list[ShopProcess] = []

    def start(**options: object) -> ShopProcess:
        options.setdefault("access_log", tmp_path / f"access-{len(shops)}.log")
        shop = ShopProcess(**options)  # type: ignore[arg-type]
        shop.__enter__()
        shops.append(shop)
        return shop

    yield start
    for shop in shops:
        shop.stop()


def page_fetches(shop: ShopProcess) -> Counter[str]:
    """How many times each page (not robots.txt, not a sitemap) was requested, from the
    shop's access log."""
    return Counter(shop.page_fetches())


def parsed_pages(shop: ShopProcess) -> int:
    """The pages the workers parse in a full crawl of the shop: its pages and its sitemaps."""
    return len(shop.catalog.crawlable_paths()) + len(sitemap_paths(shop.catalog))


def wait_until(predicate: Callable[[], bool], timeout: float, message: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout}s waiting for: {message}")
        time.sleep(0.1)
