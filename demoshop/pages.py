"""HTML of the demo shop's pages, rendered from a ``Catalog`` (pure: strings in, strings out).

Every page shares a header and a footer full of links a good crawler does not
follow: the cart and "add to cart" links, the login page, search links, an
external site, a ``mailto:`` and a ``javascript:`` link. Leaf listings add sort
and view variants of themselves (``?sort=...``, ``?view=grid``); product pages
add a ``#reviews`` fragment link.

Product pages come in three markups, by ``product.markup`` (``id % 3``):

* ``jsonld``: schema.org ``Product`` and a separate ``BreadcrumbList`` as JSON-LD;
* ``microdata``: the same data as ``itemscope``/``itemprop`` attributes only;
* ``plain``: no structured data; the ``<h1>``, a price beside it, the stock
  wording, a product-code table (SKU, EAN, Brand) and ``<nav class="breadcrumb">``;
  plain pages in other languages have their own layouts (:mod:`demoshop.localized`).

All show the same visible name, price, stock text and breadcrumbs, a related-products
list and a "customers also viewed" carousel of other products with prices and buy
buttons (:mod:`demoshop.traps`), which must not be taken for the page's product.
"""

from __future__ import annotations

import json
from html import escape
from typing import Any

from demoshop import localized, traps
from demoshop.catalog import Catalog, Category, Product, format_price

SITE_NAME = "Demo Shop"
SORTS = {"price_asc": "Price: low to high", "price_desc": "Price: high to low", "name": "Name"}
VIEWS = ("grid", "list")
STOCK_TEXT = {"InStock": "In stock", "OutOfStock": "Out of stock", "PreOrder": "Pre-order"}
SCHEMA = "https://schema.org/"

ROBOTS_TXT = "User-agent: *\nDisallow: /cart\nDisallow: /account\nDisallow: /search\n"


def _e(text: object) -> str:
    return escape(str(text), quote=True)


def _json_ld(data: dict[str, Any]) -> str:
    text = json.dumps(data, ensure_ascii=False, indent=1).replace("</", "<\\/")
    return f'<script type="application/ld+json">\n{text}\n</script>'


class PageRenderer:
    """Renders the pages of one catalogue; the shared header and footer are built once."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        nav = "".join(
            f'<li><a href="{_e(top.path)}">{_e(top.name)}</a></li>' for top in catalog.categories
        )
        self._header = (
            '<header class="site-header">\n'
            f'<a class="logo" href="/">{SITE_NAME}</a>\n'
            '<form class="search" action="/search" method="get">'
            '<input type="search" name="q" placeholder="Search products">'
            "<button>Search</button></form>\n"
            '<nav class="account"><a href="/account/login">Sign in</a> '
            '<a href="/cart" rel="nofollow">Cart (0)</a></nav>\n'
            f'<nav class="main-nav"><ul>{nav}</ul></nav>\n'
            '<p class="promo"><a href="/search?q=deals">Today\'s deals</a> · '
            '<a href="/search?q=new+arrivals">New arrivals</a></p>\n'
            "</header>\n"
        )
        self._footer = (
            '<footer class="site-footer">\n'
            '<a href="https://example.com/">Our partner site</a> · '
            '<a href="mailto:shop@example.com">Contact us</a> · '
            '<a href="javascript:void(0)" class="newsletter">Newsletter</a> · '
            '<a href="/account/login?next=/cart">My orders</a>\n'
            f"<p>© {SITE_NAME}.</p>\n"
            "</footer>\n"
        )

    # --- layout ---------------------------------------------------------------

    def _layout(
        self, title: str, body: str, canonical: str | None = None, head: str = "",
        lang: str = "en-US",
    ) -> str:
        link = f'<link rel="canonical" href="{_e(canonical)}">\n' if canonical else ""
        return (
            f"<!DOCTYPE html>\n<html lang=\"{lang}\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<title>{_e(title)} | {SITE_NAME}</title>\n{link}{head}</head>\n<body>\n"
            f"{self._header}<main>\n{body}</main>\n{self._footer}</body>\n</html>\n"
        )

    @staticmethod
    def _breadcrumb_nav(trail: list[tuple[str, str]]) -> str:
        links = [f'<a href="{_e(path)}">{_e(name)}</a>' for name, path in trail[:-1]]
        links.append(f'<span aria-current="page">{_e(trail[-1][0])}</span>')
        return f'<nav class="breadcrumb">{" › ".join(links)}</nav>\n'

    @staticmethod
    def _price_html(product: Product) -> str:
        now = f'<span class="price-now">{format_price(product.price)}</span>'
        if product.list_price is None:
            return f'<p class="price">{now}</p>'
        was = f'<del class="price-was">{format_price(product.list_price)}</del>'
        # Half the sales show the struck-through list price first: the first
        # price in the document is not always the selling price.
        both = f"{was} {now}" if product.id % 2 else f"{now} {was}"
        return f'<p class="price">{both}</p>'

    def _card(self, product: Product) -> str:
        rating = ""
        if product.rating:
            rating = (
                f'<a class="rating" href="{_e(product.path)}#reviews">'
                f"{product.rating[0]} ★ ({product.rating[1]} reviews)</a>"
            )
        return (
            f'<li class="product-card" data-id="{product.id}">'
            f'<a class="product-link" href="{_e(product.path)}">'
            f'<img src="{_e(product.images[0])}" alt="{_e(product.name)}">'
            f'<h3 class="product-name">{_e(product.name)}</h3></a>'
            f"{self._price_html(product)}"
            f'<p class="stock">{STOCK_TEXT[product.availability]}</p>{rating}'
            f'<a class="add-to-cart" href="/cart/add?id={product.id}" rel="nofollow">'
            "Add to cart</a>"
            "</li>\n"
        )

    def _cards(self, products: list[Product]) -> str:
        if not products:
            return '<p class="empty">No products in this category yet.</p>\n'
        return '<ul class="product-grid">\n' + "".join(map(self._card, products)) + "</ul>\n"

    # --- pages ------------------------------------------------------------------

    def home(self) -> str:
        tops = "".join(
            f'<li><a href="{_e(top.path)}">{_e(top.name)}</a></li>'
            for top in self.catalog.categories
        )
        body = (
            f"<h1>Welcome to the {SITE_NAME}</h1>\n"
            f'<section class="categories"><h2>Shop by category</h2><ul>{tops}</ul></section>\n'
            '<section class="featured"><h2>Featured products</h2>\n'
            f"{self._cards(self.catalog.featured())}</section>\n"
        )
        picks = "".join(
            f'<li><a href="{traps.pick_path(n)}">{n} staff pick{"s" if n > 1 else ""}</a></li>'
            for n in traps.PICK_SIZES if len(self.catalog.products) >= n
        )
        shelves = traps.shelf_paths(self.catalog)
        picks += "".join(
            f'<li><a href="{traps.shelf_path(m, n)}">Shelf {m} {n}</a></li>'
            for m, n in traps.SHELVES if traps.shelf_path(m, n) in shelves
        )
        if picks:
            body += f'<section class="picks"><h2>Staff picks</h2><ul>{picks}</ul></section>\n'
        return self._layout("Home", body, canonical="/")

    def picks(self, size: int) -> str:
        return self._layout("Staff picks", traps.picks_body(self.catalog, size),
                            canonical=traps.pick_path(size))

    def shelf(self, markup: str, size: int) -> str:
        body, head = traps.shelf_body(self.catalog, markup, size)
        return self._layout("Products", body, canonical=traps.shelf_path(markup, size), head=head)

    def search(self, words: str) -> str:
        body, _ = traps.search_results(self.catalog, words)
        return self._layout(f"Search: {words}", body)

    def parent_category(self, category: Category) -> str:
        subs = "".join(
            f'<li><a href="{_e(sub.path)}">{_e(sub.name)}</a> '
            f'<span class="count">({len(sub.products)} products)</span></li>'
            for sub in category.children
        )
        body = (
            self._breadcrumb_nav([("Home", "/"), (category.name, category.path)])
            + f"<h1>{_e(category.name)}</h1>\n"
            f'<ul class="subcategories">{subs}</ul>\n'
        )
        return self._layout(category.name, body, canonical=category.path)

    def listing(self, category: Category, page: int, sort: str = "", view: str = "") -> str:
        """Page ``page`` of a leaf category; ``sort``/``view`` render a (non-canonical) variant."""
        catalog = self.catalog
        products = category.products
        if sort == "price_asc":
            products = sorted(products, key=lambda p: (p.price, p.id))
        elif sort == "price_desc":
            products = sorted(products, key=lambda p: (-p.price, p.id))
        elif sort == "name":
            products = sorted(products, key=lambda p: (p.name, p.id))
        size = catalog.page_size
        shown = products[(page - 1) * size : page * size]
        pages = category.page_count(size)
        variant = [f"sort={sort}"] if sort else []
        variant += [f"view={view}"] if view else []

        def href(n: int) -> str:
            if not variant:
                # the pager links page 1 as ?page=1 (menus link the bare URL): one page
                return f"?page={n}"
            query = "&".join(variant + ([f"page={n}"] if n > 1 else []))
            return f"{category.path}?{query}"

        first = (page - 1) * size + 1
        count = (
            f'<p class="result-count">Showing {first}–{first + len(shown) - 1} '
            f"of {len(products)} products</p>\n"
            if shown
            else ""
        )
        toolbar = (
            '<div class="toolbar">Sort by: '
            + " ".join(
                f'<a href="{"?" if i % 2 == 0 else _e(category.path) + "?"}sort={key}">{label}</a>'
                for i, (key, label) in enumerate(SORTS.items())
            )
            + ' · View: <a href="?view=grid">Grid</a> '
            f'<a href="{_e(category.path)}?view=list">List</a></div>\n'
        )
        head = ""
        if page > 1:
            head += f'<link rel="prev" href="{_e(href(page - 1))}">\n'
        if page < pages:
            head += f'<link rel="next" href="{_e(href(page + 1))}">\n'
        top = category.parent
        assert top is not None
        trail = [("Home", "/"), (top.name, top.path), (category.name, category.path)]
        body = (
            self._breadcrumb_nav(trail)
            + f"<h1>{_e(category.name)}</h1>\n{count}{toolbar}"
            + self._cards(shown)
            + self._pagination(page, pages, href)
        )
        title = category.name if page == 1 else f"{category.name} – page {page}"
        return self._layout(title, body, canonical=category.page_path(page), head=head)

    @staticmethod
    def _pagination(page: int, pages: int, href: Any) -> str:
        if pages <= 1:
            return ""
        # Every page number while there are few; else a window, the ends and every
        # tenth page, so that no page is more than a few clicks from page 1.
        if pages <= 30:
            numbers = list(range(1, pages + 1))
        else:
            wanted = {1, pages, *range(page - 3, page + 4), *range(10, pages, 10)}
            numbers = sorted(n for n in wanted if 1 <= n <= pages)
        parts = []
        if page > 1:
            parts.append(f'<a rel="prev" href="{_e(href(page - 1))}">‹ Previous</a>')
        last = 0
        for n in numbers:
            if n > last + 1:
                parts.append('<span class="gap">…</span>')
            if n == page:
                parts.append(f'<span class="current">{n}</span>')
            else:
                parts.append(f'<a href="{_e(href(n))}">{n}</a>')
            last = n
        if page < pages:
            parts.append(f'<a rel="next" href="{_e(href(page + 1))}">Next ›</a>')
        return '<nav class="pagination">' + " ".join(parts) + "</nav>\n"

    def product(self, product: Product) -> str:
        markup = product.markup
        if markup == "jsonld":
            main, head = self._product_plain(product, codes=False), self._product_json_ld(product)
        elif markup == "microdata":
            main, head = self._product_microdata(product), ""
        elif product.language == "en":
            main, head = self._product_plain(product, codes=True), ""
        else:
            main, head = localized.render(
                product, self._breadcrumb_nav(product.breadcrumbs), self._gallery(product),
                self._reviews(product),
            ), ""
        related = self.catalog.related(product)
        related_html = ""
        if related:
            # Relative hrefs ("slug-id.html"): they resolve against /p/.
            items = "".join(
                f'<li><a href="{_e(p.path.rsplit("/", 1)[1])}">{_e(p.name)}</a> '
                f'<span class="price">{format_price(p.price)}</span></li>'
                for p in related
            )
            related_html = (
                f'<section class="related"><h2>Related products</h2><ul>{items}</ul></section>\n'
            )
        sub = product.category
        body = (
            main
            + related_html
            + traps.carousel(self.catalog, product)
            + f'<p class="back"><a href="{_e(sub.path)}">More in {_e(sub.name)}</a> · '
            '<a href="/">Back to the home page</a></p>\n'
        )
        lang = {"en": "en-US", "de": "de-DE", "fr": "fr-FR", "es": "es-ES", "pl": "pl-PL",
                "sv": "sv-SE"}[product.language]
        return self._layout(product.name, body, canonical=product.path, head=head, lang=lang)

    def _reviews(self, product: Product, microdata: bool = False) -> str:
        if not product.rating:
            return '<section id="reviews"><h2>Reviews</h2><p>No reviews yet.</p></section>\n'
        value, count = product.rating
        if microdata:
            stars = (
                '<span itemprop="aggregateRating" itemscope '
                f'itemtype="{SCHEMA}AggregateRating">'
                f'<span itemprop="ratingValue">{value}</span> out of 5 '
                f'(<span itemprop="reviewCount">{count}</span> reviews)</span>'
            )
        else:
            stars = f"{value} out of 5 ({count} reviews)"
        return f'<section id="reviews"><h2>Reviews</h2><p class="rating">{stars}</p></section>\n'

    def _gallery(self, product: Product, microdata: bool = False) -> str:
        prop = ' itemprop="image"' if microdata else ""
        images = "".join(
            f'<img src="{_e(src)}" alt="{_e(product.name)}"{prop}>' for src in product.images
        )
        return f'<div class="gallery">{images}</div>\n'

    def _buy_box(self, product: Product) -> str:
        rating_link = ""
        if product.rating:
            count = product.rating[1]
            rating_link = f'<a class="rating-link" href="#reviews">{count} reviews</a>\n'
        return (
            f'<p class="stock">{STOCK_TEXT[product.availability]}</p>\n'
            + rating_link
            + '<form class="add-to-cart" action="/cart/add" method="post">'
            f'<input type="hidden" name="id" value="{product.id}"><button>Add to cart</button>'
            "</form>\n"
            f'<a class="buy-now" href="/cart/add?id={product.id}&amp;qty=1" rel="nofollow">'
            "Buy now</a>\n"
        )

    def _product_plain(self, product: Product, codes: bool) -> str:
        table = ""
        if codes:
            table = (
                '<table class="product-codes">'
                f"<tr><th>SKU</th><td>{_e(product.sku)}</td></tr>"
                f"<tr><th>EAN</th><td>{_e(product.gtin13)}</td></tr>"
                f"<tr><th>Brand</th><td>{_e(product.brand)}</td></tr></table>\n"
            )
        else:
            table = f'<p class="brand">Brand: {_e(product.brand)}</p>\n'
        return (
            self._breadcrumb_nav(product.breadcrumbs)
            + '<article class="product">\n'
            + f"<h1>{_e(product.name)}</h1>\n"
            + self._price_html(product)
            + "\n"
            + self._buy_box(product)
            + self._gallery(product)
            + f'<div class="description"><p>{_e(product.description)}</p></div>\n'
            + table
            + self._reviews(product)
            + "</article>\n"
        )

    def _product_json_ld(self, product: Product) -> str:
        data: dict[str, Any] = {
            "@context": "https://schema.org",
            "@type": "Product",
            "name": product.name,
            "sku": product.sku,
            "gtin13": product.gtin13,
            "brand": {"@type": "Brand", "name": product.brand},
            "image": list(product.images),
            "description": product.description,
            "offers": {
                "@type": "Offer",
                "url": product.path,
                # A string for some products, a JSON number for others.
                "price": f"{product.price:.2f}" if product.id % 2 else float(product.price),
                "priceCurrency": product.currency,
                "availability": SCHEMA + product.availability,
                "itemCondition": SCHEMA + "NewCondition",
            },
        }
        if product.rating:
            data["aggregateRating"] = {
                "@type": "AggregateRating",
                "ratingValue": product.rating[0],
                "reviewCount": product.rating[1],
            }
        crumbs = {
            "@context": "https://schema.org",
            "@type": "BreadcrumbList",
            "itemListElement": [
                {"@type": "ListItem", "position": i, "name": name, "item": path}
                for i, (name, path) in enumerate(product.breadcrumbs, start=1)
            ],
        }
        return _json_ld(data) + "\n" + _json_ld(crumbs) + "\n"

    def _product_microdata(self, product: Product) -> str:
        trail = product.breadcrumbs
        crumbs = " › ".join(
            '<span itemprop="itemListElement" itemscope itemtype="https://schema.org/ListItem">'
            + (
                f'<a itemprop="item" href="{_e(path)}"><span itemprop="name">{_e(name)}</span></a>'
                if i < len(trail)
                else f'<span itemprop="name">{_e(name)}</span>'
            )
            + f'<meta itemprop="position" content="{i}"></span>'
            for i, (name, path) in enumerate(trail, start=1)
        )
        was = ""
        if product.list_price is not None:
            was = f' <del class="price-was">{format_price(product.list_price)}</del>'
        amount = format_price(product.price)[1:]
        return (
            '<nav class="breadcrumb" itemscope itemtype="https://schema.org/BreadcrumbList">'
            f"{crumbs}</nav>\n"
            f'<article class="product" itemscope itemtype="{SCHEMA}Product">\n'
            f'<h1 itemprop="name">{_e(product.name)}</h1>\n'
            f'<meta itemprop="sku" content="{_e(product.sku)}">'
            f'<meta itemprop="gtin13" content="{_e(product.gtin13)}">\n'
            f'<div itemprop="brand" itemscope itemtype="{SCHEMA}Brand">'
            f'Brand: <span itemprop="name">{_e(product.brand)}</span></div>\n'
            f'<div class="offer" itemprop="offers" itemscope itemtype="{SCHEMA}Offer">'
            f'<p class="price"><span class="price-now">'
            f'<span itemprop="priceCurrency" content="{product.currency}">$</span>'
            f'<span itemprop="price" content="{product.price:.2f}">{amount}</span></span>{was}</p>'
            f'<link itemprop="availability" href="{SCHEMA}{product.availability}">'
            f'<link itemprop="url" href="{_e(product.path)}"></div>\n'
            + self._buy_box(product)
            + self._gallery(product, microdata=True)
            + f'<div class="description" itemprop="description"><p>{_e(product.description)}'
            "</p></div>\n"
            + self._reviews(product, microdata=True)
            + "</article>\n"
        )

    # --- the pages a crawler should never need ------------------------------------

    def simple(self, title: str, message: str, canonical: str | None = None) -> str:
        return self._layout(title, f"<h1>{_e(title)}</h1>\n<p>{_e(message)}</p>\n", canonical)

    def login(self) -> str:
        body = (
            "<h1>Sign in</h1>\n"
            '<form action="/account/login" method="post">'
            '<input name="email" type="email"><input name="password" type="password">'
            "<button>Sign in</button></form>\n"
        )
        return self._layout("Sign in", body)
