"""The dashboard's sites view shows the data checks (issue 45) in a real headless
Chromium: a badge with how many fail, each site's checks in the table, and the
failing checks listed with what they saw and their example URLs, over figures the
workers' own code wrote to a real Redis. ``DASHBOARD_SCREENSHOTS=DIR`` keeps the
screenshot there (``docs/data-checks.png``)."""

from __future__ import annotations

import os
from decimal import Decimal
from pathlib import Path

import pytest

from crawler.core.keys import CrawlKeys
from crawler.datachecks.figures import Figures, observe_product, observe_rejected
from crawler.datachecks.store import FiguresStore
from tests.support.dashboard import dashboard

from .test_dashboard_browser import CHROMIUM, CHROMIUM_ARGS, browser_or_skip

pytestmark = pytest.mark.workers
KEYS = CrawlKeys()


def _row(site: str, n: int, **fields: object) -> dict[str, object]:
    item: dict[str, object] = {
        "url": f"http://{site}/product/item-{n}", "name": f"Lamp {n}",
        "price": Decimal(20 + n), "currency": "EUR",
        "availability": "InStock" if n % 4 else "OutOfStock", "sku": f"L{n}",
        "provenance": {"name": "json-ld", "price": "json-ld"}, "uncertain": [],
    }
    item.update(fields)
    return item


def _crawled(redis_client, site: str, rows: list[dict[str, object]], rejected: int = 0) -> None:
    figures = Figures()
    for row in rows:
        observe_product(figures, row)
    for n in range(rejected):
        observe_rejected(figures, f"http://{site}/product/gone-{n}", "no_product", True)
    FiguresStore(redis_client, KEYS).add(site, figures)
    redis_client.hset(KEYS.sites, mapping={
        f"pages {site}": len(rows) + rejected + 12, f"products {site}": len(rows)
    })


def test_the_sites_view_shows_the_failing_checks(redis_url, redis_client, tmp_path) -> None:
    browser_or_skip()
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=60_000)
    _crawled(redis_client, "sound-shop.example", [_row("sound-shop.example", n) for n in range(80)])
    _crawled(redis_client, "sold-out.example",
             [_row("sold-out.example", n, availability="OutOfStock") for n in range(90)],
             rejected=60)
    shots = Path(os.environ.get("DASHBOARD_SCREENSHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    with dashboard(redis_url, store_path=str(tmp_path / "none.sqlite3")) as server, \
            sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(server.url + "/")
        badge = page.locator("#checks-badge")
        expect(badge).to_have_text("2 data check(s) failing")
        expect(badge).to_have_attribute("data-failing", "2")
        rows = page.locator("#sites tbody tr")
        expect(rows).to_have_count(2)
        broken = rows.filter(has_text="sold-out.example")
        expect(broken).to_contain_text("availability_one_value, product_pages_rejected")
        expect(rows.filter(has_text="sound-shop.example")).to_contain_text("ok")
        listed = page.locator("#checks-list > li")
        expect(listed).to_have_count(2)
        expect(listed.first).to_contain_text(
            "sold-out.example: availability_one_value 100% of 90 rows have the "
            "availability 'OutOfStock'"
        )
        expect(listed.first.locator("li")).to_have_count(3)  # three example URLs
        expect(listed.nth(1)).to_contain_text("40% of 150 product-looking pages gave no product")
        page.locator("#sites-view").screenshot(path=str(shots / "data-checks.png"))
        browser.close()
