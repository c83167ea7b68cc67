"""A request budget per site, shared by every worker through Redis.

Each site (host and port, as :func:`crawler.sites.site_key` says) has one key,
``<spider>:polite:<site>``, holding the earliest time (Redis clock, ms) at which
the next request to the site may start. :meth:`SiteBudget.reserve` is one Lua
script, so one atomic round trip per request: it takes the slot at
``max(now, next)``, moves ``next`` on by the site's interval, and returns how
long the caller must wait for its slot. N workers reserving slots of the same
key are spaced by the interval between them all, so together they never exceed
``1 / interval`` requests per second over any window. The key expires a minute
after its last slot: an idle site costs nothing. Every wait is also counted in
the crawl's stats hash (``politeness_waits``, ``politeness_wait_ms``), in the
same script.

:class:`SiteWaits` is the worker's local view: how many of its requests are
waiting for a slot of each site, so the scheduler can hand out requests of other
sites first (see :class:`crawler.scheduling.scheduler.ReliableScheduler`). It is
an extension (``EXTENSIONS``), one per crawler, found with ``SiteWaits.of(crawler)``.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import redis

from crawler import defaults
from crawler.keys import CrawlKeys
from crawler.sites import site_key

# KEYS: the site's key, the crawl's stats hash. ARGV: interval in ms.
# Returns the wait in ms before the slot; counts waits in the stats hash.
_RESERVE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local interval = tonumber(ARGV[1])
local nxt = tonumber(redis.call('GET', KEYS[1]) or '0')
local at = math.max(now, nxt)
redis.call('SET', KEYS[1], at + interval, 'PX', at + interval - now + 60000)
if at > now then
  redis.call('HINCRBY', KEYS[2], 'politeness_waits', 1)
  redis.call('HINCRBY', KEYS[2], 'politeness_wait_ms', at - now)
end
return at - now
"""


def site_interval(max_rps: float, crawl_delay: float | None) -> float:
    """Seconds between two requests to a site: the stricter of the budget and Crawl-delay."""
    interval = 1.0 / max_rps if max_rps > 0 else 0.0
    return max(interval, crawl_delay or 0.0)


class SiteBudget:
    """The shared next-allowed times of every site of a crawl (one Lua call per request)."""

    def __init__(self, server: redis.Redis, keys: CrawlKeys) -> None:
        self.server = server
        self.keys = keys
        self._reserve = server.register_script(_RESERVE)

    def reserve(self, site: str, interval: float) -> float:
        """Take the site's next slot; returns the seconds to wait until it (0: go now)."""
        wait_ms = self._reserve(
            keys=[self.keys.polite(site), self.keys.stats], args=[int(interval * 1000)]
        )
        return max(0, int(wait_ms)) / 1000.0


class SiteWaits:
    """Requests of this worker waiting for a site's slot, per site.

    A site is busy while ``POLITENESS_MAX_WAITING_PER_SITE`` of its requests wait.
    """

    def __init__(self, max_waiting: int = 0) -> None:
        self.max_waiting = max_waiting  # 0: never busy (the scheduler parks nothing)
        self.waiting: Counter[str] = Counter()

    @classmethod
    def from_crawler(cls, crawler: Any) -> SiteWaits:
        return cls(
            crawler.settings.getint(
                "POLITENESS_MAX_WAITING_PER_SITE", defaults.POLITENESS_MAX_WAITING_PER_SITE
            )
        )

    @classmethod
    def of(cls, crawler: Any) -> SiteWaits:
        """The crawler's site waits (``crawler.get_extension``); RuntimeError when not enabled."""
        waits = crawler.get_extension(cls)
        if waits is None:
            raise RuntimeError("crawler.politeness.SiteWaits must be enabled in EXTENSIONS")
        return waits

    def busy(self, url: str) -> bool:
        """Whether enough requests of this URL's site wait already: give others a turn."""
        return bool(self.max_waiting) and self.waiting[site_key(url)] >= self.max_waiting

    def enter(self, site: str) -> None:
        self.waiting[site] += 1

    def leave(self, site: str) -> None:
        self.waiting[site] -= 1
        if self.waiting[site] <= 0:
            del self.waiting[site]
