"""``OutputBatch``: what pages produce, sent to Redis in one atomic call per batch.

It is the batched form of :class:`~crawler.leasing.ledger.LeaseLedger`'s
``push_if_new``, ``finish`` and ``pop``, for many pages at once.

Without batching every new link costs a script call (fingerprint check and push)
and finished leases go in their own ``HDEL``. With ``SCHEDULER_FLUSH_INTERVAL``
above 0, a worker gathers, across pages, the links its pages yielded and the
leases whose work is done, and sends them with **one** script call that

1. checks every fingerprint at once (``SMISMEMBER``) and adds the new ones with
   one ``SADD`` and their requests with one ``ZADD``;
2. deletes the finished leases with one ``HDEL`` (after step 1, in the same
   atomic call: a lease is never finished before the links of its page are
   queued — at-least-once delivery holds);
3. pops the next requests for this worker under lease (one ``ZRANGE``, one
   ``ZREMRANGEBYRANK``, one ``HSET``), when asked.

A batch is sent every ``SCHEDULER_FLUSH_INTERVAL`` seconds (by the lease
tracker's loop, :class:`crawler.leasing.tracker.LeaseTracker`), when it holds
``SCHEDULER_FLUSH_MAX`` links and leases, or when the worker needs requests
(its pop rides on the flush). So the commands a page costs are a share
of about eight per batch, whatever the number of links it yields.

Lease ids are those of :mod:`crawler.leasing.ledger` (``r|<score>|<sha1>``),
so a worker killed mid-batch is recovered the same way: what it held is
requeued, and the links it had not sent yet are found again when the pages
whose leases were never finished are fetched again.

Stats: ``scheduler/batch/flushes``, ``scheduler/batch/links``,
``dupefilter/filtered``, ``leases/finished``.
"""

from __future__ import annotations

import logging
from typing import Any

import redis

from crawler.keys import CrawlKeys
from crawler.scheduling.bloom import BLOOM_LUA, BloomFilter

logger = logging.getLogger(__name__)

# ARGV: n links, n to pop, bloom m, bloom k, then n x (fingerprint, score, payload),
# then finished leases. KEYS: dupefilter (set or Bloom string), queue, inflight,
# [bloom meta]. Returns {added flags (1/0 per link), {lease1, payload1, ...}}.
_HEAD = """
local n = tonumber(ARGV[1])
local npop = tonumber(ARGV[2])
local fps, added = {}, {}
for i = 1, n do fps[i] = ARGV[3 * i + 2] end
local function split(seen)
  local new, members, batch = {}, {}, {}
  for i = 1, n do
    local fp = fps[i]
    if seen[i] == 0 and not batch[fp] then
      batch[fp] = true
      new[#new + 1] = fp
      members[#members + 1] = ARGV[3 * i + 3]
      members[#members + 1] = ARGV[3 * i + 4]
      added[i] = 1
    else
      added[i] = 0
    end
  end
  return new, members
end
"""

_DEDUPE_SET = """
if n > 0 then
  local new, members = split(redis.call('SMISMEMBER', KEYS[1], unpack(fps)))
  if #new > 0 then
    redis.call('SADD', KEYS[1], unpack(new))
    redis.call('ZADD', KEYS[2], unpack(members))
  end
end
"""

_DEDUPE_BLOOM = """
if n > 0 then
  local m, k = tonumber(ARGV[3]), tonumber(ARGV[4])
  local new, members = split(bloom_seen(KEYS[1], fps, m, k))
  if #new > 0 then
    bloom_add(KEYS[1], new, m, k)
    redis.call('HINCRBY', KEYS[4], 'count', #new)
    redis.call('ZADD', KEYS[2], unpack(members))
  end
end
"""

_TAIL = """
local first = 3 * n + 5
if #ARGV >= first then
  redis.call('HDEL', KEYS[3], unpack(ARGV, first, #ARGV))
end
local out = {}
if npop > 0 then
  local items = redis.call('ZRANGE', KEYS[2], 0, npop - 1, 'WITHSCORES')
  if #items > 0 then
    redis.call('ZREMRANGEBYRANK', KEYS[2], 0, #items / 2 - 1)
    local fields = {}
    for i = 1, #items, 2 do
      local lease = 'r|' .. items[i + 1] .. '|' .. redis.sha1hex(items[i])
      fields[#fields + 1] = lease
      fields[#fields + 1] = items[i]
      out[#out + 1] = lease
      out[#out + 1] = items[i]
    end
    redis.call('HSET', KEYS[3], unpack(fields))
  end
end
return {added, out}
"""

_FLUSH = _HEAD + _DEDUPE_SET + _TAIL
_FLUSH_BLOOM = BLOOM_LUA + _HEAD + _DEDUPE_BLOOM + _TAIL


class OutputBatch:
    """Links and finished leases of one worker, waiting for their one script call."""

    def __init__(
        self,
        server: redis.Redis,
        keys: CrawlKeys,
        inflight_key: str,
        interval: float,
        max_size: int,
        stats: Any = None,
    ) -> None:
        self.keys = keys
        self.inflight_key = inflight_key
        self.interval = interval
        self.max_size = max(1, max_size)
        self.stats = stats
        self.server = server
        self._script = server.register_script(_FLUSH)
        self._keys = [keys.dupefilter, keys.requests, inflight_key]
        self._bloom: BloomFilter | None = None
        self._links: list[tuple[bytes, float, bytes]] = []
        self._leases: list[str] = []

    def use_bloom(self, bloom: BloomFilter) -> None:
        """Check and add fingerprints in this Bloom filter instead of the exact set."""
        self._bloom = bloom
        self._script = self.server.register_script(_FLUSH_BLOOM)
        self._keys = [bloom.key, self.keys.requests, self.inflight_key, bloom.meta_key]

    @property
    def pending_links(self) -> int:
        return len(self._links)

    def __len__(self) -> int:
        return len(self._links) + len(self._leases)

    def add_link(self, fingerprint: bytes, score: float, payload: bytes, old_lease: str) -> None:
        """Queue a request unless its fingerprint is seen; ``old_lease`` is finished either way."""
        self._links.append((fingerprint, score, payload))
        if old_lease:
            self._leases.append(old_lease)
        self._added()

    def finish(self, lease: str) -> None:
        """Finish a lease with the next batch, after every link gathered before it."""
        if lease:
            self._leases.append(lease)
            self._added()

    def _added(self) -> None:
        if len(self) >= self.max_size:
            try:
                self.flush()
            except Exception as exc:  # Redis away: kept, the next tick tries again
                logger.warning("Could not send %d links and leases yet (%r)", len(self), exc)

    def flush(self, pop: int = 0) -> list[tuple[str, bytes]]:
        """Send everything gathered, and pop up to ``pop`` requests under lease.

        More than ``SCHEDULER_FLUSH_MAX`` (after an outage) goes in several calls,
        every link before every lease, so no lease is finished before its links.
        """
        popped: list[tuple[str, bytes]] = []
        while True:
            last = len(self) <= self.max_size
            links = self._links[: self.max_size]
            leases = self._leases[: self.max_size - len(links)]
            popped = self._call(links, leases, pop if last else 0)
            del self._links[: len(links)]
            del self._leases[: len(leases)]
            if last:
                return popped

    def _call(
        self, links: list[tuple[bytes, float, bytes]], leases: list[str], pop: int
    ) -> list[tuple[str, bytes]]:
        if not links and not leases and not pop:
            return []
        size = self._bloom.size if self._bloom is not None else None
        args: list[Any] = [len(links), pop, size.bits if size else 0, size.hashes if size else 0]
        for fingerprint, score, payload in links:
            args += [fingerprint, score, payload]
        args += leases
        added, popped = self._script(keys=self._keys, args=args)
        if self.stats is not None and (links or leases):
            self.stats.inc_value("scheduler/batch/flushes")
            self.stats.inc_value("scheduler/batch/links", len(links))
            duplicates = len(links) - sum(int(flag) for flag in added)
            if duplicates:
                self.stats.inc_value("dupefilter/filtered", duplicates)
            if leases:
                self.stats.inc_value("leases/finished", len(leases))
        return [(popped[i].decode(), popped[i + 1]) for i in range(0, len(popped), 2)]
