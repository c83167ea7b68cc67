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
"""

from __future__ import annotations

import threading
from typing import Any

import redis
from redis.client import Pipeline


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
