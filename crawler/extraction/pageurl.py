"""The page's own address: its canonical URL, and whether two URLs name one page."""

from __future__ import annotations

from urllib.parse import urlsplit

from scrapy.http import TextResponse
from w3lib.url import canonicalize_url

from crawler.core.sites import site_key

from .first_tags import tags_in_order


def same_page(a: object, b: object) -> bool:
    """Both URLs are one page once canonicalised (query parameters sorted...).

    Either may come straight from structured data, where a URL is as often a list,
    a node, a number or null as a string: anything but a non-empty string names
    no page (w3lib raises ``TypeError`` on it)."""
    if not (isinstance(a, str) and a and isinstance(b, str) and b):
        return False
    try:
        return canonicalize_url(a) == canonicalize_url(b)
    except ValueError:
        return False


def same_path(a: object, b: str) -> bool:
    """Both URLs have one path (a trailing slash aside), whatever their queries; a
    value that is not a string (see :func:`same_page`) has none."""
    if not (isinstance(a, str) and a):
        return False
    try:
        return urlsplit(a).path.rstrip("/") == urlsplit(b).path.rstrip("/")
    except ValueError:
        return False


def canonical_url(response: TextResponse) -> str | None:
    """The page's ``<link rel=canonical>``, absolute and without fragment; None when
    it is missing, malformed or on another site."""
    href = _canonical_href(response)
    if not href:
        return None
    try:
        absolute = response.urljoin(href.strip())
        if urlsplit(absolute).scheme not in ("http", "https"):
            return None
        if site_key(absolute) != site_key(response.url):
            return None
    except ValueError:
        return None
    return absolute.split("#", 1)[0]


def _canonical_href(response: TextResponse) -> str | None:
    """The ``href`` of the first ``<link rel="canonical">`` that has one (XPath
    ``//link[@rel='canonical']/@href``, by lxml's C-level search for the tag, not past
    the head when it is there: :mod:`.first_tags`)."""
    for link in tags_in_order(response.selector.root, "link"):
        if link.get("rel") == "canonical":
            href = link.get("href")
            if href is not None:
                return str(href)
    return None
