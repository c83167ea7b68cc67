"""Proxy list parsing, redaction, the network rule, rotation and rest (no network)."""

from __future__ import annotations

import pytest
from scrapy import Request
from scrapy.exceptions import NotConfigured
from scrapy.utils.test import get_crawler

from crawler.middlewares.proxies import (
    ProxyListError,
    RotatingProxyMiddleware,
    read_proxy_list,
    redact_proxy,
)
from crawler.scheduling import serializer


def test_list_from_commas_or_a_file(tmp_path):
    assert read_proxy_list(" http://a:1 , https://u:p@b:2 ") == ["http://a:1", "https://u:p@b:2"]
    path = tmp_path / "proxies.txt"
    path.write_text("# comment\nhttp://a:1  # first\n\nhttp://b:2\n")
    assert read_proxy_list(str(path)) == ["http://a:1", "http://b:2"]
    with pytest.raises(ProxyListError, match="cannot read"):
        read_proxy_list(str(tmp_path / "missing.txt"))
    with pytest.raises(ProxyListError, match="not an http"):
        read_proxy_list("socks5://u:secret@h:1")


def test_credentials_are_redacted():
    assert redact_proxy("http://user:secret@10.0.0.1:8080") == "http://***@10.0.0.1:8080"
    assert redact_proxy("http://10.0.0.1:8080") == "http://10.0.0.1:8080"
    with pytest.raises(ProxyListError) as info:
        read_proxy_list("ftp://user:secret@h:1")
    assert "secret" not in str(info.value)


def crawler(**settings):  # type: ignore[no-untyped-def]
    return get_crawler(settings_dict=settings)


def test_steps_aside_without_a_list():
    with pytest.raises(NotConfigured):
        RotatingProxyMiddleware.from_crawler(crawler(PROXY_LIST=""))


def test_a_private_proxy_needs_the_allow_list():
    with pytest.raises(ProxyListError, match="ALLOW_PRIVATE_NETWORKS"):
        RotatingProxyMiddleware.from_crawler(crawler(PROXY_LIST="http://u:secret@127.0.0.1:3128"))
    allowed = RotatingProxyMiddleware.from_crawler(
        crawler(PROXY_LIST="http://127.0.0.1:3128", ALLOW_PRIVATE_NETWORKS="127.0.0.1")
    )
    assert [p.name for p in allowed.proxies] == ["http://127.0.0.1:3128"]


def test_round_robin_and_rest(monkeypatch):
    mw = RotatingProxyMiddleware.from_crawler(
        crawler(
            PROXY_LIST="http://u:p@127.0.0.1:1,http://127.0.0.1:2",
            ALLOW_PRIVATE_NETWORKS="127.0.0.1",
            PROXY_FAILURES_BEFORE_REST=2,
            PROXY_REST_SECONDS=100,
        )
    )
    requests = [Request(f"http://shop.example/{i}") for i in range(4)]
    for request in requests:
        mw.process_request(request)
    assert [r.meta["proxy"] for r in requests] == [
        "http://u:p@127.0.0.1:1",
        "http://127.0.0.1:2",
        "http://u:p@127.0.0.1:1",
        "http://127.0.0.1:2",
    ]
    second = mw.proxies[1]
    mw.process_exception(requests[1], ConnectionRefusedError())
    assert second.resting_until == 0
    mw.process_exception(requests[3], ConnectionRefusedError())
    assert second.resting_until > 0
    later = [Request(f"http://shop.example/x{i}") for i in range(3)]
    for request in later:
        mw.process_request(request)
    assert {r.meta["rotating_proxy"] for r in later} == {"http://***@127.0.0.1:1"}
    # a proxy set by someone else is kept
    own = Request("http://shop.example/own", meta={"proxy": "http://10.9.9.9:1"})
    mw.process_request(own)
    assert own.meta["proxy"] == "http://10.9.9.9:1"


def test_the_queue_never_holds_proxy_credentials():
    request = Request(
        "http://shop.example/",
        headers={"Proxy-Authorization": "Basic c2VjcmV0", "Accept": "text/html"},
        meta={"proxy": "http://127.0.0.1:1", "rotating_proxy": "http://***@127.0.0.1:1"},
    )
    payload = serializer.dumps(request.to_dict())
    assert b"c2VjcmV0" not in payload and b"Accept" in payload
    again = serializer.requeueable(request)
    assert "proxy" not in again.meta and "rotating_proxy" not in again.meta
