"""``SiteStats``: pages, products and sitemaps per site, for ``master status --sites``.

Each worker counts, per site (:func:`crawler.core.sites.site_key`), the responses it
received (``pages``; a sitemap is a page too), those that were sitemaps
(``sitemaps``) and the products it scraped (``products``), and adds them to the
hash ``<spider>:sites`` (fields ``"<counter> <site>"``) every
``WORKERSTATS_INTERVAL`` seconds and when it closes: one pipelined round trip
per interval, whatever the number of pages. :func:`master.sites.gather_sites`
reads them back.
"""

from __future__ import annotations

import logging
from collections import Counter
from typing import Any

from scrapy import signals
from scrapy_redis.connection import get_redis_from_settings
from twisted.internet import task

from crawler.core import defaults
from crawler.core.itemkinds import LISTED_KEY
from crawler.core.keys import SPIDER_NAME, CrawlKeys
from crawler.core.sites import site_key

logger = logging.getLogger(__name__)


class SiteStats:
    def __init__(self, crawler: Any) -> None:
        self.server = get_redis_from_settings(crawler.settings)
        self.keys = CrawlKeys.from_settings(
            crawler.settings, getattr(crawler.spidercls, "name", None) or SPIDER_NAME
        )
        self.interval = crawler.settings.getfloat(
            "WORKERSTATS_INTERVAL", defaults.WORKERSTATS_INTERVAL
        )
        self.counts: Counter[str] = Counter()
        self._loop: task.LoopingCall | None = None

    @classmethod
    def from_crawler(cls, crawler: Any) -> SiteStats:
        extension = cls(crawler)
        crawler.signals.connect(extension.response_received, signal=signals.response_received)
        crawler.signals.connect(extension.item_scraped, signal=signals.item_scraped)
        crawler.signals.connect(extension.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(extension.spider_closed, signal=signals.spider_closed)
        return extension

    def response_received(self, response: Any, request: Any, spider: Any = None) -> None:
        if request.url.endswith("/robots.txt") and "scope" not in request.meta:
            return  # the robots.txt RobotsTxtMiddleware fetches: not a page
        site = request.meta.get("site") or site_key(request.url)
        self.counts[f"pages {site}"] += 1
        if "sitemap" in request.meta:
            self.counts[f"sitemaps {site}"] += 1

    def item_scraped(self, item: Any, response: Any = None, spider: Any = None) -> None:
        url = item.get("url") if hasattr(item, "get") else None
        if url and LISTED_KEY not in item:  # a listed product (a card) is no product
            self.counts[f"products {site_key(url)}"] += 1

    def spider_opened(self, spider: Any = None) -> None:
        if self.interval > 0:
            self._loop = task.LoopingCall(self.flush)
            self._loop.start(self.interval, now=False)

    def flush(self) -> None:
        counts, self.counts = self.counts, Counter()
        if not counts:
            return
        try:
            pipe = self.server.pipeline(transaction=False)
            for field, count in counts.items():
                pipe.hincrby(self.keys.sites, field, count)
            pipe.execute()
        except Exception as exc:  # Redis away: keep the counts for the next tick
            self.counts.update(counts)
            logger.warning("Could not write the site counts (%r); retrying", exc)

    def spider_closed(self, spider: Any = None) -> None:
        if self._loop is not None and self._loop.running:
            self._loop.stop()
        self.flush()
