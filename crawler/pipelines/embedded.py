"""Products kept in an embedded SQLite file when no database server is configured."""

from __future__ import annotations

import datetime as dt
import json
import logging
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from crawler.core import defaults
from crawler.core.items import OFFER_FIELDS
from crawler.pipelines.batching import BatchingStorePipeline
from crawler.pipelines.errors import ErrorKind
from crawler.pipelines.listed_record import (
    LISTING,
    PAGE,
    ListedRecord,
    observe,
    page_reading_is_new,
)
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

BUSY_TIMEOUT_SECONDS = 30.0

SCHEMA_SQL = """
CREATE TABLE IF NOT EXISTS products (
    url          TEXT PRIMARY KEY,
    name         TEXT NOT NULL,
    price        TEXT,
    currency     TEXT,
    availability TEXT,
    sku          TEXT,
    worker       TEXT,
    data         TEXT NOT NULL,
    first_seen   TEXT NOT NULL,
    last_seen    TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS product_price_history (
    id           INTEGER PRIMARY KEY,
    url          TEXT NOT NULL,
    price        TEXT,
    currency     TEXT,
    availability TEXT,
    worker       TEXT,
    seen_at      TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS product_price_history_url_seen_at
    ON product_price_history (url, seen_at);
"""
#: the history's columns added since its first version: (name, declaration), added to an
#: older file's table on first use (SQLite has no ADD COLUMN IF NOT EXISTS)
ADDED_HISTORY_COLUMNS = (("source", "TEXT NOT NULL DEFAULT 'page'"), ("listing_url", "TEXT"))

# The row's columns: crawler.core.items.COLUMNS, then data (see crawler.pipelines.product_record).
_COLUMNS = (*ROW_COLUMNS, "first_seen", "last_seen")
_HISTORY_COLUMNS = ("url", *OFFER_FIELDS, "worker", "seen_at", "source", "listing_url")
_UPDATES = "".join(f"\n    {column} = excluded.{column}," for column in ROW_COLUMNS[1:])

_SELECT_OFFER = f"SELECT {', '.join(OFFER_FIELDS)}, data FROM products WHERE url = ?"
_INSERT_LISTED = """
INSERT INTO products (url, name, price, currency, availability, worker, data, first_seen,
    last_seen)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
"""
_UPDATE_LISTED = """
UPDATE products SET price = ?, currency = ?, availability = ?, data = ?, last_seen = ?
WHERE url = ?
"""
_UPSERT = f"""
INSERT INTO products
    ({", ".join(_COLUMNS)})
VALUES ({", ".join("?" for _ in _COLUMNS)})
ON CONFLICT (url) DO UPDATE SET{_UPDATES}
    last_seen = excluded.last_seen
"""
_HISTORY = f"""
INSERT INTO product_price_history ({", ".join(_HISTORY_COLUMNS)})
VALUES ({", ".join("?" for _ in _HISTORY_COLUMNS)})
"""


def decimal_text(value: Decimal | None) -> str | None:
    """A price as exact decimal text, never in exponent form (``Decimal("1E+2")`` -> ``"100"``)."""
    return None if value is None else format(value, "f")


def _sqlite_value(value: Any) -> Any:
    """A column's value as SQLite stores it: the price as exact decimal text."""
    return decimal_text(value) if isinstance(value, Decimal) else value


@contextmanager
def write_transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """One ``BEGIN IMMEDIATE`` transaction around the block (the file's write lock taken
    first, see :class:`EmbeddedStorePipeline`): committed, or rolled back when it raises."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            try:
                conn.execute("ROLLBACK")
            except sqlite3.Error:
                logger.debug("ROLLBACK failed", exc_info=True)
        raise


class EmbeddedStorePipeline(BatchingStorePipeline):
    """Keeps products in a SQLite file when neither ``POSTGRES_DSN`` nor ``MONGO_URI`` is set.

    The file is ``EMBEDDED_STORE_PATH`` (default ``data/products.sqlite3``,
    relative to the working directory), created with its parent folders. It has
    the same tables as PostgreSQL (``products``, ``product_price_history``)
    with SQLite types: ``price`` is exact decimal TEXT (``"19.90"``; sort with
    ``CAST(price AS REAL)``), ``data`` is the item as JSON text (query it with
    ``json_extract``), times are ISO 8601 UTC text. The history's ``source`` and
    ``listing_url`` columns (listed products: :mod:`crawler.pipelines.listed_record`)
    are added to a file of an earlier version on first use.

    Several worker processes on one machine share the file safely: WAL journal
    (readers never block the writer), ``busy_timeout`` of 30 s, and each batch
    is one ``BEGIN IMMEDIATE`` transaction, which takes the write lock before
    reading the previous offers, so the history is right with concurrent
    writers. ``synchronous=FULL``: a committed batch survives a power cut.

    Outages: ``OperationalError`` (locked for longer than the busy timeout,
    disk full, I/O error). Refused data: ``IntegrityError``, ``DataError``,
    ``InterfaceError`` and encoding errors (e.g. a lone surrogate).
    """

    backend = "embedded"
    #: the tables this pipeline creates on first use
    schema_sql: ClassVar[str] = SCHEMA_SQL

    def __init__(self, crawler: Crawler, **kwargs: Any) -> None:
        super().__init__(crawler, **kwargs)
        configured = (
            crawler.settings.get("EMBEDDED_STORE_PATH", defaults.EMBEDDED_STORE_PATH)
            or defaults.EMBEDDED_STORE_PATH
        )
        self.path = Path(configured).expanduser().resolve()
        self.conn: sqlite3.Connection | None = None

    @classmethod
    def is_configured(cls, settings: Settings) -> bool:
        return not settings.get("POSTGRES_DSN", defaults.POSTGRES_DSN) and not settings.get(
            "MONGO_URI", defaults.MONGO_URI
        )

    def store_location(self) -> str:
        return f"sqlite:{self.path}"

    def connect(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(
            self.path,
            timeout=BUSY_TIMEOUT_SECONDS,
            isolation_level=None,  # transactions are explicit (BEGIN IMMEDIATE)
            check_same_thread=False,  # used by one worker thread at a time
        )
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_SECONDS * 1000)}")
            self._set_wal(conn)
            conn.execute("PRAGMA synchronous = FULL")
            conn.execute("BEGIN IMMEDIATE")
            try:
                for statement in self.schema_sql.split(";"):
                    if statement.strip():
                        conn.execute(statement)
                self._add_columns(conn)
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            if conn.in_transaction:
                conn.execute("COMMIT")
        except BaseException:
            conn.close()
            raise
        self.conn = conn

    def _add_columns(self, conn: sqlite3.Connection) -> None:
        """The history's columns a file of an earlier version lacks, added (a store of
        products only: a quote store's tables are others)."""
        if "product_price_history" not in self.schema_sql:
            return
        have = {row[1] for row in conn.execute("PRAGMA table_info(product_price_history)")}
        for name, declaration in ADDED_HISTORY_COLUMNS:
            if name not in have:
                conn.execute(f"ALTER TABLE product_price_history ADD COLUMN {name} {declaration}")

    @staticmethod
    def _set_wal(conn: sqlite3.Connection) -> None:
        # Switching a new file to WAL needs a moment alone with it: retry while
        # another process does the same.
        deadline = time.monotonic() + BUSY_TIMEOUT_SECONDS
        while True:
            try:
                mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
                break
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        if str(mode).lower() != "wal":
            logger.warning("SQLite store is in journal mode %s, not WAL", mode)

    def disconnect(self) -> None:
        conn, self.conn = self.conn, None
        if conn is not None:
            conn.close()

    def error_kind(self, exc: BaseException) -> ErrorKind | None:
        if isinstance(
            exc,
            (
                sqlite3.IntegrityError,
                sqlite3.DataError,
                sqlite3.InterfaceError,
                ValueError,
                OverflowError,
            ),
        ):
            return ErrorKind.DATA
        if isinstance(exc, sqlite3.OperationalError):
            return ErrorKind.OUTAGE
        return None

    def write_records(self, records: list[Any]) -> dict[str, str]:
        conn = self.conn
        assert conn is not None, "write_records() before connect()"
        now = dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds")
        products = [r for r in records if isinstance(r, ProductRecord)]
        with write_transaction(conn):
            for r in latest_by_url(products):
                old = conn.execute(_SELECT_OFFER, (r.url,)).fetchone()
                conn.execute(_UPSERT, (*map(_sqlite_value, r.row()), now, now))
                if (
                    old is None
                    or not r.same_offer(*old[:-1])
                    or page_reading_is_new(json.loads(old[-1]))
                ):
                    crawled = r.crawled_at
                    seen_at = crawled.isoformat(timespec="milliseconds") if crawled else now
                    offer = map(_sqlite_value, r.offer())
                    conn.execute(_HISTORY, (r.url, *offer, r.worker, seen_at, PAGE, None))
            for listed in records:
                if isinstance(listed, ListedRecord):
                    self._observe(conn, listed, now)
        return {}

    @staticmethod
    def _observe(conn: sqlite3.Connection, r: ListedRecord, now: str) -> None:
        """A listed product: an observation of its product's row
        (:func:`crawler.pipelines.listed_record.observe`)."""
        old = conn.execute(_SELECT_OFFER, (r.url,)).fetchone()
        stored = None  # the row's price (exact decimal TEXT) read back as a Decimal
        if old is not None:
            price_text, currency, availability, data_text = old
            amount = None if price_text is None else Decimal(price_text)
            stored = (amount, currency, availability, json.loads(data_text))
        seen = observe(r, stored)
        if seen is None:
            return
        price, data = decimal_text(seen.price), data_as_json(seen.data)
        if seen.new:
            conn.execute(_INSERT_LISTED, (r.url, r.name, price, seen.currency,
                                          seen.availability, r.worker, data, now, now))
        else:
            conn.execute(_UPDATE_LISTED, (price, seen.currency, seen.availability, data, now,
                                          r.url))
        if seen.history:
            when = r.seen_at
            seen_at = when.isoformat(timespec="milliseconds") if when else now
            conn.execute(_HISTORY, (r.url, price, seen.currency, seen.availability, r.worker,
                                    seen_at, LISTING, r.listing_url))
