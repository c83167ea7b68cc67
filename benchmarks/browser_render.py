"""What a page rendered in Chromium costs against a page fetched plainly, on real workers.

Starts the demo shop with its section built in the browser (``--browser-products``,
:mod:`demoshop.browserapp`) and a private Redis, then runs, each from a clean Redis
and a fresh product store, the same crawl of ``--pages`` product pages:

``plain``           the ``/state/`` product pages (the product in ``__NEXT_DATA__``, read
                    from the HTML), seeded ``{"strategy": "direct", "render": false}``:
                    no browser starts
``rendered``        the ``/app/`` product pages (client-rendered over a JSON API), seeded
                    ``"render": true``: each is rendered in Chromium (the document, then
                    ``app.js`` and the product's JSON, all fetched by the worker)
``state-rendered``  the ``/state/`` pages again, seeded ``"render": true``: the same HTML
                    as ``plain`` through the browser, i.e. the browser's cost alone

with ``--workers`` real ``scrapy crawl ecommerce`` processes. Printed per run:

* **pages/s**: product pages over the crawl's time, from the workers' own records in
  ``<spider>:workers`` (first ``started_at`` to the last worker's last page), so
  process start-up and the idle wait before closing do not count (Chromium's own
  launch does: it starts with the first page to render);
* **CPU ms/page**: CPU time (user + system) of each worker's whole process tree
  (``psutil``, sampled every 0.2 s: the Python worker, Playwright's driver, Chromium
  and its renderers) over the same span, from the moment the worker is up to the
  first sample after its last page, per page; split into the worker's own (Python)
  and its browser's (every descendant). The JSON also has
  ``cpu_ms_per_page_to_exit`` (up to the worker's exit: its idle wait,
  ``MAX_IDLE_TIME_BEFORE_CLOSE=2``, and its close added, about a second of CPU,
  spread over the pages) and ``reaped_cpu_ms_per_page``, from ``wait4``'s usage of
  each worker, to its exit, which counts only the descendants reaped within its tree:
  the same as the samples for a plain run, about a third lower for a rendered one
  (some of Chromium's processes end outside the tree's reaping), which is why the
  figure printed is sampled;
* the shop's requests per page (a rendered ``/app/`` page loads three: document,
  script, API), and the products stored (each run must store all of them);
* the peak proportional set size of a worker's tree (MiB; shared pages split between
  the processes that share them, so Chromium's processes are not counted many times).

Then the ratio rendered / plain of both figures. Nothing is asserted on speed; a run
that does not store every product, or a rendered run that rendered fewer pages than
it was given, fails with its reason. Without Chromium (``BROWSER_EXECUTABLE``, else
``/usr/bin/chromium``, ``chromium``, ``chromium-browser``) the benchmark stops at once
with exit status 2.

    python -m benchmarks.browser_render                       # 100 pages, 1 worker
    python -m benchmarks.browser_render --pages 40 --runs plain rendered
    python -m benchmarks.browser_render --browser-concurrency 4 --output bench-results
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import psutil
import redis

from crawler.browser.config import CANDIDATES, find_executable
from crawler.core.keys import CrawlKeys
from crawler.core.records import WorkerRecord
from demoshop.process import ShopProcess
from master.commands.base import _setting
from tools.redis_server import RedisServer
from tools.workers import ROOT, WorkerProcess

KEYS = CrawlKeys()
SAMPLE_EVERY = 0.2  # seconds between two samples of the process trees' CPU
MEMORY_EVERY = 5  # their memory (PSS: reading it costs more) every 5th sample

#: run -> (section of the demo shop, the seeds' ``render``)
RUNS: dict[str, tuple[str, bool]] = {
    "plain": ("state", False),
    "rendered": ("app", True),
    "state-rendered": ("state", True),
}


class BenchFailed(RuntimeError):
    """A worker failed, a run did not end in time, or it did not crawl what it was given."""


@dataclass
class RunResult:
    run: str
    section: str
    render: bool
    workers: int
    pages: int
    stored: int
    rendered: int
    elapsed: float
    pages_per_s: float
    cpu_ms_per_page: float
    worker_cpu_ms_per_page: float
    browser_cpu_ms_per_page: float
    cpu_ms_per_page_to_exit: float
    reaped_cpu_ms_per_page: float
    shop_requests_per_page: float
    peak_tree_pss_mb: float


class TreeCpu:
    """CPU seconds of a process and all its descendants, from samples.

    Each process is keyed by (pid, start time), so a reused pid is a new process;
    a process that exits keeps its last sample (what it used after that sample,
    less than :data:`SAMPLE_EVERY`, is missed). ``start()`` takes the baseline: the
    CPU used before it (imports, start-up) is left out.
    """

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.last: dict[tuple[int, float], float] = {}
        self.baseline: dict[tuple[int, float], float] = {}
        self.started = False
        self.peak_pss = 0
        #: (epoch seconds, own CPU s, descendants' CPU s) at each sample after start()
        self.history: list[tuple[float, float, float]] = []
        #: CPU s of the process and of the descendants reaped in its tree, from ``wait4``
        self.rusage = 0.0

    def sample(self, memory: bool = False) -> None:
        """Read every process's CPU times; with ``memory``, also the tree's proportional
        set size (shared pages split between the processes sharing them)."""
        try:
            root = psutil.Process(self.pid)
            procs = [root, *root.children(recursive=True)]
        except psutil.Error:
            return
        pss = 0
        for proc in procs:
            try:
                with proc.oneshot():
                    key = (proc.pid, proc.create_time())
                    times = proc.cpu_times()
                    if memory:
                        pss += getattr(proc.memory_full_info(), "pss", 0)
            except psutil.Error:
                continue
            self.last[key] = times.user + times.system
        self.peak_pss = max(self.peak_pss, pss)
        if self.started:
            self.history.append((time.time(), *self.seconds()))

    def start(self) -> None:
        self.sample()
        self.baseline = dict(self.last)
        self.started = True

    def reaped_seconds(self) -> float:
        """The CPU s ``wait4`` reported, less the process's own before :meth:`start`:
        the whole tree's when every process was reaped by its parent (an orphan
        re-parented out of the tree is missing), with no sampling gap."""
        return self.rusage - sum(v for k, v in self.baseline.items() if k[0] == self.pid)

    def seconds_until(self, moment: float) -> tuple[float, float]:
        """:meth:`seconds` at the first sample taken at or after ``moment`` (epoch s),
        the last one if none was: up to :data:`SAMPLE_EVERY` past it."""
        for when, own, other in self.history:
            if when >= moment:
                return own, other
        return self.seconds()

    def seconds(self) -> tuple[float, float]:
        """(the root process's CPU s, its descendants' CPU s) since :meth:`start`."""
        own = other = 0.0
        for key, value in self.last.items():
            used = value - self.baseline.get(key, 0.0)
            if key[0] == self.pid:
                own += used
            else:
                other += used
        return own, other


_STAT = re.compile(r"'browser/rendered': (\d+)")


def rendered_pages(log: str) -> int:
    """``browser/rendered`` of the stats a worker dumped in its log when it closed."""
    found = _STAT.findall(log.rsplit("Dumping Scrapy stats:", 1)[-1])
    return int(found[-1]) if found else 0


def seed_lines(shop: ShopProcess, section: str, render: bool) -> str:
    assert shop.browser is not None
    return "".join(
        json.dumps(
            {
                "url": shop.url.rstrip("/") + shop.browser.product_path(section, product),
                "meta": {"strategy": "direct", "render": render},
            }
        )
        + "\n"
        for product in shop.browser.products
    )


def run(
    name: str,
    shop: ShopProcess,
    server: RedisServer,
    workdir: Path,
    workers: int,
    settings: dict[str, object],
    timeout: float,
) -> RunResult:
    section, render = RUNS[name]
    assert shop.browser is not None
    pages = len(shop.browser.products)
    run_dir = workdir / name
    run_dir.mkdir(parents=True, exist_ok=True)
    client = redis.Redis.from_url(server.url)
    client.flushall()
    store = run_dir / "products.sqlite3"
    env = {
        "REDIS_URL": server.url,
        "ALLOW_PRIVATE_NETWORKS": "127.0.0.1",
        "MAX_IDLE_TIME_BEFORE_CLOSE": "2",
        "EMBEDDED_STORE_PATH": str(store),
    }
    seeded = subprocess.run(
        [sys.executable, "-m", "master", "seed", "-"],
        input=seed_lines(shop, section, render),
        text=True,
        capture_output=True,
        cwd=ROOT,
        env={**os.environ, **env},
    )
    if seeded.returncode != 0:
        raise BenchFailed(f"seeding failed: {seeded.stderr.strip()}")
    shop_before = len(shop.read_access_log())
    procs = [
        WorkerProcess(f"{name}-{n + 1}", env, run_dir / f"worker-{n + 1}.log", settings)
        for n in range(workers)
    ]
    trees = {w.process.pid: TreeCpu(w.process.pid) for w in procs}
    try:
        _watch(procs, trees, client, timeout)
    finally:
        for worker in procs:
            worker.kill()
        client_records = [WorkerRecord.decode(raw) for raw in client.hvals(KEYS.workers)]
        client.close()
    failed = [w.worker_id for w in procs if w.process.returncode != 0]
    if failed:
        tails = "\n".join(f"--- {w.worker_id}:\n{w.log_tail(40)}" for w in procs)
        raise BenchFailed(f"{name}: workers failed: {failed}\n{tails}")
    with sqlite3.connect(store) as db:
        (stored,) = db.execute("SELECT count(DISTINCT url) FROM products").fetchone()
    rendered = sum(rendered_pages(w.log()) for w in procs)
    tail = procs[0].log_tail(40)
    if stored != pages:
        raise BenchFailed(f"{name}: {stored} of {pages} products stored; the log ends:\n{tail}")
    if render and rendered < pages:
        raise BenchFailed(
            f"{name}: {rendered} of {pages} pages rendered in the browser; the log ends:\n{tail}"
        )
    spans = {
        r.pid: (r.started_at, r.finished_at - r.idle_tail)
        for r in client_records
        if r.started_at is not None and r.finished_at is not None
    }
    if set(spans) != set(trees):
        raise BenchFailed(f"{name}: {len(spans)} finished worker records for {workers} workers")
    starts, ends = [start for start, _ in spans.values()], [end for _, end in spans.values()]
    elapsed = max(max(ends) - min(starts), 1e-6)
    # the CPU of each tree up to its worker's last page (the span of pages/s)
    crawl = [tree.seconds_until(spans[pid][1]) for pid, tree in trees.items()]
    own, browser = sum(c[0] for c in crawl), sum(c[1] for c in crawl)
    to_exit = sum(sum(tree.seconds()) for tree in trees.values())
    reaped = sum(tree.reaped_seconds() for tree in trees.values())
    shop_requests = len(shop.read_access_log()) - shop_before
    return RunResult(
        run=name,
        section=section,
        render=render,
        workers=workers,
        pages=pages,
        stored=stored,
        rendered=rendered,
        elapsed=round(elapsed, 2),
        pages_per_s=round(pages / elapsed, 2),
        cpu_ms_per_page=round((own + browser) * 1000 / pages, 1),
        worker_cpu_ms_per_page=round(own * 1000 / pages, 1),
        browser_cpu_ms_per_page=round(browser * 1000 / pages, 1),
        cpu_ms_per_page_to_exit=round(to_exit * 1000 / pages, 1),
        reaped_cpu_ms_per_page=round(reaped * 1000 / pages, 1),
        # robots.txt aside (one per worker)
        shop_requests_per_page=round((shop_requests - workers) / pages, 2),
        peak_tree_pss_mb=round(max(t.peak_pss for t in trees.values()) / 2**20, 1),
    )


def _watch(
    procs: list[WorkerProcess], trees: dict[int, TreeCpu], client: redis.Redis, timeout: float
) -> None:
    """Sample the process trees until every worker has exited; a tree's baseline is
    taken when its worker first publishes its record (Scrapy is up). Each worker is
    reaped with ``wait4``: its resource usage, which counts the descendants it and
    they reaped, is kept in :attr:`TreeCpu.rusage` (the cross-check)."""
    begun = time.monotonic()
    rounds = 0
    pending = {w.process.pid: w for w in procs}
    while pending:
        rounds += 1
        if time.monotonic() - begun > timeout:
            raise BenchFailed(f"the run did not end within {timeout:g} s")
        up = {WorkerRecord.decode(raw).pid for raw in client.hvals(KEYS.workers)}
        for pid, tree in trees.items():
            if pid not in pending:
                continue
            if not tree.started and pid in up:
                tree.start()
            elif tree.started:
                tree.sample(memory=rounds % MEMORY_EVERY == 0)
        for pid in list(pending):
            done, status, usage = os.wait4(pid, os.WNOHANG)
            if done:
                worker = pending.pop(pid)
                worker.process.returncode = os.waitstatus_to_exitcode(status)
                worker.wait()
                trees[pid].rusage = usage.ru_utime + usage.ru_stime
        time.sleep(SAMPLE_EVERY)


def ratio(a: float, b: float) -> str:
    return f"{a / b:.1f}x" if b else "-"


def report(results: list[RunResult]) -> None:
    header = (
        f"{'run':<15}{'pages':>6}{'seconds':>9}{'pages/s':>9}{'CPU ms/page':>13}"
        f"{'(worker':>9}{'browser)':>10}{'requests/page':>15}{'peak PSS MB':>13}"
    )
    print(header)
    for r in results:
        print(
            f"{r.run:<15}{r.pages:>6}{r.elapsed:>9.1f}{r.pages_per_s:>9.2f}"
            f"{r.cpu_ms_per_page:>13.1f}{r.worker_cpu_ms_per_page:>9.1f}"
            f"{r.browser_cpu_ms_per_page:>10.1f}{r.shop_requests_per_page:>15.2f}"
            f"{r.peak_tree_pss_mb:>13.0f}"
        )
    by_name = {r.run: r for r in results}
    plain = by_name.get("plain")
    if plain is None:
        return
    for name in ("rendered", "state-rendered"):
        other = by_name.get(name)
        if other is None:
            continue
        print(
            f"{name} vs plain: {other.pages_per_s:.2f} vs {plain.pages_per_s:.2f} pages/s "
            f"(plain {ratio(plain.pages_per_s, other.pages_per_s)} faster), "
            f"{other.cpu_ms_per_page:.1f} vs {plain.cpu_ms_per_page:.1f} CPU ms/page "
            f"({ratio(other.cpu_ms_per_page, plain.cpu_ms_per_page)} the CPU)"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.browser_render",
        description="Pages/s and worker CPU per page: rendered in Chromium vs fetched plainly.",
    )
    parser.add_argument("--pages", type=int, default=100, help="product pages a run (100)")
    parser.add_argument("--workers", type=int, default=1, help="worker processes a run (1)")
    parser.add_argument(
        "--browser-concurrency", type=int, default=2, help="BROWSER_CONCURRENCY (2)"
    )
    parser.add_argument(
        "--concurrency", type=int, default=16, help="CONCURRENT_REQUESTS of the workers (16)"
    )
    parser.add_argument(
        "--runs", nargs="+", choices=list(RUNS), default=list(RUNS), help="default: all three"
    )
    parser.add_argument("--timeout", type=float, default=1800, help="give up on a run after (s)")
    parser.add_argument("--output", default=None, help="write browser_render.json in this folder")
    parser.add_argument(
        "--set", "-s", type=_setting, action="append", default=[], metavar="NAME=VALUE",
        help="a Scrapy setting for the workers (repeatable)",
    )
    args = parser.parse_args(argv)
    if not 1 <= args.pages <= 5000:
        parser.error("--pages must be between 1 and 5000")
    extra = dict(args.set)
    wanted = str(extra.get("BROWSER_EXECUTABLE") or os.environ.get("BROWSER_EXECUTABLE", ""))
    executable = find_executable(wanted)
    if executable is None and any(RUNS[name][1] for name in args.runs):
        sys.stderr.write(
            f"error: no Chromium at {wanted or ' or '.join(CANDIDATES)}: install Debian's "
            "chromium (apt-get install chromium, or scripts/bootstrap-services) or set "
            "BROWSER_EXECUTABLE; nothing was run\n"
        )
        return 2
    settings: dict[str, object] = {
        "CONCURRENT_REQUESTS": args.concurrency,
        "CONCURRENT_REQUESTS_PER_DOMAIN": args.concurrency,
        "BROWSER_CONCURRENCY": args.browser_concurrency,
        "LOG_LEVEL": "INFO",
        "LOGSTATS_INTERVAL": 0,
        **extra,
    }
    print(
        f"browser render benchmark: {args.pages} product pages a run, {args.workers} "
        f"worker(s), BROWSER_CONCURRENCY={args.browser_concurrency}, "
        f"CONCURRENT_REQUESTS={args.concurrency}, {os.cpu_count()} CPUs, "
        f"browser {executable or '(none)'}",
        flush=True,
    )
    results: list[RunResult] = []
    try:
        with (
            tempfile.TemporaryDirectory(prefix="browser-bench-") as tmp,
            # 2/3 of the catalogue is in English: the section takes the first N of those
            ShopProcess(
                products=max(60, 2 * args.pages),
                browser_products=args.pages,
                access_log=Path(tmp) / "access.log",
                startup_timeout=600,
            ) as shop,
            RedisServer(data_dir=Path(tmp) / "redis", appendonly=False) as server,
        ):
            assert shop.browser is not None
            if len(shop.browser.products) != args.pages:
                raise BenchFailed(f"the shop's section has {len(shop.browser.products)} products")
            for name in args.runs:
                result = run(name, shop, server, Path(tmp), args.workers, settings, args.timeout)
                results.append(result)
                print(
                    f"{name}: {result.pages} pages in {result.elapsed:.1f} s, "
                    f"{result.pages_per_s:.2f} pages/s, {result.cpu_ms_per_page:.1f} CPU ms/page "
                    f"(worker {result.worker_cpu_ms_per_page:.1f}, "
                    f"browser {result.browser_cpu_ms_per_page:.1f}), "
                    f"{result.rendered} rendered",
                    flush=True,
                )
    except KeyboardInterrupt:
        sys.stderr.write("\ninterrupted: workers, Redis and the shop were stopped\n")
        return 130
    except BenchFailed as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 1
    print()
    report(results)
    if args.output:
        out = Path(args.output)
        out.mkdir(parents=True, exist_ok=True)
        (out / "browser_render.json").write_text(
            json.dumps({"setup": vars(args), "results": [asdict(r) for r in results]}, indent=1)
            + "\n"
        )
        print(f"wrote {out / 'browser_render.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
