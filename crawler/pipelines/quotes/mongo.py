"""Quotes upserted into MongoDB, with their history of observations."""

from __future__ import annotations

import datetime as dt
from typing import Any, ClassVar

from bson import Decimal128, ObjectId
from pymongo import ASCENDING, DESCENDING, InsertOne, UpdateOne

from crawler.core.itemkinds import QUOTE
from crawler.pipelines.mongo import (
    CONFLICT_ROUNDS,
    DUPLICATE_KEY_CODES,
    MongoUpsertPipeline,
    WriteConflict,
    bulk_write_errors,
    refusal,
    to_decimal128,
)
from crawler.pipelines.quote_record import QuoteRecord, batch_plan, from_table, replaces

_MISSING = object()


def _utc(value: Any) -> dt.datetime | None:
    if not isinstance(value, dt.datetime):
        return None
    return value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value.astimezone(dt.UTC)


def _number(value: Any) -> Any:
    return value.to_decimal() if isinstance(value, Decimal128) else value


class MongoQuotePipeline(MongoUpsertPipeline):
    """Writes quotes to MongoDB when ``MONGO_URI`` is set and the spider yields quotes.

    Database ``MONGO_DATABASE``, collections:

    * ``quotes``: one document per ``url`` (unique index ``url_unique``), the
      latest quote: the item's fields, ``price``, ``change`` and ``market_cap``
      as ``Decimal128``, ``as_of`` as a date, ``first_seen`` (on insert) and
      ``last_seen``. A quote older than the document's (``as_of``) updates
      ``last_seen`` only. The update is filtered on the ``as_of`` read just
      before, so a worker that wrote meanwhile makes the row be read and
      written again (as for products);
    * ``quote_history``: ``{url, symbol, price, currency, volume, as_of,
      seen_at}``, unique index on ``(url, as_of)``: one document per
      observation; a duplicate is ignored. An observation at the fetch time
      (the page showed no time) is kept only when it differs from the url's
      latest one.
    """

    item_kind: ClassVar[str] = QUOTE.name

    def connect(self) -> None:
        client = type(self).client_factory(self.uri)
        try:
            database = client[self.database_name]
            quotes, history = database["quotes"], database["quote_history"]
            quotes.create_index([("url", ASCENDING)], unique=True, name="url_unique")
            history.create_index(
                [("url", ASCENDING), ("as_of", ASCENDING)], unique=True, name="url_as_of_unique"
            )
        except BaseException:
            client.close()
            raise
        self.client, self.products, self.history = client, quotes, history

    def prepare(self, item: Any) -> QuoteRecord:
        return QuoteRecord.of(item, self.worker)

    def write_records(self, records: list[Any]) -> dict[str, str]:
        assert self.products is not None, "write_records() before connect()"
        self._send_history_backlog()
        now = dt.datetime.now(dt.UTC)
        plan = batch_plan(records)
        refused: dict[str, str] = {}
        todo = {record.url: record for record in plan.latest}
        for _ in range(CONFLICT_ROUNDS):
            if not todo:
                break
            todo = self._write_round(todo, now, refused, [])
        if todo:
            raise WriteConflict(f"{len(todo)} quotes changed by other workers meanwhile")
        history = [
            self._observation(record, now)
            for record in plan.observations
            if record.url not in refused and self._is_new(record)
        ]
        if history:
            self._history_backlog = history
            self._send_history_backlog()
        return refused

    def _is_new(self, record: QuoteRecord) -> bool:
        if not record.fetch_time:
            return True  # (url, as_of) once: the unique index decides
        latest = self.history.find_one({"url": record.url}, sort=[("as_of", DESCENDING)])
        if latest is None:
            return True
        values = (_number(latest.get("price")), latest.get("currency"), latest.get("volume"))
        return not record.same_values(*values)

    def _write_round(
        self,
        todo: dict[str, Any],
        now: dt.datetime,
        refused: dict[str, str],
        history: list[dict[str, Any]],
    ) -> dict[str, Any]:
        """One bulk write of ``todo``; returns the quotes another worker changed meanwhile."""
        urls = sorted(todo)
        found = list(self.products.find(
            {"url": {"$in": urls}}, {"_id": 0, "url": 1, "as_of": 1, "provenance": 1}
        ))
        previous = {doc["url"]: doc.get("as_of") for doc in found}
        tables = {doc["url"] for doc in found if from_table(doc)}
        operations: list[Any] = []
        for url in urls:
            record: QuoteRecord = todo[url]
            document = self._document(record, now)
            old = previous.get(url, _MISSING)
            if old is _MISSING:
                operations.append(InsertOne({"url": url, **document, "first_seen": now}))
                continue
            old_time = _utc(old)
            if old_time is not None and not replaces(record, old_time, url in tables):
                # an older quote than the stored one (or a table's row of the time of a
                # page's reading): it was seen, nothing more
                operations.append(UpdateOne({"url": url}, {"$set": {"last_seen": now}}))
                continue
            operations.append(
                UpdateOne(
                    {"url": url, "as_of": old},
                    {"$set": document, "$setOnInsert": {"first_seen": now}},
                    upsert=True,
                )
            )
        errors = bulk_write_errors(self.products, operations)
        again: dict[str, Any] = {}
        for index, url in enumerate(urls):
            error = errors.get(index)
            if error is None:
                continue
            if error.get("code") in DUPLICATE_KEY_CODES:
                again[url] = todo[url]
            else:
                refused[url] = refusal(error)
        return again

    @staticmethod
    def _document(record: QuoteRecord, now: dt.datetime) -> dict[str, Any]:  # type: ignore[override]
        document = {key: value for key, value in record.data.items() if key != "url"}
        document["price"] = to_decimal128(record.price)
        document["change"] = to_decimal128(record.change)
        document["market_cap"] = to_decimal128(record.market_cap)
        document["volume"] = record.volume
        document["as_of"] = record.as_of
        document["last_seen"] = now
        return document

    @staticmethod
    def _observation(record: QuoteRecord, now: dt.datetime) -> dict[str, Any]:
        return {
            "_id": ObjectId(),
            "url": record.url,
            "symbol": record.symbol,
            "price": to_decimal128(record.price),
            "currency": record.currency,
            "volume": record.volume,
            "as_of": record.as_of,
            "seen_at": record.crawled_at or now,
        }
