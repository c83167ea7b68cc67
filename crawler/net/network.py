"""The one network rule: which hosts and addresses the crawl may connect to.

Seeds, links, redirects and proxies may point at ``localhost``, ``127.0.0.2``,
``169.254.169.254`` (cloud metadata), a ``10.x`` address or a name that
resolves to one; a worker would then reach the network it runs in. The rule:
an address may be connected to when it is *public* (globally routable, not
multicast) or lies in ``ALLOW_PRIVATE_NETWORKS`` (comma-separated host names
such as ``shop.internal``, addresses or CIDR ranges such as ``127.0.0.1``,
``10.0.0.0/8``, ``::1``). A host listed by name is allowed without resolving.

Hosts are read the way the C resolver and Twisted read them, not only the way
:mod:`ipaddress` does: ``2130706434`` (decimal), ``0x7f000002`` (hex),
``0177.0.0.2`` (octal) and ``127.2`` (short) all mean ``127.0.0.2``; an IPv6
address carrying an IPv4 one (``::ffff:127.0.0.2``, NAT64, 6to4, Teredo) must
pass for both. Other names are resolved, and every address they resolve to must
pass; a name that does not resolve is left to the download (which fails, or is
checked again at connection time).

The same :class:`NetworkRule` is used by the master at seed time
(:mod:`master.seeding`), by the workers' downloader middlewares for every
request, redirect and proxy (:mod:`crawler.middlewares.network`), and at
connection time against the address really resolved
(:mod:`crawler.net.resolver`).
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

from crawler.core import defaults

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

SETTING = "ALLOW_PRIVATE_NETWORKS"
MAX_VERDICTS = 65536  # hosts whose verdict a rule keeps
PREFETCH_THREADS = 8  # names resolved at once by NetworkRule.prefetch
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


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
                    f"{SETTING}: {entry!r} is neither a host nor a CIDR range"
                ) from None
            hosts.add(entry.lower())
    return hosts, networks


def literal_address(host: str) -> Address | None:
    """The address a literal host stands for, in every form ``inet_aton`` accepts; else None."""
    text = host.strip().strip("[]").split("%", 1)[0]
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        pass
    if not text or not all(ch in "0123456789abcdefxABCDEFX." for ch in text):
        return None
    try:
        return ipaddress.IPv4Address(socket.inet_aton(text))  # 2130706434, 0x7f.1, 0177.0.0.2
    except OSError:
        return None


def embedded_ipv4(address: Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries (mapped, NAT64, 6to4, Teredo, compatible)."""
    if isinstance(address, ipaddress.IPv4Address):
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    if 1 < int(address) < 2**32:  # deprecated IPv4-compatible ::a.b.c.d
        return ipaddress.IPv4Address(int(address))
    return None


def describe(address: Address) -> str:
    """What kind of non-public address this is, with its article ("a loopback address")."""
    for attribute, kind in (
        ("is_loopback", "a loopback"),
        ("is_link_local", "a link-local"),
        ("is_unspecified", "an unspecified"),
        ("is_multicast", "a multicast"),
        ("is_private", "a private"),
        ("is_reserved", "a reserved"),
    ):
        if getattr(address, attribute):
            return f"{kind} address"
    return "a non-public address"


@lru_cache(maxsize=4096)
def resolve(host: str) -> tuple[str, ...]:
    """Every address ``host`` resolves to (cached for the life of the process); () if none."""
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        return ()
    return tuple(sorted({str(info[4][0]).split("%", 1)[0] for info in infos}))


class NetworkRule:
    """``ALLOW_PRIVATE_NETWORKS`` as a rule: ``refusal(url)`` says why a URL may not be fetched."""

    def __init__(
        self,
        allow: str | list[str] = "",
        resolver: Callable[[str], tuple[str, ...]] = resolve,
    ) -> None:
        self.allowed_hosts, self.allowed_networks = parse_allowlist(allow)
        self._resolve = resolver
        self._verdicts: dict[str, str | None] = {}

    @staticmethod
    def no_resolution(host: str) -> tuple[str, ...]:
        """A resolver that resolves nothing: only literal addresses (in any form) are checked."""
        return ()

    @classmethod
    def from_settings(cls, settings: Any) -> NetworkRule:
        return cls(settings.get(SETTING, defaults.ALLOW_PRIVATE_NETWORKS))

    def _listed(self, address: Address) -> bool:
        return any(address in network for network in self.allowed_networks)

    def address_refusal(self, address: Address, shown: str = "") -> str | None:
        """Why ``address`` may not be connected to (``shown`` names it), or None when it may."""
        shown = shown or str(address)
        if self._listed(address):
            return None
        inner = embedded_ipv4(address)
        if inner is not None:
            if not (self._listed(inner) or is_public(inner)):
                return f"{shown} carries {inner}, {describe(inner)}"
            if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
                return None  # the kernel connects to the IPv4 address itself
        if not is_public(address):
            return f"{shown} is {describe(address)}"
        return None

    def host_refusal(self, host: str) -> str | None:
        """Why ``host`` (name or address, any form) may not be crawled, or None.

        Verdicts are kept per host, as the resolution they rest on is (the
        workers check the address again at connection time).
        """
        try:
            return self._verdicts[host]
        except KeyError:
            pass
        if len(self._verdicts) >= MAX_VERDICTS:
            self._verdicts.clear()
        verdict = self._verdicts[host] = self._host_refusal(host)
        return verdict

    def _host_refusal(self, host: str) -> str | None:
        host = host.lower().strip().strip("[]")
        if not host:
            return "no host"
        if host in self.allowed_hosts:
            return None
        address = literal_address(host)
        if address is not None:
            same = isinstance(address, ipaddress.IPv6Address) or str(address) == host
            reason = self.address_refusal(address, host if same else f"{host} ({address})")
        else:
            reason = None
            for text in self._resolve(host):  # unresolvable: the download fails on its own
                reason = self.address_refusal(
                    ipaddress.ip_address(text), f"{host} resolves to {text}, which"
                )
                if reason is not None:
                    break
        return None if reason is None else f"{reason}; list it in {SETTING} to crawl it"

    def resolved_refusal(self, host: str, address: str) -> str | None:
        """Why a connection to ``host`` at the resolved ``address`` must not be made, or None."""
        if host.lower().strip("[]") in self.allowed_hosts:
            return None
        parsed = literal_address(address)
        if parsed is None:
            return f"{host} resolved to {address!r}, which is not an address"
        shown = host if address == host else f"{host} resolved to {address}, which"
        reason = self.address_refusal(parsed, shown)
        return None if reason is None else f"{reason}; list it in {SETTING} to crawl it"

    def refusal(self, url: str) -> str | None:
        """Why ``url`` may not be fetched, or None when it may."""
        try:
            host = urlsplit(url).hostname or ""
        except ValueError as exc:
            return f"malformed URL ({exc})"
        return self.host_refusal(host)

    def proxy_refusal(self, proxy: str | None) -> str | None:
        """Why a request may not go through ``proxy`` (a URL or ``host:port``), or None."""
        if not proxy:
            return None
        text = proxy if "://" in proxy else f"http://{proxy}"
        reason = self.refusal(text)
        return None if reason is None else f"proxy {proxy}: {reason}"

    def prefetch(self, hosts: Iterable[str]) -> None:
        """Decide on many hosts at once (names resolved in threads); ``host_refusal`` keeps it.

        The master checks seed files of many sites: one name at a time, a slow
        DNS would make that hours.
        """
        names = {
            host.lower()
            for host in hosts
            if host and host not in self._verdicts and host not in self.allowed_hosts
        }
        names = {name for name in names if literal_address(name) is None}
        if len(names) > 1:
            with ThreadPoolExecutor(min(PREFETCH_THREADS, len(names))) as pool:
                list(pool.map(self.host_refusal, names))

    def host_allowed(self, host: str) -> bool:
        return self.host_refusal(host) is None


def is_public(address: Address) -> bool:
    """Globally routable and not multicast."""
    return address.is_global and not address.is_multicast
