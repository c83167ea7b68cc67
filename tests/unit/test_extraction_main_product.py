"""The main product among many (issue 29, point 4): on pages that show many other
products (marketplaces, "also bought", sponsored strips, markup describing a strip's
products too), the product is the one the page is about, and the others are neither
the product nor evidence for a listing.

Classes of pages: a shop's product page whose microdata also holds the products of a
recommendation strip, without offers (typed a listing: 2 pages of one shop of a
public benchmark); marketplace pages with sponsored strips and "customers also
bought" lists around the main product (typed ``no_product`` or ``listing``: 6 pages
of one marketplace in 4 countries)."""

from __future__ import annotations

import json
from decimal import Decimal

from scrapy.http import HtmlResponse

from crawler.extraction import extract

URL = "https://market.example/dp/B0001234"
S = "https://schema.org/"
HEADING = "Norvik Premium Kettle Z114 1.7 L, Black"


def _product(html: str) -> dict | None:
    return extract(HtmlResponse(url=URL, body=html.encode(), encoding="utf-8")).product


def _ld(data: dict) -> str:
    return f'<script type="application/ld+json">{json.dumps(data)}</script>'


def test_microdata_of_a_strip_without_offers_beside_the_product_with_its_offer() -> None:
    strip = "".join(
        f'<div itemscope itemtype="{S}Product"><a itemprop="url" href="/dp/B00{i}">'
        f'<img itemprop="image" src="/i{i}.jpg"><span itemprop="name">Other kettle {i}</span>'
        "</a></div>"
        for i in range(5)
    )
    html = (
        f"<html><head><title>{HEADING}</title></head><body>"
        f'<div itemscope itemtype="{S}Product"><h1>{HEADING}</h1>'
        '<meta itemprop="name" content="Premium Kettle Z114">'
        f'<div itemprop="offers" itemscope itemtype="{S}Offer">'
        '<span itemprop="price" content="53.63">£53.63</span>'
        '<meta itemprop="priceCurrency" content="GBP">'
        f'<link itemprop="availability" href="{S}InStock"></div>'
        "<button>Add to basket</button></div>"
        f"<h2>Customers also viewed</h2><div>{strip}</div></body></html>"
    )
    product = _product(html)
    assert product is not None
    assert (product["price"], product["availability"]) == (Decimal("53.63"), "InStock")


def test_sponsored_products_marked_up_beside_the_one_the_heading_names() -> None:
    main = {
        "@context": "https://schema.org", "@type": "Product", "name": "Premium Kettle Z114",
        "offers": {"@type": "Offer", "price": "53.63", "priceCurrency": "GBP",
                   "availability": S + "InStock"},
    }
    sponsored = [
        {"@context": "https://schema.org", "@type": "Product", "name": f"Sponsored kettle {i}",
         "url": f"/dp/B9{i}",
         "offers": {"@type": "Offer", "price": f"2{i}.00", "priceCurrency": "GBP"}}
        for i in range(4)
    ]
    cards = "".join(
        f'<div><a href="/dp/B9{i}"><img src="/s{i}.jpg">Sponsored kettle {i}</a>'
        f"<span>£2{i}.00</span></div>"
        for i in range(4)
    )
    html = (
        f"<html><head><title>{HEADING}</title>{_ld(main)}"
        + "".join(_ld(s) for s in sponsored)
        + f'</head><body><h1>{HEADING}</h1><p class="price">£53.63</p>'
        f"<button>Add to basket</button><h2>Sponsored products</h2><div>{cards}</div>"
        "</body></html>"
    )
    product = _product(html)
    assert product is not None and product["price"] == Decimal("53.63")


def _marketplace(cards: int, price_class: bool) -> str:
    menu = "<header><nav>" + "".join(f'<a href="/c/{i}">Cat {i}</a>' for i in range(300))
    sponsored = "".join(
        f'<div><a href="/dp/S{i}"><img src="/x.jpg"></a><div><a href="/dp/S{i}">Sponsored '
        f'thing number {i}</a></div><div><span class="a-price">£1{i}.99</span></div><div>'
        f"<span>★★★★☆</span><span>1{i}</span></div><button>Add to basket</button></div>"
        for i in range(cards)
    )
    also = "".join(
        f'<li><a href="/dp/A{i}"><img src="/x.jpg">Also bought thing {i}</a>'
        f'<span class="a-price">£3{i}.50</span><span>Only 2 left in stock</span></li>'
        for i in range(20)
    )
    price = '<span class="a-price">£53.63</span>' if price_class else "<span>£53.63</span>"
    return (
        f"<html><head><title>Market.example: {HEADING} : Home</title></head><body>{menu}"
        '</nav></header><div id="dp"><div id="left"><img src="/main.jpg"></div>'
        f'<div id="center"><h1 id="title"><span>{HEADING}</span></h1>'
        '<a href="/stores/norvik">Visit the Norvik Store</a><span>4.5 out of 5 stars</span>'
        f"<div><h2>Sponsored</h2><div>{sponsored}</div></div>"
        f'<div id="price">{price}</div><div id="availability"><span>In stock</span></div>'
        '<div id="buybox"><input type="submit" value="Add to Basket"></div></div></div>'
        f"<div><h2>Customers who bought this item also bought</h2><ol>{also}</ol></div>"
        "</body></html>"
    )


def test_a_long_marketplace_page_is_its_main_products() -> None:
    """60 sponsored cards between the heading and the price (480 elements) push the
    price out of no reach: the distance counts the product's own content only."""
    for price_class in (True, False):
        product = _product(_marketplace(60, price_class))
        assert product is not None, price_class
        assert (product["name"], product["price"], product["availability"]) == (
            HEADING, Decimal("53.63"), "InStock"
        )
