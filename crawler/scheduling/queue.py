"""``ReliablePriorityQueue``: scrapy-redis's priority queue, with leases.

Pops go through the worker's :class:`~crawler.leasing.ledger.LeaseLedger` (or,
with batching, its :class:`~crawler.leasing.batch.OutputBatch`): a batch of
``SCHEDULER_POP_BATCH`` requests is taken in one round trip and recorded under
this worker until each is finished, so a worker killed mid-crawl loses nothing
(see :mod:`crawler.leasing`). Each request carries its lease id in its meta
(:mod:`crawler.leasing.meta`); a request pushed back takes its lease with it.
"""

from __future__ import annotations

import logging
from collections import deque
from typing import Any

from scrapy import Request
from scrapy_redis.queue import PriorityQueue

from crawler import defaults
from crawler.leasing.meta import LEASE_META_KEY, take_lease
from crawler.leasing.tracker import LeaseTracker
from crawler.scheduling.serializer import request_to_dict

logger = logging.getLogger(__name__)


class ReliablePriorityQueue(PriorityQueue):
    """Priority queue in a Redis sorted set whose pops are leased, not destructive."""

    def __init__(self, server: Any, spider: Any, key: str, serializer: Any = None) -> None:
        super().__init__(server, spider, key, serializer)
        self.tracker = LeaseTracker.of(spider.crawler)
        self.ledger = self.tracker.ledger
        self.batch_size = max(
            1, spider.settings.getint("SCHEDULER_POP_BATCH", defaults.SCHEDULER_POP_BATCH)
        )
        self._buffer: deque[Request] = deque()

    def __len__(self) -> int:
        return len(self._buffer) + int(self.server.zcard(self.key))

    @property
    def buffered(self) -> int:
        return len(self._buffer)

    def _encode_request(self, request: Request) -> bytes:
        return self.serializer.dumps(request_to_dict(request, self.spider))

    def push(self, request: Request) -> None:
        """Queue a request (no fingerprint check); it takes over the lease it carries."""
        lease = take_lease(request)
        self.ledger.push(-request.priority, self._encode_request(request), lease)

    def push_if_new(self, request: Request, fingerprint: bytes) -> bool:
        """Queue a request unless its fingerprint was seen; its lease is finished either way."""
        lease = take_lease(request)
        payload = self._encode_request(request)
        return self.ledger.push_if_new(fingerprint, -request.priority, payload, lease)

    def push_batched(self, request: Request, fingerprint: bytes) -> None:
        """Queue a request with the worker's next batch, unless its fingerprint is seen then."""
        assert self.tracker.batch is not None
        lease = take_lease(request)
        payload = self._encode_request(request)
        self.tracker.batch.add_link(fingerprint, -request.priority, payload, lease)

    def pop(self, timeout: int = 0) -> Request | None:
        if not self._buffer:
            batch = self.tracker.batch
            # with batching, the pop rides on the flush of this worker's links and leases
            if batch is not None:
                taken = batch.flush(self.batch_size)
            else:
                taken = self.ledger.pop(self.batch_size)
            for lease, payload in taken:
                try:
                    request = self._decode_request(payload)
                except Exception as exc:  # corrupt or foreign payload: keep it, move on
                    self.tracker.dead_letter(
                        url=None,
                        reason=f"undecodable request: {exc!r}",
                        payload=payload,
                        lease=lease,
                    )
                    continue
                request.meta[LEASE_META_KEY] = lease
                self._buffer.append(request)
        return self._buffer.popleft() if self._buffer else None
