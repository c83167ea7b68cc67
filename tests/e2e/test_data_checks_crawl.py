"""Data checks over a real crawl (issue 45): two worker processes crawl a sound demo
shop and a shop whose site profile reads a template's constant as every product's
stock, price and name, and a shop whose profile rejects part of its product
pages; the defects' checks fail in the worker's log, ``master checks``
(exit 1 with ``--fail-on warn``), ``status --sites``, the metrics, and the rows carry
the fields in doubt; the sound shop raises none over its full crawl."""

from __future__ import annotations

import json
import sqlite3

import pytest

pytestmark = pytest.mark.workers

# A profile that reads, on every page of its site, the same thing: a "Sold out" wording,
# one price and the shop's logo as the name (what a wrong profile or a template does).
DEFECT_PROFILE = {
    "name": "a wrong profile",
    "domains": ["127.0.0.2"],
    "fields": {
        "availability": {"xpath": "string('Sold out')"},
        "price": {"xpath": "string('£4.99')"},
        "name": {"css": "a.logo::text"},
    },
}

# A profile whose product-page rule rejects part of the shop's product pages (those whose
# heading's length is not what it allows: about half of the demo catalogue's 120).
REJECTING_PROFILE = {
    "name": "a rule that rejects product pages",
    "domains": ["127.0.0.3"],
    "is_product": {
        "xpath": "//form[@class='add-to-cart'][string-length(normalize-space(//h1)) mod 3 != 0]"
    },
}


def test_defects_raise_their_checks_and_the_sound_shop_none(crawl, shop_factory, tmp_path):
    sound = shop_factory(products=120)
    # two more sound shops of other templates (no structured data; a sold-out strip on
    # every page): no check may fail on them either
    others = [shop_factory(products=60, generated=kind) for kind in ("plain-lists", "templated")]
    broken = shop_factory(products=120, host="127.0.0.2")
    rejecting = shop_factory(products=120, host="127.0.0.3")
    profiles = tmp_path / "profiles"
    profiles.mkdir()
    (profiles / "wrong.json").write_text(json.dumps(DEFECT_PROFILE))
    (profiles / "rejecting.json").write_text(json.dumps(REJECTING_PROFILE))
    crawl.env["ALLOW_PRIVATE_NETWORKS"] = "127.0.0.0/8"
    crawl.env["SITE_PROFILES_DIR"] = str(profiles)
    crawl.pause()
    crawl.seed(sound.url, broken.url, rejecting.url, *(shop.url for shop in others))
    for name in ("w1", "w2"):
        crawl.start_worker(name, SITE_PROFILES_DIR=str(profiles), DATACHECKS_SYNC_INTERVAL=1)
    crawl.wait_open(2)
    crawl.resume()
    crawl.wait_workers()

    sound_site = sound.url.split("//", 1)[1].rstrip("/")
    broken_site = broken.url.split("//", 1)[1].rstrip("/")
    expected = {"availability_one_value", "price_one_value", "name_one_value"}

    # the worker's log: one WARNING per check, by whichever worker(s) saw it fail
    logs = "".join(worker.log() for worker in crawl.workers)
    for check in expected:
        lines = [line for line in logs.splitlines()
                 if f"Data check {check} fails on {broken_site}" in line]
        assert 1 <= len(lines) <= 2, (check, lines)  # once per worker at most
        assert "WARNING" in lines[0] and "e.g. http://127.0.0.2" in lines[0]
    assert f"fails on {sound_site}" not in logs
    assert "fails on 127.0.0.1" not in logs  # none on any sound shop

    # master checks: the defect's checks with figures and examples; exit 1 on --fail-on
    result = crawl.master("checks", "--json", "--redis-url", crawl.redis_url)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    by_site = {entry["site"]: entry for entry in report["sites"]}
    assert set(by_site[broken_site]["failing"]) == expected
    assert by_site[sound_site]["failing"] == []  # 0 false alarms over the full crawl
    assert by_site[sound_site]["rows"] == 120
    statuses = {r["check"]: r["status"] for r in by_site[sound_site]["checks"]}
    assert set(statuses.values()) <= {"ok"}, statuses
    for shop in others:
        entry = by_site[shop.url.split("//", 1)[1].rstrip("/")]
        assert entry["failing"] == [], entry
    failing = {r["check"]: r for r in by_site[broken_site]["checks"] if r["status"] == "fail"}
    assert failing["availability_one_value"]["figures"]["value"] == "OutOfStock"
    assert failing["price_one_value"]["figures"]["share"] == 1.0
    assert all(len(r["examples"]) == 3 for r in failing.values())
    rejecting_site = rejecting.url.split("//", 1)[1].rstrip("/")
    assert by_site[rejecting_site]["failing"] == ["product_pages_rejected"]
    (rejected,) = [r for r in by_site[rejecting_site]["checks"] if r["status"] == "fail"]
    assert rejected["figures"]["product_looking"] == 120
    assert set(rejected["figures"]["reasons"]) == {"profile"}  # the profile's rule said no
    assert rejected["figures"]["share"] >= 0.3
    assert len(rejected["examples"]) == 3
    assert f"Data check product_pages_rejected fails on {rejecting_site}" in logs
    assert crawl.master("checks", "--fail-on", "warn").returncode == 1
    text = crawl.master("status", "--sites").stdout
    assert "FAIL availability_one_value" in text

    # the rows say which fields are in doubt; export --trusted leaves them out
    with sqlite3.connect(crawl.workdir / "products.sqlite3") as db:
        rows = [json.loads(data) for (data,) in db.execute("select data from products")]
    sound_rows = [r for r in rows if sound_site in r["url"]]
    assert len(sound_rows) == 120
    assert all(r["uncertain"] == [] for r in sound_rows)
    doubted = [r for r in rows if broken_site in r["url"] and r["uncertain"]]
    assert doubted and all(
        {"availability", "name", "price"} <= set(r["uncertain"]) for r in doubted
    )
    export = crawl.master("export", "--trusted", "--store-path",
                          str(crawl.workdir / "products.sqlite3"))
    assert export.returncode == 0, export.stderr
    exported = [json.loads(line) for line in export.stdout.splitlines()]
    assert len(exported) == len(rows) - len(doubted)
    assert not any(r["uncertain"] for r in exported)
