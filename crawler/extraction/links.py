"""Link discovery: which URLs of a page are worth a request.

:func:`discover_links` returns absolute, fragment-free, canonicalised URLs
(w3lib ``canonicalize_url``: query parameters sorted, path case kept), in page
order, without duplicates, and only those that can lead to new products:

* same site only, as :func:`crawler.core.sites.site_key` says: the same host as the
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

A page whose markup links to few pages (an application shell) also gives the URLs
its embedded framework state holds (:func:`.embedded.state_urls`), cleaned alike.

Pagination (``page``, ``p``, ``pg``, ``paged``, ``/page/N/``) is kept, except a
first-page parameter (``page=1``, ``p=1``..., and ``=1`` of a parameter of the
shop's own name that the page's pager shows numbering pages: the bare listing, see
:mod:`crawler.policy.firstpage`), which is dropped. A
:class:`~crawler.extraction.profiles.SiteProfile` may restrict the parts of the
page links are taken from (``follow.restrict_css`` / ``restrict_xpath``) and
add ``follow.allow`` / ``follow.deny`` regexes, tested on the final URL.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Literal
from urllib.parse import parse_qsl, urlencode, urljoin, urlsplit, urlunsplit

from lxml import etree
from parsel import Selector
from scrapy.http import HtmlResponse, TextResponse
from scrapy.linkextractors import IGNORED_EXTENSIONS
from scrapy.utils.response import get_base_url
from w3lib.url import canonicalize_url

from crawler.core.sites import site_key
from crawler.policy.firstpage import (
    PAGE_PARAMS,
    is_first_page_param,
    learned_first_pages,
    without_first_page,
)
from crawler.policy.seeds import seed_fingerprint

from .embedded import state_urls
from .profiles import SiteProfile
from .tree import page_root

# fmt: off
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
# fmt: on
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
            if is_first_page_param(lowered, value):
                continue  # ?page=1 is the bare listing (crawler/policy/firstpage.py)
            kept.append((key, value))
        query = urlencode(kept)
    url = urlunsplit((parts.scheme, parts.netloc, path or "/", query, ""))
    try:
        # w3lib's canonicalize_url, cheaply for URLs of the common shape (no fragment here)
        return seed_fingerprint(url)
    except ValueError:
        return None


#: A path w3lib's canonical form keeps as it is: unreserved characters only, no
#: query, no fragment, no %-escape, no dot segment (checked apart).
_PLAIN_PATH = re.compile(r"/[A-Za-z0-9_~./-]*")
#: A relative reference of such characters ("p/1.html", "shoes-st-34.php").
_PLAIN_SEGMENT = re.compile(r"[A-Za-z0-9_~-][A-Za-z0-9_~./-]*")
#: A query of plain pairs, which w3lib only sorts.
_PLAIN_QUERY = re.compile(
    r"[A-Za-z0-9._~-]+=[A-Za-z0-9._~-]*(?:&[A-Za-z0-9._~-]+=[A-Za-z0-9._~-]*)*"
)
#: A host w3lib and site_key() read as written: lower-case ASCII labels, no port.
_PLAIN_HOST = re.compile(r"[a-z0-9-]+(?:\.[a-z0-9-]+)*")


def _plain_pair_key(key: str) -> bool:
    """A query key the full path would keep as it is (no search, action, permutation,
    tracking or first-page parameter: those take the full path)."""
    lowered = key.lower()
    return not (
        lowered in _SEARCH_PARAMS
        or lowered in _ACTION_PARAMS
        or lowered in _PERMUTATION_PARAMS
        or lowered.startswith(_PERMUTATION_PREFIXES)
        or lowered in _TRACKING_PARAMS
        or lowered.startswith("utm_")
        or lowered == "route"
        or lowered in PAGE_PARAMS
    )


class _PlainLinks:
    """The fast path of link cleaning for one page, for the hrefs most links of a shop
    are: a plain path (``/c/shoes/``, ``https://shop.example/p/1.html``, ``p/1.html``)
    on the page's own origin, with no query or a query of plain pairs that are kept as
    they are, is cleaned by the same checks as :func:`_clean_absolute` with no URL
    parsing; a link to a plain host of another site is dropped. Anything else takes the
    full path. ``tests/unit/test_links.py`` holds both paths to the same answers on
    every link of the saved pages."""

    def __init__(self, base_url: str, site: str) -> None:
        self.origin = self.directory = ""
        self.site = site
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            return
        if site_key(base_url) != site or parts.username or parts.password:
            return
        origin = f"{parts.scheme}://{parts.netloc}"
        # the origin as w3lib writes it (host lower-cased...): used only if it is unchanged
        if seed_fingerprint(origin + "/") != origin + "/":
            return
        self.origin = origin
        base_path = parts.path or "/"
        if _PLAIN_PATH.fullmatch(base_path) and "/." not in base_path:
            self.directory = base_path.rsplit("/", 1)[0] + "/"

    def clean(self, href: str) -> str | None | Literal[False]:
        """The canonical URL, None when not worth a request, False: take the full path."""
        origin = self.origin
        if not origin:
            return False
        if href.startswith(origin):
            rest = href[len(origin) :]
        elif href[:1] == "/":
            if href[1:2] == "/":  # protocol-relative: another site's link is dropped here
                return self._other_site(href[2:])
            rest = href
        elif href[:7] == "http://" or href[:8] == "https://":
            return self._other_site(href.split("//", 1)[1])
        elif self.directory and _PLAIN_SEGMENT.match(href):
            rest = self.directory + href
        else:
            return False
        path, _, query = rest.partition("?")
        if not path.startswith("/") or "/." in path or not _PLAIN_PATH.fullmatch(path):
            return False
        if query and not (
            _PLAIN_QUERY.fullmatch(query)
            and all(_plain_pair_key(pair.split("=", 1)[0]) for pair in query.split("&"))
        ):
            return False
        last = path.rsplit("/", 1)[-1]
        if "." in last and last.rsplit(".", 1)[-1].lower() in _IGNORED_EXTENSIONS:
            return None
        if _DENIED_PATH.search(path):
            return None
        return origin + path if not query else seed_fingerprint(origin + rest)

    def _other_site(self, rest: str) -> None | Literal[False]:
        """None for a link to a plain host of another site, else False (full path)."""
        host = rest.split("/", 1)[0].split("?", 1)[0].split("#", 1)[0]
        if not _PLAIN_HOST.fullmatch(host):
            return False
        key = host[4:] if host.startswith("www.") else host
        return None if key != self.site else False


_HREFS = etree.XPath("//a/@href | //area/@href | //link[@rel='next']/@href", smart_strings=False)


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
    heuristic that only orders the queue (products first): no URL is left out for
    its shape."""
    return _PRODUCT_URL.search(url) is not None


def _hrefs(response: TextResponse, profile: SiteProfile | None) -> list[str]:
    restricted = profile is not None and (profile.restrict_css or profile.restrict_xpath)
    if not restricted:  # lxml's own XPath over the page's one tree: strings, no Selectors
        return [str(h) for h in _HREFS(page_root(response))]
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
        own = canonicalize_url(without_first_page(response.url), keep_fragments=False)
    except ValueError:
        own = response.url
    try:
        site = site_key(response.url)
    except ValueError:
        return []
    seen = {own}
    done: set[str] = set()
    links: list[str] = []
    plain = _PlainLinks(base_url, site)
    hrefs = _hrefs(response, profile)
    for round_ in range(2):
        for href in hrefs:
            if href in done:
                continue
            done.add(href)
            fast = plain.clean(href)
            url = _clean(href, base_url, site) if fast is False else fast
            if url is None or url in seen:
                continue
            if profile is not None and not profile.allows(url):
                continue
            seen.add(url)
            links.append(url)
        if round_ or (profile is not None and (profile.restrict_css or profile.restrict_xpath)):
            break
        hrefs = state_urls(response, len(links))  # a shell's links are in its state
    return _first_pages_once(response, links, own)


# Links with a query of a whole number: the pager's candidates (their text is read).
_NUMBERED = etree.XPath("//a[contains(@href, '=')]", smart_strings=False)


def _first_pages_once(response: TextResponse, links: list[str], own: str) -> list[str]:
    """``links`` with the first page of the page's own pager under a parameter of the
    shop's own name (``?seite=1``) as its bare listing (:func:`learned_first_pages`),
    deduplicated again."""
    numbered = [u for u in links if "=" in u and any(ch.isdigit() for ch in u)]
    if not numbered or (len(numbered) == 1 and "=" not in own):
        return links  # no pager: one numbered link alone numbers nothing
    texts: dict[str, set[str]] = {}
    base_url = get_base_url(response)
    for a in _NUMBERED(page_root(response)):
        href = a.get("href") or ""
        if any(ch.isdigit() for ch in href):
            url = clean_link(href, base_url, response.url)
            if url is not None:
                texts.setdefault(url, set()).add((a.text or "").strip())
    twins = learned_first_pages(
        own, [(u, text) for u in numbered for text in texts.get(u) or {""}]
    )
    if not twins:
        return links
    out: list[str] = []
    seen = {own}
    for url in links:
        twin = twins.get(url)
        if twin is not None:
            try:
                url = seed_fingerprint(twin)
            except ValueError:
                pass
        if url not in seen:
            seen.add(url)
            out.append(url)
    return out
