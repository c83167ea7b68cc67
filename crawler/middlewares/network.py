"""Downloader middlewares that apply the network rule (:mod:`crawler.net.network`) at every hop.

``PrivateNetworkMiddleware`` (early, priority 50, before robots.txt is fetched)
refuses a request whose host, or whose ``meta["proxy"]`` if one is set
already, the rule refuses: seeds, links and every redirect alike, since a
redirect is a new request that comes through here again.

``FinalHopNetworkMiddleware`` (last, priority 950, after
``HttpProxyMiddleware``) checks the proxy the request will really use,
whatever set it: a component, a setting, or the ``http_proxy``/``https_proxy``
environment variables. It also turns a lookup that
:class:`crawler.net.resolver.GuardedResolver` refused at connection time (Twisted
reports it as a plain DNS failure) back into a refusal with its reason, so it
is not retried.

A refused request fails with :class:`RefusedRequest` (an ``IgnoreRequest``);
the spider records it as a dead letter with the reason and logs a WARNING.
Stats: ``network/refused`` and, for compatibility, ``network/refused_private``.
"""

from __future__ import annotations

import logging
import sys
from typing import Any
from urllib.parse import urlsplit

from scrapy.exceptions import CannotResolveHostError, IgnoreRequest
from twisted.internet.error import DNSLookupError

from crawler.net.network import NetworkRule, is_public, parse_allowlist, resolve

__all__ = [  # the rule's helpers stay importable from here, where they used to live
    "FinalHopNetworkMiddleware",
    "PrivateNetworkMiddleware",
    "RefusedRequest",
    "is_public",
    "parse_allowlist",
    "resolve",
]

logger = logging.getLogger(__name__)


class RefusedRequest(IgnoreRequest):
    """The network rule refused this request; ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class _NetworkMiddleware:
    def __init__(self, rule: NetworkRule, stats: Any = None) -> None:
        self.rule = rule
        self.stats = stats

    @classmethod
    def from_crawler(cls, crawler: Any) -> Any:
        return cls(NetworkRule.from_settings(crawler.settings), crawler.stats)

    def _refuse(self, reason: str) -> RefusedRequest:
        if self.stats is not None:
            self.stats.inc_value("network/refused")
            self.stats.inc_value("network/refused_private")
        return RefusedRequest(reason)


class PrivateNetworkMiddleware(_NetworkMiddleware):
    """Refuses requests to hosts (and through proxies) outside the network rule."""

    def __init__(self, allow: str | list[str] | NetworkRule = "", stats: Any = None) -> None:
        super().__init__(allow if isinstance(allow, NetworkRule) else NetworkRule(allow), stats)

    @property
    def allowed_hosts(self) -> set[str]:
        return self.rule.allowed_hosts

    def host_allowed(self, host: str) -> bool:
        """May ``host`` (name or address, any form) be connected to? (kept for callers)"""
        return self.rule.host_allowed(host)

    def process_request(self, request: Any, spider: Any = None) -> None:
        reason = self.rule.refusal(request.url) or self.rule.proxy_refusal(
            request.meta.get("proxy")
        )
        if reason is not None:
            raise self._refuse(reason)
        return None


class FinalHopNetworkMiddleware(_NetworkMiddleware):
    """Checks the proxy a request really uses; names connection-time refusals."""

    def process_request(self, request: Any, spider: Any = None) -> None:
        reason = self.rule.proxy_refusal(request.meta.get("proxy"))
        if reason is not None:
            raise self._refuse(reason)
        return None

    def process_exception(self, request: Any, exception: Exception, spider: Any = None) -> None:
        if not isinstance(exception, (CannotResolveHostError, DNSLookupError)):
            return None
        # the running reactor, if any (importing twisted.internet.reactor would install one)
        reactor = sys.modules.get("twisted.internet.reactor")
        refusal_for = getattr(getattr(reactor, "resolver", None), "refusal_for", None)
        if refusal_for is None:
            return None
        hosts = [urlsplit(request.url).hostname or ""]
        proxy = request.meta.get("proxy")
        if proxy:
            hosts.insert(0, urlsplit(proxy if "://" in proxy else f"//{proxy}").hostname or "")
        for host in hosts:
            reason = refusal_for(host) if host else None
            if reason is not None:
                raise self._refuse(f"at connection time: {reason}")
        return None
