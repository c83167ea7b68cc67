"""A primary's failover on a real Redis Cluster with replicas (3 primaries, 1 replica each).

What the workers rely on (crawler/leasing/replication.py, crawler/scheduling/restarts.py):
links are answered once the shard's replica has them, and the first connection
to the replica that took over a killed primary makes the worker redo its leases.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
import redis
from redis.cluster import RedisCluster as ClusterClient

from crawler.leasing.replication import ReplicaWait
from crawler.net.redis_client import CountingRedisCluster
from crawler.scheduling import restarts
from tests.support.cluster import KEYS, flush_all
from tools.redis_cluster import RedisCluster

PUSH = "redis.call('ZADD', KEYS[1], 0, ARGV[1]); return redis.call('ZCARD', KEYS[1])"


@pytest.fixture
def cluster() -> Iterator[RedisCluster]:
    """A cluster of the test's own: the tests kill its nodes."""
    with RedisCluster(primaries=3, replicas=1) as started:
        yield started


def _replica_of(cluster: RedisCluster, key: str) -> redis.Redis:
    client = cluster.client()
    try:
        slot = client.keyslot(key)
        replica = client.nodes_manager.slots_cache[slot][1]
    finally:
        client.close()
    connection = redis.Redis(host=replica.host, port=replica.port, single_connection_client=True)
    connection.execute_command("READONLY")  # a replica answers reads of its slots
    return connection


class Stats:
    def __init__(self) -> None:
        self.values: dict[str, int] = {}

    def inc_value(self, name: str, count: int = 1) -> None:
        self.values[name] = self.values.get(name, 0) + count


def test_a_replicated_call_returns_once_the_replica_has_the_links(cluster: RedisCluster) -> None:
    client = cluster.client()
    flush_all(client)
    stats = Stats()
    waiting = ReplicaWait(client, replicas=1, timeout_ms=5000, stats=stats)
    script = client.register_script(PUSH)
    queue = KEYS.for_site("127.0.0.1:8001").requests
    assert waiting.replicas_of(queue) == 1
    replica = _replica_of(cluster, queue)
    for n in range(1, 51):
        # the script's reply, and the replica already holds what it wrote
        assert waiting.call(script, [queue], [f"link-{n}"]) == n
        assert replica.zscore(queue, f"link-{n}") == 0
    assert stats.values == {}  # never timed out
    replica.close()
    client.close()


def test_no_replica_no_wait(cluster: RedisCluster) -> None:
    client = cluster.client()
    flush_all(client)
    script = client.register_script(PUSH)
    queue = KEYS.for_site("127.0.0.1:8001").requests
    off = ReplicaWait(client, replicas=0, timeout_ms=5000)
    assert off.call(script, [queue], ["a"]) == 1
    # a primary whose replica is gone: the wait is bounded and counted, the write kept
    stats = Stats()
    waiting = ReplicaWait(client, replicas=1, timeout_ms=200, stats=stats)
    replica = _replica_of(cluster, queue)
    port = replica.connection_pool.connection_kwargs["port"]
    replica.close()
    cluster.kill(cluster.node_for_port(port))
    assert waiting.call(script, [queue], ["b"]) == 2
    assert stats.values == {"cluster/replica_wait_timeouts": 1}
    client.close()


def test_the_replica_that_takes_over_makes_the_worker_redo_its_leases(
    cluster: RedisCluster,
) -> None:
    setup = cluster.client()
    flush_all(setup)
    restarts.note_cluster_primaries(setup)
    setup.close()
    worker = CountingRedisCluster.from_url(
        cluster.startup_urls, redis_connect_func=restarts.check_run_id
    )
    redone: list[str] = []
    forget = restarts.on_restart(worker, lambda old, new: redone.append(new))
    try:
        for n in range(100):  # connections to every primary (and the replicas, for the map)
            worker.set(f"key-{n}", n)
        assert redone == []
        queue = KEYS.for_site("127.0.0.1:8001").requests
        worker.zadd(queue, {b"link": 0})
        cluster.kill(cluster.primary_of(queue))
        deadline = time.monotonic() + 120
        while True:
            try:
                worker.zadd(queue, {b"after": 0})
                break
            except redis.RedisError:
                assert time.monotonic() < deadline, "the replica never took over"
                time.sleep(0.2)
        assert len(redone) == 1  # once, before the first command on the new primary
        new = ClusterClient(startup_nodes=cluster.client().get_nodes())
        assert new.zscore(queue, b"after") == 0
        new.close()
    finally:
        forget()
        worker.close()
