"""Leases on a Redis Cluster: one queue, fingerprint set and lease hash per shard.

On a cluster (``REDIS_CLUSTER=true``, see :mod:`crawler.core.keys`) a request lives
in the shard of its URL's site: it is queued in ``<s>:{s<i>}:requests`` (its
lanes ``<s>:{s<i>}:requests:<score>``, :mod:`crawler.scheduling.lanes`), its
fingerprint is checked in ``<s>:{s<i>}:dupefilter`` (or that shard's Bloom
filter) and, once popped, its lease is recorded in the same shard's
``<s>:{s<i>}:inflight:<worker>``, all in one slot, so each Lua script of
:mod:`crawler.leasing.ledger` and :mod:`crawler.leasing.batch` runs unchanged
on one shard's keys. Seeds and their leases live under ``{seeds}``
(``start_urls``, ``inflight:<worker>``). Lease ids are those of a plain Redis
(``r|<score>|<sha1>``, ``s|0|<sha1>``); the worker remembers in which hash each
lease it popped is (:class:`LeaseHomes`), so finishing one is one ``HDEL`` of
the right hash.

**Fair pops** (:class:`ShardRotation`). A pop of ``n`` requests goes around the
shards starting one shard further on each time (each worker starts at a random
one), and takes an even share (``n / SPREAD``, at least 1) from each shard with
work until it has ``n``: every shard with requests is first in turn once every
``shards`` pops, whatever the depth of the others, so no shard (and no site)
starves; within a shard, requests go by priority as on a plain Redis. A shard
whose pop came back short is skipped for ``RECHECK`` seconds (an empty shard
costs nothing); when every shard is skipped, one pipelined count of all of
them (:func:`crawler.scheduling.lanes.count_queue`, one round trip per node)
says which have work again.

**Recovery** of a dead worker's leases: per shard, each hash back into its own
shard's queue (same Lua script as on a plain Redis), the seeds' hash back into
``start_urls``. The "is it alive" check is a separate read before those
scripts (the alive key has its own slot): a worker that comes back to life
between the check and the requeue (a process frozen longer than
``LEASE_WORKER_TIMEOUT``, then resumed) may have requests requeued that it
still works on: they are fetched twice (upserts make it harmless), none is lost.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Iterable
from typing import Any, Protocol

from crawler.core.keys import CrawlKeys
from crawler.scheduling.lanes import REQUEUE_LUA, QueueCount, count_queue


class LeaseLedger(Protocol):
    """What the cluster side reads of its :class:`~crawler.leasing.ledger.LeaseLedger`
    (stated here, so that this module needs nothing of the one that holds it)."""

    server: Any
    keys: CrawlKeys
    worker_id: str

    def shard_inflight(self, shard: int) -> str: ...

    def inflight_keys(self, worker_id: str | None = None) -> list[str]: ...

    def home_of(self, lease: str) -> str | None: ...

# Cluster: KEYS: a lease hash, where its payloads go back (start_urls list or a
# shard's queue). ARGV: 'list' or 'queue'. Returns the count requeued.
RECOVER_INTO = (
    REQUEUE_LUA
    + """
if ARGV[1] == 'list' then return requeue(KEYS[1], false, KEYS[2]) end
return requeue(KEYS[1], KEYS[2], false)
"""
)


RECHECK = 0.5  # seconds a shard found empty is skipped by this worker's pops
SPREAD = 4  # a pop takes its requests from up to this many shards


class ShardRotation:
    """Which shards this worker's next pop takes from, and how many from each."""

    def __init__(self, shards: int, spread: int = SPREAD, recheck: float = RECHECK) -> None:
        self.shards = shards
        self.spread = max(1, spread)
        self.recheck = recheck
        self.start = random.randrange(shards)
        self._skip_until = [0.0] * shards

    def order(self, now: float | None = None) -> list[int]:
        """The shards to try, from this pop's start; the start moves on by one."""
        now = time.monotonic() if now is None else now
        order = [(self.start + step) % self.shards for step in range(self.shards)]
        self.start = (self.start + 1) % self.shards
        return [shard for shard in order if self._skip_until[shard] <= now]

    def share(self, count: int, live: int) -> int:
        """Requests to take from each shard of a pop of ``count`` over ``live`` shards."""
        return max(1, math.ceil(count / max(1, min(self.spread, live))))

    def saw(self, shard: int, asked: int, got: int, now: float | None = None) -> None:
        """A pop asked a shard for ``asked`` and got ``got``: skip it a while if short."""
        if got < asked:
            self._skip_until[shard] = (time.monotonic() if now is None else now) + self.recheck
        else:
            self._skip_until[shard] = 0.0

    def depths(self, depths: Iterable[int], now: float | None = None) -> None:
        """Queue lengths of every shard, read now: the non-empty ones are tried again."""
        now = time.monotonic() if now is None else now
        for shard, depth in enumerate(depths):
            self._skip_until[shard] = 0.0 if depth > 0 else now + self.recheck


class LeaseHomes:
    """Lease id -> the hash it is recorded in, for the leases this worker popped."""

    def __init__(self) -> None:
        self._home: dict[str, str] = {}

    def popped(self, key: str, leases: Iterable[str]) -> None:
        for lease in leases:
            self._home[lease] = key

    def home(self, lease: str) -> str | None:
        return self._home.get(lease)

    def done(self, leases: Iterable[str]) -> None:
        for lease in leases:
            self._home.pop(lease, None)

    def forget_key(self, key: str) -> None:
        """Every lease of ``key`` was requeued (recovery)."""
        for lease in [lease for lease, home in self._home.items() if home == key]:
            del self._home[lease]

    def __len__(self) -> int:
        return len(self._home)


Popped = list[tuple[str, bytes]]


class ClusterLeases:
    """The cluster side of a :class:`~crawler.leasing.ledger.LeaseLedger`."""

    def __init__(self, ledger: LeaseLedger) -> None:
        self.ledger = ledger
        self.server = ledger.server
        self.keys = ledger.keys
        self.rotation = ShardRotation(self.keys.shards)
        #: the browser queues' own turn and skips (a worker that renders pops them too)
        self.browser_rotation = ShardRotation(self.keys.shards)
        self.homes = LeaseHomes()
        self._recover_into = self.server.register_script(RECOVER_INTO)

    def take_across(
        self, count: int, pop_one: Callable[[int, int], tuple[Popped, int]], browser: bool = False
    ) -> tuple[Popped, int]:
        """A pop of ``count``: ``pop_one(shard, n)`` on the shards in turn, an even share
        from each; shards that gave their whole share are asked again for the rest.
        ``browser``: a pop of the browser queues (their own rotation)."""
        rotation = self.browser_rotation if browser else self.rotation
        live = rotation.order()
        if not live:  # every shard looked empty lately: read their lengths
            rotation.depths(self.shard_depths(browser))
            live = rotation.order()
        taken: Popped = []
        wait = -1
        share = rotation.share(count, len(live))
        while live and len(taken) < count:
            again = []
            for shard in live:
                want = min(share, count - len(taken))
                if want <= 0:
                    break
                got, met = pop_one(shard, want)
                rotation.saw(shard, want, len(got))
                self.homes.popped(self.ledger.shard_inflight(shard), (lease for lease, _ in got))
                taken += got
                if met >= 0:
                    wait = met if wait < 0 else min(wait, met)
                if len(got) == want:
                    again.append(shard)
            live = again
        return taken, wait

    def finish(self, leases: list[str]) -> None:
        """One ``HDEL`` per lease hash; a lease of unknown home (not popped by this
        process) is deleted from every shard's hash of this worker."""
        by_home: dict[str, list[str]] = {}
        for lease in leases:
            home = self.ledger.home_of(lease)
            for key in [home] if home else self.ledger.inflight_keys()[:-1]:
                by_home.setdefault(key, []).append(lease)
        for key, some in by_home.items():
            self.server.hdel(key, *some)
        self.homes.done(leases)

    def recover(self, worker_id: str, force: bool, held: list[str] | None) -> int:
        """Requeue a worker's leases, hash by hash, into the queue of each one's shard
        (the seeds' into ``start_urls``); -1 if it is alive (and not ``force``)."""
        if not force and self.server.exists(self.keys.alive(worker_id)):
            return -1
        if held is None:
            keys = self.ledger.inflight_keys(worker_id)
            with self.server.pipeline(transaction=False) as pipe:
                for key in keys:
                    pipe.exists(key)
                held = [key for key, there in zip(keys, pipe.execute(), strict=True) if there]
        seeds = self.keys.seed_inflight(worker_id)
        count = 0
        for key in held:
            if key == seeds:
                count += int(self._recover_into(keys=[key, self.keys.start_urls], args=["list"]))
            else:
                queue = key.rsplit(":inflight:", 1)[0] + ":requests"
                count += int(self._recover_into(keys=[key, queue], args=["queue"]))
            if worker_id == self.ledger.worker_id:
                self.homes.forget_key(key)
        return count

    def shard_depths(self, browser: bool = False) -> list[int]:
        """Requests queued in each shard (``browser``: in its browser queue; one round
        trip per node)."""
        with self.server.pipeline(transaction=False) as pipe:
            for shard in self.keys.all_shards():
                count_queue(pipe, shard.browser_requests if browser else shard.requests)
            return [QueueCount().add(reply).total for reply in pipe.execute()]

    def waiting(self, browser: bool = False) -> tuple[int, int]:
        """Requests queued in every shard, summed (``browser``: and in the browser
        queues), and seeds not yet taken."""
        shards = self.keys.all_shards()
        with self.server.pipeline(transaction=False) as pipe:
            for shard in shards:
                count_queue(pipe, shard.requests)
            if browser:
                for shard in shards:
                    count_queue(pipe, shard.browser_requests)
            pipe.llen(self.keys.start_urls)
            *replies, seeds = pipe.execute()
        depths = [QueueCount().add(reply).total for reply in replies]
        self.rotation.depths(depths[: len(shards)])
        if browser:
            self.browser_rotation.depths(depths[len(shards) :])
        return sum(depths), int(seeds)
