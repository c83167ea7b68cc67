"""The quote stores: PostgreSQL (real), the embedded SQLite file (real), MongoDB (mongomock).

Each keeps the latest quote of a url in ``quotes`` and one row per observation in
``quote_history`` (unique on url and as_of): an unchanged re-fetch adds nothing, a
quote that moved adds one row, a late older quote hides nothing. The master reads
them back (``master.quotestore``) as ``export`` and ``recrawl`` do.
"""

from __future__ import annotations

import argparse
import datetime as dt
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import mongomock
import pytest
from scrapy import Spider
from scrapy.exceptions import NotConfigured
from scrapy.utils.test import get_crawler

from crawler.pipelines.embedded import EmbeddedStorePipeline
from crawler.pipelines.quotes.embedded import EmbeddedQuotePipeline
from crawler.pipelines.quotes.mongo import MongoQuotePipeline
from crawler.pipelines.quotes.postgres import PostgresQuotePipeline
from master.catalog import ProductQuery
from master.quotestore import open_quote_store
from master.stores import MongoStore
from tests.support.mongofake import install_pymongo_compat

T0 = dt.datetime(2025, 3, 10, 16, 0, tzinfo=dt.UTC)
T1 = T0 + dt.timedelta(minutes=5)


class FinanceSpider(Spider):
    name = "finance"


def quote(i: int, when: dt.datetime, price: str | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "url": f"https://quotes.example/quote/S{i}",
        "symbol": f"S{i}",
        "name": f"Instrument {i}",
        "exchange": "NASDAQ",
        "price": Decimal(price or f"{100 + i}.25"),
        "currency": "USD",
        "change": Decimal("-1.5"),
        "volume": 1000 * (i + 1),
        "market_cap": Decimal("2.95E+12"),
        "as_of": when.isoformat(),
        "provenance": {"price": "label", "as_of": "label"},
        "crawled_at": "2026-01-05T12:00:00+00:00",
        "worker": "w1",
        **extra,
    }


@pytest.fixture
def mongo_client() -> Iterator[mongomock.MongoClient]:
    undo = install_pymongo_compat()
    yield mongomock.MongoClient()
    undo()


@pytest.fixture(params=["embedded", "postgres", "mongo"])
def backend(request, tmp_path, monkeypatch) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """The quote pipeline of one store, and the options ``export`` would read it with."""
    kind = request.param
    options = argparse.Namespace(
        postgres_dsn=None, mongo_uri=None, mongo_database=None, store_path=None, batch_size=2
    )
    if kind == "embedded":
        path = str(tmp_path / "store.sqlite3")
        settings: dict[str, Any] = {"EMBEDDED_STORE_PATH": path}
        options.store_path, cls = path, EmbeddedQuotePipeline
    elif kind == "postgres":
        dsn = request.getfixturevalue("postgres_dsn")
        settings, cls = {"POSTGRES_DSN": dsn}, PostgresQuotePipeline
        options.postgres_dsn = dsn
    else:
        client = request.getfixturevalue("mongo_client")
        factory = staticmethod(lambda uri: client)
        monkeypatch.setattr(MongoQuotePipeline, "client_factory", factory)
        monkeypatch.setattr(MongoStore, "client_factory", factory)
        settings, cls = {"MONGO_URI": "mongodb://fake/"}, MongoQuotePipeline
        options.mongo_uri = "mongodb://fake/"
    crawler = get_crawler(
        FinanceSpider,
        settings_dict={
            **settings,
            "EXTENSIONS": {"crawler.core.flow.FlowControl": 10},
        },
    )
    pipeline = cls.from_crawler(crawler)
    monkeypatch.delenv("POSTGRES_DSN", raising=False)
    monkeypatch.delenv("MONGO_URI", raising=False)
    yield {"pipeline": pipeline, "options": options}
    pipeline.disconnect()


def read(options: argparse.Namespace) -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]]]:
    store = open_quote_store(options)
    try:
        quotes = {q["url"]: q for q in store.products()}
        history = list(store.observations())  # type: ignore[attr-defined]
    finally:
        store.close()
    return quotes, history


def test_latest_quote_and_one_observation_each(backend: dict[str, Any]) -> None:
    pipeline, options = backend["pipeline"], backend["options"]
    first = [quote(i, T0) for i in range(6)]
    assert pipeline.store_batch(first).stored == list(range(6))
    pipeline.store_batch(first)  # fetched again, unchanged: nothing new
    quotes, history = read(options)
    assert len(quotes) == 6 and len(history) == 6

    moved = [quote(i, T1, price=f"{200 + i}.5") for i in range(6)]
    pipeline.store_batch(moved)
    pipeline.store_batch([quote(0, T0)])  # a late write of the older quote hides nothing
    quotes, history = read(options)
    assert len(history) == 12
    assert quotes[first[0]["url"]]["price"] == 200.5
    assert {q["as_of"][:16] for q in quotes.values()} == {T1.isoformat()[:16]}
    by_url = [h for h in history if h["url"] == first[0]["url"]]
    assert [(h["price"], h["as_of"][:16]) for h in by_url] == [
        (Decimal("100.25"), T0.isoformat()[:16]),
        (Decimal("200.5"), T1.isoformat()[:16]),
    ]
    assert by_url[0]["volume"] == 1000 and by_url[0]["symbol"] == "S0"


def test_a_quote_at_its_fetch_time_is_an_observation_only_when_it_changed(
    backend: dict[str, Any],
) -> None:
    pipeline, options = backend["pipeline"], backend["options"]
    fetched = {"provenance": {"as_of": "fetch"}}
    pipeline.store_batch([quote(1, T0, **fetched)])
    pipeline.store_batch([quote(1, T0 + dt.timedelta(minutes=1), **fetched)])  # the same
    pipeline.store_batch([quote(1, T0 + dt.timedelta(minutes=2), price="1.5", **fetched)])
    quotes, history = read(options)
    assert [h["price"] for h in history] == [Decimal("101.25"), Decimal("1.5")]
    assert list(quotes.values())[0]["price"] == 1.5


def test_the_master_pages_and_finds_stale_quotes(backend: dict[str, Any]) -> None:
    pipeline, options = backend["pipeline"], backend["options"]
    pipeline.store_batch([quote(i, T0) for i in range(5)])
    store = open_quote_store(options)
    try:
        assert store.count() == 5
        page = store.page(ProductQuery(q="s3", limit=10))
        assert [q["symbol"] for q in page] == ["S3"]
        later = dt.datetime.now(dt.UTC) + dt.timedelta(minutes=1)
        assert len(list(store.urls_seen_before(later))) == 5
        assert list(store.urls_seen_before(later - dt.timedelta(hours=1))) == []
        assert [h["price"] for h in store.history(quote(2, T0)["url"])] == [Decimal("102.25")]
    finally:
        store.close()


def test_rows_no_store_takes_are_refused_one_by_one(backend: dict[str, Any]) -> None:
    pipeline = backend["pipeline"]
    result = pipeline.store_batch(
        [quote(1, T0), {**quote(2, T0), "as_of": "soon"}, {**quote(3, T0), "volume": 1.5}]
    )
    assert result.stored == [0]
    assert [reason for _, reason in result.rejected] == [
        "as_of is not a time: 'soon'",
        "volume is not a whole number: 1.5",
    ]


def test_each_store_keeps_its_own_kind_of_item(tmp_path) -> None:  # type: ignore[no-untyped-def]
    settings = {
        "EMBEDDED_STORE_PATH": str(tmp_path / "s.sqlite3"),
        "EXTENSIONS": {"crawler.core.flow.FlowControl": 10},
    }
    with pytest.raises(NotConfigured):
        EmbeddedStorePipeline.from_crawler(get_crawler(FinanceSpider, settings_dict=settings))

    class EcommerceSpider(Spider):
        name = "ecommerce"

    with pytest.raises(NotConfigured):
        EmbeddedQuotePipeline.from_crawler(get_crawler(EcommerceSpider, settings_dict=settings))


def test_a_market_tables_row_of_a_pages_time_keeps_the_pages_reading(
    backend: dict[str, Any],
) -> None:
    """A table's row (provenance ``table``, fewer fields) of the time of a quote page's
    reading does not replace it; a later one does; both add their observation once."""
    pipeline, options = backend["pipeline"], backend["options"]
    table = {"price": "table", "as_of": "visible"}
    pipeline.store_batch([quote(0, T0), quote(1, T0, provenance=table)])
    row = {k: v for k, v in quote(0, T0, provenance=table).items() if k != "market_cap"}
    # the same session from a table: in one batch with the page's reading, and after it
    pipeline.store_batch([row, quote(1, T0)])
    pipeline.store_batch([row])
    quotes, history = read(options)
    assert Decimal(str(quotes[row["url"]]["market_cap"])) == Decimal("2.95E+12")
    assert quotes[row["url"]]["provenance"]["price"] == "label"  # the page's reading kept
    assert quotes[quote(1, T0)["url"]]["provenance"]["price"] == "label"  # a page's wins
    assert len(history) == 2
    later = {**row, "as_of": T1.isoformat(), "price": Decimal("99.5")}
    pipeline.store_batch([later])
    quotes, history = read(options)
    assert Decimal(str(quotes[row["url"]]["price"])) == Decimal("99.5")
    assert quotes[row["url"]]["provenance"]["price"] == "table"  # the latest observation
    assert len(history) == 3
