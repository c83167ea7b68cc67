"""The master's Redis client, and one-line explanations of Redis failures.

The URL comes from ``--redis-url``, else the environment variable ``REDIS_URL``,
else the workers' default (``crawler.core.defaults.REDIS_URL``: ``redis://localhost:6379/0``).
Passwords never appear in messages: URLs are shown through
:func:`crawler.core.config.redact_dsn`.
"""

from __future__ import annotations

import os
from typing import Any

import redis
from redis.exceptions import InvalidResponse

from crawler.core import defaults
from crawler.core.config import redact_dsn
from crawler.net.redis_client import cluster_client

DEFAULT_REDIS_URL = defaults.REDIS_URL  # the workers' default, shown in --help
CONNECT_TIMEOUT = 5.0  # seconds to reach Redis before saying it is unreachable
COMMAND_TIMEOUT = 60.0  # seconds one command may take (SCAN batches, Lua batches)
CLIENT_NAME = "master"  # how the master's connections show in CLIENT LIST


class MasterRedisError(Exception):
    """Redis could not be used; ``str()`` is the one line shown to the user."""


def resolve_redis_url(option: str | None, environ: dict[str, str] | None = None) -> str:
    environ = dict(os.environ) if environ is None else environ
    return option or environ.get("REDIS_URL") or DEFAULT_REDIS_URL


def cluster_enabled(environ: dict[str, str] | None = None) -> bool:
    """``REDIS_CLUSTER`` in the environment: true, yes, on or 1 (any case)."""
    environ = dict(os.environ) if environ is None else environ
    return environ.get("REDIS_CLUSTER", "").strip().lower() in ("1", "true", "yes", "on")


def cluster_shards(environ: dict[str, str] | None = None) -> int:
    """``REDIS_CLUSTER_SHARDS`` in the environment, else the workers' default."""
    environ = dict(os.environ) if environ is None else environ
    value = environ.get("REDIS_CLUSTER_SHARDS", "").strip()
    try:
        return int(value) if value else defaults.REDIS_CLUSTER_SHARDS
    except ValueError:
        raise MasterRedisError(f"REDIS_CLUSTER_SHARDS must be a number, not {value!r}") from None


def connect(url: str, cluster: bool = False) -> redis.Redis:
    """A client for ``url`` that has answered a PING (raises :class:`MasterRedisError`).

    ``cluster``: ``url`` names a node of a Redis Cluster, or lists startup nodes
    (comma-separated); the client is a :class:`redis.cluster.RedisCluster`.
    """
    options: dict[str, Any] = {
        "socket_connect_timeout": CONNECT_TIMEOUT,
        "socket_timeout": COMMAND_TIMEOUT,
        "decode_responses": False,
        "client_name": CLIENT_NAME,
    }
    try:
        if cluster:
            client: Any = cluster_client(url, **options)
        else:
            client = redis.Redis.from_url(url, **options)
    except ValueError as exc:
        raise MasterRedisError(
            f"invalid Redis URL {redact_dsn(url)!r}: {exc} "
            "(expected redis://[:password@]host:port/db or rediss://...)"
        ) from None
    except redis.RedisError as exc:  # a cluster client reads the slots when built
        raise explain(exc, url) from None
    try:
        client.ping()
    except redis.RedisError as exc:
        client.close()
        raise explain(exc, url) from None
    return client


def explain(exc: redis.RedisError, url: str) -> MasterRedisError:
    """Turn a redis-py exception into the one line the user reads."""
    shown = redact_dsn(url)
    reason = str(exc).strip() or type(exc).__name__
    if isinstance(exc, redis.AuthenticationError) or "NOAUTH" in reason or "WRONGPASS" in reason:
        return MasterRedisError(
            f"Redis at {shown} refused the credentials ({reason}); "
            "put the right password in --redis-url or REDIS_URL"
        )
    if isinstance(exc, InvalidResponse):
        return MasterRedisError(
            f"something answered at {shown}, but not as Redis does ({reason}); "
            "check the host and port in --redis-url / REDIS_URL"
        )
    if isinstance(exc, (redis.ConnectionError, redis.TimeoutError)):
        return MasterRedisError(
            f"cannot reach Redis at {shown} ({reason}); start Redis there, "
            "or point --redis-url / REDIS_URL at the crawl's Redis"
        )
    return MasterRedisError(f"Redis at {shown} failed: {reason}")
