"""The dupefilter's URL -> fingerprint cache gives Scrapy's own fingerprints, always."""

from __future__ import annotations

import redis
from scrapy import Request
from scrapy.utils.request import RequestFingerprinter, fingerprint

from crawler.scheduling import dupefilter as module
from crawler.scheduling.dupefilter import BinaryFingerprintDupeFilter


def _filter(redis_url: str, fingerprinter: object = None) -> BinaryFingerprintDupeFilter:
    return BinaryFingerprintDupeFilter(
        redis.Redis.from_url(redis_url), "test:dupefilter", fingerprinter=fingerprinter
    )


def test_cached_fingerprints_are_scrapys(redis_url: str) -> None:
    df = _filter(redis_url, RequestFingerprinter())
    requests = [
        Request("http://shop.test/c/books/?b=2&a=1"),
        Request("http://shop.test/c/books/?a=1&b=2"),  # same canonical URL
        Request("http://shop.test/c/books/#reviews"),
        Request("http://shop.test/c/books/"),
        Request("http://shop.test/c/books/", method="POST", body=b"x=1"),
        Request("http://shop.test/c/books/", method="HEAD"),
        Request("http://shop.test/c/books/#reviews", meta={"verbatim_url": True}),
    ]
    for _ in range(2):  # the second round is answered from the cache where it may be
        for request in requests:
            fresh = request.replace()  # a new object: Scrapy's per-request cache is cold
            assert df.request_fingerprint(fresh) == fingerprint(request), request
    assert set(df._by_url or {}) == {
        "http://shop.test/c/books/?b=2&a=1",
        "http://shop.test/c/books/?a=1&b=2",
        "http://shop.test/c/books/#reviews",
        "http://shop.test/c/books/",
    }


def test_the_cache_is_bounded(redis_url: str, monkeypatch) -> None:
    monkeypatch.setattr(module, "URL_CACHE_SIZE", 3)
    df = _filter(redis_url)
    for n in range(10):
        df.request_fingerprint(Request(f"http://shop.test/p/{n}.html"))
    assert list(df._by_url or {}) == [f"http://shop.test/p/{n}.html" for n in (7, 8, 9)]


class HeaderFingerprinter:
    """A project's own fingerprinter that reads a header: never cached by URL."""

    def fingerprint(self, request: Request) -> bytes:
        return fingerprint(request, include_headers=["X-Variant"])


def test_another_fingerprinter_is_never_bypassed(redis_url: str) -> None:
    df = _filter(redis_url, HeaderFingerprinter())
    one = df.request_fingerprint(Request("http://shop.test/p/1.html", headers={"X-Variant": "a"}))
    two = df.request_fingerprint(Request("http://shop.test/p/1.html", headers={"X-Variant": "b"}))
    assert one != two
    assert df._by_url is None


def test_known_fingerprints_in_use_are_evicted_last(redis_url: str) -> None:
    df = BinaryFingerprintDupeFilter(
        redis.Redis.from_url(redis_url), "test:dupefilter", cache_size=3
    )
    menu, a, b, c = b"menu", b"a", b"b", b"c"
    for fp in (menu, a, b):
        df.remember(fp)
    assert df.known(menu)  # the link every page repeats is used again
    df.remember(c)  # full: the least recently used goes
    assert df.known(menu) and df.known(b) and df.known(c)
    assert not df.known(a)
