"""The dashboard in a real headless browser while a real worker crawls the demo shop.

Debian's ``chromium`` driven by Playwright (``executable_path``: Playwright never
downloads a browser here; ``scripts/bootstrap-services`` installs chromium). Without
the browser the test is skipped with a message, except under ``CI=true``, where a
missing browser fails it. ``DASHBOARD_SCREENSHOTS=DIR`` keeps the screenshots there
(``docs/dashboard.png`` is one of them); otherwise they go to the test's directory.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from crawler.core.records import DeadLetter
from tests.support.dashboard import dashboard

from .conftest import KEYS, wait_until

pytestmark = pytest.mark.workers

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
DEAD_REASON = "HTTP 503 (before the test)"


def browser_or_skip() -> None:
    if Path(CHROMIUM).exists() and shutil.which(CHROMIUM):
        return
    message = (
        f"{CHROMIUM} missing: scripts/bootstrap-services installs it (apt-get install chromium)"
    )
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


def as_number(text: str) -> int:
    return int(text.replace(",", "") or 0) if text.strip() not in ("", "–") else 0


def test_dashboard_drives_a_real_crawl(crawl, shop_factory, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    browser_or_skip()
    from playwright.sync_api import expect, sync_playwright

    # waits follow the page, with room for a busy machine (Playwright's default: 5 s)
    expect.set_options(timeout=60_000)

    shots = Path(os.environ.get("DASHBOARD_SCREENSHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    shop = shop_factory(products=48, latency_ms=40)
    products = len(shop.catalog.product_paths())
    product_url = shop.url.rstrip("/") + sorted(shop.catalog.product_paths())[0]
    crawl.client.rpush(
        KEYS.dead,
        DeadLetter(url=product_url, reason=DEAD_REASON, worker="earlier", time=1.0).encode(),
    )
    # a site budget, so that the crawl takes a few seconds and the page sees it go on
    crawl.start_worker("w1", MAX_IDLE_TIME_BEFORE_CLOSE=0, SITE_MAX_RPS=10)
    crawl.wait_running(1)

    store = crawl.env["EMBEDDED_STORE_PATH"]
    with dashboard(crawl.redis_url, store_path=store) as server, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 1000})
        page.set_default_timeout(60_000)
        page.goto(server.url + "/")
        expect(page.locator("#state")).not_to_have_text("…")  # the first status came
        expect(page.locator("#f-live_workers")).to_have_text("1")
        expect(page.locator("#dead tbody tr")).to_contain_text(DEAD_REASON)

        # submit the shop through the form, with a label from the seed meta allow-list
        page.fill("#seed-text", f"{shop.url}\nnot a url")
        page.fill("#seed-category", "demo")
        page.click("#seed-form button[type=submit]")
        expect(page.locator("#seed-answer")).to_contain_text(
            "accepted 1, already seeded 0, rejected 1"
        )
        expect(page.locator("#seed-answer")).to_contain_text("line 2:")
        assert crawl.client.scard(KEYS.seeded) == 1
        # the same shop again, uploaded as a file: already seeded, nothing pushed twice
        upload = tmp_path / "seeds.txt"
        upload.write_text(f"# from a file\n{shop.url}\n", encoding="utf-8")
        page.set_input_files("#seed-file", str(upload))
        page.click("#seed-form button[type=submit]")
        expect(page.locator("#seed-answer")).to_contain_text(
            "accepted 0, already seeded 1, rejected 0"
        )
        page.set_input_files("#seed-file", [])

        # the counts rise while the worker crawls
        items = page.locator("#f-items_stored")
        wait_until(lambda: as_number(items.inner_text()) > 0, 120, "items stored on the page")
        page.screenshot(path=str(shots / "dashboard-crawling.png"), full_page=True)

        page.click("#pause")
        expect(page.locator("#state")).to_have_text("paused")
        assert crawl.client.exists(KEYS.paused)
        expect(page.locator("#workers tbody")).to_contain_text("paused")
        page.screenshot(path=str(shots / "dashboard-paused.png"), full_page=True)
        page.click("#resume")
        expect(page.locator("#state")).not_to_have_text("paused")
        assert not crawl.client.exists(KEYS.paused)
        expect(page.locator("#workers tbody")).to_contain_text("running")

        # the crawl ends with every product stored, and the page says so
        wait_until(
            lambda: as_number(items.inner_text()) >= products, 180, f"{products} items on the page"
        )

        # requeue the dead letter of its reason group
        page.locator("#dead tbody tr", has_text=DEAD_REASON).get_by_role(
            "button", name="requeue"
        ).click()
        expect(page.locator("#dead-list")).to_contain_text("requeued 1")
        assert crawl.client.llen(KEYS.dead) == 0
        expect(page.locator("#dead tbody tr")).to_have_count(0)

        # the products, searched, and one's price history
        page.click("#p-first")
        expect(page.locator("#products tbody tr")).to_have_count(20)
        expect(page.locator("#p-next")).to_be_enabled()
        page.locator("#products tbody a.product").first.click()
        expect(page.locator("#history tbody tr")).to_have_count(1)
        page.screenshot(path=str(shots / "dashboard.png"), full_page=True)
        browser.close()
    assert crawl.workers[0].stop() == 0
    crawl.assert_clean_logs()


def test_dashboard_shows_a_stale_worker_and_since_when(private_redis, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A worker whose heartbeat expired while its record says it runs (cut off from Redis,
    stalled, killed) is marked stale in the workers table, with the time of its last report."""
    browser_or_skip()
    import json
    import time

    import redis
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=60_000)
    shots = Path(os.environ.get("DASHBOARD_SCREENSHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    client = redis.Redis.from_url(private_redis.url)
    now = time.time()
    last_report = now - 40
    for worker, updated in (("beating", now), ("cut-off", last_report)):
        record = {"worker": worker, "host": "box", "state": "running", "started_at": now - 300,
                  "updated_at": updated, "pages": 12, "items": 10}
        client.hset(KEYS.workers, worker, json.dumps(record))
    client.set(KEYS.alive("beating"), 1, ex=120)
    since = time.strftime("%H:%M:%S", time.localtime(last_report))
    with dashboard(private_redis.url) as server, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.set_default_timeout(60_000)
        page.goto(server.url + "/")
        stale = page.locator("#workers tbody tr", has_text="cut-off").locator("td").nth(2)
        expect(stale).to_have_text(re.compile(rf"^running, stale: no heartbeat since {since} \("))
        expect(stale).to_have_class("stale")
        expect(stale).to_have_css("color", "rgb(176, 0, 32)")  # red, as the page's errors
        live = page.locator("#workers tbody tr", has_text="beating").locator("td").nth(2)
        expect(live).to_have_text("running")
        expect(page.locator("#f-live_workers")).to_have_text("1")
        page.locator("#workers").screenshot(path=str(shots / "dashboard-stale-worker.png"))
        browser.close()
    client.close()
