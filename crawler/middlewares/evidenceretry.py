"""``EvidenceRetryMiddleware``: queue again, once, a page that waits for its site's
evidence (:class:`crawler.extensions.siteevidence.SiteEvidenceStore` marks it).

The page's output (its links) goes on as usual, followed by the page's request once
more: past the dupefilter, at ``SITE_EVIDENCE_RETRY_PRIORITY`` (after the site's other
pages, whose evidence it waits for), marked so that it is read then with whatever
evidence there is and never deferred again. Being part of the page's output, it is
queued before the page's lease is finished: a worker that dies loses no page.

Stat: ``evidence/requeued``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Iterator
from typing import Any

from scrapy import Request
from scrapy.exceptions import NotConfigured

from crawler.core import defaults
from crawler.extensions.siteevidence import RETRIED_META_KEY, RETRY_META_KEY


class EvidenceRetryMiddleware:
    def __init__(self, crawler: Any) -> None:
        settings = crawler.settings
        if not (
            settings.getbool("SITE_EVIDENCE_ENABLED", defaults.SITE_EVIDENCE_ENABLED)
            and settings.getbool("SITE_EVIDENCE_RETRY", defaults.SITE_EVIDENCE_RETRY)
        ):
            raise NotConfigured("no site evidence, or no retry")
        self.priority = settings.getint(
            "SITE_EVIDENCE_RETRY_PRIORITY", defaults.SITE_EVIDENCE_RETRY_PRIORITY
        )
        self.stats = crawler.stats

    @classmethod
    def from_crawler(cls, crawler: Any) -> EvidenceRetryMiddleware:
        return cls(crawler)

    def _again(self, response: Any) -> Request | None:
        if not response.meta.pop(RETRY_META_KEY, False) or response.request is None:
            return None
        self.stats.inc_value("evidence/requeued")
        meta = {**response.request.meta, RETRIED_META_KEY: True}
        return response.request.replace(dont_filter=True, priority=self.priority, meta=meta)

    async def process_spider_output_async(
        self, response: Any, result: AsyncIterator[Any], spider: Any = None
    ) -> AsyncIterator[Any]:
        async for element in result:
            yield element
        again = self._again(response)
        if again is not None:
            yield again

    def process_spider_output(
        self, response: Any, result: Iterable[Any], spider: Any = None
    ) -> Iterator[Any]:
        yield from result
        again = self._again(response)
        if again is not None:
            yield again
