"""``PauseControl``: ``python -m master pause`` / ``resume`` reach every worker.

Every ``PAUSE_POLL_INTERVAL`` seconds the worker looks at ``<spider>:paused``.
While the key exists the scheduler hands out no request (requests already being
downloaded finish normally), no seed is taken and the worker does not close for
idleness; the process keeps running. When the key is deleted the worker goes on.
The key lives in Redis, so a pause outlives workers and (with append-only
persistence) Redis restarts: workers started during a pause wait too. Its value
(a :class:`crawler.core.records.PauseMarker`: since when, by whom) is for the master;
the worker only tests that the key exists.
"""

from __future__ import annotations

import logging
from typing import Any

from scrapy import signals
from scrapy_redis.connection import get_redis_from_settings
from twisted.internet import task

from crawler.core import defaults
from crawler.core.flow import FlowControl
from crawler.core.keys import SPIDER_NAME, CrawlKeys

logger = logging.getLogger(__name__)

HOLD_REASON = "crawl paused (python -m master resume to go on)"


class PauseControl:
    def __init__(self, crawler: Any) -> None:
        self.crawler = crawler
        self.interval = crawler.settings.getfloat(
            "PAUSE_POLL_INTERVAL", defaults.PAUSE_POLL_INTERVAL
        )
        self.server = get_redis_from_settings(crawler.settings)
        name = getattr(crawler.spidercls, "name", None) or SPIDER_NAME
        self.key = CrawlKeys.from_settings(crawler.settings, name).paused
        self._loop: task.LoopingCall | None = None

    @property
    def flow(self) -> FlowControl:
        # an extension too: found once the extensions are built
        return FlowControl.of(self.crawler)

    @classmethod
    def from_crawler(cls, crawler: Any) -> PauseControl:
        extension = cls(crawler)
        crawler.signals.connect(extension.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(extension.spider_closed, signal=signals.spider_closed)
        return extension

    @property
    def paused(self) -> bool:
        return HOLD_REASON in self.flow.reasons

    def spider_opened(self, spider: Any) -> None:
        self.check()
        self._loop = task.LoopingCall(self.check)
        self._loop.start(self.interval, now=False)

    def spider_closed(self, spider: Any) -> None:
        if self._loop is not None and self._loop.running:
            self._loop.stop()

    def check(self) -> None:
        try:
            paused = bool(self.server.exists(self.key))
        except Exception as exc:  # Redis away: keep the current state
            logger.debug("Could not read %s: %r", self.key, exc)
            return
        if paused and not self.paused:
            self.flow.hold(HOLD_REASON)
            self.crawler.stats.set_value("worker/paused", True)
        elif not paused and self.paused:
            self.flow.release(HOLD_REASON)
            self.crawler.stats.set_value("worker/paused", False)
