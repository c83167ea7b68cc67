"""Link discovery: which URLs of a page are worth a request.

:func:`discover_links` returns absolute, fragment-free, canonicalised URLs
(w3lib ``canonicalize_url``: query parameters sorted, path case kept), in page
order, without duplicates, and only those that can lead to new products:

* same site only, as :func:`crawler.sites.site_key` says: the same host as the
  page (``www.shop.example`` and ``shop.example`` count as one site) and the
  same port (http on 80 and https on 443 count as the same: both are the
  default port);
* http/https only (no ``mailto:``, ``tel:``, ``javascript:``...);
* no files (images, stylesheets, scripts, PDFs, archives, media, office
  documents, feeds);
* no cart, checkout, basket, wishlist, compare, login, logout, register or
  account pages, and no add-to-cart/wishlist/compare actions;
* no search result pages (``/search``, ``/catalogsearch``, ``?q=``, ``?s=``...);
* no sort/filter/view permutation of a listing (``sort``, ``order``,
  ``orderby``, ``dir``, ``view``, ``mode``, ``limit``, ``per_page``,
  ``product_list_*``, ``filter_*``, price ranges...): such links are dropped
  whole, never followed with the parameter stripped;
* tracking parameters (``utm_*``, ``gclid``, ``fbclid``...) and Shopify's
  ``variant`` are removed, so a product is reached under one URL.

Pagination (``page``, ``p``, ``pg``, ``paged``, ``/page/N/``) is kept. A
:class:`~crawler.extraction.profiles.SiteProfile` may restrict the parts of the
page links are taken from (``follow.restrict_css`` / ``restrict_xpath``) and
add ``follow.allow`` / ``follow.deny`` regexes, tested on the final URL.
"""

from __future__ import annotations

import re
from functools import lru_cache
from urllib.parse import parse_qsl, urlencode, urljoin, urlsplit, urlunsplit

from parsel import Selector
from scrapy.http import HtmlResponse, TextResponse
from scrapy.linkextractors import IGNORED_EXTENSIONS
from scrapy.utils.response import get_base_url
from w3lib.url import canonicalize_url

from ..sites import site_key
from .profiles import SiteProfile

_IGNORED_EXTENSIONS = frozenset(IGNORED_EXTENSIONS) | {
    "json", "xml", "txt", "csv", "avif", "woff", "woff2", "ttf", "eot", "map", "atom", "gz",
}
_DENIED_PATH = re.compile(
    r"(?:^|/)(?:cart|checkout|basket|wishlist|wish-list|compare|product_compare|"
    r"login|log-in|logout|log-out|signin|sign-in|signout|sign-out|signup|sign-up|register|"
    r"account|my-account|myaccount|customer|search|catalogsearch|wp-admin|wp-login\.php|"
    r"feed|cdn-cgi|sendfriend|password|lost-password)(?:/|$|\.)",
    re.I,
)
_SEARCH_PARAMS = frozenset({"q", "s", "query", "search", "keyword", "keywords", "searchterm"})
_ACTION_PARAMS = frozenset(
    {"add-to-cart", "add_to_cart", "add_to_wishlist", "add-to-wishlist", "add_to_compare",
     "remove_item", "action", "return_url", "redirect_to", "logout"}
)
_PERMUTATION_PARAMS = frozenset(
    {
        "sort", "sort_by", "sortby", "sort_order", "sortorder", "order", "orderby", "order_by",
        "dir", "direction", "view", "view_mode", "viewmode", "mode", "display", "layout",
        "grid", "list", "limit", "per_page", "perpage", "pagesize", "page_size", "show",
        "product_list_order", "product_list_mode", "product_list_limit", "product_list_dir",
        "min_price", "max_price", "price_min", "price_max", "minprice", "maxprice", "price",
        "price_range", "pricerange", "rating_filter", "in_stock", "instock", "availability",
        "filter", "filters", "facet", "facets", "refine", "fq", "f",
    }
)
_PERMUTATION_PREFIXES = ("filter_", "filter.", "query_type_", "facet_", "pa_", "refine_")
_TRACKING_PARAMS = frozenset(
    {"gclid", "gbraid", "wbraid", "fbclid", "msclkid", "dclid", "yclid", "mc_cid", "mc_eid",
     "_ga", "_gl", "srsltid", "_pos", "_sid", "_ss", "_psq", "_fid", "variant", "sessionid",
     "phpsessid", "sid"}
)
#: Distinct absolute links whose canonical form is kept (about 0.5 KB each).
LINK_CACHE_SIZE = 4096
_SKIPPED_SCHEMES = re.compile(r"^\s*(?:mailto|tel|javascript|data|sms|callto|whatsapp|ftp):", re.I)


def clean_link(href: str, base_url: str, page_url: str | None = None) -> str | None:
    """The canonical URL to follow for one ``href``, or None when it is not worth a request."""
    try:
        site = site_key(page_url or base_url)
    except ValueError:
        return None
    return _clean(href, base_url, site)


def _clean(href: str, base_url: str, site: str) -> str | None:
    href = (href or "").strip()
    if not href or href.startswith("#") or _SKIPPED_SCHEMES.match(href):
        return None
    try:
        joined = urljoin(base_url, href)
    except ValueError:  # malformed host or port
        return None
    return _clean_absolute(joined, site)


@lru_cache(maxsize=LINK_CACHE_SIZE)
def _clean_absolute(joined: str, site: str) -> str | None:
    """The followable canonical form of an absolute URL (a pure function, cached:
    a shop's menus, breadcrumbs and footers repeat the same links on every page)."""
    try:
        parts = urlsplit(joined)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            return None
        if site_key(joined) != site:
            return None
    except ValueError:  # malformed host or port
        return None
    path = parts.path
    last = path.rsplit("/", 1)[-1]
    if "." in last and last.rsplit(".", 1)[-1].lower() in _IGNORED_EXTENSIONS:
        return None
    if _DENIED_PATH.search(path):
        return None
    query = parts.query
    if query:
        kept = []
        for key, value in parse_qsl(query, keep_blank_values=True):
            lowered = key.lower()
            if lowered in _SEARCH_PARAMS or lowered in _ACTION_PARAMS:
                return None
            if lowered in _PERMUTATION_PARAMS or lowered.startswith(_PERMUTATION_PREFIXES):
                return None
            if lowered == "route" and _DENIED_PATH.search("/" + value):
                return None  # OpenCart-style ?route=checkout/cart, ?route=product/search
            if lowered in _TRACKING_PARAMS or lowered.startswith("utm_"):
                continue
            kept.append((key, value))
        query = urlencode(kept)
    url = urlunsplit((parts.scheme, parts.netloc, path or "/", query, ""))
    try:
        return canonicalize_url(url, keep_fragments=False)
    except ValueError:
        return None


def clean_url(url: str, site: str) -> str | None:
    """The followable canonical form of an absolute URL on ``site`` (a sitemap's
    ``<loc>``), by the same rules as a page's links; None when not worth a request."""
    return _clean_absolute((url or "").strip(), site)


_PRODUCT_URL = re.compile(
    r"/(?:p|product|products|produkt|produit|producto|item|items|itm|dp|gp/product|shop/p)/"
    r"[^/]+|[-_/]p?\d{3,}\.html?$|/p-\d+|[?&](?:product_id|productid|pid)=\w",
    re.I,
)


def looks_like_product(url: str) -> bool:
    """Does the URL have the shape of a product page's? (``/p/…``, ``/product/…``,
    ``/products/…``, ``/dp/…``, ``/item/…``, ``…-1234.html``, ``?product_id=``): a
    heuristic that only orders the queue (products first) and picks the URLs a
    ``sitemap`` strategy fetches."""
    return _PRODUCT_URL.search(url) is not None


def _hrefs(response: TextResponse, profile: SiteProfile | None) -> list[str]:
    restricted = profile is not None and (profile.restrict_css or profile.restrict_xpath)
    if not restricted:
        return response.xpath(
            "//a[@href]/@href | //area[@href]/@href | //link[@rel='next']/@href"
        ).getall()
    assert profile is not None
    scopes: list[Selector] = []
    for css in profile.restrict_css:
        scopes.extend(response.css(css))
    for xpath in profile.restrict_xpath:
        scopes.extend(response.xpath(xpath))
    hrefs: list[str] = []
    for scope in scopes:
        if getattr(scope.root, "tag", None) in ("a", "area"):
            hrefs.extend(scope.xpath("@href").getall())
        hrefs.extend(scope.xpath(".//a[@href]/@href | .//area[@href]/@href").getall())
    return hrefs


def is_html_response(response: TextResponse) -> bool:
    """HTML responses only (XML, JSON and binary responses have no links to follow here)."""
    if isinstance(response, HtmlResponse):
        return True
    return isinstance(response, TextResponse) and response.selector.type == "html"


def discover_links(response: TextResponse, profile: SiteProfile | None = None) -> list[str]:
    """Absolute URLs to follow from a page, deduplicated, in page order."""
    if not is_html_response(response):
        return []
    base_url = get_base_url(response)
    try:
        own = canonicalize_url(response.url, keep_fragments=False)
    except ValueError:
        own = response.url
    try:
        site = site_key(response.url)
    except ValueError:
        return []
    seen = {own}
    done: set[str] = set()
    links: list[str] = []
    for href in _hrefs(response, profile):
        if href in done:
            continue
        done.add(href)
        url = _clean(href, base_url, site)
        if url is None or url in seen:
            continue
        if profile is not None and not profile.allows(url):
            continue
        seen.add(url)
        links.append(url)
    return links
