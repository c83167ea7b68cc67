"""Quotes kept in the embedded SQLite file when no database server is configured."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any, ClassVar

from crawler.core.itemkinds import QUOTE
from crawler.pipelines.embedded import EmbeddedStorePipeline, decimal_text, write_transaction
from crawler.pipelines.quote_record import (
    HISTORY_COLUMNS,
    QUOTE_ROW_COLUMNS,
    QuoteRecord,
    batch_plan,
)

SCHEMA_SQL = """
CREATE TABLE IF NOT EXISTS quotes (
    url          TEXT PRIMARY KEY,
    symbol       TEXT NOT NULL,
    name         TEXT,
    exchange     TEXT,
    price        TEXT NOT NULL,
    currency     TEXT,
    change       TEXT,
    volume       INTEGER,
    market_cap   TEXT,
    as_of        TEXT NOT NULL,
    data         TEXT NOT NULL,
    first_seen   TEXT NOT NULL,
    last_seen    TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS quotes_last_seen ON quotes (last_seen);
CREATE TABLE IF NOT EXISTS quote_history (
    id           INTEGER PRIMARY KEY,
    url          TEXT NOT NULL,
    symbol       TEXT NOT NULL,
    price        TEXT NOT NULL,
    currency     TEXT,
    volume       INTEGER,
    as_of        TEXT NOT NULL,
    seen_at      TEXT NOT NULL,
    UNIQUE (url, as_of)
);
"""

_COLUMNS = (*QUOTE_ROW_COLUMNS, "first_seen", "last_seen")
# of the same time, a market table's row does not replace a page's (quote_record.replaces)
_NEWER = (
    "(excluded.as_of > quotes.as_of OR (excluded.as_of = quotes.as_of AND ("
    "json_extract(excluded.data, '$.provenance.price') IS NOT 'table' "
    "OR json_extract(quotes.data, '$.provenance.price') IS 'table')))"
)
_UPDATES = "".join(
    f"\n    {c} = CASE WHEN {_NEWER} THEN excluded.{c} ELSE quotes.{c} END,"
    for c in QUOTE_ROW_COLUMNS[1:]
)
_UPSERT = f"""
INSERT INTO quotes ({", ".join(_COLUMNS)})
VALUES ({", ".join("?" for _ in _COLUMNS)})
ON CONFLICT (url) DO UPDATE SET{_UPDATES}
    last_seen = excluded.last_seen
"""
_LATEST = "SELECT price, currency, volume FROM quote_history WHERE url = ? ORDER BY as_of DESC"
_HISTORY = f"""
INSERT OR IGNORE INTO quote_history ({", ".join(HISTORY_COLUMNS)})
VALUES ({", ".join("?" for _ in HISTORY_COLUMNS)})
"""


def utc_text(when: dt.datetime) -> str:
    """A time as the SQLite store writes it: ISO 8601 UTC of one fixed form (they compare
    as text)."""
    return when.astimezone(dt.UTC).isoformat(timespec="milliseconds")


def _value(value: Any) -> Any:
    if isinstance(value, Decimal):
        return decimal_text(value)
    if isinstance(value, dt.datetime):
        return utc_text(value)
    return value


class EmbeddedQuotePipeline(EmbeddedStorePipeline):
    """Keeps quotes in the SQLite file (``EMBEDDED_STORE_PATH``, the products' file) when
    neither ``POSTGRES_DSN`` nor ``MONGO_URI`` is set and the spider yields quotes.

    The same tables as PostgreSQL (``quotes``, ``quote_history`` unique on
    ``(url, as_of)``) with SQLite types: numbers as exact decimal TEXT, ``volume``
    an INTEGER, times (``as_of`` too) as ISO 8601 UTC text. Each batch is one
    ``BEGIN IMMEDIATE`` transaction, as for products.
    """

    item_kind: ClassVar[str] = QUOTE.name
    schema_sql: ClassVar[str] = SCHEMA_SQL

    def prepare(self, item: Any) -> QuoteRecord:
        return QuoteRecord.of(item, self.worker)

    def write_records(self, records: list[Any]) -> dict[str, str]:
        conn = self.conn
        assert conn is not None, "write_records() before connect()"
        now = utc_text(dt.datetime.now(dt.UTC))
        plan = batch_plan(records)
        with write_transaction(conn):
            for record in plan.latest:
                conn.execute(_UPSERT, (*map(_value, record.row()), now, now))
            for record in plan.observations:
                if record.fetch_time:
                    latest = conn.execute(_LATEST, (record.url,)).fetchone()
                    if latest is not None and record.same_values(*latest):
                        continue
                crawled = record.crawled_at
                seen_at = utc_text(crawled) if crawled else now
                conn.execute(_HISTORY, (*map(_value, record.observation()), seen_at))
        return {}
