"""Two workers store the demo shop in MongoDB (mongomock: no server runs here)."""

from __future__ import annotations

import os
import subprocess
import sys
from decimal import Decimal

import pytest
from bson import json_util

from tools.workers import ROOT

pytestmark = pytest.mark.workers


def _run_workers(crawl, dump, load=None) -> dict:
    args = [
        sys.executable,
        "-m",
        "tests.support.mongomock_workers",
        "--workers",
        "w1,w2",
        "--dump",
        str(dump),
    ]
    # few requests each, so that both workers of the one process get a share of a small shop
    args += ["-s", "CONCURRENT_REQUESTS=2"]
    if load:
        args += ["--load", str(load)]
    env = {
        **os.environ,
        **crawl.env,
        "MONGO_URI": "mongodb://mongomock.invalid/",
        "LEASE_HEARTBEAT_INTERVAL": "1",
    }
    result = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stderr[-4000:]
    assert "Traceback" not in result.stderr, result.stderr[-4000:]
    return json_util.loads(dump.read_text())


def _by_url(documents: list[dict]) -> dict[str, dict]:
    by_url = {doc["url"]: doc for doc in documents}
    assert len(by_url) == len(documents), "one document per url"
    return by_url


def _assert_products_match(products: dict[str, dict], shop) -> None:
    expected = shop.catalog.expected_products(shop.url.rstrip("/"))
    assert set(products) == set(expected)
    for url, product in expected.items():
        doc = products[url]
        assert (doc["name"], doc["price"].to_decimal(), doc["currency"], doc["availability"]) == (
            product["name"],
            Decimal(product["price"]),
            product["currency"],
            product["availability"],
        ), url


def _page_readings(dump: dict) -> list[dict]:  # type: ignore[type-arg]
    return [doc for doc in dump["price_history"] if doc.get("source", "page") == "page"]


def test_two_workers_upsert_into_mongodb_and_a_recrawl_updates(crawl, shop_factory, tmp_path):
    shop = shop_factory(products=60, latency_ms=40)
    crawl.seed(shop.url)
    first_dump = _run_workers(crawl, tmp_path / "first.json")
    first = _by_url(first_dump["products"])
    _assert_products_match(first, shop)
    # the product pages' readings (a listing's cards may add their own: source 'listing')
    assert len(_page_readings(first_dump)) == 60
    assert {doc["worker"] for doc in first.values()} == {"w1", "w2"}

    port = shop.port
    shop.stop()
    repriced = shop_factory(products=60, latency_ms=40, price_version=1, port=port)
    assert crawl.master("reset", "--yes").returncode == 0
    crawl.seed(repriced.url)
    second_dump = _run_workers(crawl, tmp_path / "second.json", load=tmp_path / "first.json")
    second = _by_url(second_dump["products"])
    _assert_products_match(second, repriced)
    changed = {
        url
        for url, product in repriced.catalog.expected_products(repriced.url.rstrip("/")).items()
        if (Decimal(product["price"]), product["availability"])
        != (first[url]["price"].to_decimal(), first[url]["availability"])
    }
    assert changed
    history: dict[str, int] = {}
    for doc in _page_readings(second_dump):
        history[doc["url"]] = history.get(doc["url"], 0) + 1
    assert {url for url, n in history.items() if n == 2} == changed
    for url, doc in second.items():
        assert doc["first_seen"] == first[url]["first_seen"]
        assert doc["last_seen"] >= first[url]["last_seen"]
