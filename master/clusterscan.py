"""Reading a crawl wherever its keys are: one Redis, or every primary of a Redis Cluster.

The master's commands read the crawl through these helpers, so the same code
serves both layouts (:mod:`crawler.core.keys`):

* :func:`scan` finds every key matching a pattern: ``SCAN`` on the one Redis, or
  on every primary of the cluster in turn (replicas hold copies: never scanned);
* :class:`Batch` is one non-transactional pipeline whose commands may be queued
  once per shard (:meth:`Batch.per_shard`) and summed afterwards. On a plain
  Redis there is one shard, named as before, so the pipeline sends exactly the
  commands it always did; on a cluster redis-py sends each command to the node
  of its key (one round trip per node);
* :func:`queue_label` names the request queue in messages (``<s>:requests``, or
  ``<s>:{s*}:requests (16 shards)``); :func:`site_of_polite_key` reads the site
  back from a politeness key of any shard.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import redis
from redis.cluster import RedisCluster

from crawler.core import defaults
from crawler.core.keys import CrawlKeys, ShardKeys
from crawler.core.records import as_text


def is_cluster(client: Any) -> bool:
    return isinstance(client, RedisCluster)


def primaries(client: Any) -> list[redis.Redis]:
    """One client per primary node: the client itself on a plain Redis."""
    if not is_cluster(client):
        return [client]
    nodes = client.get_primaries()
    return [client.get_redis_connection(node) for node in nodes]


def scan(client: Any, pattern: str, count: int = defaults.SCAN_COUNT) -> Iterator[bytes]:
    """Every key matching ``pattern``, on every primary (each key once)."""
    for node in primaries(client):
        yield from node.scan_iter(match=pattern, count=count)


def memory_usage(client: Any, names: list[bytes] | list[str]) -> int:
    """Bytes of the given keys (``MEMORY USAGE ... SAMPLES 0``, summed; missing keys: 0)."""
    if not names:
        return 0
    pipe = client.pipeline(transaction=False)
    for name in names:
        pipe.memory_usage(name, samples=0)
    return sum(int(n or 0) for n in pipe.execute())


class Batch:
    """A non-transactional pipeline whose commands may be queued once per shard.

    :meth:`add` queues one command and returns its index in :meth:`execute`'s
    list; :meth:`per_shard` queues the command for each shard (one on a plain
    Redis) and returns the slice of their replies.
    """

    def __init__(self, client: Any, keys: CrawlKeys) -> None:
        self.client = client
        self.pipe = client.pipeline(transaction=False)
        self.keys = keys
        self._size = 0
        self._aside: dict[int, Any] = {}  # replies read outside the pipeline, by index

    def time(self) -> int:
        """The server's ``TIME``: in the pipeline on one Redis; a cluster pipeline refuses
        keyless commands, so there it is asked of the first primary (each node keeps
        its own clock: the nodes of a cluster should be kept in sync, as any servers)."""
        if not is_cluster(self.client):
            return self.add(lambda pipe: pipe.time())
        self._aside[self._size + len(self._aside)] = primaries(self.client)[0].time()
        return self._size + len(self._aside) - 1

    def add(self, call: Callable[[Any], Any]) -> int:
        call(self.pipe)
        self._size += 1
        return self._size + len(self._aside) - 1

    def per_shard(self, call: Callable[[Any, ShardKeys], Any]) -> slice:
        start = self._size + len(self._aside)
        for shard in self.keys.all_shards():
            call(self.pipe, shard)
            self._size += 1
        return slice(start, self._size + len(self._aside))

    def execute(self) -> list[Any]:
        replies = iter(self.pipe.execute() if self._size else [])
        count = self._size + len(self._aside)
        return [self._aside[i] if i in self._aside else next(replies) for i in range(count)]


def total(replies: list[Any]) -> int:
    """The sum of integer replies (a count over the shards)."""
    return sum(int(reply or 0) for reply in replies)


def queue_label(keys: CrawlKeys) -> str:
    """The request queue's name in messages: one key, or the shards' keys."""
    if not keys.cluster:
        return keys.requests
    return f"{keys.spider}:{{s*}}:requests ({keys.shards} shards)"


def site_of_polite_key(keys: CrawlKeys, name: bytes | str) -> str:
    """The site of a politeness key (``<s>:polite:<site>``, or a shard's)."""
    text = as_text(name)
    for shard in keys.all_shards():
        prefix = shard.polite("")
        if text.startswith(prefix):
            return text[len(prefix) :]
    return text
