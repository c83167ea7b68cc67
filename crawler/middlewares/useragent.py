"""User agents that really rotate, on the Scrapy version we pin.

``RotatingUserAgentMiddleware`` is scrapy-fake-useragent's
``RandomUserAgentMiddleware`` with the signature of Scrapy 2.13+ (no ``spider``
argument, so no deprecation warning). It picks an agent per request from the
providers in ``FAKEUSERAGENT_PROVIDERS``; note that fake-useragent 2.x only
loads when ``FAKEUSERAGENT_FALLBACK`` is set, else scrapy-fake-useragent falls
back silently to one fixed agent — our settings set it.

``FreshAgentRetryMiddleware`` replaces scrapy-fake-useragent's
``RetryUserAgentMiddleware``, which no longer works with Scrapy 2.13+
(it reads the removed ``RetryMiddleware.EXCEPTIONS_TO_RETRY``): it is Scrapy's
own ``RetryMiddleware`` whose retried requests drop their agent, so the
rotating middleware gives them a new one.
"""

from __future__ import annotations

from typing import Any

from scrapy import Request
from scrapy.downloadermiddlewares.retry import RetryMiddleware
from scrapy_fake_useragent.middleware import RandomUserAgentMiddleware


class RotatingUserAgentMiddleware(RandomUserAgentMiddleware):
    def process_request(self, request: Request, spider: Any = None) -> None:  # type: ignore[override]
        super().process_request(request, spider)


class FreshAgentRetryMiddleware(RetryMiddleware):
    def _retry(self, request: Request, reason: Any) -> Request | None:
        retry = super()._retry(request, reason)
        if retry is not None:
            retry.headers.pop(b"User-Agent", None)
        return retry
