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
the provider for every request). From fake-useragent's own provider (its ``random``
agents), the pool is drawn from the database filtered once, as each of its draws
picks from the same filtered list: 100 draws had cost 0.6-1.0 s of CPU at every
worker's start, up to a third of it.


A retried request drops its agent, so this middleware gives it a new one (see
:mod:`crawler.middlewares.retry`).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from scrapy import Request
from scrapy_fake_useragent.middleware import RandomUserAgentMiddleware
from scrapy_fake_useragent.providers import FakeUserAgentProvider

from crawler.core import defaults


class RotatingUserAgentMiddleware(RandomUserAgentMiddleware):
    def __init__(self, crawler: Any) -> None:
        super().__init__(crawler)
        size = crawler.settings.getint("USERAGENT_POOL_SIZE", defaults.USERAGENT_POOL_SIZE)
        self._random = random.Random()
        draw = _filtered_draw(self._ua_provider, self._random) or self._ua_provider.get_random_ua
        self._pool = sorted({draw() for _ in range(size)}) if size else []

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


def _filtered_draw(provider: Any, rng: random.Random) -> Callable[[], str] | None:
    """A draw of fake-useragent's provider's ``random`` agents from its database
    filtered once: each of its own draws filters the whole database, then picks one
    of the filtered agents at random (``UserAgent.getBrowser("random")``), so this is
    the same choice. None for another provider or agent type, or when the database
    filters to nothing (the provider then gives its fallback agent, draw by draw)."""
    if not isinstance(provider, FakeUserAgentProvider) or provider._ua_type != "random":
        return None
    try:
        agents = [entry["useragent"] for entry in provider._ua._filter_useragents()]
    except (AttributeError, KeyError, TypeError):  # another fake-useragent: its own draws
        return None
    return (lambda: rng.choice(agents)) if agents else None
