"""The master's read access to the quote store the ``finance`` workers write to.

Chosen as the workers choose it (PostgreSQL, else MongoDB, else the embedded
SQLite file; :func:`master.stores.open_store`'s options), the tables (or
collections) ``quotes`` and ``quote_history`` (``crawler/pipelines/quotes/``).
Quotes stream like products (server-side cursor, batches, row by row): a quote is
its stored item (``data``) with ``first_seen`` and ``last_seen``; an observation
is a ``quote_history`` row (``url``, ``symbol``, ``price``, ``currency``,
``volume``, ``as_of``, ``seen_at``).

:func:`open_item_store` opens the store of a spider's item kind: what ``export``,
``recrawl`` and the dashboard call with ``--spider``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

from crawler import defaults
from crawler.itemkinds import QUOTE, ItemKind
from master.catalog import ProductQuery
from master.stores import (
    EmbeddedStore,
    MongoStore,
    PostgresStore,
    ProductStore,
    _plain,
    _utc,
    _with_times,
    open_store,
)

OBSERVATION_FIELDS = ("url", "symbol", "price", "currency", "volume", "as_of", "seen_at")
_OBSERVATIONS = ", ".join(OBSERVATION_FIELDS)
_PAGE = (
    "SELECT data, first_seen, last_seen FROM quotes WHERE (:after IS NULL OR url > :after) "
    "AND (:q IS NULL OR symbol {like} :q_like ESCAPE '\\' OR name {like} :q_like ESCAPE '\\') "
    "AND (:site IS NULL OR url LIKE :http ESCAPE '\\' OR url LIKE :https ESCAPE '\\') "
    "ORDER BY url LIMIT :limit"
)
_PG_PAGE = re.sub(r":(\w+)", r"%(\1)s", _PAGE.format(like="ILIKE"))
for _name in ("after", "q", "site"):
    _PG_PAGE = _PG_PAGE.replace(f"%({_name})s IS NULL", f"%({_name})s::text IS NULL")


def observation(row: tuple[Any, ...] | dict[str, Any]) -> dict[str, Any]:
    """One ``quote_history`` row as JSON-ready values (numbers exact, times UTC ISO 8601)."""
    values = dict(zip(OBSERVATION_FIELDS, row, strict=True)) if isinstance(row, tuple) else row
    out: dict[str, Any] = {}
    for name in OBSERVATION_FIELDS:
        value = _plain(values.get(name))
        if name == "price" and value is not None:
            value = Decimal(str(value))
        elif name == "volume" and value is not None:
            value = int(value)
        elif name in ("as_of", "seen_at") and value is not None:
            value = _utc(value).isoformat()
        out[name] = value
    return out


def _as_of_text(quote: dict[str, Any]) -> dict[str, Any]:
    """A MongoDB quote's ``as_of`` (a date there) as RFC 3339 text, in UTC."""
    if isinstance(quote.get("as_of"), dt.datetime):
        quote["as_of"] = _utc(quote["as_of"]).isoformat()
    return quote


class PostgresQuoteStore(PostgresStore):

    def _exists(self) -> bool:
        with self.conn.cursor() as cur:
            cur.execute("SELECT to_regclass('quotes') IS NOT NULL")
            return bool(cur.fetchone()[0])

    def _stream(self, sql: str, params: tuple[Any, ...], name: str) -> Iterator[tuple[Any, ...]]:
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
                "SELECT count(*) FROM quotes WHERE %s::timestamptz IS NULL OR last_seen >= %s",
                (since, since),
            )
            return int(cur.fetchone()[0])

    def products(self, since: dt.datetime | None = None) -> Iterator[dict[str, Any]]:
        sql = (
            "SELECT data, first_seen, last_seen FROM quotes "
            "WHERE %s::timestamptz IS NULL OR last_seen >= %s ORDER BY url"
        )
        for data, first_seen, last_seen in self._stream(sql, (since, since), "export_quotes"):
            yield _with_times(data, first_seen, last_seen)

    def observations(self, since: dt.datetime | None = None) -> Iterator[dict[str, Any]]:
        sql = (
            f"SELECT {_OBSERVATIONS} FROM quote_history "
            "WHERE %s::timestamptz IS NULL OR seen_at >= %s ORDER BY url, as_of"
        )
        for row in self._stream(sql, (since, since), "export_history"):
            yield observation(row)

    def urls_seen_before(self, before: dt.datetime) -> Iterator[str]:
        sql = "SELECT url FROM quotes WHERE last_seen < %s ORDER BY url"
        for (url,) in self._stream(sql, (before,), "stale_quotes"):
            yield url

    def page(self, query: ProductQuery) -> list[dict[str, Any]]:
        if not self._exists():
            return []
        with self.conn, self.conn.cursor() as cur:
            cur.execute(_PG_PAGE, query.sql_params())
            return [_with_times(*row) for row in cur.fetchall()]

    def history(self, url: str) -> list[dict[str, Any]]:
        if not self._exists():
            return []
        with self.conn, self.conn.cursor() as cur:
            cur.execute(
                f"SELECT {_OBSERVATIONS} FROM quote_history WHERE url = %s ORDER BY as_of", (url,)
            )
            return [observation(row) for row in cur.fetchall()]

    def last_seen(self) -> Iterator[tuple[str, dt.datetime]]:
        sql = "SELECT url, last_seen FROM quotes ORDER BY url"
        for url, last_seen in self._stream(sql, (), "quotes_last_seen"):
            yield url, _utc(last_seen)


class MongoQuoteStore(MongoStore):
    def __init__(self, uri: str, database: str, batch_size: int) -> None:
        super().__init__(uri, database, batch_size)
        self.collection = self.client[database]["quotes"]
        self.observed = self.client[database]["quote_history"]

    def products(self, since: dt.datetime | None = None) -> Iterator[dict[str, Any]]:
        for quote in super().products(since):
            yield _as_of_text(quote)

    def observations(self, since: dt.datetime | None = None) -> Iterator[dict[str, Any]]:
        found = self.observed.find(self._filter_seen(since), {"_id": 0})
        for document in found.sort([("url", 1), ("as_of", 1)]).batch_size(self.batch_size):
            yield observation(document)

    @staticmethod
    def _filter_seen(since: dt.datetime | None) -> dict[str, Any]:
        return {} if since is None else {"seen_at": {"$gte": since}}

    def page(self, query: ProductQuery) -> list[dict[str, Any]]:
        conditions: list[dict[str, Any]] = []
        if query.after is not None:
            conditions.append({"url": {"$gt": query.after}})
        if query.q:
            pattern = {"$regex": re.escape(query.q), "$options": "i"}
            conditions.append({"$or": [{"symbol": pattern}, {"name": pattern}]})
        if query.site:
            conditions.append({"url": {"$regex": f"^https?://{re.escape(query.site)}/"}})
        found = self.collection.find({"$and": conditions} if conditions else {}, {"_id": 0})
        quotes = []
        for document in found.sort("url", 1).limit(query.limit):
            data = _plain(document)
            quotes.append(_with_times(data, data.pop("first_seen"), data.pop("last_seen")))
        return [_as_of_text(quote) for quote in quotes]

    def history(self, url: str) -> list[dict[str, Any]]:
        found = self.observed.find({"url": url}, {"_id": 0}).sort("as_of", 1)
        return [observation(document) for document in found]


class EmbeddedQuoteStore(EmbeddedStore):
    def _exists(self) -> bool:
        row = self.conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'quotes'"
        ).fetchone()
        return row is not None

    def count(self, since: dt.datetime | None = None) -> int:
        if not self._exists():
            return 0
        cutoff = self._since(since)
        query = "SELECT count(*) FROM quotes WHERE ? IS NULL OR last_seen >= ?"
        return int(self.conn.execute(query, (cutoff, cutoff)).fetchone()[0])

    def products(self, since: dt.datetime | None = None) -> Iterator[dict[str, Any]]:
        if not self._exists():
            return
        cutoff = self._since(since)
        rows = self.conn.execute(
            "SELECT data, first_seen, last_seen FROM quotes "
            "WHERE ? IS NULL OR last_seen >= ? ORDER BY url",
            (cutoff, cutoff),
        )
        for data, first_seen, last_seen in rows:
            yield _with_times(json.loads(data), first_seen, last_seen)

    def observations(self, since: dt.datetime | None = None) -> Iterator[dict[str, Any]]:
        if not self._exists():
            return
        cutoff = self._since(since)
        rows = self.conn.execute(
            f"SELECT {_OBSERVATIONS} FROM quote_history WHERE ? IS NULL OR seen_at >= ? "
            "ORDER BY url, as_of",
            (cutoff, cutoff),
        )
        for row in rows:
            yield observation(tuple(row))

    def urls_seen_before(self, before: dt.datetime) -> Iterator[str]:
        if not self._exists():
            return
        rows = self.conn.execute(
            "SELECT url FROM quotes WHERE last_seen < ? ORDER BY url", (self._since(before),)
        )
        for (url,) in rows:
            yield url

    def page(self, query: ProductQuery) -> list[dict[str, Any]]:
        if not self._exists():
            return []
        rows = self.conn.execute(_PAGE.format(like="LIKE"), query.sql_params())
        return [_with_times(json.loads(data), first, last) for data, first, last in rows]

    def history(self, url: str) -> list[dict[str, Any]]:
        if not self._exists():
            return []
        rows = self.conn.execute(
            f"SELECT {_OBSERVATIONS} FROM quote_history WHERE url = ? ORDER BY as_of", (url,)
        )
        return [observation(tuple(row)) for row in rows]

    def last_seen(self) -> Iterator[tuple[str, dt.datetime]]:
        if not self._exists():
            return
        for url, last_seen in self.conn.execute("SELECT url, last_seen FROM quotes ORDER BY url"):
            yield url, _utc(last_seen)


def open_quote_store(args: argparse.Namespace) -> ProductStore:
    """The quote store the options (or the environment, as for the workers) name."""
    dsn = args.postgres_dsn or os.environ.get("POSTGRES_DSN")
    if dsn:
        return PostgresQuoteStore(dsn, args.batch_size)
    uri = args.mongo_uri or os.environ.get("MONGO_URI")
    if uri:
        database = (
            args.mongo_database or os.environ.get("MONGO_DATABASE") or defaults.MONGO_DATABASE
        )
        return MongoQuoteStore(uri, database, args.batch_size)
    path = args.store_path or os.environ.get("EMBEDDED_STORE_PATH") or defaults.EMBEDDED_STORE_PATH
    return EmbeddedQuoteStore(path)


def open_item_store(args: argparse.Namespace, kind: ItemKind) -> ProductStore:
    """The store of ``kind``'s items (products or quotes) the options name."""
    return open_quote_store(args) if kind == QUOTE else open_store(args)
