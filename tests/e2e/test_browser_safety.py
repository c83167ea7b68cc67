"""A rendered page reaches no forbidden address, and a bad page ends within its budget.

Real processes: a ``scrapy crawl ecommerce`` worker rendering in Debian's Chromium, a
site of pages built in the browser on 127.0.0.1 (:mod:`tests.support.browser_site`) and
a canary TCP server on 127.0.0.2 (only 127.0.0.1 is allowed) counting every connection.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
from pathlib import Path

import pytest

from crawler.browser import processes
from tests.support.browser_site import BrowserSite, chromium_or_skip, logged_stats
from tests.support.canary import Canary

from .conftest import CRAWL_TIMEOUT, KEYS, wait_until

pytestmark = pytest.mark.workers


def seed_rendered(crawl, site: BrowserSite, *paths: str) -> None:  # type: ignore[no-untyped-def]
    crawl.seed(
        *(json.dumps({"url": site.url + p, "meta": {"render": True, "strategy": "direct"}})
          for p in paths)
    )


def stored_names(crawl) -> dict[str, str]:  # type: ignore[no-untyped-def]
    path = crawl.workdir / "products.sqlite3"
    if not path.exists():
        return {}
    with sqlite3.connect(path) as db:
        try:
            return dict(db.execute("select url, name || ' ' || price || ' ' || sku from products"))
        except sqlite3.OperationalError:  # the store has no table yet
            return {}


def _chromium(worker_pid: int, renderer: bool) -> list[int]:
    """The worker's Chromium processes: its renderers, or its main browser process."""
    found = []
    for pid in processes.tree(worker_pid):
        try:  # Chromium's children rewrite their command line as one string
            command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        if b"chrom" not in command.split(b" ", 1)[0]:
            continue
        is_renderer = b"--type=renderer" in command
        is_main = b"--type=" not in command
        if (renderer and is_renderer) or (not renderer and is_main):
            found.append(pid)
    return found


def _kill(pids: list[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def test_hostile_pages_reach_nothing_and_end_within_their_budget(crawl) -> None:  # type: ignore[no-untyped-def]
    """A script that never ends, a page that grows for ever, the page's renderer killed,
    then the whole browser killed: each page ends with a reason. Then, in the browser
    launched again, a page reaching for the canary every way a page can, and a good
    page: both stored, the canary never reached; the worker stops cleanly when asked,
    and nothing of the killed browser is left in the temporary directory."""
    chromium_or_skip()
    with Canary() as canary, BrowserSite(forbidden=canary.url) as site:
        crawl.env["MAX_IDLE_TIME_BEFORE_CLOSE"] = "0"
        seed_rendered(crawl, site, "hang", "endless")
        worker = crawl.start_worker(
            "w1",
            BROWSER_CONCURRENCY=1,
            BROWSER_PAGE_TIMEOUT=15,
            BROWSER_SETTLE_TIME=1,
            BROWSER_PAGE_MAX_BYTES=2_000_000,
            RETRY_TIMES=1,
        )
        pid = worker.process.pid
        # first attempt at /hang, its page in its renderer: kill the renderers (it crashes)
        wait_until(lambda: "/hang.css" in site.requests, CRAWL_TIMEOUT, "/hang in the browser")
        _kill(_chromium(pid, renderer=True))
        # its retry: kill the whole browser
        wait_until(lambda: site.requests.count("/hang.css") >= 2, CRAWL_TIMEOUT, "/hang again")
        _kill(_chromium(pid, renderer=False))
        wait_until(lambda: crawl.client.llen(KEYS.dead) >= 2, CRAWL_TIMEOUT, "two dead letters")
        seed_rendered(crawl, site, "refs", "ok")
        wait_until(lambda: len(stored_names(crawl)) == 2, CRAWL_TIMEOUT, "two pages stored")
        assert worker.stop() == 0
        crawl.assert_clean_logs()
        assert canary.hits == []
    # the killed browser's profile (deleted by Playwright's driver) and its process
    # singleton's directory (by the worker: Playwright leaves it) are gone
    left = sorted(p.name for p in crawl.tmpdir.iterdir())  # the worker's TMPDIR
    leftovers = (processes.PROFILE_PREFIX, processes.SINGLETON_PREFIX)
    assert not [n for n in left if n.startswith(leftovers)], left
    dead = {json.loads(raw)["url"]: json.loads(raw)["reason"]
            for raw in crawl.client.lrange(KEYS.dead, 0, -1)}
    assert dead[site.url + "hang"].startswith("RenderFailed: timeout: not rendered within"), dead
    # 3 MB of DOM, past its 2 MB: too large (or, on a machine too busy to read it within
    # the budget, out of time)
    reason = dead[site.url + "endless"]
    assert reason.startswith(("RenderFailed: too_large", "RenderFailed: timeout")), dead
    assert stored_names(crawl) == {
        site.url + "ok": "Rendered Lamp 42.50 RL-42",
        site.url + "refs": "Rendered Lamp 42.50 RL-42",
    }
    stats = logged_stats(worker.log())
    assert stats["browser/errors/crash"] >= 1, stats
    # the killed browser was launched again for the next pages
    assert stats["browser/launches"] >= 2 and stats["browser/disconnected"] >= 1, stats
    assert stats["browser/rendered"] == 2, stats
    # a script, a stylesheet, fetch, XHR, a WebSocket, a beacon, an EventSource and the
    # site's own redirect to the canary: refused by the network rule before any connection
    assert stats["browser/blocked/network"] >= 8, stats
    assert stats["browser/blocked/resource"] >= 2  # the images, the site's own too
    for reason in ("frame", "popup", "dialog", "navigation"):
        assert stats[f"browser/blocked/{reason}"] >= 1, (reason, stats)
    assert "/redirected" not in " ".join(site.requests)
