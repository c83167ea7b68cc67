"""Shop defences to crawl against: a rate limiter and transient 503s (options of the shop).

* ``--rate-limit RPS``: a token bucket of ``RPS`` tokens a second holding at most
  ``RPS`` (at least 1); a request that finds it empty is answered
  ``429 Too Many Requests`` with ``Retry-After: --retry-after`` seconds.
* ``--fail-every N``: the first request of every N-th product page (chosen by
  a hash of its path, so the same pages every run) is answered ``503``.
* ``--outage-seconds S`` (with ``--outage-after K``): after the K-th request,
  every page is answered ``503`` for S seconds (a backend down for a while).

``robots.txt`` is always served. The refusals go to the access log with their
status like any other answer, so a test counts them there.
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field

from demoshop.site import Response


def _refusal(status: int, retry_after: float | None = None) -> Response:
    response = Response(status, f"{status}\n".encode())
    if retry_after is not None:
        response.head += f"Retry-After: {retry_after:g}\r\n".encode("latin-1")
    return response


@dataclass
class ShopLimits:
    rate_limit: float = 0.0
    retry_after: float = 2.0
    fail_every: int = 0
    outage_after: int = 0
    outage_seconds: float = 0.0
    clock: Callable[[], float] = time.monotonic
    _tokens: float = 0.0
    _filled_at: float | None = None
    _failed: set[str] = field(default_factory=set)
    _requests: int = 0
    _outage_until: float | None = None

    @property
    def active(self) -> bool:
        return bool(self.rate_limit or self.fail_every or self.outage_seconds)

    def check(self, path: str) -> Response | None:
        """The refusal for this request, or None to serve it."""
        if path == "/robots.txt":
            return None
        now = self.clock()
        self._requests += 1
        if self.outage_seconds and self._outage_until is None:
            if self._requests > self.outage_after:
                self._outage_until = now + self.outage_seconds
        if self._outage_until is not None and now < self._outage_until:
            return _refusal(503)
        if self.rate_limit and not self._take(now):
            return _refusal(429, self.retry_after)
        if (
            self.fail_every
            and path.startswith("/p/")
            and zlib.crc32(path.encode()) % self.fail_every == 0
            and path not in self._failed
        ):
            self._failed.add(path)
            return _refusal(503)
        return None

    def _take(self, now: float) -> bool:
        capacity = max(1.0, self.rate_limit)
        if self._filled_at is None:
            self._tokens = capacity
        else:
            self._tokens = min(capacity, self._tokens + (now - self._filled_at) * self.rate_limit)
        self._filled_at = now
        if self._tokens >= 1.0:
            self._tokens -= 1.0
            return True
        return False
