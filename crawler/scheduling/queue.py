"""``ReliablePriorityQueue``: scrapy-redis's priority queue, with leases.

Pops go through the worker's :class:`~crawler.leasing.ledger.LeaseLedger` (or,
with batching, its :class:`~crawler.leasing.batch.OutputBatch`): a batch of
``SCHEDULER_POP_BATCH`` requests is taken in one round trip and recorded under
this worker until each is finished, so a worker killed mid-crawl loses nothing
(see :mod:`crawler.leasing`). Each request carries its lease id in its meta
(:mod:`crawler.leasing.meta`); a request pushed back takes its lease with it.

Requests are kept in one Redis list per priority (:mod:`crawler.scheduling.lanes`).
A retry that must wait (``meta["retry_delay"]``, set by
:mod:`crawler.middlewares.retry`) is pushed into the queue's sorted set with a
score that says when it is due (:mod:`crawler.core.keys`), in the same atomic call
that finishes the lease of the failed request: it waits in Redis, not in this
worker, and survives the worker and a Redis restart. Pops hand it out once it
is due. The queue remembers when the earliest waiting retry it met is due, so
that a starved worker pops again then, not at every idle poll
(:meth:`ready_work`).

On a Redis Cluster a request is pushed into the shard of its URL's site (its
fingerprint checked there too), pops go across the shards
(:mod:`crawler.leasing.shards`), and the queue's length is the sum over the
shards, read at most every ``LENGTH_TTL`` seconds (one round trip per node).

Requests that need a browser wait in the crawl's browser queue beside it
(:mod:`crawler.browser.routing`): every push routes the request there when it
needs one. A worker that renders pops that queue first, while it holds fewer
requests that need a browser than its share (``BROWSER_CONCURRENCY x
BROWSER_HOLD_PER_SLOT``: in its downloader or popped), and counts it in its
length; a pop that found it empty does not look again for ``BROWSER_RECHECK``
seconds (``BROWSER_RECHECK_LISTENING`` while the worker listens for wake-ups: a
push into the browser queue is announced as such), or until its earliest waiting
retry is due, or work for a browser is announced (:meth:`work_announced`).
"""

from __future__ import annotations

import logging
import time
from collections import deque
from typing import Any

from scrapy import Request
from scrapy_redis.queue import PriorityQueue

from crawler.browser.routing import BrowserRouting, needs_browser
from crawler.core import defaults
from crawler.core.sites import site_key
from crawler.leasing.meta import LEASE_META_KEY, take_lease
from crawler.leasing.tracker import LeaseTracker
from crawler.policy.retrypolicy import DELAY_META_KEY
from crawler.scheduling.lanes import mark_earlier_queue
from crawler.scheduling.serializer import request_to_dict

logger = logging.getLogger(__name__)

# seconds: a starved worker that knows of waiting retries pops at least this often
DELAYED_RECHECK = 5.0
LENGTH_TTL = 0.5  # seconds a cluster queue's summed length is reused
BROWSER_RECHECK = 1.0  # seconds a browser queue found empty is not popped (unless woken)
# the same while the worker listens for wake-ups: a push into the browser queue is
# announced then (wakeup.BROWSER), this is a safety net only
BROWSER_RECHECK_LISTENING = 10.0


class ReliablePriorityQueue(PriorityQueue):
    """Priority queue in Redis lists, one per priority (:mod:`crawler.scheduling.lanes`),
    whose pops are leased, not destructive."""

    def __init__(self, server: Any, spider: Any, key: str, serializer: Any = None) -> None:
        super().__init__(server, spider, key, serializer)
        self.tracker = LeaseTracker.of(spider.crawler)
        self.ledger = self.tracker.ledger
        self.batch_size = max(
            1, spider.settings.getint("SCHEDULER_POP_BATCH", defaults.SCHEDULER_POP_BATCH)
        )
        self._buffer: deque[Request] = deque()
        #: when (monotonic) to pop again for waiting retries (None: none known)
        self.delayed_due: float | None = None
        self._delayed_baseline: int | None = None  # queue length with only those retries
        self._length: tuple[float, int] = (0.0, 0)  # cluster: (when read, summed length)
        # a queue written by an earlier version (all in the sorted set) pops in order too
        mark_earlier_queue(server, self.ledger.keys)
        self.routing = BrowserRouting.of(spider.crawler)
        # a worker that renders pops the browser queue too, and counts it as its work
        self.ledger.counts_browser = self.routing.can_render
        self._browser_due = 0.0  # (monotonic) when to pop the browser queue again
        #: the scheduler's WakeUps, when it listens (see BROWSER_RECHECK_LISTENING)
        self.wakeups: Any = None
        #: the last pop left the browser queue alone for want of room (not seen empty):
        #: the scheduler asks again when a page is done, not only when woken
        self.browser_full = False

    def __len__(self) -> int:
        if not self.ledger.cluster:
            return len(self._buffer) + self.ledger.queued()
        now = time.monotonic()
        if now - self._length[0] >= LENGTH_TTL:
            self._length = (now, self.ledger.waiting()[0])
        return len(self._buffer) + self._length[1]

    def _pushed(self) -> None:
        """This worker queued a request: the cluster queue's length is read afresh."""
        self._length = (0.0, 0)

    def shard(self, request: Request) -> int:
        """The shard of the request's site (0 on a plain Redis: not even computed)."""
        return self.ledger.keys.shard_of(site_key(request.url)) if self.ledger.cluster else 0

    @property
    def buffered(self) -> int:
        return len(self._buffer)

    def _encode_request(self, request: Request) -> bytes:
        return self.serializer.dumps(request_to_dict(request, self.spider))

    def push(self, request: Request) -> None:
        """Queue a request (no fingerprint check); it takes over the lease it carries.

        A retry with ``meta["retry_delay"]`` waits that many seconds in Redis first.
        A request that needs a browser goes to the browser queue.
        """
        browser = self.routing.route(request)
        lease = take_lease(request)
        delay = request.meta.pop(DELAY_META_KEY, None)
        if self.ledger.cluster:
            self._pushed()
        shard = self.shard(request)
        if delay:
            payload = self._encode_request(request)
            wait = self.ledger.push_delayed(float(delay), payload, lease, shard, browser)
            self._met_delayed(wait, keep_earlier=True)
            return
        payload = self._encode_request(request)
        self.ledger.push(-request.priority, payload, lease, shard, browser)

    def _met_delayed(self, wait_ms: int, keep_earlier: bool = False) -> None:
        """A pop met waiting retries, the earliest due in ``wait_ms`` (-1: met none)."""
        if wait_ms < 0:
            if not keep_earlier:
                self.delayed_due = None
            return
        due = time.monotonic() + min(wait_ms / 1000.0, DELAYED_RECHECK)
        if keep_earlier and self.delayed_due is not None:
            due = min(due, self.delayed_due)
        self.delayed_due = due
        self._delayed_baseline = None

    def ready_work(self, queued: int, now: float | None = None) -> bool:
        """Is a pop worth it, with ``queued`` requests in the queue (lanes and sorted set)?

        Retries waiting for their time are in that count. Once a pop met some,
        the count seen next is taken as theirs: a pop is worth it again when the
        count grows (new requests) or when the earliest retry is due.
        """
        if self.delayed_due is None:
            return queued > 0
        if (time.monotonic() if now is None else now) >= self.delayed_due:
            return True
        if self._delayed_baseline is None:
            self._delayed_baseline = queued
            return False
        return queued > self._delayed_baseline

    def push_if_new(self, request: Request, fingerprint: bytes) -> bool:
        """Queue a request unless its fingerprint was seen; its lease is finished either way."""
        browser = self.routing.route(request)
        lease = take_lease(request)
        payload = self._encode_request(request)
        if self.ledger.cluster:
            self._pushed()
        return self.ledger.push_if_new(
            fingerprint, -request.priority, payload, lease, self.shard(request), browser
        )

    def push_batched(self, request: Request, fingerprint: bytes) -> None:
        """Queue a request with the worker's next batch, unless its fingerprint is seen then."""
        assert self.tracker.batch is not None
        browser = self.routing.route(request)
        lease = take_lease(request)
        payload = self._encode_request(request)
        self.tracker.batch.add_link(
            fingerprint, -request.priority, payload, lease, self.shard(request), browser
        )

    def work_announced(self, browser: bool) -> None:
        """A wake-up: work arrived somewhere (``browser``: maybe in the browser queue,
        which is then popped again at once)."""
        if browser:
            self._browser_due = 0.0

    def browser_held(self) -> int:
        """Requests that need a browser this worker holds: downloading, or popped."""
        try:
            active = self.spider.crawler.engine.downloader.active
        except (AttributeError, RuntimeError):  # no engine (yet): a bare queue
            active = ()
        return sum(map(needs_browser, active)) + sum(map(needs_browser, self._buffer))

    def browser_room(self) -> int:
        """How many more requests that need a browser this worker may pop now."""
        return self.routing.room(self.browser_held())

    def _pop_browser(self) -> int:
        """Take what this worker may render of the browser queue; -1 or the ms until the
        earliest waiting retry met is due."""
        self.browser_full = False
        if not self.routing.can_render or time.monotonic() < self._browser_due:
            return -1
        want = min(self.batch_size, self.browser_room())
        self.browser_full = want <= 0
        if want <= 0:
            return -1
        taken, wait = self.ledger.pop(want, browser=True)
        if len(taken) < want:  # again in a while, or when its waiting retry is due
            listening = self.wakeups is not None and self.wakeups.live
            recheck = BROWSER_RECHECK_LISTENING if listening else BROWSER_RECHECK
            if wait >= 0:
                recheck = min(recheck, wait / 1000)
            self._browser_due = time.monotonic() + recheck
        self._buffer_taken(taken)
        return wait

    def pop(self, timeout: int = 0) -> Request | None:
        if not self._buffer:
            browser_wait = self._pop_browser()
            batch = self.tracker.batch
            # with batching, the pop rides on the flush of this worker's links and leases
            if batch is not None:
                # twice the batch while the shared queue is deep (the other workers have
                # plenty): half the script calls and commands per page
                taken = batch.flush(self.batch_size * (2 if batch.queue_deep else 1))
                wait = batch.delayed_wait
            else:
                taken, wait = self.ledger.pop(self.batch_size)
            if browser_wait >= 0:
                wait = browser_wait if wait < 0 else min(wait, browser_wait)
            self._met_delayed(wait)
            self._buffer_taken(taken)
        return self._buffer.popleft() if self._buffer else None

    def _buffer_taken(self, taken: list[tuple[str, bytes]]) -> None:
        """Decode popped requests into the buffer, each with its lease."""
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
