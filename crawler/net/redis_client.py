"""``CountingRedis``: the workers' Redis client, counting its round trips.

scrapy-redis builds every client of a worker from ``REDIS_PARAMS``; its
``redis_cls`` entry names this class in ``crawler/settings.py``. It is
``redis.Redis`` with one addition: each round trip to the server adds one to
the process-wide :data:`ROUND_TRIPS` counter, and notes the command the calling
thread waits for (:func:`crawler.net.outage.note_command`: the log of an outage
names it); an answer tells :data:`crawler.net.outage.REDIS` that Redis is reachable
(the end of an outage, if there was one; its failed attempts are told by the
retry policy, :class:`crawler.net.outage.ReportingRetry`). A single command is one round
trip; a pipeline (or a transaction) is one for all its commands; a Lua script
is one (two or three when the server had to be sent it first). Retries after a
connection error are not counted again.

The metrics extension (:mod:`crawler.extensions.metrics`) publishes the count
as ``crawler_redis_round_trips_total``.

On a Redis Cluster (``REDIS_CLUSTER=true``) the client is
:class:`CountingRedisCluster`, built by :func:`cluster_client` from one node's
URL or a comma-separated list of startup nodes. :func:`worker_redis_params`
turns the workers' ``REDIS_PARAMS`` into those of a cluster client (the spider
applies it in ``update_settings``, so every component built by scrapy-redis's
``get_redis_from_settings`` gets one): the same timeouts, the same retry
policy (redis-py's cluster-level ``retry``), and the restart check of
:mod:`crawler.scheduling.restarts` run after the cluster client's own
handshake on every new connection to every node.
"""

from __future__ import annotations

import threading
from typing import Any

import redis
from redis.client import Pipeline
from redis.cluster import ClusterNode, ClusterPipeline, RedisCluster
from scrapy.settings import SETTINGS_PRIORITIES

from crawler.core import defaults
from crawler.net.outage import REDIS, note_command


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
            note_command(f"a pipeline ({len(self.command_stack)} commands)")
        replies = super().execute(raise_on_error)
        REDIS.succeeded()
        return replies

    def immediate_execute_command(self, *args: Any, **options: Any) -> Any:
        ROUND_TRIPS.add()
        note_command(args[0])
        reply = super().immediate_execute_command(*args, **options)
        REDIS.succeeded()
        return reply


class CountingRedis(redis.Redis):
    def execute_command(self, *args: Any, **options: Any) -> Any:
        ROUND_TRIPS.add()
        note_command(args[0])
        reply = super().execute_command(*args, **options)
        REDIS.succeeded()  # Redis answered: the end of an outage, if there was one
        return reply

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
        # scrapy-redis's default REDIS_PARAMS carry it; redis-py retries timeouts anyway
        # and warns that the argument is deprecated
        kwargs.pop("retry_on_timeout", None)
        client = cluster_client(url, cls, **kwargs)
        assert isinstance(client, CountingRedisCluster)
        return client

    def execute_command(self, *args: Any, **kwargs: Any) -> Any:
        ROUND_TRIPS.add()
        note_command(args[0])
        reply = super().execute_command(*args, **kwargs)
        REDIS.succeeded()
        return reply

    def pipeline(self, transaction: Any = None, shard_hint: Any = None) -> ClusterPipeline:
        pipe = super().pipeline(transaction, shard_hint)
        pipe.__class__ = CountingClusterPipeline
        pipe._counting_client = self  # type: ignore[attr-defined]
        return pipe


class CountingClusterPipeline(ClusterPipeline):
    """A cluster pipeline counted once per node its commands go to."""

    _counting_client: RedisCluster

    def execute(self, raise_on_error: bool = True) -> list[Any]:
        nodes = set()
        for command in self._execution_strategy.command_queue:
            args = command.args
            try:
                key = args[3] if str(args[0]).upper() in ("EVALSHA", "EVAL") else args[1]
                nodes.add(self._counting_client.get_node_from_key(key).name)
            except Exception:  # noqa: BLE001 - a keyless command: one more trip
                nodes.add(repr(args[0]))
        ROUND_TRIPS.add(len(nodes))
        note_command(f"a pipeline ({len(self._execution_strategy.command_queue)} commands)")
        replies = super().execute(raise_on_error)
        REDIS.succeeded()
        return replies


# REDIS_PARAMS entries a cluster client has no use for (its own health checks and
# retries cover them), and the plain handshake it replaces with its own.
_NOT_FOR_A_CLUSTER = ("retry_on_error", "retry_on_timeout", "health_check_interval", "redis_cls")


def worker_redis_params(params: dict[str, Any], cluster: bool) -> dict[str, Any]:
    """The workers' ``REDIS_PARAMS`` for a plain Redis (as given) or for a cluster.

    On a cluster: ``redis_cls`` is :class:`CountingRedisCluster`, and a
    ``redis_connect_func`` that makes the handshake itself (as
    :func:`crawler.scheduling.restarts.connect` does) is swapped for its
    ``after_handshake`` (the cluster client shakes hands first, then calls it).
    """
    if not cluster:
        return dict(params)
    out = {key: value for key, value in params.items() if key not in _NOT_FOR_A_CLUSTER}
    out["redis_cls"] = f"{CountingRedisCluster.__module__}.{CountingRedisCluster.__name__}"
    connect = out.get("redis_connect_func")
    after = getattr(connect, "after_handshake", None)
    if connect is not None and after is not None:
        out["redis_connect_func"] = after
    return out


def set_worker_redis_params(settings: Any, cluster: bool) -> None:
    """Set the workers' ``REDIS_PARAMS`` in ``settings``: every client waits
    ``REDIS_SOCKET_TIMEOUT`` s for an answer (0: as long as it takes), and on a cluster
    is a cluster client (:func:`worker_redis_params`). At the spider's priority at
    least: the crawler process merges its own (project) settings into the crawler's
    again, and would undo it."""
    priority = max(SETTINGS_PRIORITIES["spider"], settings.getpriority("REDIS_PARAMS") or 0)
    params = worker_redis_params(settings.getdict("REDIS_PARAMS"), cluster)
    timeout = settings.getfloat("REDIS_SOCKET_TIMEOUT", defaults.REDIS_SOCKET_TIMEOUT)
    params["socket_timeout"] = timeout if timeout > 0 else None
    settings.set("REDIS_PARAMS", params, priority=priority)


def is_cluster(client: Any) -> bool:
    return isinstance(client, RedisCluster)
