"""On a Redis Cluster with replicas: links handed to a replica before leases are finished.

A cluster's replication is asynchronous: a primary acknowledges a write before
its replica has it. When the primary dies, its replica takes over without the
writes of the last moments. Within one shard that is harmless: a script's
writes reach the replica together, in order, so links queued and the lease
they finish are lost together, and the worker redoes the lease
(:func:`crawler.scheduling.restarts.note_cluster_primaries`). Across shards it
is not: the links of a page may go to shard B and its lease be finished on
shard A a moment later; B's primary dies, A's lives, and the links are gone
with nobody left to find them again.

So on a cluster every script call that queues links is followed, on the same
connection and in the same round trip, by ``WAIT <replicas> <timeout>``: the
call returns once that many replicas of the shard's primary have the links (or
at the timeout), and only then are the leases of their pages finished.
``REDIS_CLUSTER_WAIT_REPLICAS`` sets how many (0: never wait; capped at the
replicas the primary has, so a cluster without replicas never waits) and
``REDIS_CLUSTER_WAIT_TIMEOUT`` the most milliseconds a call waits. A wait that
times out is counted (``cluster/replica_wait_timeouts``) and the crawl goes on:
until the replica catches up, a failover of that primary could lose those links.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from redis.exceptions import (
    AskError,
    ClusterDownError,
    MovedError,
    NoScriptError,
    TryAgainError,
)
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

logger = logging.getLogger(__name__)


class ReplicaWait:
    """Runs a script on its keys' primary, then ``WAIT`` for its replicas, in one round trip."""

    def __init__(self, client: Any, replicas: int, timeout_ms: int, stats: Any = None) -> None:
        self.client = client
        self.replicas = max(0, replicas)
        self.timeout_ms = max(1, timeout_ms)
        self.stats = stats
        self._warned = False

    @classmethod
    def off(cls) -> ReplicaWait:
        return cls(None, 0, 1)

    @classmethod
    def from_settings(cls, client: Any, settings: Any, stats: Any = None) -> ReplicaWait:
        from redis.cluster import RedisCluster

        from crawler.core import defaults

        if not isinstance(client, RedisCluster):
            return cls.off()
        return cls(
            client,
            settings.getint("REDIS_CLUSTER_WAIT_REPLICAS", defaults.REDIS_CLUSTER_WAIT_REPLICAS),
            settings.getint("REDIS_CLUSTER_WAIT_TIMEOUT", defaults.REDIS_CLUSTER_WAIT_TIMEOUT),
            stats,
        )

    def replicas_of(self, key: str) -> int:
        """Replicas the primary of ``key``'s slot has, as the client knows the cluster."""
        slot = self.client.keyslot(key)
        nodes = self.client.nodes_manager.slots_cache.get(slot) or []
        return max(0, len(nodes) - 1)

    def call(self, script: Any, keys: Sequence[str], args: Sequence[Any]) -> Any:
        """``script(keys, args)``; on a cluster with replicas, answered once they have it."""
        want = min(self.replicas, self.replicas_of(keys[0])) if self.replicas else 0
        if want <= 0:
            return script(keys=keys, args=args)
        node = self.client.get_node_from_key(keys[0])
        primary = self.client.get_redis_connection(node)
        for attempt in (1, 2):
            pipe = primary.pipeline(transaction=False)
            pipe.evalsha(script.sha, len(keys), *keys, *args)
            pipe.execute_command("WAIT", want, self.timeout_ms)
            try:
                result, acked = pipe.execute()
                break
            except NoScriptError:  # this primary has not seen the script yet
                if attempt == 2:
                    raise
                script.sha = primary.script_load(script.script)
            except (
                AskError,
                ClusterDownError,
                MovedError,
                TryAgainError,
                RedisConnectionError,
                RedisTimeoutError,
            ):
                # the slot moved or its primary is gone (a failover): read the cluster's
                # map again; the caller keeps what was not sent and tries again
                self._refresh()
                raise
        if int(acked) < want:
            self._timed_out(node)
        return result

    def _refresh(self) -> None:
        try:
            self.client.nodes_manager.initialize()
        except Exception as exc:  # noqa: BLE001 - the cluster is in flux: the next call retries
            logger.debug("Could not read the cluster's slots yet: %r", exc)

    def _timed_out(self, node: Any) -> None:
        if self.stats is not None:
            self.stats.inc_value("cluster/replica_wait_timeouts")
        if not self._warned:
            self._warned = True
            logger.warning(
                "The replica of the Redis primary %s:%s did not confirm queued links within "
                "%d ms: a failover of that primary now could lose them (counted in "
                "cluster/replica_wait_timeouts; logged once)",
                node.host,
                node.port,
                self.timeout_ms,
            )
