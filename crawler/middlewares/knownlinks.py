"""``KnownLinkFilterMiddleware``: drop links this worker already knows are seen.

Most links of a shop page are the same on every page (menus, breadcrumbs,
related products). Each one a spider yields costs Scrapy's whole per-request
path (spider middlewares, signals, the scheduler) before the dupefilter turns
it away. This middleware sits next to the spider and drops, right there, the
requests whose fingerprint the worker's dupefilter already knows to be in Redis
(its in-process cache; ``DUPEFILTER_LOCAL_CACHE_SIZE``). Nothing else changes:
an unknown link goes on to the shared dupefilter as before. The dupefilter is
the one of the engine's scheduler (``crawler.engine.scheduler.df``).

Stat: ``links/known_dropped``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Iterator
from typing import Any

from scrapy import Request
from scrapy.exceptions import NotConfigured

from crawler.core import defaults


class KnownLinkFilterMiddleware:
    def __init__(self, crawler: Any) -> None:
        cache_size = crawler.settings.getint(
            "DUPEFILTER_LOCAL_CACHE_SIZE", defaults.DUPEFILTER_LOCAL_CACHE_SIZE
        )
        if not cache_size:
            raise NotConfigured("DUPEFILTER_LOCAL_CACHE_SIZE is 0")
        self.crawler = crawler
        self.stats = crawler.stats
        self._dupefilter: Any = None

    @classmethod
    def from_crawler(cls, crawler: Any) -> KnownLinkFilterMiddleware:
        return cls(crawler)

    def _known(self, element: Any) -> bool:
        if not isinstance(element, Request) or element.dont_filter:
            return False
        dupefilter = self._open_dupefilter()
        if dupefilter is None or not dupefilter.known(dupefilter.request_fingerprint(element)):
            return False
        self.stats.inc_value("links/known_dropped")
        return True

    def _open_dupefilter(self) -> Any:
        """The dupefilter of the engine's scheduler (None until it is open, or without a cache)."""
        if self._dupefilter is None:
            dupefilter = getattr(self.crawler.engine.scheduler, "df", None)
            if hasattr(dupefilter, "known"):
                self._dupefilter = dupefilter
        return self._dupefilter

    async def process_spider_output_async(
        self, response: Any, result: AsyncIterator[Any], spider: Any = None
    ) -> AsyncIterator[Any]:
        async for element in result:
            if not self._known(element):
                yield element

    def process_spider_output(
        self, response: Any, result: Iterable[Any], spider: Any = None
    ) -> Iterator[Any]:
        for element in result:
            if not self._known(element):
                yield element
