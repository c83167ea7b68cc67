"""``PageGuard``: every request of a rendered page answered by the worker, or refused.

A page rendered in the browser asks for its scripts, its API calls (XHR, fetch),
frames, styles, WebSockets... Each request goes through :meth:`PageGuard.route`
(Playwright's route interception, installed on the page) and is refused before
any connection (``route.abort``, stat ``browser/blocked/<reason>``) when:

==============  ========================================================================
``network``     the network rule refuses its address (``ALLOW_PRIVATE_NETWORKS``,
                :mod:`crawler.net.network`), at any hop of its redirects or at connection time
``resource``    its type is one of ``BROWSER_BLOCKED_RESOURCES`` (images, media, fonts)
``frame``       it loads a frame (a frame is another page: the crawler follows links itself)
``navigation``  it takes the page elsewhere (``location.href = ...``) once it is loaded
``budget``      the page has made ``BROWSER_PAGE_MAX_REQUESTS`` requests or loaded
                ``BROWSER_PAGE_MAX_BYTES`` bytes
``scheme``      it is neither http nor https
``websocket``   a WebSocket the rule allows (the browser opens none: :meth:`websocket`)
``dialog``, ``popup``, ``download``   what a page may not open (dismissed, closed, cancelled)
==============  ========================================================================

Otherwise the worker fetches it with Scrapy's HTTP client (``fetch``: the download
handler's own, whose resolver checks the address each connection really goes to),
follows its redirects itself, checking each hop, and hands the answer to the page
(``route.fulfill``). The page's document itself was fetched before (the request the
crawler queued, through every downloader middleware) and is handed over as it came.
Chromium itself connects nowhere (:mod:`.config`: a proxy that leads nowhere).
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urljoin, urlsplit

from scrapy import Request
from scrapy.http import Response

from crawler.net.network import NetworkRule

from .config import BrowserConfig

logger = logging.getLogger(__name__)

MAX_REDIRECTS = 5
#: Headers not handed on: hop-by-hop ones, and the body's encoding (bodies are given
#: to the page as they are: the worker asks for them unencoded).
_DROPPED = frozenset(
    {"content-encoding", "content-length", "transfer-encoding", "connection", "keep-alive"}
)
_REDIRECTS = frozenset({301, 302, 303, 307, 308})

Fetch = Callable[[Request], Awaitable[Response]]


def response_headers(response: Response) -> dict[str, str]:
    """A Scrapy response's headers as ``route.fulfill`` takes them."""
    out: dict[str, str] = {}
    for name, values in response.headers.items():
        key = name.decode("latin-1").lower()
        if key in _DROPPED:
            continue
        texts = [v.decode("latin-1") for v in values]
        out[key] = ("\n" if key == "set-cookie" else ", ").join(texts)
    return out


class PageGuard:
    """The requests of one rendered page (see the module doc)."""

    def __init__(
        self,
        document: Response,
        rule: NetworkRule,
        config: BrowserConfig,
        stats: Any,
        fetch: Fetch,
    ) -> None:
        self.document = document
        self.rule = rule
        self.config = config
        self.stats = stats
        self.fetch = fetch
        self.deadline = time.monotonic() + config.page_timeout
        self.bytes = len(document.body)
        self.requests = 0
        self.page: Any = None
        self.crashed = False
        self.document_served = False
        self.blocked: dict[str, int] = {}
        #: set when the page tried to navigate away (refused): its load may never end
        self.stopped = asyncio.Event()
        #: set when the page's renderer crashed
        self.crashed_event = asyncio.Event()

    def block(self, reason: str, url: str = "") -> None:
        self.blocked[reason] = self.blocked.get(reason, 0) + 1
        self.stats.inc_value(f"browser/blocked/{reason}")
        logger.debug("Browser: refused %s (%s) on %s", url, reason, self.document.url)

    # -- requests ----------------------------------------------------------------------
    async def route(self, route: Any, request: Any) -> None:
        """Playwright's route handler for every request of the page."""
        try:
            await self._route(route, request)
        except Exception as exc:  # noqa: BLE001 -- the page closed under it, or worse
            logger.debug("Browser: route of %s ended with %r", request.url, exc)
            try:
                await route.abort("failed")
            except Exception:  # noqa: BLE001 -- handled or closed already
                pass

    async def _route(self, route: Any, request: Any) -> None:
        url = request.url
        main = self._main_frame(request)
        if request.is_navigation_request() and main and not self.document_served:
            self.document_served = True
            await route.fulfill(
                status=self.document.status,
                headers=response_headers(self.document),
                body=self.document.body,
            )
            return
        reason = self.refusal(request, main)
        if reason is not None:
            self.block(reason, url)
            if reason == "navigation":
                self.stopped.set()
            # a navigation refused as "aborted" leaves the page as it is (no error page)
            await route.abort("aborted" if reason in ("navigation", "frame") else "blockedbyclient")
            return
        self.requests += 1
        response = await self._fetch(request)
        if response is None:
            await route.abort("blockedbyclient")
            return
        self.bytes += len(response.body)
        await route.fulfill(
            status=response.status, headers=response_headers(response), body=response.body
        )

    def _main_frame(self, request: Any) -> bool:
        try:
            return bool(request.frame.parent_frame is None)
        except Exception:  # noqa: BLE001 -- a service worker's request has no frame
            return False

    def refusal(self, request: Any, main: bool) -> str | None:
        """Why a request of the page is refused before any connection, or None."""
        url = request.url
        if urlsplit(url).scheme not in ("http", "https"):
            return "scheme"
        if request.resource_type in self.config.blocked_resources:
            return "resource"
        if request.is_navigation_request():
            return "navigation" if main else "frame"
        if self.rule.refusal(url) is not None:
            return "network"
        if self.requests >= self.config.max_requests or self.bytes >= self.config.max_bytes:
            return "budget"
        return None

    async def _fetch(self, request: Any) -> Response | None:
        """The answer to a request, its redirects followed here, each hop checked; None
        when a hop is refused (counted)."""
        method = request.method
        body = request.post_data_buffer or b""
        headers = {k: v for k, v in (await request.all_headers()).items() if not k.startswith(":")}
        headers["accept-encoding"] = "identity"
        url = request.url
        for _ in range(MAX_REDIRECTS + 1):
            remaining = self.deadline - time.monotonic()
            if remaining <= 0:
                self.block("budget", url)
                return None
            scrapy_request = Request(
                url,
                method=method,
                headers=headers,
                body=body,
                dont_filter=True,
                meta={
                    "download_timeout": remaining,
                    "download_maxsize": max(1, self.config.max_bytes - self.bytes),
                    "download_warnsize": 0,
                },
            )
            try:
                response = await self.fetch(scrapy_request)
            except Exception as exc:  # noqa: BLE001
                reason = _connection_refusal(url)
                if reason is not None:
                    self.block("network", url)
                    return None
                self.stats.inc_value("browser/subrequests/failed")
                logger.debug("Browser: %s failed (%r) on %s", url, exc, self.document.url)
                return None
            location = response.headers.get(b"Location")
            if response.status not in _REDIRECTS or not location:
                return response
            url = urljoin(url, location.decode("latin-1"))
            if urlsplit(url).scheme not in ("http", "https") or self.rule.refusal(url):
                self.block("network", url)
                return None
            if response.status == 303 or (response.status in (301, 302) and method == "POST"):
                method, body = "GET", b""
        self.block("budget", url)  # too many redirects
        return None

    def crash(self) -> None:
        """The page's renderer crashed (Playwright's ``crash`` event)."""
        self.crashed = True
        self.crashed_event.set()

    # -- what else a page may try ------------------------------------------------------
    async def websocket(self, ws: Any) -> None:
        """Playwright's WebSocket route: the browser opens none (see the module doc)."""
        url = ws.url
        http = "http" + url[2:] if url.startswith("ws") else url
        self.block("network" if self.rule.refusal(http) else "websocket", url)
        try:
            await ws.close()
        except Exception:  # noqa: BLE001 -- the page is gone
            pass

    async def refuse(self, what: str, thing: Any) -> None:
        """A dialog (dismissed), a popup (closed), a download (cancelled)."""
        self.block(what)
        action = {"dialog": "dismiss", "popup": "close", "download": "cancel"}[what]
        try:
            await getattr(thing, action)()
        except Exception:  # noqa: BLE001 -- gone already
            pass


def _connection_refusal(url: str) -> str | None:
    """The resolver's refusal of the URL's host at connection time (see
    :mod:`crawler.net.resolver`), or None."""
    reactor = sys.modules.get("twisted.internet.reactor")
    refusal_for = getattr(getattr(reactor, "resolver", None), "refusal_for", None)
    host = urlsplit(url).hostname or ""
    if refusal_for is None or not host:
        return None
    reason: str | None = refusal_for(host)
    return reason
