"""Listed products in the product stores: PostgreSQL (real), the embedded SQLite file
(real), MongoDB (mongomock) (issue 43, point 2).

A listed product is an observation of the product at its url: it creates a row known
from a listing only (``data.source`` ``listing``) when the page was never fetched,
completed when it is; it updates the row's price and stock (a card without stock
wording leaves the stock as it was); the price history keeps the page's reading and
the listing's, each with its source (``listing_url`` for a listing's); a card older
than the row's latest reading changes nothing.
"""

from __future__ import annotations

import argparse
import sqlite3
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import mongomock
import psycopg2
import pytest
from scrapy import Spider
from scrapy.utils.test import get_crawler

from crawler.core.itemkinds import PRODUCT
from crawler.pipelines.embedded import EmbeddedStorePipeline
from crawler.pipelines.mongo import MongoUpsertPipeline
from crawler.pipelines.postgres import PostgresUpsertPipeline
from master.catalog import PG_HISTORY_COLUMNS
from master.quotestore import open_item_store
from master.stores import MongoStore
from tests.support.mongofake import install_pymongo_compat

URL = "https://shop.example/p/lamp-1.html"
LISTING = "https://shop.example/c/lamps?page=2"


class EcommerceSpider(Spider):
    name = "ecommerce"


def page_item(price: str, availability: str, at: str) -> dict[str, Any]:
    return {
        "url": URL, "name": "Desk Lamp Model 1", "price": Decimal(price), "currency": "GBP",
        "availability": availability, "sku": "L-1", "gtin": None, "brand": "Lumio",
        "images": [], "breadcrumbs": [], "rating": None, "description": None,
        "provenance": {}, "crawled_at": at, "worker": "w1",
    }


def card(price: str | None, availability: str | None, at: str) -> dict[str, Any]:
    return {
        "url": URL, "name": "Desk Lamp Model…", "price": Decimal(price) if price else None,
        "currency": "GBP" if price else None, "regular_price": None,
        "availability": availability, "image": "https://shop.example/i/1.jpg", "rating": None,
        "position": 3, "listing_url": LISTING, "crawled_at": at, "worker": "w2",
    }


@pytest.fixture
def mongo_client() -> Iterator[mongomock.MongoClient]:
    undo = install_pymongo_compat()
    yield mongomock.MongoClient()
    undo()


@pytest.fixture(params=["embedded", "postgres", "mongo"])
def backend(request, tmp_path, monkeypatch) -> Iterator[dict[str, Any]]:  # type: ignore[no-untyped-def]
    kind = request.param
    options = argparse.Namespace(
        postgres_dsn=None, mongo_uri=None, mongo_database=None, store_path=None, batch_size=2
    )
    if kind == "embedded":
        path = str(tmp_path / "store.sqlite3")
        settings: dict[str, Any] = {"EMBEDDED_STORE_PATH": path}
        options.store_path, cls = path, EmbeddedStorePipeline
    elif kind == "postgres":
        dsn = request.getfixturevalue("postgres_dsn")
        with psycopg2.connect(dsn) as conn, conn.cursor() as cur:
            cur.execute("DROP TABLE IF EXISTS products, product_price_history")
        settings, cls = {"POSTGRES_DSN": dsn}, PostgresUpsertPipeline
        options.postgres_dsn = dsn
    else:
        client = request.getfixturevalue("mongo_client")
        factory = staticmethod(lambda uri: client)
        monkeypatch.setattr(MongoUpsertPipeline, "client_factory", factory)
        monkeypatch.setattr(MongoStore, "client_factory", factory)
        settings, cls = {"MONGO_URI": "mongodb://fake/"}, MongoUpsertPipeline
        options.mongo_uri = "mongodb://fake/"
    crawler = get_crawler(
        EcommerceSpider,
        settings_dict={**settings, "EXTENSIONS": {"crawler.core.flow.FlowControl": 10}},
    )
    pipeline = cls.from_crawler(crawler)
    monkeypatch.delenv("POSTGRES_DSN", raising=False)
    monkeypatch.delenv("MONGO_URI", raising=False)
    yield {"pipeline": pipeline, "options": options, "kind": kind}
    pipeline.disconnect()


def read(options: argparse.Namespace) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    store = open_item_store(options, PRODUCT)
    try:
        rows = {p["url"]: p for p in store.products()}
        return rows[URL], store.history(URL)
    finally:
        store.close()


def test_a_card_creates_updates_and_is_kept_in_history_beside_the_page(backend) -> None:
    pipeline, options = backend["pipeline"], backend["options"]
    # known from a listing only
    assert pipeline.store_batch([card("20.00", "InStock", "2026-01-01T10:00:00+00:00")]).stored
    row, history = read(options)
    assert (row["source"], row["name"], row["price"], row["availability"]) == (
        "listing", "Desk Lamp Model…", 20.0, "InStock",
    )
    assert [(h["source"], h["listing_url"]) for h in history] == [("listing", LISTING)]

    # its page fetched: the row is completed, the page's reading kept too (same offer)
    pipeline.store_batch([page_item("20.00", "InStock", "2026-01-01T10:05:00+00:00")])
    row, history = read(options)
    assert "source" not in row and row["sku"] == "L-1" and row["name"] == "Desk Lamp Model 1"
    assert [h["source"] for h in history] == ["listing", "page"]

    # the listing again, prices moved: the row shows the listing's reading
    pipeline.store_batch([card("17.50", "OutOfStock", "2026-01-02T10:00:00+00:00")])
    row, history = read(options)
    assert (row["price"], row["availability"], row["sku"]) == (17.5, "OutOfStock", "L-1")
    assert row["reading"] == {
        "source": "listing", "listing_url": LISTING, "seen_at": "2026-01-02T10:00:00+00:00",
    }
    assert [(h["source"], h["price"], h["availability"]) for h in history] == [
        ("listing", 20.0, "InStock"), ("page", 20.0, "InStock"),
        ("listing", 17.5, "OutOfStock"),
    ]

    # a card without stock wording or price says nothing of them; unchanged: no row
    pipeline.store_batch([card(None, None, "2026-01-02T11:00:00+00:00")])
    # an older card changes nothing
    pipeline.store_batch([card("99.00", "InStock", "2026-01-01T00:00:00+00:00")])
    row, history = read(options)
    assert (row["price"], row["availability"]) == (17.5, "OutOfStock")
    assert len(history) == 3


def test_a_card_with_stock_but_no_price_adds_no_price_history(backend) -> None:
    """A card that shows stock and no price (its currency unknown, say) updates the
    stock; the price history, of prices, gets no row from it, but keeps the page's next
    reading of the offer the card changed."""
    pipeline, options = backend["pipeline"], backend["options"]
    pipeline.store_batch([page_item("20.00", "InStock", "2026-01-01T10:05:00+00:00")])
    pipeline.store_batch([card(None, "OutOfStock", "2026-01-02T10:00:00+00:00")])
    row, history = read(options)
    assert (row["price"], row["availability"]) == (20.0, "OutOfStock")
    assert [h["source"] for h in history] == ["page"]
    # the page's next reading of the offer the card showed is kept (the card changed it)
    pipeline.store_batch([page_item("20.00", "OutOfStock", "2026-01-03T10:00:00+00:00")])
    assert [h["source"] for h in read(options)[1]] == ["page", "page"]
    # a stock-only card that changes nothing leaves the row's reading the page's
    pipeline.store_batch([card(None, "OutOfStock", "2026-01-04T10:00:00+00:00")])
    pipeline.store_batch([page_item("20.00", "OutOfStock", "2026-01-05T10:00:00+00:00")])
    assert [h["source"] for h in read(options)[1]] == ["page", "page"]


def test_the_price_column_follows_the_card(backend) -> None:
    pipeline, options = backend["pipeline"], backend["options"]
    pipeline.store_batch([page_item("20.00", "InStock", "2026-01-01T10:05:00+00:00")])
    pipeline.store_batch([card("18.25", None, "2026-01-02T10:00:00+00:00")])
    if backend["kind"] == "postgres":
        with psycopg2.connect(options.postgres_dsn) as conn, conn.cursor() as cur:
            cur.execute("SELECT price, availability FROM products WHERE url = %s", (URL,))
            assert cur.fetchone() == (Decimal("18.25"), "InStock")
    elif backend["kind"] == "embedded":
        with sqlite3.connect(options.store_path) as db:
            got = db.execute("SELECT price, availability FROM products").fetchone()
        assert got == ("18.25", "InStock")
    else:
        row, _ = read(options)
        assert (row["price"], row["availability"]) == (18.25, "InStock")


def test_an_older_file_gets_the_source_column(tmp_path) -> None:
    path = tmp_path / "old.sqlite3"
    with sqlite3.connect(path) as db:
        db.executescript(
            "CREATE TABLE product_price_history (id INTEGER PRIMARY KEY, url TEXT NOT NULL, "
            "price TEXT, currency TEXT, availability TEXT, worker TEXT, seen_at TEXT NOT NULL);"
            "INSERT INTO product_price_history (url, price, seen_at) VALUES ('u', '1', 't');"
        )
    crawler = get_crawler(
        EcommerceSpider,
        settings_dict={
            "EMBEDDED_STORE_PATH": str(path),
            "EXTENSIONS": {"crawler.core.flow.FlowControl": 10},
        },
    )
    pipeline = EmbeddedStorePipeline.from_crawler(crawler)
    pipeline.connect()
    pipeline.disconnect()
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT source, listing_url FROM product_price_history").fetchall() == [
            ("page", None)
        ]


_OLD_HISTORY = (  # the price history as made before its source columns (issue 43)
    "CREATE TABLE product_price_history (id {id} PRIMARY KEY, url text NOT NULL, price {price}, "
    "currency text, availability text, worker text, seen_at {time} NOT NULL);"
    "INSERT INTO product_price_history (url, price, currency, availability, worker, seen_at) "
    "VALUES ('{url}', 12.5, 'GBP', 'InStock', 'w1', '2026-01-01T10:00:00+00:00')"
)


@pytest.mark.parametrize("kind", ["embedded", "postgres"])
def test_the_master_reads_the_history_of_a_store_made_before_its_source_column(
    kind, request, tmp_path
) -> None:
    """No worker of this version has opened the store yet: the master reads its history
    as it is, each row a reading of the product page (what the pipelines' migration
    gives the rows), and does not change the store."""
    options = argparse.Namespace(
        postgres_dsn=None, mongo_uri=None, mongo_database=None, store_path=None, batch_size=2
    )
    if kind == "postgres":
        options.postgres_dsn = request.getfixturevalue("postgres_dsn")
        with psycopg2.connect(options.postgres_dsn) as conn, conn.cursor() as cur:
            cur.execute("DROP TABLE IF EXISTS products, product_price_history")
            cur.execute(_OLD_HISTORY.format(id="bigserial", price="numeric",
                                            time="timestamptz", url=URL))
    else:
        options.store_path = str(tmp_path / "old.sqlite3")
        with sqlite3.connect(options.store_path) as db:
            db.executescript(_OLD_HISTORY.format(id="INTEGER", price="TEXT", time="TEXT",
                                                 url=URL))
    store = open_item_store(options, PRODUCT)
    try:
        assert store.history(URL) == [{
            "price": 12.5, "currency": "GBP", "availability": "InStock", "worker": "w1",
            "seen_at": "2026-01-01T10:00:00+00:00", "source": "page", "listing_url": None,
        }]
        assert store.history("https://shop.example/p/other.html") == []
    finally:
        store.close()
    if kind == "postgres":  # the master only read it: the workers' pipeline migrates
        with psycopg2.connect(options.postgres_dsn) as conn, conn.cursor() as cur:
            cur.execute(PG_HISTORY_COLUMNS)
            assert "source" not in {name for (name,) in cur.fetchall()}
