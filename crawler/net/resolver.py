"""``GuardedResolver``: the network rule applied at connection time, to the address resolved.

The downloader middleware checks a request's host before it is sent, but a DNS
answer may change between that check and the connection (DNS rebinding), and a
name the middleware could not resolve may resolve by then. Scrapy's HTTP/1.1
handler connects through Twisted, which asks the reactor's resolver
(``TWISTED_DNS_RESOLVER``) for the address of every host it connects to,
literal addresses included, and of every proxy given by name. This resolver is
Scrapy's own :class:`~scrapy.resolver.CachingThreadedResolver` with one step
added: the address it returns (fresh or cached) must pass the
:class:`~crawler.net.network.NetworkRule`, else the lookup fails and no connection
is made.

A refused lookup fails as a :class:`RefusedAddress` (a ``DNSLookupError``, the
only failure Twisted passes on quietly); Twisted reports it to Scrapy as "no
results for hostname lookup", so the reason is kept in :attr:`refusals` where
:class:`crawler.middlewares.network.FinalHopNetworkMiddleware` finds it and
turns the failure into a refusal with its reason (a dead letter, no retry).

Settings: ``ALLOW_PRIVATE_NETWORKS`` and Scrapy's ``DNSCACHE_*``, ``DNS_TIMEOUT``.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from scrapy.resolver import CachingThreadedResolver
from twisted.internet.defer import Deferred
from twisted.internet.error import DNSLookupError

from crawler.net.network import NetworkRule

logger = logging.getLogger(__name__)

MAX_REFUSALS_KEPT = 1024


class RefusedAddress(DNSLookupError):
    """A name resolved to an address the network rule refuses."""


class GuardedResolver(CachingThreadedResolver):
    def __init__(
        self, reactor: Any, cache_size: int, timeout: float, rule: NetworkRule | None = None
    ) -> None:
        super().__init__(reactor, cache_size, timeout)
        self.rule = rule if rule is not None else NetworkRule()
        self.refusals: OrderedDict[str, str] = OrderedDict()  # host -> reason, newest last

    @classmethod
    def from_crawler(cls, crawler: Any, reactor: Any) -> GuardedResolver:
        # Scrapy passes the CrawlerProcess here: only its settings are used.
        resolver = super().from_crawler(crawler, reactor)
        resolver.rule = NetworkRule.from_settings(crawler.settings)
        return resolver

    def lookup(self, name: str, timeout: Sequence[int] = ()) -> Deferred[str]:
        """The address of ``name``, unchecked (Scrapy's caching lookup)."""
        return super().getHostByName(name, timeout)

    def getHostByName(self, name: str, timeout: Sequence[int] = ()) -> Deferred[str]:  # noqa: N802
        deferred = self.lookup(name, timeout)
        deferred.addCallback(self._check, name)
        return deferred

    def _check(self, address: str, name: str) -> str:
        reason = self.rule.resolved_refusal(name, address)
        if reason is None:
            return address
        self.refusals[name.lower()] = reason
        self.refusals.move_to_end(name.lower())
        while len(self.refusals) > MAX_REFUSALS_KEPT:
            self.refusals.popitem(last=False)
        logger.warning("Refused to connect: %s", reason)
        raise RefusedAddress(reason)

    def refusal_for(self, host: str) -> str | None:
        """The reason a recent lookup of ``host`` was refused, if it was."""
        return self.refusals.get(host.lower())
