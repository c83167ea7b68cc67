"""``BrowserRenderingMiddleware`` and ``BrowserSites`` on a real Redis: which requests are
rendered, and an application shell issued again through the browser with its lease."""

from __future__ import annotations

from typing import Any

import pytest
from scrapy import Request
from scrapy.http import HtmlResponse
from scrapy.utils.test import get_crawler

from crawler.browser.config import BrowserConfig
from crawler.browser.routing import BrowserRouting
from crawler.browser.sites import BrowserSites, read_browser_sites
from crawler.core.keys import CrawlKeys
from crawler.leasing.meta import LEASE_META_KEY
from crawler.middlewares.rendering import BrowserRenderingMiddleware
from crawler.policy.scope import Scope

KEYS = CrawlKeys()
SHELL = (
    b'<!doctype html><html><head><title>Shop</title></head><body><div id="root"></div>'
    b'<script src="/static/main.js"></script></body></html>'
)
PAGE = (
    b"<!doctype html><html><head><title>Boots</title></head><body><h1>Boots</h1>"
    b'<a href="/p/boot-1">Boot</a><script src="/static/main.js"></script></body></html>'
)


def middleware(redis_client: Any, mode: str = "auto", worker: str = "w1") -> Any:
    redis_client.delete(KEYS.browser_sites)
    crawler = get_crawler()
    crawler.stats.open_spider()
    config = BrowserConfig(mode=mode, concurrency=1, executable="/usr/bin/true", sites_refresh=0)
    sites = BrowserSites(redis_client, KEYS.browser_sites, worker, refresh=0)
    return BrowserRenderingMiddleware(crawler, BrowserRouting(config, sites))


def request(url: str = "http://shop.test/", render: str = "auto", **meta: Any) -> Request:
    scope = Scope.from_seed_meta(url, {"render": render}).to_meta()
    return Request(url, meta={"site": "shop.test", **scope, **meta})


def marked(mw: Any, req: Request) -> str | None:
    mw.process_request(req)
    return req.meta.get("render_reason") if req.meta.get("playwright") else None


def test_which_requests_are_rendered(redis_client) -> None:  # type: ignore[no-untyped-def]
    mw = middleware(redis_client)
    assert marked(mw, request()) is None
    assert marked(mw, request(render="true")) == "seed"
    assert marked(mw, request(render="false")) is None
    # another worker found a section of the site to need a browser: this one renders it
    # from the start, and only it
    other = BrowserSites(redis_client, KEYS.browser_sites, "w2", 0)
    other.remember("http://shop.test/app/c/boots")
    assert marked(mw, request("http://shop.test/app/p/1")) == "site"
    assert marked(mw, request("http://shop.test/p/1")) is None
    # then a shell at the site's root: the whole site
    other.remember("http://shop.test/")
    assert marked(mw, request("http://shop.test/p/1")) == "site"
    assert marked(mw, request("http://other.test/", site="other.test")) is None
    assert marked(mw, request("http://shop.test/p/2", render="false")) is None
    always = middleware(redis_client, mode="always")
    assert marked(always, request("http://other.test/", site="other.test")) == "always"
    assert marked(always, request(render="false")) is None


def test_an_application_shell_is_issued_again_with_its_lease(redis_client) -> None:  # type: ignore[no-untyped-def]
    mw = middleware(redis_client)
    req = request(**{LEASE_META_KEY: "lease-7", "depth": 2})
    mw.process_request(req)
    again = mw.process_response(req, HtmlResponse(req.url, body=SHELL, request=req))
    assert isinstance(again, Request)
    assert again.meta["playwright"] is True and again.meta["render_reason"] == "shell"
    assert again.meta[LEASE_META_KEY] == "lease-7" and again.meta["depth"] == 2
    assert again.dont_filter and again.url == req.url
    sites = read_browser_sites(redis_client, KEYS.browser_sites)
    assert list(sites) == ["shop.test/"] and sites["shop.test/"]["worker"] == "w1"
    assert mw.stats.get_value("browser/shells") == 1
    assert mw.stats.get_value("browser/sites_found") == 1
    # the first record stays: a second worker's finding does not replace it
    assert BrowserSites(redis_client, KEYS.browser_sites, "w2", 0).remember(req.url) is None


@pytest.mark.parametrize(
    ("body", "status", "meta", "mode"),
    [
        (PAGE, 200, {}, "auto"),  # links: no browser needed
        (SHELL, 404, {}, "auto"),
        (SHELL, 200, {"playwright": True}, "auto"),  # rendered already
        (SHELL, 200, {"render": "false"}, "auto"),
        (SHELL, 200, {}, "always"),  # marked before it was fetched
    ],
)
def test_pages_kept_as_they_came(redis_client, body, status, meta, mode) -> None:  # type: ignore[no-untyped-def]
    mw = middleware(redis_client, mode=mode)
    render = meta.pop("render", "auto")
    req = request(render=render, **meta)
    response = HtmlResponse(req.url, body=body, status=status, request=req)
    assert mw.process_response(req, response) is response
    assert not redis_client.exists(KEYS.browser_sites)
