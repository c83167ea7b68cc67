"""``SharedPolitenessMiddleware``: every worker together stays within a site's budget.

Scrapy's ``DOWNLOAD_DELAY`` and AutoThrottle space the requests of one process;
three workers with them hit a site three times as hard as one. This downloader
middleware asks Redis for the site's next slot before each request (one atomic
round trip, see :class:`crawler.policy.politeness.SiteBudget`) and, when the slot is
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
worker (counted in :class:`crawler.policy.politeness.SiteWaits`), the scheduler hands
out other sites' requests first (see ``POLITENESS_PARK_MAX`` in
:class:`crawler.scheduling.scheduler.ReliableScheduler`).

**Backoff.** On the signal ``site_throttled`` (the retry middleware saw a
429/503 or a timeout, :mod:`crawler.middlewares.retry`) it cuts the site's
shared rate — at once for a 429 or an answer with ``Retry-After``; for a 503 or
a timeout, once they are ``SITE_BACKOFF_ERROR_SHARE`` of the site's last
``SITE_BACKOFF_WINDOW`` answers in this worker (a page failing now and then is
only retried) — and pauses the site for the answer's ``Retry-After``. A request
of this worker that was waiting for a slot taken before the cut takes a new one
(:meth:`crawler.policy.politeness.SiteBudget.cut`; ``SITE_BACKOFF_*`` settings,
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
from collections import Counter, defaultdict, deque
from typing import Any

from scrapy import Request, signals
from scrapy.http import Response
from scrapy_redis.connection import get_redis_from_settings

from crawler.core import defaults
from crawler.core import signals as crawler_signals
from crawler.core.keys import CrawlKeys
from crawler.core.sites import site_key
from crawler.policy.politeness import BackoffRule, SiteBudget, SiteWaits, site_interval
from crawler.scheduling.scheduler import wake_engine

logger = logging.getLogger(__name__)

RETAKES = 3  # times a waiting request takes a new slot after its site was cut meanwhile
MIN_FAILURES = 3  # 503s or timeouts among the site's last answers before they cut its rate


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
        self.error_share = settings.getfloat(
            "SITE_BACKOFF_ERROR_SHARE", defaults.SITE_BACKOFF_ERROR_SHARE
        )
        window = max(1, settings.getint("SITE_BACKOFF_WINDOW", defaults.SITE_BACKOFF_WINDOW))
        self.cut_epoch: Counter[str] = Counter()  # cuts and pauses of a site seen here
        # the site's last answers in this worker: True for a 503 or a timeout
        self.recent: defaultdict[str, deque[bool]] = defaultdict(lambda: deque(maxlen=window))
        crawler.signals.connect(self.robots_parsed, signal=signals.robots_parsed)
        crawler.signals.connect(self.site_throttled, signal=crawler_signals.site_throttled)
        crawler.signals.connect(self.spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Any) -> SharedPolitenessMiddleware:
        budget = SiteBudget(
            get_redis_from_settings(crawler.settings),
            CrawlKeys.from_settings(crawler.settings, crawler.spidercls.name),
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
        for _ in range(RETAKES + 1):
            epoch = self.cut_epoch[site]
            if not await self._take_slot(site, interval):
                return
            if self.cut_epoch[site] == epoch:
                return
            # the site was cut or paused while this request waited for a slot taken at
            # the old pace: take a new one rather than go out at the old pace
            self.stats.inc_value("politeness/retaken")

    async def _take_slot(self, site: str, interval: float) -> bool:
        """Take the site's next slot and wait for it; whether there was a wait."""
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
            return False
        self.stats.inc_value("politeness/waited")
        self.stats.inc_value("politeness/wait_seconds", wait)
        self.waits.enter(site)
        try:
            await asyncio.sleep(wait)
        finally:
            self.waits.leave(site)
            wake_engine(self.crawler)  # a parked request of this site may go now
        return True

    def process_response(self, request: Request, response: Response) -> Response:
        if self.backoff:  # retried answers stop at the retry middleware: they are signalled
            self.recent[site_key(request.url)].append(False)
        return response

    def broad_failure(self, site: str) -> bool:
        """Are 503s and timeouts a broad share of the site's last answers here?"""
        recent = self.recent[site]
        recent.append(True)
        failures = sum(recent)
        return failures >= MIN_FAILURES and failures >= self.error_share * len(recent)

    def site_throttled(self, request: Request, reason: str, retry_after: float | None) -> None:
        """A 429/503 or a timeout: cut the site's shared rate, pause it for ``retry_after``.

        A 429 or a Retry-After always cuts; a 503 or a timeout only while such
        failures are a broad share of the site's last answers (``SITE_BACKOFF_ERROR_SHARE``).
        """
        if not self.backoff:
            return
        site = site_key(request.url)
        broad = self.broad_failure(site) if reason != "HTTP 429" else True
        if not broad and not retry_after:
            return  # a page failing now and then: its retry is enough
        interval = self.interval(request.url, site)
        try:
            cut = self.budget.cut(site, interval, retry_after or 0.0, reason)
        except Exception as exc:  # Redis away: the retry still waits; the next failure cuts
            logger.warning("Could not cut the rate of %s (%r)", site, exc)
            return
        if interval <= 0:
            self.backed_off.add(site)
        if cut.cut or retry_after:
            self.cut_epoch[site] += 1
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
