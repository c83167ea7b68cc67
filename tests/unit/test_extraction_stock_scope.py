"""Stock as a shopper reads it (issue 29, point 3): the buy control's state first, then
stock wording that is about this product. Wording about a delivery or collection
option, another seller, a variant not chosen or another product of a strip is not
this product's stock; an enabled buy control with no contrary wording about this
product is in stock.

Class of pages: in-stock product pages read ``OutOfStock`` from such wording (7 pages
of 4 shops of a public benchmark, issue 29). Each page below is such a product page
without structured data (where the visible wording decides) and with JSON-LD saying
``InStock`` (where a stock element would override it)."""

from __future__ import annotations

import pytest
from scrapy.http import HtmlResponse

from crawler.extraction import extract

LD = (
    '<script type="application/ld+json">{"@context": "https://schema.org", "@type": '
    '"Product", "name": "Norvik Premium Kettle", "offers": {"@type": "Offer", "price": '
    '"53.63", "priceCurrency": "GBP", "availability": "https://schema.org/InStock"}}</script>'
)
BUY = '<form action="/cart/add" method="post"><button type="submit">Add to cart</button></form>'


def _page(wording: str, markup: bool, buy: bool = True) -> HtmlResponse:
    html = (
        f"<html><head><title>Norvik Premium Kettle</title>{LD if markup else ''}</head><body>"
        f'<main><h1>Norvik Premium Kettle</h1><p class="price">£53.63</p>{BUY if buy else ""}'
        f"{wording}<p>Product code: NOR-1</p></main></body></html>"
    )
    return HtmlResponse(
        url="https://shop.example/p/kettle-1.html", body=html.encode(), encoding="utf-8"
    )


def _availability(wording: str, markup: bool, buy: bool = True) -> str | None:
    product = extract(_page(wording, markup, buy)).product
    assert product is not None
    return product["availability"]


DELIVERY = [
    "<p>Next-day delivery: unavailable</p>",
    "<p>Express delivery is currently unavailable</p>",
    "<div>Click &amp; Collect: Out of stock at Leeds</div>",
    "<p>Home delivery not available in your area</p>",
    "<p>Lieferung: derzeit nicht verfügbar</p>",
    "<p>Retrait en magasin : indisponible</p>",
    "<p>Envío a domicilio: agotado</p>",
    '<div class="delivery-availability">Delivery unavailable</div>',
    '<span class="availability">Click &amp; collect: unavailable</span>',
]
SELLERS = [
    "<div><h3>Other sellers</h3><p>Shop B — £55.00 — Out of stock</p></div>",
    "<p>Sold by Acme: currently unavailable</p>",
    "<div><p>Also available from other sellers</p><p>Kettle World: Sold out</p></div>",
    "<p>Andere Verkäufer: nicht auf Lager</p>",
]
VARIANTS = [
    "<ul><li>S</li><li>M - Out of stock</li><li>L</li></ul>",
    "<p>Size XL: sold out</p>",
    "<p>Colour Blue is out of stock</p>",
    "<div><div>Size</div><div><span>38</span><span>39 sold out</span><span>40</span></div></div>",
]
STRIPS = [
    "<h2>Customers also bought</h2><div>"
    + "".join(
        f'<div><a href="/p/{i}"><img src="/i{i}.jpg" alt=""></a><a href="/p/{i}">Other '
        f"thing {i}</a><span>Sold out</span></div>"
        for i in range(3)
    )
    + "</div>",
    "<div><h2>Bestseller of the week</h2><a href='/p/9'><img src='/i9.jpg' alt=''></a>"
    "<p><a href='/p/9'>Aster Lamp</a></p><p>Sold out</p></div>",
    # far after the enabled button: not about this product
    "<div>"
    + "".join(f"<p>Line {i} of the description.</p>" for i in range(50))
    + "<p>Currently unavailable</p></div>",
]


@pytest.mark.parametrize("markup", [False, True])
@pytest.mark.parametrize("wording", DELIVERY + SELLERS + VARIANTS + STRIPS)
def test_wording_about_something_else_is_not_this_products_stock(
    wording: str, markup: bool
) -> None:
    assert _availability(wording, markup) == "InStock"


@pytest.mark.parametrize(
    "wording",
    [
        "<p>Out of stock</p>",
        '<p class="stock">Sold out</p>',
        "<p>Availability: Out of stock</p>",
        "<p>Currently unavailable for delivery</p>",
        "<p>Out of stock - notify me when it is back</p>",
    ],
)
def test_this_products_own_stock_wording_still_counts(wording: str) -> None:
    assert _availability(wording, markup=False, buy=False) == "OutOfStock"


def test_the_shown_variants_stock_with_its_price_counts() -> None:
    """"36,99€ - En stock": the price of the variant shown, then its stock."""
    assert _availability("<div>36,99€ - En Stock</div>", False, buy=False) == "InStock"
