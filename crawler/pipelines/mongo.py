"""Products upserted into MongoDB, with a price history."""

from __future__ import annotations

import datetime as dt
import decimal
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import urlsplit

import bson.errors
import pymongo
import pymongo.errors
from bson import Decimal128, ObjectId
from bson.decimal128 import create_decimal128_context
from pymongo import ASCENDING, InsertOne, UpdateOne

from crawler.core import defaults
from crawler.core.config import redact_dsn
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
from crawler.pipelines.product_record import ProductRecord, latest_by_url

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.settings import Settings

logger = logging.getLogger(__name__)

DUPLICATE_KEY_CODES = (11000, 11001)
CONFLICT_ROUNDS = 5
_OFFER_PROJECTION = {"_id": 0, "url": 1, "reading": 1, **{name: 1 for name in OFFER_FIELDS}}


class WriteConflict(Exception):
    """Other workers kept changing the same products; the batch is retried later."""


def connect_mongo(uri: str) -> Any:
    """The default client: fails fast when the server is away, returns aware datetimes."""
    return pymongo.MongoClient(
        uri,
        serverSelectionTimeoutMS=10_000,
        connectTimeoutMS=10_000,
        socketTimeoutMS=60_000,
        tz_aware=True,
        appname="ecommerce-crawler",
    )


def to_decimal128(value: decimal.Decimal | None) -> Decimal128 | None:
    """A price as ``Decimal128`` (exact up to 34 significant digits, then rounded)."""
    if value is None:
        return None
    with decimal.localcontext(create_decimal128_context()) as context:
        return Decimal128(context.create_decimal(value))


class MongoUpsertPipeline(BatchingStorePipeline):
    """Writes products to MongoDB when ``MONGO_URI`` is set (else ``NotConfigured``).

    Database ``MONGO_DATABASE`` (default ``crawler``), collections:

    * ``products``: one document per ``url`` (unique index ``url_unique``,
      created when the pipeline connects); the item's fields, ``price`` as
      ``Decimal128`` (exact, and compared as a number by MongoDB), ``worker``,
      ``first_seen`` (set on insert only) and ``last_seen``;
    * ``price_history``: ``{url, price, currency, availability, worker,
      seen_at, source, listing_url}`` (``source``: ``page``, or ``listing`` for a
      listed product read on ``listing_url``: :mod:`crawler.pipelines.listed_record`),
      a document when a product is first seen and whenever a
      re-crawl sees a different price, currency or availability (``seen_at``:
      the crawl time, the item's ``crawled_at``); index on ``(url, seen_at)``.

    A batch is one unordered ``bulk_write``: ``InsertOne`` for urls not seen
    yet, and for the others ``UpdateOne`` filtered on the url *and* the offer
    read just before (``upsert=True``). When another worker changed the product
    in between, that row fails with a duplicate-key error instead of being
    written, and is read and written again: so each change is recorded once
    even with several workers on the same urls. A row MongoDB refuses for its
    data is kept in ``<spider>:invalid`` while the rest of the batch is stored;
    data the driver cannot encode (e.g. a lone surrogate) fails the whole
    bulk, which :class:`BatchingStorePipeline` then bisects. History documents
    get their ``_id`` before they are sent and are re-sent first on the next
    attempt if the connection drops between the two writes, so none is lost
    or doubled.

    Outages: ``ConnectionFailure`` (``AutoReconnect``, ``NetworkTimeout``,
    ``ServerSelectionTimeoutError``) and write-concern errors.

    The client comes from :attr:`client_factory` (``connect_mongo(uri)``); set
    it on a subclass to use another client, e.g. ``mongomock.MongoClient`` in
    tests.
    """

    backend = "mongo"
    client_factory: ClassVar[Callable[[str], Any]] = staticmethod(connect_mongo)

    def __init__(self, crawler: Crawler, **kwargs: Any) -> None:
        super().__init__(crawler, **kwargs)
        settings = crawler.settings
        self.uri: str = settings.get("MONGO_URI", defaults.MONGO_URI)
        self.database_name: str = (
            settings.get("MONGO_DATABASE", defaults.MONGO_DATABASE) or defaults.MONGO_DATABASE
        )
        self.client: Any = None
        self.products: Any = None
        self.history: Any = None
        self._history_backlog: list[dict[str, Any]] = []

    @classmethod
    def is_configured(cls, settings: Settings) -> bool:
        return bool(settings.get("MONGO_URI", defaults.MONGO_URI))

    def store_location(self) -> str:
        parts = urlsplit(redact_dsn(self.uri))
        return f"{parts.scheme}://{parts.netloc}/{self.database_name}"

    def connect(self) -> None:
        client = type(self).client_factory(self.uri)
        try:
            database = client[self.database_name]
            products, history = database["products"], database["price_history"]
            products.create_index([("url", ASCENDING)], unique=True, name="url_unique")
            history.create_index([("url", ASCENDING), ("seen_at", ASCENDING)], name="url_seen_at")
        except BaseException:
            client.close()
            raise
        self.client, self.products, self.history = client, products, history

    def disconnect(self) -> None:
        client, self.client = self.client, None
        self.products = self.history = None
        if client is not None:
            client.close()

    def error_kind(self, exc: BaseException) -> ErrorKind | None:
        if isinstance(exc, (bson.errors.BSONError, ValueError, OverflowError)):
            return ErrorKind.DATA  # InvalidDocument, DocumentTooLarge, encoding errors
        if isinstance(
            exc, (pymongo.errors.ConnectionFailure, pymongo.errors.WriteConcernError, WriteConflict)
        ):
            return ErrorKind.OUTAGE
        return None

    def write_records(self, records: list[Any]) -> dict[str, str]:
        assert self.products is not None, "write_records() before connect()"
        self._send_history_backlog()
        now = dt.datetime.now(dt.UTC)
        listed = [r for r in records if isinstance(r, ListedRecord)]
        records = [r for r in records if isinstance(r, ProductRecord)]
        todo = {record.url: record for record in latest_by_url(records)}
        refused: dict[str, str] = {}
        history: list[dict[str, Any]] = []
        for _ in range(CONFLICT_ROUNDS):
            if not todo:
                break
            todo = self._write_round(todo, now, refused, history)
        for record in sorted(listed, key=lambda r: r.url):
            self._observe(record, now, history)
        if history:
            self._history_backlog = history
            self._send_history_backlog()
        if todo:
            raise WriteConflict(f"{len(todo)} products changed by other workers meanwhile")
        return refused

    def _write_round(
        self,
        todo: dict[str, ProductRecord],
        now: dt.datetime,
        refused: dict[str, str],
        history: list[dict[str, Any]],
    ) -> dict[str, ProductRecord]:
        """One bulk write of ``todo``; returns the rows another worker changed meanwhile."""
        urls = sorted(todo)
        previous = {
            doc["url"]: doc for doc in self.products.find({"url": {"$in": urls}}, _OFFER_PROJECTION)
        }
        operations: list[Any] = []
        for url in urls:
            document = self._document(todo[url], now)
            old = previous.get(url)
            if old is None:
                operations.append(InsertOne({"url": url, **document, "first_seen": now}))
            else:
                expected = {key: old.get(key) for key in OFFER_FIELDS}
                operations.append(
                    UpdateOne(
                        {"url": url, **expected},
                        {
                            "$set": document,
                            "$setOnInsert": {"first_seen": now},
                            # the page's item replaces a listing's reading (listed_record)
                            "$unset": {"source": "", "reading": ""},
                        },
                        upsert=True,
                    )
                )
        errors = bulk_write_errors(self.products, operations)
        again: dict[str, ProductRecord] = {}
        for index, url in enumerate(urls):
            record, error = todo[url], errors.get(index)
            if error is None:
                old = previous.get(url)
                if (
                    old is None
                    or not record.same_offer(*_offer(old))
                    or page_reading_is_new(old)
                ):
                    history.append(self._history_document(record, now))
            elif error.get("code") in DUPLICATE_KEY_CODES:
                again[url] = record
            else:
                refused[url] = refusal(error)
        return again

    def _observe(
        self, record: ListedRecord, now: dt.datetime, history: list[dict[str, Any]]
    ) -> None:
        """A listed product: an observation of its product's document
        (:func:`crawler.pipelines.listed_record.observe`)."""
        old = self.products.find_one({"url": record.url}, {"_id": 0, "first_seen": 0})
        stored = None if old is None else (*_offer(old), _plain(old))
        seen = observe(record, stored)
        if seen is None:
            return
        document = {key: value for key, value in seen.data.items() if key != "url"}
        document.update(price=to_decimal128(seen.price), last_seen=now)
        document.setdefault("worker", record.worker)
        self.products.update_one(
            {"url": record.url},
            {"$set": document, "$setOnInsert": {"first_seen": now}},
            upsert=True,
        )
        if seen.history:
            history.append(
                {
                    "_id": ObjectId(),
                    "url": record.url,
                    "price": to_decimal128(seen.price),
                    "currency": seen.currency,
                    "availability": seen.availability,
                    "worker": record.worker,
                    "seen_at": record.seen_at or now,
                    "source": LISTING,
                    "listing_url": record.listing_url,
                }
            )

    def _send_history_backlog(self) -> None:
        if not self._history_backlog:
            return
        try:
            self.history.insert_many(self._history_backlog, ordered=False)
        except pymongo.errors.BulkWriteError as exc:
            details = exc.details or {}
            codes = {error.get("code") for error in details.get("writeErrors", [])}
            if details.get("writeConcernErrors") or not codes <= set(DUPLICATE_KEY_CODES):
                raise
            # duplicate _id: sent already by the attempt that lost its connection
        self._history_backlog = []

    @staticmethod
    def _document(record: ProductRecord, now: dt.datetime) -> dict[str, Any]:
        document = {key: value for key, value in record.data.items() if key != "url"}
        document["price"] = to_decimal128(record.price)
        document["worker"] = record.worker
        document["last_seen"] = now
        return document

    @staticmethod
    def _history_document(record: ProductRecord, now: dt.datetime) -> dict[str, Any]:
        offer = {
            name: to_decimal128(value) if isinstance(value, decimal.Decimal) else value
            for name, value in zip(OFFER_FIELDS, record.offer(), strict=True)
        }
        return {
            "_id": ObjectId(),
            "url": record.url,
            **offer,  # price (as Decimal128), currency, availability
            "worker": record.worker,
            "seen_at": record.crawled_at or now,
            "source": PAGE,
        }


def bulk_write_errors(collection: Any, operations: list[Any]) -> dict[int, dict[str, Any]]:
    """An unordered bulk write of ``operations``: the errors of the operations that
    failed, by their index (a duplicate key: another worker inserted meanwhile; else a
    refused document). A write concern error raises: an outage, the batch is retried."""
    try:
        collection.bulk_write(operations, ordered=False)
    except pymongo.errors.BulkWriteError as exc:
        details = exc.details or {}
        if details.get("writeConcernErrors"):
            raise pymongo.errors.WriteConcernError(str(details["writeConcernErrors"])) from exc
        return {error["index"]: error for error in details.get("writeErrors", [])}
    return {}


def refusal(error: dict[str, Any]) -> str:
    """The reason of a document MongoDB refused (a dead letter's)."""
    return f"MongoDB refused the document: {error.get('errmsg', error)}"


def _plain(document: dict[str, Any]) -> dict[str, Any]:
    """A stored document as the item's data (``Decimal128`` as float, as in ``data``)."""
    return {
        k: float(v.to_decimal()) if isinstance(v, Decimal128) else v for k, v in document.items()
    }


def _offer(document: dict[str, Any]) -> tuple[Any, ...]:
    """The stored offer (values of ``OFFER_FIELDS``), ``Decimal128`` read as ``Decimal``."""
    values = (document.get(name) for name in OFFER_FIELDS)
    return tuple(v.to_decimal() if isinstance(v, Decimal128) else v for v in values)
