"""``SharedPolitenessMiddleware``: every worker together stays within a site's budget.

Scrapy's ``DOWNLOAD_DELAY`` and AutoThrottle space the requests of one process;
three workers with them hit a site three times as hard as one. This downloader
middleware asks Redis for the site's next slot before each request (one atomic
round trip, see :class:`crawler.politeness.SiteBudget`) and, when the slot is
later, delays only that request: ``process_request`` is a coroutine that sleeps
on the reactor's event loop, so the downloader keeps fetching everything else
meanwhile. The interval of a site is the stricter of:

* ``SITE_MAX_RPS``: requests per second for all workers together (0: no
  budget), or the ``max_rps`` of the site's profile (see
  :mod:`crawler.extraction.profiles`);
* the ``Crawl-delay`` of the site's robots.txt for our agent
  (``ROBOTSTXT_USER_AGENT`` or ``USER_AGENT``), learnt from Scrapy's
  ``robots_parsed`` signal when ``ROBOTSTXT_OBEY`` is on.

A site with neither costs no round trip. It runs after ``RobotsTxtMiddleware``
(a forbidden URL spends no slot); robots.txt requests themselves take a slot.
AutoThrottle and ``DOWNLOAD_DELAY`` still act on the downloader's slots after
this middleware: they can only slow a site further, never past its budget.

While ``POLITENESS_MAX_WAITING_PER_SITE`` requests of a site wait in this
worker (counted in :class:`crawler.politeness.SiteWaits`), the scheduler hands
out other sites' requests first (see ``POLITENESS_PARK_MAX`` in
:class:`crawler.scheduling.scheduler.ReliableScheduler`).

Stats: ``politeness/reserved``, ``politeness/waited``, ``politeness/wait_seconds``;
crawl-wide, in ``<spider>:stats``: ``politeness_waits``, ``politeness_wait_ms``.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from scrapy import Request, signals
from scrapy_redis.connection import get_redis_from_settings

from crawler import defaults
from crawler.keys import CrawlKeys
from crawler.politeness import SiteBudget, SiteWaits, site_interval
from crawler.scheduling.scheduler import wake_engine
from crawler.sites import site_key

logger = logging.getLogger(__name__)


class SharedPolitenessMiddleware:
    def __init__(self, crawler: Any, budget: SiteBudget) -> None:
        settings = crawler.settings
        self.crawler = crawler
        self.stats = crawler.stats
        self.budget = budget
        self.max_rps = settings.getfloat("SITE_MAX_RPS", defaults.SITE_MAX_RPS)
        self.obey_robots = settings.getbool("ROBOTSTXT_OBEY")
        self.agent = settings.get("ROBOTSTXT_USER_AGENT") or settings.get("USER_AGENT")
        self.crawl_delays: dict[str, float] = {}
        self.waits = SiteWaits.of(crawler)  # shared with the scheduler
        crawler.signals.connect(self.robots_parsed, signal=signals.robots_parsed)
        crawler.signals.connect(self.spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Any) -> SharedPolitenessMiddleware:
        budget = SiteBudget(
            get_redis_from_settings(crawler.settings), CrawlKeys(crawler.spidercls.name)
        )
        return cls(crawler, budget)

    def robots_parsed(self, robotparser: Any, request: Request) -> None:
        if not self.obey_robots:
            return
        crawl_delay = getattr(robotparser, "crawl_delay", None)
        delay = crawl_delay(self.agent) if crawl_delay is not None else None
        if delay:
            site = site_key(request.url)
            self.crawl_delays[site] = float(delay)
            logger.info(
                "robots.txt of %s asks for Crawl-delay: %s s (all workers together)", site, delay
            )

    def interval(self, url: str, site: str) -> float:
        max_rps = self.max_rps
        profiles = getattr(self.crawler.spider, "profiles", None)
        profile = profiles.for_url(url) if profiles is not None else None
        if profile is not None and profile.max_rps is not None:
            max_rps = profile.max_rps
        return site_interval(max_rps, self.crawl_delays.get(site))

    async def process_request(self, request: Request) -> None:
        site = site_key(request.url)
        interval = self.interval(request.url, site)
        if interval <= 0:
            return
        wait = self.budget.reserve(site, interval)
        self.stats.inc_value("politeness/reserved")
        if wait <= 0:
            return
        self.stats.inc_value("politeness/waited")
        self.stats.inc_value("politeness/wait_seconds", wait)
        self.waits.enter(site)
        try:
            await asyncio.sleep(wait)
        finally:
            self.waits.leave(site)
            wake_engine(self.crawler)  # a parked request of this site may go now

    def spider_closed(self, spider: Any = None) -> None:
        self.budget.server.close()
