"""The start-up check every worker makes: is the shared Redis there, with this crawl's layout?"""

from __future__ import annotations

from typing import Any

import redis

from crawler.core import defaults
from crawler.core.config import redact_dsn
from crawler.core.keys import SPIDER_NAME, CrawlKeys
from crawler.core.layout import LayoutMismatch, ensure_layout
from crawler.core.startup import StartupError
from crawler.net.redis_client import cluster_client
from crawler.scheduling import restarts


class RedisUnavailable(StartupError):
    """The shared Redis cannot be reached when a worker starts."""


class ClusterLayoutMismatch(StartupError):
    """The crawl on the cluster was started with another ``REDIS_CLUSTER_SHARDS``."""


def check_redis(settings: Any, spider: str = SPIDER_NAME) -> None:
    """Fail at once, saying what to do, when the shared Redis does not answer (on a
    cluster: or when ``spider``'s crawl was laid out in another number of shards)."""
    url = settings.get("REDIS_URL", defaults.REDIS_URL)
    keys = CrawlKeys.from_settings(settings, spider)
    client: Any = None
    try:
        if keys.cluster:
            client = cluster_client(url, socket_connect_timeout=5, socket_timeout=5)
        else:
            client = redis.Redis.from_url(url, socket_connect_timeout=5, socket_timeout=5)
        client.ping()
        ensure_layout(client, keys)
        if keys.cluster:
            restarts.note_cluster_primaries(client)
    except (redis.RedisError, ValueError) as exc:
        what, hint = "Redis", "."
        if keys.cluster:
            what, hint = "Redis Cluster", " (REDIS_CLUSTER=true: any node, or a list of nodes)."
        raise RedisUnavailable(
            f"Cannot reach the shared {what} at {redact_dsn(url)} ({exc}). Start Redis, or point "
            "REDIS_URL (environment or -s REDIS_URL=...) at the crawl's Redis" + hint
        ) from None
    except LayoutMismatch as exc:
        raise ClusterLayoutMismatch(str(exc)) from None
    finally:
        if client is not None:
            client.close()
