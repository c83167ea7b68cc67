"""Workers crawl the public web only, unless ALLOW_PRIVATE_NETWORKS says otherwise."""

import pytest
from scrapy import Request
from scrapy.exceptions import IgnoreRequest
from scrapy.utils.test import get_crawler

from crawler.middlewares.network import PrivateNetworkMiddleware, parse_allowlist


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
