"""``OutputBatch``: what pages produce, sent to Redis in one atomic call per batch.

It is the batched form of :class:`~crawler.leasing.ledger.LeaseLedger`'s
``push_if_new``, ``finish`` and ``pop``, for many pages at once.

Without batching every new link costs a script call (fingerprint check and push)
and finished leases go in their own ``HDEL``. With ``SCHEDULER_FLUSH_INTERVAL``
above 0, a worker gathers, across pages, the links its pages yielded and the
leases whose work is done, and sends them with **one** script call that

1. checks every fingerprint at once (``SMISMEMBER``) and adds the new ones with
   one ``SADD`` and their requests with one ``RPUSH`` per priority lane (and one
   ``ZADD`` of the lane index when a lane was empty: :mod:`crawler.scheduling.lanes`);
   a link that needs a browser goes to the browser queue beside the queue
   (:mod:`crawler.browser.routing`), in the same call;
2. deletes the finished leases with one ``HDEL`` (after step 1, in the same
   atomic call: a lease is never finished before the links of its page are
   queued — at-least-once delivery holds);
3. pops the next requests for this worker under lease (``take`` of
   :mod:`crawler.scheduling.lanes`: a ``ZRANGE`` of the lane index and one
   ``LPOP`` of the best lane; one ``HSET``), when asked, and reads how many
   stay queued (``ready``: ``LLEN`` of every lane the pop's reading of the index
   listed, and ``ZCOUNT`` of the sorted set's requests ready to go when it holds
   any, at most every quarter second). Retries waiting for their time (see
   :mod:`crawler.core.keys`) stay in the sorted set until they are due: a few more
   commands per pop while some wait, none when none does.

When a batch is sent (:meth:`OutputBatch.due`, asked by the lease tracker's
loop, :class:`crawler.leasing.tracker.LeaseTracker`):

* with the worker's next pop, whatever it holds (a pop rides on the flush);
* when it holds ``SCHEDULER_FLUSH_MAX`` links and leases;
* links: ``SCHEDULER_FLUSH_INTERVAL`` seconds after the first of them while the
  shared queue is short, so that no worker starves for them. While it is deep
  (after this worker's last pop, at least ``SCHEDULER_FLUSH_DEEP_QUEUE``
  requests left, and enough for twice the linger at the rate the queue shrank
  over the pops before) they may wait up to ``SCHEDULER_FLUSH_LINGER`` seconds:
  the other workers have plenty to do meanwhile, and most batches then ride on
  a pop;
* finished leases alone: ``LEASE_FINISH_INTERVAL`` seconds after the first.

So the commands a page costs are a share of about eight per batch, whatever
the number of links it yields, and a worker with few requests open (where each
page used to be a batch of its own) sends about one batch per pop.

Lease ids are those of :mod:`crawler.leasing.ledger` (``r|<score>|<sha1>``),
so a worker killed mid-batch is recovered the same way: what it held is
requeued, and the links it had not sent yet are found again when the pages
whose leases were never finished are fetched again.

**On a Redis Cluster** the batch is split per shard
(:func:`crawler.leasing.batch_shards.flush_sharded`): one call of the same
script per shard whose links it holds, then the finished leases, hash by hash
(each lease is finished in the shard it was popped from), then the pop, across
the shards in turn; so the links of every shard are queued before any lease is
finished (at-least-once holds: a failure in between leaves the leases unfinished,
and the links already queued are found seen when sent again).

Stats: ``scheduler/batch/flushes``, ``scheduler/batch/links``,
``dupefilter/filtered``, ``leases/finished``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import redis

from crawler.core.keys import CrawlKeys
from crawler.leasing.batch_lua import FLUSH_BLOOM_LUA, FLUSH_LUA
from crawler.scheduling.bloom import BloomFilter

logger = logging.getLogger(__name__)

DRAIN_WINDOW = 0.25  # seconds between two readings of how fast the shared queue shrinks


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
        linger: float = 0.0,
        deep_queue: int = 0,
        lease_wait: float = 0.0,
        ledger: Any = None,
    ) -> None:
        self.keys = keys
        #: the worker's LeaseLedger: on a cluster, where its leases are and the pop's shards
        self.ledger = ledger
        self.inflight_key = inflight_key
        self.interval = interval
        self.max_size = max(1, max_size)
        self.stats = stats
        #: how long links may wait while the shared queue is deep (0: never longer)
        self.linger = max(interval, linger)
        self.deep_queue = deep_queue
        #: how long finished leases may wait when no link is waiting
        self.lease_wait = max(interval, lease_wait)
        #: requests left in the shared queue after this worker's last pop (-1: not known)
        self.queue_depth = -1
        #: how fast the shared queue shrinks, requests/s (0 while it grows), from the pops
        self.drain_rate = 0.0
        self._drain_from: tuple[float, int] | None = None  # (time, depth) the rate is read from
        #: ms until the earliest waiting retry met by the last pop is due (-1: none met)
        self.delayed_wait = -1
        #: the scheduler's WakeUps (plain Redis): while no wake-up was heard since a pop,
        #: the next pop takes the lane it named without reading the lane index
        self.wakeups: Any = None
        self._lane_hint: tuple[str, int] | None = None  # (lane, wake-ups heard then)
        self._next_lane = ""  # the lane the last script's pop named ('' : none)
        self._depth_at: float | None = None  # when the depth was read last
        self.server = server
        self._script = server.register_script(FLUSH_LUA)
        # the keys of the one script call (a plain Redis; per shard on a cluster)
        self._keys = [] if keys.cluster else [keys.dupefilter, keys.requests, inflight_key]
        self._bloom: BloomFilter | None = None
        self.blooms: list[BloomFilter] | None = None  # cluster: one filter per shard
        self.shard_depth: dict[int, int] = {}  # cluster: queue depth per shard, last read
        #: (fingerprint, score ('b<score>': needs a browser), payload, shard)
        self._links: list[tuple[bytes, float | str, bytes, int]] = []
        self._leases: list[str] = []
        self._links_since = 0.0  # monotonic time of the oldest link waiting
        self._leases_since = 0.0  # monotonic time of the oldest lease waiting
        #: called when the batch, empty, is given its first link or lease (the lease
        #: tracker's loop then looks at it every ``interval`` again: see its ``_hurry``)
        self.on_waiting: Callable[[], None] | None = None

    def use_bloom(self, bloom: BloomFilter | list[BloomFilter]) -> None:
        """Check and add fingerprints in this Bloom filter instead of the exact set
        (on a cluster: a list, one filter per shard)."""
        if isinstance(bloom, list):
            self.blooms = bloom
            self._script = self.server.register_script(FLUSH_BLOOM_LUA)
            return
        self._bloom = bloom
        self._script = self.server.register_script(FLUSH_BLOOM_LUA)
        self._keys = [bloom.key, self.keys.requests, self.inflight_key, bloom.meta_key]

    @property
    def pending_links(self) -> int:
        return len(self._links)

    def __len__(self) -> int:
        return len(self._links) + len(self._leases)

    @property
    def queue_deep(self) -> bool:
        """May links linger? The shared queue held at least ``deep_queue`` requests at
        the last pop, and at the rate it shrinks it would last twice the linger."""
        if self.deep_queue <= 0 or self.queue_depth < self.deep_queue:
            return False
        return self.queue_depth >= 2 * self.drain_rate * self.linger

    def _depth_due(self, now: float) -> bool:
        """Read the queue's depth with this pop? (At most every ``DRAIN_WINDOW`` s.)"""
        return self._depth_at is None or now - self._depth_at >= DRAIN_WINDOW

    def _saw_depth(self, depth: int, now: float) -> None:
        """Note the queue's depth after a pop; update the drain rate every 0.25 s or more."""
        self.queue_depth = depth
        self._depth_at = now
        if self._drain_from is None:
            self._drain_from = (now, depth)
            return
        since, before = self._drain_from
        if now - since >= DRAIN_WINDOW:
            rate = max(0.0, (before - depth) / (now - since))
            self.drain_rate = (self.drain_rate + rate) / 2 if self.drain_rate else rate
            self._drain_from = (now, depth)

    def due(self, now: float | None = None) -> bool:
        """Should what waits be sent now (see the module's doc)?"""
        if now is None:
            now = time.monotonic()
        if self._links:
            wait = self.linger if self.queue_deep else self.interval
            if now - self._links_since >= wait:
                return True
        return bool(self._leases) and now - self._leases_since >= self.lease_wait

    def add_link(
        self,
        fingerprint: bytes,
        score: float,
        payload: bytes,
        old_lease: str,
        shard: int = 0,
        browser: bool = False,
    ) -> None:
        """Queue a request unless its fingerprint is seen; ``old_lease`` is finished either way.

        ``shard``: of the request's site (always 0 on a plain Redis); ``browser``: into
        the browser queue."""
        if not self._links:
            self._links_since = time.monotonic()
            if not self._leases and self.on_waiting is not None:
                self.on_waiting()
        self._links.append((fingerprint, f"b{score}" if browser else score, payload, shard))
        if old_lease:
            self._add_lease(old_lease)
        self._added()

    def finish(self, lease: str) -> None:
        """Finish a lease with the next batch, after every link gathered before it."""
        if lease:
            self._add_lease(lease)
            self._added()

    def _add_lease(self, lease: str) -> None:
        if not self._leases:
            self._leases_since = time.monotonic()
            if not self._links and self.on_waiting is not None:
                self.on_waiting()
        self._leases.append(lease)

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
        if self.keys.cluster:
            from crawler.leasing.batch_shards import flush_sharded

            return flush_sharded(self, pop)
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
        self, links: list[tuple[bytes, float | str, bytes, int]], leases: list[str], pop: int
    ) -> list[tuple[str, bytes]]:
        if not links and not leases and not pop:
            return []
        size = self._bloom.size if self._bloom is not None else None
        now = time.monotonic()
        read_depth = bool(pop) and self._depth_due(now)
        heard = self.wakeups.heard if self.wakeups is not None else -1
        hint = self._hint(heard) if pop else ""
        _, popped, depth, wait = self.send(self._keys, size, links, leases, pop, read_depth, hint)
        if depth >= 0:
            self._saw_depth(depth, now)
        if pop:
            self.delayed_wait = wait
            self._lane_hint = (self._next_lane, heard) if self._next_lane and heard >= 0 else None
        return popped

    def _hint(self, heard: int) -> str:
        """The lane the last pop named, while nothing can have put a better one ahead
        of it: listening for wake-ups, and none heard since (a lane that starts, or a
        request into the sorted set, publishes one; see crawler/scheduling/wakeup.py)."""
        if self._lane_hint is None or not self.wakeups.live:
            return ""
        lane, heard_then = self._lane_hint
        return lane if heard_then == heard else ""

    def send(
        self,
        keys: list[str],
        size: Any,
        links: list[tuple[bytes, float | str, bytes, int]],
        leases: list[str],
        pop: int,
        read_depth: bool,
        hint: str = "",
    ) -> tuple[list[int], list[tuple[str, bytes]], int, int]:
        """One script call on one shard's ``keys``: (added flags, popped, depth, wait).

        ``hint``: the lane to pop without reading the lane index (see :meth:`_hint`)."""
        args: list[Any] = [
            len(links),
            pop,
            1 if read_depth else 0,
            size.bits if size else 0,
            size.hashes if size else 0,
            hint,
        ]
        for fingerprint, score, payload, _ in links:
            args += [fingerprint, score, payload]
        args += leases
        if links and self.keys.cluster:
            # links reach a replica before any lease of their pages is finished
            added, popped, depth, wait, lane = self.ledger.replica_wait.call(
                self._script, keys, args
            )
        else:
            added, popped, depth, wait, lane = self._script(keys=keys, args=args)
        self._next_lane = lane.decode() if isinstance(lane, bytes) else str(lane)
        if self.stats is not None and (links or leases):
            self.stats.inc_value("scheduler/batch/flushes")
            self.stats.inc_value("scheduler/batch/links", len(links))
            duplicates = len(links) - sum(int(flag) for flag in added)
            if duplicates:
                self.stats.inc_value("dupefilter/filtered", duplicates)
            if leases:
                self.stats.inc_value("leases/finished", len(leases))
        pairs = [(popped[i].decode(), popped[i + 1]) for i in range(0, len(popped), 2)]
        return [int(flag) for flag in added], pairs, int(depth), int(wait)
