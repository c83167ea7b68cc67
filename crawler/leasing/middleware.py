"""``LeaseSpiderMiddleware``: tells the lease tracker when a page's work is done.

It wraps the whole output of a response's callback (it is the outermost spider
middleware): items are registered as pending with the tracker, and once the
last element has been taken by the engine — every request queued in Redis —
the response's lease is marked as output-done. The lease is finished when its
items are safe too (see :class:`crawler.leasing.tracker.LeaseTracker`).

A callback that raises is recorded as a dead letter (its page would fail the
same way again), and the exception goes on to Scrapy's usual handling.
It also counts the pages each worker parsed (stat ``pages/parsed``) and the
time of its last work (``WorkerStats`` reads both).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterable, Iterator
from typing import Any

from scrapy import Request

from crawler.leasing.meta import lease_of
from crawler.leasing.tracker import LeaseTracker
from crawler.scheduling import serializer


class LeaseSpiderMiddleware:
    def __init__(self, crawler: Any, tracker: LeaseTracker) -> None:
        self.crawler = crawler
        self.stats = crawler.stats
        self.tracker = tracker

    @classmethod
    def from_crawler(cls, crawler: Any) -> LeaseSpiderMiddleware:
        return cls(crawler, LeaseTracker.of(crawler))

    def _page_parsed(self) -> None:
        self.stats.inc_value("pages/parsed")
        self.stats.set_value("worker/last_activity", time.time())

    async def process_spider_output_async(
        self, response: Any, result: AsyncIterator[Any], spider: Any = None
    ) -> AsyncIterator[Any]:
        lease = lease_of(response.request)
        self._page_parsed()
        async for element in result:
            if not isinstance(element, Request):
                self.tracker.item_pending(element, lease)
            yield element
        self.tracker.output_done(lease)

    def process_spider_output(
        self, response: Any, result: Iterable[Any], spider: Any = None
    ) -> Iterator[Any]:
        # Synchronous fallback required by Scrapy's universal middleware protocol.
        lease = lease_of(response.request)
        self._page_parsed()
        for element in result:
            if not isinstance(element, Request):
                self.tracker.item_pending(element, lease)
            yield element
        self.tracker.output_done(lease)

    def process_spider_exception(
        self, response: Any, exception: Exception, spider: Any = None
    ) -> None:
        request = response.request
        payload = (
            serializer.encode_request(serializer.requeueable(request), self.crawler.spider)
            if request
            else None
        )
        self.tracker.dead_letter(
            url=response.url,
            reason=f"spider error: {type(exception).__name__}: {exception}",
            payload=payload,
            lease=lease_of(request),
        )
        return None
