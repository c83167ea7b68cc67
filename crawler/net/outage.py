"""``OutageLog``: what a worker's log says while a service it needs (Redis, its store) is away.

A worker cut off from Redis or from its database blocks or retries; without
this, its log stayed silent for as long as the outage lasted. One
:class:`OutageLog` per service turns the failed attempts into three kinds of
lines, never one per failed call:

* WARNING at the first failed attempt (a Redis attempt fails within its socket
  timeout, ``REDIS_SOCKET_TIMEOUT``, when the connection stalls)::

      Redis at 127.0.0.1:6379 unreachable (Timeout reading from socket): holding
      15 requests (7 in flight, 4 popped and not started, 7 with items not stored
      yet), 7 items waiting to be written, 4 links and finished leases to send;
      waiting for its answer to EVALSHA (thread MainThread)

* WARNING again every ``OUTAGE_LOG_INTERVAL`` seconds (60) while it lasts (a
  thread of the outage's own says it, whether calls fail or block)::

      Redis at 127.0.0.1:6379 still unreachable after 61 s (...): holding ...; waiting for ...

* INFO at the first success after it::

      Redis at 127.0.0.1:6379 reachable again after 63.2 s (cut off since 10:41:07): holding ...

The time cut off counts from the start of the first failed attempt. What the
worker holds comes from a function given by its owner (the
:class:`crawler.extensions.outagelog.OutageReport` extension for Redis, the
storage pipeline for its store); it must not talk to the service.

Redis's failed attempts are seen through :class:`ReportingRetry`, the retry
policy of the workers' ``REDIS_PARAMS``: every attempt of every command,
pipeline and connection of the process passes through it (redis-py copies it
into each connection; the copies share the process's :data:`REDIS`); its
answers through the workers' client, :class:`crawler.net.redis_client.CountingRedis`. The log is
thread-safe (storage pipelines call Redis from a thread) and costs a successful
call one clock reading and one test.
"""

from __future__ import annotations

import copy
import logging
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from redis.retry import Retry

from crawler.core import defaults

logger = logging.getLogger(__name__)

T = TypeVar("T")


def nothing_held() -> str:
    return ""


class OutageLog:
    """The log lines of one service's outages, a reminder every ``interval`` seconds.

    ``clock`` (monotonic seconds) and ``wall`` (epoch seconds) are injected for
    tests. ``holding()`` says what the worker holds (e.g. ``holding 3 leases``),
    ``waiting`` (given with each failure) what it waits for. The reminders come
    from the failures and, with ``ticking`` (the default), from a thread of the
    outage's own (``outage-log``): a call blocked longer than the interval, or no
    call at all, does not delay them.
    """

    def __init__(
        self,
        service: str,
        *,
        interval: float = defaults.OUTAGE_LOG_INTERVAL,
        holding: Callable[[], str] = nothing_held,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
        log: logging.Logger = logger,
        ticking: bool = True,
    ) -> None:
        self.service = service
        self.interval = interval
        self.holding = holding
        self.clock = clock
        self.wall = wall
        self.log = log
        self.ticking = ticking
        self._lock = threading.Lock()
        self.since: float | None = None  # clock time the outage began (None: no outage)
        self._since_wall = 0.0
        self._last_line = 0.0
        self._error: BaseException | str = ""  # the last failure, and what it waited for
        self._waiting = ""
        self.outages = 0  # outages seen since the process started

    @property
    def down(self) -> bool:
        return self.since is not None

    def failed(
        self, error: BaseException | str, waiting: str = "", began: float | None = None
    ) -> None:
        """An attempt failed (``began``: clock time it started; default: now)."""
        now = self.clock()
        with self._lock:
            self._error, self._waiting = error, waiting
            first = self.since is None
            if first:
                began = now if began is None else min(began, now)
                self.since = began
                self._since_wall = self.wall() - (now - began)
                self._last_line = now
                self.outages += 1
        if not first:
            self.remind()
            return
        self.log.warning("%s unreachable (%s)%s", self.service, error, self._details(waiting))
        if self.ticking and self.interval > 0:
            threading.Thread(
                target=self._tick, args=(self.outages,), name="outage-log", daemon=True
            ).start()

    def remind(self) -> None:
        """Say it again if ``interval`` seconds passed since the last line."""
        now = self.clock()
        with self._lock:
            if self.since is None or self.interval <= 0 or now - self._last_line < self.interval:
                return
            self._last_line = now
            cut_off, error, waiting = now - self.since, self._error, self._waiting
        self.log.warning(
            "%s still unreachable after %.0f s (%s)%s",
            self.service,
            cut_off,
            error,
            self._details(waiting),
        )

    def _tick(self, outage: int) -> None:
        """The reminders of one outage, until it ends (or the log is closed)."""
        while self.since is not None and self.outages == outage:
            time.sleep(min(1.0, self.interval / 4))
            if self.outages == outage:
                self.remind()

    def close(self) -> None:
        """Its user is closing and gave up on the service: no more reminders (an
        outage's thread would otherwise say it again for as long as the process lives).
        A later failure starts a new outage."""
        with self._lock:
            self.since = None

    def succeeded(self) -> None:
        """An attempt succeeded: say so if the service was away."""
        if self.since is None:  # the common case, without the lock
            return
        now = self.clock()
        with self._lock:
            if self.since is None:
                return
            cut_off, since_wall = now - self.since, self._since_wall
            self.since = None
        self.log.info(
            "%s reachable again after %.1f s (cut off since %s)%s",
            self.service,
            cut_off,
            time.strftime("%H:%M:%S", time.localtime(since_wall)),
            self._details(""),
        )

    def _details(self, waiting: str) -> str:
        held = ""
        for _attempt in range(2):  # from the ticker, a set may change while it is read
            try:
                held = self.holding()
                break
            except Exception as exc:  # noqa: BLE001 - the line matters more than the figures
                held = f"(what it holds is unknown: {exc!r})"
        parts = [part for part in (held, waiting) if part]
        return (": " + "; ".join(parts)) if parts else ""


#: the process's Redis, as its workers' retry policy sees it (configured by the
#: OutageReport extension: the server's address, the interval, what the worker holds)
REDIS = OutageLog("Redis")

_command = threading.local()  # the Redis command each thread waits for


def note_command(name: Any) -> None:
    """The Redis command the calling thread is about to send (for the log's "waiting for")."""
    _command.name = name


def waiting_for_redis() -> str:
    name = getattr(_command, "name", None)
    if isinstance(name, bytes):
        name = name.decode("ascii", "replace")
    what = f"its answer to {name}" if name else "its answer"
    return f"waiting for {what} (thread {threading.current_thread().name})"


class ReportingRetry(Retry):
    """redis-py's :class:`~redis.retry.Retry`, telling :data:`REDIS` about each failed attempt.

    A copy (redis-py copies the policy into every connection) reports to the
    same log. Successes are told by the clients
    (:class:`crawler.net.redis_client.CountingRedis`) once Redis answered a command:
    a connection accepted is no proof (in a partition a proxy's or a load
    balancer's port may accept and never answer).
    """

    log: OutageLog = REDIS

    def __deepcopy__(self, memo: dict[int, Any]) -> ReportingRetry:
        twin = copy.copy(self)
        twin._backoff = copy.deepcopy(self._backoff, memo)
        return twin

    def call_with_retry(
        self,
        do: Callable[[], T],
        fail: Callable[..., Any],
        is_retryable: Callable[[Exception], bool] | None = None,
        with_failure_count: bool = False,
    ) -> T:
        log = self.log
        began = [0.0]

        def attempt() -> T:
            began[0] = log.clock()
            return do()

        def failed(error: Exception, *count: int) -> Any:
            if is_retryable is None or is_retryable(error):
                log.failed(error, waiting_for_redis(), began[0])
            return fail(error, *count)

        return super().call_with_retry(attempt, failed, is_retryable, with_failure_count)
