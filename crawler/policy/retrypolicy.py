"""The retry policy: which failures are retried, how often, and how long each retry waits.

Pure functions and one small class, no Redis and no Scrapy objects, so the
policy is tested on its own and read by :mod:`crawler.middlewares.retry`.

Failures are of three kinds:

* ``throttle``: the site asks us to slow down or is overloaded — an answer in
  ``RETRY_THROTTLE_HTTP_CODES`` (429, 503) or an exception in
  ``RETRY_THROTTLE_EXCEPTIONS`` (timeouts, connections reset). Retried
  ``RETRY_THROTTLE_TIMES`` times (8), and the site's shared rate is cut;
* ``other``: the other answers of ``RETRY_HTTP_CODES`` (500, 502, 504, 408,
  425, ...) and the other exceptions Scrapy retries. Retried ``RETRY_TIMES``
  times (2, Scrapy's default);
* anything else (404, 403, 410, every 4xx but 408/425/429): not retried.

The n-th retry waits ``RETRY_BACKOFF_BASE * 2**(n-1)`` seconds, at most
``RETRY_BACKOFF_MAX``, minus a random share up to ``RETRY_BACKOFF_JITTER``; a
``Retry-After`` (seconds or an HTTP date, capped at ``RETRY_AFTER_MAX``) waits
at least as long as it says.

The attempts and the failures of a request travel in its meta (JSON, through
the shared queue): ``retry_times`` (Scrapy's own count) and ``retry_history``,
a list of ``{"status": 429 | "DownloadTimeoutError", "time": epoch seconds,
"wait": seconds}``.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any

from crawler.core import defaults

HISTORY_META_KEY = "retry_history"
DELAY_META_KEY = "retry_delay"  # seconds the retry waits in Redis; consumed by the queue's push

THROTTLE = "throttle"
OTHER = "other"


def parse_retry_after(value: bytes | str | None, now: float | None = None) -> float | None:
    """Seconds a ``Retry-After`` header asks for (delta-seconds or an HTTP date), else None."""
    if value is None:
        return None
    text = value.decode("latin-1") if isinstance(value, bytes) else value
    text = text.strip()
    if not text:
        return None
    if text.isdigit():
        return float(text)
    try:
        moment = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if moment is None:
        return None
    now = time.time() if now is None else now
    return max(0.0, moment.timestamp() - now)


@dataclass
class RetryPolicy:
    """How many retries each kind of failure gets, and how long each waits."""

    http_codes: frozenset[int] = frozenset(defaults.RETRY_HTTP_CODES)
    throttle_codes: frozenset[int] = frozenset(defaults.RETRY_THROTTLE_HTTP_CODES)
    times: int = defaults.RETRY_TIMES
    throttle_times: int = defaults.RETRY_THROTTLE_TIMES
    backoff_base: float = defaults.RETRY_BACKOFF_BASE
    backoff_max: float = defaults.RETRY_BACKOFF_MAX
    jitter: float = defaults.RETRY_BACKOFF_JITTER
    retry_after_max: float = defaults.RETRY_AFTER_MAX
    history_max: int = defaults.RETRY_HISTORY_MAX

    @classmethod
    def from_settings(cls, settings: Any) -> RetryPolicy:
        return cls(
            http_codes=frozenset(
                int(c) for c in settings.getlist("RETRY_HTTP_CODES", defaults.RETRY_HTTP_CODES)
            ),
            throttle_codes=frozenset(
                int(c)
                for c in settings.getlist(
                    "RETRY_THROTTLE_HTTP_CODES", defaults.RETRY_THROTTLE_HTTP_CODES
                )
            ),
            times=settings.getint("RETRY_TIMES", defaults.RETRY_TIMES),
            throttle_times=settings.getint("RETRY_THROTTLE_TIMES", defaults.RETRY_THROTTLE_TIMES),
            backoff_base=settings.getfloat("RETRY_BACKOFF_BASE", defaults.RETRY_BACKOFF_BASE),
            backoff_max=settings.getfloat("RETRY_BACKOFF_MAX", defaults.RETRY_BACKOFF_MAX),
            jitter=min(
                1.0,
                max(0.0, settings.getfloat("RETRY_BACKOFF_JITTER", defaults.RETRY_BACKOFF_JITTER)),
            ),
            retry_after_max=settings.getfloat("RETRY_AFTER_MAX", defaults.RETRY_AFTER_MAX),
            history_max=settings.getint("RETRY_HISTORY_MAX", defaults.RETRY_HISTORY_MAX),
        )

    def status_kind(self, status: int) -> str | None:
        """``throttle``, ``other`` or None (not retried) for an HTTP status."""
        if status in self.throttle_codes:
            return THROTTLE
        if status in self.http_codes:
            return OTHER
        return None

    def max_retries(self, kind: str) -> int:
        return self.throttle_times if kind == THROTTLE else self.times

    def backoff(self, retry: int, rng: random.Random | None = None) -> float:
        """Seconds before the ``retry``-th retry (1 for the first), with jitter."""
        delay = min(self.backoff_max, self.backoff_base * 2 ** max(0, retry - 1))
        draw = (rng or random).random()
        return max(0.0, delay * (1.0 - self.jitter * draw))

    def wait(
        self, retry: int, retry_after: float | None = None, rng: random.Random | None = None
    ) -> float:
        """The wait before a retry: the backoff, and at least the (capped) Retry-After."""
        delay = self.backoff(retry, rng)
        if retry_after is not None:
            delay = max(delay, min(retry_after, self.retry_after_max))
        return delay

    def note(self, meta: dict[str, Any], failure: int | str, wait: float | None) -> list[Any]:
        """Add a failure to ``meta[retry_history]`` (the newest ``history_max`` are kept)."""
        history = list(meta.get(HISTORY_META_KEY) or [])
        entry: dict[str, Any] = {"status": failure, "time": round(time.time(), 3)}
        if wait is not None:
            entry["wait"] = round(wait, 3)
        history.append(entry)
        if self.history_max > 0:
            history = history[-self.history_max :]
        meta[HISTORY_META_KEY] = history
        return history


def describe_history(history: list[Any]) -> str:
    """``429, 429, 503`` for a dead letter's reason: the failures in order."""
    return ", ".join(str(entry.get("status")) for entry in history if isinstance(entry, dict))
