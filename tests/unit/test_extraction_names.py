"""The product's name as the page shows it (its heading), without the shop's name:
a markup name that adds a variant or the product-code row to the heading, a title
carrying the shop's name, the heading's words glued together in the markup, a
code row inside the heading (issue 7)."""

from __future__ import annotations

import json

import pytest
from scrapy.http import HtmlResponse

from crawler.extraction import extract_product
from crawler.extraction.weigh import site_names, strip_site_name

URL = "https://www.lunashop.example/p/robe"


def page(body: str, head: str = "", url: str = URL) -> HtmlResponse:
    html = f"<html><head>{head}</head><body>{body}</body></html>"
    return HtmlResponse(url=url, body=html.encode("utf-8"), encoding="utf-8")


def ld(name: str) -> str:
    data = {
        "@context": "https://schema.org", "@type": "Product", "name": name,
        "offers": {"@type": "Offer", "price": "59.00", "priceCurrency": "USD"},
    }
    return f'<script type="application/ld+json">{json.dumps(data)}</script>'


BUY = '<span class="price">$59.00</span><button class="add-to-cart">Add to cart</button>'


def test_markup_name_with_a_variant_suffix_gives_way_to_the_heading() -> None:
    body = (
        '<div itemscope itemtype="https://schema.org/Product">'
        '<h1 itemprop="name" content="Linen Dress Robe - Free size fit for S/M/L / Blue">'
        "Linen Dress Robe</h1>"
        '<div itemprop="offers" itemscope itemtype="https://schema.org/Offer">'
        '<meta itemprop="price" content="59.00"><meta itemprop="priceCurrency" content="USD">'
        f"</div>{BUY}</div>"
    )
    product = extract_product(page(body))
    assert product is not None
    assert product["name"] == "Linen Dress Robe"
    assert product["provenance"]["name"] == "visible"


def test_markup_name_with_more_words_of_its_own_is_kept() -> None:
    # not a variant: the words go on without a separator, the markup's name stays
    product = extract_product(page(f"<h1>Linen Dress</h1>{BUY}", ld("Linen Dress Robe Deluxe")))
    assert product is not None
    assert product["name"] == "Linen Dress Robe Deluxe"


def test_code_row_inside_the_heading_is_not_the_name() -> None:
    body = (
        '<div itemscope itemtype="https://schema.org/Product">'
        '<h1 itemprop="name">Magellan L-Shaped Desk, Espresso '
        '<small class="item_sku"><span itemprop="sku">Item&#160;# 101095</span></small></h1>'
        '<div itemprop="offers" itemscope itemtype="https://schema.org/Offer">'
        '<meta itemprop="price" content="59.00"><meta itemprop="priceCurrency" content="USD">'
        f"</div>{BUY}</div>"
    )
    product = extract_product(page(body))
    assert product is not None
    assert product["name"] == "Magellan L-Shaped Desk, Espresso"
    assert product["sku"] == "101095"


def test_code_row_in_the_heading_without_markup() -> None:
    body = f"<h1>Magellan Desk <span>SKU: MD-4410</span></h1>{BUY}"
    product = extract_product(page(body, '<meta property="og:type" content="product">'))
    assert product is not None
    assert product["name"] == "Magellan Desk"


def test_og_title_with_the_shop_name_and_glued_words_gives_the_heading() -> None:
    head = (
        '<title>HEART CLUBHeart Button Cardigan | lunashop | Shop Korean fashion</title>'
        '<meta property="og:type" content="product">'
        '<meta property="og:site_name" content="LUNASHOP">'
        '<meta property="og:title" content="HEART CLUBHeart Button Cardigan | lunashop">'
    )
    body = (
        '<h1 class="logo"><a href="/"><img src="/logo.png" alt="LUNASHOP"></a></h1>'
        f"<h1>HEART CLUB<br>Heart Button Cardigan</h1>{BUY}"
    )
    product = extract_product(page(body, head))
    assert product is not None
    assert product["name"] == "HEART CLUB Heart Button Cardigan"


def test_og_title_with_the_shop_name_from_the_host() -> None:
    head = (
        '<meta property="og:type" content="product">'
        '<meta property="og:title" content="Button Knit Cardigan – Lunashop">'
        '<meta property="product:price:amount" content="59.00">'
        '<meta property="product:price:currency" content="USD">'
    )
    product = extract_product(page("<p>A cardigan.</p>", head))
    assert product is not None
    assert product["name"] == "Button Knit Cardigan"


def test_strip_site_name() -> None:
    names = site_names("https://www.lunashop.example/p/1", "Luna Shop")
    assert set(names) == {"lunashop", "lunashopexample"}
    assert strip_site_name("Cardigan | Luna Shop | Korean fashion", names) == "Cardigan"
    assert strip_site_name("Cardigan - lunashop.example", names) == "Cardigan"
    # the first part stays, and a part that is not the shop's name too
    assert strip_site_name("Lunashop | Gift Card", names) == "Lunashop | Gift Card"
    assert strip_site_name("Cardigan - Navy", names) == "Cardigan - Navy"


@pytest.mark.parametrize(
    "heading",
    [
        # a sticker on the name
        '<h1>Silk Robe <span class="badge">New</span></h1>',
        # a copy for screen readers only
        '<h1>Silk Robe<span class="sr-only"> product page</span></h1>',
        # a favourites widget and its pop-up, hidden from assistive technology
        '<h1>Silk Robe <div class="add-to-list" aria-hidden="true"><a title="Favourites">'
        '<i class="i-heart"></i></a><div class="popup"><span>Successfully Saved!</span>'
        "<span>Create New List</span></div></div></h1>",
    ],
)
def test_what_the_shopper_does_not_read_as_the_name_is_left_out(heading: str) -> None:
    # class: headings carrying a badge, a screen-reader suffix or a favourites widget
    product = extract_product(page(f"<main>{heading}{BUY}</main>"))
    assert product is not None
    assert product["name"] == "Silk Robe"


def test_a_shown_copy_hidden_from_screen_readers_is_the_name() -> None:
    # an inline aria-hidden copy beside a screen-reader copy: the shown one is read
    heading = '<h1><span aria-hidden="true">Silk Robe</span><span class="sr-only">Silk robe, ' \
        "long</span></h1>"
    product = extract_product(page(f"<main>{heading}{BUY}</main>"))
    assert product is not None
    assert product["name"] == "Silk Robe"
