"""Products upserted into PostgreSQL, with a price history."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, ClassVar

import psycopg2
import psycopg2.errors
import psycopg2.extensions
from psycopg2.extras import execute_values

from crawler.core import defaults
from crawler.core.config import redact_dsn
from crawler.core.items import OFFER_FIELDS
from crawler.pipelines.batching import BatchingStorePipeline
from crawler.pipelines.errors import ErrorKind
from crawler.pipelines.listed_record import LISTING, PAGE, ListedRecord, observe
from crawler.pipelines.product_record import (
    ROW_COLUMNS,
    ProductRecord,
    data_as_json,
    latest_by_url,
)

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.settings import Settings

logger = logging.getLogger(__name__)

# Any constant: serialises the CREATE TABLE IF NOT EXISTS of workers starting together.
SCHEMA_LOCK_ID = 0x70726F64  # "prod"

SCHEMA_SQL = """
CREATE TABLE IF NOT EXISTS products (
    url          text PRIMARY KEY,
    name         text NOT NULL,
    price        numeric,
    currency     text,
    availability text,
    sku          text,
    worker       text,
    data         jsonb NOT NULL,
    first_seen   timestamptz NOT NULL DEFAULT now(),
    last_seen    timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS product_price_history (
    id           bigserial PRIMARY KEY,
    url          text NOT NULL,
    price        numeric,
    currency     text,
    availability text,
    worker       text,
    seen_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS product_price_history_url_seen_at
    ON product_price_history (url, seen_at);
ALTER TABLE product_price_history ADD COLUMN IF NOT EXISTS source text NOT NULL DEFAULT 'page';
ALTER TABLE product_price_history ADD COLUMN IF NOT EXISTS listing_url text;
"""

# The row's columns (crawler.core.items.COLUMNS, then data), with the casts of their values.
_CASTS = {"price": "::numeric", "data": "::jsonb"}
_COLUMNS = ", ".join(ROW_COLUMNS)
_TEMPLATE = "(" + ", ".join(f"%s{_CASTS.get(column, '')}" for column in ROW_COLUMNS) + ")"
_OFFER = ", ".join(OFFER_FIELDS)
_UPDATES = "".join(f"\n    {column} = EXCLUDED.{column}," for column in ROW_COLUMNS[1:])
_INSERT_NEW = f"""
INSERT INTO products ({_COLUMNS}, first_seen, last_seen)
SELECT v.*, now(), now() FROM (VALUES %s) AS v({_COLUMNS}) ORDER BY v.url
ON CONFLICT (url) DO NOTHING
RETURNING url
"""
_LOCK_EXISTING = f"""
SELECT url, {_OFFER}, data->'reading'->>'source' FROM products
WHERE url = ANY(%s) ORDER BY url FOR UPDATE
"""
_LOCK_OBSERVED = f"""
SELECT url, {_OFFER}, data FROM products
WHERE url = ANY(%s) ORDER BY url FOR UPDATE
"""
_INSERT_LISTED = """
INSERT INTO products (url, name, price, currency, availability, worker, data, first_seen, last_seen)
VALUES (%s, %s, %s::numeric, %s, %s, %s, %s::jsonb, now(), now())
ON CONFLICT (url) DO NOTHING
"""
_UPDATE_LISTED = """
UPDATE products SET price = %s::numeric, currency = %s, availability = %s, data = %s::jsonb,
    last_seen = now()
WHERE url = %s
"""
_UPSERT = f"""
INSERT INTO products ({_COLUMNS}, first_seen, last_seen)
SELECT v.*, now(), now() FROM (VALUES %s) AS v({_COLUMNS}) ORDER BY v.url
ON CONFLICT (url) DO UPDATE SET{_UPDATES}
    last_seen = EXCLUDED.last_seen
"""
_HISTORY_COLUMNS = ("url", *OFFER_FIELDS, "worker", "source", "listing_url")
_HISTORY = f"""
INSERT INTO product_price_history ({", ".join(_HISTORY_COLUMNS)}, seen_at)
VALUES %s
"""
# seen_at: when the page was crawled (the item's crawled_at), else the write time
_HISTORY_TEMPLATE = (
    "("
    + ", ".join(f"%s{_CASTS.get(column, '')}" for column in _HISTORY_COLUMNS)
    + ", coalesce(%s::timestamptz, now()))"
)

# libpq options the pipeline sets unless the DSN sets them: fail fast, notice dead peers.
CONNECT_DEFAULTS: dict[str, Any] = {
    "connect_timeout": 10,
    "keepalives": 1,
    "keepalives_idle": 30,
    "keepalives_interval": 10,
    "keepalives_count": 3,
    "application_name": "ecommerce-crawler",
}
if psycopg2.__libpq_version__ >= 120000:
    CONNECT_DEFAULTS["tcp_user_timeout"] = 60_000  # ms: unacknowledged data on a dead link

DEADLOCK_RETRIES = 3


class PostgresUpsertPipeline(BatchingStorePipeline):
    """Writes products to PostgreSQL when ``POSTGRES_DSN`` is set (else ``NotConfigured``).

    Tables, created on first use (``CREATE TABLE IF NOT EXISTS`` under an
    advisory lock, so workers starting together do not collide):

    * ``products``: one row per ``url`` (primary key); typed columns ``name``,
      ``price`` (numeric, the exact ``Decimal``), ``currency``,
      ``availability``, ``sku``, ``worker``; the whole JSON-ready item as
      ``data`` (jsonb); ``first_seen`` (kept) and ``last_seen`` (updated).
    * ``product_price_history``: ``(url, price, currency, availability,
      worker, seen_at, source, listing_url)``, a row when a product is first seen and
      whenever a re-crawl sees a different price (compared as a number), currency or
      availability; ``seen_at`` is the crawl time (the item's ``crawled_at``);
      ``source``: ``page`` (the product page) or ``listing`` (a listed product, read
      on ``listing_url``; :mod:`crawler.pipelines.listed_record`), columns added to a
      table of an earlier version on first use. Index on ``(url, seen_at)``.

    Listed products (cards of listing pages) are observations of their products'
    rows, written after the batch's products (:func:`~crawler.pipelines.listed_record.observe`).

    One transaction per batch, with the rows sorted by url (no deadlocks
    between workers): ``INSERT ... ON CONFLICT DO NOTHING RETURNING url`` finds
    the new products; the others are locked with ``SELECT ... FOR UPDATE``,
    which reads their latest committed values, so two workers writing the same
    url at once record each change once; then ``INSERT ... ON CONFLICT (url) DO
    UPDATE`` and the history rows. A url appearing twice in a batch is written
    once (the last one). A deadlock or serialisation failure is retried at once
    (up to three times). All the rest is :class:`BatchingStorePipeline`.

    Outages: ``OperationalError`` and ``InterfaceError`` (refused, lost,
    timeout, ``AdminShutdown``). Refused data: ``DataError``,
    ``IntegrityError``, ``ProgramLimitExceeded`` (e.g. a url too long for the
    index) and the client-side ``ValueError`` (a NUL character in a string,
    text that cannot be encoded).

    Unless the DSN says otherwise, connections use ``connect_timeout=10`` and
    TCP keepalives (``CONNECT_DEFAULTS``) so a dead server is noticed.
    """

    backend = "postgres"
    #: the tables this pipeline creates on first use
    schema_sql: ClassVar[str] = SCHEMA_SQL

    def __init__(self, crawler: Crawler, **kwargs: Any) -> None:
        super().__init__(crawler, **kwargs)
        self.dsn: str = crawler.settings.get("POSTGRES_DSN", defaults.POSTGRES_DSN)
        self.conn: psycopg2.extensions.connection | None = None

    @classmethod
    def is_configured(cls, settings: Settings) -> bool:
        return bool(settings.get("POSTGRES_DSN", defaults.POSTGRES_DSN))

    def store_location(self) -> str:
        return redact_dsn(self.dsn)

    def connect(self) -> None:
        given = psycopg2.extensions.parse_dsn(self.dsn)
        options = {key: value for key, value in CONNECT_DEFAULTS.items() if key not in given}
        conn = psycopg2.connect(self.dsn, **options)
        try:
            with conn, conn.cursor() as cur:
                cur.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK_ID,))
                cur.execute(self.schema_sql)
        except BaseException:
            conn.close()
            raise
        self.conn = conn

    def disconnect(self) -> None:
        conn, self.conn = self.conn, None
        if conn is not None and not conn.closed:
            conn.close()

    def error_kind(self, exc: BaseException) -> ErrorKind | None:
        if isinstance(
            exc,
            (
                psycopg2.DataError,
                psycopg2.IntegrityError,
                psycopg2.errors.ProgramLimitExceeded,
                ValueError,
            ),
        ):
            return ErrorKind.DATA
        if isinstance(exc, (psycopg2.OperationalError, psycopg2.InterfaceError)):
            return ErrorKind.OUTAGE
        return None

    def write_records(self, records: list[Any]) -> dict[str, str]:
        assert self.conn is not None, "write_records() before connect()"
        for attempt in range(1, DEADLOCK_RETRIES + 1):
            try:
                with self.conn, self.conn.cursor() as cur:
                    self._upsert(cur, records)
                return {}
            except psycopg2.extensions.TransactionRollbackError:
                if attempt == DEADLOCK_RETRIES:
                    raise
                logger.debug("Deadlock or serialisation failure, writing the batch again")
        return {}  # pragma: no cover - the loop returns or raises

    @classmethod
    def _upsert(cls, cur: psycopg2.extensions.cursor, records: list[Any]) -> None:
        products = [r for r in records if isinstance(r, ProductRecord)]
        if products:
            cls._upsert_products(cur, products)
        listed = [r for r in records if isinstance(r, ListedRecord)]
        if listed:
            cls._observe_listed(cur, listed)

    @staticmethod
    def _observe_listed(cur: psycopg2.extensions.cursor, records: list[ListedRecord]) -> None:
        """Listed products: observations of their products' rows
        (:func:`crawler.pipelines.listed_record.observe`), one url at a time, in url order."""
        by_url: dict[str, list[ListedRecord]] = {}
        for record in records:
            by_url.setdefault(record.url, []).append(record)
        cur.execute(_LOCK_OBSERVED, (sorted(by_url),))
        stored = {url: (price, currency, availability, data) for url, price, currency,
                  availability, data in cur}
        history = []
        for url in sorted(by_url):
            for record in by_url[url]:
                seen = observe(record, stored.get(url))
                if seen is None:
                    continue
                data_json = data_as_json(seen.data)
                if seen.new:
                    cur.execute(_INSERT_LISTED, (url, record.name, seen.price, seen.currency,
                                                 seen.availability, record.worker, data_json))
                else:
                    cur.execute(_UPDATE_LISTED, (seen.price, seen.currency, seen.availability,
                                                 data_json, url))
                stored[url] = (seen.price, seen.currency, seen.availability, seen.data)
                if seen.history:
                    history.append((url, seen.price, seen.currency, seen.availability,
                                    record.worker, LISTING, record.listing_url,
                                    record.crawled_at))
        if history:
            execute_values(cur, _HISTORY, history, template=_HISTORY_TEMPLATE,
                           page_size=len(history))

    @staticmethod
    def _upsert_products(cur: psycopg2.extensions.cursor, records: list[Any]) -> None:
        rows: list[ProductRecord] = latest_by_url(records)
        values = [r.row() for r in rows]
        inserted = execute_values(
            cur, _INSERT_NEW, values, template=_TEMPLATE, page_size=len(values), fetch=True
        )
        new_urls = {url for (url,) in inserted}
        existing = [r for r in rows if r.url not in new_urls]
        changed = [r for r in rows if r.url in new_urls]
        listed_before: set[str] = set()  # rows whose latest reading was a listing's
        if existing:
            cur.execute(_LOCK_EXISTING, ([r.url for r in existing],))
            previous = {}
            for url, *offer, source in cur:
                previous[url] = tuple(offer)
                if source == LISTING:
                    listed_before.add(url)
            execute_values(
                cur,
                _UPSERT,
                [v for v in values if v[0] not in new_urls],
                template=_TEMPLATE,
                page_size=len(existing),
            )
            changed.extend(
                r
                for r in existing
                if r.url not in previous
                or not r.same_offer(*previous[r.url])
                or r.url in listed_before
            )
        if changed:
            execute_values(
                cur,
                _HISTORY,
                [(r.url, *r.offer(), r.worker, PAGE, None, r.crawled_at) for r in changed],
                template=_HISTORY_TEMPLATE,
                page_size=len(changed),
            )
