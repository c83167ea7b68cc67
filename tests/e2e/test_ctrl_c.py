"""Ctrl-C as a terminal sends it: the demo, the dashboard and a worker stop cleanly.

Each command runs in a pseudo-terminal as the foreground process group
(:mod:`tests.support.terminal`); the test writes ^C to the terminal, and the
kernel sends SIGINT to that whole group, as a real terminal does. The demo's
servers and workers are in sessions of their own: only the demo gets the
signal; it stops its workers (one SIGINT each), prints ``master report``, then
stops its servers and exits 0. The time from ^C to exit is printed (the README
says the figure); the tests do not hold the machine to it.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path

import pytest
import redis

from crawler.core.keys import CrawlKeys
from tests.e2e.conftest import FAST_SETTINGS, START_TIMEOUT, wait_until
from tests.support.net import free_port
from tests.support.terminal import Terminal, process_groups
from tools.workers import ROOT

pytestmark = pytest.mark.workers

KEYS = CrawlKeys()
STOP_TIMEOUT = 180.0  # a bound on the wait, not a speed: on an idle machine it takes seconds


def _open_workers(client: redis.Redis) -> list[dict[str, object]]:
    records = [json.loads(raw) for raw in client.hvals(KEYS.workers)]
    return [record for record in records if record["state"] in ("running", "paused")]


def _children(pid: int) -> list[int]:
    """The live processes whose parent is ``pid``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if int(stat[1]) == pid:
                found.append(int(entry.name))
    return found


def _assert_gone(pids: list[int]) -> None:
    for pid in pids:
        path = Path(f"/proc/{pid}/stat")
        if path.exists():
            state = path.read_text().rsplit(")", 1)[1].split()[0]
            assert state in ("Z", "X"), f"process {pid} still runs"


def _stop_with_ctrl_c(terminal: Terminal) -> tuple[int, float]:
    sent = terminal.ctrl_c()
    status = terminal.wait(STOP_TIMEOUT)
    seconds = time.monotonic() - sent
    print(f"^C to exit: {seconds:.2f} s")
    return status, seconds


def test_the_dashboard_demo_stops_on_ctrl_c_with_its_report(tmp_path: Path) -> None:
    """Idle workers, a private Redis, the shop and the dashboard: ^C reaches the demo
    only; the workers stop, the report is printed, then the servers stop; exit 0."""
    port = free_port()
    env = {**os.environ, "DEMO_DIR": str(tmp_path / "demo")}
    env.pop("REDIS_URL", None)
    terminal = Terminal(
        [
            sys.executable, "-m", "tools.demo", "--dashboard", "--dashboard-port", str(port),
            "--workers", "2", "--products", "20", "--latency-ms", "0",
        ],
        cwd=ROOT,
        env=env,
    )
    try:
        output = terminal.wait_for("starting 2 workers", START_TIMEOUT)
        redis_url = re.search(r"private Redis at (\S+)", output)
        assert redis_url is not None, output
        client = redis.Redis.from_url(redis_url.group(1))
        wait_until(lambda: len(_open_workers(client)) >= 2, START_TIMEOUT, "2 workers open")
        client.close()
        demo = terminal.process.pid
        started = _children(demo)
        assert len(started) >= 5  # Redis, the shop, the dashboard, two workers
        groups = process_groups(started)
        assert terminal.foreground_group() == demo
        assert all(group != demo for group in groups.values()), groups
        status, seconds = _stop_with_ctrl_c(terminal)
        output = terminal.output
        assert status == 0, output
        assert "Traceback" not in output and "cannot reach Redis" not in output, output
        report = output.split("demo: $ python -m master report", 1)[1]
        assert re.search(r"demo-worker-1\s+finished", report), output
        assert re.search(r"demo-worker-2\s+finished", report), output
        assert "TOTAL          2 workers, 0 live" in report, output
        _assert_gone(started)
        for n in (1, 2):
            log = (tmp_path / "demo" / f"worker-{n}.log").read_text()
            assert "Spider closed (shutdown)" in log and "Traceback" not in log, log[-3000:]
            assert "twice" not in log, log[-3000:]  # one SIGINT, never a forced shutdown
    finally:
        terminal.close()


def test_the_demo_interrupted_mid_crawl_leaves_no_request_held(
    tmp_path: Path, private_redis  # type: ignore[no-untyped-def]
) -> None:
    """^C while the workers crawl: each finishes or hands back what it holds (no lease
    is left in Redis), the report is printed, exit 0. (^C once both are open: one still
    importing Scrapy stops without a record, as it never opened; the shop is large
    enough to be crawled still when a worker is slow to open on a busy machine.)"""
    env = {**os.environ, "DEMO_DIR": str(tmp_path / "demo")}
    terminal = Terminal(
        [
            sys.executable, "-m", "tools.demo", "--redis-url", private_redis.url,
            "--workers", "2", "--products", "2000", "--latency-ms", "200", "--idle", "30",
        ],
        cwd=ROOT,
        env=env,
    )
    client = redis.Redis.from_url(private_redis.url)
    try:
        terminal.wait_for("starting 2 workers", START_TIMEOUT)

        def crawling() -> bool:
            leased = any(client.scan_iter(KEYS.inflight_pattern))
            return leased and len(_open_workers(client)) >= 2

        wait_until(crawling, START_TIMEOUT, "2 workers open, requests leased")
        status, _ = _stop_with_ctrl_c(terminal)
        output = terminal.output
        assert status == 0, output
        assert "Traceback" not in output, output
        assert "demo: $ python -m master report" in output, output
        assert list(client.scan_iter(KEYS.inflight_pattern)) == []
        records = [json.loads(raw) for raw in client.hvals(KEYS.workers)]
        assert sorted(record["state"] for record in records) == ["finished", "finished"]
    finally:
        terminal.close()
        client.close()


def test_master_serve_stops_on_ctrl_c(redis_url: str) -> None:
    terminal = Terminal(
        [sys.executable, "-m", "master", "serve", "--port", str(free_port())],
        cwd=ROOT,
        env={**os.environ, "REDIS_URL": redis_url},
    )
    try:
        terminal.wait_for("Application startup complete", START_TIMEOUT)
        status, _ = _stop_with_ctrl_c(terminal)
        assert status == 0, terminal.output
        assert "Traceback" not in terminal.output
        assert "Finished server process" in terminal.output
    finally:
        terminal.close()


def test_a_worker_stops_on_ctrl_c_even_while_opening(tmp_path: Path, private_redis) -> None:  # type: ignore[no-untyped-def]
    """A worker in a terminal, ^C as soon as it says "Spider opened" (often before
    its engine runs, when Scrapy alone would exit without closing the spider): it
    closes cleanly, its record says finished."""
    settings = [arg for name, value in FAST_SETTINGS.items() for arg in ("-s", f"{name}={value}")]
    terminal = Terminal(
        [sys.executable, "-m", "scrapy", "crawl", "ecommerce", *settings],
        cwd=ROOT,
        env={
            **os.environ,
            "REDIS_URL": private_redis.url,
            "WORKER_ID": "terminal-worker",
            "MAX_IDLE_TIME_BEFORE_CLOSE": "0",
            "EMBEDDED_STORE_PATH": str(tmp_path / "products.sqlite3"),
        },
    )
    client = redis.Redis.from_url(private_redis.url)
    try:
        terminal.wait_for("Spider opened", START_TIMEOUT)
        status, _ = _stop_with_ctrl_c(terminal)
        output = terminal.output
        assert status == 0, output
        assert "Traceback" not in output and "Spider closed (shutdown)" in output, output
        record = json.loads(client.hget(KEYS.workers, "terminal-worker") or b"{}")
        assert record.get("state") == "finished", record
    finally:
        terminal.close()
        client.close()
