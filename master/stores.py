"""The master's read access to the product store the workers write to.

The store is chosen as the workers choose it (see ``crawler/pipelines/``):
PostgreSQL when a DSN is given, else MongoDB when a URI is given, else the
embedded SQLite file. Each store streams its products (PostgreSQL through a
server-side cursor, MongoDB through a cursor with a batch size, SQLite row by
row), so an export never holds the whole catalogue in memory.

A product is the stored item (``data``: the JSON the pipelines wrote) with
``first_seen`` and ``last_seen`` added.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import sqlite3
from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any, Protocol

import psycopg2

from crawler.core import defaults
from crawler.core.config import redact_dsn
from master.catalog import _PAGE_SQL, _PG_PAGE_SQL, PG_HISTORY_COLUMNS, ProductQuery, history_sql

DEFAULT_BATCH_SIZE = 1000


def read_errors() -> tuple[type[BaseException], ...]:
    """What reading a store may raise once it is open (lost connection, timeout, locked
    file). A function: pymongo is imported only by the commands that read a store."""
    import pymongo.errors

    return (psycopg2.Error, pymongo.errors.PyMongoError, sqlite3.Error)


def _connect_mongo(uri: str) -> Any:
    from crawler.pipelines.mongo import connect_mongo  # pymongo and Scrapy: only when used

    return connect_mongo(uri)


class StoreError(RuntimeError):
    """The store cannot be opened or read (the message says which and why)."""


class ProductStore(Protocol):
    location: str

    def count(self, since: dt.datetime | None = None) -> int: ...

    def products(self, since: dt.datetime | None = None) -> Iterator[dict[str, Any]]: ...

    def urls_seen_before(self, before: dt.datetime) -> Iterator[str]: ...

    def page(self, query: ProductQuery) -> list[dict[str, Any]]: ...

    def history(self, url: str) -> list[dict[str, Any]]: ...

    def last_seen(self) -> Iterator[tuple[str, dt.datetime]]: ...

    def close(self) -> None: ...


def _history_row(  # source: page or listing (read on listing_url)
    price: Any, currency: Any, availability: Any, worker: Any, seen_at: Any,
    source: Any = None, listing_url: Any = None,
) -> dict[str, Any]:
    return {
        "price": None if price is None else float(price),
        "currency": currency,
        "availability": availability,
        "worker": worker,
        "seen_at": _utc(seen_at).isoformat(),
        "source": source or "page", "listing_url": listing_url,
    }


def _utc(value: Any) -> dt.datetime:
    if isinstance(value, str):
        value = dt.datetime.fromisoformat(value)
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.UTC)
    return value.astimezone(dt.UTC)  # type: ignore[no-any-return]


def _with_times(data: dict[str, Any], first_seen: Any, last_seen: Any) -> dict[str, Any]:
    data["first_seen"] = _utc(first_seen).isoformat()
    data["last_seen"] = _utc(last_seen).isoformat()
    return data


class PostgresStore:
    """The items of one table (``table``: ``products``; :mod:`master.quotestore`'s
    subclass reads ``quotes``), streamed through server-side cursors."""

    table = "products"
    page_sql = _PG_PAGE_SQL

    def __init__(self, dsn: str, batch_size: int = DEFAULT_BATCH_SIZE) -> None:
        self.location = redact_dsn(dsn)
        self.batch_size = batch_size
        try:
            self.conn = psycopg2.connect(dsn, connect_timeout=10)
        except psycopg2.Error as exc:
            raise StoreError(f"cannot connect to PostgreSQL at {self.location}: {exc}") from None

    def _exists(self) -> bool:
        with self.conn.cursor() as cur:
            cur.execute("SELECT to_regclass(%s) IS NOT NULL", (self.table,))
            return bool(cur.fetchone()[0])

    def _stream(self, sql: str, params: tuple[Any, ...], name: str) -> Iterator[tuple[Any, ...]]:
        """The rows of ``sql`` through a server-side cursor named ``name`` (none while
        the table does not exist)."""
        if not self._exists():
            return
        with self.conn, self.conn.cursor(name=name) as cur:
            cur.itersize = self.batch_size
            cur.execute(sql, params)
            yield from cur

    def count(self, since: dt.datetime | None = None) -> int:
        if not self._exists():
            return 0
        with self.conn.cursor() as cur:
            cur.execute(
                f"SELECT count(*) FROM {self.table} "
                "WHERE %s::timestamptz IS NULL OR last_seen >= %s",
                (since, since),
            )
            return int(cur.fetchone()[0])

    def products(self, since: dt.datetime | None = None) -> Iterator[dict[str, Any]]:
        sql = (
            f"SELECT data, first_seen, last_seen FROM {self.table} "
            "WHERE %s::timestamptz IS NULL OR last_seen >= %s ORDER BY url"
        )
        for data, first_seen, last_seen in self._stream(sql, (since, since), "export"):
            yield _with_times(data, first_seen, last_seen)

    def urls_seen_before(self, before: dt.datetime) -> Iterator[str]:
        sql = f"SELECT url FROM {self.table} WHERE last_seen < %s ORDER BY url"
        for (url,) in self._stream(sql, (before,), "stale"):
            yield url

    def page(self, query: ProductQuery) -> list[dict[str, Any]]:
        if not self._exists():
            return []
        with self.conn, self.conn.cursor() as cur:
            cur.execute(self.page_sql, query.sql_params())
            return [_with_times(*row) for row in cur.fetchall()]

    def history(self, url: str) -> list[dict[str, Any]]:
        with self.conn, self.conn.cursor() as cur:  # an older table: its columns (catalog)
            cur.execute(PG_HISTORY_COLUMNS)
            sql = history_sql({name for (name,) in cur.fetchall()}, "%s")
            if sql is None:
                return []
            cur.execute(sql, (url,))
            return [_history_row(*row) for row in cur.fetchall()]

    def last_seen(self) -> Iterator[tuple[str, dt.datetime]]:
        """Every item's URL and ``last_seen`` (UTC), streamed."""
        sql = f"SELECT url, last_seen FROM {self.table} ORDER BY url"
        for url, last_seen in self._stream(sql, (), "last_seen"):
            yield url, _utc(last_seen)

    def close(self) -> None:
        self.conn.close()


def _plain(value: Any) -> Any:
    """A MongoDB value as the JSON of the item had it (Decimal128 -> Decimal)."""
    from bson import Decimal128

    if isinstance(value, Decimal128):
        return value.to_decimal()
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


class MongoStore:
    """The items of one collection (``table``: ``products``; see :class:`PostgresStore`)."""

    client_factory: Callable[[str], Any] = staticmethod(_connect_mongo)
    table = "products"

    def __init__(self, uri: str, database: str, batch_size: int = DEFAULT_BATCH_SIZE) -> None:
        self.location = f"{redact_dsn(uri)} (database {database})"
        self.batch_size = batch_size
        self.client = type(self).client_factory(uri)
        self.collection = self.client[database][self.table]

    @staticmethod
    def _filter(since: dt.datetime | None) -> dict[str, Any]:
        return {} if since is None else {"last_seen": {"$gte": since}}

    def _item(self, document: dict[str, Any]) -> dict[str, Any]:
        """A stored document as the item it was, with its times as ISO text."""
        data = _plain(document)
        return _with_times(data, data.pop("first_seen"), data.pop("last_seen"))

    def _search(self, query: ProductQuery) -> list[dict[str, Any]]:
        """The conditions of a page's query beyond its cursor and site."""
        conditions: list[dict[str, Any]] = []
        if query.q:
            conditions.append({"name": {"$regex": re.escape(query.q), "$options": "i"}})
        if query.availability:
            conditions.append({"availability": query.availability})
        return conditions

    def count(self, since: dt.datetime | None = None) -> int:
        return int(self.collection.count_documents(self._filter(since)))

    def products(self, since: dt.datetime | None = None) -> Iterator[dict[str, Any]]:
        cursor = self.collection.find(self._filter(since), {"_id": 0}).sort("url", 1)
        for document in cursor.batch_size(self.batch_size):
            yield self._item(document)

    def urls_seen_before(self, before: dt.datetime) -> Iterator[str]:
        cursor = self.collection.find({"last_seen": {"$lt": before}}, {"_id": 0, "url": 1})
        for document in cursor.sort("url", 1).batch_size(self.batch_size):
            yield document["url"]

    def page(self, query: ProductQuery) -> list[dict[str, Any]]:
        conditions: list[dict[str, Any]] = []
        if query.after is not None:
            conditions.append({"url": {"$gt": query.after}})
        if query.site:
            conditions.append({"url": {"$regex": f"^https?://{re.escape(query.site)}/"}})
        conditions += self._search(query)
        found = self.collection.find({"$and": conditions} if conditions else {}, {"_id": 0})
        return [self._item(document) for document in found.sort("url", 1).limit(query.limit)]

    def history(self, url: str) -> list[dict[str, Any]]:
        history = self.collection.database["price_history"]
        found = history.find({"url": url}, {"_id": 0}).sort("seen_at", 1)
        return [
            _history_row(
                _plain(d.get("price")),
                d.get("currency"),
                d.get("availability"),
                d.get("worker"),
                d["seen_at"], d.get("source"), d.get("listing_url"),
            )
            for d in found
        ]

    def last_seen(self) -> Iterator[tuple[str, dt.datetime]]:
        cursor = self.collection.find({}, {"_id": 0, "url": 1, "last_seen": 1})
        for document in cursor.sort("url", 1).batch_size(self.batch_size):
            yield document["url"], _utc(document["last_seen"])

    def close(self) -> None:
        self.client.close()


class EmbeddedStore:
    """The items of one table of the SQLite file (``table``: see :class:`PostgresStore`)."""

    table = "products"
    page_sql = _PAGE_SQL.format(like="LIKE")

    def __init__(self, path: str) -> None:
        self.path = Path(path).expanduser().resolve()
        self.location = f"sqlite:{self.path}"
        if not self.path.exists():
            raise StoreError(f"no embedded store at {self.path} (set --store-path)")
        # read in turn by the threads of one dashboard request (its dependency, route,
        # streamed export), never at once
        uri = f"file:{self.path}?mode=ro"
        self.conn = sqlite3.connect(uri, uri=True, timeout=30, check_same_thread=False)

    def _has_table(self, name: str) -> bool:
        row = self.conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)
        ).fetchone()
        return row is not None

    def _exists(self) -> bool:
        return self._has_table(self.table)

    def _rows(self, sql: str, params: Any) -> Iterator[tuple[Any, ...]]:
        """The rows of ``sql`` (none while the table does not exist)."""
        if self._exists():
            yield from self.conn.execute(sql, params)

    @staticmethod
    def _since(since: dt.datetime | None) -> str | None:
        # times are ISO 8601 UTC text of one fixed form: they compare as text
        return (
            None if since is None else since.astimezone(dt.UTC).isoformat(timespec="milliseconds")
        )

    def count(self, since: dt.datetime | None = None) -> int:
        cutoff = self._since(since)
        sql = f"SELECT count(*) FROM {self.table} WHERE ? IS NULL OR last_seen >= ?"
        return next((int(n) for (n,) in self._rows(sql, (cutoff, cutoff))), 0)

    def products(self, since: dt.datetime | None = None) -> Iterator[dict[str, Any]]:
        cutoff = self._since(since)
        sql = (
            f"SELECT data, first_seen, last_seen FROM {self.table} "
            "WHERE ? IS NULL OR last_seen >= ? ORDER BY url"
        )
        for data, first_seen, last_seen in self._rows(sql, (cutoff, cutoff)):
            yield _with_times(json.loads(data), first_seen, last_seen)

    def urls_seen_before(self, before: dt.datetime) -> Iterator[str]:
        sql = f"SELECT url FROM {self.table} WHERE last_seen < ? ORDER BY url"
        for (url,) in self._rows(sql, (self._since(before),)):
            yield url

    def page(self, query: ProductQuery) -> list[dict[str, Any]]:
        rows = self._rows(self.page_sql, query.sql_params())
        return [_with_times(json.loads(data), first, last) for data, first, last in rows]

    def history(self, url: str) -> list[dict[str, Any]]:
        have = self.conn.execute("PRAGMA table_info(product_price_history)").fetchall()
        sql = history_sql({row[1] for row in have}, "?")  # an older table: its columns
        return [] if sql is None else [_history_row(*row) for row in self.conn.execute(sql, (url,))]

    def last_seen(self) -> Iterator[tuple[str, dt.datetime]]:
        sql = f"SELECT url, last_seen FROM {self.table} ORDER BY url"
        for url, last_seen in self._rows(sql, ()):
            yield url, _utc(last_seen)

    def close(self) -> None:
        self.conn.close()


def add_store_options(parser: argparse.ArgumentParser) -> None:
    """``--postgres-dsn``, ``--mongo-uri``, ``--mongo-database``, ``--store-path``."""
    group = parser.add_argument_group(
        "product store (as the workers choose it: PostgreSQL, else MongoDB, else embedded)"
    )
    group.add_argument(
        "--postgres-dsn", metavar="DSN", help="PostgreSQL to read (default: $POSTGRES_DSN)"
    )
    group.add_argument("--mongo-uri", metavar="URI", help="MongoDB to read (default: $MONGO_URI)")
    group.add_argument(
        "--mongo-database",
        metavar="NAME",
        help=f"MongoDB database (default: $MONGO_DATABASE, else {defaults.MONGO_DATABASE})",
    )
    group.add_argument(
        "--store-path",
        metavar="PATH",
        help=(
            "embedded SQLite store (default: $EMBEDDED_STORE_PATH, "
            f"else {defaults.EMBEDDED_STORE_PATH})"
        ),
    )
    group.add_argument(
        "--batch-size",
        type=int,
        default=DEFAULT_BATCH_SIZE,
        metavar="N",
        help=f"rows fetched per round trip (default {DEFAULT_BATCH_SIZE})",
    )


def open_store(
    args: argparse.Namespace,
    postgres: type[PostgresStore] | None = None,
    mongo: type[MongoStore] | None = None,
    embedded: type[EmbeddedStore] | None = None,
) -> ProductStore:
    """The store the options (or the environment, as for the workers) name: of the
    products, or of the classes given (the quotes' stores, :mod:`master.quotestore`)."""
    dsn = args.postgres_dsn or os.environ.get("POSTGRES_DSN")
    if dsn:
        return (postgres or PostgresStore)(dsn, args.batch_size)
    uri = args.mongo_uri or os.environ.get("MONGO_URI")
    if uri:
        database = (
            args.mongo_database or os.environ.get("MONGO_DATABASE") or defaults.MONGO_DATABASE
        )
        return (mongo or MongoStore)(uri, database, args.batch_size)
    path = args.store_path or os.environ.get("EMBEDDED_STORE_PATH") or defaults.EMBEDDED_STORE_PATH
    return (embedded or EmbeddedStore)(path)


def json_default(value: Any) -> Any:
    """JSON for the values stores give back: exact decimals as numbers, times as ISO text."""
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    raise TypeError(f"not JSON serializable: {type(value).__name__}")
