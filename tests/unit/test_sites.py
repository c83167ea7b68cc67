"""``site_key``: the one rule for "the same site" (ports, www., case, userinfo, IDN)."""

from __future__ import annotations

import pytest
from scrapy import Request

from crawler.core.keys import CrawlKeys
from crawler.core.sites import site_key


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://shop.example/p/1", "shop.example"),
        ("http://shop.example:80/p/1", "shop.example"),  # http's default port
        ("https://shop.example:443/p/1", "shop.example"),  # https's default port
        ("http://127.0.0.1:8765/p/1", "127.0.0.1:8765"),
        ("https://shop.example:8443/", "shop.example:8443"),
        ("http://shop.example:443/", "shop.example:443"),  # not http's default
        ("https://shop.example:80/", "shop.example:80"),  # not https's default
        ("http://shop.example:080/", "shop.example"),  # a number, written oddly
        ("http://shop.example:99999/", "shop.example:99999"),  # out of range: as written
        ("http://shop.example:abc/", "shop.example:abc"),  # not a number: as written
        ("http://[::1]:8080/p", "[::1]:8080"),
        ("http://[::1]/p", "[::1]"),
    ],
)
def test_ports(url: str, expected: str) -> None:
    assert site_key(url) == expected


def test_scheme_is_not_part_of_the_site() -> None:
    assert site_key("http://shop.example/a") == site_key("https://shop.example/b")
    assert site_key("http://shop.example:8080/") != site_key("http://shop.example:8081/")


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://www.shop.example/p", "shop.example"),
        ("https://www.shop.example:8443/p", "shop.example:8443"),
        ("https://www.www.shop.example/", "www.shop.example"),  # one www. only
        ("https://cdn.shop.example/p", "cdn.shop.example"),  # other sub-domains stay
        ("https://wwwshop.example/", "wwwshop.example"),  # not a www. label
        ("https://shop.www.example/", "shop.www.example"),
    ],
)
def test_www(url: str, expected: str) -> None:
    assert site_key(url) == expected


def test_case_and_trailing_dot() -> None:
    assert site_key("HTTP://WWW.Shop.EXAMPLE/Some/Path") == "shop.example"
    assert site_key("https://Shop.Example:8443/") == "shop.example:8443"
    assert site_key("https://shop.example./p") == "shop.example"


@pytest.mark.parametrize(
    "url",
    [
        "http://user@shop.example/p",
        "http://user:secret@www.shop.example/p",
        "http://user:secret@shop.example:80/p",
        "http://a@b@shop.example/p",  # the last @ ends the userinfo
    ],
)
def test_userinfo_is_not_part_of_the_site(url: str) -> None:
    assert site_key(url) == "shop.example"


def test_userinfo_with_a_port_and_a_colon_in_the_password() -> None:
    assert site_key("http://user:pa:ss@shop.example:8080/") == "shop.example:8080"


def test_idn_hosts_are_punycode_as_scrapy_requests_them() -> None:
    assert site_key("http://bücher.example/p") == "xn--bcher-kva.example"
    assert site_key("http://www.BÜCHER.example:8080/p") == "xn--bcher-kva.example:8080"
    assert site_key("http://xn--bcher-kva.example/p") == "xn--bcher-kva.example"
    # the seed as typed and the request (and response) Scrapy makes of it: one site
    for url in ("http://bücher.example/p", "http://www.Straße.example/", "http://münchen.de./"):
        assert site_key(url) == site_key(Request(url).url)


def test_idn_without_an_ascii_form_is_kept() -> None:
    label = "ü" * 70  # longer than a DNS label may be: no punycode form
    assert site_key(f"http://{label}.example/") == f"{label}.example"


def test_urls_without_a_host() -> None:
    assert site_key("mailto:someone@shop.example") == ""
    assert site_key("/relative/path") == ""


def test_unparseable_url_raises_value_error() -> None:
    with pytest.raises(ValueError):
        site_key("http://[broken/")


def test_politeness_key_of_a_site() -> None:
    keys = CrawlKeys()
    assert keys.polite(site_key("https://www.shop.example/p/1")) == "ecommerce:polite:shop.example"
    assert keys.polite(site_key("http://127.0.0.1:8765/")) == "ecommerce:polite:127.0.0.1:8765"
