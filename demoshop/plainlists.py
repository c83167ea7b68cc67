"""``plain-lists``: a shop of plain markup, with category pages that are ordered lists.

No element has a class, no page has structured data. A category page has the
``<title>`` "Products in <category>", an ``<h1>`` with the category's name, a line
"N products:" and an ``<ol>`` whose every ``<li>`` is a card: a link to a product
page (every other card cuts the name after two words), a price line ("£53.63"), a
stock line ("In stock" / "Out of stock") and a star rating. Listings show 1 to 60
cards a page: "All products" 60 a page, each category its own page size (1, 2, 3,
5, 8 or 30). Their pagers link page 1 as ``?<param>=1`` ("1" and "previous") while
menus link it bare, under a parameter name of the category's own (``page``, ``p``,
``seite``, ``pageIndex``: the last two are no name a crawler knows in advance); the
shop serves both.

A product page has the product's name as its ``<h1>``, its price, its stock line,
its stars, a details table (product code, brand), an "Add to basket" button when
it is in stock, a description and a "You might also like" list of four cards
of the same shape as a category page's (their stock lines included).
"""

from __future__ import annotations

from demoshop.catalog import Product
from demoshop.generated import GeneratedShop, Shelf, e, pounds, stars

NAME = "Plain Shop"
#: Cards per page of each category (cycled), and the parameter that numbers its pages.
PAGE_SIZES = (1, 2, 3, 5, 8, 30)
PAGE_PARAMS = ("page", "p", "seite", "pageIndex")
ALL_PAGE_SIZE = 60


def _layout(title: str, body: str, shelves: list[Shelf]) -> str:
    menu = " | ".join(f'<a href="{e(s.path)}">{e(s.name)}</a>' for s in shelves)
    return (
        f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{e(title)}</title></head>"
        f'<body>\n<p><a href="/">{NAME}</a></p>\n<p>{menu}</p>\n{body}\n'
        f"<p>{NAME}, 1 High Street. Prices include VAT.</p>\n</body></html>\n"
    )


def card_title(product: Product) -> str:
    """The name a card shows: every other card cuts it after two words ("Norvik
    Premium…"), as shops cut long titles to fit a card."""
    words = product.name.split()
    return product.name if product.id % 2 or len(words) <= 2 else " ".join(words[:2]) + "…"


def card(product: Product) -> str:
    stock = "In stock" if product.availability == "InStock" else "Out of stock"
    return (
        f'<li><a href="{e(product.path)}">{e(card_title(product))}</a>\n'
        f"<p>{pounds(product.price)}</p>\n<p>{stock}</p>\n<p>{stars(product.rating)}</p></li>\n"
    )


class PlainListShop(GeneratedShop):
    def shelves(self) -> list[Shelf]:
        shelves = [Shelf("/c/all/", "All products", tuple(self.products), ALL_PAGE_SIZE, "page")]
        leaves = [leaf for leaf in self.catalog.leaves() if leaf.products]
        for i, leaf in enumerate(leaves):
            shelves.append(
                Shelf(
                    leaf.path,
                    leaf.name,
                    tuple(leaf.products),
                    PAGE_SIZES[i % len(PAGE_SIZES)],
                    PAGE_PARAMS[i % len(PAGE_PARAMS)],
                )
            )
        return shelves

    def home(self) -> str:
        featured = "".join(card(p) for p in self.products[:8])
        return _layout(NAME, f"<h1>Welcome</h1>\n<h2>Featured</h2>\n<ol>\n{featured}</ol>",
                       self.shelf_list)

    def listing(self, shelf: Shelf, number: int) -> str:
        shown = shelf.page(number)
        cards = "".join(card(p) for p in shown)
        pager = ""
        if shelf.pages > 1:
            links = [
                f'<a href="?{shelf.param}={n}">{n}</a>' if n != number else str(n)
                for n in range(1, shelf.pages + 1)
            ]
            if number > 1:
                links.insert(0, f'<a href="?{shelf.param}={number - 1}">previous</a>')
            if number < shelf.pages:
                links.append(f'<a href="?{shelf.param}={number + 1}">next</a>')
            pager = f"<p>Page {number} of {shelf.pages}: {' '.join(links)}</p>"
        count = len(shelf.products)
        body = (
            f"<h1>{e(shelf.name)}</h1>\n<p>{count} products:</p>\n<ol>\n{cards}</ol>\n{pager}"
        )
        return _layout(f"Products in {shelf.name}", body, self.shelf_list)

    def product_page(self, product: Product) -> str:
        in_stock = product.availability == "InStock"
        stock = "In stock" if in_stock else "Out of stock"
        buy = (
            '<form method="post" action="/basket"><input type="hidden" name="id" '
            f'value="{product.id}"><button>Add to basket</button></form>\n'
            if in_stock
            else ""
        )
        related = "".join(card(p) for p in self.catalog.related(product, 4))
        category = product.category
        body = (
            f'<p><a href="/">Home</a> &gt; <a href="{e(category.path)}">{e(category.name)}</a>'
            f" &gt; {e(product.name)}</p>\n"
            f"<h1>{e(product.name)}</h1>\n<p>{pounds(product.price)}</p>\n<p>{stock}</p>\n"
            f"<p>{stars(product.rating)}</p>\n"
            f"<table><tr><th>Product code</th><td>{e(product.sku)}</td></tr>"
            f"<tr><th>Brand</th><td>{e(product.brand)}</td></tr></table>\n{buy}"
            f"<h2>Description</h2>\n<p>{e(product.description)}</p>\n"
            f"<h2>You might also like</h2>\n<ol>\n{related}</ol>"
        )
        return _layout(f"{product.name} | {NAME}", body, self.shelf_list)
