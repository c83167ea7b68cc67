"""Frontier memory: bytes per queued request and per fingerprint in one Redis.

``python -m master bench --frontier N`` starts a private redis-server (no
persistence), then

* queues ``N`` requests of typical product links, encoded exactly as a worker
  queues the links of a page (the ``ecommerce`` spider's ``Request``, its
  ``site`` and ``depth`` meta, ``crawler.scheduling.serializer``), in the queue's
  sorted set;
* adds their ``N`` fingerprints (20 bytes each) to the exact seen-set, and to a
  Bloom filter sized for ``N`` at ``BLOOM_ERROR_RATE``;

and prints ``MEMORY USAGE`` of each key divided by ``N``, and the growth of
the server's ``used_memory`` per request. The links are the demo shop's
product paths (``/p/<slug>-<id>.html``) on ``https://www.example-shop.com``,
about 70 characters: what a real shop's product link looks like.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import islice
from typing import Any

import redis
from scrapy import Request

from crawler import defaults
from crawler.keys import CrawlKeys
from crawler.scheduling.bloom import BloomFilter, BloomSize
from crawler.scheduling.dupefilter import BinaryFingerprintDupeFilter
from crawler.scheduling.serializer import encode_request
from crawler.sites import site_key
from demoshop.catalog import Catalog
from tools.redis_server import RedisServer

HOST = "https://www.example-shop.com"
CHUNK = 2000
_ID = re.compile(r"-\d+\.html$")


def product_urls(count: int) -> Iterator[str]:
    """``count`` distinct product links of the demo shop's shape."""
    paths = sorted(Catalog.build(products=min(count, 2000)).product_paths())
    for n in range(count):
        path = paths[n % len(paths)]
        yield HOST + (path if n < len(paths) else _ID.sub(f"-{n}.html", path))


@dataclass
class FrontierMemory:
    requests: int
    url_chars: float  # mean length of the links
    payload_bytes: float  # mean length of a queued request's payload
    queued: float  # MEMORY USAGE of the queue / requests
    queued_used: float  # growth of used_memory / requests
    fingerprint: float  # MEMORY USAGE of the exact seen-set / requests
    bloom: float  # MEMORY USAGE of the Bloom filter / requests
    bloom_error_rate: float
    example: bytes  # one payload


def _spider() -> Any:
    from crawler.spiders.ecommerce import EcommerceSpider

    return EcommerceSpider()


def measure(count: int, error_rate: float = defaults.BLOOM_ERROR_RATE) -> FrontierMemory:
    spider = _spider()
    fingerprints = BinaryFingerprintDupeFilter(server=None, key="unused")
    keys = CrawlKeys()
    url_chars = payload_bytes = 0
    example = b""
    with RedisServer(appendonly=False) as server:
        client = redis.Redis.from_url(server.url)
        before = int(client.info("memory")["used_memory"])
        bloom = BloomFilter(client, keys, BloomSize.for_capacity(count, error_rate))
        urls = product_urls(count)
        while chunk := list(islice(urls, CHUNK)):
            payloads: dict[bytes, float] = {}
            seen: list[bytes] = []
            for url in chunk:
                # a link as the spider yields it, after the depth middleware
                request = Request(
                    url,
                    callback=spider.parse,
                    errback=spider.errback,
                    meta={"site": site_key(url), "depth": 2},
                )
                payload = encode_request(request, spider)
                payloads[payload] = -request.priority
                seen.append(fingerprints.request_fingerprint(request))
                url_chars += len(url)
                payload_bytes += len(payload)
                example = example or payload
            client.zadd(keys.requests, payloads)
            client.sadd(keys.dupefilter, *seen)
            bloom.check_and_add(seen)
        queued_used = int(client.info("memory")["used_memory"]) - before

        def usage(key: str) -> float:
            return int(client.memory_usage(key, samples=0) or 0) / count

        result = FrontierMemory(
            requests=count,
            url_chars=url_chars / count,
            payload_bytes=payload_bytes / count,
            queued=usage(keys.requests),
            queued_used=(queued_used - usage(keys.dupefilter) * count - usage(keys.bloom) * count)
            / count,
            fingerprint=usage(keys.dupefilter),
            bloom=usage(keys.bloom),
            bloom_error_rate=error_rate,
            example=example,
        )
        client.close()
    return result


def render(result: FrontierMemory) -> list[str]:
    gib = 1024**3
    per_gb_queued = gib / (result.queued + result.fingerprint)
    per_gb_seen = gib / result.fingerprint
    return [
        f"frontier: {result.requests} product links of {result.url_chars:.0f} characters "
        f"(e.g. {result.example.decode()})",
        f"queued request: {result.queued:.1f} bytes (MEMORY USAGE of the queue / requests; "
        f"used_memory grew {result.queued_used:.1f}); payload {result.payload_bytes:.1f} bytes",
        f"fingerprint, exact set: {result.fingerprint:.1f} bytes",
        f"fingerprint, Bloom filter (error rate {result.bloom_error_rate:g}): "
        f"{result.bloom:.2f} bytes",
        f"per GB of Redis: {per_gb_queued / 1e6:.1f} million requests queued (with their "
        f"fingerprints), {per_gb_seen / 1e6:.1f} million URLs seen (exact set), "
        f"{gib / result.bloom / 1e6:.0f} million (Bloom)",
    ]
