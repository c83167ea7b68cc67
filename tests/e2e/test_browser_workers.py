"""Rendering shared by the cluster: a worker without a browser beside workers with one.

Real processes: the demo shop's client-rendered section (``/app/``, built in the browser
over a JSON API), a worker with ``BROWSER_CONCURRENCY=0`` and workers driving Debian's
Chromium. The worker without a browser fetches the section's home page, finds it an
application shell and hands it over; from then on the section's pages wait in the
crawl's browser queue (``<spider>:browser_requests``) for a worker that renders. The
browser worker is killed (SIGKILL, its browser with it) after some of those pages and
before the last; another takes over: every product stored, nothing lost, no dead letter,
and the worker without a browser never fetched a page of the section but its home.
"""

from __future__ import annotations

import os
import re
import signal

import pytest

from crawler.browser import processes
from crawler.scheduling.lanes import queued
from tests.support.browser_site import chromium_or_skip, logged_stats

from .conftest import CRAWL_TIMEOUT, KEYS, START_TIMEOUT, freeze_when, wait_until
from .test_browser_crawl import SECTION, stored

pytestmark = pytest.mark.workers

# a page budget no busy machine reaches: each page is to be rendered, not timed out
BROWSER = {"BROWSER_CONCURRENCY": 1, "BROWSER_PAGE_TIMEOUT": 120}
_CRAWLED = re.compile(r"Crawled \(\d+\) <GET (\S+)>")


def _kill_tree(pid: int) -> None:
    """SIGKILL a worker and its browser at once (the machine it ran on is gone)."""
    for each in [pid, *processes.tree(pid)]:
        try:
            os.kill(each, signal.SIGKILL)
        except OSError:
            pass


def test_browser_work_waits_for_a_browser_worker_and_survives_its_death(  # type: ignore[no-untyped-def]
    crawl, shop_factory
) -> None:
    chromium_or_skip()
    shop = shop_factory(products=10, browser_products=SECTION)
    section = shop.url + "app/"
    crawl.seed(f'{{"url": "{section}", "meta": {{"strategy": "navigation"}}}}')
    # the worker without a browser alone first: it finds the shell and hands it over
    # (it logs every page it fetches; it stays while the browser workers work)
    plain = crawl.start_worker(
        "plain", BROWSER_CONCURRENCY=0, LOG_LEVEL="DEBUG", MAX_IDLE_TIME_BEFORE_CLOSE=10
    )
    wait_until(
        lambda: queued(crawl.client, KEYS.browser_requests) > 0,
        START_TIMEOUT + CRAWL_TIMEOUT,
        "the section's home in the browser queue",
    )
    assert crawl.client.hkeys(KEYS.browser_sites) == [section.split("//", 1)[1].encode()]
    first = crawl.start_worker("browser-1", **BROWSER)
    products = shop.browser.expected_products("app", shop.url)
    product_paths = {url.removeprefix(shop.url.rstrip("/")) for url in products}

    def some_rendered() -> bool:
        fetched = set(shop.page_fetches()) & product_paths
        return 2 <= len(fetched) <= len(product_paths) - 2

    freeze_when(first, some_rendered, START_TIMEOUT + CRAWL_TIMEOUT, "some products rendered")
    _kill_tree(first.process.pid)
    first.wait(30)
    crawl.start_worker("browser-2", **BROWSER)
    crawl.wait_workers(START_TIMEOUT + 2 * CRAWL_TIMEOUT)
    crawl.assert_clean_logs()

    assert stored(crawl) == products  # every product, with its fields
    assert not crawl.client.llen(KEYS.dead)
    assert not queued(crawl.client, KEYS.browser_requests)
    assert not queued(crawl.client, KEYS.requests)
    # the worker without a browser rendered nothing, and of the section fetched only the
    # home page, a shell (dropped, so not logged as crawled): every other page went to a
    # browser worker
    log = plain.log()
    stats = logged_stats(log)
    assert not stats.get("browser/rendered") and not stats.get("browser/unavailable"), stats
    assert stats.get("browser/shells") == 1, stats
    assert "Crawled (200) <GET " + shop.url + "robots.txt>" in log  # it logs what it fetches
    fetched = {url for url in _CRAWLED.findall(log) if url.startswith(section)}
    assert not fetched, fetched
    assert "Launching browser" not in log
    # the second browser worker rendered what the first had not finished
    second = logged_stats(crawl.workers[-1].log())
    assert second.get("browser/rendered", 0) >= 1, second
    assert not second.get("browser/handed_over")
