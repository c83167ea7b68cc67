"""``BackoffRetryMiddleware``: Scrapy's RetryMiddleware with a policy per kind of failure.

It replaces ``scrapy.downloadermiddlewares.retry.RetryMiddleware`` in
``DOWNLOADER_MIDDLEWARES`` (same place, 550) and builds each retry with Scrapy's
``get_retry_request`` (stats ``retry/count``, ``retry/reason_count/<reason>``,
``retry/max_reached``; ``dont_retry`` and ``max_retry_times`` in a request's
meta still win). What it adds (the policy itself: :mod:`crawler.policy.retrypolicy`):

* **kinds**: 429/503 and timeouts or dropped connections get
  ``RETRY_THROTTLE_TIMES`` retries (8), the other failures ``RETRY_TIMES`` (2),
  a 4xx other than 408/425/429 none;
* **backoff**: each retry carries how long it must wait
  (``meta["retry_delay"]``: exponential with jitter, at least the
  ``Retry-After`` of the answer); the shared queue keeps it in Redis until then
  (:meth:`crawler.scheduling.queue.ReliablePriorityQueue.push`), so no worker
  holds it in memory and any worker may take it when it is due;
* **history**: the failures so far travel in ``meta["retry_history"]`` (status
  or exception, time, wait), through the queue's JSON, to whichever worker
  tries next, and into the dead letter when the policy is exhausted;
* **the site slows down**: a throttle failure sends the signal
  ``crawler.core.signals.site_throttled`` (the politeness middleware cuts the
  site's shared rate and, with a Retry-After, pauses the site);
* a retried request drops its ``User-Agent`` and ``Proxy-Authorization``, so it
  goes out with a fresh agent (and the next proxy when ``PROXY_LIST`` is set).

Settings: ``RETRY_ENABLED``, ``RETRY_HTTP_CODES``, ``RETRY_TIMES``,
``RETRY_EXCEPTIONS``, ``RETRY_THROTTLE_HTTP_CODES``, ``RETRY_THROTTLE_EXCEPTIONS``,
``RETRY_THROTTLE_TIMES``, ``RETRY_BACKOFF_BASE``, ``RETRY_BACKOFF_MAX``,
``RETRY_BACKOFF_JITTER``, ``RETRY_AFTER_MAX``, ``RETRY_HISTORY_MAX``,
``RETRY_PRIORITY_ADJUST``, ``RETRY_GIVE_UP_LOG_LEVEL``.
Stats (besides Scrapy's): ``retry/throttled``, ``retry/delayed``, ``retry/wait_seconds``.
"""

from __future__ import annotations

from typing import Any

from scrapy import Request
from scrapy.downloadermiddlewares.retry import RetryMiddleware, get_retry_request
from scrapy.http import Response
from scrapy.utils.misc import load_object
from scrapy.utils.response import response_status_message

from crawler.core import defaults
from crawler.core import signals as crawler_signals
from crawler.policy.retrypolicy import (
    DELAY_META_KEY,
    THROTTLE,
    RetryPolicy,
    parse_retry_after,
)


class BackoffRetryMiddleware(RetryMiddleware):
    def __init__(self, settings: Any) -> None:
        super().__init__(settings)
        self.policy = RetryPolicy.from_settings(settings)
        self.throttle_exceptions: tuple[type[BaseException], ...] = tuple(
            load_object(path) if isinstance(path, str) else path
            for path in settings.getlist(
                "RETRY_THROTTLE_EXCEPTIONS", defaults.RETRY_THROTTLE_EXCEPTIONS
            )
        )

    def process_response(  # type: ignore[override]
        self, request: Request, response: Response, spider: Any = None
    ) -> Request | Response:
        if request.meta.get("dont_retry", False):
            return response
        kind = self.policy.status_kind(response.status)
        if kind is None:
            return response
        retry_after = parse_retry_after(response.headers.get(b"Retry-After"))
        if kind == THROTTLE:
            self._throttled(request, f"HTTP {response.status}", retry_after)
        reason = response_status_message(response.status)
        return self._retry_later(request, response.status, kind, reason, retry_after) or response

    def process_exception(  # type: ignore[override]
        self, request: Request, exception: Exception, spider: Any = None
    ) -> Request | Response | None:
        if request.meta.get("dont_retry", False):
            return None
        if isinstance(exception, self.throttle_exceptions):
            kind = THROTTLE
            self._throttled(request, type(exception).__name__, None)
        elif isinstance(exception, self.exceptions_to_retry):
            kind = "other"
        else:
            return None
        return self._retry_later(request, type(exception).__name__, kind, exception, None)

    def _throttled(self, request: Request, reason: str, retry_after: float | None) -> None:
        self.crawler.stats.inc_value("retry/throttled")
        self.crawler.signals.send_catch_log(
            crawler_signals.site_throttled,
            request=request,
            reason=reason,
            retry_after=retry_after,
        )

    def _retry_later(
        self,
        request: Request,
        failure: int | str,
        kind: str,
        reason: Any,
        retry_after: float | None,
    ) -> Request | None:
        """The retry, carrying its wait and the history; None when the policy is exhausted."""
        attempt = int(request.meta.get("retry_times", 0)) + 1
        max_times = request.meta.get("max_retry_times")
        if max_times is None:
            max_times = self.policy.max_retries(kind)
        wait = self.policy.wait(attempt, retry_after) if attempt <= max_times else None
        self.policy.note(request.meta, failure, wait)  # the retry's copy carries it too
        assert self.crawler.spider is not None
        retry = get_retry_request(
            request,
            spider=self.crawler.spider,
            reason=reason,
            max_retry_times=max_times,
            priority_adjust=request.meta.get("priority_adjust", self.priority_adjust),
            give_up_log_level=request.meta.get("give_up_log_level", self.give_up_log_level),
        )
        if retry is None:
            return None
        retry.headers.pop(b"User-Agent", None)
        retry.headers.pop(b"Proxy-Authorization", None)  # the next proxy brings its own
        if wait:
            retry.meta[DELAY_META_KEY] = wait
            self.crawler.stats.inc_value("retry/delayed")
            self.crawler.stats.inc_value("retry/wait_seconds", round(wait))
        return retry
