"""BackoffRetryMiddleware: Scrapy's RetryMiddleware with a policy per kind of failure."""

from __future__ import annotations

from typing import Any

from scrapy import Request, Spider
from scrapy.exceptions import DownloadTimeoutError
from scrapy.http import Response
from scrapy.utils.test import get_crawler
from twisted.internet.error import DNSLookupError

from crawler.core import signals as crawler_signals
from crawler.middlewares.retry import BackoffRetryMiddleware
from crawler.policy.retrypolicy import DELAY_META_KEY, HISTORY_META_KEY


def middleware(**settings: Any) -> tuple[BackoffRetryMiddleware, list[dict[str, Any]]]:
    crawler = get_crawler(Spider, settings_dict={"RETRY_BACKOFF_JITTER": 0.0, **settings})
    crawler.spider = Spider.from_crawler(crawler, name="t")
    throttled: list[dict[str, Any]] = []
    crawler.signals.connect(
        lambda **kw: throttled.append(kw), signal=crawler_signals.site_throttled, weak=False
    )
    return BackoffRetryMiddleware.from_crawler(crawler), throttled


def answer(request: Request, status: int, **headers: str) -> Response:
    return Response(request.url, status=status, headers=headers, request=request)


def test_429_waits_at_least_its_retry_after_and_tells_the_site_budget() -> None:
    mw, throttled = middleware()
    request = Request("http://shop.test/p/1", headers={"User-Agent": "a"})
    retry = mw.process_response(request, answer(request, 429, **{"Retry-After": "7"}))
    assert isinstance(retry, Request)
    assert retry.meta[DELAY_META_KEY] == 7.0 and retry.meta["retry_times"] == 1
    assert [e["status"] for e in retry.meta[HISTORY_META_KEY]] == [429]
    assert b"User-Agent" not in retry.headers  # a fresh agent for the retry
    assert throttled[0]["reason"] == "HTTP 429" and throttled[0]["retry_after"] == 7.0


def test_a_throttled_page_gets_more_retries_with_growing_waits_then_gives_up() -> None:
    mw, _ = middleware(RETRY_THROTTLE_TIMES=4, RETRY_BACKOFF_BASE=1.0)
    request = Request("http://shop.test/p/1")
    waits = []
    for _ in range(4):
        retry = mw.process_response(request, answer(request, 503))
        assert isinstance(retry, Request)
        waits.append(retry.meta.pop(DELAY_META_KEY))
        request = retry
    assert waits == [1.0, 2.0, 4.0, 8.0]
    final = answer(request, 503)
    assert mw.process_response(request, final) is final  # exhausted: the spider's errback
    assert [e["status"] for e in request.meta[HISTORY_META_KEY]] == [503] * 5
    assert "wait" not in request.meta[HISTORY_META_KEY][-1]


def test_other_failures_get_scrapys_two_retries_and_other_4xx_none() -> None:
    mw, throttled = middleware()
    request = Request("http://shop.test/p/1")
    for _ in range(2):
        request = mw.process_response(request, answer(request, 500))  # type: ignore[assignment]
        assert isinstance(request, Request)
    assert isinstance(mw.process_response(request, answer(request, 500)), Response)
    for status in (403, 404, 410):
        fresh = Request("http://shop.test/x")
        assert isinstance(mw.process_response(fresh, answer(fresh, status)), Response)
    assert isinstance(mw.process_exception(fresh, DNSLookupError()), Request)
    assert throttled == []  # none of these slows the site down


def test_a_timeout_is_a_throttle_failure() -> None:
    mw, throttled = middleware()
    request = Request("http://shop.test/p/1")
    retry = mw.process_exception(request, DownloadTimeoutError("took too long"))
    assert isinstance(retry, Request)
    assert retry.meta[HISTORY_META_KEY][0]["status"] == "DownloadTimeoutError"
    assert throttled[0]["reason"] == "DownloadTimeoutError"
