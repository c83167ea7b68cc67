"""Routing of the demo shop: request target -> prepared response (no I/O, no Twisted).

Every page a crawler should fetch is rendered once, at start-up, into bytes with
its header block; serving it is one dictionary look-up. Variants that a good
crawler never fetches (sort and view variants of listings) are rendered on first
use and cached; the small pages (cart, login, search, 404) are rendered per request.

Routes:

=================================  =========================================================
``/``                              home (query ignored)
``/robots.txt``                    disallows ``/cart``, ``/account`` and ``/search``; names
                                   the sitemap index (:mod:`demoshop.sitemaps`)
``/sitemap_index.xml``             sitemap index; ``/sitemaps/products-<n>.xml.gz`` children
``/c/<top>/``                      top-level category (``?page=`` other than 1 is a 404)
``/c/<top>/<sub>/``                leaf listing; ``?page=N`` (2..last), ``?sort=``, ``?view=``;
                                   ``?page=1`` is page 1 too (200, as the pager links it);
                                   with ``sort``/``view`` it redirects (301)
``/p/<slug>-<id>.html``            product page (query ignored)
``/cart``, ``/cart/add``           tiny pages, 200
``/account/login``                 tiny page, 200
``/search?q=``                      search results (:mod:`demoshop.traps`), 200
``/x/picks/<n>/``                  staff picks: a listing of n = 1, 2, 3 products
``/x/shelf/<markup>/<n>/``         "Products in <category>": n marked-up cards (query ignored)
``/img/...``                       a 1x1 PNG
``/market/...``                    with ``--market N`` only: the market section, linked from
                                   no other page (:mod:`demoshop.market`)
``/app/...``, ``/state/...``       the section built in the browser, when the shop has one
                                   (``browser_products``; :mod:`demoshop.browserapp`)
anything else                      404
=================================  =========================================================

Methods: GET and HEAD; anything else is answered 405.
"""

from __future__ import annotations

import base64
from http import HTTPStatus
from urllib.parse import parse_qs

from demoshop import traps
from demoshop.browserapp import BrowserSection
from demoshop.catalog import Catalog, Category
from demoshop.market import MARKET_PREFIX, Market
from demoshop.pages import ROBOTS_TXT, SORTS, VIEWS, PageRenderer

HTML = "text/html; charset=utf-8"
PNG_1X1 = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9"
    "awAAAABJRU5ErkJggg=="
)


class Response:
    """A ready response: ``head`` holds the status line and the fixed headers, as bytes.

    The server adds ``Date`` and ``Connection`` and the blank line, then ``body``.
    """

    __slots__ = ("status", "body", "head")

    def __init__(
        self, status: int, body: bytes, content_type: str = HTML, location: str | None = None
    ) -> None:
        self.status = status
        self.body = body
        reason = HTTPStatus(status).phrase
        lines = [
            f"HTTP/1.1 {status} {reason}",
            f"Content-Type: {content_type}",
            f"Content-Length: {len(body)}",
            "Server: demoshop",
        ]
        if location:
            lines.append(f"Location: {location}")
        if status == 405:
            lines.append("Allow: GET, HEAD")
        self.head = ("\r\n".join(lines) + "\r\n").encode("latin-1")


class ShopSite:
    """All the pages of one catalogue, and the router from request targets to them."""

    def __init__(
        self,
        catalog: Catalog,
        crawl_delay: float = 0,
        market: Market | None = None,
        browser_products: int = 0,
    ) -> None:
        self.catalog = catalog
        self.market = market
        self.crawl_delay = crawl_delay
        self.browser = BrowserSection(catalog, browser_products) if browser_products else None
        self.sitemap_count = 0
        self.pages = PageRenderer(catalog)
        self._static: dict[str, Response] = {}
        self._variants: dict[tuple[str, int, str, str], Response] = {}
        self._categories: dict[str, Category] = {c.path: c for c in catalog.all_categories()}
        self._render_all()
        self.not_found = self._html(404, self.pages.simple("Page not found", "No such page."))
        self.not_allowed = self._html(
            405, self.pages.simple("Method not allowed", "Use GET or HEAD.")
        )
        self.image = Response(200, PNG_1X1, "image/png")

    @staticmethod
    def _html(status: int, text: str, location: str | None = None) -> Response:
        return Response(status, text.encode("utf-8"), HTML, location)

    def _render_all(self) -> None:
        catalog, pages, static = self.catalog, self.pages, self._static
        home = pages.home()
        if self.browser is not None:  # the section built in the browser, linked from home
            home = home.replace("<main>\n", "<main>\n" + self.browser.home_link(), 1)
            for path, (kind, body) in self.browser.pages().items():
                static[path] = Response(200, body, kind)
        static["/"] = self._html(200, home)
        robots = ROBOTS_TXT + (f"Crawl-delay: {self.crawl_delay:g}\n" if self.crawl_delay else "")
        static["/robots.txt"] = Response(200, robots.encode(), "text/plain; charset=utf-8")
        for category in catalog.all_categories():
            if not category.is_leaf:
                static[category.path] = self._html(200, pages.parent_category(category))
                continue
            for page in range(1, category.page_count(catalog.page_size) + 1):
                static[category.page_path(page)] = self._html(200, pages.listing(category, page))
        for product in catalog.products:
            static[product.path] = self._html(200, pages.product(product))
        for size in traps.PICK_SIZES:
            if len(catalog.products) >= size:
                static[traps.pick_path(size)] = self._html(200, pages.picks(size))
        shelves = traps.shelf_paths(catalog)
        for markup, size in traps.SHELVES:
            if traps.shelf_path(markup, size) in shelves:
                static[traps.shelf_path(markup, size)] = self._html(200, pages.shelf(markup, size))
        static["/cart"] = self._html(200, pages.simple("Your cart", "Your cart is empty."))
        static["/account/login"] = self._html(200, pages.login())

    def publish_sitemaps(self, base_url: str, changed_at: str) -> None:
        """Serve the sitemaps (their URLs are absolute: known once the shop listens)."""
        from demoshop import sitemaps

        for path, body in sitemaps.render(self.catalog, base_url, changed_at).items():
            kind = "application/gzip" if path.endswith(".gz") else "application/xml"
            self._static[path] = Response(200, body, kind)
        self.sitemap_count = len(sitemaps.sitemap_paths(self.catalog))
        robots = self._static["/robots.txt"].body.decode()
        robots += f"Sitemap: {base_url.rstrip('/')}{sitemaps.INDEX_PATH}\n"
        self._static["/robots.txt"] = Response(200, robots.encode(), "text/plain; charset=utf-8")

    @property
    def page_count(self) -> int:
        """Pages a correct crawler fetches (the catalogue's ``crawlable_paths``)."""
        return self.catalog.page_count

    def resolve(self, method: str, target: str) -> Response:
        """The response to ``method target`` (``target`` as on the request line)."""
        if method not in ("GET", "HEAD"):
            return self.not_allowed
        found = self._static.get(target)
        if found is not None:
            return found
        if target.startswith(("http://", "https://")):  # absolute-form request target
            rest = target.split("://", 1)[1]
            target = "/" + rest.split("/", 1)[1] if "/" in rest else "/"
            found = self._static.get(target)
            if found is not None:
                return found
        path, _, query = target.partition("?")
        path = path.split("#", 1)[0]
        if self.market is not None and path.startswith(MARKET_PREFIX):
            return self._market(path)
        params = parse_qs(query, keep_blank_values=True) if query else {}

        category = self._categories.get(path)
        if category is not None:
            return self._category(category, params)
        if path.startswith("/p/"):
            page = self._static.get(path)
            return page if page is not None and path.endswith(".html") else self.not_found
        if path.startswith("/img/") and len(path) > 5:
            return self.image
        if path.startswith("/x/") and path in self._static:
            return self._static[path]  # the trap pages ignore their query (?page=1)
        if path in ("/", "/cart", "/account/login"):
            return self._static[path]
        if path == "/cart/add":
            what = params.get("id", ["?"])[0]
            return self._html(200, self.pages.simple("Added to cart", f"Added item {what}."))
        if path == "/search":
            words = params.get("q", [""])[0]
            return self._html(200, self.pages.search(words))
        return self.not_found

    def _market(self, path: str) -> Response:
        """A page of the market section, rendered now: its prices move with its clock."""
        from demoshop.market_pages import resolve

        assert self.market is not None
        found = resolve(self.market, path)
        if found is None:
            return self.not_found
        status, body, content_type = found
        return Response(status, body.encode("utf-8"), content_type)

    def _category(self, category: Category, params: dict[str, list[str]]) -> Response:
        pages = category.page_count(self.catalog.page_size)
        raw_page = params.get("page", [None])[0]
        page = 1
        if raw_page is not None:
            if not raw_page.isdigit() or not 1 <= int(raw_page) <= pages:
                return self.not_found
            page = int(raw_page)
        sort = params.get("sort", [""])[0]
        sort = sort if sort in SORTS else ""
        view = params.get("view", [""])[0]
        view = view if view in VIEWS else ""
        if not category.is_leaf:
            if raw_page is not None and page == 1:
                return self._html(301, "", location=category.path)
            return self._static[category.path]
        if raw_page is not None and page == 1 and not sort and not view:
            return self._static[category.path]  # ?page=1 is the first page, as linked
        if raw_page is not None and page == 1:
            query = "&".join(f"{k}={v}" for k, v in (("sort", sort), ("view", view)) if v)
            location = category.path + (f"?{query}" if query else "")
            return self._html(301, "", location=location)
        if not sort and not view:
            return self._static[category.page_path(page)]
        key = (category.path, page, sort, view)
        found = self._variants.get(key)
        if found is None:
            found = self._html(200, self.pages.listing(category, page, sort, view))
            self._variants[key] = found
        return found
