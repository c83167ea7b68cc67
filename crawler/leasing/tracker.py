"""``LeaseTracker``: finishes leases when their work is done; requeues the dead's.

A request popped from the shared queue is *leased* by this worker (see
:mod:`crawler.leasing.ledger`). It is finished — its lease deleted — only when
everything it led to is safe:

* its response was parsed and every request it yielded is in the shared queue,
  and every item it yielded is safe (see :mod:`crawler.leasing.pending`); or
* its failure was recorded as a dead letter in ``<spider>:dead`` (see
  :mod:`crawler.leasing.deadletters`); or
* a request derived from it (redirect, retry) was queued in its place.

The tracker keeps the worker's heart beating (``<spider>:alive:<worker>``, see
:mod:`crawler.leasing.heartbeat`; it claims its ``WORKER_ID`` when it is built)
and, every ``LEASE_RECOVERY_INTERVAL`` seconds, requeues the leases of workers
whose heart stopped (the check and the requeue are one Lua script: a live
worker's leases are never taken). When the spider opens it requeues what an
earlier process with its id left; on close it requeues whatever it still holds
(a clean stop loses nothing and fetches nothing twice); after a Redis restart it
requeues what it holds (see :mod:`crawler.scheduling.restarts`).

Finished leases are deleted in batches: with ``SCHEDULER_FLUSH_INTERVAL`` above
0, in the worker's :class:`~crawler.leasing.batch.OutputBatch`, after the links
of their pages (with the next pop or the next links, and at least every
``LEASE_FINISH_INTERVAL`` seconds); otherwise one round trip per 64, and at
least every ``LEASE_FINISH_INTERVAL`` seconds (what a killed worker's successor fetches
again is what it held plus at most that much finished work).

The spider asks it questions (:meth:`take_seeds`, :meth:`crawl_busy`,
:meth:`reclaim_orphans`); other components find it with :meth:`LeaseTracker.of`.

Settings: ``LEASE_WORKER_TIMEOUT``, ``LEASE_HEARTBEAT_INTERVAL``,
``LEASE_RECOVERY_INTERVAL``, ``LEASE_FINISH_INTERVAL``,
``SCHEDULER_FLUSH_INTERVAL``, ``SCHEDULER_FLUSH_LINGER``, ``SCHEDULER_FLUSH_DEEP_QUEUE``,
``SCHEDULER_FLUSH_MAX``, ``WORKER_ID``.
Stats: ``leases/finished``, ``leases/recovered``, ``leases/requeued_on_close``,
``leases/requeued_after_redis_restart``, ``leases/orphans_requeued``,
``dead_letters``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy.utils.reactor import is_reactor_installed
from scrapy_redis.connection import get_redis_from_settings
from twisted.internet import task

from crawler.core import defaults
from crawler.core import signals as crawler_signals
from crawler.core.config import worker_id
from crawler.core.keys import SPIDER_NAME, CrawlKeys
from crawler.leasing.batch import OutputBatch
from crawler.leasing.deadletters import DeadLetters
from crawler.leasing.heartbeat import Heartbeat
from crawler.leasing.ledger import LeaseLedger
from crawler.leasing.meta import lease_of
from crawler.leasing.pending import PendingWork
from crawler.leasing.replication import ReplicaWait
from crawler.net.quietlog import EveryInterval
from crawler.scheduling import restarts

logger = logging.getLogger(__name__)

FINISH_BATCH = 64


def _reactor_running() -> bool:
    """Is a reactor installed and running? (Never installs one.)"""
    if not is_reactor_installed():
        return False
    from twisted.internet import reactor

    return bool(reactor.running)  # type: ignore[attr-defined]


class LeaseTracker:
    def __init__(self, crawler: Any) -> None:
        settings = crawler.settings
        self.crawler = crawler
        self.stats = crawler.stats
        self.worker_id = worker_id(settings)
        self.timeout = settings.getint("LEASE_WORKER_TIMEOUT", defaults.LEASE_WORKER_TIMEOUT)
        beat_interval = settings.getfloat(
            "LEASE_HEARTBEAT_INTERVAL", defaults.LEASE_HEARTBEAT_INTERVAL
        )
        self.recovery_interval = settings.getfloat(
            "LEASE_RECOVERY_INTERVAL", defaults.LEASE_RECOVERY_INTERVAL
        )
        self.finish_interval = settings.getfloat(
            "LEASE_FINISH_INTERVAL", defaults.LEASE_FINISH_INTERVAL
        )
        if beat_interval <= 0 or self.timeout <= beat_interval:
            raise NotConfigured("LEASE_WORKER_TIMEOUT must be longer than LEASE_HEARTBEAT_INTERVAL")
        self.server = get_redis_from_settings(settings)
        spider_name = getattr(crawler.spidercls, "name", None) or SPIDER_NAME
        self.keys = CrawlKeys.from_settings(settings, spider_name)
        self.ledger = LeaseLedger(self.server, self.keys, self.worker_id)
        self.ledger.replica_wait = ReplicaWait.from_settings(self.server, settings, crawler.stats)
        self.heartbeat = Heartbeat(self.ledger, self.timeout, beat_interval)
        self.pending = PendingWork(self.finish)
        self.dead_letters = DeadLetters(self.server, self.keys, self.worker_id, crawler.stats)
        # links and finished leases in one script call per batch (None: one call each)
        flush_interval = settings.getfloat(
            "SCHEDULER_FLUSH_INTERVAL", defaults.SCHEDULER_FLUSH_INTERVAL
        )
        self.batch: OutputBatch | None = None
        if flush_interval > 0:
            self.batch = OutputBatch(
                self.server,
                self.keys,
                self.ledger.inflight_key,
                flush_interval,
                settings.getint("SCHEDULER_FLUSH_MAX", defaults.SCHEDULER_FLUSH_MAX),
                crawler.stats,
                linger=settings.getfloat("SCHEDULER_FLUSH_LINGER", defaults.SCHEDULER_FLUSH_LINGER),
                deep_queue=settings.getint(
                    "SCHEDULER_FLUSH_DEEP_QUEUE", defaults.SCHEDULER_FLUSH_DEEP_QUEUE
                ),
                lease_wait=self.finish_interval,
                ledger=self.ledger,
            )
        self._to_finish: list[str] = []
        self._loop: task.LoopingCall | None = None
        #: the clock the upkeep loop runs on (None: the reactor; tests give a task.Clock)
        self.clock: Any = None
        self._last_recovery = 0.0
        self._redo_pending = False  # a restart's requeue that has not succeeded yet
        self._upkeep_warning = EveryInterval(self.heartbeat.interval)
        self._forget_restarts: Callable[[], None] = lambda: None

    @classmethod
    def from_crawler(cls, crawler: Any) -> LeaseTracker:
        tracker = cls(crawler)
        tracker.heartbeat.claim()
        if _reactor_running():
            tracker._start_upkeep()  # keep the claim alive through the rest of the start-up
        connect = crawler.signals.connect
        connect(tracker.spider_opened, signal=signals.spider_opened)
        connect(tracker.spider_closed, signal=signals.spider_closed)
        connect(tracker.items_stored, signal=crawler_signals.items_stored)
        connect(tracker.item_scraped, signal=signals.item_scraped)
        connect(tracker.item_dropped, signal=signals.item_dropped)
        connect(tracker.item_error, signal=signals.item_error)
        connect(tracker.request_dropped, signal=signals.request_dropped)
        return tracker

    @classmethod
    def of(cls, crawler: Any) -> LeaseTracker:
        """The crawler's tracker (``crawler.get_extension``); RuntimeError when not enabled."""
        tracker = crawler.get_extension(cls)
        if tracker is None:
            raise RuntimeError(
                "crawler.leasing.tracker.LeaseTracker must be enabled in EXTENSIONS "
                "for the reliable scheduler"
            )
        return tracker

    # -- questions of the spider -------------------------------------------------------
    def take_seeds(self, count: int) -> list[tuple[str, bytes]]:
        """Up to ``count`` seeds of ``start_urls``, taken under lease: (lease, payload) pairs."""
        return self.ledger.pop_seeds(count)

    def crawl_busy(self) -> bool:
        """Is there work anywhere in the crawl (queue, seeds, requests held by a worker)?"""
        return any(self.ledger.waiting()) or bool(self.ledger.holders())

    def reclaim_orphans(self) -> int:
        """Requeue this worker's leases that no local work stands for.

        Called when the worker is idle (nothing downloading, parsing or waiting
        for storage). A lease can be orphaned when Redis executed a pop but the
        reply was lost (a connection cut, then the client's retry popped again):
        left alone, it would keep the crawl "busy" and no worker would ever close.
        """
        if not self.pending.idle:
            return 0
        self.flush()
        count = self.ledger.recover(self.worker_id, force=True)
        if count:
            logger.warning("Requeued %d orphaned lease(s) of this worker", count)
            self.stats.inc_value("leases/orphans_requeued", count)
        return count

    # -- lifecycle -----------------------------------------------------------------------
    def _start_upkeep(self) -> None:
        """Beat, flush finished leases and recover the dead's from now on.

        The loop looks every ``SCHEDULER_FLUSH_INTERVAL`` (5 ms) only while the batch
        holds links or leases (it sends them that soon); with nothing waiting, every
        ``LEASE_FINISH_INTERVAL`` or heartbeat, whichever is shorter: an idle worker
        ticked 200 times a second for nothing, 5% of a core. The batch's first link or
        lease brings the short interval back at once (:meth:`_hurry`)."""
        if self._loop is None:
            self._loop = task.LoopingCall(self._tick)
            if self.clock is not None:
                self._loop.clock = self.clock
            self._loop.start(self._slow_interval, now=False)
            if self.batch is not None:
                self.batch.on_waiting = self._hurry

    @property
    def _slow_interval(self) -> float:
        return min(self.finish_interval, self.heartbeat.interval)

    def _hurry(self) -> None:
        """The batch was given something to send: look at it every batch interval."""
        loop = self._loop
        if loop is None or not loop.running or self.batch is None:
            return
        if loop.interval != self.batch.interval:
            loop.interval = self.batch.interval
            if loop.call is not None:  # not from within a tick: the next one comes sooner
                loop.reset()

    def _pace(self) -> None:
        """After a tick: the short interval only while the batch holds something."""
        loop = self._loop
        if loop is not None and self.batch is not None and not len(self.batch):
            loop.interval = self._slow_interval

    def spider_opened(self, spider: Any) -> None:
        requeued = self.ledger.recover(self.worker_id, force=True)
        if requeued:
            logger.info(
                "Requeued %d request(s) left by an earlier run of worker %s",
                requeued,
                self.worker_id,
            )
            self.stats.inc_value("leases/recovered", requeued)
        self.heartbeat.beat()
        self._start_upkeep()
        self._forget_restarts = restarts.on_restart(self.server, self.redis_restarted)

    def redis_restarted(self, old_run_id: str, new_run_id: str) -> None:
        """Redis restarted, maybe without its last second: fetch again what this worker holds.

        Every lease of this worker still in Redis goes back to the queue before any
        lease is finished on the restarted server (see :mod:`crawler.scheduling.restarts`);
        the pages in progress are fetched again, and their late acknowledgements
        find no lease to delete.
        """
        self._redo_pending = True
        self._redo()

    def _redo(self) -> None:
        """Requeue what this worker holds after a restart or failover; while Redis (or the
        cluster) is still in flux this fails, and the upkeep loop tries again at each beat."""
        try:
            requeued = self.ledger.recover(self.worker_id, force=True)
        except Exception as exc:
            self._upkeep_warning.warn(
                logger, "Could not requeue the leases held yet (%r); retrying", exc
            )
            return
        self._redo_pending = False
        self.stats.inc_value("leases/requeued_after_redis_restart", requeued)
        logger.warning(
            "Redis restarted: requeued the %d request(s) this worker held, to be fetched again",
            requeued,
        )

    def spider_closed(self, spider: Any, reason: str) -> None:
        self._forget_restarts()
        if self._loop is not None and self._loop.running:
            self._loop.stop()
        try:
            self.flush()
            requeued = self.ledger.recover(self.worker_id, force=True)
            self.heartbeat.stop()
        except Exception as exc:
            logger.error(
                "Could not hand back leased requests (%r): other workers will requeue them "
                "after %ss",
                exc,
                self.timeout,
            )
            return
        if requeued:
            logger.info("Requeued %d unfinished request(s) for other workers", requeued)
            self.stats.set_value("leases/requeued_on_close", requeued)

    def _tick(self) -> None:
        try:
            now = time.monotonic()
            if self._redo_pending:
                self._redo()
            if self.batch is not None and self.batch.due(now):
                self.batch.flush()
            self._finish_waiting()
            self.heartbeat.beat_if_due(now)
            if now - self._last_recovery >= self.recovery_interval:
                self._last_recovery = now
                for worker, count in self.ledger.recover_dead().items():
                    logger.warning(
                        "Worker %s stopped beating: requeued the %d request(s) it held",
                        worker,
                        count,
                    )
                    self.stats.inc_value("leases/recovered", count)
        except Exception as exc:  # Redis away: keep the loop alive, try at the next tick
            self._upkeep_warning.warn(logger, "Lease upkeep failed (%r); retrying", exc)
        self._pace()

    @property
    def unsent(self) -> int:
        """Links and finished leases this worker holds that Redis has not been sent yet."""
        return len(self.batch) if self.batch is not None else len(self._to_finish)

    # -- finishing -----------------------------------------------------------------------
    def finish(self, lease: str) -> None:
        """Mark a lease finished; deleted in Redis with the next batch."""
        if not lease:
            return
        if self.batch is not None:
            self.batch.finish(lease)
            return
        self._to_finish.append(lease)
        if len(self._to_finish) >= FINISH_BATCH:
            try:
                self.flush()
            except Exception as exc:  # Redis away: kept, the next tick tries again
                logger.warning("Could not delete finished leases yet (%r)", exc)

    def flush(self) -> None:
        """Send every link and finished lease this worker holds, now."""
        if self.batch is not None:
            self.batch.flush()
        self._finish_waiting()

    def _finish_waiting(self) -> None:
        """Delete the finished leases waiting outside a batch (one round trip)."""
        if not self._to_finish:
            return
        leases, self._to_finish = self._to_finish, []
        try:
            self.ledger.finish(leases)
        except Exception:
            self._to_finish[:0] = leases
            raise
        self.stats.inc_value("leases/finished", len(leases))

    def dead_letter(
        self,
        url: str | None,
        reason: str,
        payload: bytes | None = None,
        lease: str = "",
        refused: bool = False,
        history: list[Any] | None = None,
    ) -> None:
        """Record a request that failed for good in ``<spider>:dead``, then finish its lease.

        ``refused``: a seed or request the worker refused (see
        :mod:`crawler.leasing.deadletters`); ``history``: the failures retried before.
        """
        self.dead_letters.record(url, reason, payload, refused, history)
        self.finish(lease)

    # -- the work of a page: its output (spider middleware) and its items (signals) -------
    @property
    def stores(self) -> set[str]:
        """The storage pipelines whose ``items_stored`` make an item safe."""
        return self.pending.stores

    def register_store(self, name: str) -> None:
        """A storage pipeline announces that it sends ``items_stored`` for what it writes."""
        self.pending.register_store(name)

    def item_pending(self, item: Any, lease: str) -> None:
        self.pending.item_pending(item, lease)

    def output_done(self, lease: str) -> None:
        self.pending.output_done(lease)

    def item_scraped(self, item: Any, response: Any = None, spider: Any = None) -> None:
        self.pending.item_scraped(item)

    def items_stored(self, items: list[Any], spider: Any = None, store: str | None = None) -> None:
        self.pending.items_stored(items, store)

    def item_dropped(
        self, item: Any, response: Any = None, exception: Any = None, spider: Any = None
    ) -> None:
        self.pending.item_safe(item)

    def item_error(
        self, item: Any, response: Any = None, spider: Any = None, failure: Any = None
    ) -> None:
        self.pending.item_safe(item)

    def request_dropped(self, request: Any, spider: Any = None) -> None:
        self.finish(lease_of(request))
