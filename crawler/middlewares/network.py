"""``PrivateNetworkMiddleware``: workers crawl the public web only, unless told otherwise.

A seed, a link or a redirect may point at ``localhost``, ``127.0.0.1``, a
``10.x`` address or a name that resolves to one; a worker would then crawl
the network it runs in. This downloader middleware refuses such requests
(``IgnoreRequest``, counted in ``network/refused_private``) unless their host
or address is listed in ``ALLOW_PRIVATE_NETWORKS``: comma-separated host
names (``shop.internal``) and addresses or CIDR ranges (``127.0.0.1``,
``10.0.0.0/8``, ``::1``).

Names are resolved once per host and cached for the life of the worker.
"""

from __future__ import annotations

import ipaddress
import logging
import socket
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

from scrapy.exceptions import IgnoreRequest

logger = logging.getLogger(__name__)

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def parse_allowlist(value: str | list[str]) -> tuple[set[str], list[Network]]:
    """Split ``ALLOW_PRIVATE_NETWORKS`` into host names and networks; raise on nonsense."""
    entries = value if isinstance(value, list) else value.split(",")
    hosts: set[str] = set()
    networks: list[Network] = []
    for entry in (e.strip() for e in entries):
        if not entry:
            continue
        try:
            networks.append(ipaddress.ip_network(entry, strict=False))
        except ValueError:
            if "/" in entry or not all(part for part in entry.split(".")):
                raise ValueError(
                    f"ALLOW_PRIVATE_NETWORKS: {entry!r} is neither a host nor a CIDR range"
                ) from None
            hosts.add(entry.lower())
    return hosts, networks


def is_public(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    return address.is_global and not address.is_multicast


@lru_cache(maxsize=4096)
def resolve(host: str) -> tuple[str, ...]:
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except OSError:
        return ()
    return tuple(sorted({str(info[4][0]) for info in infos}))


class PrivateNetworkMiddleware:
    def __init__(self, allow: str | list[str], stats: Any = None) -> None:
        self.allowed_hosts, self.allowed_networks = parse_allowlist(allow)
        self.stats = stats

    @classmethod
    def from_crawler(cls, crawler: Any) -> PrivateNetworkMiddleware:
        return cls(crawler.settings.get("ALLOW_PRIVATE_NETWORKS") or "", crawler.stats)

    def _allowed_address(self, address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
        return is_public(address) or any(address in net for net in self.allowed_networks)

    def host_allowed(self, host: str) -> bool:
        host = host.lower().strip("[]")
        if host in self.allowed_hosts:
            return True
        try:
            addresses = [ipaddress.ip_address(host)]
        except ValueError:
            resolved = resolve(host)
            if not resolved:
                return True  # unresolvable: the download fails with a DNS error of its own
            addresses = [ipaddress.ip_address(a.split("%")[0]) for a in resolved]
        return all(self._allowed_address(address) for address in addresses)

    def process_request(self, request: Any, spider: Any = None) -> None:
        host = urlsplit(request.url).hostname or ""
        if not self.host_allowed(host):
            if self.stats is not None:
                self.stats.inc_value("network/refused_private")
            raise IgnoreRequest(
                f"{host} is a loopback or private address; list it in ALLOW_PRIVATE_NETWORKS "
                "to crawl it"
            )
        return None
