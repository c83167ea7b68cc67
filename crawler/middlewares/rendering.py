"""``BrowserRenderingMiddleware``: which requests go through the headless browser.

A downloader middleware (``DOWNLOADER_MIDDLEWARES``, 590: after the retries, before
the redirects). A request that needs a browser carries ``meta["playwright"] = True``
(scrapy-playwright's own opt-in, read by :class:`crawler.browser.handler.BrowserDownloadHandler`;
a plain JSON value, so it travels with the request through the shared queue) and
``meta["render_reason"]`` (why: ``seed``, ``always``, ``site``, ``shell``).

``process_request`` marks a request when this worker can render
(:attr:`crawler.browser.config.BrowserConfig.can_render`) and

* its seed says ``render: true`` (:mod:`crawler.scope`; ``render: false`` never renders);
* or ``BROWSER_RENDERING=always``;
* or, in ``auto``, its site (or its section of the site) is remembered as needing a
  browser (``<spider>:browser_sites``, :class:`crawler.browser.sites.BrowserSites`).

``process_response`` (``auto`` only, for a page fetched plainly with status 200):
when the page looks like an application shell (:func:`crawler.browser.shell.looks_like_app_shell`)
and its HTML gives no product, no embedded state and no link to follow
(:func:`crawler.browser.shell.gives_nothing`), its site (or section) is remembered and the request
is issued again, marked: Scrapy queues the returned request in the shared queue, and
it takes over the lease of the first (as a redirect or a retry does), so nothing is
lost if the worker dies in between. The page's plain response is dropped; the
rendered one is parsed, typed, validated and stored like any other.

A worker that cannot render (``BROWSER_RENDERING=never``, ``BROWSER_CONCURRENCY=0``, no
browser installed) marks nothing and re-issues nothing; without a browser it says so
once (WARNING). A request another worker marked is then fetched plainly by the download
handler (``browser/unavailable``): routing such requests to the workers that can render
them is not done yet.
Stats: ``browser/marked/<reason>``, ``browser/shells``, ``browser/sites_found``.
"""

from __future__ import annotations

import logging
from typing import Any

from scrapy import Request
from scrapy.exceptions import NotConfigured
from scrapy.http import HtmlResponse, Response
from scrapy_redis.connection import get_redis_from_settings

from crawler.browser.config import BrowserConfig
from crawler.browser.shell import gives_nothing, looks_like_app_shell
from crawler.browser.sites import BrowserSites
from crawler.config import worker_id
from crawler.keys import SPIDER_NAME, CrawlKeys
from crawler.scope import Scope

logger = logging.getLogger(__name__)

BROWSER_META_KEY = "playwright"
REASON_META_KEY = "render_reason"


def needs_browser(request: Any) -> bool:
    """Is ``request`` marked to be rendered in the browser?"""
    return bool(request.meta.get(BROWSER_META_KEY))


def render_reason(request: Any, mode: str, sites: BrowserSites) -> str | None:
    """Why ``request`` is to be rendered before it is fetched (``seed``, ``always``,
    ``site``), or None: the one rule, for :meth:`BrowserRenderingMiddleware.process_request`
    and for whatever must know it when a request is queued. ``mode`` is
    ``BROWSER_RENDERING``; ``never`` renders nothing."""
    if mode == "never":
        return None
    choice = Scope.of(request.meta).render
    if choice != "auto":
        return "seed" if choice == "true" else None
    if mode == "always":
        return "always"
    return "site" if sites.needs_browser(request.url) else None


class BrowserRenderingMiddleware:
    def __init__(self, crawler: Any, config: BrowserConfig, sites: BrowserSites) -> None:
        self.crawler = crawler
        self.stats = crawler.stats
        self.config = config
        self.sites = sites

    @classmethod
    def from_crawler(cls, crawler: Any) -> BrowserRenderingMiddleware:
        settings = crawler.settings
        config = BrowserConfig.from_settings(settings)
        if not config.can_render:
            config.announce()  # one WARNING when the browser is missing
            raise NotConfigured
        keys = CrawlKeys.from_settings(
            settings, getattr(crawler.spidercls, "name", None) or SPIDER_NAME
        )
        sites = BrowserSites(
            get_redis_from_settings(settings),
            keys.browser_sites,
            worker_id(settings),
            config.sites_refresh,
        )
        return cls(crawler, config, sites)

    def _mark(self, request: Request, reason: str) -> None:
        request.meta[BROWSER_META_KEY] = True
        request.meta[REASON_META_KEY] = reason
        self.stats.inc_value(f"browser/marked/{reason}")

    def process_request(self, request: Request, spider: Any = None) -> None:
        if needs_browser(request):
            return None
        reason = render_reason(request, self.config.mode, self.sites)
        if reason is not None:
            self._mark(request, reason)
        return None

    def process_response(
        self, request: Request, response: Response, spider: Any = None
    ) -> Request | Response:
        if (
            self.config.mode != "auto"
            or needs_browser(request)
            or response.status != 200
            or not isinstance(response, HtmlResponse)
            or Scope.of(request.meta).render == "false"
        ):
            return response
        if not looks_like_app_shell(response) or not gives_nothing(response):
            return response
        self.stats.inc_value("browser/shells")
        scope = self.sites.remember(response.url)
        if scope is not None:
            self.stats.inc_value("browser/sites_found")
            logger.info("%s is built in the browser: its pages are rendered from now on", scope)
        again = request.replace(dont_filter=True)  # its meta carries the lease over
        self._mark(again, "shell")
        return again
