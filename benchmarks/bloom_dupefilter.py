"""Bloom dupefilter: bytes per URL and measured false-positive rate.

Adds N distinct URL fingerprints (20-byte SHA1 digests of ``http://shop.test/p/<i>``)
to a Bloom filter sized for N at the given rate, in batches like the workers'
(one script call each), on a private redis-server; then checks N other distinct
URLs that were never added and counts those taken for seen.

    python -m benchmarks.bloom_dupefilter --urls 1000000 --error-rate 0.001
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time

import redis

from crawler.core.keys import CrawlKeys
from crawler.scheduling.bloom import BloomFilter, BloomSize, bloom_status
from tools.redis_server import RedisServer


def fingerprints(start: int, count: int) -> list[bytes]:
    """20-byte SHA1 digests of distinct URLs (the shape of Scrapy's fingerprints)."""
    return [
        hashlib.sha1(f"http://shop.test/p/{i}".encode()).digest()
        for i in range(start, start + count)
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--urls", type=int, default=1_000_000)
    parser.add_argument("--error-rate", type=float, default=0.001)
    parser.add_argument("--batch", type=int, default=256, help="fingerprints per script call")
    args = parser.parse_args(argv)
    keys = CrawlKeys()
    size = BloomSize.for_capacity(args.urls, args.error_rate)
    print(f"Bloom filter for {args.urls} URLs at {args.error_rate:.2%}: ", end="")
    print(f"m={size.bits} bits, k={size.hashes}")
    with RedisServer(appendonly=False) as server:
        client = redis.Redis.from_url(server.url)
        bloom = BloomFilter(client, keys, size)
        added = []
        started = time.perf_counter()
        for first in range(0, args.urls, 50_000):
            batch = fingerprints(first, min(50_000, args.urls - first))
            for i in range(0, len(batch), args.batch):
                added += bloom.check_and_add(batch[i : i + args.batch])
        insert_s = time.perf_counter() - started
        lost = added.count(False)  # new URLs taken for seen while filling: never crawled
        false_positives = 0
        for first in range(args.urls, 2 * args.urls, 50_000):
            batch = fingerprints(first, min(50_000, 2 * args.urls - first))
            for i in range(0, len(batch), args.batch):
                false_positives += sum(bloom.contains(batch[i : i + args.batch]))
        status = bloom_status(client, keys)
        assert status is not None
        exact = client.sadd("exact", *fingerprints(0, min(args.urls, 100_000)))
        exact_bytes = int(client.memory_usage("exact") or 0) / exact
    print(f"inserted {args.urls} URLs in {insert_s:.1f} s ({args.urls / insert_s:,.0f} URLs/s)")
    print(
        f"memory: {status['memory_bytes']:,} bytes = {status['memory_bytes'] / args.urls:.2f} "
        f"bytes/URL (exact set of binary fingerprints: {exact_bytes:.1f} bytes/URL)"
    )
    print(
        f"new URLs taken for seen while filling: {lost} ({lost / args.urls:.4%}); "
        f"false positives among {args.urls} unseen URLs after filling: {false_positives} "
        f"({false_positives / args.urls:.4%}); estimated {status['estimated_error_rate']:.4%}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
