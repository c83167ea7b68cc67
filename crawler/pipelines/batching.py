"""The mechanics every storage pipeline shares: batching, retries, backpressure, signals.

A backend (:mod:`~crawler.pipelines.postgres`, :mod:`~crawler.pipelines.mongo`,
:mod:`~crawler.pipelines.embedded`) only says how to connect, how to write a
list of :class:`ProductRecord` in one transaction, and which of its errors
mean "the database is away" (:attr:`ErrorKind.OUTAGE`) and which mean "this
data is refused" (:attr:`ErrorKind.DATA`). Everything else lives here, once.
"""

from __future__ import annotations

import datetime as dt
import enum
import json
import logging
import math
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any, ClassVar

from itemadapter import ItemAdapter
from scrapy.exceptions import NotConfigured
from scrapy.utils.asyncio import create_looping_call, run_in_thread, sleep
from scrapy.utils.defer import deferred_from_coro, maybe_deferred_to_future
from scrapy_redis.connection import get_redis_from_settings

from crawler.config import worker_id
from crawler.flow import FlowControl
from crawler.keys import CrawlKeys
from crawler.pipelines.rejects import RejectedItemKeeper
from crawler.schema import ValidationProblem, item_to_dict
from crawler.signals import items_stored

if TYPE_CHECKING:
    import redis
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.settings import Settings
    from twisted.internet.defer import Deferred

logger = logging.getLogger(__name__)


class ErrorKind(enum.Enum):
    OUTAGE = "outage"  # the store is away: keep the batch, retry later
    DATA = "data"  # the store refuses this data: find the bad rows, keep the rest


class RowRejected(Exception):
    """An item that cannot be stored as it is (bad data)."""


class StoreUnavailable(Exception):
    """The store cannot be reached (or failed in an unexpected way); the batch is kept."""

    def __init__(self, message: str, *, unexpected: bool = False) -> None:
        super().__init__(message)
        self.unexpected = unexpected


@dataclass(frozen=True)
class ProductRecord:
    """An item as the stores write it: typed columns plus the whole JSON-ready item."""

    url: str
    name: str
    price: Decimal | None
    currency: str | None
    availability: str | None
    sku: str | None
    worker: str
    data: dict[str, Any]
    data_json: str

    def same_offer(self, price: Any, currency: Any, availability: Any) -> bool:
        """Whether price (compared as a number), currency and availability are unchanged."""
        if (price is None) != (self.price is None):
            return False
        if price is not None and Decimal(str(price)) != self.price:
            return False
        return bool(currency == self.currency and availability == self.availability)

    @property
    def crawled_at(self) -> dt.datetime | None:
        """When the page was fetched (the item's ``crawled_at``, UTC), if it says."""
        value = self.data.get("crawled_at")
        if not isinstance(value, str):
            return None
        try:
            when = dt.datetime.fromisoformat(value)
        except ValueError:
            return None
        return when.replace(tzinfo=dt.UTC) if when.tzinfo is None else when.astimezone(dt.UTC)


@dataclass
class BatchResult:
    """What became of a batch: positions (in the batch) stored, and rejected with a reason."""

    stored: list[int] = field(default_factory=list)
    rejected: list[tuple[int, str]] = field(default_factory=list)
    seconds: float = 0.0  # how long the successful write took


def describe_error(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    text = lines[0] if lines else ""
    if len(text) > 200:
        text = text[:197] + "..."
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def exact_price(value: Any) -> Decimal | None:
    """The price as an exact ``Decimal`` (``None`` stays ``None``); raises :class:`RowRejected`."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise RowRejected(f"price is not a number: {value!r}")
    try:
        if isinstance(value, Decimal):
            price = value
        elif isinstance(value, int):
            price = Decimal(value)
        elif isinstance(value, float):
            price = Decimal(repr(value)) if math.isfinite(value) else Decimal("NaN")
        elif isinstance(value, str):
            price = Decimal(value.strip())
        else:
            raise RowRejected(f"price is not a number: {value!r}")
    except InvalidOperation:
        raise RowRejected(f"price is not a number: {value!r}") from None
    if not price.is_finite():
        raise RowRejected(f"price is not a finite number: {value!r}")
    return price


def _text(value: Any) -> str | None:
    return value if value is None or isinstance(value, str) else str(value)


def latest_by_url(records: Sequence[ProductRecord]) -> list[ProductRecord]:
    """One record per url (the last one wins, as the latest crawl), sorted by url.

    An upsert cannot touch the same row twice in one statement, and writing rows
    in one order everywhere keeps concurrent workers from deadlocking.
    """
    latest = {record.url: record for record in records}
    return [latest[url] for url in sorted(latest)]


class BatchingStorePipeline:
    """Base of the storage pipelines: writes items in batches, off the reactor thread.

    ``process_item`` appends the item to a buffer and returns it at once. A
    batch of ``STORE_BATCH_SIZE`` items is written as soon as it is full, and
    whatever waits is written every ``STORE_FLUSH_INTERVAL`` seconds (``0``
    disables the timer: only full batches and the final flush). One batch is
    written at a time, in a thread, so the crawl never waits on the database.

    After a batch is committed the pipeline, from the reactor thread:

    * sends :data:`crawler.signals.items_stored` with ``items`` = the item
      objects exactly as they were passed to ``process_item``, ``spider``,
      ``store`` = :attr:`backend` and ``seconds`` (how long the write took);
      the lease tracker (to which ``from_crawler`` registers the pipeline, see
      ``LeaseTracker.register_store``) acknowledges their requests only once
      every registered store sent it, not when the item leaves the pipelines. Items the database
      refused (see below) are included: they are kept in Redis, so their
      requests are done too;
    * adds the count to ``HINCRBY <spider>:stats items_stored`` and to the
      crawl stats ``store/items_stored``.

    **Database away** (connection refused or lost, timeout, server shutting
    down): the batch is kept and retried with exponential backoff from
    ``STORE_RETRY_INITIAL_DELAY`` to ``STORE_RETRY_MAX_DELAY`` seconds,
    reconnecting each time. One WARNING is logged when an outage starts
    (``<backend> unreachable ...``) and one INFO line when it is over
    (``<backend> reachable again ...``). Items keep being buffered; when more
    than ``STORE_MAX_PENDING`` wait (``0``: no limit), the pipeline holds the
    flow (:class:`crawler.flow.FlowControl`, reason ``storage backlog:
    <backend> unreachable``) so the worker takes no new requests, and releases
    it once fewer than half that number wait. No item is ever dropped because
    the database is away. An error the pipeline does not recognise is treated
    the same way (kept, retried), and logged at ERROR with its traceback once.

    **Rows the database refuses** (bad data, e.g. invalid text): the batch is
    split in halves until the bad rows are alone; every good row is stored,
    every bad one is kept in ``<spider>:invalid`` with ``{"field": null,
    "message": "storage rejected: ..."}`` and counted in ``items_invalid``
    (crawl stats ``store/items_rejected``).

    **Closing**: everything buffered is written; if the database is still away
    the pipeline keeps retrying for up to ``STORE_CLOSE_TIMEOUT`` seconds, then
    logs at ERROR how many items could not be written. Their requests were not
    acknowledged, so the lease mechanism crawls them again: nothing is lost.

    Crawl stats: ``store/location``, ``store/items_stored``,
    ``store/items_rejected``, ``store/batches``, ``store/outages``,
    ``store/retries``, ``store/flow_holds``, ``store/items_unwritten``.

    Settings: ``STORE_BATCH_SIZE`` (100), ``STORE_FLUSH_INTERVAL`` (1.0),
    ``STORE_MAX_PENDING`` (5000), ``STORE_RETRY_INITIAL_DELAY`` (0.5),
    ``STORE_RETRY_MAX_DELAY`` (30.0), ``STORE_CLOSE_TIMEOUT`` (60),
    ``VALIDATION_KEEP_INVALID`` (True), ``WORKER_ID``, ``REDIS_URL``.

    Subclasses implement, all blocking and called from a worker thread (one at a
    time): :meth:`is_configured`, :meth:`store_location`, :meth:`connect`,
    :meth:`disconnect`, :meth:`write_records`, :meth:`error_kind`.
    :meth:`store_batch` is the whole synchronous write of a list of items, usable
    on its own (tests, tools).
    """

    backend: ClassVar[str] = "store"

    def __init__(self, crawler: Crawler, server: redis.Redis | None = None) -> None:
        settings = crawler.settings
        self.crawler = crawler
        self.stats = crawler.stats
        self.batch_size = max(1, settings.getint("STORE_BATCH_SIZE", 100))
        self.flush_interval = settings.getfloat("STORE_FLUSH_INTERVAL", 1.0)
        self.max_pending = settings.getint("STORE_MAX_PENDING", 5000)
        self.retry_initial_delay = max(0.01, settings.getfloat("STORE_RETRY_INITIAL_DELAY", 0.5))
        self.retry_max_delay = max(
            self.retry_initial_delay, settings.getfloat("STORE_RETRY_MAX_DELAY", 30.0)
        )
        self.close_timeout = settings.getfloat("STORE_CLOSE_TIMEOUT", 60.0)
        self.keep_invalid = settings.getbool("VALIDATION_KEEP_INVALID", True)
        self.worker = worker_id(settings)
        self.flow = FlowControl.of(crawler)
        self.hold_reason = f"storage backlog: {self.backend} unreachable"
        self.server = server
        self._own_server = server is None
        self.spider: Spider | None = None
        self.keeper: RejectedItemKeeper | None = None
        self._connected = False
        self._pending: deque[Any] = deque()
        self._writing = False
        self._writer: Deferred[None] | None = None
        self._timer: Any = None
        self._outage_since: float | None = None
        self._holding = False
        self._closing = False
        self._deadline = 0.0

    # --- to implement by each backend (blocking) -------------------------------------

    @classmethod
    def is_configured(cls, settings: Settings) -> bool:
        raise NotImplementedError

    def store_location(self) -> str:
        """Where the products go, without secrets (published in the worker's record)."""
        raise NotImplementedError

    def connect(self) -> None:
        """Open the connection and create the tables or indexes if they do not exist."""
        raise NotImplementedError

    def disconnect(self) -> None:
        """Close the connection; never raises."""
        raise NotImplementedError

    def write_records(self, records: list[ProductRecord]) -> dict[str, str]:
        """Write the records in one transaction (or one acknowledged bulk write).

        Returns the urls the store refused row by row, with the reason (a store
        that refuses whole statements raises instead and is bisected). Must
        leave no transaction open when it raises.
        """
        raise NotImplementedError

    def error_kind(self, exc: BaseException) -> ErrorKind | None:
        """``OUTAGE``, ``DATA``, or ``None`` when the error is not recognised."""
        raise NotImplementedError

    # --- Scrapy component ------------------------------------------------------------

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> BatchingStorePipeline:
        if not cls.is_configured(crawler.settings):
            # No message: Scrapy would log a WARNING for a store that is simply not chosen.
            raise NotConfigured
        pipeline = cls(crawler)
        pipeline._register_with_lease_tracker()
        return pipeline

    def _register_with_lease_tracker(self) -> None:
        """Tell the lease tracker (when enabled) that requests wait for ``items_stored``."""
        from crawler.leasing.tracker import LeaseTracker

        try:
            tracker = LeaseTracker.of(self.crawler)
        except RuntimeError:
            return  # no lease tracking in this crawl
        tracker.register_store(self.backend)

    async def open_spider(self, spider: Spider | None = None) -> None:
        self.spider = spider or self.crawler.spider
        assert self.spider is not None, "open_spider() needs the crawler's spider"
        if self.server is None:
            self.server = get_redis_from_settings(self.crawler.settings)
        self.keeper = RejectedItemKeeper(
            self.server, CrawlKeys(self.spider.name), self.worker, keep=self.keep_invalid
        )
        location = self.store_location()
        self.stats.set_value("store/location", location)
        logger.info("Storing products in %s", location)
        await run_in_thread(self._connect_at_start)
        if self.flush_interval > 0:
            self._timer = create_looping_call(self._start_writer, True)
            self._timer.start(self.flush_interval, now=False)

    def process_item(self, item: Any) -> Any:
        self._pending.append(item)
        if len(self._pending) >= self.batch_size:
            self._start_writer()
        if self.max_pending > 0 and not self._holding and len(self._pending) > self.max_pending:
            self._holding = True
            self.stats.inc_value("store/flow_holds")
            self.flow.hold(self.hold_reason)
        return item

    async def close_spider(self, spider: Spider | None = None) -> None:
        if self._timer is not None and self._timer.running:
            self._timer.stop()
        self._closing = True
        self._deadline = time.monotonic() + max(0.0, self.close_timeout)
        self._start_writer(True)
        while self._writer is not None and not self._writer.called:
            await maybe_deferred_to_future(self._writer)
        if self._pending:
            left = len(self._pending)
            self.stats.set_value("store/items_unwritten", left)
            logger.error(
                "%d items could not be written to %s (%s) before closing "
                "(STORE_CLOSE_TIMEOUT=%ss); their requests were not acknowledged "
                "and will be crawled again",
                left,
                self.backend,
                self.store_location(),
                self.close_timeout,
            )
        self._release_flow(force=True)
        await run_in_thread(self._disconnect)
        if self.server is not None and self._own_server:
            self.server.close()
            self.server = None

    @property
    def pending_count(self) -> int:
        """Items buffered and not yet written."""
        return len(self._pending)

    # --- synchronous write of one batch ----------------------------------------------

    def prepare(self, item: Any) -> ProductRecord:
        """The record of one item; raises :class:`RowRejected` for data no store accepts."""
        try:
            data = item_to_dict(item)
        except Exception as exc:  # noqa: BLE001 - whatever it is, it cannot be stored
            raise RowRejected(f"not an item: {describe_error(exc)}") from exc
        raw = item if isinstance(item, Mapping) else ItemAdapter(item)
        url, name = data.get("url"), data.get("name")
        if not isinstance(url, str) or not url:
            raise RowRejected("no url")
        if not isinstance(name, str) or not name:
            raise RowRejected("no name")
        try:
            data_json = json.dumps(data, ensure_ascii=False, allow_nan=False, default=str)
        except ValueError as exc:
            raise RowRejected(f"not JSON: {exc}") from exc
        return ProductRecord(
            url=url,
            name=name,
            price=exact_price(raw.get("price")),
            currency=_text(data.get("currency")),
            availability=_text(data.get("availability")),
            sku=_text(data.get("sku")),
            worker=_text(data.get("worker")) or self.worker,
            data=data,
            data_json=data_json,
        )

    def store_batch(self, items: Sequence[Any]) -> BatchResult:
        """Write ``items`` now (blocking); good rows are committed whatever the bad ones do.

        Raises :class:`StoreUnavailable` when the store is away: nothing of the
        batch can be counted as written then (a retry writes it again, which the
        upserts make harmless).
        """
        rejected: dict[int, str] = {}
        records: list[tuple[int, ProductRecord]] = []
        for position, item in enumerate(items):
            try:
                records.append((position, self.prepare(item)))
            except RowRejected as exc:
                rejected[position] = str(exc)
        self._ensure_connected()
        self._write_bisecting(records, rejected)
        stored = [position for position in range(len(items)) if position not in rejected]
        return BatchResult(stored=stored, rejected=sorted(rejected.items()))

    def _ensure_connected(self) -> None:
        if self._connected:
            return
        try:
            self.connect()
        except Exception as exc:
            self._disconnect()
            raise StoreUnavailable(
                describe_error(exc), unexpected=self.error_kind(exc) is not ErrorKind.OUTAGE
            ) from exc
        self._connected = True

    def _write_bisecting(
        self, records: list[tuple[int, ProductRecord]], rejected: dict[int, str]
    ) -> None:
        if not records:
            return
        try:
            refused = self.write_records([record for _, record in records])
        except Exception as exc:
            kind = self.error_kind(exc)
            if kind is ErrorKind.DATA:
                if len(records) == 1:
                    rejected[records[0][0]] = describe_error(exc)
                    return
                middle = len(records) // 2
                self._write_bisecting(records[:middle], rejected)
                self._write_bisecting(records[middle:], rejected)
                return
            self._disconnect()
            raise StoreUnavailable(describe_error(exc), unexpected=kind is None) from exc
        for position, record in records:
            if record.url in refused:
                rejected[position] = refused[record.url]

    def _disconnect(self) -> None:
        self._connected = False
        try:
            self.disconnect()
        except Exception:  # noqa: BLE001 - a dead connection may fail to close
            logger.debug("Error closing the %s connection", self.backend, exc_info=True)

    def _connect_at_start(self) -> None:
        try:
            self._ensure_connected()
        except StoreUnavailable as exc:
            logger.warning(
                "%s not reachable at start-up (%s); items will wait and be written once it is",
                self.backend,
                exc,
            )

    def _write_and_count(self, items: list[Any]) -> BatchResult:
        """Thread job: write one batch, then count it and keep its rejected rows in Redis."""
        result = self.store_batch(items)
        assert self.keeper is not None
        if result.stored:
            try:
                self.keeper.server.hincrby(
                    self.keeper.keys.stats, "items_stored", len(result.stored)
                )
            except Exception as exc:  # noqa: BLE001 - a lost count must not lose the batch
                logger.warning(
                    "Could not count %d stored items in Redis: %s", len(result.stored), exc
                )
        if result.rejected:
            self.keeper.keep_all(
                [
                    (items[position], [ValidationProblem(None, f"storage rejected: {reason}")])
                    for position, reason in result.rejected
                ]
            )
        return result

    # --- the writer: one at a time, on the reactor thread ----------------------------

    def _start_writer(self, force: bool = False) -> None:
        if self._writing or not self._pending:
            return
        if not force and len(self._pending) < self.batch_size:
            return
        self._writing = True
        writer = deferred_from_coro(self._write_pending(force))
        self._writer = None if writer.called else writer

    async def _write_pending(self, force: bool) -> None:
        try:
            while self._pending:
                if not (force or self._closing) and len(self._pending) < self.batch_size:
                    break
                count = min(self.batch_size, len(self._pending))
                batch = [self._pending[i] for i in range(count)]
                result = await self._write_until_done(batch)
                if result is None:
                    break
                for _ in batch:
                    self._pending.popleft()
                self._batch_written(batch, result)
                self._release_flow()
        except Exception:
            logger.exception("Unexpected error while writing to %s", self.backend)
        finally:
            self._writing = False

    async def _write_until_done(self, batch: list[Any]) -> BatchResult | None:
        """The batch's result, retrying while the store is away (``None``: closing, out of time)."""
        delay = self.retry_initial_delay
        while True:
            started = time.monotonic()
            try:
                result = await run_in_thread(self._write_and_count, batch)
            except StoreUnavailable as exc:
                self._outage(exc)
                if self._closing and time.monotonic() >= self._deadline:
                    return None
                await self._backoff(delay)
                delay = min(delay * 2, self.retry_max_delay)
                continue
            self._recovered()
            result.seconds = time.monotonic() - started
            return result

    async def _backoff(self, seconds: float) -> None:
        """Sleep ``seconds``, in short steps: closing cuts it short (retry now, or give up)."""
        end = time.monotonic() + seconds
        closing_before = self._closing
        while (left := end - time.monotonic()) > 0:
            if self._closing:
                if not closing_before:
                    return
                left = min(left, self._deadline - time.monotonic())
                if left <= 0:
                    return
            await sleep(min(left, 0.25))

    def _outage(self, exc: StoreUnavailable) -> None:
        self.stats.inc_value("store/retries")
        if self._outage_since is not None:
            return
        self._outage_since = time.monotonic()
        self.stats.inc_value("store/outages")
        if exc.unexpected:
            logger.error(
                "Unexpected error writing to %s; keeping %d items and retrying: %s",
                self.backend,
                len(self._pending),
                exc,
                exc_info=exc,
            )
        else:
            logger.warning(
                "%s unreachable (%s); keeping %d items and retrying every %.1f to %.1f s",
                self.backend,
                exc,
                len(self._pending),
                self.retry_initial_delay,
                self.retry_max_delay,
            )

    def _recovered(self) -> None:
        if self._outage_since is None:
            return
        logger.info(
            "%s reachable again after %.1f s; writing %d waiting items",
            self.backend,
            time.monotonic() - self._outage_since,
            len(self._pending),
        )
        self._outage_since = None

    def _batch_written(self, batch: list[Any], result: BatchResult) -> None:
        self.stats.inc_value("store/batches")
        if result.stored:
            self.stats.inc_value("store/items_stored", len(result.stored))
        if result.rejected:
            self.stats.inc_value("store/items_rejected", len(result.rejected))
            for position, reason in result.rejected:
                logger.warning(
                    "%s refused %s: %s",
                    self.backend,
                    item_url(batch[position]),
                    reason,
                )
        self.crawler.signals.send_catch_log(
            signal=items_stored,
            items=batch,
            spider=self.spider,
            store=self.backend,
            seconds=result.seconds,
        )

    def _release_flow(self, force: bool = False) -> None:
        if self._holding and (force or len(self._pending) < self.max_pending / 2):
            self._holding = False
            self.flow.release(self.hold_reason)


def item_url(item: Any) -> str:
    try:
        return str((item if isinstance(item, Mapping) else ItemAdapter(item)).get("url"))
    except Exception:  # noqa: BLE001
        return "(no url)"
