"""The runs behind ``python -m master bench``: one crawl of the demo shop per row.

Every row crawls the same shop from a clean state (the private Redis is
flushed, a fresh product store) with the same spider and extraction:

``reliable``   this project's scheduler (leases, binary dupefilter), 1, 2, 4 ... workers
``memory``     Scrapy's in-memory scheduler and dupefilter, one process (reference)
``scrapy-redis`` stock scrapy-redis: its scheduler, RFPDupeFilter, PriorityQueue and
               pickle serializer (reference)

Each worker is a real ``scrapy crawl ecommerce`` process; the seed is pushed by
``python -m master seed`` like in production. Figures:

* **elapsed**: from the workers' own records in ``<spider>:workers`` (first
  ``started_at`` to the last worker's last page, ``finished_at - idle_tail``),
  so process start-up and the idle wait before closing do not count;
* **CPU-ms per page**: CPU time of the worker processes from the moment each
  published its first record (Scrapy is up) to its exit (``wait4``), per page;
* **Redis commands per page**: ``INFO commandstats`` (commands run inside Lua
  scripts included), and **round trips per page**: ``total_reads_processed``
  of ``INFO stats`` (a pipeline or a script call is one read), both without the
  benchmark's own monitoring calls;
* **peak RSS**: the largest ``ru_maxrss`` of the run's worker processes;
* **shop and Redis CPU-ms per page**: CPU time the demo shop and the
  ``redis-server`` used while the workers ran, per page: with the workers, they
  share the machine's cores, so a CPU-bound run can be no faster than
  ``cores / (worker + shop + Redis CPU-s per page)`` pages/s.

``Bench(on_sample=...)`` is called on every poll (twice a second) with the
seconds since the workers started, the pages their records count and the
resident set size of each running worker (bytes, by pid): what
:mod:`benchmarks.memory_soak` draws over a long crawl.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import psutil
import redis

from crawler.core.keys import CrawlKeys
from crawler.core.records import WorkerRecord
from demoshop.process import ShopProcess
from tools.redis_server import RedisServer
from tools.tcpproxy import TcpProxy
from tools.workers import ROOT, WorkerProcess

KEYS = CrawlKeys()

MODES: dict[str, dict[str, object]] = {
    "reliable": {},
    "memory": {
        "SCHEDULER": "scrapy.core.scheduler.Scheduler",
        "DUPEFILTER_CLASS": "scrapy.dupefilters.RFPDupeFilter",
    },
    "scrapy-redis": {
        "SCHEDULER": "scrapy_redis.scheduler.Scheduler",
        "DUPEFILTER_CLASS": "scrapy_redis.dupefilter.RFPDupeFilter",
        "SCHEDULER_QUEUE_CLASS": "scrapy_redis.queue.PriorityQueue",
        "SCHEDULER_SERIALIZER": "scrapy_redis.picklecompat",
    },
}
MODE_LABELS = {
    "reliable": "this crawler",
    "memory": "Scrapy in-memory scheduler",
    "scrapy-redis": "stock scrapy-redis",
}


@dataclass
class RunSpec:
    mode: str
    workers: int


@dataclass
class RunResult:
    mode: str
    workers: int
    pages: int
    items: int
    elapsed: float
    pages_per_s: float
    cpu_ms_per_page: float
    redis_commands_per_page: float
    round_trips_per_page: float
    peak_rss_mb: float
    shop_requests: int
    commands: dict[str, int] = field(default_factory=dict)
    shop_cpu_ms_per_page: float = 0.0
    redis_cpu_ms_per_page: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class BenchFailed(RuntimeError):
    """A worker failed, or a run did not end in time."""


class Bench:
    """One Redis (behind a delaying proxy when ``redis_delay_ms``), one shop, many runs."""

    def __init__(
        self,
        shop: ShopProcess,
        workdir: Path,
        redis_delay_ms: float = 0.0,
        concurrency: int = 16,
        timeout: float = 600.0,
        extra_settings: dict[str, str] | None = None,
        on_progress: Callable[[str], None] | None = None,
        on_sample: Callable[[float, int, dict[int, int]], None] | None = None,
    ) -> None:
        self.shop = shop
        self.workdir = workdir
        self.redis_delay_ms = redis_delay_ms
        self.concurrency = concurrency
        self.timeout = timeout
        self.extra_settings = extra_settings or {}
        self.on_progress = on_progress or (lambda line: None)
        self.on_sample = on_sample
        self.server: RedisServer | None = None
        self.proxy: TcpProxy | None = None
        self.workers: list[WorkerProcess] = []

    @contextmanager
    def started(self) -> Iterator[Bench]:
        with RedisServer(data_dir=self.workdir / "redis", appendonly=False) as server:
            self.server = server
            try:
                if self.redis_delay_ms > 0:
                    # the delay is split between the two directions: it is added round-trip time
                    delay = self.redis_delay_ms / 2000
                    with TcpProxy("127.0.0.1", server.port, delay=delay) as proxy:
                        self.proxy = proxy
                        yield self
                else:
                    yield self
            finally:
                self.stop_workers()
                self.proxy = None
                self.server = None

    @property
    def worker_redis_url(self) -> str:
        assert self.server is not None
        if self.proxy is None:
            return self.server.url
        return f"redis://127.0.0.1:{self.proxy.port}/0"

    def stop_workers(self) -> None:
        for worker in self.workers:
            worker.stop(timeout=30)
        self.workers = []

    def run(self, spec: RunSpec) -> RunResult:
        assert self.server is not None, "use Bench.started()"
        client = redis.Redis.from_url(self.server.url)  # direct: monitoring is not delayed
        try:
            return self._run(spec, client)
        finally:
            self.stop_workers()
            client.close()

    def _run(self, spec: RunSpec, client: redis.Redis) -> RunResult:
        assert self.server is not None
        run_dir = self.workdir / f"{spec.mode}-{spec.workers}"
        run_dir.mkdir(parents=True, exist_ok=True)
        client.flushall()
        env = {
            "REDIS_URL": self.worker_redis_url,
            "ALLOW_PRIVATE_NETWORKS": "127.0.0.1",
            "MAX_IDLE_TIME_BEFORE_CLOSE": "2",
            "EMBEDDED_STORE_PATH": str(run_dir / "products.sqlite3"),
        }
        seeded = subprocess.run(
            [sys.executable, "-m", "master", "seed", "-"],
            input=self.shop.url + "\n",
            text=True,
            capture_output=True,
            cwd=ROOT,
            env={**os.environ, **env, "REDIS_URL": self.server.url},
        )
        if seeded.returncode != 0:
            raise BenchFailed(f"seeding failed: {seeded.stderr.strip()}")
        shop_before = len(self.shop.read_access_log())
        client.config_resetstat()
        reads_before = _reads(client)
        settings: dict[str, object] = {
            "CONCURRENT_REQUESTS": self.concurrency,
            "CONCURRENT_REQUESTS_PER_DOMAIN": self.concurrency,
            "LOG_LEVEL": "WARNING",
            "LOGSTATS_INTERVAL": 0,
            **MODES[spec.mode],
            **self.extra_settings,
        }
        others = {"shop": _pid(self.shop.process), "redis": _pid(self.server.process)}
        others_before = {name: _cpu_seconds(pid) for name, pid in others.items()}
        self.workers = [
            WorkerProcess(
                f"bench-{spec.mode}-{n + 1}", env, run_dir / f"worker-{n + 1}.log", settings
            )
            for n in range(spec.workers)
        ]
        cpu, peak_rss, monitor_calls = self._watch(spec, client)
        others_cpu = {
            name: _cpu_seconds(pid) - others_before[name] for name, pid in others.items()
        }
        calls = {
            name[len("cmdstat_") :]: int(value["calls"])
            for name, value in client.info("commandstats").items()
        }
        # the benchmark's own calls: its polls (counted) and the INFO calls around them
        for own in ("config|resetstat", "info"):
            calls.pop(own, None)
        calls["hgetall"] = calls.get("hgetall", 0) - monitor_calls
        if not calls["hgetall"]:
            del calls["hgetall"]
        round_trips = _reads(client) - reads_before - monitor_calls - 2
        records = [WorkerRecord.decode(raw) for raw in client.hvals(KEYS.workers)]
        failed = [w.worker_id for w in self.workers if w.process.returncode != 0]
        if failed:
            logs = "; ".join(f"{w.worker_id}: {w.log()[-800:]}" for w in self.workers)
            raise BenchFailed(f"workers failed: {failed}: {logs}")
        if len(records) != spec.workers:
            raise BenchFailed(f"{len(records)} worker records for {spec.workers} workers")
        pages = sum(r.pages for r in records)
        items = sum(r.items for r in records)
        if not pages:
            raise BenchFailed("no page was crawled")
        unfinished = [r.worker for r in records if r.started_at is None or r.finished_at is None]
        if unfinished:
            raise BenchFailed(f"workers without start or finish time: {unfinished}")
        start = min(r.started_at for r in records if r.started_at is not None)
        end = max(r.finished_at - r.idle_tail for r in records if r.finished_at is not None)
        elapsed = max(end - start, 1e-6)
        commands = sum(calls.values())
        return RunResult(
            mode=spec.mode,
            workers=spec.workers,
            pages=pages,
            items=items,
            elapsed=round(elapsed, 3),
            pages_per_s=round(pages / elapsed, 2),
            cpu_ms_per_page=round(cpu * 1000 / pages, 3),
            redis_commands_per_page=round(commands / pages, 3),
            round_trips_per_page=round(max(round_trips, 0) / pages, 3),
            peak_rss_mb=round(peak_rss / 1024, 1),
            shop_requests=len(self.shop.read_access_log()) - shop_before,
            commands=dict(sorted(calls.items(), key=lambda kv: -kv[1])),
            shop_cpu_ms_per_page=round(others_cpu["shop"] * 1000 / pages, 3),
            redis_cpu_ms_per_page=round(others_cpu["redis"] * 1000 / pages, 3),
        )

    def _watch(self, spec: RunSpec, client: redis.Redis) -> tuple[float, int, int]:
        """Wait for the workers; return (CPU s after start-up, peak RSS KiB, own Redis calls)."""
        started_cpu: dict[int, float] = {}
        cpu = 0.0
        peak_rss = 0
        polls = 0
        pending = {w.process.pid: w for w in self.workers}
        begun = time.monotonic()
        last_poll = 0.0
        while pending:
            now = time.monotonic()
            if now - begun > self.timeout:
                raise BenchFailed(f"the run did not end within {self.timeout:g} s")
            if now - last_poll >= 0.5:
                last_poll = now
                records = {
                    record.pid: record
                    for record in map(WorkerRecord.decode, client.hgetall(KEYS.workers).values())
                }
                polls += 1
                for pid in pending:
                    if pid in records and pid not in started_cpu:
                        started_cpu[pid] = _cpu_seconds(pid)
                pages = sum(r.pages for r in records.values())
                if self.on_sample is not None and started_cpu:
                    self.on_sample(now - begun, pages, {pid: _rss(pid) for pid in pending})
                self.on_progress(
                    f"{MODE_LABELS[spec.mode]}, {spec.workers} worker"
                    f"{'s' if spec.workers > 1 else ''}: {pages} pages, "
                    f"{len(records)}/{spec.workers} up, {now - begun:.0f} s"
                )
            for pid in list(pending):
                done, status, usage = os.wait4(pid, os.WNOHANG)
                if done:
                    worker = pending.pop(pid)
                    worker.process.returncode = os.waitstatus_to_exitcode(status)
                    worker.wait()
                    cpu += usage.ru_utime + usage.ru_stime - started_cpu.get(pid, 0.0)
                    peak_rss = max(peak_rss, usage.ru_maxrss)
            time.sleep(0.05)
        return cpu, peak_rss, polls


def _reads(client: redis.Redis) -> int:
    return int(client.info("stats")["total_reads_processed"])


def _pid(process: subprocess.Popen[Any] | None) -> int:
    assert process is not None, "the process is not running"
    return process.pid


def _rss(pid: int) -> int:
    try:
        return int(psutil.Process(pid).memory_info().rss)
    except psutil.Error:
        return 0


def _cpu_seconds(pid: int) -> float:
    try:
        times = psutil.Process(pid).cpu_times()
    except psutil.Error:
        return 0.0
    return float(times.user + times.system)
