"""Fixtures for tests that run real worker processes against the real demo shop."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import redis

from crawler.core.keys import CrawlKeys
from demoshop.process import ShopProcess
from demoshop.sitemaps import sitemap_paths
from tests.support.master_inprocess import run_master
from tools.workers import WorkerProcess

KEYS = CrawlKeys()

# Deadlines of waits that include a worker's start-up. On a quiet machine a worker is
# open in 2 to 5 s; on one busy with other crawls it took 20 s, and over a minute for
# a process with a smaller share of the CPU. A deadline is only how long a test waits
# before it says what it was waiting for: it follows the crawl's progress, never a speed.
# Below pytest's own timeout (300 s a test, pyproject.toml), so a test says what it
# waited for; a test with two rounds of workers has a longer one of its own.
START_TIMEOUT = 240.0
CRAWL_TIMEOUT = 240.0

# Short timings so that a crawl of a small shop takes seconds.
FAST_SETTINGS = {
    "LEASE_HEARTBEAT_INTERVAL": 1,
    # a live worker's leases are taken over after this many seconds without a beat: its
    # reactor may stall that long while it starts on a machine busy with other tests
    # (seen at 4 s under a load of 15 on 2 cores: pages fetched twice)
    "LEASE_WORKER_TIMEOUT": 10,
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
        #: the temporary directory of the crawl's processes (their browsers' too), deleted
        #: with the crawl: what a worker killed outright leaves there goes with it. A short
        #: path: Chromium refuses a process singleton's socket path of ~100 characters.
        self.tmpdir = Path(tempfile.mkdtemp(prefix="e2e-"))
        self.env = {
            "REDIS_URL": redis_url,
            "ALLOW_PRIVATE_NETWORKS": "127.0.0.1",
            "MAX_IDLE_TIME_BEFORE_CLOSE": "2",
            "SITE_MAX_RPS": "0",  # the politeness tests set their own budget
            "EMBEDDED_STORE_PATH": str(workdir / "products.sqlite3"),
            "TMPDIR": str(self.tmpdir),
        }

    def master(self, *args: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
        """``python -m master ARGS`` with the crawl's environment, run in this process
        (:mod:`tests.support.master_inprocess`: a second of CPU saved a command)."""
        return run_master(list(args), self.env, input)

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

    def wait_running(self, count: int, timeout: float = START_TIMEOUT) -> None:
        """Wait until ``count`` workers have opened (their records say "running")."""

        def running() -> bool:
            records = [json.loads(raw) for raw in self.client.hvals(KEYS.workers)]
            return sum(record["state"] == "running" for record in records) >= count

        wait_until(running, timeout, f"{count} workers running")

    def pause(self) -> None:
        """``master pause``: workers started now open, then wait (see :meth:`wait_open`)."""
        result = self.master("pause")
        assert result.returncode == 0, result.stderr

    def wait_open(self, count: int, timeout: float = START_TIMEOUT) -> None:
        """Wait until ``count`` workers have opened, paused or not.

        Started side by side, two workers finish their start-up seconds apart on a
        busy machine: the first can crawl a small shop alone, or close for idleness
        before the seed comes, while the other still imports Scrapy. Started during
        a pause (:meth:`pause`), a worker neither takes work nor closes: after this
        wait and :meth:`resume`, they all begin together.
        """

        def opened() -> bool:
            records = [json.loads(raw) for raw in self.client.hvals(KEYS.workers)]
            return sum(record["state"] in ("running", "paused") for record in records) >= count

        wait_until(opened, timeout, f"{count} workers open")

    def resume(self) -> None:
        result = self.master("resume")
        assert result.returncode == 0, result.stderr

    def wait_workers(self, timeout: float = CRAWL_TIMEOUT) -> None:
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
        shutil.rmtree(self.tmpdir, ignore_errors=True)


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
        options.setdefault("startup_timeout", START_TIMEOUT)  # 10 s was not enough at load 10
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


def _wait_stopped(pid: int) -> None:
    """Wait until the kernel has stopped process ``pid`` (state T), or it is gone."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            return
        if state in ("T", "t", "Z", "X"):
            return
        time.sleep(0.001)


def freeze_when(
    worker: WorkerProcess, predicate: Callable[[], bool], timeout: float, message: str
) -> None:
    """Wait until ``predicate()`` holds, looking only while ``worker`` is stopped; leave it stopped.

    Each look freezes the worker (SIGSTOP) and lets it go on (SIGCONT) when the
    answer is no, so what the test saw is still true when it acts on the frozen
    worker (kills it), however fast or slow the worker and the test run.
    """

    def frozen_look() -> bool:
        worker.process.send_signal(signal.SIGSTOP)
        _wait_stopped(worker.process.pid)
        if predicate():
            return True
        worker.process.send_signal(signal.SIGCONT)
        return False

    wait_until(frozen_look, timeout, message)
