"""Sitemaps: where a shop lists what it sells, read with Scrapy's own parser, bounded.

For every site the crawl reaches, the worker that fetches its robots.txt (Scrapy's
``RobotsTxtMiddleware``, signal ``robots_parsed``) reads its ``Sitemap:`` lines
(protego's ``sitemaps``), or guesses ``/sitemap.xml`` when there are none, and
queues them through the shared dupefilter like any link: whichever worker pops a
sitemap reads it, once for the whole crawl. A sitemap index queues its children;
a sitemap queues the URLs it lists (with their ``lastmod`` in ``meta``), product
URLs ahead of the others (``PRIORITY_PRODUCT``). The others (category pages, maybe)
are remembered until read, for ``recrawl --listings`` (:mod:`crawler.core.listings`).

:class:`SitemapReader` does the reading, with Scrapy's ``Sitemap`` parser
(``scrapy.utils.sitemap``), ``sitemap_urls_from_robots`` and its bounded
``gunzip`` (as ``SitemapSpider._get_sitemap_body``). Bounds, each with a WARNING
and a stat when hit:

* ``SITEMAP_MAX_SIZE``: bytes of a sitemap after decompression (a gzip bomb is
  cut there: ``sitemaps/too_large``);
* ``SITEMAP_MAX_URLS``: entries read from one file (``sitemaps/too_many_urls``);
* ``SITEMAP_MAX_DEPTH``: levels of indexes below the first sitemap
  (``sitemaps/too_deep``); an index listing itself is a seen fingerprint.

Every URL a sitemap lists must be on the sitemap's own site (``sitemaps/offsite``),
pass the network rule (``sitemaps/refused``) and the seed's allow/deny patterns
(``scope/filtered``) before it is queued. A sitemap is a page in the figures
(``pages/parsed``) and never a product.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any
from urllib.parse import urljoin, urlsplit

from scrapy import Request
from scrapy.http import Response, XmlResponse
from scrapy.utils._compression import _DecompressionMaxSizeExceeded
from scrapy.utils.gz import gunzip, gzip_magic_number
from scrapy.utils.sitemap import Sitemap, sitemap_urls_from_robots

from crawler.core import defaults
from crawler.core.listings import SITEMAPPED_META_KEY, ListingMemory
from crawler.core.sites import site_key
from crawler.extraction.links import clean_url, looks_like_product
from crawler.net.network import NetworkRule
from crawler.policy.scope import SCOPE_META_KEY, Scope

logger = logging.getLogger(__name__)

#: meta key of a sitemap request: its depth below the first sitemap (0)
SITEMAP_META_KEY = "sitemap"
MAX_LASTMOD_LENGTH = 40
MISSING_STATUSES = [404, 410, 403]


class SitemapTooLarge(ValueError):
    """A sitemap's body is larger than the bound once decompressed."""


def sitemap_body(response: Response, max_size: int) -> bytes | None:
    """The XML of a sitemap response (gunzipped, at most ``max_size`` bytes), or None
    when it is not a sitemap. Raises :class:`SitemapTooLarge` past the bound."""
    body = response.body
    if gzip_magic_number(response):
        try:
            body = gunzip(body, max_size=max_size)
        except _DecompressionMaxSizeExceeded:
            raise SitemapTooLarge(f"larger than {max_size} bytes once decompressed") from None
        except (OSError, EOFError):
            return None
    elif len(body) > max_size:
        raise SitemapTooLarge(f"larger than {max_size} bytes")
    head = body[:512].lstrip()
    if isinstance(response, XmlResponse) or head.startswith(b"<?xml") or b"<urlset" in head:
        return body
    return body if b"<sitemapindex" in head else None


def robots_sitemap_urls(robotparser: Any, robots_url: str) -> list[str]:
    """The ``Sitemap:`` URLs of a parsed robots.txt (protego's ``sitemaps``), absolute."""
    protego = getattr(robotparser, "rp", None)
    found = getattr(protego, "sitemaps", None)
    if found is None:
        return []
    return [urljoin(robots_url, str(url).strip()) for url in found if str(url).strip()]


def guessed_sitemap(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}/sitemap.xml"


class SitemapReader:
    """Makes sitemap requests and reads sitemap responses for a spider of the crawl."""

    def __init__(self, spider: Any, settings: Any, rule: NetworkRule) -> None:
        self.spider = spider
        self.rule = rule
        self.enabled = settings.getbool("SITEMAPS_ENABLED", defaults.SITEMAPS_ENABLED)
        self.max_size = settings.getint("SITEMAP_MAX_SIZE", defaults.SITEMAP_MAX_SIZE)
        self.max_urls = settings.getint("SITEMAP_MAX_URLS", defaults.SITEMAP_MAX_URLS)
        self.max_depth = settings.getint("SITEMAP_MAX_DEPTH", defaults.SITEMAP_MAX_DEPTH)
        self.sitemap_priority = settings.getint("PRIORITY_SITEMAP", defaults.PRIORITY_SITEMAP)
        self.product_priority = settings.getint("PRIORITY_PRODUCT", defaults.PRIORITY_PRODUCT)

    @property
    def stats(self) -> Any:
        return self.spider.crawler.stats  # set once the crawl starts

    # -- requests ------------------------------------------------------------------------
    def sitemap_request(self, url: str, scope: Scope, depth: int = 0) -> Request:
        return Request(
            url,
            callback=self.spider.parse_sitemap,
            errback=self.spider.errback,
            priority=self.sitemap_priority,
            meta={
                "site": site_key(url),
                SITEMAP_META_KEY: depth,
                "handle_httpstatus_list": MISSING_STATUSES,
                **scope.to_meta(),
            },
        )

    def from_robots(self, sitemap_urls: Iterable[str], origin: str, scope: Scope) -> list[Request]:
        """Requests for the sitemaps a robots.txt names (``/sitemap.xml`` when none)."""
        if not self.enabled or not scope.reads_sitemaps:
            return []
        site = site_key(origin)
        urls = [u for u in sitemap_urls if self._sitemap_allowed(u, site)]
        if not urls:
            urls = [guessed_sitemap(origin)]
        return [self.sitemap_request(url, scope) for url in dict.fromkeys(urls)]

    def from_robots_response(self, response: Response, scope: Scope) -> list[Request]:
        """The sitemaps of a robots.txt fetched as a request (a ``sitemap`` seed)."""
        urls: list[str] = []
        if response.status == 200:
            urls = list(sitemap_urls_from_robots(response.body, base_url=response.url))
        return self.from_robots(urls, response.url, scope)

    def _sitemap_allowed(self, url: str, site: str) -> bool:
        try:
            same = urlsplit(url).scheme in ("http", "https") and site_key(url) == site
        except ValueError:
            same = False
        if not same:
            self.stats.inc_value("sitemaps/offsite")
            logger.warning("Sitemap %s is not on %s: not read", url, site)
            return False
        reason = self.rule.refusal(url)
        if reason is not None:
            self.stats.inc_value("sitemaps/refused")
            logger.warning("Sitemap %s refused by the network rule: %s", url, reason)
            return False
        return True

    # -- reading -------------------------------------------------------------------------
    def parse(self, response: Response) -> Iterator[Request]:
        """The requests a sitemap response leads to (children, or the URLs it lists)."""
        self.stats.inc_value("sitemaps/fetched")
        if response.status in MISSING_STATUSES:
            self.stats.inc_value("sitemaps/missing")
            logger.debug("No sitemap at %s (HTTP %s)", response.url, response.status)
            return
        try:
            body = sitemap_body(response, self.max_size)
        except SitemapTooLarge as exc:
            self.stats.inc_value("sitemaps/too_large")
            logger.warning("Sitemap %s not read: %s (SITEMAP_MAX_SIZE)", response.url, exc)
            return
        if body is None:
            self.stats.inc_value("sitemaps/not_sitemap")
            logger.warning("%s is not a sitemap: ignored", response.url)
            return
        try:
            sitemap = Sitemap(body)
        except Exception as exc:  # lxml refuses it outright (empty, not XML)
            self.stats.inc_value("sitemaps/not_sitemap")
            logger.warning("%s is not a readable sitemap (%s): ignored", response.url, exc)
            return
        depth = int(response.meta.get(SITEMAP_META_KEY) or 0)
        scope = Scope.of(response.meta)
        site = site_key(response.url)
        if sitemap.type == "sitemapindex":
            if depth >= self.max_depth:
                self.stats.inc_value("sitemaps/too_deep")
                logger.warning(
                    "Sitemap index %s is %d levels deep: its sitemaps are not read "
                    "(SITEMAP_MAX_DEPTH=%d)",
                    response.url,
                    depth,
                    self.max_depth,
                )
                return
            for entry in self._entries(sitemap, response.url):
                url = entry["loc"]
                if self._sitemap_allowed(url, site):
                    yield self.sitemap_request(url, scope, depth + 1)
            return
        if sitemap.type != "urlset":
            self.stats.inc_value("sitemaps/not_sitemap")
            logger.warning("%s is not a sitemap (root <%s>): ignored", response.url, sitemap.type)
            return
        self.stats.inc_value("sitemaps/read")
        dropped: Counter[str] = Counter()
        requests = []
        for entry in self._entries(sitemap, response.url):
            request = self._page_request(entry, site, scope, dropped)
            if request is not None:
                self.stats.inc_value("sitemaps/urls")
                requests.append(request)
        # remembered before any is queued (a page read at once is dropped after)
        self._remember_pages(requests, response.url)
        yield from requests
        if dropped:
            for reason, count in dropped.items():
                self.stats.inc_value(f"sitemaps/{reason}", count)
            logger.warning(
                "Sitemap %s: URLs not queued: %s",
                response.url,
                ", ".join(f"{count} {reason}" for reason, count in sorted(dropped.items())),
            )

    def _remember_pages(self, requests: list[Request], sitemap_url: str) -> None:
        """The pages listed that are not item links, for ``recrawl --listings``: the
        category pages a shop's sitemaps name (:mod:`crawler.core.listings`)."""
        urls = [r.url for r in requests if SITEMAPPED_META_KEY in r.meta]
        server, keys = getattr(self.spider, "server", None), getattr(self.spider, "keys", None)
        if urls and server is not None and keys is not None:  # a crawl's spider (Redis)
            ListingMemory(server, keys).sitemapped(urls, sitemap_url)

    def _entries(self, sitemap: Sitemap, url: str) -> Iterator[dict[str, Any]]:
        for count, entry in enumerate(sitemap, start=1):
            if count > self.max_urls:
                self.stats.inc_value("sitemaps/too_many_urls")
                logger.warning(
                    "Sitemap %s lists more than %d URLs: the rest is not read (SITEMAP_MAX_URLS)",
                    url,
                    self.max_urls,
                )
                return
            loc = entry.get("loc")
            if loc:
                yield entry

    def _page_request(
        self, entry: dict[str, Any], site: str, scope: Scope, dropped: Counter[str]
    ) -> Request | None:
        url = clean_url(entry["loc"], site)
        if url is None:
            dropped["offsite" if _other_site(entry["loc"], site) else "skipped"] += 1
            return None
        if self.rule.refusal(url) is not None:
            dropped["refused"] += 1
            return None
        if not scope.allows(url):
            dropped["out_of_scope"] += 1
            return None
        meta: dict[str, Any] = {"site": site, **scope.to_meta()}
        lastmod = str(entry.get("lastmod") or "")[:MAX_LASTMOD_LENGTH]
        if lastmod:
            meta["lastmod"] = lastmod
        # The URL's shape only orders the queue (products first): a shop's product URLs
        # need not look like one, so a `sitemap` strategy fetches every URL in scope
        # (its pages' links are not followed; `deny` leaves out a sitemap's listings).
        product = getattr(self.spider, "is_item_link", looks_like_product)(url)
        if not product:  # maybe a category page: remembered, and read once
            meta[SITEMAPPED_META_KEY] = url
        return Request(
            url,
            callback=self.spider.parse,
            errback=self.spider.errback,
            priority=self.product_priority if product else 0,
            meta=meta,
        )


def _other_site(url: str, site: str) -> bool:
    try:
        return site_key(url) != site
    except ValueError:
        return True


__all__ = [
    "SCOPE_META_KEY",
    "SITEMAP_META_KEY",
    "SitemapReader",
    "SitemapTooLarge",
    "robots_sitemap_urls",
    "sitemap_body",
]
