"""``WorkerStats``: each worker's elapsed time, pages, items and rate.

While the worker runs, its record in the hash ``<spider>:workers`` (field: the
worker id, value: JSON) is refreshed every ``WORKERSTATS_INTERVAL`` seconds and
each time a storage pipeline has written a batch (signal ``items_stored``), so
the crawl-wide ``items stored`` that ``python -m master status`` shows is never
ahead of the workers' own pages and items (a fast worker used to store its whole
share before its first refresh and show 0 pages). ``status`` and ``report`` read
it. When the worker closes it
writes the final record and logs, at INFO::

    Spider (w1) ran for 12.34 seconds.
    Spider (w1) pages: 420, items: 360, pages/min: 3437.84, idle at end: 5.01 s, active: 7.33 s.

(``w1`` is the ``WORKER_ID``.) ``idle at end`` (``idle_tail``) is the time
between the worker's last piece of work (a page parsed) and its close, i.e.
mostly ``MAX_IDLE_TIME_BEFORE_CLOSE``; pages/min is computed over the active
time, so runs with 1 and N workers compare fairly. The record, a
:class:`crawler.core.records.WorkerRecord`:

``worker, host, pid, state (running|paused|finished), started_at, updated_at,
finished_at, store, finish_reason, elapsed, idle_tail, pages, items,
pages_per_min``.

At each beat of the interval (and at close) it also adds the pages and items since
the previous one to the crawl's per-minute series ``<spider>:series``
(:mod:`crawler.core.series`, bounded to ``SERIES_MINUTES`` minutes; 0 disables it),
which the dashboard charts; a stored batch refreshes the record alone (one
``HSET``), the series being per minute.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from typing import Any

from scrapy import signals
from scrapy_redis.connection import get_redis_from_settings
from twisted.internet import task

from crawler.core import defaults
from crawler.core import signals as crawler_signals
from crawler.core.config import worker_id
from crawler.core.flow import FlowControl
from crawler.core.itemkinds import LISTED_VALID
from crawler.core.keys import SPIDER_NAME, CrawlKeys
from crawler.core.records import WorkerRecord
from crawler.core.series import SeriesWriter

logger = logging.getLogger(__name__)


class WorkerStats:
    def __init__(self, crawler: Any) -> None:
        self.crawler = crawler
        self.stats = crawler.stats
        self.worker_id = worker_id(crawler.settings)
        self.interval = crawler.settings.getfloat(
            "WORKERSTATS_INTERVAL", defaults.WORKERSTATS_INTERVAL
        )
        self.server = get_redis_from_settings(crawler.settings)
        self.keys = CrawlKeys.from_settings(
            crawler.settings, getattr(crawler.spidercls, "name", None) or SPIDER_NAME
        )
        self.series = SeriesWriter(
            self.server,
            self.keys,
            crawler.settings.getint("SERIES_MINUTES", defaults.SERIES_MINUTES),
        )
        self.started_at = time.time()
        self._loop: task.LoopingCall | None = None
        self._closed = False

    @property
    def flow(self) -> FlowControl:
        # an extension too: found once the extensions are built
        return FlowControl.of(self.crawler)

    @classmethod
    def from_crawler(cls, crawler: Any) -> WorkerStats:
        extension = cls(crawler)
        crawler.signals.connect(extension.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(extension.spider_closed, signal=signals.spider_closed)
        crawler.signals.connect(extension.items_stored, signal=crawler_signals.items_stored)
        return extension

    def figures(self, now: float, finished: bool = False) -> dict[str, Any]:
        pages = int(self.stats.get_value("pages/parsed", 0))
        # the cards of listing pages (listed products) are observations, not items
        items = int(self.stats.get_value("item_scraped_count", 0)) - int(
            self.stats.get_value(LISTED_VALID, 0)
        )
        elapsed = now - self.started_at
        idle_tail = 0.0
        if finished:
            last = self.stats.get_value("worker/last_activity") or self.started_at
            idle_tail = max(0.0, now - last)
        active = max(elapsed - idle_tail, 1e-9)
        return {
            "elapsed": round(elapsed, 3),
            "idle_tail": round(idle_tail, 3),
            "pages": pages,
            "items": items,
            "pages_per_min": round(pages / active * 60, 2) if pages else 0.0,
        }

    def record(self, state: str, finished: bool = False, reason: str | None = None) -> WorkerRecord:
        now = time.time()
        return WorkerRecord(
            worker=self.worker_id,
            host=socket.gethostname(),
            pid=os.getpid(),
            state=state,
            started_at=self.started_at,
            updated_at=now,
            finished_at=now if finished else None,
            store=self.stats.get_value("store/location") or "",
            finish_reason=reason,
            **self.figures(now, finished),
        )

    def publish(self, record: WorkerRecord, series: bool = True) -> None:
        try:
            self.server.hset(self.keys.workers, self.worker_id, record.encode())
            if series:
                self.series.add(record.pages, record.items)
        except Exception as exc:  # Redis away: the next beat tries again
            logger.warning("Could not publish worker stats (%r)", exc)

    def spider_opened(self, spider: Any) -> None:
        self.started_at = time.time()
        self.publish(self.record("running"))
        self._loop = task.LoopingCall(self._beat)
        self._loop.start(self.interval, now=False)

    def _beat(self) -> None:
        if not self._closed:
            self.publish(self.record("paused" if self.flow.held else "running"))

    def items_stored(self, items: list[Any], spider: Any = None) -> None:
        """A batch is in the store (and counted crawl-wide): show this worker's share now."""
        if not self._closed:
            self.publish(self.record("paused" if self.flow.held else "running"), series=False)

    def spider_closed(self, spider: Any, reason: str) -> None:
        self._closed = True
        if self._loop is not None and self._loop.running:
            self._loop.stop()
        record = self.record("finished", finished=True, reason=reason)
        self.publish(record)
        logger.info("Spider (%s) ran for %.2f seconds.", self.worker_id, record.elapsed)
        logger.info(
            "Spider (%s) pages: %d, items: %d, pages/min: %.2f, "
            "idle at end: %.2f s, active: %.2f s.",
            self.worker_id,
            record.pages,
            record.items,
            record.pages_per_min,
            record.idle_tail,
            record.elapsed - record.idle_tail,
        )
