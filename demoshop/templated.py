"""``templated``: a shop whose template says things about other products on every page.

Every page carries, right after its heading, a delivery notice ("Express delivery is
currently unavailable.") and a "Don't miss" box of one product, sold out: its image,
its linked name and a "Sold out" badge. A product page puts its buy box (price, stock
line, "Add to basket") in a column before the one holding its heading, and two
product pages of three carry JSON-LD (the others none: every third product, by id).
Category pages list their products as linked cards with prices.

Read one page at a time, a page without JSON-LD shows no price after its heading and
its first stock wording is the template's "Sold out"; read with the evidence of the
whole shop (:mod:`crawler.extraction.evidence`), the badge is the template's and the
price and stock line are where the JSON-LD pages show theirs.
"""

from __future__ import annotations

import json

from demoshop.catalog import Product
from demoshop.generated import GeneratedShop, Shelf, e, pounds

NAME = "Templated Shop"
PAGE_SIZE = 12


class TemplatedShop(GeneratedShop):
    def shelves(self) -> list[Shelf]:
        leaves = [leaf for leaf in self.catalog.leaves() if leaf.products]
        return [Shelf(leaf.path, leaf.name, tuple(leaf.products), PAGE_SIZE, "page")
                for leaf in leaves]

    @property
    def featured(self) -> Product:
        """The sold-out product of the template's "Don't miss" box."""
        sold_out = [p for p in self.products if p.availability != "InStock"]
        return (sold_out or self.products)[0]

    def has_json_ld(self, product: Product) -> bool:
        return product.id % 3 != 0

    def _layout(self, title: str, column: str, heading: str, body: str, head: str = "") -> str:
        menu = " ".join(f'<a href="{e(s.path)}">{e(s.name)}</a>' for s in self.shelf_list)
        pick = self.featured
        box = (
            f"<div><h4>Don't miss</h4><a href=\"{e(pick.path)}\"><img src=\"/img/{pick.id}.png\" "
            f'alt=""></a><p><a href="{e(pick.path)}">{e(pick.name)}</a></p><p>Sold out</p></div>'
        )
        return (
            f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{e(title)}</title>{head}'
            f'</head><body>\n<div id="topbar"><a href="/">{NAME}</a> <a href="/basket">Basket '
            f'(0)</a></div>\n<div id="menu">{menu}</div>\n<div id="page">{column}'
            f'<div id="main"><h1>{e(heading)}</h1>\n<p>Express delivery is currently '
            f"unavailable.</p>\n{box}\n{body}</div></div>\n"
            f'<div id="footer">{NAME}. All prices include VAT.</div></body></html>\n'
        )

    def home(self) -> str:
        cards = "".join(_card(p) for p in self.products[:8])
        return self._layout(NAME, "", "Welcome", f'<ul id="products">{cards}</ul>')

    def listing(self, shelf: Shelf, number: int) -> str:
        cards = "".join(_card(p) for p in shelf.page(number))
        pager = " ".join(
            f'<a href="{e(shelf.page_path(n))}">{n}</a>' for n in range(1, shelf.pages + 1)
        )
        body = f'<ul id="products">{cards}</ul><p>{pager}</p>'
        return self._layout(f"{shelf.name} | {NAME}", "", shelf.name, body)

    def product_page(self, product: Product) -> str:
        in_stock = product.availability == "InStock"
        button = f"<button{'' if in_stock else ' disabled'}>Add to basket</button>"
        stock = "In stock" if in_stock else "Sold out"
        column = (
            f'<div id="buybox"><p>{pounds(product.price)}</p><p>{stock}</p>'
            f'<form action="/basket/add" method="post">{button}</form></div>'
        )
        body = (
            f"<p>Product code: {e(product.sku)}</p>\n<div><p>{e(product.description)}</p></div>"
        )
        head = ""
        if self.has_json_ld(product):
            data = {
                "@context": "https://schema.org",
                "@type": "Product",
                "name": product.name,
                "sku": product.sku,
                "offers": {
                    "@type": "Offer",
                    "price": f"{product.price:.2f}",
                    "priceCurrency": "GBP",
                    "availability": "https://schema.org/"
                    + ("InStock" if in_stock else "OutOfStock"),
                },
            }
            text = json.dumps(data, ensure_ascii=False).replace("</", "<\\/")
            head = f'<script type="application/ld+json">{text}</script>'
        return self._layout(f"{product.name} | {NAME}", column, product.name, body, head)


def _card(product: Product) -> str:
    return (
        f'<li><a href="{e(product.path)}"><img src="/img/{product.id}.png" alt=""></a>'
        f'<a href="{e(product.path)}">{e(product.name)}</a> '
        f"<span>{pounds(product.price)}</span></li>"
    )
