"""Generated shops: other shops' templates over the demo catalogue, for the extractor.

The default demo shop (:mod:`demoshop.site`) is one shop with one template. A
crawler meets shops built otherwise; a generated shop is the same catalogue
(:class:`demoshop.catalog.Catalog`: the same products, names, codes and prices)
served through another template, chosen with ``python -m demoshop --generated
KIND`` (``ShopProcess(generated=KIND)``):

* ``plain-lists`` (:mod:`demoshop.plainlists`): no class, no structured data;
  category pages are ordered lists of 1 to 60 cards, with pagers linking page 1
  with its parameter set to 1 under several parameter names;
* ``templated`` (:mod:`demoshop.templated`): a template with a delivery notice and
  a "bestsellers" strip with a sold-out badge on every page, the buy box before the
  heading, JSON-LD on two product pages of three;
* ``defect-stock``, ``defect-price``, ``defect-name``, ``defect-rejected``,
  ``defect-hidden-price`` (:mod:`demoshop.defects`): the plain-lists shop with one
  defect of its product pages that the extractor reads wrong for the whole site,
  each raising one data check.

A generated shop answers like a :class:`~demoshop.catalog.Catalog` about itself
(``crawlable_paths()``, ``product_paths()``, ``listing_paths()``,
``expected_products(base_url)``, ``page_count``) and like a
:class:`~demoshop.site.ShopSite` to the server (``resolve(method, target)``). It
serves no sitemaps; robots.txt allows everything.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from html import escape
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from demoshop.catalog import Catalog, Product
from demoshop.site import Response

HTML = "text/html; charset=utf-8"
ROBOTS = b"User-agent: *\nAllow: /\n"
#: The kinds of generated shop (``--generated``): three sound ones and the defect shops
#: of :mod:`demoshop.defects` (one defect each, for the data checks).
KINDS = (
    "plain-lists", "templated", "card-layouts", "defect-stock", "defect-price", "defect-name",
    "defect-rejected", "defect-hidden-price",
)


def e(text: object) -> str:
    return escape(str(text), quote=True)


def pounds(amount: Decimal) -> str:
    """``Decimal("53.63")`` -> ``"£53.63"``."""
    return f"£{amount:,.2f}"


def stars(rating: tuple[float, int] | None) -> str:
    """A rating as five stars ("★★★★☆"); none: five empty stars."""
    full = round(rating[0]) if rating else 0
    return "★" * full + "☆" * (5 - full)


@dataclass(frozen=True)
class Shelf:
    """A listing of a generated shop: its path, its name, its products, how many a
    page shows and the query parameter that numbers its pages."""

    path: str
    name: str
    products: tuple[Product, ...]
    page_size: int
    param: str

    @property
    def pages(self) -> int:
        return max(1, -(-len(self.products) // self.page_size))

    def page(self, number: int) -> tuple[Product, ...]:
        start = (number - 1) * self.page_size
        return self.products[start : start + self.page_size]

    def page_path(self, number: int) -> str:
        return self.path if number == 1 else f"{self.path}?{self.param}={number}"


class GeneratedShop:
    """The pages of one generated shop, rendered at start-up (see the module doc).
    Subclasses give the shelves (:meth:`shelves`), the pages (:meth:`home`,
    :meth:`listing`, :meth:`product_page`) and what a product page shows
    (:meth:`expected_product`)."""

    sitemap_count = 0

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.products = list(catalog.products)
        self.shelf_list = self.shelves()
        self._shelves = {s.path: s for s in self.shelf_list}
        self._by_path = {p.path: p for p in self.products}
        self._static: dict[str, Response] = {
            "/": self._html(200, self.home()),
            "/robots.txt": Response(200, ROBOTS, "text/plain; charset=utf-8"),
        }
        for shelf in self.shelf_list:
            for number in range(1, shelf.pages + 1):
                self._static[shelf.page_path(number)] = self._html(
                    200, self.listing(shelf, number)
                )
        for product in self.products:
            self._static[product.path] = self._html(200, self.product_page(product))
        self.not_found = self._html(404, "<html><body><h1>Page not found</h1></body></html>")

    # -- what subclasses give ---------------------------------------------------------
    def shelves(self) -> list[Shelf]:
        raise NotImplementedError

    def home(self) -> str:
        raise NotImplementedError

    def listing(self, shelf: Shelf, number: int) -> str:
        raise NotImplementedError

    def product_page(self, product: Product) -> str:
        raise NotImplementedError

    def expected_product(self, product: Product) -> dict[str, Any]:
        """What a correct extractor reads on the product's page: ``name``, ``price``
        (Decimal), ``currency``, ``availability``, ``sku``."""
        return {
            "name": product.name,
            "price": product.price,
            "currency": "GBP",
            "availability": "InStock" if product.availability == "InStock" else "OutOfStock",
            "sku": product.sku,
        }

    # -- the server's side ------------------------------------------------------------
    @staticmethod
    def _html(status: int, text: str) -> Response:
        return Response(status, text.encode("utf-8"), HTML)

    def publish_sitemaps(self, base_url: str, changed_at: str) -> None:
        """A generated shop serves no sitemaps."""

    def resolve(self, method: str, target: str) -> Response:
        if method not in ("GET", "HEAD"):
            return self.not_found
        found = self._static.get(target)
        if found is not None:
            return found
        parts = urlsplit(target)
        shelf = self._shelves.get(parts.path)
        if shelf is not None:
            # the pager's own parameter numbers the page; page 1 is served under
            # ``?<param>=1`` too, as the pager links it
            number = dict(parse_qsl(parts.query)).get(shelf.param, "1")
            if number.isdigit() and 1 <= int(number) <= shelf.pages:
                return self._static[shelf.page_path(int(number))]
            return self.not_found
        found = self._static.get(parts.path)
        if found is not None and parts.path in self._by_path:
            return found
        return self.not_found

    # -- the catalogue's side ---------------------------------------------------------
    def product_paths(self) -> set[str]:
        return set(self._by_path)

    def listing_paths(self) -> set[str]:
        """The home page and every page of every listing (page 1 bare)."""
        paths = {"/"}
        for shelf in self.shelf_list:
            paths.update(shelf.page_path(n) for n in range(1, shelf.pages + 1))
        return paths

    def crawlable_paths(self) -> set[str]:
        return self.listing_paths() | self.product_paths()

    @property
    def page_count(self) -> int:
        return len(self.crawlable_paths())

    def expected_products(self, base_url: str | None = None) -> dict[str, dict[str, Any]]:
        base = (base_url or "").rstrip("/")
        return {base + p.path: self.expected_product(p) for p in self.products}


def build(kind: str, catalog: Catalog) -> GeneratedShop:
    """The generated shop of that kind over ``catalog``; ValueError for another kind."""
    if kind == "plain-lists":
        from demoshop.plainlists import PlainListShop

        return PlainListShop(catalog)
    if kind == "templated":
        from demoshop.templated import TemplatedShop

        return TemplatedShop(catalog)
    if kind == "card-layouts":
        from demoshop.cardlayouts import CardLayoutShop

        return CardLayoutShop(catalog)
    if kind.startswith("defect-") and kind in KINDS:
        from demoshop.defects import SHOPS

        return SHOPS[kind](catalog)
    raise ValueError(f"unknown generated shop {kind!r} (one of {', '.join(KINDS)})")
