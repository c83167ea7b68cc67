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
import re
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

from crawler.core.itemkinds import QUOTE, ItemKind
from master.catalog import ProductQuery, pg_page_sql
from master.stores import (
    EmbeddedStore,
    MongoStore,
    PostgresStore,
    ProductStore,
    _plain,
    _utc,
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
_HISTORY = f"SELECT {_OBSERVATIONS} FROM quote_history WHERE url = {{url}} ORDER BY as_of"


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
    """The product store's reads on ``quotes``, and the observations of ``quote_history``."""

    table = "quotes"
    page_sql = pg_page_sql(_PAGE.format(like="ILIKE"))

    def observations(self, since: dt.datetime | None = None) -> Iterator[dict[str, Any]]:
        sql = (
            f"SELECT {_OBSERVATIONS} FROM quote_history "
            "WHERE %s::timestamptz IS NULL OR seen_at >= %s ORDER BY url, as_of"
        )
        for row in self._stream(sql, (since, since), "export_history"):
            yield observation(row)

    def history(self, url: str) -> list[dict[str, Any]]:
        rows = self._stream(_HISTORY.format(url="%s"), (url,), "history")
        return [observation(row) for row in rows]


class MongoQuoteStore(MongoStore):
    table = "quotes"

    def __init__(self, uri: str, database: str, batch_size: int) -> None:
        super().__init__(uri, database, batch_size)
        self.observed = self.client[database]["quote_history"]

    def _item(self, document: dict[str, Any]) -> dict[str, Any]:
        return _as_of_text(super()._item(document))

    def _search(self, query: ProductQuery) -> list[dict[str, Any]]:
        if not query.q:
            return []
        pattern = {"$regex": re.escape(query.q), "$options": "i"}
        return [{"$or": [{"symbol": pattern}, {"name": pattern}]}]

    def observations(self, since: dt.datetime | None = None) -> Iterator[dict[str, Any]]:
        found = self.observed.find(self._filter_seen(since), {"_id": 0})
        for document in found.sort([("url", 1), ("as_of", 1)]).batch_size(self.batch_size):
            yield observation(document)

    @staticmethod
    def _filter_seen(since: dt.datetime | None) -> dict[str, Any]:
        return {} if since is None else {"seen_at": {"$gte": since}}

    def history(self, url: str) -> list[dict[str, Any]]:
        found = self.observed.find({"url": url}, {"_id": 0}).sort("as_of", 1)
        return [observation(document) for document in found]


class EmbeddedQuoteStore(EmbeddedStore):
    table = "quotes"
    page_sql = _PAGE.format(like="LIKE")

    def observations(self, since: dt.datetime | None = None) -> Iterator[dict[str, Any]]:
        cutoff = self._since(since)
        sql = (
            f"SELECT {_OBSERVATIONS} FROM quote_history WHERE ? IS NULL OR seen_at >= ? "
            "ORDER BY url, as_of"
        )
        for row in self._rows(sql, (cutoff, cutoff)):
            yield observation(tuple(row))

    def history(self, url: str) -> list[dict[str, Any]]:
        return [observation(tuple(row)) for row in self._rows(_HISTORY.format(url="?"), (url,))]


def open_quote_store(args: argparse.Namespace) -> ProductStore:
    """The quote store the options (or the environment, as for the workers) name."""
    return open_store(args, PostgresQuoteStore, MongoQuoteStore, EmbeddedQuoteStore)


def open_item_store(args: argparse.Namespace, kind: ItemKind) -> ProductStore:
    """The store of ``kind``'s items (products or quotes) the options name."""
    return open_quote_store(args) if kind == QUOTE else open_store(args)
