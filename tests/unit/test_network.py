"""One network rule (crawler/net/network.py) for the master, the middlewares and the resolver."""

from __future__ import annotations

import pytest
from scrapy import Request
from scrapy.exceptions import IgnoreRequest
from scrapy.utils.test import get_crawler
from twisted.internet import defer
from twisted.internet.error import DNSLookupError

from crawler.middlewares.network import (
    FinalHopNetworkMiddleware,
    PrivateNetworkMiddleware,
    RefusedRequest,
    parse_allowlist,
)
from crawler.net.network import NetworkRule, literal_address
from crawler.net.resolver import GuardedResolver, RefusedAddress


def _middleware(allow=""):
    return PrivateNetworkMiddleware.from_crawler(
        get_crawler(settings_dict={"ALLOW_PRIVATE_NETWORKS": allow})
    )


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8080/",
        "http://localhost/",
        "http://10.1.2.3/",
        "http://192.168.0.1/",
        "http://[::1]/",
        "http://169.254.169.254/latest/meta-data/",
        "http://0.0.0.0/",
    ],
)
def test_private_and_loopback_targets_are_refused_by_default(url):
    with pytest.raises(IgnoreRequest, match="ALLOW_PRIVATE_NETWORKS"):
        _middleware().process_request(Request(url))


def test_public_addresses_pass():
    assert _middleware().process_request(Request("http://93.184.216.34/")) is None


def test_allowlist_by_address_range_and_host():
    middleware = _middleware("127.0.0.1, 10.0.0.0/8, localhost")
    for url in ["http://127.0.0.1:1/", "http://10.9.9.9/", "http://localhost:5/"]:
        assert middleware.process_request(Request(url)) is None
    with pytest.raises(IgnoreRequest):
        middleware.process_request(Request("http://192.168.1.1/"))


def test_allowlist_rejects_nonsense():
    with pytest.raises(ValueError, match="neither a host nor a CIDR"):
        parse_allowlist("10.0.0.0/33")


# -- every form of one address ---------------------------------------------------------

CANARY_FORMS = [
    "127.0.0.2",
    "2130706434",  # decimal
    "0x7f000002",  # hex
    "0x7f.0.0.2",
    "0177.0.0.2",  # octal
    "017700000002",
    "127.2",  # short form
    "[::ffff:127.0.0.2]",  # IPv4-mapped IPv6
    "[::ffff:7f00:2]",
    "[64:ff9b::7f00:2]",  # NAT64
    "[::127.0.0.2]",  # IPv4-compatible
]


@pytest.mark.parametrize("host", CANARY_FORMS)
def test_every_form_of_a_refused_address_is_refused(host):
    rule = NetworkRule("127.0.0.1")
    reason = rule.refusal(f"http://{host}:8080/x")
    assert reason is not None and "127.0.0.2" in reason and "loopback" in reason, reason


@pytest.mark.parametrize("host", ["0x7f000001", "2130706433", "127.1", "[::ffff:127.0.0.1]"])
def test_every_form_of_an_allowed_address_is_allowed(host):
    assert NetworkRule("127.0.0.1").refusal(f"http://{host}:8080/") is None


@pytest.mark.parametrize(
    "url, kind",
    [
        ("http://169.254.169.254/latest/meta-data/", "link-local"),
        ("http://[fe80::1]/", "link-local"),
        ("http://[::1]:80/", "loopback"),
        ("http://[fd12:3456::1]/", "private"),
        ("http://0/", "unspecified"),
        ("http://[::]/", "unspecified"),
        ("http://224.0.0.1/", "multicast"),
        ("http://100.64.0.1/", "non-public"),  # carrier-grade NAT
    ],
)
def test_non_public_kinds_are_named(url, kind):
    reason = NetworkRule("127.0.0.1").refusal(url)
    assert reason is not None and kind in reason, reason


def test_literal_forms_match_the_c_resolver():
    assert str(literal_address("2130706434")) == "127.0.0.2"
    assert str(literal_address("[::ffff:127.0.0.2]")) == "::ffff:7f00:2"
    assert literal_address("shop.example.com") is None
    assert literal_address("deadbeef.example") is None
    assert literal_address("127.0.0.2.") is None  # a name; resolved like one


def test_names_are_resolved_and_every_address_must_pass():
    answers = {"inside.test": ("93.184.216.34", "10.0.0.7"), "public.test": ("93.184.216.34",)}
    rule = NetworkRule("127.0.0.1", resolver=lambda host: answers.get(host, ()))
    reason = rule.refusal("http://inside.test/")
    assert reason == (
        "inside.test resolves to 10.0.0.7, which is a private address; "
        "list it in ALLOW_PRIVATE_NETWORKS to crawl it"
    )
    assert rule.refusal("http://public.test/") is None
    assert rule.refusal("http://unknown.test/") is None  # left to the download / resolver
    assert NetworkRule("inside.test", resolver=answers.get).refusal("http://inside.test/") is None


def test_real_resolution_of_a_numeric_name():
    # not an address for ipaddress, but the system resolver reads it as 127.0.0.2
    rule = NetworkRule("127.0.0.1")
    assert not rule.host_allowed("2130706434")
    assert rule.host_allowed("localhost")  # resolves to 127.0.0.1
    assert not NetworkRule("").host_allowed("localhost")


def test_proxies_follow_the_same_rule():
    rule = NetworkRule("127.0.0.1")
    assert rule.proxy_refusal("http://127.0.0.2:3128") is not None
    assert rule.proxy_refusal("127.0.0.2:3128") is not None
    assert rule.proxy_refusal("http://user:pw@[::ffff:127.0.0.2]:3128") is not None
    assert rule.proxy_refusal("http://127.0.0.1:3128") is None
    assert rule.proxy_refusal(None) is None


# -- middlewares ------------------------------------------------------------------------


def test_meta_proxy_is_checked_even_for_an_allowed_url():
    request = Request("http://127.0.0.1:8000/c/1", meta={"proxy": "http://127.0.0.2:3128"})
    with pytest.raises(RefusedRequest, match="proxy http://127.0.0.2:3128"):
        _middleware("127.0.0.1").process_request(request)


def test_final_hop_checks_the_proxy_any_component_set():
    crawler = get_crawler(settings_dict={"ALLOW_PRIVATE_NETWORKS": "127.0.0.1"})
    final = FinalHopNetworkMiddleware.from_crawler(crawler)
    request = Request("http://127.0.0.1:8000/")
    assert final.process_request(request) is None
    request.meta["proxy"] = "http://2130706434:3128"  # as HttpProxyMiddleware sets it from env
    with pytest.raises(RefusedRequest, match=r"2130706434 \(127.0.0.2\)"):
        final.process_request(request)


def test_host_allowed_is_kept_for_callers():
    middleware = _middleware("127.0.0.1")
    assert middleware.host_allowed("127.0.0.1")
    assert not middleware.host_allowed("[::ffff:127.0.0.2]")
    assert not middleware.host_allowed("2130706434")


# -- connection time ---------------------------------------------------------------------


class _ScriptedResolver(GuardedResolver):
    """The guard over a lookup that answers from a dict (as a rebinding DNS server would)."""

    answers: dict[str, str] = {}

    def lookup(self, name, timeout=()):
        return defer.succeed(self.answers[name])


def _resolve(resolver, name):
    results = []
    resolver.getHostByName(name).addBoth(results.append)
    return results[0]


def _installed_reactor():
    """The workers' reactor (asyncio), installed if nothing installed one yet: importing
    ``twisted.internet.reactor`` bare would install the default one for the whole session."""
    from scrapy.utils.reactor import install_reactor, is_reactor_installed

    if not is_reactor_installed():
        install_reactor("twisted.internet.asyncioreactor.AsyncioSelectorReactor")
    from twisted.internet import reactor

    return reactor


def test_resolver_refuses_an_address_the_rule_refuses():
    reactor = _installed_reactor()
    resolver = _ScriptedResolver(reactor, 0, 5, NetworkRule("127.0.0.1"))
    resolver.answers = {"shop.test": "127.0.0.1", "rebound.test": "127.0.0.2"}
    assert _resolve(resolver, "shop.test") == "127.0.0.1"
    failure = _resolve(resolver, "rebound.test")
    assert failure.check(RefusedAddress) and failure.check(DNSLookupError)
    assert resolver.refusal_for("REBOUND.test") == (
        "rebound.test resolved to 127.0.0.2, which is a loopback address; "
        "list it in ALLOW_PRIVATE_NETWORKS to crawl it"
    )
    assert resolver.refusal_for("shop.test") is None


def test_resolver_is_built_from_the_settings():
    reactor = _installed_reactor()
    crawler = get_crawler(settings_dict={"ALLOW_PRIVATE_NETWORKS": "10.0.0.0/8"})
    resolver = GuardedResolver.from_crawler(crawler, reactor)
    assert resolver.rule.refusal("http://10.1.1.1/") is None
    assert resolver.rule.refusal("http://127.0.0.1/") is not None
