"""User agents that really rotate, cheaply, on the Scrapy version we pin.

``RotatingUserAgentMiddleware`` is scrapy-fake-useragent's
``RandomUserAgentMiddleware`` with the signature of Scrapy 2.13+ (no ``spider``
argument, so no deprecation warning). Agents come from the providers in
``FAKEUSERAGENT_PROVIDERS``; note that fake-useragent 2.x only loads when
``FAKEUSERAGENT_FALLBACK`` is set, else scrapy-fake-useragent falls back
silently to one fixed agent — our settings set it.

fake-useragent filters its whole database on every draw (about 6 ms of CPU, more
than parsing a page), so the middleware draws ``USERAGENT_POOL_SIZE`` agents
once at start-up and picks one of them at random for each request (0 draws from
the provider for every request).


A retried request drops its agent, so this middleware gives it a new one (see
:mod:`crawler.middlewares.retry`).
"""

from __future__ import annotations

import random
from typing import Any

from scrapy import Request
from scrapy_fake_useragent.middleware import RandomUserAgentMiddleware

from crawler import defaults


class RotatingUserAgentMiddleware(RandomUserAgentMiddleware):
    def __init__(self, crawler: Any) -> None:
        super().__init__(crawler)
        size = crawler.settings.getint("USERAGENT_POOL_SIZE", defaults.USERAGENT_POOL_SIZE)
        self._pool = (
            sorted({self._ua_provider.get_random_ua() for _ in range(size)}) if size else []
        )
        self._random = random.Random()

    def _agent(self) -> str:
        return self._random.choice(self._pool) if self._pool else self._ua_provider.get_random_ua()

    def process_request(self, request: Request, spider: Any = None) -> None:  # type: ignore[override]
        if self._per_proxy:
            proxy = request.meta.get("proxy")
            if proxy not in self._proxy2ua:
                self._proxy2ua[proxy] = self._agent()
            request.headers.setdefault("User-Agent", self._proxy2ua[proxy])
        else:
            request.headers.setdefault("User-Agent", self._agent())
