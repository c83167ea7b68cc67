"""The storage pipelines' writer: batches off the reactor thread, retries, backpressure, signals.

:class:`BatchingStorePipeline` is the Scrapy component every store backend
(:mod:`~crawler.pipelines.postgres`, :mod:`~crawler.pipelines.mongo`,
:mod:`~crawler.pipelines.embedded`) derives from; how one batch is written
(records, bisecting refused rows) is :class:`~crawler.pipelines.backend.StoreBackend`'s.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from itemadapter import ItemAdapter
from scrapy.exceptions import NotConfigured
from scrapy.utils.asyncio import create_looping_call, run_in_thread, sleep
from scrapy.utils.defer import deferred_from_coro, maybe_deferred_to_future
from scrapy_redis.connection import get_redis_from_settings

from crawler.core import defaults
from crawler.core.config import worker_id
from crawler.core.flow import FlowControl
from crawler.core.itemkinds import PRODUCT, kind_of, listed_count
from crawler.core.keys import CrawlKeys
from crawler.core.records import StatsFields
from crawler.core.signals import items_stored
from crawler.net.outage import OutageLog
from crawler.pipelines.backend import BatchResult, StoreBackend
from crawler.pipelines.errors import StoreUnavailable
from crawler.pipelines.lease_registration import claim_crawl_count, register_store
from crawler.pipelines.rejects import RejectedItemKeeper
from crawler.schema import ValidationProblem

if TYPE_CHECKING:
    import redis
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from twisted.internet.defer import Deferred

logger = logging.getLogger(__name__)


class BatchingStorePipeline(StoreBackend):
    """Base of the storage pipelines: writes items in batches, off the reactor thread.

    ``process_item`` appends the item to a buffer and returns it at once. A
    batch of ``STORE_BATCH_SIZE`` items is written as soon as it is full, and
    whatever waits is written every ``STORE_FLUSH_INTERVAL`` seconds (``0``
    disables the timer: only full batches and the final flush). One batch is
    written at a time, in a thread, so the crawl never waits on the database.

    After a batch is committed the pipeline, from the reactor thread:

    * sends :data:`crawler.core.signals.items_stored` with ``items`` = the item
      objects exactly as they were passed to ``process_item``, ``spider``,
      ``store`` = :attr:`backend` and ``seconds`` (how long the write took);
      the lease tracker (to which ``from_crawler`` registers the pipeline, see
      :mod:`crawler.pipelines.lease_registration`) acknowledges their requests
      only once every registered store sent it, not when the item leaves the
      pipelines. Items the database refused (see below) are included: they are
      kept in Redis, so their requests are done too;
    * adds the count to ``HINCRBY <spider>:stats items_stored`` (only the first
      store of ``ITEM_PIPELINES`` does, when several are configured, so that an
      item written to PostgreSQL and MongoDB counts once) and to the crawl stats
      ``store/items_stored`` (each store its own).

    **Database away** (connection refused or lost, timeout, server shutting
    down): the batch is kept and retried with exponential backoff from
    ``STORE_RETRY_INITIAL_DELAY`` to ``STORE_RETRY_MAX_DELAY`` seconds,
    reconnecting each time. A WARNING is logged when an outage starts
    (``<backend> unreachable (...): keeping N items, retrying every ...``), again
    every ``OUTAGE_LOG_INTERVAL`` seconds while it lasts (``<backend> still
    unreachable after S s ...``), and one INFO line when it is over (``<backend>
    reachable again after S s (cut off since HH:MM:SS) ...``; see
    :mod:`crawler.net.outage`). Items keep being buffered; when more
    than ``STORE_MAX_PENDING`` wait (``0``: no limit), the pipeline holds the
    flow (:class:`crawler.core.flow.FlowControl`, reason ``storage backlog:
    <backend> unreachable``) so the worker takes no new requests, and releases
    it once fewer than half that number wait. No item is ever dropped because
    the database is away. An error the pipeline does not recognise is treated
    the same way (kept, retried), and logged at ERROR with its traceback once.

    **Rows the database refuses** (bad data, e.g. invalid text): the batch is
    split in halves until the bad rows are alone (:meth:`StoreBackend.store_batch
    <crawler.pipelines.backend.StoreBackend.store_batch>`); every good row is stored,
    every bad one is kept in ``<spider>:invalid`` with ``{"field": null,
    "message": "storage rejected: ..."}`` and counted in ``items_invalid``
    (crawl stats ``store/items_rejected``).

    **Closing**: everything buffered is written; if the database is still away
    the pipeline keeps retrying for up to ``STORE_CLOSE_TIMEOUT`` seconds, then
    logs at ERROR how many items could not be written. Their requests were not
    acknowledged, so the lease mechanism crawls them again: nothing is lost.

    Crawl stats: ``store/location``, ``store/items_stored``,
    ``store/items_rejected``, ``store/batches``, ``store/outages``,
    ``store/retries``, ``store/flow_holds``, ``store/items_unwritten``; listed products
    apart: ``store/listed_stored`` (``listed_stored`` in Redis).

    Settings (defaults in :mod:`crawler.core.defaults`): ``STORE_BATCH_SIZE``,
    ``STORE_FLUSH_INTERVAL``, ``STORE_MAX_PENDING``, ``STORE_RETRY_INITIAL_DELAY``,
    ``STORE_RETRY_MAX_DELAY``, ``STORE_CLOSE_TIMEOUT``, ``OUTAGE_LOG_INTERVAL``,
    ``VALIDATION_KEEP_INVALID``,
    ``WORKER_ID``, ``REDIS_URL``.

    Subclasses implement the backend's methods (:class:`StoreBackend
    <crawler.pipelines.backend.StoreBackend>`), all blocking and called from a
    worker thread, one at a time.
    """

    #: the kind of items this store keeps (crawler.core.itemkinds); it steps aside for others
    item_kind: ClassVar[str] = PRODUCT.name

    def __init__(self, crawler: Crawler, server: redis.Redis | None = None) -> None:
        settings = crawler.settings
        super().__init__(worker_id(settings))
        self.crawler = crawler
        self.stats = crawler.stats
        self.counts_crawl_wide = True  # adds to <spider>:stats items_stored (see from_crawler)
        self.batch_size = max(1, settings.getint("STORE_BATCH_SIZE", defaults.STORE_BATCH_SIZE))
        self.flush_interval = settings.getfloat(
            "STORE_FLUSH_INTERVAL", defaults.STORE_FLUSH_INTERVAL
        )
        self.max_pending = settings.getint("STORE_MAX_PENDING", defaults.STORE_MAX_PENDING)
        self.retry_initial_delay = max(
            0.01,
            settings.getfloat("STORE_RETRY_INITIAL_DELAY", defaults.STORE_RETRY_INITIAL_DELAY),
        )
        self.retry_max_delay = max(
            self.retry_initial_delay,
            settings.getfloat("STORE_RETRY_MAX_DELAY", defaults.STORE_RETRY_MAX_DELAY),
        )
        self.close_timeout = settings.getfloat("STORE_CLOSE_TIMEOUT", defaults.STORE_CLOSE_TIMEOUT)
        self.keep_invalid = settings.getbool(
            "VALIDATION_KEEP_INVALID", defaults.VALIDATION_KEEP_INVALID
        )
        self.flow = FlowControl.of(crawler)
        self.hold_reason = f"storage backlog: {self.backend} unreachable"
        self.server = server
        self._own_server = server is None
        self.spider: Spider | None = None
        self.keeper: RejectedItemKeeper | None = None
        self._pending: deque[Any] = deque()
        self._writing = False
        self._writer: Deferred[None] | None = None
        self._timer: Any = None
        # the store's outages as the log tells them: the first failed write, again every
        # OUTAGE_LOG_INTERVAL s while it lasts, and when it is back (crawler/net/outage.py)
        self.outage_log = OutageLog(
            self.backend,
            interval=settings.getfloat("OUTAGE_LOG_INTERVAL", defaults.OUTAGE_LOG_INTERVAL),
            holding=self._holding_while_away,
            log=logger,
        )
        self._holding = False
        self._closing = False
        self._deadline = 0.0

    # --- Scrapy component ------------------------------------------------------------

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> BatchingStorePipeline:
        if not cls.is_configured(crawler.settings):
            # No message: Scrapy would log a WARNING for a store that is simply not chosen.
            raise NotConfigured
        spidercls = getattr(crawler, "spidercls", None)
        if spidercls is not None and kind_of(spidercls).name != cls.item_kind:
            raise NotConfigured  # another kind's store (products, quotes): not this spider's
        pipeline = cls(crawler)
        register_store(crawler, pipeline.backend)  # requests now wait for items_stored
        # with several stores, only the first adds to the crawl-wide items_stored
        pipeline.counts_crawl_wide = claim_crawl_count(crawler, pipeline.backend)
        return pipeline

    async def open_spider(self, spider: Spider | None = None) -> None:
        self.spider = spider or self.crawler.spider
        assert self.spider is not None, "open_spider() needs the crawler's spider"
        if self.server is None:
            self.server = get_redis_from_settings(self.crawler.settings)
        self.keeper = RejectedItemKeeper(
            self.server,
            CrawlKeys.from_settings(self.crawler.settings, self.spider.name),
            self.worker,
            keep=self.keep_invalid,
        )
        location = self.store_location()
        others = self.stats.get_value("store/location")  # another store of this crawler
        both = f"{others} + {location}" if others and others != location else location
        self.stats.set_value("store/location", both)
        logger.info("Storing %s in %s", kind_of(self.spider).plural, location)
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
        self.outage_log.close()  # what was not written is said above; no more reminders
        await run_in_thread(self._disconnect)
        if self.server is not None and self._own_server:
            self.server.close()
            self.server = None

    @property
    def pending_count(self) -> int:
        """Items buffered and not yet written."""
        return len(self._pending)

    # --- thread jobs (blocking) ------------------------------------------------------

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
        if result.stored and self.counts_crawl_wide:
            listed = listed_count(items, result.stored)
            try:
                pipe = self.keeper.server.pipeline(transaction=False)
                stats = self.keeper.keys.stats
                if len(result.stored) > listed:
                    pipe.hincrby(stats, StatsFields.ITEMS_STORED, len(result.stored) - listed)
                if listed:  # cards of listing pages: observations, not items of their own
                    pipe.hincrby(stats, StatsFields.LISTED_STORED, listed)
                pipe.execute()
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
                self._outage(exc, began=started)
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

    def _outage(self, exc: StoreUnavailable, began: float | None = None) -> None:
        self.stats.inc_value("store/retries")
        if not self.outage_log.down:
            self.stats.inc_value("store/outages")
            if exc.unexpected:
                logger.error(
                    "Unexpected error writing to %s; keeping %d items and retrying: %s",
                    self.backend,
                    len(self._pending),
                    exc,
                    exc_info=exc,
                )
        self.outage_log.failed(exc, began=began)

    def _recovered(self) -> None:
        self.outage_log.succeeded()

    def _holding_while_away(self) -> str:
        """What the outage log says the pipeline holds (from the reactor thread)."""
        return (
            f"keeping {len(self._pending)} items, retrying every "
            f"{self.retry_initial_delay:g} to {self.retry_max_delay:g} s"
        )

    def _batch_written(self, batch: list[Any], result: BatchResult) -> None:
        self.stats.inc_value("store/batches")
        if result.stored:
            listed = listed_count(batch, result.stored)
            if len(result.stored) > listed:
                self.stats.inc_value("store/items_stored", len(result.stored) - listed)
            if listed:  # cards of listing pages, observations: counted apart
                self.stats.inc_value("store/listed_stored", listed)
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
