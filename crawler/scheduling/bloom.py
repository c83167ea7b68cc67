"""``BloomDupeFilter``: the shared seen-set as a Bloom filter in plain Redis.

An option (``DUPEFILTER_CLASS = "crawler.scheduling.bloom.BloomDupeFilter"``)
for crawls of hundreds of millions of URLs: the exact set
(:class:`~crawler.scheduling.dupefilter.BinaryFingerprintDupeFilter`, the
default) costs about 60 bytes per URL in Redis, the Bloom filter
``-ln(p) / ln(2)^2 / 8`` bytes (1.8 bytes at ``p`` = 0.1 %). The price: a new
URL is taken for seen, and never crawled, with probability about ``p``.

The filter is a Redis string ``<spider>:bloom`` of ``m`` bits with ``k`` bit
positions per fingerprint, sized from ``BLOOM_CAPACITY`` (expected URLs) and
``BLOOM_ERROR_RATE``; ``<spider>:bloom:meta`` (hash: m, k, capacity,
error_rate, count) holds the sizes the first worker chose, which every later
worker (and ``master status``) reads. Checks and additions are ``BITFIELD``
calls inside the batch script of :mod:`.batching` (no Redis module needed), so
a whole batch of links is checked, added and queued in one atomic call.
Positions: double hashing of the 20-byte SHA1 fingerprint (bytes 1-6 and 7-12).

Needs batching (``SCHEDULER_FLUSH_INTERVAL`` > 0).

On a Redis Cluster each shard has its own filter (``<spider>:{s<i>}:bloom`` and
``:bloom:meta``), checked in the same script call as the shard's queue; each is
sized for ``BLOOM_CAPACITY / REDIS_CLUSTER_SHARDS`` URLs at ``BLOOM_ERROR_RATE``
(sites spread evenly over the shards by a hash; a shard that gets more than its
share has a higher false-positive rate, which :func:`bloom_status` reports).
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Any

import redis
from scrapy import Request

from crawler.core import defaults
from crawler.core.keys import CrawlKeys, ShardKeys
from crawler.core.sites import site_key
from crawler.scheduling.dupefilter import BinaryFingerprintDupeFilter

logger = logging.getLogger(__name__)

# Lua: ``bloom_seen(key, fps, m, k)`` -> per fingerprint, true when all its bits are set,
# and ``bloom_add(key, fps, m, k)``. BITFIELD calls are chunked (Lua's unpack limit).
BLOOM_LUA = """
local function bloom_positions(fp, m, k)
  local h1, h2 = 0, 0
  for j = 1, 6 do h1 = h1 * 256 + string.byte(fp, j) end
  for j = 7, 12 do h2 = h2 * 256 + string.byte(fp, j) end
  local out = {}
  for i = 0, k - 1 do out[#out + 1] = (h1 + i * h2) % m end
  return out
end
local function bloom_bitfield(key, ops)
  local replies = {}
  for first = 1, #ops, 6000 do
    local part = redis.call('BITFIELD', key, unpack(ops, first, math.min(first + 5999, #ops)))
    for _, v in ipairs(part) do replies[#replies + 1] = v end
  end
  return replies
end
local function bloom_seen(key, fps, m, k)
  local ops = {}
  for i = 1, #fps do
    for _, p in ipairs(bloom_positions(fps[i], m, k)) do
      ops[#ops + 1] = 'GET'; ops[#ops + 1] = 'u1'; ops[#ops + 1] = p
    end
  end
  local bits = bloom_bitfield(key, ops)
  local seen = {}
  for i = 1, #fps do
    local all = 1
    for j = (i - 1) * k + 1, i * k do
      if bits[j] == 0 then all = 0; break end
    end
    seen[i] = all
  end
  return seen
end
local function bloom_add(key, fps, m, k)
  if #fps == 0 then return end
  local ops = {}
  for i = 1, #fps do
    for _, p in ipairs(bloom_positions(fps[i], m, k)) do
      ops[#ops + 1] = 'SET'; ops[#ops + 1] = 'u1'; ops[#ops + 1] = p; ops[#ops + 1] = 1
    end
  end
  bloom_bitfield(key, ops)
end
"""

# KEYS: bloom, meta. ARGV: m, k, fingerprints... -> 1 per fingerprint that was new.
_CHECK_AND_ADD = (
    BLOOM_LUA
    + """
local m, k = tonumber(ARGV[1]), tonumber(ARGV[2])
local fps = {}
for i = 3, #ARGV do fps[#fps + 1] = ARGV[i] end
local seen = bloom_seen(KEYS[1], fps, m, k)
local new, added, batch = {}, {}, {}
for i = 1, #fps do
  if seen[i] == 0 and not batch[fps[i]] then
    batch[fps[i]] = true
    new[#new + 1] = fps[i]
    added[i] = 1
  else
    added[i] = 0
  end
end
bloom_add(KEYS[1], new, m, k)
if #new > 0 then redis.call('HINCRBY', KEYS[2], 'count', #new) end
return added
"""
)

# KEYS: bloom, meta. ARGV: m, k, fingerprints... -> 1 per fingerprint that looks seen.
_CONTAINS = (
    BLOOM_LUA
    + """
local fps = {}
for i = 3, #ARGV do fps[#fps + 1] = ARGV[i] end
return bloom_seen(KEYS[1], fps, tonumber(ARGV[1]), tonumber(ARGV[2]))
"""
)


@dataclass(frozen=True)
class BloomSize:
    bits: int  # m
    hashes: int  # k
    capacity: int
    error_rate: float

    @classmethod
    def for_capacity(cls, capacity: int, error_rate: float) -> BloomSize:
        if capacity < 1 or not 0 < error_rate < 1:
            raise ValueError("BLOOM_CAPACITY must be >= 1 and 0 < BLOOM_ERROR_RATE < 1")
        bits = math.ceil(-capacity * math.log(error_rate) / math.log(2) ** 2)
        bits = min(max(bits, 64), 2**32)  # a Redis string holds at most 2^32 bits
        hashes = max(1, round(bits / capacity * math.log(2)))
        return cls(bits, hashes, capacity, error_rate)

    def estimated_error_rate(self, count: int) -> float:
        """False-positive rate after ``count`` additions: (1 - e^(-kn/m))^k."""
        return (1 - math.exp(-self.hashes * count / self.bits)) ** self.hashes


class BloomFilter:
    """The shared Bloom filter of one crawl; the sizes of the first user win."""

    def __init__(
        self,
        server: redis.Redis,
        keys: CrawlKeys,
        size: BloomSize,
        shard: ShardKeys | None = None,
    ) -> None:
        self.server = server
        where = shard if shard is not None else keys
        self.key, self.meta_key = where.bloom, where.bloom_meta
        self.size = self._agree(size)
        self._check_and_add = server.register_script(_CHECK_AND_ADD)
        self._contains = server.register_script(_CONTAINS)

    def _agree(self, wanted: BloomSize) -> BloomSize:
        created = self.server.hsetnx(self.meta_key, "m", wanted.bits)
        if created:
            self.server.hset(
                self.meta_key,
                mapping={
                    "k": wanted.hashes,
                    "capacity": wanted.capacity,
                    "error_rate": repr(wanted.error_rate),
                    "count": 0,
                },
            )
            # allocate the whole string now: its memory is known from the start
            self.server.setbit(self.key, wanted.bits - 1, 0)
            return wanted
        meta = read_meta(self.server, self.meta_key)
        if meta is None:  # created by another worker between the two calls
            return wanted
        if meta != wanted:
            logger.warning(
                "Bloom filter %s exists with m=%d, k=%d (capacity %d, error rate %g): using it",
                self.key,
                meta.bits,
                meta.hashes,
                meta.capacity,
                meta.error_rate,
            )
        return meta

    def check_and_add(self, fingerprints: list[bytes]) -> list[bool]:
        """True for each fingerprint that was new (and is now added)."""
        args: list[Any] = [self.size.bits, self.size.hashes, *fingerprints]
        return [
            bool(flag) for flag in self._check_and_add(keys=[self.key, self.meta_key], args=args)
        ]

    def contains(self, fingerprints: list[bytes]) -> list[bool]:
        args: list[Any] = [self.size.bits, self.size.hashes, *fingerprints]
        return [bool(flag) for flag in self._contains(keys=[self.key, self.meta_key], args=args)]


def read_meta(server: redis.Redis, meta_key: str) -> BloomSize | None:
    raw = server.hgetall(meta_key)
    if not raw or b"k" not in raw:
        return None
    return BloomSize(
        bits=int(raw[b"m"]),
        hashes=int(raw[b"k"]),
        capacity=int(raw[b"capacity"]),
        error_rate=float(raw[b"error_rate"]),
    )


def _one_status(server: redis.Redis, key: str, meta_key: str) -> dict[str, Any] | None:
    size = read_meta(server, meta_key)
    if size is None:
        return None
    count = int(server.hget(meta_key, "count") or 0)
    return {
        "bits": size.bits,
        "hashes": size.hashes,
        "capacity": size.capacity,
        "error_rate": size.error_rate,
        "count": count,
        "memory_bytes": int(server.memory_usage(key) or 0),
        "estimated_error_rate": size.estimated_error_rate(count),
    }


def bloom_status(server: redis.Redis, keys: CrawlKeys) -> dict[str, Any] | None:
    """Memory and estimated false-positive rate of the crawl's Bloom filter, if it has one.

    On a cluster, of the shards' filters together: bits, capacity, count and memory
    summed, ``shards`` the filters found, and the false-positive rate estimated for
    a fingerprint of the crawl (the shards' rates weighted by their counts).
    """
    if not keys.cluster:
        return _one_status(server, keys.bloom, keys.bloom_meta)
    found = [_one_status(server, shard.bloom, shard.bloom_meta) for shard in keys.all_shards()]
    shards = [each for each in found if each is not None]
    if not shards:
        return None
    count = sum(int(each["count"]) for each in shards)
    rates = [(float(each["estimated_error_rate"]), int(each["count"])) for each in shards]
    return {
        "bits": sum(int(each["bits"]) for each in shards),
        "hashes": max(int(each["hashes"]) for each in shards),
        "capacity": sum(int(each["capacity"]) for each in shards),
        "error_rate": max(float(each["error_rate"]) for each in shards),
        "count": count,
        "memory_bytes": sum(int(each["memory_bytes"]) for each in shards),
        "estimated_error_rate": (
            sum(rate * n for rate, n in rates) / count if count else max(r for r, _ in rates)
        ),
        "shards": len(shards),
    }


class BloomDupeFilter(BinaryFingerprintDupeFilter):
    """The fingerprint dupefilter on a Bloom filter (settings ``BLOOM_CAPACITY``,
    ``BLOOM_ERROR_RATE``); the in-process cache of known fingerprints still applies."""

    bloom: BloomFilter
    blooms: list[BloomFilter]  # on a cluster: one per shard (``bloom`` is shard 0's)

    @classmethod
    def from_spider(cls, spider: Any) -> BloomDupeFilter:
        dupefilter = super().from_spider(spider)
        assert isinstance(dupefilter, BloomDupeFilter)
        settings = spider.settings
        size = BloomSize.for_capacity(
            settings.getint("BLOOM_CAPACITY", defaults.BLOOM_CAPACITY),
            settings.getfloat("BLOOM_ERROR_RATE", defaults.BLOOM_ERROR_RATE),
        )
        keys = dupefilter.keys
        if keys.cluster:
            size = BloomSize.for_capacity(
                max(1, size.capacity // keys.shards), size.error_rate
            )
            dupefilter.blooms = [
                BloomFilter(dupefilter.server, keys, size, shard) for shard in keys.all_shards()
            ]
            dupefilter.bloom = dupefilter.blooms[0]
        else:
            dupefilter.bloom = BloomFilter(dupefilter.server, keys, size)
            dupefilter.blooms = [dupefilter.bloom]
        return dupefilter

    def request_seen(self, request: Request) -> bool:
        fingerprint = self.request_fingerprint(request)
        if self.known(fingerprint):
            return True
        bloom = self.bloom
        if self.keys.cluster:
            bloom = self.blooms[self.keys.shard_of(site_key(request.url))]
        [added] = bloom.check_and_add([fingerprint])
        self.remember(fingerprint)
        return not added
