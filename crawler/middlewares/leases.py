"""``LeaseSpiderMiddleware``: tells the lease tracker when a page's work is done.

It wraps the whole output of a response's callback (it is the outermost spider
middleware): items are registered as pending with the tracker, and once the
last element has been taken by the engine — every request queued in Redis —
the response's lease is marked as output-done. The lease is deleted when its
items are safe too (see :class:`crawler.extensions.leases.LeaseTracker`).

A callback that raises is recorded as a dead letter (its page would fail the
same way again), and the exception goes on to Scrapy's usual handling.
It also counts the pages each worker parsed (stat ``pages/parsed``) and the
time of its last work (``WorkerStats`` reads both).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import Any

from scrapy import Request

from crawler.extensions.leases import LeaseTracker
from crawler.scheduling import serializer
from crawler.scheduling.serializer import LEASE_META_KEY


class LeaseSpiderMiddleware:
    def __init__(self, crawler: Any) -> None:
        self.crawler = crawler
        self.stats = crawler.stats

    @classmethod
    def from_crawler(cls, crawler: Any) -> LeaseSpiderMiddleware:
        return cls(crawler)

    @property
    def tracker(self) -> LeaseTracker:
        return LeaseTracker.of(self.crawler)

    async def process_spider_output_async(
        self, response: Any, result: AsyncIterator[Any], spider: Any = None
    ) -> AsyncIterator[Any]:
        lease = response.request.meta.get(LEASE_META_KEY, "") if response.request else ""
        tracker = self.tracker
        self.stats.inc_value("pages/parsed")
        self.stats.set_value("worker/last_activity", time.time())
        async for element in result:
            if not isinstance(element, Request):
                tracker.item_pending(element, lease)
            yield element
        tracker.output_done(lease)

    def process_spider_output(self, response: Any, result: Any, spider: Any = None) -> Any:
        # Synchronous fallback required by Scrapy's universal middleware protocol.
        lease = response.request.meta.get(LEASE_META_KEY, "") if response.request else ""
        tracker = self.tracker
        self.stats.inc_value("pages/parsed")
        self.stats.set_value("worker/last_activity", time.time())
        for element in result:
            if not isinstance(element, Request):
                tracker.item_pending(element, lease)
            yield element
        tracker.output_done(lease)

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
            lease=request.meta.get(LEASE_META_KEY, "") if request else "",
        )
        return None
