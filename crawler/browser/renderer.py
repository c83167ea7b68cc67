"""``PageRenderer``: scrapy-playwright's download handler, bounded and guarded, renders pages.

Built by :class:`crawler.browser.handler.BrowserDownloadHandler` at the first page to
render (one per crawler, shared by the http and https handlers), never registered with
Scrapy itself. :meth:`PageRenderer.render` takes a request marked
``meta["playwright"]`` and:

1. fetches it as usual (the document: every downloader middleware has seen the
   request, the resolver checks the connection); a document that is not an HTML page
   with status 200 (a redirect, an error, robots.txt, a sitemap) is returned as it is,
   unrendered (a redirect's new request is marked too, and checked like any);
2. renders it with scrapy-playwright in Debian's Chromium (:mod:`.config`): a page in
   the site's own browser context (``site:<site>``: cookies and storage never shared
   between sites; at most ``BROWSER_MAX_CONTEXTS`` open, the least recently used idle
   one closed first), the document handed over as fetched, every other request of the
   page answered or refused by a :class:`~.guard.PageGuard`, dialogs, popups and
   downloads refused; the DOM is taken once the page is loaded and its network idle,
   at most ``BROWSER_SETTLE_TIME`` after its load event (a load event that does not
   come: see :meth:`PageRenderer._settle`);
3. returns an ``HtmlResponse`` of the rendered DOM (flag ``playwright``), which the
   spider parses like any page.

Budgets: ``BROWSER_PAGE_TIMEOUT`` for the whole page (past it, or when its renderer
crashes, the page is closed, and the browser restarted when it does not close),
``BROWSER_PAGE_MAX_BYTES`` and ``BROWSER_PAGE_MAX_REQUESTS``. A page that fails raises
:class:`~.errors.RenderFailed` (``timeout``, ``crash``, ``too_large``, ``launch``,
``error``): retried through the shared queue, then a dead letter with its reason.

At most ``BROWSER_CONCURRENCY`` pages render at once. Nothing starts before the first
page to render. The browser is restarted between two pages after
``BROWSER_RESTART_PAGES`` pages, or when its processes use more than
``BROWSER_MAX_MEMORY_MB``; one that crashed is launched again for the next page.

Stats: ``browser/rendered``, ``browser/errors/<kind>``, ``browser/blocked/<reason>``
(:mod:`.guard`), ``browser/not_rendered`` (documents returned as they came),
``browser/no_load_event``, ``browser/launches``, ``browser/restarts/<reason>``,
``browser/disconnected``, ``browser/contexts/closed``.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import socket
import time
from typing import Any

from playwright.async_api import Error as PlaywrightError
from scrapy import Request
from scrapy.core.downloader.handlers.http11 import HTTP11DownloadHandler
from scrapy.http import HtmlResponse, Response
from scrapy_playwright.handler import ScrapyPlaywrightDownloadHandler

from crawler.core.sites import site_key
from crawler.net.network import NetworkRule

from . import processes
from .config import BrowserConfig
from .errors import RenderFailed
from .guard import PageGuard

logger = logging.getLogger(__name__)

_GUARD: contextvars.ContextVar[PageGuard | None] = contextvars.ContextVar("guard", default=None)
#: Meta keys set for scrapy-playwright while a page renders, removed afterwards (they
#: must not travel through the queue with a retry).
_RUNTIME_META = (
    "playwright_context",
    "playwright_context_kwargs",
    "playwright_page_goto_kwargs",
    "playwright_security_details",
    "playwright_suggested_filename",
)
MEMORY_CHECK_EVERY = 10  # pages between two looks at the browser's memory
CLOSE_TIMEOUT = 10.0


class _PageFailureAsDebug(logging.Filter):
    """scrapy-playwright logs a page that failed as a WARNING with its traceback; here
    the failure is a :class:`RenderFailed` with its reason (retried, then a dead
    letter), so that line is kept at DEBUG, without the traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        if str(record.msg).startswith("Closing page due to failed request"):
            record.levelno, record.levelname = logging.DEBUG, "DEBUG"
            record.exc_info = record.exc_text = None
        return True


_PLAYWRIGHT_LOG = logging.getLogger("scrapy-playwright")
if not any(isinstance(f, _PageFailureAsDebug) for f in _PLAYWRIGHT_LOG.filters):
    _PLAYWRIGHT_LOG.addFilter(_PageFailureAsDebug())


class PageRenderer(ScrapyPlaywrightDownloadHandler):
    def __init__(self, crawler: Any) -> None:
        super().__init__(crawler)
        self.crawler = crawler
        self.browser_config = BrowserConfig.from_settings(crawler.settings)
        self.rule = NetworkRule.from_settings(crawler.settings)
        self.config.max_pages_per_context = max(1, self.browser_config.concurrency)
        self.config.max_contexts = None  # contexts are closed here, least recently used first
        self.config.navigation_timeout_ms = self.browser_config.page_timeout * 1000
        self.config.restart_disconnected_browser = True
        self.process_request_headers = None
        self.abort_request = None
        self._slots = asyncio.Semaphore(max(1, self.browser_config.concurrency))
        self._start_lock = asyncio.Lock()
        self._dead_proxy: socket.socket | None = None
        self._context_used: dict[str, float] = {}
        self._in_flight = 0
        self._rendered = 0
        self._restart_due: str | None = None
        self._restarted = asyncio.Event()
        self._counted_browser: Any = None
        #: the temporary profile of each browser launched and not known gone, with its
        #: process singleton's directory (:meth:`_tidy_profiles`)
        self._profiles: dict[str, str | None] = {}

    # -- scrapy-playwright's start-up, made lazy ------------------------------------------
    async def _maybe_launch_in_thread(self) -> None:
        """Nothing at engine start: the driver starts with the first page to render."""

    def _engine_started(self) -> Any:  # the same, for Scrapy before 2.14
        return None

    async def _ensure_started(self) -> None:
        async with self._start_lock:
            if getattr(self, "browser_provider", None) is not None:
                return
            if self._dead_proxy is None:
                self._dead_proxy = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                self._dead_proxy.bind(("127.0.0.1", 0))  # bound, never listening: refused
            port = self._dead_proxy.getsockname()[1]
            self.config.launch_options = self.browser_config.launch_options(
                f"http://127.0.0.1:{port}"
            )
            await self._launch()

    async def _maybe_launch_browser(self) -> None:
        await super()._maybe_launch_browser()
        browser = self.__dict__.get("browser")
        if browser is not None and browser is not self._counted_browser:
            self._counted_browser = browser
            self.stats.inc_value("browser/launches")
            self._tidy_profiles()

    # -- pages -------------------------------------------------------------------------
    async def render(self, request: Request) -> Response:
        """The rendered page of a marked request (see the module doc)."""
        headers = request.headers.copy()
        headers["Accept-Encoding"] = "identity"  # the page gets the body as it is
        plain = request.replace(headers=headers)
        document = await HTTP11DownloadHandler.download_request(self, plain)
        if document.status != 200 or not isinstance(document, HtmlResponse):
            self.stats.inc_value("browser/not_rendered")
            return document.replace(request=request)
        async with self._slots:
            await self._enter()
            try:
                response = await self._render_page(request, document)
            finally:
                await self._leave()
        self.stats.inc_value("browser/rendered")
        return response

    async def _render_page(self, request: Request, document: Response) -> Response:
        config = self.browser_config
        guard = PageGuard(document, self.rule, config, self.stats, self._fetch)
        token = _GUARD.set(guard)
        site = request.meta.get("site") or site_key(request.url)
        request.meta.update(
            playwright_context=f"site:{site}",
            playwright_context_kwargs={"accept_downloads": False, "service_workers": "block"},
            # committed, then loaded (_settle): a navigation the page starts before its load
            # (refused by the guard) must not fail the page
            playwright_page_goto_kwargs={"wait_until": "commit"},
        )
        try:
            try:
                await self._ensure_started()
            except Exception as exc:
                raise RenderFailed("launch", f"{type(exc).__name__}: {exc}") from None
            response = await self._within_budget(request, guard)
        except RenderFailed as exc:
            self._failed(exc)
            raise
        except Exception as exc:
            await self._abandon(guard)
            crashed = guard.crashed or "crash" in str(exc).lower() or "closed" in str(exc).lower()
            kind = "crash" if crashed else "error"
            raise self._failed(RenderFailed(kind, f"{type(exc).__name__}: {exc}"[:300])) from None
        finally:
            _GUARD.reset(token)
            for key in _RUNTIME_META:
                request.meta.pop(key, None)
        if len(response.body) > config.max_bytes:
            raise self._failed(
                RenderFailed("too_large", f"the rendered page has {len(response.body)} bytes")
            )
        return response

    async def _within_budget(self, request: Request, guard: PageGuard) -> Response:
        """scrapy-playwright's download of the page, ended by the page's budget or by the
        crash of its renderer, whichever comes first."""
        work = asyncio.ensure_future(self._download_request(request))
        crash = asyncio.ensure_future(guard.crashed_event.wait())
        remaining = max(1.0, guard.deadline - time.monotonic())
        try:
            await asyncio.wait({work, crash}, timeout=remaining, return_when="FIRST_COMPLETED")
        finally:
            crash.cancel()
        if work.done():
            response: Response = work.result()
            return response
        work.cancel()
        await self._abandon(guard)
        if guard.crashed:
            raise RenderFailed("crash", "the page's renderer crashed")
        budget = self.browser_config.page_timeout
        raise RenderFailed("timeout", f"not rendered within BROWSER_PAGE_TIMEOUT={budget:g} s")

    def _failed(self, error: RenderFailed) -> RenderFailed:
        self.stats.inc_value(f"browser/errors/{error.kind}")
        return error

    async def _fetch(self, request: Request) -> Response:
        """A request of a rendered page, by Scrapy's HTTP/1.1 client (see :mod:`.guard`)."""
        return await HTTP11DownloadHandler.download_request(self, request)

    async def _apply_page_methods(self, page: Any, request: Request, spider: Any) -> None:
        """Between the navigation and the DOM: :meth:`_settle` (scrapy-playwright's page
        methods would wait for the load event again, for the whole budget)."""
        await self._settle(page)

    async def _settle(self, page: Any) -> None:
        """Wait for the page's load event, then until its network is idle, at most
        ``BROWSER_SETTLE_TIME``.

        The load event is awaited for half the page's budget at most, and for
        ``BROWSER_SETTLE_TIME`` once the page tried to navigate away (refused: Chromium
        then stops loading the page, and its load event may never come). The DOM is
        then taken as it is."""
        guard = _GUARD.get()
        settle = self.browser_config.settle_time
        if guard is not None:
            load = asyncio.ensure_future(page.wait_for_load_state("load", timeout=0))
            stopped = asyncio.ensure_future(guard.stopped.wait())
            try:
                half = max(1.0, (guard.deadline - time.monotonic()) / 2)
                await asyncio.wait({load, stopped}, timeout=half, return_when="FIRST_COMPLETED")
                if not load.done() and stopped.done():
                    await asyncio.wait({load}, timeout=settle)
                if not load.done():
                    self.stats.inc_value("browser/no_load_event")
            finally:
                for task in (load, stopped):
                    task.cancel()
        try:
            await page.wait_for_load_state(
                "networkidle", timeout=self.browser_config.settle_time * 1000
            )
        except PlaywrightError:  # still busy (polling, a stream): take the DOM as it is
            pass

    # -- pages and contexts ------------------------------------------------------------
    def _make_request_handler(self, **kwargs: Any) -> Any:
        guard = _GUARD.get()
        if guard is None:  # not a page of ours: refuse everything

            async def refuse(route: Any, request: Any) -> None:
                await route.abort("blockedbyclient")

            return refuse
        return guard.route

    async def _create_page(self, request: Request, spider: Any) -> Any:
        name = request.meta["playwright_context"]
        await self._make_room(name)
        page = await super()._create_page(request, spider)
        self._context_used[name] = time.monotonic()
        guard = _GUARD.get()
        if guard is not None:
            guard.page, guard.document_served, guard.stopped = page, False, asyncio.Event()
            guard.crashed, guard.crashed_event = False, asyncio.Event()
            page.on("crash", lambda *_: guard.crash())
            for event in ("dialog", "popup", "download"):
                page.on(
                    event,
                    lambda thing, what=event: asyncio.ensure_future(guard.refuse(what, thing)),
                )
            await page.route_web_socket("**", guard.websocket)
        return page

    async def _make_room(self, name: str) -> None:
        """Close the least recently used idle contexts while too many are open."""
        while name not in self.context_wrappers and (
            len(self.context_wrappers) >= self.browser_config.max_contexts
        ):
            idle = [n for n, w in self.context_wrappers.items() if not w.context.pages]
            if not idle:
                return  # all busy: one more for a while
            oldest = min(idle, key=lambda n: self._context_used.get(n, 0.0))
            wrapper = self.context_wrappers.pop(oldest)
            self._context_used.pop(oldest, None)
            self.stats.inc_value("browser/contexts/closed")
            try:
                await asyncio.wait_for(wrapper.context.close(), CLOSE_TIMEOUT)
            except Exception:  # noqa: BLE001 -- the browser went away: a restart follows
                self._restart_due = self._restart_due or "stuck"

    async def _abandon(self, guard: PageGuard) -> None:
        """Close a page that failed or ran out of time; a page that does not close gets
        its browser restarted."""
        page = guard.page
        if page is None or page.is_closed():
            return
        try:
            await asyncio.wait_for(page.close(run_before_unload=False), CLOSE_TIMEOUT)
        except Exception:  # noqa: BLE001
            self._restart_due = self._restart_due or "stuck"

    # -- the browser's life ------------------------------------------------------------
    async def _enter(self) -> None:
        while self._restart_due is not None:
            self._restarted.clear()
            await self._restarted.wait()
        self._in_flight += 1

    async def _leave(self) -> None:
        self._in_flight -= 1
        self._rendered += 1
        config = self.browser_config
        if config.restart_pages and self._rendered % config.restart_pages == 0:
            self._restart_due = self._restart_due or "pages"
        elif config.max_memory_mb and self._rendered % MEMORY_CHECK_EVERY == 0:
            pid = self._driver_pid()
            if pid and processes.rss_mib(processes.tree(pid)) > config.max_memory_mb:
                self._restart_due = self._restart_due or "memory"
        if self._restart_due is not None and self._in_flight == 0:
            await self._restart()

    def _driver_pid(self) -> int | None:
        """The process id of Playwright's driver (the browser's parent), None before it
        starts: its transport is its client's (Playwright 1.65), or its connection's."""
        provider = getattr(self, "browser_provider", None)
        manager = getattr(provider, "playwright_context_manager", None)
        for owner in (getattr(manager, "_client", None), getattr(manager, "_connection", None)):
            process = getattr(getattr(owner, "_transport", None), "_proc", None)
            if process is not None:
                pid: int = process.pid
                return pid
        return None

    async def _restart(self) -> None:
        """Close the browser and its driver (killed when they do not close in time); the
        next page starts them again."""
        reason = self._restart_due or "pages"
        logger.info("Restarting the browser (%s)", reason)
        self.stats.inc_value(f"browser/restarts/{reason}")
        pid = self._driver_pid()
        try:
            await asyncio.wait_for(self._close(), CLOSE_TIMEOUT * 2)
        except Exception as exc:  # noqa: BLE001
            logger.warning("The browser did not close (%r): killing it", exc)
            if pid:
                processes.kill_tree(pid)
        self.context_wrappers.clear()
        self._context_used.clear()
        self.__dict__.pop("browser", None)
        self._tidy_profiles()
        self.browser_provider = None  # type: ignore[assignment]
        self._restart_due = None
        self._restarted.set()

    async def _browser_disconnected_callback(self) -> None:
        """The browser went away (crashed, killed, closed): its contexts with it; the next
        page launches another."""
        self.stats.inc_value("browser/disconnected")
        self.context_wrappers.clear()
        self._context_used.clear()
        self.__dict__.pop("browser", None)
        self._tidy_profiles()

    def _tidy_profiles(self) -> None:
        """What the browsers gone left in the temporary directory, deleted."""
        processes.tidy_profiles(self._driver_pid(), self._profiles)

    async def close(self) -> None:
        try:
            await super().close()
        finally:
            self._tidy_profiles()  # the driver is gone: every profile left is a dead one's
        if self._dead_proxy is not None:
            self._dead_proxy.close()
            self._dead_proxy = None
