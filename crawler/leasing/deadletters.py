"""``DeadLetters``: requests that failed for good, kept in ``<spider>:dead``.

A request whose failure would only repeat (an HTTP error after the retries, a
spider error, an undecodable payload, a refusal) is recorded here rather than
retried for ever; the lease tracker then finishes its lease. Each record is a
JSON object ``{"url", "reason", "worker", "time"}``, with ``"request"`` (the
payload to requeue, see ``python -m master dead``) when there is one and
``"history"`` (the failures the retry policy went through, see
:mod:`crawler.policy.retrypolicy`) and ``"refused": true`` for a seed or request
the worker refused (network rule, seed meta). A refusal also counts in the ``<spider>:stats`` field
``requests_refused``, and its URL leaves ``<spider>:seeded`` so that seeding it
again is not "already seeded".

Stats: ``dead_letters``, ``dead_letters/refused``. Log: one WARNING per record.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import redis

from crawler.core.keys import CrawlKeys
from crawler.core.records import DeadLetter, StatsFields
from crawler.policy.seeds import seed_fingerprint

logger = logging.getLogger(__name__)


class DeadLetters:
    """The dead letters one worker writes to its crawl's ``<spider>:dead`` list."""

    def __init__(self, server: redis.Redis, keys: CrawlKeys, worker_id: str, stats: Any) -> None:
        self.server = server
        self.keys = keys
        self.worker_id = worker_id
        self.stats = stats

    def record(
        self,
        url: str | None,
        reason: str,
        payload: bytes | None = None,
        refused: bool = False,
        history: list[Any] | None = None,
    ) -> None:
        letter = DeadLetter(
            url=url,
            reason=reason,
            worker=self.worker_id,
            time=time.time(),
            refused=refused,
            request=None if payload is None else payload.decode("utf-8", "replace"),
            history=history or None,
        )
        # on a cluster the keys have slots of their own: no MULTI across them
        pipe = self.server.pipeline(transaction=not self.keys.cluster)
        pipe.lpush(self.keys.dead, letter.encode())
        if refused:
            pipe.hincrby(self.keys.stats, StatsFields.REQUESTS_REFUSED, 1)
            if url:
                pipe.srem(self.keys.seeded, seed_fingerprint(url))
        pipe.execute()
        self.stats.inc_value("dead_letters")
        if refused:
            self.stats.inc_value("dead_letters/refused")
        logger.warning("Dead letter: %s (%s)", url or "<no url>", reason)
