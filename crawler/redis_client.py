"""``CountingRedis``: the workers' Redis client, counting its round trips.

scrapy-redis builds every client of a worker from ``REDIS_PARAMS``; its
``redis_cls`` entry names this class in ``crawler/settings.py``. It is
``redis.Redis`` with one addition: each round trip to the server adds one to
the process-wide :data:`ROUND_TRIPS` counter. A single command is one round
trip; a pipeline (or a transaction) is one for all its commands; a Lua script
is one (two or three when the server had to be sent it first). Retries after a
connection error are not counted again.

The metrics extension (:mod:`crawler.extensions.metrics`) publishes the count
as ``crawler_redis_round_trips_total``.

On a Redis Cluster (``REDIS_CLUSTER=true``) the client is
:class:`CountingRedisCluster`, built by :func:`cluster_client` from one node's
URL or a comma-separated list of startup nodes.
"""

from __future__ import annotations

import threading
from typing import Any

import redis
from redis.client import Pipeline
from redis.cluster import ClusterNode, RedisCluster


class RoundTripCounter:
    """A thread-safe counter (storage pipelines talk to Redis from a thread too)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._value = 0

    def add(self, count: int = 1) -> None:
        with self._lock:
            self._value += count

    @property
    def value(self) -> int:
        return self._value


ROUND_TRIPS = RoundTripCounter()


class CountingPipeline(Pipeline):
    def execute(self, raise_on_error: bool = True) -> list[Any]:
        if self.command_stack or self.watching:
            ROUND_TRIPS.add()
        return super().execute(raise_on_error)

    def immediate_execute_command(self, *args: Any, **options: Any) -> Any:
        ROUND_TRIPS.add()
        return super().immediate_execute_command(*args, **options)


class CountingRedis(redis.Redis):
    def execute_command(self, *args: Any, **options: Any) -> Any:
        ROUND_TRIPS.add()
        return super().execute_command(*args, **options)

    def pipeline(self, transaction: bool = True, shard_hint: Any = None) -> CountingPipeline:
        return CountingPipeline(
            self.connection_pool, self.response_callbacks, transaction, shard_hint
        )


# -- Redis Cluster -------------------------------------------------------------------
def split_urls(url: str) -> list[str]:
    """``REDIS_URL`` on a cluster: one node's URL, or several, comma-separated."""
    urls = [part.strip() for part in url.split(",") if part.strip()]
    if not urls:
        raise ValueError("no Redis URL given")
    return urls


def cluster_client(url: str, cls: type[RedisCluster] | None = None, **kwargs: Any) -> RedisCluster:
    """A :class:`redis.cluster.RedisCluster` whose startup nodes are the URLs in ``url``.

    Credentials and TLS (``rediss://``) come from the first URL; a database
    number other than 0 is refused (a cluster has only database 0).
    """
    from redis.connection import SSLConnection, parse_url

    nodes, options = [], {}
    for index, each in enumerate(split_urls(url)):
        parsed = parse_url(each)
        if int(parsed.get("db") or 0) != 0:
            raise ValueError(f"a Redis Cluster has only database 0, not {parsed['db']}")
        nodes.append(ClusterNode(parsed.get("host", "localhost"), int(parsed.get("port", 6379))))
        if index == 0:
            options = {
                key: value
                for key, value in parsed.items()
                if key not in ("host", "port", "db", "connection_class", "path")
            }
            if parsed.get("connection_class") is SSLConnection:
                options["ssl"] = True
    options.update(kwargs)
    return (cls or RedisCluster)(startup_nodes=nodes, **options)


class CountingRedisCluster(RedisCluster):
    """:class:`redis.cluster.RedisCluster` counting its calls in :data:`ROUND_TRIPS`.

    A command is counted once, whatever the redirections (``MOVED``, ``ASK``) it
    met; a pipeline is counted once per node it went to.
    """

    @classmethod
    def from_url(cls, url: str, **kwargs: Any) -> CountingRedisCluster:  # type: ignore[override]
        kwargs.pop("db", None)
        client = cluster_client(url, cls, **kwargs)
        assert isinstance(client, CountingRedisCluster)
        return client

    def execute_command(self, *args: Any, **kwargs: Any) -> Any:
        ROUND_TRIPS.add()
        return super().execute_command(*args, **kwargs)
