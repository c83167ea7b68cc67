"""Frontier memory: bytes per queued request and per fingerprint, on one Redis and a cluster.

``python -m master bench --frontier N`` starts a private redis-server (no
persistence), then

* queues ``N`` requests of typical product links, encoded exactly as a worker
  queues the links of a page (the ``ecommerce`` spider's ``Request``, its
  ``site`` and ``depth`` meta, ``crawler.scheduling.serializer``), in the queue's
  lane of their priority (:mod:`crawler.scheduling.lanes`, the script the
  workers' pushes use);
* adds their ``N`` fingerprints (20 bytes each) to the exact seen-set, and to a
  Bloom filter sized for ``N`` at ``BLOOM_ERROR_RATE``;

and prints ``MEMORY USAGE`` of each key divided by ``N`` (for the queue: of
all its keys, the sorted set, the lane index and the lanes), and the growth of
the server's ``used_memory`` per request. The links are the demo shop's
product paths (``/p/<slug>-<id>.html``) on ``https://www.example-shop.com``,
about 70 characters: what a real shop's product link looks like.

Then (unless ``--cluster-primaries 0``) the same on a private Redis Cluster of
3 primaries (:class:`tools.redis_cluster.RedisCluster`) with the crawl's
cluster layout (16 shards, :mod:`crawler.core.keys`): the links are spread over 48
shops whose hosts have the same length, each queued and its fingerprint added
in its site's shard (each shard's Bloom filter sized for the links of its
shard), and the ``MEMORY USAGE`` of every shard's key is summed over the shards
before dividing by ``N``; ``used_memory`` is summed over the primaries.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import islice
from typing import Any, cast

import redis
from scrapy import Request

from crawler.core import defaults
from crawler.core.keys import DEFAULT_CLUSTER_SHARDS, CrawlKeys, ShardKeys
from crawler.core.sites import site_key
from crawler.scheduling.bloom import BloomFilter, BloomSize
from crawler.scheduling.dupefilter import BinaryFingerprintDupeFilter
from crawler.scheduling.lanes import push_requests, queue_keys
from crawler.scheduling.serializer import encode_request
from demoshop.catalog import Catalog
from master.clusterscan import memory_usage, primaries
from tools.redis_server import RedisServer

HOST = "https://www.example-shop.com"
CHUNK = 2000
CLUSTER_SITES = 48  # shops the links are spread over on a cluster: 3 a shard on average
_ID = re.compile(r"-\d+\.html$")


def product_urls(count: int, sites: int = 1) -> Iterator[str]:
    """``count`` distinct product links of the demo shop's shape; with ``sites`` > 1, spread
    round-robin over that many shops whose hosts have the length of :data:`HOST`'s."""
    paths = sorted(Catalog.build(products=min(count, 2000)).product_paths())
    hosts = [HOST] if sites <= 1 else [f"https://www.example-s{k:03d}.com" for k in range(sites)]
    for n in range(count):
        path = paths[n % len(paths)]
        yield hosts[n % len(hosts)] + (path if n < len(paths) else _ID.sub(f"-{n}.html", path))


@dataclass
class FrontierMemory:
    requests: int
    url_chars: float  # mean length of the links
    payload_bytes: float  # mean length of a queued request's payload
    queued: float  # MEMORY USAGE of the queue(s) / requests
    queued_used: float  # growth of used_memory / requests
    fingerprint: float  # MEMORY USAGE of the exact seen-set(s) / requests
    bloom: float  # MEMORY USAGE of the Bloom filter(s) / requests
    bloom_error_rate: float
    example: bytes  # one payload
    where: str = "one redis-server"  # or "a Redis Cluster of 3 primaries, 16 shards, ..."


def _spider() -> Any:
    from crawler.spiders.ecommerce import EcommerceSpider

    return EcommerceSpider()


def _used_memory(client: Any) -> int:
    return sum(int(node.info("memory")["used_memory"]) for node in primaries(client))


def _fill(
    client: Any, keys: CrawlKeys, urls: list[str] | Iterator[str], count: int, error_rate: float
) -> tuple[float, float, bytes]:
    """Queue the links and add their fingerprints, each in its site's shard; returns the
    characters of the links, the bytes of the payloads and one payload."""
    spider = _spider()
    fingerprints = BinaryFingerprintDupeFilter(server=None, key="unused")
    links = list(urls)
    share = Counter(keys.shard_of(site_key(url)) for url in links)
    blooms = {
        index: BloomFilter(
            client, cast("CrawlKeys", keys.shard(index)), BloomSize.for_capacity(n, error_rate)
        )
        for index, n in share.items()
    }
    url_chars = payload_bytes = 0
    example = b""
    iterator = iter(links)
    while chunk := list(islice(iterator, CHUNK)):
        payloads: dict[int, dict[bytes, float]] = defaultdict(dict)
        seen: dict[int, list[bytes]] = defaultdict(list)
        for url in chunk:
            # a link as the spider yields it, after the depth middleware
            request = Request(
                url,
                callback=spider.parse,
                errback=spider.errback,
                meta={"site": site_key(url), "depth": 2},
            )
            payload = encode_request(request, spider)
            shard = keys.shard_of(site_key(url))
            payloads[shard][payload] = -request.priority
            seen[shard].append(fingerprints.request_fingerprint(request))
            url_chars += len(url)
            payload_bytes += len(payload)
            example = example or payload
        pipe = client.pipeline(transaction=False)
        for shard, mapping in payloads.items():
            push_requests(pipe, keys.shard(shard).requests, mapping)
            pipe.sadd(keys.shard(shard).dupefilter, *seen[shard])
        pipe.execute()
        for shard, each in seen.items():
            blooms[shard].check_and_add(each)
    return url_chars, payload_bytes, example


def _measure(
    client: Any, keys: CrawlKeys, count: int, error_rate: float, where: str, sites: int
) -> FrontierMemory:
    before = _used_memory(client)
    url_chars, payload_bytes, example = _fill(
        client, keys, product_urls(count, sites), count, error_rate
    )
    used = _used_memory(client) - before

    def usage(name: Callable[[ShardKeys], str]) -> float:
        # MEMORY USAGE of the key in every shard, summed (a missing key: 0)
        return memory_usage(client, [name(shard) for shard in keys.all_shards()]) / count

    queue_keys_all = [
        name for shard in keys.all_shards() for name in queue_keys(client, shard.requests)
    ]
    queued = memory_usage(client, queue_keys_all) / count
    fingerprint = usage(lambda shard: shard.dupefilter)
    bloom = usage(lambda shard: shard.bloom)
    return FrontierMemory(
        requests=count,
        url_chars=url_chars / count,
        payload_bytes=payload_bytes / count,
        queued=queued,
        queued_used=(used - (fingerprint + bloom) * count) / count,
        fingerprint=fingerprint,
        bloom=bloom,
        bloom_error_rate=error_rate,
        example=example,
        where=where,
    )


def measure(count: int, error_rate: float = defaults.BLOOM_ERROR_RATE) -> FrontierMemory:
    """On one private redis-server (no persistence), the links all of one shop."""
    with RedisServer(appendonly=False) as server:
        client = redis.Redis.from_url(server.url)
        try:
            return _measure(client, CrawlKeys(), count, error_rate, "one redis-server", 1)
        finally:
            client.close()


def measure_cluster(
    count: int,
    primaries_count: int = 3,
    error_rate: float = defaults.BLOOM_ERROR_RATE,
    shards: int = DEFAULT_CLUSTER_SHARDS,
    sites: int = CLUSTER_SITES,
) -> FrontierMemory:
    """On a private Redis Cluster of ``primaries_count`` nodes, the crawl's layout of
    ``shards`` shards, the links spread over ``sites`` shops (so every shard has some):
    the MEMORY USAGE of each shard's queue, seen-set and Bloom filter, summed."""
    from tools.redis_cluster import RedisCluster

    keys = CrawlKeys.layout(cluster=True, shards=shards)
    with RedisCluster(primaries=primaries_count) as cluster:
        client = cluster.client()
        try:
            where = (
                f"a Redis Cluster of {primaries_count} primaries, {shards} shards, "
                f"links of {sites} shops"
            )
            return _measure(client, keys, count, error_rate, where, sites)
        finally:
            client.close()


def render(result: FrontierMemory) -> list[str]:
    gib = 1024**3
    per_gb_queued = gib / (result.queued + result.fingerprint)
    per_gb_seen = gib / result.fingerprint
    return [
        f"frontier on {result.where}: {result.requests} product links of "
        f"{result.url_chars:.0f} characters (e.g. {result.example.decode()})",
        f"queued request: {result.queued:.1f} bytes (MEMORY USAGE of the queue's lanes, "
        f"lane index and sorted set / requests; "
        f"used_memory grew {result.queued_used:.1f}); payload {result.payload_bytes:.1f} bytes",
        f"fingerprint, exact set: {result.fingerprint:.1f} bytes",
        f"fingerprint, Bloom filter (error rate {result.bloom_error_rate:g}): "
        f"{result.bloom:.2f} bytes",
        f"per GB of Redis: {per_gb_queued / 1e6:.1f} million requests queued (with their "
        f"fingerprints), {per_gb_seen / 1e6:.1f} million URLs seen (exact set), "
        f"{gib / result.bloom / 1e6:.0f} million (Bloom)",
    ]
