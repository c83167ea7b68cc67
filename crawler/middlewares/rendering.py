"""``BrowserRenderingMiddleware``: which requests go through the headless browser.

A downloader middleware (``DOWNLOADER_MIDDLEWARES``, 590: after the retries, before
the redirects). A request that needs a browser carries ``meta["playwright"] = True``
(scrapy-playwright's own opt-in, read by :class:`crawler.browser.handler.BrowserDownloadHandler`;
a plain JSON value, so it travels with the request through the shared queue) and
``meta["render_reason"]`` (why: ``seed``, ``always``, ``site``, ``shell``).

Requests are marked when they are queued, and wait for a worker with a browser in the
crawl's browser queue (:mod:`crawler.browser.routing`, which holds the rule,
:func:`~crawler.browser.routing.render_reason`): its seed says ``render: true``
(:mod:`crawler.policy.scope`; ``render: false`` never renders), or ``BROWSER_RENDERING=always``,
or, in ``auto``, its site (or its section of the site) is remembered as needing a
browser (``<spider>:browser_sites``, :class:`crawler.browser.sites.BrowserSites`).
``process_request``, on a worker that renders, marks by the same rule a request that
was queued before its site was found to need a browser, and counts every page it takes
to render by its reason (``browser/marked/<reason>``).

``process_response`` (``auto`` only, for a page fetched plainly with status 200):
when the page looks like an application shell (:func:`crawler.browser.shell.looks_like_app_shell`)
and its HTML gives no product, no embedded state and no link to follow
(:func:`crawler.browser.shell.gives_nothing`), its site (or section) is remembered and the request
is issued again, marked: Scrapy queues the returned request, which goes to the browser
queue and takes over the lease of the first (as a redirect or a retry does), so nothing
is lost if the worker dies in between. The page's plain response is dropped; the
rendered one is parsed, typed, validated and stored like any other.

This runs on every worker in ``auto``, whether it renders or not: a worker with
``BROWSER_CONCURRENCY=0`` (or without a browser, which it says once, WARNING) finds
shells too and hands them to the workers that render. ``BROWSER_RENDERING=never``
turns the middleware off: that worker marks nothing and looks for no shell (a
request another worker marked is still handed over, never fetched plainly: the
scheduler sees to it).
Stats: ``browser/marked/<reason>``, ``browser/shells``, ``browser/sites_found``.
"""

from __future__ import annotations

import logging
from typing import Any

from scrapy import Request
from scrapy.exceptions import NotConfigured
from scrapy.http import HtmlResponse, Response

from crawler.browser.routing import (
    REASON_META_KEY,
    BrowserRouting,
    mark,
    needs_browser,
    render_reason,
)
from crawler.browser.shell import gives_nothing, looks_like_app_shell
from crawler.policy.scope import Scope

logger = logging.getLogger(__name__)


class BrowserRenderingMiddleware:
    def __init__(self, crawler: Any, routing: BrowserRouting) -> None:
        self.crawler = crawler
        self.stats = crawler.stats
        self.routing = routing
        self.config = routing.config
        self.sites = routing.sites

    @classmethod
    def from_crawler(cls, crawler: Any) -> BrowserRenderingMiddleware:
        routing = BrowserRouting.of(crawler)
        routing.config.announce()  # one WARNING when the browser is missing
        if routing.config.mode == "never":
            raise NotConfigured
        return cls(crawler, routing)

    def process_request(self, request: Request, spider: Any = None) -> None:
        if not self.routing.can_render:
            return None  # the scheduler hands what needs a browser to those that render
        if not needs_browser(request):
            reason = render_reason(request, self.config.mode, self.sites)
            if reason is None:
                return None
            mark(request, reason)
        self.stats.inc_value(f"browser/marked/{request.meta.get(REASON_META_KEY) or 'other'}")
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
        mark(again, "shell")  # to the browser queue (crawler/browser/routing.py)
        return again
