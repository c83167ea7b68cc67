"""``BrowserRouting``: which shared queue a request waits in, and which a worker pops.

Rendering capacity is per worker (``BROWSER_CONCURRENCY``), so the crawl has two
shared queues (:mod:`crawler.core.keys`): ``<spider>:requests`` and
``<spider>:browser_requests``, the second for the requests that need a headless
browser, laid out the same way (lanes, index, sorted set:
:mod:`crawler.scheduling.lanes`) and in the same shard on a Redis Cluster.

**Where a request goes.** When a request is queued (the scheduler's
``enqueue_request``: a link, a seed's first requests, a retry, a redirect, the
shell found by :class:`~crawler.middlewares.rendering.BrowserRenderingMiddleware`
issued again) :meth:`BrowserRouting.route` marks it (``meta["playwright"]``,
``meta["render_reason"]``) when :func:`render_reason` says it needs a browser: its
seed says ``render: true``, ``BROWSER_RENDERING=always``, or its site (or section)
is remembered in ``<spider>:browser_sites``; a marked request goes to the browser
queue. So the pages of a site known to need a browser wait there from the start,
and no worker without a browser ever takes one.

**Who pops what.** A worker that can render (:attr:`BrowserConfig.can_render`) pops
the browser queue too, while it holds fewer than ``BROWSER_CONCURRENCY x
BROWSER_HOLD_PER_SLOT`` requests that need a browser (:meth:`BrowserRouting.room`),
and counts it as its work (idleness, wake-ups); a worker that cannot pops only the
plain queue and does not count the other as its work: it may close for idleness
while pages wait for a browser (it says how many, once).

**Hand-over.** A marked request can still reach the plain queue: a dead worker's
lease recovered where it came from, a queue written before the browser queue, a
site found to need a browser after its pages were queued (:meth:`route` at the pop
marks those). A worker that cannot render gives such a request to the browser queue
at once, its lease moving in the same atomic call (it is never fetched plainly,
never lost, never a dead letter): stat ``browser/handed_over``
(:class:`crawler.scheduling.scheduler.ReliableScheduler`).

``BROWSER_RENDERING=never`` is this worker's choice to render nothing and to look
for nothing to render: it marks no request and detects no shell (a page it fetches
is parsed as it is). A request another worker marked is still handed over, not
fetched plainly. ``BROWSER_CONCURRENCY=0`` (or no browser installed) is a worker
that renders nothing but routes as every other: it marks, detects shells and
hands them to the browser workers.

A robots.txt or a sitemap is never rendered.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit
from weakref import WeakKeyDictionary

from scrapy_redis.connection import get_redis_from_settings

from crawler.browser.config import BrowserConfig
from crawler.browser.sites import BrowserSites
from crawler.core.config import worker_id
from crawler.core.keys import SPIDER_NAME, CrawlKeys
from crawler.policy.scope import Scope
from crawler.policy.sitemaps import SITEMAP_META_KEY

BROWSER_META_KEY = "playwright"
REASON_META_KEY = "render_reason"

_ROUTINGS: WeakKeyDictionary[Any, BrowserRouting] = WeakKeyDictionary()


def needs_browser(request: Any) -> bool:
    """Is ``request`` marked to be rendered in the browser?"""
    return bool(request.meta.get(BROWSER_META_KEY))


def never_rendered(request: Any) -> bool:
    """A robots.txt or a sitemap: read as text, whatever its site needs."""
    return SITEMAP_META_KEY in request.meta or urlsplit(request.url).path == "/robots.txt"


def render_reason(request: Any, mode: str, sites: BrowserSites) -> str | None:
    """Why ``request`` is to be rendered before it is fetched (``seed``, ``always``,
    ``site``), or None: the one rule, for the queue (:meth:`BrowserRouting.route`) and
    the rendering middleware. ``mode`` is ``BROWSER_RENDERING``; ``never`` renders
    nothing."""
    if mode == "never" or never_rendered(request):
        return None
    choice = Scope.of(request.meta).render
    if choice != "auto":
        return "seed" if choice == "true" else None
    if mode == "always":
        return "always"
    return "site" if sites.needs_browser(request.url) else None


def mark(request: Any, reason: str) -> None:
    """Mark ``request`` to be rendered, and why."""
    request.meta[BROWSER_META_KEY] = True
    request.meta[REASON_META_KEY] = reason


class BrowserRouting:
    """The crawler's routing (one per crawler: :meth:`of`)."""

    def __init__(self, config: BrowserConfig, sites: BrowserSites) -> None:
        self.config = config
        self.sites = sites

    @classmethod
    def of(cls, crawler: Any) -> BrowserRouting:
        """The crawler's routing, made at the first ask (the queue's or the middleware's)."""
        routing = _ROUTINGS.get(crawler)
        if routing is None:
            settings = crawler.settings
            config = BrowserConfig.from_settings(settings)
            keys = CrawlKeys.from_settings(
                settings, getattr(crawler.spidercls, "name", None) or SPIDER_NAME
            )
            sites = BrowserSites(
                get_redis_from_settings(settings),
                keys.browser_sites,
                worker_id(settings),
                config.sites_refresh,
            )
            routing = _ROUTINGS[crawler] = cls(config, sites)
        return routing

    @property
    def can_render(self) -> bool:
        """This worker renders: it pops the browser queue and counts it as its work."""
        return self.config.can_render

    @property
    def hold(self) -> int:
        """Requests that need a browser this worker may hold at once (0: it renders none)."""
        return self.config.concurrency * self.config.hold_per_slot if self.can_render else 0

    def room(self, held: int) -> int:
        """How many more it may pop, holding ``held`` (in the downloader, popped, set aside)."""
        return max(0, self.hold - held)

    def route(self, request: Any) -> bool:
        """Does ``request`` go to the browser queue? Marks it first when it needs a
        browser and is not marked yet (see the module's doc)."""
        if needs_browser(request):
            return True
        reason = render_reason(request, self.config.mode, self.sites)
        if reason is None:
            return False
        mark(request, reason)
        return True

    def hand_over(self, request: Any) -> bool:
        """Must this worker give ``request`` (popped from the plain queue) to the browser
        queue? It needs a browser and this worker cannot render."""
        return not self.can_render and self.route(request)
