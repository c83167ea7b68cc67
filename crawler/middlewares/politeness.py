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

A site with neither costs no round trip (until it answers 429/503: see below).
It runs after ``RobotsTxtMiddleware`` (a forbidden URL spends no slot);
robots.txt requests themselves take a slot.
AutoThrottle and ``DOWNLOAD_DELAY`` still act on the downloader's slots after
this middleware: they can only slow a site further, never past its budget.

While ``POLITENESS_MAX_WAITING_PER_SITE`` requests of a site wait in this
worker (counted in :class:`crawler.politeness.SiteWaits`), the scheduler hands
out other sites' requests first (see ``POLITENESS_PARK_MAX`` in
:class:`crawler.scheduling.scheduler.ReliableScheduler`).

**Backoff.** On the signal ``site_throttled`` (the retry middleware saw a
429/503 or a timeout, :mod:`crawler.middlewares.retry`) it cuts the site's
shared rate and pauses the site for the answer's ``Retry-After``
(:meth:`crawler.politeness.SiteBudget.cut`; ``SITE_BACKOFF_*`` settings,
``SITE_BACKOFF_ENABLED``); every worker's next slot of the site follows the new
rate, which climbs back while the site answers well. A site without budget is
reserved from then on by the workers that saw it fail, until it is free again.
One INFO line when this worker cuts a site's rate, and when its reservation
brings a site back to its budget.

Stats: ``politeness/reserved``, ``politeness/waited``, ``politeness/wait_seconds``,
``politeness/site_cuts``, ``politeness/site_restored``; crawl-wide, in
``<spider>:stats``: ``politeness_waits``, ``politeness_wait_ms``, ``site_rate_cuts``,
``site_rate_restores``.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from scrapy import Request, signals
from scrapy_redis.connection import get_redis_from_settings

from crawler import defaults
from crawler import signals as crawler_signals
from crawler.keys import CrawlKeys
from crawler.politeness import BackoffRule, SiteBudget, SiteWaits, site_interval
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
        self.backoff = settings.getbool("SITE_BACKOFF_ENABLED", defaults.SITE_BACKOFF_ENABLED)
        self.backed_off: set[str] = set()  # sites without budget that this worker saw fail
        crawler.signals.connect(self.robots_parsed, signal=signals.robots_parsed)
        crawler.signals.connect(self.site_throttled, signal=crawler_signals.site_throttled)
        crawler.signals.connect(self.spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Any) -> SharedPolitenessMiddleware:
        budget = SiteBudget(
            get_redis_from_settings(crawler.settings),
            CrawlKeys(crawler.spidercls.name),
            BackoffRule.from_settings(crawler.settings),
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
        if interval <= 0 and site not in self.backed_off:
            return
        slot = self.budget.take_slot(site, interval)
        self.stats.inc_value("politeness/reserved")
        if slot.restored:
            self.backed_off.discard(site)
            self.stats.inc_value("politeness/site_restored")
            logger.info(
                "Site %s answers well again: back to its budget (%s), all workers",
                site,
                f"{1 / interval:.3g} req/s" if interval > 0 else "none",
            )
        wait = slot.wait
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

    def site_throttled(self, request: Request, reason: str, retry_after: float | None) -> None:
        """A 429/503 or a timeout: cut the site's shared rate, pause it for ``retry_after``."""
        if not self.backoff:
            return
        site = site_key(request.url)
        interval = self.interval(request.url, site)
        try:
            cut = self.budget.cut(site, interval, retry_after or 0.0, reason)
        except Exception as exc:  # Redis away: the retry still waits; the next failure cuts
            logger.warning("Could not cut the rate of %s (%r)", site, exc)
            return
        if interval <= 0:
            self.backed_off.add(site)
        if cut.cut:
            self.stats.inc_value("politeness/site_cuts")
            pause = f", paused {retry_after:g} s (Retry-After)" if retry_after else ""
            logger.info(
                "Site %s answered %s: its rate is cut from %.3g to %.3g req/s for all workers%s",
                site,
                reason,
                cut.before,
                cut.after,
                pause,
            )

    def spider_closed(self, spider: Any = None) -> None:
        self.budget.server.close()
