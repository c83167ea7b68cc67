"""Category grids are listings, whatever the number of cards (issue 16, point 5):
"Products in Fiction" with 1, 2, 3 or 5 cards, each with a linked name, a price,
stock wording and a buy button, with or without product markup on the cards, and
a pager; while a product page whose own name is also a link stays a product."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from scrapy.http import HtmlResponse

from crawler.extraction import extract

SCHEMA = "https://schema.org/"
URL = "https://shop.example/category/10"


def _card(i: int, markup: str) -> str:
    item = f' itemscope itemtype="{SCHEMA}Product"' if markup == "microdata" else ""
    prop = ' itemprop="name"' if markup == "microdata" else ""
    offer = (
        f'<span itemprop="offers" itemscope itemtype="{SCHEMA}Offer">'
        f'<meta itemprop="price" content="1{i}.99"><meta itemprop="priceCurrency" content="USD">'
        "</span>"
        if markup == "microdata"
        else ""
    )
    return (
        f'<div class="product"{item}><h3><a href="/p/novel-{i}.html"><span{prop}>Kestrel Eco '
        f'Novel B{i}04</span></a></h3>{offer}<p class="price">$1{i}.99</p>'
        f'<p class="stock">In stock</p><button class="add-to-cart">Add to cart</button></div>'
    )


def _json_ld(i: int) -> str:
    data = {
        "@context": "https://schema.org",
        "@type": "Product",
        "name": f"Kestrel Eco Novel B{i}04",
        "url": f"/p/novel-{i}.html",
        "offers": {"@type": "Offer", "price": f"1{i}.99", "priceCurrency": "USD"},
    }
    return f'<script type="application/ld+json">{json.dumps(data)}</script>'


@pytest.mark.parametrize("markup", ["none", "microdata", "json-ld"])
@pytest.mark.parametrize("cards", [1, 2, 3, 5])
def test_a_category_grid_is_a_listing_whatever_its_size(markup: str, cards: int) -> None:
    head = "".join(_json_ld(i) for i in range(cards)) if markup == "json-ld" else ""
    html = (
        f"<html><head><title>Products in Fiction | Shop</title>{head}</head><body><main>"
        '<nav class="breadcrumb"><a href="/">Home</a> › <a href="/books">Books</a></nav>'
        f"<h1>Products in Fiction</h1><p>{cards} products</p>"
        + "".join(_card(i, markup) for i in range(cards))
        + '<nav class="pagination"><a href="?page=1">1</a> <a href="?page=2">2</a></nav>'
        "</main></body></html>"
    )
    result = extract(HtmlResponse(url=URL, body=html.encode(), encoding="utf-8"))
    assert result.product is None, (markup, cards, result.product and result.product["name"])
    assert result.rejected in ("listing", "no_product")


def test_a_product_page_whose_name_is_also_a_link_stays_a_product() -> None:
    # the heading names the product: its name linking elsewhere (a crumb, a "view
    # the collection" link) says nothing of the page
    html = (
        "<html><head><title>Kestrel Eco Novel B104</title>"
        + _json_ld(0).replace("B004", "B104")
        + "</head><body>"
        '<nav class="crumbs"><a href="/">Home</a> <a href="/books/novel-0.html">'
        "Kestrel Eco Novel B104</a></nav><h1>Kestrel Eco Novel B104</h1>"
        '<p class="price">$10.99</p><button class="add-to-cart">Add to cart</button>'
        "</body></html>"
    )
    response = HtmlResponse(
        url="https://shop.example/p/novel-0.html", body=html.encode(), encoding="utf-8"
    )
    result = extract(response)
    assert result.product is not None and result.product["price"] == Decimal("10.99")


def _table(linked: str) -> str:
    links = {
        "": "{mm} mm",
        "a": "<a href=/p/screw-{mm}mm>Wood screw {mm} mm</a>",
        "onclick": "<span onclick=\"location.href='/p/screw-{mm}mm'\">Wood screw {mm} mm</span>",
    }
    rows = "".join(
        f"<tr><td>{links[linked].format(mm=mm)}"
        f"</td><td class='price'>${mm}.00</td><td><button>Add to cart</button></td></tr>"
        for mm in (3, 4, 5)
    )
    return (
        "<html><head><title>Wood Screws</title></head><body><main><h1>Wood Screws</h1>"
        f"<table><tr><th>Size</th><th>Price</th><th></th></tr>{rows}</table></main></body></html>"
    )


def test_a_table_of_priced_variants_without_links_is_one_product() -> None:
    # class: grouped-product and tier-price tables: each row a size of the product with
    # its price and buy button, none linking to another page; the first row's price
    response = HtmlResponse(
        url="https://shop.example/p/wood-screws", body=_table("").encode(), encoding="utf-8"
    )
    result = extract(response)
    assert result.product is not None, result.rejected
    assert result.product["price"] == Decimal("3.00")


@pytest.mark.parametrize("linked", ["a", "onclick"])
def test_a_table_whose_rows_link_to_products_is_a_listing(linked: str) -> None:
    response = HtmlResponse(
        url="https://shop.example/c/screws", body=_table(linked).encode(), encoding="utf-8"
    )
    result = extract(response)
    assert result.product is None
    assert result.rejected in ("listing", "no_product")
