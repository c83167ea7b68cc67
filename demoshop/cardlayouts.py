"""``card-layouts``: category pages whose product cards come in several layouts.

The products are split among four shelves, each with its own card layout and page
size (20 to 40 cards a page), and a fifth shelf repeats some of them:

* ``/c/list/``: an ``<ol>`` of plain cards (a linked name, a price line, a stock
  line), 20 a page;
* ``/c/grid/``: a grid of ``<div>`` cards (an image link, a linked ``<h3>`` name, a
  price, a stock badge, a rating labelled "4.2 out of 5"), 24 a page, with a
  promotion tile ("Summer sale: up to 30% off") and a category tile ("Garden: from
  £5") among the cards;
* ``/c/table/``: a table, one row per product (name, price, stock cells) under a
  header row, 30 a page;
* ``/c/sale/``: ``<article>`` cards that show a struck-through regular price
  (``<del>``) beside the sale price where the product has one, 40 a page;
* ``/c/new/``: "New in", a ``<ul>`` of 20 cards of products listed above too, with
  no stock wording (a card that says nothing of stock).

The home page links the shelves and shows no card. A product page shows its name,
price and stock, an "Add to basket" button and a "Customers also bought" strip of
four grid cards (a recommendation strip: no listed products). :meth:`expected_card`
says what a right reading of a card is; :meth:`listing_page` renders a page of any
layout and any number of cards (the unit tests show 1 to 60).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from demoshop.catalog import Product
from demoshop.generated import GeneratedShop, Shelf, e, pounds, stars

NAME = "Card Layouts"
#: layout -> (shelf path, shelf name, cards a page)
LAYOUTS: dict[str, tuple[str, str, int]] = {
    "list": ("/c/list/", "Kitchen", 20),
    "grid": ("/c/grid/", "Outdoors", 24),
    "table": ("/c/table/", "Tools", 30),
    "sale": ("/c/sale/", "Sale", 40),
}
NEW_IN = ("/c/new/", "New in", 20)
#: a promotion tile and a category tile in every grid page, after these cards
TILES_AFTER = (3, 10)


def stock_text(product: Product) -> str:
    return "In stock" if product.availability == "InStock" else "Out of stock"


def rating_label(product: Product) -> str:
    return f"{product.rating[0]} out of 5" if product.rating else "No reviews yet"


def list_card(p: Product, stock: bool = True) -> str:
    line = f"<p>{stock_text(p)}</p>" if stock else ""
    return f'<li><a href="{e(p.path)}">{e(p.name)}</a>\n<p>{pounds(p.price)}</p>{line}</li>\n'


def grid_card(p: Product) -> str:
    return (
        f'<div class="card"><a href="{e(p.path)}"><img src="{e(p.images[0])}" alt=""></a>'
        f'<h3><a href="{e(p.path)}">{e(p.name)}</a></h3>'
        f'<div class="price">{pounds(p.price)}</div>'
        f'<span class="badge">{stock_text(p)}</span>'
        f'<div class="rating" aria-label="{rating_label(p)}">{stars(p.rating)}</div></div>\n'
    )


PROMO_TILE = (
    '<div class="card"><a href="/c/sale/"><img src="/img/summer.png" alt="Summer sale"></a>'
    '<h3><a href="/c/sale/">Summer sale: up to 30% off</a></h3>'
    '<div class="price">Shop the sale</div></div>\n'
)
CATEGORY_TILE = (
    '<div class="card"><a href="/c/list/"><img src="/img/garden.png" alt=""></a>'
    '<h3><a href="/c/list/">Garden</a></h3><div class="price">from £5.00</div></div>\n'
)


def table_row(p: Product) -> str:
    return (
        f'<tr><td><a href="{e(p.path)}">{e(p.name)}</a></td><td>{pounds(p.price)}</td>'
        f"<td>{stock_text(p)}</td></tr>\n"
    )


def sale_card(p: Product) -> str:
    if p.list_price is not None:
        price = f"<del>{pounds(p.list_price)}</del> <ins>{pounds(p.price)}</ins>"
    else:
        price = f"<span>{pounds(p.price)}</span>"
    return (
        f'<article><a href="{e(p.path)}"><img src="{e(p.images[0])}" alt="{e(p.name)}"></a>'
        f'<h2><a href="{e(p.path)}">{e(p.name)}</a></h2><p>{price}</p>'
        f"<p><small>{stock_text(p)}</small></p></article>\n"
    )


def cards_html(layout: str, products: Sequence[Product]) -> str:
    """The cards of one page in that layout (``new``: a list without stock wording)."""
    if layout == "list":
        return "<ol>\n" + "".join(list_card(p) for p in products) + "</ol>"
    if layout == "new":
        return "<ul>\n" + "".join(list_card(p, stock=False) for p in products) + "</ul>"
    if layout == "grid":
        cards = []
        for at, p in enumerate(products):
            cards.append(grid_card(p))
            if at + 1 == TILES_AFTER[0]:
                cards.append(PROMO_TILE)
            if at + 1 == TILES_AFTER[1]:
                cards.append(CATEGORY_TILE)
        return '<div class="grid">\n' + "".join(cards) + "</div>"
    if layout == "table":
        rows = "".join(table_row(p) for p in products)
        return (
            "<table><thead><tr><th>Product</th><th>Price</th><th>Stock</th></tr></thead>"
            f"<tbody>\n{rows}</tbody></table>"
        )
    if layout == "sale":
        return "<section>\n" + "".join(sale_card(p) for p in products) + "</section>"
    raise ValueError(f"unknown layout {layout!r}")


class CardLayoutShop(GeneratedShop):
    def shelves(self) -> list[Shelf]:
        layouts = list(LAYOUTS.values())
        shelves = [
            Shelf(path, name, tuple(self.products[at :: len(layouts)]), size, "page")
            for at, (path, name, size) in enumerate(layouts)
        ]
        path, name, size = NEW_IN
        shelves.append(Shelf(path, name, tuple(self.products[::7][:size]), size, "page"))
        return shelves

    def layout_of(self, shelf: Shelf) -> str:
        for layout, (path, _, _) in LAYOUTS.items():
            if path == shelf.path:
                return layout
        return "new"

    def _layout(self, title: str, body: str) -> str:
        menu = " | ".join(f'<a href="{e(s.path)}">{e(s.name)}</a>' for s in self.shelf_list)
        return (
            f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{e(title)}</title>'
            f'</head><body>\n<header><a href="/">{NAME}</a><nav>{menu}</nav></header>\n'
            f"<main>{body}</main>\n<footer>{NAME}. Prices include VAT.</footer>\n</body></html>\n"
        )

    def home(self) -> str:
        return self._layout(NAME, "<h1>Welcome</h1>\n<p>Choose a department above.</p>")

    def listing(self, shelf: Shelf, number: int) -> str:
        return self.listing_page(self.layout_of(shelf), shelf, number)

    def listing_page(self, layout: str, shelf: Shelf, number: int) -> str:
        """A page of ``shelf`` with its cards in ``layout`` (any number of cards)."""
        pager = ""
        if shelf.pages > 1:
            links = [
                f'<a href="{e(shelf.page_path(n))}">{n}</a>' if n != number else str(n)
                for n in range(1, shelf.pages + 1)
            ]
            pager = f"<p>Page {number} of {shelf.pages}: {' '.join(links)}</p>"
        body = (
            f"<h1>{e(shelf.name)}</h1>\n<p>{len(shelf.products)} products</p>\n"
            f"{cards_html(layout, shelf.page(number))}\n{pager}"
        )
        return self._layout(f"{shelf.name} | {NAME}", body)

    def product_page(self, product: Product) -> str:
        related = "".join(grid_card(p) for p in self.catalog.related(product, 4))
        buy = "<button>Add to basket</button>" if product.availability == "InStock" else ""
        body = (
            f"<h1>{e(product.name)}</h1>\n<p class=\"price\">{pounds(product.price)}</p>\n"
            f"<p>{stock_text(product)}</p>\n<p>Product code: {e(product.sku)}</p>\n{buy}\n"
            f"<p>{e(product.description)}</p>\n"
            f'<div class="strip"><h2>Customers also bought</h2><div class="grid">{related}'
            "</div></div>"
        )
        return self._layout(f"{product.name} | {NAME}", body)

    def expected_card(self, product: Product, layout: str) -> dict[str, Any]:
        """What a right reading of the product's card in ``layout`` gives (``url``: the
        product's path)."""
        return {
            "url": product.path,
            "name": product.name,
            "price": product.price,
            "currency": "GBP",
            "regular_price": product.list_price if layout == "sale" else None,
            "availability": None if layout == "new" else self.expected_product(product)[
                "availability"
            ],
        }
