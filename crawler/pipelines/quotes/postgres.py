"""Quotes upserted into PostgreSQL, with their history of observations."""

from __future__ import annotations

from typing import Any, ClassVar

import psycopg2.extensions
from psycopg2.extras import execute_values

from crawler.core.itemkinds import QUOTE
from crawler.pipelines.postgres import PostgresUpsertPipeline
from crawler.pipelines.quote_record import (
    HISTORY_COLUMNS,
    QUOTE_ROW_COLUMNS,
    QuoteRecord,
    batch_plan,
)

SCHEMA_SQL = """
CREATE TABLE IF NOT EXISTS quotes (
    url          text PRIMARY KEY,
    symbol       text NOT NULL,
    name         text,
    exchange     text,
    price        numeric NOT NULL,
    currency     text,
    change       numeric,
    volume       bigint,
    market_cap   numeric,
    as_of        timestamptz NOT NULL,
    data         jsonb NOT NULL,
    first_seen   timestamptz NOT NULL DEFAULT now(),
    last_seen    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS quotes_last_seen ON quotes (last_seen);
CREATE TABLE IF NOT EXISTS quote_history (
    id           bigserial PRIMARY KEY,
    url          text NOT NULL,
    symbol       text NOT NULL,
    price        numeric NOT NULL,
    currency     text,
    volume       bigint,
    as_of        timestamptz NOT NULL,
    seen_at      timestamptz NOT NULL DEFAULT now(),
    UNIQUE (url, as_of)
);
"""

_CASTS = {
    "price": "::numeric",
    "change": "::numeric",
    "volume": "::bigint",
    "market_cap": "::numeric",
    "as_of": "::timestamptz",
    "data": "::jsonb",
}
_COLUMNS = ", ".join(QUOTE_ROW_COLUMNS)
_TEMPLATE = "(" + ", ".join(f"%s{_CASTS.get(c, '')}" for c in QUOTE_ROW_COLUMNS) + ")"
# a row is replaced by a quote of the same time or later only (of the same time, a market
# table's row does not replace a page's: quote_record.replaces); last_seen moves on anyway
_NEWER = (
    "(EXCLUDED.as_of > quotes.as_of OR (EXCLUDED.as_of = quotes.as_of AND ("
    "EXCLUDED.data->'provenance'->>'price' IS DISTINCT FROM 'table' "
    "OR quotes.data->'provenance'->>'price' = 'table')))"
)
_UPDATES = "".join(
    f"\n    {c} = CASE WHEN {_NEWER} THEN EXCLUDED.{c} ELSE quotes.{c} END,"
    for c in QUOTE_ROW_COLUMNS[1:]
)
_UPSERT = f"""
INSERT INTO quotes ({_COLUMNS}, first_seen, last_seen)
SELECT v.*, now(), now() FROM (VALUES %s) AS v({_COLUMNS}) ORDER BY v.url
ON CONFLICT (url) DO UPDATE SET{_UPDATES}
    last_seen = EXCLUDED.last_seen
"""
_OBSERVED = ", ".join(HISTORY_COLUMNS)
# an observation of a fetch time (the page showed none) only when it differs from the
# url's latest one; (url, as_of) once
_HISTORY = f"""
INSERT INTO quote_history ({_OBSERVED})
SELECT {", ".join(f"v.{c}" for c in HISTORY_COLUMNS)}
FROM (VALUES %s) AS v({_OBSERVED}, fetched)
WHERE NOT (v.fetched AND EXISTS (
    SELECT 1 FROM (
        SELECT h.price, h.currency, h.volume FROM quote_history h
        WHERE h.url = v.url ORDER BY h.as_of DESC LIMIT 1
    ) AS latest
    WHERE latest.price = v.price AND latest.currency IS NOT DISTINCT FROM v.currency
      AND latest.volume IS NOT DISTINCT FROM v.volume
))
ORDER BY v.url, v.as_of
ON CONFLICT (url, as_of) DO NOTHING
"""
_HISTORY_TEMPLATE = (
    "("
    + ", ".join(f"%s{_CASTS.get(c, '')}" for c in HISTORY_COLUMNS[:-1])
    + ", coalesce(%s::timestamptz, now()), %s::boolean)"
)


class PostgresQuotePipeline(PostgresUpsertPipeline):
    """Writes quotes to PostgreSQL when ``POSTGRES_DSN`` is set and the spider yields quotes.

    Tables, created on first use (as the product tables are):

    * ``quotes``: one row per ``url`` (primary key), the latest quote: typed
      columns ``symbol``, ``name``, ``exchange``, ``price`` (numeric),
      ``currency``, ``change`` (numeric), ``volume`` (bigint), ``market_cap``
      (numeric), ``as_of`` (timestamptz), the whole item as ``data`` (jsonb),
      ``first_seen`` (kept) and ``last_seen`` (the last write). A quote older
      than the row's (``as_of``) updates ``last_seen`` only.
    * ``quote_history``: ``(url, symbol, price, currency, volume, as_of,
      seen_at)``, one row per observation, unique on ``(url, as_of)``: a
      re-fetch of the same quote adds nothing; an observation at the fetch time
      (the page showed no time) only when its values changed (see
      :mod:`crawler.pipelines.quote_record`). ``seen_at``: the crawl time.

    One transaction per batch, rows sorted by url (no deadlocks between workers).
    Outages, refused rows, retries and batching are :class:`PostgresUpsertPipeline`'s.
    """

    item_kind: ClassVar[str] = QUOTE.name
    schema_sql: ClassVar[str] = SCHEMA_SQL

    def prepare(self, item: Any) -> QuoteRecord:
        return QuoteRecord.of(item, self.worker)

    @staticmethod
    def _upsert(cur: psycopg2.extensions.cursor, rows: list[Any]) -> None:
        plan = batch_plan(rows)
        execute_values(
            cur,
            _UPSERT,
            [record.row() for record in plan.latest],
            template=_TEMPLATE,
            page_size=len(plan.latest),
        )
        execute_values(
            cur,
            _HISTORY,
            [(*r.observation(), r.crawled_at, r.fetch_time) for r in plan.observations],
            template=_HISTORY_TEMPLATE,
            page_size=len(plan.observations),
        )
