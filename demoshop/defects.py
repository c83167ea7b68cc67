"""Defect shops: the ``plain-lists`` shop (:mod:`demoshop.plainlists`) with ONE defect
of its product pages that zero-configuration extraction reads wrong for the whole
site, each raising one data check (:mod:`crawler.datachecks.checks`,
``docs/data-checks.md``). Chosen with ``python -m demoshop --generated KIND``:

* ``defect-stock``: every product is in stock (an enabled "Add to basket" button, no
  stock line of its own), and the product template's buy box ends with a delivery
  note that names a stock state ("Out of stock items are shipped within 3 weeks"),
  classed as the shop's stock information: read as every product's stock
  (``availability_one_value``);
* ``defect-price``: the product's price is written into the page by a script (an
  empty element and the amount in a ``data-`` attribute), while the buy box shows the
  template's instalment offer "Or pay from £9.99 a month": read as every product's
  price (``price_one_value``; a "Delivery from £4.95" line there instead is read
  right, as shipping, and the pages are then rejected for want of a price);
* ``defect-name``: the heading of every product page is the shop's name, as is its
  ``<title>``; the product's name is only in the alternative text of its image:
  read as every product's name (``name_one_value``);
* ``defect-rejected``: one product page in three (by id), at the same URL as the
  others, says with status 200 that the product has moved to the new shop, with no
  price, no buy button and no product data: rejected (``product_pages_rejected``);
* ``defect-hidden-price``: the pages carry JSON-LD of the product without its offer
  (name, code, brand), and show the price only in the one option of a picker
  ("Standard – £53.63"): a price the page shows but the extractor does not find
  (``field_coverage``; the same price in the buy button's label is read right, and
  without the JSON-LD such pages are rejected for want of a price).

Listings and the home page are the plain-lists shop's (each category on one page).
If the extractor learns to read one of these right, give that shop another defect
it falls for: each shop is there to show its check fire. What a correct extractor
would read on a product page is still :meth:`expected_product`: the defect is the
extractor's misreading, which the data checks catch.
"""

from __future__ import annotations

import json
from typing import Any

from demoshop.catalog import Product
from demoshop.generated import Shelf, e, pounds, stars
from demoshop.plainlists import NAME, PlainListShop, _layout

#: The kinds of defect shop (``--generated``), each with the check it raises.
DEFECTS = {
    "defect-stock": "availability_one_value",
    "defect-price": "price_one_value",
    "defect-name": "name_one_value",
    "defect-rejected": "product_pages_rejected",
    "defect-hidden-price": "field_coverage",
}


class DefectShop(PlainListShop):
    """A plain-lists shop whose product pages are built from parts (:meth:`heading`,
    :meth:`price`, :meth:`buy`, ...); each defect overrides one of them."""

    def shelves(self) -> list[Shelf]:
        """Each category on one page (a small crawl: its product pages, one listing
        page a category and the home page)."""
        leaves = [leaf for leaf in self.catalog.leaves() if leaf.products]
        return [Shelf(leaf.path, leaf.name, tuple(leaf.products), len(leaf.products), "page")
                for leaf in leaves]

    def in_stock(self, product: Product) -> bool:
        return product.availability == "InStock"

    def title(self, product: Product) -> str:
        return f"{product.name} | {NAME}"

    def heading(self, product: Product) -> str:
        return f"<h1>{e(product.name)}</h1>\n"

    def price(self, product: Product) -> str:
        return f"<p>{pounds(product.price)}</p>\n"

    def stock(self, product: Product) -> str:
        return f"<p>{'In stock' if self.in_stock(product) else 'Out of stock'}</p>\n"

    def buy(self, product: Product) -> str:
        if not self.in_stock(product):
            return ""
        return (
            '<form method="post" action="/basket"><input type="hidden" name="id" '
            f'value="{product.id}"><button>Add to basket</button></form>\n'
        )

    def product_page(self, product: Product) -> str:
        category = product.category
        body = (
            f'<p><a href="/">Home</a> &gt; <a href="{e(category.path)}">{e(category.name)}</a>'
            f" &gt; {e(product.name)}</p>\n"
            f"{self.heading(product)}{self.price(product)}{self.stock(product)}"
            f"<p>{stars(product.rating)}</p>\n"
            f"<table><tr><th>Product code</th><td>{e(product.sku)}</td></tr>"
            f"<tr><th>Brand</th><td>{e(product.brand)}</td></tr></table>\n{self.buy(product)}"
            f"<h2>Description</h2>\n<p>{e(product.description)}</p>\n"
        )
        return _layout(self.title(product), body, self.shelf_list)

    def expected_product(self, product: Product) -> dict[str, Any]:
        expected = super().expected_product(product)
        if self.in_stock(product):
            expected["availability"] = "InStock"
        return expected


class StockWordingShop(DefectShop):
    def in_stock(self, product: Product) -> bool:
        return True

    def stock(self, product: Product) -> str:
        return ""

    def buy(self, product: Product) -> str:
        return super().buy(product) + (
            '<p class="stock-info">Out of stock items are shipped within 3 weeks.</p>\n'
        )


class ScriptPriceShop(DefectShop):
    def price(self, product: Product) -> str:
        return (
            f'<p><span class="amount" data-amount="{product.price:.2f}"></span></p>\n'
            "<p>Or pay from £9.99 a month</p>\n"
        )


class SiteNameHeadingShop(DefectShop):
    def title(self, product: Product) -> str:
        return NAME

    def heading(self, product: Product) -> str:
        image = f'<img src="/img/{product.id}.png" alt="{e(product.name)}">'
        return f"<h1>{NAME}</h1>\n<p>{image}</p>\n"


class MovedPagesShop(DefectShop):
    def moved(self, product: Product) -> bool:
        return product.id % 3 == 0

    def product_page(self, product: Product) -> str:
        if not self.moved(product):
            return super().product_page(product)
        body = (
            "<h1>This page has moved</h1>\n<p>Our shop has moved. You will find this "
            'product and many more in our new shop.</p>\n<p><a href="/">Back to the '
            "home page</a></p>\n"
        )
        return _layout(NAME, body, self.shelf_list)


class PickerPriceShop(DefectShop):
    def price(self, product: Product) -> str:
        return (
            '<p><label>Option <select name="option"><option>Standard – '
            f"{pounds(product.price)}</option></select></label></p>\n"
        )

    def product_page(self, product: Product) -> str:
        data = {
            "@context": "https://schema.org",
            "@type": "Product",
            "name": product.name,
            "sku": product.sku,
            "brand": {"@type": "Brand", "name": product.brand},
        }
        text = json.dumps(data, ensure_ascii=False).replace("</", "<\\/")
        head = f'<script type="application/ld+json">{text}</script>'
        return super().product_page(product).replace("</head>", head + "</head>", 1)


SHOPS: dict[str, type[DefectShop]] = {
    "defect-stock": StockWordingShop,
    "defect-price": ScriptPriceShop,
    "defect-name": SiteNameHeadingShop,
    "defect-rejected": MovedPagesShop,
    "defect-hidden-price": PickerPriceShop,
}
