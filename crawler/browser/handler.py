"""``BrowserDownloadHandler``: Scrapy's HTTP/1.1 download handler, and the browser behind it.

``DOWNLOAD_HANDLERS`` for http and https (``crawler/settings.py``). A request without
``meta["playwright"]`` is downloaded by Scrapy's HTTP/1.1 handler, as always. A request
with it (marked by :class:`crawler.middlewares.rendering.BrowserRenderingMiddleware`, or
by another worker) is handed to the crawler's :class:`~.renderer.PageRenderer`
(scrapy-playwright's handler, bounded and guarded), made at the first page to render:
Playwright is not even imported by a worker that renders nothing. Scrapy makes one
handler per scheme; the http and https handlers of a crawler share one renderer, and
so one browser.

A worker that cannot render (``BROWSER_RENDERING=never``, ``BROWSER_CONCURRENCY=0``, no
browser installed: :class:`~.config.BrowserConfig`) never takes a marked request from
the shared queues: its scheduler hands such a request to the browser queue
(:mod:`.routing`). Should one reach this handler all the same (a download that skips
the scheduler), it is fetched plainly, counted (``browser/unavailable``) and the worker
says once why.
"""

from __future__ import annotations

from typing import Any
from weakref import WeakKeyDictionary

from scrapy import Request
from scrapy.core.downloader.handlers.http11 import HTTP11DownloadHandler
from scrapy.http import Response

from .config import BrowserConfig

_RENDERERS: WeakKeyDictionary[Any, Any] = WeakKeyDictionary()


class BrowserDownloadHandler(HTTP11DownloadHandler):
    lazy = True

    def __init__(self, crawler: Any) -> None:
        super().__init__(crawler)
        self.crawler = crawler
        self.browser_config = BrowserConfig.from_settings(crawler.settings)

    async def download_request(self, request: Request) -> Response:  # type: ignore[override]
        if not request.meta.get("playwright"):
            return await super().download_request(request)
        if not self.browser_config.can_render:  # past the scheduler's hand-over: plainly
            self.browser_config.announce()
            self.crawler.stats.inc_value("browser/unavailable")
            return await super().download_request(request)
        renderer = _RENDERERS.get(self.crawler)
        if renderer is None:
            from .renderer import PageRenderer  # Playwright: only for a page to render

            renderer = _RENDERERS[self.crawler] = PageRenderer(self.crawler)
        response: Response = await renderer.render(request)
        return response

    async def close(self) -> None:
        await super().close()
        renderer = _RENDERERS.pop(self.crawler, None)
        if renderer is not None:
            await renderer.close()
