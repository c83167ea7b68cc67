"""``LeaseTracker``: finishes leases when their work is done; requeues the dead's.

A request popped from the shared queue is *leased* by this worker (see
:mod:`crawler.scheduling.leases`). It is finished — its lease deleted — only
when everything it led to is safe:

* its response was parsed and every request it yielded is in the shared queue,
  and every item it yielded was stored (signal ``items_stored`` from *every*
  storage pipeline that called :meth:`LeaseTracker.register_store`, e.g. both
  PostgreSQL and MongoDB when both are configured; with none, the end of the
  pipelines), dropped by validation (kept in ``<spider>:invalid``) or failed in
  a pipeline; or
* its failure was recorded as a dead letter in ``<spider>:dead``; or
* a request derived from it (redirect, retry) was queued in its place.

The tracker also beats the worker's heart (``<spider>:alive:<worker>``, TTL
``LEASE_WORKER_TIMEOUT``) every ``LEASE_HEARTBEAT_INTERVAL`` seconds and, every
``LEASE_RECOVERY_INTERVAL`` seconds, requeues the leases of workers whose heart
stopped (the check and the requeue are one Lua script: a live worker's leases
are never taken). On close it requeues whatever it still holds (a clean stop
loses nothing and fetches nothing twice).

**One live process per worker id.** When it is built, the tracker claims the
heartbeat of its ``WORKER_ID`` (``SET NX``). If that heartbeat exists, it
watches it for up to ``LEASE_WORKER_TIMEOUT`` seconds: renewed means another
live worker has the id, and the worker refuses to start (one ERROR line, exit
status 1, see :mod:`crawler.startup`); expired means an earlier process with
that id died, and the worker takes the id over. Only then, when the spider
opens, does it requeue what an earlier process with its id left.

Finished leases are deleted in batches: one round trip per 64, and at least
every ``LEASE_FINISH_INTERVAL`` seconds (what a killed worker's successor
fetches again is what it held plus at most that much finished work).

Settings: ``LEASE_WORKER_TIMEOUT``, ``LEASE_HEARTBEAT_INTERVAL``,
``LEASE_RECOVERY_INTERVAL``, ``LEASE_FINISH_INTERVAL``, ``WORKER_ID``.
Stats: ``leases/finished``, ``leases/recovered``, ``leases/requeued_on_close``,
``dead_letters``.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from typing import Any

from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy.utils.reactor import is_reactor_installed
from scrapy_redis.connection import get_redis_from_settings
from twisted.internet import task
from w3lib.url import canonicalize_url

from crawler import signals as crawler_signals
from crawler.config import worker_id
from crawler.keys import SPIDER_NAME, CrawlKeys
from crawler.scheduling import restarts
from crawler.scheduling.batching import OutputBatch
from crawler.scheduling.leases import LeaseLedger
from crawler.startup import StartupError

logger = logging.getLogger(__name__)

_ATTR = "_ecommerce_lease_tracker"
FINISH_BATCH = 64
CLAIM_POLL_INTERVAL = 0.2  # seconds between looks at a heartbeat of our id
RENEWED_MS = 100  # a heartbeat whose time left grows by more than this was renewed


def _reactor_running() -> bool:
    """Is a reactor installed and running? (Never installs one.)"""
    if not is_reactor_installed():
        return False
    from twisted.internet import reactor

    return bool(reactor.running)  # type: ignore[attr-defined]


class WorkerIdInUse(StartupError):
    """Another live worker has this ``WORKER_ID``."""


class LeaseTracker:
    def __init__(self, crawler: Any) -> None:
        settings = crawler.settings
        self.crawler = crawler
        self.stats = crawler.stats
        self.worker_id = worker_id(settings)
        self.timeout = settings.getint("LEASE_WORKER_TIMEOUT", 30)
        self.beat_interval = settings.getfloat("LEASE_HEARTBEAT_INTERVAL", 5)
        self.recovery_interval = settings.getfloat("LEASE_RECOVERY_INTERVAL", 10)
        self.finish_interval = settings.getfloat("LEASE_FINISH_INTERVAL", 0.5)
        if self.beat_interval <= 0 or self.timeout <= self.beat_interval:
            raise NotConfigured("LEASE_WORKER_TIMEOUT must be longer than LEASE_HEARTBEAT_INTERVAL")
        self.server = get_redis_from_settings(settings)
        spider_name = getattr(crawler.spidercls, "name", None) or SPIDER_NAME
        self.keys = CrawlKeys(spider_name)
        self.ledger = LeaseLedger(self.server, self.keys, self.worker_id)
        # links and finished leases in one script call per batch (None: one call each)
        flush_interval = settings.getfloat("SCHEDULER_FLUSH_INTERVAL")
        self.batch: OutputBatch | None = None
        if flush_interval > 0:
            self.batch = OutputBatch(
                self.server,
                self.keys,
                self.ledger.inflight_key,
                flush_interval,
                settings.getint("SCHEDULER_FLUSH_MAX"),
                crawler.stats,
            )
        self._to_finish: list[str] = []
        self._items: dict[int, str] = {}  # id(item) -> lease
        self._pending: dict[str, int] = {}  # lease -> items not yet safe
        self._output_done: set[str] = set()
        self._stored_in: dict[int, set[str]] = {}  # id(item) -> stores that have it
        self._loop: task.LoopingCall | None = None
        self._last_recovery = 0.0
        self._last_beat = 0.0
        self.stores: set[str] = set()
        self._forget_restarts: Callable[[], None] = lambda: None

    @classmethod
    def from_crawler(cls, crawler: Any) -> LeaseTracker:
        tracker = cls(crawler)
        tracker.claim_worker_id()
        setattr(crawler, _ATTR, tracker)
        crawler.signals.connect(tracker.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(tracker.spider_closed, signal=signals.spider_closed)
        crawler.signals.connect(tracker.items_stored, signal=crawler_signals.items_stored)
        crawler.signals.connect(tracker.item_scraped, signal=signals.item_scraped)
        crawler.signals.connect(tracker.item_dropped, signal=signals.item_dropped)
        crawler.signals.connect(tracker.item_error, signal=signals.item_error)
        crawler.signals.connect(tracker.request_dropped, signal=signals.request_dropped)
        return tracker

    @classmethod
    def of(cls, crawler: Any) -> LeaseTracker:
        tracker = getattr(crawler, _ATTR, None)
        if tracker is None:
            raise RuntimeError(
                "crawler.extensions.leases.LeaseTracker must be enabled in EXTENSIONS "
                "for the reliable scheduler"
            )
        return tracker

    # -- lifecycle -----------------------------------------------------------------
    def claim_worker_id(self) -> None:
        """Become the one live process of this worker id, or raise :class:`WorkerIdInUse`."""
        last_left: int | None = None
        while not self.ledger.claim(self.timeout):
            left = self.ledger.heartbeat_left()
            if left == -2:  # expired between the two calls: claim again
                continue
            renewed = left == -1 or (last_left is not None and left > last_left + RENEWED_MS)
            if renewed:
                raise WorkerIdInUse(
                    f"WORKER_ID {self.worker_id!r} is in use by a live worker (its heartbeat "
                    f"{self.keys.alive(self.worker_id)} is being renewed): give this worker "
                    "another WORKER_ID, or leave WORKER_ID unset for a unique one"
                )
            if last_left is None:
                logger.info(
                    "Worker id %s has a heartbeat in Redis: waiting up to %.1f s to see "
                    "whether that worker is alive",
                    self.worker_id,
                    left / 1000,
                )
            last_left = left
            time.sleep(CLAIM_POLL_INTERVAL)
        self._last_beat = time.monotonic()
        if _reactor_running():
            self._start_upkeep()  # keep the claim alive through the rest of the start-up

    def _start_upkeep(self) -> None:
        """Beat, flush finished leases and recover the dead's from now on."""
        if self._loop is None:
            self._loop = task.LoopingCall(self._tick)
            interval = min(self.finish_interval, self.beat_interval)
            if self.batch is not None:  # the batch of links and leases is sent by this loop
                interval = min(interval, self.batch.interval)
            self._loop.start(interval, now=False)

    def spider_opened(self, spider: Any) -> None:
        requeued = self.ledger.recover(self.worker_id, force=True)
        if requeued:
            logger.info(
                "Requeued %d request(s) left by an earlier run of worker %s",
                requeued,
                self.worker_id,
            )
            self.stats.inc_value("leases/recovered", requeued)
        self.ledger.heartbeat(self.timeout)
        self._last_beat = time.monotonic()
        self._start_upkeep()
        self._forget_restarts = restarts.on_restart(self.server, self.redis_restarted)

    def redis_restarted(self, old_run_id: str, new_run_id: str) -> None:
        """Redis restarted, maybe without its last second: fetch again what this worker holds.

        Every lease of this worker still in Redis goes back to the queue before any
        lease is finished on the restarted server (see :mod:`crawler.scheduling.restarts`);
        the pages in progress are fetched again, and their late acknowledgements
        find no lease to delete.
        """
        requeued = self.ledger.recover(self.worker_id, force=True)
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
            self.ledger.stop_beating()
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
            self.flush()
            now = time.monotonic()
            if now - self._last_beat >= self.beat_interval:
                self._last_beat = now
                self.ledger.heartbeat(self.timeout)
            if now - self._last_recovery >= self.recovery_interval:
                self._last_recovery = now
                for worker, count in self.ledger.recover_dead().items():
                    logger.warning(
                        "Worker %s stopped beating: requeued the %d request(s) it held",
                        worker,
                        count,
                    )
                    self.stats.inc_value("leases/recovered", count)
        except Exception as exc:  # Redis away: keep the loop alive, try at the next beat
            logger.warning("Lease upkeep failed (%r); retrying in %ss", exc, self.beat_interval)

    def reclaim_orphans(self) -> int:
        """Requeue this worker's leases that no local work stands for.

        Called when the worker is idle (nothing downloading, parsing or waiting
        for storage). A lease can be orphaned when Redis executed a pop but the
        reply was lost (a connection cut, then the client's retry popped again):
        left alone, it would keep the crawl "busy" and no worker would ever close.
        """
        if self._pending or self._items:
            return 0
        self.flush()
        count = self.ledger.recover(self.worker_id, force=True)
        if count:
            logger.warning("Requeued %d orphaned lease(s) of this worker", count)
            self.stats.inc_value("leases/orphans_requeued", count)
        return count

    # -- finishing ---------------------------------------------------------------------
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
        if self.batch is not None:
            self.batch.flush()
        if not self._to_finish:
            return
        leases, self._to_finish = self._to_finish, []
        try:
            self.ledger.finish(leases)
        except Exception:
            self._to_finish[:0] = leases
            raise
        self.stats.inc_value("leases/finished", len(leases))

    def item_pending(self, item: Any, lease: str) -> None:
        if lease:
            self._items[id(item)] = lease
            self._pending[lease] = self._pending.get(lease, 0) + 1

    def output_done(self, lease: str) -> None:
        if not lease:
            return
        if self._pending.get(lease):
            self._output_done.add(lease)
        else:
            self._pending.pop(lease, None)
            self.finish(lease)

    def _item_safe(self, item: Any) -> None:
        self._stored_in.pop(id(item), None)
        lease = self._items.pop(id(item), None)
        if lease is None:
            return
        left = self._pending.get(lease, 1) - 1
        if left > 0:
            self._pending[lease] = left
            return
        self._pending.pop(lease, None)
        if lease in self._output_done:
            self._output_done.discard(lease)
            self.finish(lease)

    def register_store(self, name: str) -> None:
        """A storage pipeline announces that it sends ``items_stored`` for what it writes.

        Without one, an item is safe once it went through every pipeline
        (``item_scraped``).
        """
        self.stores.add(name)

    def item_scraped(self, item: Any, response: Any = None, spider: Any = None) -> None:
        if not self.stores:
            self._item_safe(item)

    def items_stored(self, items: list[Any], spider: Any = None, store: str | None = None) -> None:
        """``store`` wrote ``items``: each is safe once every registered store has it.

        (``store`` None: the one store there is, or all of them.)
        """
        for item in items:
            if store is not None and len(self.stores) > 1:
                if id(item) not in self._items:
                    continue
                stored_in = self._stored_in.setdefault(id(item), set())
                stored_in.add(store)
                if not self.stores <= stored_in:
                    continue  # another store has yet to write it
            self._item_safe(item)

    def item_dropped(
        self, item: Any, response: Any = None, exception: Any = None, spider: Any = None
    ) -> None:
        self._item_safe(item)

    def item_error(
        self, item: Any, response: Any = None, spider: Any = None, failure: Any = None
    ) -> None:
        self._item_safe(item)

    def request_dropped(self, request: Any, spider: Any = None) -> None:
        self.finish(request.meta.get("lease", ""))

    # -- dead letters ----------------------------------------------------------------
    def dead_letter(
        self,
        url: str | None,
        reason: str,
        payload: bytes | None = None,
        lease: str = "",
        refused: bool = False,
    ) -> None:
        """Record a request that failed for good in ``<spider>:dead``, then finish it.

        ``refused``: a seed or request the worker refused (network rule, seed
        meta). The record says ``"refused": true``, ``<spider>:stats`` field
        ``requests_refused`` counts it, and its URL leaves ``<spider>:seeded``
        so that seeding it again is not "already seeded".
        """
        record: dict[str, Any] = {
            "url": url,
            "reason": reason,
            "worker": self.worker_id,
            "time": time.time(),
        }
        if refused:
            record["refused"] = True
        if payload is not None:
            record["request"] = payload.decode("utf-8", "replace")
        pipe = self.server.pipeline(transaction=True)
        pipe.lpush(self.keys.dead, json.dumps(record))
        if refused:
            pipe.hincrby(self.keys.stats, "requests_refused", 1)
            if url:
                pipe.srem(self.keys.seeded, canonicalize_url(url))
        pipe.execute()
        self.stats.inc_value("dead_letters")
        if refused:
            self.stats.inc_value("dead_letters/refused")
        logger.warning("Dead letter: %s (%s)", url or "<no url>", reason)
        self.finish(lease)
