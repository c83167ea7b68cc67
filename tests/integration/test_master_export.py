"""``python -m master export``: products stored by the real pipelines, streamed back out.

PostgreSQL and the embedded SQLite store are real; MongoDB is mongomock (no server
on the test machines), behind the same ``MongoStore`` code.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import sqlite3
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import mongomock
import psycopg2
import pytest

from crawler.pipelines.embedded import EmbeddedStorePipeline
from crawler.pipelines.mongo import MongoUpsertPipeline
from crawler.pipelines.postgres import PostgresUpsertPipeline
from master.cli import main
from master.stores import MongoStore
from tests.support.mongofake import install_pymongo_compat
from tests.support.products import make_crawler, make_product

COUNT = 30
NASTY = {"name": 'Stuhl "Ärger", groß\nmit Zeile', "description": "a, b; c"}


def products() -> list[dict[str, Any]]:
    items = [make_product(i) for i in range(1, COUNT)]
    items.append(make_product(COUNT, **NASTY))
    return items


@pytest.fixture
def mongo_client() -> Iterator[mongomock.MongoClient]:
    undo = install_pymongo_compat()
    yield mongomock.MongoClient()
    undo()


class Store:
    """One store filled with ``products()`` by its real pipeline; ``args`` select it."""

    def __init__(self, kind: str, args: list[str], pipeline: Any, mongo: Any = None) -> None:
        self.kind, self.args, self.mongo = kind, args, mongo
        result = pipeline.store_batch(products())
        assert len(result.stored) == COUNT, result.rejected
        pipeline.disconnect()

    def age(self, urls: list[str], hours: float) -> None:
        """Move the last_seen of ``urls`` back by ``hours``."""
        when = dt.datetime.now(dt.UTC) - dt.timedelta(hours=hours)
        if self.kind == "postgres":
            with psycopg2.connect(self.args[1]) as conn, conn.cursor() as cur:
                cur.execute("UPDATE products SET last_seen = %s WHERE url = ANY(%s)", (when, urls))
        elif self.kind == "embedded":
            stamp = when.isoformat(timespec="milliseconds")
            with sqlite3.connect(self.args[1]) as conn:
                conn.executemany(
                    "UPDATE products SET last_seen = ? WHERE url = ?", [(stamp, u) for u in urls]
                )
        else:
            self.mongo["crawler"]["products"].update_many(
                {"url": {"$in": urls}}, {"$set": {"last_seen": when}}
            )


@pytest.fixture(params=["postgres", "embedded", "mongo"])
def store(request, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mongo_client) -> Store:  # type: ignore[no-untyped-def]
    for name in ("POSTGRES_DSN", "MONGO_URI", "EMBEDDED_STORE_PATH"):
        monkeypatch.delenv(name, raising=False)
    if request.param == "postgres":
        dsn = request.getfixturevalue("postgres_dsn")
        crawler = make_crawler({"POSTGRES_DSN": dsn, "REDIS_URL": "redis://127.0.0.1:1/0"})
        return Store(
            "postgres", ["--postgres-dsn", dsn], PostgresUpsertPipeline.from_crawler(crawler)
        )
    if request.param == "embedded":
        path = str(tmp_path / "products.sqlite3")
        crawler = make_crawler({"EMBEDDED_STORE_PATH": path, "REDIS_URL": "redis://127.0.0.1:1/0"})
        return Store(
            "embedded", ["--store-path", path], EmbeddedStorePipeline.from_crawler(crawler)
        )

    class MockedMongoPipeline(MongoUpsertPipeline):
        client_factory = staticmethod(lambda uri: mongo_client)

    monkeypatch.setattr(MongoStore, "client_factory", staticmethod(lambda uri: mongo_client))
    monkeypatch.setattr(mongo_client, "close", lambda: None)  # shared by pipeline and export
    uri = "mongodb://mongo.example:27017"
    crawler = make_crawler({"MONGO_URI": uri, "REDIS_URL": "redis://127.0.0.1:1/0"})
    return Store(
        "mongo", ["--mongo-uri", uri], MockedMongoPipeline.from_crawler(crawler), mongo_client
    )


def export(store: Store, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[str, str]:
    code = main(["export", *store.args, *args])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return captured.out, captured.err


def parse(fmt: str, text: str) -> list[dict[str, Any]]:
    if fmt == "jsonl":
        return [json.loads(line) for line in text.splitlines()]
    if fmt == "json":
        data = json.loads(text)
        assert isinstance(data, list)
        return data
    return list(csv.DictReader(io.StringIO(text, newline="")))


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "json"])
def test_every_product_round_trips_in_each_format(store, capsys, tmp_path, fmt):  # type: ignore[no-untyped-def]
    out = tmp_path / f"products.{fmt}"
    _, err = export(store, capsys, "--format", fmt, "--out", str(out))
    assert f"exported {COUNT} products" in err
    rows = parse(fmt, out.read_text(encoding="utf-8"))
    assert len(rows) == COUNT
    by_url = {row["url"]: row for row in rows}
    for product in products():
        row = by_url[product["url"]]
        assert row["name"] == product["name"]
        assert Decimal(str(row["price"])) == product["price"]
        assert row["currency"] == product["currency"]
        assert row["crawled_at"] == product["crawled_at"]
        images = json.loads(row["images"]) if fmt == "csv" else row["images"]
        rating = json.loads(row["rating"]) if fmt == "csv" else row["rating"]
        assert images == product["images"]
        assert rating == product["rating"]
        assert dt.datetime.fromisoformat(row["last_seen"]) >= dt.datetime.fromisoformat(
            row["first_seen"]
        )


def test_since_and_fields_to_stdout(store, capsys):  # type: ignore[no-untyped-def]
    stale = [make_product(i)["url"] for i in range(1, 11)]
    store.age(stale, hours=7)
    out, err = export(store, capsys, "--format", "jsonl", "--since", "6h", "--fields", "url,price")
    rows = parse("jsonl", out)
    assert len(rows) == COUNT - len(stale)
    assert not {row["url"] for row in rows} & set(stale)
    assert all(list(row) == ["url", "price"] for row in rows)
    assert "seen since" in err


def test_progress_bar_on_stderr(store, capsys, tmp_path):  # type: ignore[no-untyped-def]
    _, err = export(
        store, capsys, "--format", "csv", "--out", str(tmp_path / "p.csv"), "--progress"
    )
    assert f"{COUNT}/{COUNT}" in err


def test_a_missing_embedded_store_is_an_error(tmp_path, capsys, monkeypatch):  # type: ignore[no-untyped-def]
    for name in ("POSTGRES_DSN", "MONGO_URI"):
        monkeypatch.delenv(name, raising=False)
    code = main(["export", "--store-path", str(tmp_path / "none.sqlite3")])
    assert code == 1
    assert "no embedded store" in capsys.readouterr().err


def test_each_store_gives_every_url_and_its_last_seen(store):  # type: ignore[no-untyped-def]
    """What ``recrawl --changed`` compares with the sitemaps' lastmod (master/freshness.py)."""
    import argparse

    from master.stores import add_store_options, open_store

    parser = argparse.ArgumentParser()
    add_store_options(parser)
    urls = sorted(item["url"] for item in products())
    store.age(urls[:2], hours=5)
    opened = open_store(parser.parse_args(store.args))
    try:
        seen = dict(opened.last_seen())
    finally:
        opened.close()
    assert sorted(seen) == urls
    now = dt.datetime.now(dt.UTC)
    assert all(when.tzinfo is not None for when in seen.values())
    assert [round((now - seen[url]).total_seconds() / 3600) for url in urls[:2]] == [5, 5]
    assert all(now - seen[url] < dt.timedelta(minutes=10) for url in urls[2:])
