"""``RotatingProxyMiddleware``: each request through the next healthy proxy of ``PROXY_LIST``.

``PROXY_LIST`` is a file (one proxy URL a line; blank lines and ``#`` comments
skipped) or comma-separated URLs: ``http://user:pass@10.1.2.3:8080``. Unset:
the middleware steps aside. Every proxy must pass the network rule
(:class:`~crawler.middlewares.network.PrivateNetworkMiddleware`: a proxy on a
private or loopback address only when ``ALLOW_PRIVATE_NETWORKS`` lists it); a
refused or malformed entry stops the worker at start-up, since crawling without
the proxies the operator asked for would show the worker's own address.

The middleware sets ``request.meta["proxy"]`` (round robin over the proxies
not resting) and Scrapy's ``HttpProxyMiddleware`` turns the credentials of the
URL into ``Proxy-Authorization``. A request whose ``meta["proxy"]`` was set by
someone else keeps it. A failure through a proxy (a download error, or an answer
in ``PROXY_FAILURE_STATUSES``: 407, 502, 503, 504 by default) counts against
it; ``PROXY_FAILURES_BEFORE_REST`` failures in a row rest it for
``PROXY_REST_SECONDS``; a good answer clears its count. When every proxy rests,
the one whose rest ends first is used. Retries (see
:mod:`crawler.middlewares.useragent`) take the next proxy and a fresh agent.

Credentials never reach the logs or the stats (``http://***@host:port``) nor
Redis (the queue's serializer drops ``Proxy-Authorization``).

Stats: ``proxies/requests``, ``proxies/failures``, ``proxies/rested``.
"""

from __future__ import annotations

import itertools
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from scrapy import Request
from scrapy.exceptions import NotConfigured
from scrapy.http import Response

from crawler.core import defaults
from crawler.middlewares.network import PrivateNetworkMiddleware
from crawler.net.network import NetworkRule

logger = logging.getLogger(__name__)

PROXY_META_KEY = "rotating_proxy"  # the redacted name of the proxy a request went through


class ProxyListError(ValueError):
    """``PROXY_LIST`` names a file that cannot be read, a bad URL or a refused address."""


def redact_proxy(url: str) -> str:
    """The proxy URL without its user and password: ``http://***@host:port``."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.netloc.rsplit("@", 1)[-1]
    return parts._replace(netloc=f"***@{host}").geturl()


def read_proxy_list(value: str) -> list[str]:
    """The proxy URLs of ``PROXY_LIST`` (a file path, or comma-separated URLs)."""
    value = value.strip()
    if not value:
        return []
    if "://" not in value:
        try:
            text = Path(value).expanduser().read_text(encoding="utf-8")
        except OSError as exc:
            raise ProxyListError(
                f"PROXY_LIST: cannot read {value}: {exc.strerror or exc}"
            ) from None
        entries = [line.split("#", 1)[0].strip() for line in text.splitlines()]
    else:
        entries = [entry.strip() for entry in value.split(",")]
    proxies = []
    for entry in filter(None, entries):
        parts = urlsplit(entry)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ProxyListError(f"PROXY_LIST: {redact_proxy(entry)!r} is not an http(s) proxy URL")
        proxies.append(entry)
    return proxies


@dataclass
class ProxyState:
    url: str
    name: str  # redacted, for logs and stats
    failures: int = 0  # in a row
    resting_until: float = 0.0


class RotatingProxyMiddleware:
    def __init__(
        self,
        proxies: list[str],
        stats: Any,
        failures_before_rest: int,
        rest_seconds: float,
        failure_statuses: set[int],
    ) -> None:
        if not proxies:
            raise ValueError("no proxy to rotate through")
        self.proxies = [ProxyState(url, redact_proxy(url)) for url in proxies]
        self.by_name = {proxy.name: proxy for proxy in self.proxies}
        self.stats = stats
        self.failures_before_rest = failures_before_rest
        self.rest_seconds = rest_seconds
        self.failure_statuses = failure_statuses
        self._turn = itertools.cycle(self.proxies)

    @classmethod
    def from_crawler(cls, crawler: Any) -> RotatingProxyMiddleware:
        settings = crawler.settings
        proxies = read_proxy_list(settings.get("PROXY_LIST", defaults.PROXY_LIST))
        if not proxies:
            raise NotConfigured  # no message: Scrapy would log it as a warning
        rule = PrivateNetworkMiddleware(NetworkRule.from_settings(settings))
        for url in proxies:
            host = urlsplit(url).hostname or ""
            if not rule.host_allowed(host):
                raise ProxyListError(
                    f"PROXY_LIST: {redact_proxy(url)} is on a loopback or private address; "
                    "list it in ALLOW_PRIVATE_NETWORKS to use it"
                )
        middleware = cls(
            proxies,
            crawler.stats,
            settings.getint("PROXY_FAILURES_BEFORE_REST", defaults.PROXY_FAILURES_BEFORE_REST),
            settings.getfloat("PROXY_REST_SECONDS", defaults.PROXY_REST_SECONDS),
            {
                int(code)
                for code in settings.getlist(
                    "PROXY_FAILURE_STATUSES", defaults.PROXY_FAILURE_STATUSES
                )
            },
        )
        logger.info(
            "Rotating %d proxies: %s",
            len(proxies),
            ", ".join(proxy.name for proxy in middleware.proxies),
        )
        return middleware

    def choose(self, now: float | None = None) -> ProxyState:
        """The next proxy not resting; if all rest, the one that is back first."""
        now = time.monotonic() if now is None else now
        for _ in range(len(self.proxies)):
            proxy = next(self._turn)
            if proxy.resting_until <= now:
                return proxy
        return min(self.proxies, key=lambda proxy: proxy.resting_until)

    def process_request(self, request: Request) -> None:
        if "proxy" in request.meta and PROXY_META_KEY not in request.meta:
            return  # a proxy chosen by someone else
        proxy = self.choose()
        request.headers.pop(b"Proxy-Authorization", None)
        request.meta.pop("_auth_proxy", None)
        request.meta["proxy"] = proxy.url
        request.meta[PROXY_META_KEY] = proxy.name
        self.stats.inc_value("proxies/requests")
        self.stats.inc_value(f"proxies/requests/{proxy.name}")

    def _proxy_of(self, request: Request) -> ProxyState | None:
        return self.by_name.get(request.meta.get(PROXY_META_KEY, ""))

    def _failed(self, proxy: ProxyState, why: str) -> None:
        self.stats.inc_value("proxies/failures")
        self.stats.inc_value(f"proxies/failures/{proxy.name}")
        if proxy.resting_until > time.monotonic():
            return  # an answer to a request sent before the rest began
        proxy.failures += 1
        if self.failures_before_rest and proxy.failures >= self.failures_before_rest:
            proxy.failures = 0
            proxy.resting_until = time.monotonic() + self.rest_seconds
            self.stats.inc_value("proxies/rested")
            logger.warning(
                "Proxy %s failed %d times in a row (last: %s); resting it for %g s",
                proxy.name,
                self.failures_before_rest,
                why,
                self.rest_seconds,
            )

    def process_response(self, request: Request, response: Response) -> Response:
        proxy = self._proxy_of(request)
        if proxy is not None:
            if response.status in self.failure_statuses:
                self._failed(proxy, f"HTTP {response.status}")
            else:
                proxy.failures = 0
        return response

    def process_exception(self, request: Request, exception: BaseException) -> None:
        proxy = self._proxy_of(request)
        if proxy is not None:
            self._failed(proxy, type(exception).__name__)
