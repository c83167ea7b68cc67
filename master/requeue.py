"""Queueing stored URLs again past the dupefilter: the requests ``recrawl`` pushes
straight into the shared request queue (why straight: :mod:`master.commands.recrawl`),
the way the workers queue requests (same JSON payload, popped under lease).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import islice
from typing import TYPE_CHECKING, Any

import redis

from crawler.core.keys import CrawlKeys
from crawler.core.listings import SITEMAPPED_META_KEY
from crawler.core.sites import site_key
from crawler.scheduling.lanes import keep_requests

if TYPE_CHECKING:
    from scrapy import Request

PUSH_BATCH = 500


def recrawl_request(url: str, sitemapped: bool = False) -> Request:
    """The request a worker would make for a product page (callbacks of the spider); a
    page sitemaps name that the crawl has not read is marked (:mod:`crawler.core.listings`)."""
    from scrapy import Request  # Scrapy is imported only when the command runs

    meta: dict[str, Any] = {"site": site_key(url), "recrawl": True}
    if sitemapped:
        meta[SITEMAPPED_META_KEY] = url
    return Request(url, meta=meta, dont_filter=True)


def encode(request: Request) -> bytes:
    from crawler.scheduling import serializer  # brings Scrapy: only when the command runs

    data: dict[str, Any] = {
        "url": request.url,
        "callback": "parse",
        "errback": "errback",
        "meta": dict(request.meta),
        "dont_filter": request.dont_filter,
    }
    return serializer.dumps(data)


def _batches(urls: Iterable[str], size: int) -> Iterator[list[str]]:
    iterator = iter(urls)
    while batch := list(islice(iterator, size)):
        yield batch


def queue_again(
    client: redis.Redis, keys: CrawlKeys, urls: Iterable[str], sitemapped: bool = False
) -> tuple[int, int]:
    """Queue each URL's request past the dupefilter, in the queue of its site's shard on a
    cluster (one ZADD per shard of a batch, in one pipeline); returns (seen, newly queued).
    ``sitemapped``: the URLs are pages sitemaps name that the crawl has not read."""
    seen = queued = 0
    for batch in _batches(urls, PUSH_BATCH):
        # score 0: priority 0, as the spider's own requests
        by_queue: dict[str, dict[bytes, float]] = {}
        for url in batch:
            queue = keys.for_site(site_key(url)).requests
            by_queue.setdefault(queue, {})[encode(recrawl_request(url, sitemapped))] = 0
        if len(by_queue) == 1:  # one Redis: one ZADD (in a script), as always
            ((queue, mapping),) = by_queue.items()
            added: Any = keep_requests(client, queue, mapping)
            queued += int(added)
        else:
            pipe = client.pipeline(transaction=False)
            for queue, mapping in by_queue.items():
                keep_requests(pipe, queue, mapping)
            queued += sum(int(n) for n in pipe.execute())
        seen += len(batch)
    return seen, queued
