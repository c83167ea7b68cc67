"""Helpers of the Redis Cluster tests (fixtures: ``tests/integration/cluster_support.py``)."""

from __future__ import annotations

from redis.cluster import RedisCluster as ClusterClient

from crawler.core.keys import CrawlKeys

KEYS = CrawlKeys.layout("ecommerce", cluster=True, shards=16)


def sites_in_distinct_shards(
    count: int, keys: CrawlKeys = KEYS, first_port: int = 8001
) -> list[str]:
    """``count`` sites (``127.0.0.1:<port>``) whose shards all differ."""
    found: dict[int, str] = {}
    port = first_port
    while len(found) < count:
        site = f"127.0.0.1:{port}"
        found.setdefault(keys.shard_of(site), site)
        port += 1
    return list(found.values())


def flush_all(client: ClusterClient) -> None:
    """FLUSHALL on every primary."""
    for node in client.get_primaries():
        client.flushall(target_nodes=node)
