"""The page's own address: its canonical URL, and whether two URLs name one page."""

from __future__ import annotations

from urllib.parse import urlsplit

from scrapy.http import TextResponse
from w3lib.url import canonicalize_url


def same_page(a: str | None, b: str) -> bool:
    """Both URLs are one page once canonicalised (query parameters sorted...)."""
    if not a:
        return False
    try:
        return canonicalize_url(a) == canonicalize_url(b)
    except ValueError:
        return False


def same_path(a: str | None, b: str) -> bool:
    """Both URLs have one path (a trailing slash aside), whatever their queries."""
    return bool(a) and urlsplit(str(a)).path.rstrip("/") == urlsplit(b).path.rstrip("/")


def canonical_url(response: TextResponse) -> str | None:
    """The page's ``<link rel=canonical>``, absolute and without fragment; None when
    it is missing, malformed or on another site."""
    href = response.xpath("//link[@rel='canonical']/@href").get()
    if not href:
        return None
    try:
        absolute = response.urljoin(href.strip())
        if not _same_site(absolute, response.url):
            return None
    except ValueError:
        return None
    return absolute.split("#", 1)[0]


def _host(url: str) -> str:
    host = (urlsplit(url).hostname or "").lower()
    return host[4:] if host.startswith("www.") else host


def _same_site(a: str, b: str) -> bool:
    pa, pb = urlsplit(a), urlsplit(b)
    if pa.scheme not in ("http", "https"):
        return False
    return _host(a) == _host(b) and pa.port == pb.port
