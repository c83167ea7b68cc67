"""Hostile sitemaps are contained (crawler/policy/sitemaps.py): bounded memory, WARNING, stat,
nothing queued that the network rule or the seed's scope forbids."""

from __future__ import annotations

import gzip
import logging
import tracemalloc
from typing import Any

import pytest
from scrapy import Request, Spider
from scrapy.http import Response, TextResponse
from scrapy.utils.request import fingerprint
from scrapy.utils.test import get_crawler

from crawler.net.network import NetworkRule
from crawler.policy.scope import Scope
from crawler.policy.sitemaps import SitemapReader, robots_sitemap_urls

SITE = "http://shop.test"
NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'


class _Spider(Spider):
    name = "sitemaps-test"

    def parse(self, response: Any, **kwargs: Any) -> None: ...

    def parse_sitemap(self, response: Any) -> None: ...

    def errback(self, failure: Any) -> None: ...


def reader(**settings: Any) -> tuple[SitemapReader, Any]:
    crawler = get_crawler(_Spider, settings_dict=settings)
    spider = _Spider.from_crawler(crawler)
    # shop.test is public; every name resolves to a public address here
    rule = NetworkRule("", resolver=lambda host: ("93.184.216.34",))
    return SitemapReader(spider, crawler.settings, rule), crawler.stats


def urlset(urls: list[str], lastmod: str = "") -> bytes:
    mod = f"<lastmod>{lastmod}</lastmod>" if lastmod else ""
    body = "".join(f"<url><loc>{u}</loc>{mod}</url>" for u in urls)
    return f'<?xml version="1.0"?><urlset {NS}>{body}</urlset>'.encode()


def index(urls: list[str]) -> bytes:
    body = "".join(f"<sitemap><loc>{u}</loc></sitemap>" for u in urls)
    return f'<?xml version="1.0"?><sitemapindex {NS}>{body}</sitemapindex>'.encode()


def response(url: str, body: bytes, depth: int = 0, **meta: Any) -> Response:
    request = Request(url, meta={"sitemap": depth, **meta})
    return Response(url, body=body, request=request)


def test_urls_are_queued_with_their_lastmod_products_first() -> None:
    sitemaps, stats = reader()
    body = urlset([f"{SITE}/p/a-1.html", f"{SITE}/c/shoes/"], lastmod="2026-01-02")
    requests = list(sitemaps.parse(response(f"{SITE}/s.xml.gz", gzip.compress(body))))
    assert [(r.url, r.meta["lastmod"], r.priority) for r in requests] == [
        (f"{SITE}/p/a-1.html", "2026-01-02", 10),
        (f"{SITE}/c/shoes/", "2026-01-02", 0),
    ]
    assert stats.get_value("sitemaps/urls") == 2


def test_a_decompression_bomb_is_cut_at_the_bound(caplog: pytest.LogCaptureFixture) -> None:
    sitemaps, stats = reader(SITEMAP_MAX_SIZE=4 * 1024 * 1024)
    bomb = gzip.compress(b"<?xml version='1.0'?><urlset>" + b" " * (128 * 1024 * 1024), 6)
    assert len(bomb) < 256 * 1024  # 128 MiB in a quarter of a megabyte
    tracemalloc.start()
    try:
        with caplog.at_level(logging.WARNING):
            assert list(sitemaps.parse(response(f"{SITE}/bomb.xml.gz", bomb))) == []
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 * 1024 * 1024, peak
    assert stats.get_value("sitemaps/too_large") == 1
    assert "SITEMAP_MAX_SIZE" in caplog.text


def test_an_index_pointing_to_itself_is_read_once_and_indexes_are_bounded(
    caplog: pytest.LogCaptureFixture,
) -> None:
    sitemaps, stats = reader(SITEMAP_MAX_DEPTH=3)
    url = f"{SITE}/index.xml"
    [again] = list(sitemaps.parse(response(url, index([url]))))
    # the same fingerprint: the shared dupefilter drops it, the index is read once
    assert fingerprint(again) == fingerprint(Request(url))
    # an index that leads to new URLs forever stops at SITEMAP_MAX_DEPTH
    depth, followed = 0, []
    with caplog.at_level(logging.WARNING):
        while True:
            current = f"{SITE}/index.xml?n={depth}"
            children = list(
                sitemaps.parse(response(current, index([f"{SITE}/index.xml?n={depth + 1}"]), depth))
            )
            if not children:
                break
            followed.append(children[0].url)
            depth = children[0].meta["sitemap"]
    assert len(followed) == 3
    assert stats.get_value("sitemaps/too_deep") == 1
    assert "SITEMAP_MAX_DEPTH=3" in caplog.text


def test_other_sites_and_private_addresses_are_never_queued(
    caplog: pytest.LogCaptureFixture,
) -> None:
    sitemaps, stats = reader()
    hostile = [
        "http://127.0.0.2/p/x-1.html",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::1]/p/y-2.html",
        "http://other.example/p/z-3.html",
        "file:///etc/passwd",
        f"{SITE}/p/ok-4.html",
    ]
    with caplog.at_level(logging.WARNING):
        requests = list(sitemaps.parse(response(f"{SITE}/sitemap.xml", urlset(hostile))))
        children = list(sitemaps.parse(response(f"{SITE}/i.xml", index(["http://10.0.0.1/s.xml"]))))
    assert [r.url for r in requests] == [f"{SITE}/p/ok-4.html"]
    assert children == []
    assert stats.get_value("sitemaps/offsite") == 6
    assert "URLs not queued: 5 offsite" in caplog.text


def test_a_private_name_on_the_site_is_refused_by_the_network_rule() -> None:
    crawler = get_crawler(_Spider)
    spider = _Spider.from_crawler(crawler)
    rule = NetworkRule("", resolver=lambda host: ("10.1.2.3",))  # the name means a private host
    sitemaps = SitemapReader(spider, crawler.settings, rule)
    requests = list(sitemaps.parse(response(f"{SITE}/s.xml", urlset([f"{SITE}/p/a-1.html"]))))
    assert requests == []
    assert crawler.stats.get_value("sitemaps/refused") == 1
    # a Sitemap: line the rule refuses is not read (the downloader checks the guess too)
    [guess] = sitemaps.from_robots([f"{SITE}/s.xml"], f"{SITE}/", Scope())
    assert guess.url == f"{SITE}/sitemap.xml"
    assert crawler.stats.get_value("sitemaps/refused") == 2


def test_the_seed_scope_filters_sitemap_urls() -> None:
    sitemaps, stats = reader()
    scope = Scope.from_seed_meta(SITE + "/", {"deny": "/p/bad", "allow": ["/p/"]})
    urls = [f"{SITE}/p/good-1.html", f"{SITE}/p/bad-2.html", f"{SITE}/c/x/"]
    requests = list(sitemaps.parse(response(f"{SITE}/s.xml", urlset(urls), **scope.to_meta())))
    assert [r.url for r in requests] == [f"{SITE}/p/good-1.html"]
    assert Scope.of(requests[0].meta) == scope  # the scope travels on
    assert stats.get_value("sitemaps/out_of_scope") == 2


def test_a_sitemap_strategy_fetches_product_urls_of_any_shape() -> None:
    """The URL's shape orders the queue only: a shop whose product URLs look like no
    product pattern (``/nike-air-max-90``) still has them fetched by a sitemap seed."""
    sitemaps, _ = reader()
    scope = Scope.from_seed_meta(SITE + "/", {"strategy": "sitemap"})
    urls = [f"{SITE}/nike-air-max-90", f"{SITE}/p/boot-12.html"]
    requests = list(sitemaps.parse(response(f"{SITE}/s.xml", urlset(urls), **scope.to_meta())))
    assert sorted((r.url, r.priority) for r in requests) == [
        (f"{SITE}/nike-air-max-90", 0),
        (f"{SITE}/p/boot-12.html", 10),
    ]
    assert all(Scope.of(r.meta).strategy == "sitemap" for r in requests)  # links not followed


def test_a_hundred_thousand_urls_in_one_file_stop_at_the_bound(
    caplog: pytest.LogCaptureFixture,
) -> None:
    sitemaps, stats = reader(SITEMAP_MAX_URLS=5000)  # (default 50 000, the protocol's limit)
    body = urlset([f"{SITE}/p/item-{n}.html" for n in range(100_000)])
    tracemalloc.start()
    try:
        with caplog.at_level(logging.WARNING):
            count = sum(1 for _ in sitemaps.parse(response(f"{SITE}/big.xml", body)))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert count == 5000
    assert stats.get_value("sitemaps/too_many_urls") == 1
    assert "more than 5000 URLs" in caplog.text
    assert peak < 3 * len(body), (peak, len(body))  # parsed as a stream, not as a tree


def test_robots_sitemaps_and_the_guess() -> None:
    from scrapy.robotstxt import ProtegoRobotParser

    parser = ProtegoRobotParser(b"User-agent: *\nSitemap: /a.xml\nSitemap: http://x.test/b\n", None)
    assert robots_sitemap_urls(parser, f"{SITE}/robots.txt") == [
        f"{SITE}/a.xml",
        "http://x.test/b",
    ]
    sitemaps, stats = reader()
    # another site's sitemap is not read; none left: /sitemap.xml is guessed
    [guess] = sitemaps.from_robots(["http://x.test/b"], f"{SITE}/p/1", Scope())
    assert guess.url == f"{SITE}/sitemap.xml"
    assert stats.get_value("sitemaps/offsite") == 1
    # strategies that read no sitemaps
    for strategy in ("navigation", "pagination", "direct"):
        scope = Scope.from_seed_meta(SITE, {"strategy": strategy})
        assert sitemaps.from_robots([f"{SITE}/a.xml"], SITE, scope) == []


def test_not_a_sitemap_and_missing_ones_are_counted() -> None:
    sitemaps, stats = reader()
    html = TextResponse(
        f"{SITE}/sitemap", body=b"<html>hi</html>", request=Request(f"{SITE}/sitemap")
    )
    assert list(sitemaps.parse(html)) == []
    missing = Response(f"{SITE}/sitemap.xml", status=404, request=Request(f"{SITE}/sitemap.xml"))
    assert list(sitemaps.parse(missing)) == []
    assert stats.get_value("sitemaps/not_sitemap") == 1
    assert stats.get_value("sitemaps/missing") == 1
