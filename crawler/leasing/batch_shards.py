"""The batch of :class:`~crawler.leasing.batch.OutputBatch` on a Redis Cluster, split per shard.

One script (that of :mod:`crawler.leasing.batch`) cannot touch two shards, so
a batch whose links go to several sites' shards is sent as:

1. **links**, one call per shard they go to (fingerprints checked and requests
   queued in that shard), in chunks of ``SCHEDULER_FLUSH_MAX``; the last of
   these calls also finishes the leases held in its own shard: every other link
   is queued by then;
2. **the pop**, across the shards in turn (:mod:`crawler.leasing.shards`); the
   call that pops from a shard also finishes the leases held in it;
3. **the leases left**: one call (or ``HDEL``) per lease hash.

So no lease is finished before every link of the batch is queued, whatever its
shard (at-least-once). A failure part-way raises (the tracker's loop retries):
the links already queued leave the batch (sent again they would only be found
seen), the leases not yet finished stay in it.
"""

from __future__ import annotations

import time
from collections import Counter
from typing import Any, Protocol

from crawler.core.keys import CrawlKeys
from crawler.scheduling.bloom import BloomFilter

Link = tuple[bytes, float | str, bytes, int]


class OutputBatch(Protocol):
    """What a flush on a cluster reads and changes of its
    :class:`~crawler.leasing.batch.OutputBatch` (stated here, so that this module
    needs nothing of the one that calls it)."""

    keys: CrawlKeys
    ledger: Any
    server: Any
    stats: Any
    max_size: int
    delayed_wait: int
    blooms: list[BloomFilter] | None
    shard_depth: dict[int, int]
    _links: list[Link]
    _leases: list[str]

    def _depth_due(self, now: float) -> bool: ...

    def _saw_depth(self, depth: int, now: float) -> None: ...

    def send(
        self,
        keys: list[str],
        size: Any,
        links: list[Link],
        leases: list[str],
        pop: int,
        read_depth: bool,
        hint: str = "",
    ) -> tuple[list[int], list[tuple[str, bytes]], int, int]: ...


def _shard_keys(batch: OutputBatch, shard: int) -> tuple[list[str], Any]:
    where = batch.keys.shard(shard)
    inflight = where.inflight(batch.ledger.worker_id)
    if batch.blooms is not None:
        bloom = batch.blooms[shard]
        return [bloom.key, where.requests, inflight, bloom.meta_key], bloom.size
    return [where.dupefilter, where.requests, inflight], None


def _drop_leases(batch: OutputBatch, leases: list[str]) -> None:
    """Leases finished in Redis: out of the batch, and out of the ledger's homes."""
    if not leases:
        return
    done = Counter(leases)
    kept = []
    for lease in batch._leases:
        if done[lease] > 0:
            done[lease] -= 1
        else:
            kept.append(lease)
    batch._leases = kept
    batch.ledger.homes.done(leases)


def flush_sharded(batch: OutputBatch, pop: int = 0) -> list[tuple[str, bytes]]:
    """Send everything the batch holds, shard by shard; pop up to ``pop`` requests."""
    ledger = batch.ledger
    worker = ledger.worker_id
    max_size = batch.max_size
    inflight_shard = {batch.keys.shard(i).inflight(worker): i for i in range(batch.keys.shards)}
    by_home: dict[str, list[str]] = {}
    unknown: list[str] = []
    for lease in batch._leases:
        home = ledger.home_of(lease)
        if home:
            by_home.setdefault(home, []).append(lease)
        else:
            unknown.append(lease)

    def take_leases(home: str, room: int) -> list[str]:
        waiting = by_home.get(home, [])
        leases, by_home[home] = waiting[:room], waiting[room:]
        if not by_home[home]:
            del by_home[home]
        return leases

    # 1. links, shard by shard; shards that also hold finished leases last
    by_shard: dict[int, list[Link]] = {}
    for link in batch._links:
        by_shard.setdefault(link[3], []).append(link)
    order = sorted(by_shard, key=lambda shard: _shard_keys(batch, shard)[0][2] in by_home)
    for index, shard in enumerate(order):
        keys, size = _shard_keys(batch, shard)
        links = by_shard[shard]
        for start in range(0, len(links), max_size):
            chunk = links[start : start + max_size]
            final = index == len(order) - 1 and start + max_size >= len(links)
            leases = take_leases(keys[2], max_size - len(chunk)) if final else []
            batch.send(keys, size, chunk, leases, 0, False)
            sent = {id(link) for link in chunk}
            batch._links = [link for link in batch._links if id(link) not in sent]
            _drop_leases(batch, leases)

    # 2. the pop, each shard's call finishing that shard's leases too
    popped: list[tuple[str, bytes]] = []
    if pop:
        now = time.monotonic()
        read_depth = batch._depth_due(now)
        read: list[int] = []

        def pop_one(shard: int, count: int) -> tuple[list[tuple[str, bytes]], int]:
            keys, size = _shard_keys(batch, shard)
            leases = take_leases(keys[2], max_size)
            _, got, depth, wait = batch.send(keys, size, [], leases, count, read_depth)
            _drop_leases(batch, leases)
            if depth >= 0:
                batch.shard_depth[shard] = depth
                read.append(depth)
            return got, wait

        popped, batch.delayed_wait = ledger.sharded.take_across(pop, pop_one)
        if read:
            batch._saw_depth(sum(batch.shard_depth.values()), now)

    # 3. the leases left, hash by hash
    for home in list(by_home):
        while home in by_home:
            leases = take_leases(home, max_size)
            if home in inflight_shard:
                keys, size = _shard_keys(batch, inflight_shard[home])
                batch.send(keys, size, [], leases, 0, False)
            else:  # the seeds' hash
                batch.server.hdel(home, *leases)
                if batch.stats is not None:
                    batch.stats.inc_value("leases/finished", len(leases))
            _drop_leases(batch, leases)
    if unknown:  # not popped by this process: finished in every shard's hash
        ledger.finish(unknown)
        _drop_leases(batch, unknown)
    return popped
