"""``LeaseLedger``: the Redis side of leases, so nothing a worker takes is lost if it dies.

scrapy-redis pops requests destructively: a worker killed with requests in hand
loses them. Here every pop is atomic with a record of what was taken, in the
hash ``<spider>:inflight:<worker>`` (field: lease id, value: the raw payload).
The worker deletes the field once the request is finished (its page parsed, its
links queued, its items stored, or its failure recorded as a dead letter). When
a worker stops beating (its key ``<spider>:alive:<worker>`` expires), any other
worker moves the requests it held back to where they came from.

A lease id is ``<kind>|<score>|<sha1 of payload>``: ``r`` for a request of the
queue (``score`` is its queue score), ``b`` of the browser queue (``browser=True`` of
pushes and pops, :mod:`crawler.browser.routing`), ``s`` for a seed of ``start_urls``,
so recovery knows where to put each one back without decoding it.

All multi-step operations are Lua scripts, so they are atomic and cost one round
trip. On a Redis Cluster the same scripts run on one shard's keys at a time
(queue, fingerprints and this worker's lease hash of the shard of the request's
site; seeds under ``{seeds}``), pops go around the shards fairly and recovery
goes shard by shard: see :mod:`crawler.leasing.shards`.
:class:`~crawler.leasing.batch.OutputBatch` does the same operations for
many pages in one call; :class:`~crawler.leasing.tracker.LeaseTracker` decides
when a lease is finished and when a worker's leases are recovered.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import partial
from typing import Any

import redis
from redis.cluster import RedisCluster

from crawler.core.keys import CrawlKeys
from crawler.leasing.replication import ReplicaWait
from crawler.leasing.shards import ClusterLeases, Popped
from crawler.scheduling.lanes import (
    LANES_LUA,
    REQUEUE_LUA,
    QueueCount,
    count_queue,
    queue_counts,
)

# KEYS: queue, inflight. ARGV: n, the leases' kind ('r', 'b'). Returns {{lease1,
# payload1, ...}, ms until the earliest waiting retry is due or -1}
_POP = (
    LANES_LUA
    + """
local items, wait = take(KEYS[1], tonumber(ARGV[1]))
if #items == 0 then return {{}, wait} end
local out = {}
for i = 1, #items, 2 do
  out[#out + 1] = ARGV[2] .. '|' .. items[i + 1] .. '|' .. redis.sha1hex(items[i])
  out[#out + 1] = items[i]
end
redis.call('HSET', KEYS[2], unpack(out))
return {out, wait}
"""
)

# KEYS: start_urls, inflight. ARGV: n. Pops seeds under lease, same reply shape.
_POP_SEEDS = """
local items = redis.call('LRANGE', KEYS[1], 0, tonumber(ARGV[1]) - 1)
if #items == 0 then return {} end
redis.call('LTRIM', KEYS[1], #items, -1)
local out = {}
for i = 1, #items do
  local lease = 's|0|' .. redis.sha1hex(items[i])
  redis.call('HSET', KEYS[2], lease, items[i])
  out[#out + 1] = lease
  out[#out + 1] = items[i]
end
return out
"""

# KEYS: dupefilter, queue, inflight. ARGV: fingerprint, score, payload, old lease or ''.
# Adds the request unless its fingerprint was seen; finishes the old lease either way.
_PUSH_IF_NEW = (
    LANES_LUA
    + """
local added = redis.call('SADD', KEYS[1], ARGV[1])
if added == 1 then push(KEYS[2], {ARGV[2], ARGV[3]}, false) end
if ARGV[4] ~= '' then redis.call('HDEL', KEYS[3], ARGV[4]) end
return added
"""
)

# KEYS: queue, inflight. ARGV: score, payload, old lease or ''.
_PUSH = (
    LANES_LUA
    + """
push(KEYS[1], {ARGV[1], ARGV[2]}, false)
if ARGV[3] ~= '' then redis.call('HDEL', KEYS[2], ARGV[3]) end
return 1
"""
)

# KEYS: queue, inflight, stats (none on a cluster). ARGV: seconds to wait, payload, old lease or ''.
# Queues a retry that waits in the queue's sorted set until its due time (Redis
# clock), and finishes the lease of the failed request in the same atomic step.
_PUSH_DELAYED = (
    LANES_LUA
    + """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local due = now + math.floor(tonumber(ARGV[1]) * 1000)
keep(KEYS[1], {string.format('%.0f', DELAYED_SCORE_BASE + due), ARGV[2]})
if ARGV[3] ~= '' then redis.call('HDEL', KEYS[2], ARGV[3]) end
if KEYS[3] then redis.call('HINCRBY', KEYS[3], 'retries_delayed', 1) end
return due - now
"""
)

# KEYS: inflight, alive, queue, start_urls. ARGV: '1' to recover even if alive.
# Puts every leased payload back where it came from. Returns the count, or -1
# when the worker is alive.
_RECOVER = (
    REQUEUE_LUA
    + """
if ARGV[1] ~= '1' and redis.call('EXISTS', KEYS[2]) == 1 then return -1 end
return requeue(KEYS[1], KEYS[3], KEYS[4])
"""
)


def _pairs(reply: Sequence[bytes]) -> list[tuple[str, bytes]]:
    return [(reply[i].decode(), reply[i + 1]) for i in range(0, len(reply), 2)]


class LeaseLedger:
    """Lease operations of one worker on one crawl's keys.

    ``inflight_key`` is this worker's lease hash on a plain Redis; on a cluster,
    that of its seeds (the requests' leases are in each shard's hash,
    :meth:`inflight_keys`). ``shard`` arguments: the shard of the request's site
    (:meth:`crawler.core.keys.CrawlKeys.shard_of`), always 0 on a plain Redis.
    """

    def __init__(self, server: redis.Redis, keys: CrawlKeys, worker_id: str) -> None:
        self.server = server
        self.keys = keys
        self.worker_id = worker_id
        self.cluster = keys.cluster
        self.inflight_key = keys.seed_inflight(worker_id)
        self._pop = server.register_script(_POP)
        self._pop_seeds = server.register_script(_POP_SEEDS)
        self._push_if_new = server.register_script(_PUSH_IF_NEW)
        self._push = server.register_script(_PUSH)
        self._push_delayed = server.register_script(_PUSH_DELAYED)
        self._recover = server.register_script(_RECOVER)
        if self.cluster:
            self.sharded = ClusterLeases(self)
            self.homes = self.sharded.homes
        #: on a cluster with replicas, set by the lease tracker from the settings
        self.replica_wait = ReplicaWait.off()
        #: this worker pops the browser queue too: it counts it as its work (waiting())
        self.counts_browser = False

    # -- where things are (one shard, and no tag, on a plain Redis) ----------------------
    def shard_inflight(self, shard: int) -> str:
        if not self.cluster:
            return self.inflight_key
        return self.keys.shard(shard).inflight(self.worker_id)

    def inflight_keys(self, worker_id: str | None = None) -> list[str]:
        """Every lease hash of a worker: one per shard and the seeds' (one on a plain Redis)."""
        worker = worker_id or self.worker_id
        if not self.cluster:
            return [self.keys.inflight(worker)]
        return [shard.inflight(worker) for shard in self.keys.all_shards()] + [
            self.keys.seed_inflight(worker)
        ]

    def queue_of(self, shard: int = 0, browser: bool = False) -> str:
        """The queue of a shard (the plain Redis's one): the browser queue if ``browser``."""
        where = self.keys.shard(shard)
        return where.browser_requests if browser else where.requests

    def home_of(self, lease: str) -> str | None:
        """The hash holding one of this worker's leases (None: a request's lease it did
        not pop itself, on a cluster)."""
        if not self.cluster:
            return self.inflight_key
        home = self.homes.home(lease)
        if home is None and lease.startswith("s|"):
            return self.inflight_key
        return home

    def pop(self, count: int, browser: bool = False) -> tuple[list[tuple[str, bytes]], int]:
        """Take up to ``count`` requests of the queue (``browser``: of the browser queue),
        best score first, under lease.

        Retries whose time has not come stay in the queue; the second value is the
        ms until the earliest of those the pop met is due (-1: it met none).
        On a cluster, from several shards in turn (:mod:`crawler.leasing.shards`).
        """
        if self.cluster:
            pop_one = partial(self._pop_shard, browser=browser)
            return self.sharded.take_across(count, pop_one, browser)
        keys = [self.queue_of(0, browser), self.inflight_key]
        taken, wait = self._pop(keys=keys, args=[count, "b" if browser else "r"])
        return _pairs(taken), int(wait)

    def _pop_shard(self, shard: int, count: int, browser: bool = False) -> tuple[Popped, int]:
        keys = [self.queue_of(shard, browser), self.keys.shard(shard).inflight(self.worker_id)]
        taken, wait = self._pop(keys=keys, args=[count, "b" if browser else "r"])
        return _pairs(taken), int(wait)

    def pop_seeds(self, count: int) -> list[tuple[str, bytes]]:
        """Take up to ``count`` seeds of ``start_urls`` under lease."""
        return _pairs(self._pop_seeds(keys=[self.keys.start_urls, self.inflight_key], args=[count]))

    def _takes_over(self, shard: int, old_lease: str) -> tuple[str, str | None]:
        """``old_lease`` if the script of ``shard`` can finish it, and the hash where it
        must be finished after the script otherwise (cluster: another slot)."""
        if not old_lease or not self.cluster:
            return old_lease, None
        home = self.home_of(old_lease)
        if home == self.shard_inflight(shard):
            self.homes.done([old_lease])
            return old_lease, None
        return "", home or ""

    def _queue(self, script: Any, keys: list[str], args: list[Any], home: str | None) -> Any:
        """A cluster push; when the lease it takes over is finished in another slot after
        it, the push is first confirmed by the shard's replicas (:mod:`.replication`)."""
        if home is None:
            return script(keys=keys, args=args)
        return self.replica_wait.call(script, keys, args)

    def _finish_after(self, old_lease: str, home: str | None) -> None:
        if home is not None:
            self.finish([old_lease])

    def push_if_new(
        self,
        fingerprint: bytes,
        score: float,
        payload: bytes,
        old_lease: str = "",
        shard: int = 0,
        browser: bool = False,
    ) -> bool:
        """Queue a request unless its fingerprint is known; finish ``old_lease`` too."""
        if not self.cluster:
            keys = [self.keys.dupefilter, self.queue_of(0, browser), self.inflight_key]
            return bool(self._push_if_new(keys=keys, args=[fingerprint, score, payload, old_lease]))
        inside, home = self._takes_over(shard, old_lease)
        where = self.keys.shard(shard)
        added = self._queue(
            self._push_if_new,
            [where.dupefilter, self.queue_of(shard, browser), where.inflight(self.worker_id)],
            [fingerprint, score, payload, inside],
            home,
        )
        self._finish_after(old_lease, home)
        return bool(added)

    def push(
        self,
        score: float,
        payload: bytes,
        old_lease: str = "",
        shard: int = 0,
        browser: bool = False,
    ) -> None:
        """Queue a request without the fingerprint check (``dont_filter``)."""
        if not self.cluster:
            keys = [self.queue_of(0, browser), self.inflight_key]
            self._push(keys=keys, args=[score, payload, old_lease])
            return
        inside, home = self._takes_over(shard, old_lease)
        where = self.keys.shard(shard)
        keys = [self.queue_of(shard, browser), where.inflight(self.worker_id)]
        self._queue(self._push, keys, [score, payload, inside], home)
        self._finish_after(old_lease, home)

    def push_delayed(
        self,
        delay: float,
        payload: bytes,
        old_lease: str = "",
        shard: int = 0,
        browser: bool = False,
    ) -> int:
        """Queue a retry that waits ``delay`` seconds in Redis (``dont_filter``); finish
        ``old_lease`` in the same atomic call. Returns the wait in ms.

        On a cluster the crawl-wide count ``retries_delayed`` is a separate ``HINCRBY``
        (the stats hash has a slot of its own), after the push."""
        wait_s = f"{max(0.0, delay):.3f}"
        if not self.cluster:
            keys = [self.queue_of(0, browser), self.inflight_key, self.keys.stats]
            return int(self._push_delayed(keys=keys, args=[wait_s, payload, old_lease]))
        inside, home = self._takes_over(shard, old_lease)
        where = self.keys.shard(shard)
        wait = self._queue(
            self._push_delayed,
            [self.queue_of(shard, browser), where.inflight(self.worker_id)],
            [wait_s, payload, inside],
            home,
        )
        self._finish_after(old_lease, home)
        self.server.hincrby(self.keys.stats, "retries_delayed", 1)
        return int(wait)

    def finish(self, leases: Iterable[str]) -> None:
        leases = list(leases)
        if not leases:
            return
        if not self.cluster:
            self.server.hdel(self.inflight_key, *leases)
            return
        self.sharded.finish(leases)

    def heartbeat(self, ttl: int) -> None:
        self.server.set(self.keys.alive(self.worker_id), b"1", ex=max(1, int(ttl)))

    def claim(self, ttl: int) -> bool:
        """Start beating unless this worker id has a heartbeat already (``SET NX``)."""
        return bool(
            self.server.set(self.keys.alive(self.worker_id), b"1", ex=max(1, int(ttl)), nx=True)
        )

    def heartbeat_left(self) -> int:
        """Milliseconds left of this worker id's heartbeat (-2: none, -1: never expires)."""
        return int(self.server.pttl(self.keys.alive(self.worker_id)))

    def stop_beating(self) -> None:
        self.server.delete(self.keys.alive(self.worker_id))

    def recover(self, worker_id: str, force: bool = False, held: list[str] | None = None) -> int:
        """Requeue what ``worker_id`` holds if it is dead (or if ``force``); -1 if alive.

        ``held``: its lease hashes, when known (a cluster; else they are looked up)."""
        if not self.cluster:
            return int(
                self._recover(
                    keys=[
                        self.keys.inflight(worker_id),
                        self.keys.alive(worker_id),
                        self.keys.requests,
                        self.keys.start_urls,
                    ],
                    args=["1" if force else "0"],
                )
            )
        return self.sharded.recover(worker_id, force, held)

    def queued(self) -> int:
        """Requests queued, retries waiting included (every shard's on a cluster; the
        browser queue's when this worker pops it)."""
        if self.cluster:
            return self.waiting()[0]
        reply = count_queue(self.server, self.keys.requests, self.counts_browser)
        return QueueCount().add(reply).total

    def waiting(self) -> tuple[int, int]:
        """Requests queued (the browser queue's too when this worker pops it) and seeds
        not yet taken, in one round trip (one per node on a cluster, the queues of every
        shard summed)."""
        if self.cluster:
            return self.sharded.waiting(self.counts_browser)
        with self.server.pipeline(transaction=False) as pipe:
            count_queue(pipe, self.keys.requests, self.counts_browser)
            pipe.llen(self.keys.start_urls)
            queued, seeds = pipe.execute()
        return QueueCount().add(queued).total, int(seeds)

    def browser_queued(self) -> int:
        """Requests waiting for a browser (the browser queue, retries included)."""
        return queue_counts(self.server, self.keys, browser=True).total

    def holdings(self) -> dict[str, list[str]]:
        """Worker id -> its lease hashes, of the workers that hold leases right now
        (on a cluster, scanned on every primary)."""
        found: dict[str, list[str]] = {}
        options = {"target_nodes": RedisCluster.PRIMARIES} if self.cluster else {}
        for raw in self.server.scan_iter(match=self.keys.inflight_pattern, count=1000, **options):
            key = raw.decode()
            found.setdefault(key.rsplit(":inflight:", 1)[1], []).append(key)
        return found

    def holders(self) -> list[str]:
        """Ids of the workers that hold leases right now."""
        return list(self.holdings())

    def recover_dead(self) -> dict[str, int]:
        """Requeue the leases of every dead worker; returns worker id -> requests requeued."""
        recovered = {}
        for worker, held in self.holdings().items():
            if worker == self.worker_id:
                continue
            count = self.recover(worker, held=held if self.cluster else None)
            if count > 0:
                recovered[worker] = count
        return recovered
