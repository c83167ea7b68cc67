"""Fixtures of the ``test_cluster_*`` modules (``pytest_plugins``): one real 3-node
Redis Cluster per module, emptied before each test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from crawler.net.redis_client import CountingRedisCluster
from tests.support.cluster import flush_all
from tools.redis_cluster import RedisCluster


@pytest.fixture(scope="module")
def cluster() -> Iterator[RedisCluster]:
    with RedisCluster(primaries=3) as started:
        yield started


@pytest.fixture
def client(cluster: RedisCluster) -> Iterator[CountingRedisCluster]:
    """A counting cluster client, on a cluster emptied before the test."""
    client = CountingRedisCluster.from_url(cluster.url)
    flush_all(client)
    yield client
    client.close()
