"""Data checks on real Redis (issue 45): the sites' figures shared by every worker in
bounded memory, each check's logic, and the surfaces that show them (the worker's
WARNING, ``master checks``, ``status --sites``, the metrics, the rows' ``uncertain``)."""

from __future__ import annotations

import json
import logging
from decimal import Decimal
from typing import Any

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from scrapy.http import HtmlResponse
from scrapy.utils.test import get_crawler

from crawler.core.keys import CrawlKeys
from crawler.datachecks.checks import BY_NAME, FAIL, OFF, OK, QUIET, run_checks
from crawler.datachecks.figures import (
    TOP_CAP,
    Figures,
    observe_product,
    observe_quote,
    observe_rejected,
    url_shape,
)
from crawler.datachecks.report import CheckSettings, gather_checks
from crawler.datachecks.store import FiguresStore
from crawler.datachecks.uncertain import mark, read_uncertainly
from crawler.extensions.datachecks import DataChecks
from crawler.extraction.profiles import ProfileError, ProfileRegistry, SiteProfile
from crawler.spiders.ecommerce import EcommerceSpider
from master.cli import main
from master.commands.export import trusted
from master.commands.metrics import CrawlCollector

KEYS = CrawlKeys()
SITE = "shop.example"


def product(n: int, **fields: Any) -> dict[str, Any]:
    item = {
        "url": f"http://{SITE}/p/item-{n}",
        "name": f"Widget {n}",
        "price": Decimal(10 + n),
        "currency": "EUR",
        "availability": "InStock" if n % 3 else "OutOfStock",
        "sku": f"W{n:04d}",
        "provenance": {"name": "json-ld", "price": "json-ld", "availability": "json-ld"},
        "uncertain": [],
    }
    item.update(fields)
    return item


def figures_of(rows: list[dict[str, Any]], text: str | None = None) -> Figures:
    figures = Figures()
    for row in rows:
        observe_product(figures, row, text)
    return figures


def status_of(figures: Figures, check: str, kind: str = "product", **kw: Any) -> dict[str, Any]:
    return next(r for r in run_checks(SITE, figures, kind, **kw) if r["check"] == check)


# -- the figures in Redis ------------------------------------------------------------


def test_two_workers_figures_add_up_in_redis_within_bounds(redis_client) -> None:
    store = FiguresStore(redis_client, KEYS)
    first = figures_of([product(n) for n in range(30)])
    second = figures_of([product(n) for n in range(30, 90)])
    store.add(SITE, first)
    shared = store.add(SITE, second)
    assert shared.get("rows") == 90
    assert shared.get("have:price") == 90
    assert shared.get("prov:price:json-ld") == 90
    # 90 distinct prices and names: only the TOP_CAP most counted are kept, and the
    # examples of those only
    assert len(shared.top["price"]) == TOP_CAP
    assert len(shared.top["name"]) == TOP_CAP
    kept = {key.split("\t", 1)[1] for key in shared.ex if key.startswith("price\t")}
    assert kept <= set(shared.top["price"])
    assert all(len(urls) <= 3 for urls in shared.ex.values())
    assert shared.top["availability"] == {"InStock": 60, "OutOfStock": 30}
    # what the master reads is what the workers wrote, under the spider's prefix
    assert redis_client.exists("ecommerce:checks:shop.example")
    assert FiguresStore(redis_client, KEYS).read([SITE, "none.example"])[SITE] == shared


def test_a_cluster_layout_keeps_a_sites_figures_in_its_shard() -> None:
    keys = CrawlKeys.layout("ecommerce", cluster=True, shards=16)
    shard = keys.shard_of(SITE)
    assert keys.for_site(SITE).checks(SITE) == f"ecommerce:{{s{shard}}}:checks:{SITE}"
    assert CrawlKeys().for_site(SITE).checks(SITE) == f"ecommerce:checks:{SITE}"


def test_url_shapes() -> None:
    assert url_shape("http://a/p/blue-widget-12") == url_shape("http://a/p/red-9") == "/p/*"
    assert url_shape("http://a/shop/2024/x.html") == "/shop/#/*.html"
    assert url_shape("http://a/") == "/"


# -- each check's logic --------------------------------------------------------------


def test_availability_one_value_fails_on_one_stock_state_with_its_figures() -> None:
    rows = [product(n, availability="OutOfStock") for n in range(60)]
    result = status_of(figures_of(rows), "availability_one_value")
    assert result["status"] == FAIL
    assert result["figures"] == {
        "rows": 60, "value": "OutOfStock", "rows_with_value": 60, "share": 1.0
    }
    assert len(result["examples"]) == 3 and all(SITE in url for url in result["examples"])
    # InStock everywhere is what a shop lists: not a misreading
    rows = [product(n, availability="InStock") for n in range(60)]
    assert status_of(figures_of(rows), "availability_one_value")["status"] == OK
    # a sound spread, and too few rows
    assert status_of(figures_of([product(n) for n in range(60)]),
                     "availability_one_value")["status"] == OK
    few = [product(n, availability="OutOfStock") for n in range(49)]
    assert status_of(figures_of(few), "availability_one_value")["status"] == QUIET


def test_thresholds_set_globally_and_per_site_silence_included() -> None:
    rows = [product(n, availability="OutOfStock") for n in range(60)]
    fig = figures_of(rows)
    assert status_of(fig, "availability_one_value",
                     overrides={"availability_one_value": {"min_rows": 100}})["status"] == QUIET
    assert status_of(fig, "availability_one_value",
                     site_overrides={"availability_one_value": False})["status"] == OFF
    profile = SiteProfile.from_dict(
        {"domains": [SITE], "checks": {"availability_one_value": {"threshold": 1.0}}}
    )
    assert profile.checks == {"availability_one_value": {"threshold": 1.0}}
    with pytest.raises(ProfileError, match="checks.no_such_check"):
        SiteProfile.from_dict({"domains": [SITE], "checks": {"no_such_check": False}})
    with pytest.raises(ProfileError, match="threshold"):
        SiteProfile.from_dict({"domains": [SITE], "checks": {"price_one_value": {"threshold": 5}}})


def test_price_and_name_one_value() -> None:
    one_price = [product(n, price=Decimal("4.99")) for n in range(60)]
    result = status_of(figures_of(one_price), "price_one_value")
    assert result["status"] == FAIL and result["figures"]["value"] == "4.99 EUR"
    titled = [product(n, name="Best Shop - Home") for n in range(60)]
    result = status_of(figures_of(titled), "name_one_value")
    assert result["status"] == FAIL and result["figures"]["value"] == "best shop - home"
    sound = figures_of([product(n) for n in range(60)])
    assert status_of(sound, "price_one_value")["status"] == OK
    assert status_of(sound, "name_one_value")["status"] == OK


def test_field_coverage_counts_rows_whose_page_shows_what_was_not_read() -> None:
    page = "<html><h1>Widget</h1><p class=cost>£12.99</p><p>SKU: W0001</p></html>"
    rows = [product(n, price=None, currency=None) for n in range(60)]
    result = status_of(figures_of(rows, page), "field_coverage")
    assert result["status"] == FAIL
    assert result["figures"]["field"] == "price"
    assert result["figures"]["price"]["missing_but_shown"] == 60
    assert len(result["examples"]) == 3
    # no price shown on the page: a product without one is no misreading
    bare = "<html><h1>Widget</h1><p>Ask us</p></html>"
    assert status_of(figures_of(rows, bare), "field_coverage")["status"] == OK


def test_product_pages_rejected_counts_pages_shaped_like_the_sites_products() -> None:
    fig = figures_of([product(n) for n in range(40)])
    for n in range(40, 60):  # a third of the product pages give nothing
        observe_rejected(fig, f"http://{SITE}/p/item-{n}", "no_product", looks_like=True)
    for n in range(30):  # category pages: another shape, not product-looking
        observe_rejected(fig, f"http://{SITE}/c/cat-{n}", "listing", looks_like=False)
    result = status_of(fig, "product_pages_rejected")
    assert result["status"] == FAIL
    assert result["figures"]["product_looking"] == 60
    assert result["figures"]["reasons"] == {"no_product": 20}
    assert all("/p/" in url for url in result["examples"])
    sound = figures_of([product(n) for n in range(60)])
    for n in range(30):
        observe_rejected(sound, f"http://{SITE}/c/cat-{n}", "listing", looks_like=False)
    assert status_of(sound, "product_pages_rejected")["status"] == OK


def quote(n: int, **fields: Any) -> dict[str, Any]:
    item = {"url": f"http://{SITE}/quote/S{n}", "symbol": f"S{n}", "price": Decimal(100 + n),
            "currency": "USD", "volume": 1000 + n, "as_of": "2026-11-29T10:00:00+00:00",
            "provenance": {"price": "label", "as_of": "label"}}
    item.update(fields)
    return item


def test_quote_checks() -> None:
    fetched = Figures()
    for n in range(30):
        observe_quote(fetched, quote(n, provenance={"price": "label", "as_of": "fetch"}))
    result = status_of(fetched, "as_of_from_fetch", "quote")
    assert result["status"] == FAIL and result["figures"]["share"] == 1.0
    same = Figures()
    for n in range(30):
        observe_quote(same, quote(n, price=Decimal("1.00")))
    assert status_of(same, "price_unchanged", "quote")["status"] == FAIL
    sound = Figures()
    for n in range(30):
        observe_quote(sound, quote(n))
    assert {r["status"] for r in run_checks(SITE, sound, "quote")} == {OK}
    assert all(check.kind == "quote" for check in BY_NAME.values() if check.name in (
        "as_of_from_fetch", "price_unchanged"))


# -- the rows' uncertain fields --------------------------------------------------------


def test_rows_carry_their_uncertain_fields_and_export_trusted_leaves_them_out() -> None:
    item = product(1, price=None, provenance={"availability": "json-ld",
                                             "disagrees": ["availability"]})
    assert read_uncertainly(item, guessed=True) == ["availability", "price"]
    assert read_uncertainly(product(2), guessed=False) == []
    row = product(3)
    mark(row, {"availability_one_value": "availability", "product_pages_rejected": ""})
    assert row["uncertain"] == ["availability"]
    covered = product(4)
    mark(covered, {"field_coverage": "price"})  # it has its price: not in doubt
    assert covered["uncertain"] == []
    rows = [row, covered, product(5)]
    assert [r["url"] for r in trusted(rows)] == [covered["url"], product(5)["url"]]


# -- the worker's side: shared figures, one WARNING, rows marked ----------------------


def _extension(redis_url: str) -> DataChecks:
    crawler = get_crawler(
        EcommerceSpider, settings_dict={"REDIS_URL": redis_url, "DATACHECKS_SYNC_INTERVAL": 0}
    )
    crawler.stats.open_spider()
    return DataChecks(crawler)


def _page(url: str) -> HtmlResponse:
    return HtmlResponse(url=url, body=b"<html><h1>x</h1></html>", encoding="utf-8")


def test_two_workers_share_figures_and_each_warns_once(redis_url, caplog) -> None:
    first, second = _extension(redis_url), _extension(redis_url)
    caplog.set_level(logging.INFO, logger="crawler.extensions.datachecks")
    for n in range(30):
        item = product(n, availability="OutOfStock")
        first.item_scraped(item, _page(item["url"]))
    first.sync()
    assert not [r for r in caplog.records if r.levelno == logging.WARNING]  # 30 < 50 rows
    for n in range(30, 60):
        item = product(n, availability="OutOfStock")
        second.item_scraped(item, _page(item["url"]))
    second.sync()  # the sum of both: 60 rows
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert warnings[0].startswith(
        "Data check availability_one_value fails on shop.example: 100% of 60 rows have "
        "the availability 'OutOfStock'"
    )
    assert "e.g. http://shop.example/p/item-" in warnings[0]
    for n in range(60, 70):  # more pages, more syncs: no second line
        item = product(n, availability="OutOfStock")
        second.item_scraped(item, _page(item["url"]))
    second.sync()
    assert len([r for r in caplog.records if r.levelno == logging.WARNING]) == 1
    row = product(71)
    second.mark(row, SITE)
    assert row["uncertain"] == ["availability"]


def test_a_listed_product_is_no_row_of_the_figures_and_is_not_marked(redis_url) -> None:
    """The cards of a listing page are observations of their products, no rows of the
    site's: the figures leave them out, and they keep their schema (no ``uncertain``)."""
    from crawler.schema import validator_of

    checks = _extension(redis_url)
    for n in range(60):
        item = product(n, availability="OutOfStock")
        checks.item_scraped(item, _page(item["url"]))
    checks.sync()  # the site's availability check fails: its rows are marked
    card = {"url": product(99)["url"], "name": "A card", "price": 1.5, "currency": "EUR",
            "availability": "OutOfStock", "position": 1, "listing_url": f"http://{SITE}/c/1"}
    before = checks.pending.get(SITE)
    checks.item_scraped(dict(card), _page(card["url"]))
    assert checks.pending.get(SITE) is before  # no row added
    DataChecks.mark_item(get_crawler(EcommerceSpider), card, SITE)  # no extension: its own
    assert "uncertain" not in card
    assert list(validator_of("listed_product").iter_errors(card)) == []
    row = product(100)
    checks.mark(row, SITE)
    assert row["uncertain"] == ["availability"]


# -- the master's surfaces -------------------------------------------------------------


def _seed_sites(redis_client, sites: dict[str, list[dict[str, Any]]]) -> None:
    store = FiguresStore(redis_client, KEYS)
    for site, rows in sites.items():
        redis_client.hset(KEYS.sites, f"pages {site}", len(rows))
        fig = Figures()
        for row in rows:
            observe_product(fig, {**row, "url": row["url"].replace(SITE, site)})
        store.add(site, fig)


def master(redis_url: str, *args: str) -> int:
    return main(["--redis-url", redis_url, *args], prog="master")


def test_master_checks_exit_status_json_and_status_column(redis_url, redis_client, capsys) -> None:
    _seed_sites(redis_client, {"sound.example": [product(n) for n in range(60)]})
    assert master(redis_url, "checks", "--fail-on", "warn") == 0
    assert "no failing check on 1 site(s)" in capsys.readouterr().out
    _seed_sites(redis_client, {
        "broken.example": [product(n, availability="OutOfStock") for n in range(60)]
    })
    assert master(redis_url, "checks") == 0  # without --fail-on: a report, not a verdict
    out = capsys.readouterr().out
    assert "FAIL  broken.example" in out and "availability_one_value" in out
    assert "e.g. http://broken.example/p/item-" in out
    assert master(redis_url, "checks", "--fail-on", "warn") == 1
    capsys.readouterr()
    assert master(redis_url, "checks", "--json") == 0
    report = json.loads(capsys.readouterr().out)
    assert report["failing"] == 1
    assert [s["site"] for s in report["sites"]] == ["broken.example", "sound.example"]
    assert report["sites"][0]["failing"] == ["availability_one_value"]
    assert master(redis_url, "status", "--sites") == 0
    table = capsys.readouterr().out
    assert "FAIL availability_one_value" in table and " ok" in table
    assert master(redis_url, "status", "--sites", "--json") == 0
    figures = json.loads(capsys.readouterr().out)["sites"]
    by_site = {s["site"]: s["checks_failing"] for s in figures["sites"]}
    assert by_site == {"broken.example": ["availability_one_value"], "sound.example": []}
    assert figures["checks"]["failing"] == 1


def test_metrics_have_a_gauge_per_site_and_check(redis_url, redis_client) -> None:
    _seed_sites(redis_client, {
        "broken.example": [product(n, availability="OutOfStock") for n in range(60)],
        "sound.example": [product(n) for n in range(60)],
    })
    registry = CollectorRegistry()
    registry.register(CrawlCollector(redis_client, KEYS))
    text = generate_latest(registry).decode()
    assert ('crawl_data_check_failing{check="availability_one_value",site="broken.example"} 1.0'
            in text)
    assert ('crawl_data_check_failing{check="availability_one_value",site="sound.example"} 0.0'
            in text)


def test_gather_checks_reads_a_site_profiles_silence(redis_client) -> None:
    _seed_sites(redis_client, {
        "broken.example": [product(n, availability="OutOfStock") for n in range(60)]
    })
    profiles = ProfileRegistry([SiteProfile.from_dict(
        {"domains": ["broken.example"], "checks": {"availability_one_value": False}})])
    report = gather_checks(redis_client, KEYS, CheckSettings({}, profiles))
    assert report["failing"] == 0
    statuses = {r["check"]: r["status"] for r in report["sites"][0]["checks"]}
    assert statuses["availability_one_value"] == OFF


def test_a_sites_figures_go_to_redis_every_sync_pages_pages_not_per_page(
    redis_url, redis_client
) -> None:
    checks = _extension(redis_url)
    assert checks.sync_pages == 100
    for n in range(250):
        item = product(n)
        checks.item_scraped(item, _page(item["url"]))
    # two additions of 100 pages each (3 commands apiece), the last 50 wait in memory
    shared = FiguresStore(redis_client, KEYS).read([SITE])[SITE]
    assert shared.get("rows") == 200
    assert checks.pending[SITE].get("rows") == 50
    checks.sync()
    assert FiguresStore(redis_client, KEYS).read([SITE])[SITE].get("rows") == 250
