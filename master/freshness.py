"""Freshness from the sitemaps: which stored products changed since they were last seen.

``python -m master recrawl --changed`` reads every stored product's URL and
``last_seen`` (:mod:`master.stores`), re-reads the sitemaps of their sites
(robots.txt ``Sitemap:`` lines, else ``/sitemap.xml``; indexes followed, gzip'd
children read), and gives the products whose sitemap ``lastmod`` is newer than
their ``last_seen``. A product without a ``lastmod``, or absent from the sitemaps,
is not taken: ``--older-than`` covers those.

The sitemaps are read as the workers read them (:mod:`crawler.policy.sitemaps`: Scrapy's
``Sitemap`` parser and bounded ``gunzip``, the same ``SITEMAP_MAX_*`` bounds)
and every URL fetched, redirects included, must pass the network rule
(``ALLOW_PRIVATE_NETWORKS``). A bound hit or a sitemap that cannot be read is
reported on stderr and the rest goes on.
"""

from __future__ import annotations

import datetime as dt
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from crawler.core import defaults
from crawler.core.sites import site_key
from crawler.net.network import NetworkRule

TIMEOUT = 30
MAX_DOWNLOAD = 16 * 1024 * 1024  # bytes of one response, as the workers' DOWNLOAD_MAXSIZE
USER_AGENT = "Mozilla/5.0 (compatible; ecommerce-crawler/0.1)"


def parse_lastmod(text: str) -> dt.datetime | None:
    """A W3C datetime (``2026-01-02``, ``2026-01-02T10:00:00+00:00``, ``...Z``) in UTC."""
    text = (text or "").strip()
    try:
        if len(text) == 10:
            return dt.datetime.fromisoformat(text).replace(tzinfo=dt.UTC)
        value = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.UTC)
    return value.astimezone(dt.UTC)


class _Refused(urllib.error.URLError):
    pass


@dataclass
class SitemapFetcher:
    """Reads a site's sitemaps from the master, bounded, under the network rule."""

    rule: NetworkRule
    warn: Callable[[str], None]
    max_size: int = defaults.SITEMAP_MAX_SIZE
    max_urls: int = defaults.SITEMAP_MAX_URLS
    max_depth: int = defaults.SITEMAP_MAX_DEPTH
    sitemaps_read: int = 0
    _seen: set[str] = field(default_factory=set)

    def fetch(self, url: str) -> tuple[int, bytes]:
        """(status, body) of ``url``; redirects are followed only where the rule allows."""
        rule = self.rule

        class Redirects(urllib.request.HTTPRedirectHandler):
            def redirect_request(
                self, req: Any, fp: Any, code: Any, msg: Any, hdrs: Any, newurl: str
            ) -> Any:
                reason = rule.refusal(newurl)
                if reason is not None:
                    raise _Refused(f"redirect to {newurl} refused: {reason}")
                return super().redirect_request(req, fp, code, msg, hdrs, newurl)

        reason = rule.refusal(url)
        if reason is not None:
            raise _Refused(f"refused by the network rule: {reason}")
        opener = urllib.request.build_opener(Redirects)
        request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
        try:
            with opener.open(request, timeout=TIMEOUT) as answer:
                return answer.status, answer.read(MAX_DOWNLOAD + 1)[: MAX_DOWNLOAD + 1]
        except urllib.error.HTTPError as exc:
            return exc.code, b""

    def sitemap_urls(self, origin: str) -> list[str]:
        from scrapy.utils.sitemap import sitemap_urls_from_robots

        robots = origin + "/robots.txt"
        try:
            status, body = self.fetch(robots)
        except (OSError, urllib.error.URLError) as exc:
            self.warn(f"{robots}: {getattr(exc, 'reason', exc)}")
            return [origin + "/sitemap.xml"]
        found = list(sitemap_urls_from_robots(body, base_url=robots)) if status == 200 else []
        return [u for u in found if site_key(u) == site_key(origin)] or [origin + "/sitemap.xml"]

    def entries(self, url: str, depth: int = 0) -> Iterator[tuple[str, str]]:
        """(loc, lastmod) of every URL the sitemap at ``url`` lists, indexes followed."""
        from scrapy.http import Response
        from scrapy.utils.sitemap import Sitemap

        from crawler.policy.sitemaps import SitemapTooLarge, sitemap_body

        if url in self._seen:
            return
        self._seen.add(url)
        try:
            status, data = self.fetch(url)
        except (OSError, urllib.error.URLError) as exc:
            self.warn(f"{url}: {getattr(exc, 'reason', exc)}")
            return
        if status != 200:
            return
        try:
            body = sitemap_body(Response(url, body=data), self.max_size)
        except SitemapTooLarge as exc:
            self.warn(f"sitemap {url} not read: {exc} (SITEMAP_MAX_SIZE)")
            return
        if body is None:
            self.warn(f"{url} is not a sitemap")
            return
        try:
            sitemap = Sitemap(body)
        except Exception as exc:
            self.warn(f"{url} is not a readable sitemap ({exc})")
            return
        self.sitemaps_read += 1
        for count, entry in enumerate(sitemap, start=1):
            if count > self.max_urls:
                self.warn(f"sitemap {url} lists more than {self.max_urls} URLs (SITEMAP_MAX_URLS)")
                return
            loc = str(entry.get("loc") or "").strip()
            if not loc:
                continue
            if sitemap.type == "sitemapindex":
                if depth >= self.max_depth:
                    self.warn(
                        f"sitemap index {url} is too deep (SITEMAP_MAX_DEPTH={self.max_depth})"
                    )
                    return
                if site_key(loc) == site_key(url):
                    yield from self.entries(loc, depth + 1)
            else:
                yield loc, str(entry.get("lastmod") or "")


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def changed_products(
    stored: Iterable[tuple[str, dt.datetime]], fetcher: SitemapFetcher
) -> Iterator[str]:
    """URLs of the stored products whose sitemap lastmod is newer than their last_seen."""
    from crawler.extraction.links import clean_url

    by_origin: dict[str, dict[str, dt.datetime]] = {}
    for url, last_seen in stored:
        by_origin.setdefault(_origin(url), {})[url] = last_seen
    for origin, products in sorted(by_origin.items()):
        site = site_key(origin)
        for sitemap in fetcher.sitemap_urls(origin):
            for loc, lastmod in fetcher.entries(sitemap):
                url = clean_url(loc, site) or loc
                if url not in products:
                    continue
                last_seen = products.pop(url)
                when = parse_lastmod(lastmod)
                if when is not None and when > last_seen:
                    yield url
