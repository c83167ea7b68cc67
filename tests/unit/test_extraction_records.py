"""A listing is known by its structure (issue 29, point 1): repeated sibling records,
each linking to a page of its own and showing a price, make a page a listing
whatever their markup (no class, no structured data), unless the page's own
product stands apart from them; a listing of one is an item of a list.

Class of pages: plain shops whose category pages are ``<ol>``/``<ul>`` lists, grids
of plain ``<div>`` blocks or table rows of cards, with names cut short ("Norvik
Premium…") that no name rule recognises, and product pages that end in a strip of
such cards."""

from __future__ import annotations

from decimal import Decimal

import pytest
from scrapy.http import HtmlResponse

from crawler.extraction import extract

URL = "https://plain.example/c/kettles/"
NAMES = ("Norvik…", "Aster Vale…", "Kettle", "Tessel Pro…", "Lumio Eco Phone X163", "Halden")


def _response(html: str, url: str = URL) -> HtmlResponse:
    return HtmlResponse(url=url, body=html.encode(), encoding="utf-8")


def _card(i: int, tag: str = "li", stock: str = "In stock") -> str:
    inner = (
        f'<a href="/p/item-{i}.html">{NAMES[i % len(NAMES)]}</a>\n'
        f"<p>£{50 + i}.63</p>\n<p>{stock}</p>\n<p>★★★★☆</p>"
    )
    if tag == "tr":
        return f"<tr><td>{inner}</td></tr>"
    return f"<{tag}>{inner}</{tag}>\n"


def _category(cards: int, wrap: str = "ol") -> str:
    tag = {"ol": "li", "ul": "li", "div": "div", "table": "tr"}[wrap]
    items = "".join(_card(i, tag) for i in range(cards))
    pager = '<p>Page 1 of 3: 1 <a href="?seite=2">2</a> <a href="?seite=3">3</a></p>'
    return (
        "<html><head><title>Products in Kettles</title></head><body>"
        '<p><a href="/">Plain Shop</a></p><p><a href="/c/all/">All products</a></p>'
        f"<h1>Kettles</h1><p>{cards} products:</p><{wrap}>{items}</{wrap}>{pager}"
        "<p>Plain Shop, 1 High Street.</p></body></html>"
    )


@pytest.mark.parametrize("cards", [1, 2, 3, 7, 30, 60])
def test_a_plain_ordered_list_of_cards_is_a_listing(cards: int) -> None:
    result = extract(_response(_category(cards)))
    assert result.product is None
    assert result.rejected == "listing"


@pytest.mark.parametrize("wrap", ["ul", "div", "table"])
@pytest.mark.parametrize("cards", [2, 5])
def test_cards_of_any_markup_are_records(wrap: str, cards: int) -> None:
    result = extract(_response(_category(cards, wrap)))
    assert (result.product, result.rejected) == (None, "listing")


def _product(strip: str = "ol", own_stock: str = "In stock", buy: bool = True) -> str:
    tag = "li" if strip in ("ol", "ul") else "div"
    related = "".join(
        _card(i, tag, stock="Out of stock" if i % 2 == 0 else "In stock") for i in range(4)
    )
    button = '<form action="/basket" method="post"><button>Add to basket</button></form>'
    return (
        "<html><head><title>Norvik Premium Kettle Z114 | Plain Shop</title></head><body>"
        '<p><a href="/">Home</a> &gt; <a href="/c/kettles/">Kettles</a></p>'
        f"<h1>Norvik Premium Kettle Z114</h1><p>£53.63</p><p>{own_stock}</p><p>★★★★☆</p>"
        "<table><tr><th>Product code</th><td>NOR-00002</td></tr></table>"
        f"{button if buy else ''}<h2>Description</h2><p>A kettle.</p>"
        f"<h2>You might also like</h2><{strip}>{related}</{strip}></body></html>"
    )


@pytest.mark.parametrize("strip", ["ol", "ul", "div"])
def test_a_product_page_stands_apart_from_its_strip_of_cards(strip: str) -> None:
    """The page's own price and buy button stand outside the records: a product; the
    strip's cards are other products' (their "Out of stock" is not this product's)."""
    product = extract(_response(_product(strip), "https://plain.example/p/item-9.html")).product
    assert product is not None
    assert (product["name"], product["price"], product["availability"], product["sku"]) == (
        "Norvik Premium Kettle Z114", Decimal("53.63"), "InStock", "NOR-00002"
    )


def test_a_sold_out_product_page_with_a_strip_of_cards_is_sold_out() -> None:
    html = _product(own_stock="Out of stock", buy=False)
    product = extract(_response(html, "https://plain.example/p/item-9.html")).product
    assert product is not None
    assert (product["price"], product["availability"]) == (Decimal("53.63"), "OutOfStock")


def test_a_product_whose_details_are_one_list_item_stays_a_product() -> None:
    """A list of one item that opens with details, not with a link naming a product
    (a price row with an explanation link), is no listing of one."""
    html = (
        "<html><body><h1>Norvik Premium Kettle Z114</h1>"
        '<ul><li>£53.63 <a href="/help/prices">Price promise</a></li></ul>'
        "<p>In stock</p><button>Add to basket</button></body></html>"
    )
    product = extract(_response(html, "https://plain.example/p/item-9.html")).product
    assert product is not None and product["price"] == Decimal("53.63")


def test_a_strip_of_logos_or_news_is_no_listing() -> None:
    """Records with an image and no price (sponsors' logos, news teasers) are not other
    products: a product page with its price in structured data only stays a product."""
    logos = "".join(
        f'<div><a href="/sponsor/{i}"><img src="/logo{i}.png" alt=""></a></div>' for i in range(6)
    )
    html = (
        '<html><head><script type="application/ld+json">{"@context": "https://schema.org", '
        '"@type": "Product", "name": "Norvik Premium Kettle Z114", "offers": {"@type": '
        '"Offer", "price": "53.63", "priceCurrency": "GBP"}}</script></head><body>'
        f"<h1>Norvik Premium Kettle Z114</h1><div>{logos}</div></body></html>"
    )
    product = extract(_response(html, "https://plain.example/p/item-9.html")).product
    assert product is not None and product["price"] == Decimal("53.63")
