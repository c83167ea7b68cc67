"""Marketplace-style product pages (issue 42, point 1): the page's own product by what a
person sees.

Class of pages: a marketplace's product pages of several country sites (hundreds of KB
of HTML, no JSON-LD, microdata or ``og:type``), whose first ``<h1>`` is a promotion
banner, whose buy control is a submit input without a value labelled by another element,
whose price is split into parts beside an off-screen copy, surrounded by dozens of other
products' cards with prices, ratings and stock lines, and whose code sits under a label
in a details table or list. Out of stock, such a page has no price and no buy control.
The pages are generated (:mod:`tests.support.marketplace_pages`), written from that
description."""

from __future__ import annotations

from decimal import Decimal

import pytest
from lxml import html as lxml_html
from scrapy.http import HtmlResponse

from crawler.extraction import extract
from crawler.extraction.visible.buy import is_buy_control
from crawler.extraction.visible.page import read_visible_page
from crawler.extraction.visible.price_text import price_text
from tests.support.marketplace_pages import LANGUAGES, marketplace_page

LAYOUTS = ("a", "b", "c")
FIELDS = ("name", "price", "currency", "availability", "sku")


def _extract(url: str, html: str):  # type: ignore[no-untyped-def]
    return extract(HtmlResponse(url=url, body=html.encode(), encoding="utf-8"))


def test_the_generated_pages_are_marketplace_sized() -> None:
    _, html, _ = marketplace_page("en", "a")
    assert len(html) > 250_000
    assert html.count('class="carousel-card"') >= 50
    assert html.index('class="promo"') < html.index('id="product-title"')
    assert "application/ld+json" not in html and "itemscope" not in html and "og:type" not in html


@pytest.mark.parametrize("in_stock", [True, False])
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("lang", sorted(LANGUAGES))
def test_a_marketplace_page(lang: str, layout: str, in_stock: bool) -> None:
    """In stock: its price and its buy control (a submit input or icon button labelled
    by another element, or by aria-label), found and enabled. Out of stock: no price,
    no buy control, ``OutOfStock``."""
    url, html, expected = marketplace_page(lang, layout, in_stock=in_stock)
    result = _extract(url, html)
    assert result.product is not None, result.rejected
    assert {k: result.product[k] for k in FIELDS} == expected
    page = read_visible_page(lxml_html.fromstring(html), url)
    assert page.add_to_cart is page.buy_enabled is in_stock
    if not in_stock:
        assert result.product["price"] is None and result.product["availability"] == "OutOfStock"


@pytest.mark.parametrize("in_stock", [True, False])
def test_a_marketplace_page_of_over_a_megabyte(in_stock: bool) -> None:
    url, html, expected = marketplace_page("de", "a", in_stock, cards=150, script_kb=1100)
    assert 1_000_000 < len(html.encode()) < 1_500_000
    result = _extract(url, html)
    assert result.product is not None, result.rejected
    assert {k: result.product[k] for k in FIELDS} == expected


def _category(unavailable: bool, code: bool) -> tuple[str, str]:
    """A category page of the same marketplace: a heading, many cards, and (to try the
    typing rule's limits) an unavailability line or a code row of its own."""
    url, html, _ = marketplace_page("en", "a", in_stock=False)
    start, end = html.index('<div id="main-product">'), html.index('<div id="details">')
    own = "<h1>Drill drivers</h1>"
    if unavailable:
        own += "<p>Currently unavailable.</p>"
    html = html[:start] + own + html[end:]
    if not code:
        html = html.replace("<th class=\"label\">Item number</th>", "<th>Voltage range</th>")
    html = html.replace(
        "<title>Halvorsen Cordless Drill Driver 18V with 2 Batteries", "<title>Drill drivers"
    )
    return f"{url.split('/item/')[0]}/c/drills", html


@pytest.mark.parametrize(("unavailable", "code"), [(False, False), (True, False), (False, True)])
def test_a_listing_of_cards_stays_a_listing(unavailable: bool, code: bool) -> None:
    result = _extract(*_category(unavailable, code))
    assert result.product is None
    assert result.rejected == "listing"


def test_an_unavailable_page_whose_heading_the_title_does_not_repeat_is_no_product() -> None:
    url, html, _ = marketplace_page("en", "a", in_stock=False)
    html = html.replace(
        "<title>Halvorsen Cordless Drill Driver 18V with 2 Batteries", "<title>Power tools"
    )
    assert _extract(url, html).product is None


@pytest.mark.parametrize(
    ("markup", "expected"),
    [
        # whole, decimal mark, fraction: one price (the mark holds no digit)
        (
            '<span class="p"><span class="price-symbol">$</span><span class="price-whole">'
            '1,299<span class="price-decimal">.</span></span><span class="price-fraction">'
            "95</span></span>",
            "$1299.95",
        ),
        # an off-screen copy placed by an inline style: the price's twin
        (
            '<span class="p"><span style="position:absolute;left:-10000px;width:1px">'
            '24,99 €</span><span aria-hidden="true"><span class="price-whole">24'
            '<span class="price-decimal">,</span></span><span class="price-fraction">99'
            '</span><span class="price-symbol">€</span></span></span>',
            "24,99 €",
        ),
        (
            '<span class="p"><span style="clip: rect(0 0 0 0); position: absolute">'
            "¥8,999</span><span>¥8,999</span></span>",
            "¥8,999",
        ),
    ],
)
def test_a_split_price_is_one_price(markup: str, expected: str) -> None:
    assert price_text(lxml_html.fromstring(markup)) == expected


@pytest.mark.parametrize(
    "markup",
    [
        '<div><form action="/x"><input type="submit" aria-labelledby="l1"></form>'
        '<span id="l1">Add to Cart</span></div>',
        '<div><span><input type="submit" aria-labelledby="l2 l3"></span>'
        '<span id="l2">In den</span> <span id="l3">Einkaufswagen</span></div>',
        '<div><input type="submit" aria-label="Ajouter au panier"></div>',
        '<div><button aria-labelledby="l4"><svg></svg></button>'
        '<span id="l4">カートに入れる</span></div>',
    ],
)
def test_a_control_labelled_by_another_element_is_a_buy_control(markup: str) -> None:
    root = lxml_html.fromstring(markup)
    control = next(el for el in root.iter("input", "button"))
    assert is_buy_control(control)


def test_a_submit_input_labelled_otherwise_is_no_buy_control() -> None:
    root = lxml_html.fromstring(
        '<div><input type="submit" aria-labelledby="l1"><span id="l1">Search</span></div>'
    )
    assert not is_buy_control(next(root.iter("input")))


def test_the_japanese_price_has_no_fraction() -> None:
    url, html, expected = marketplace_page("ja", "b")
    product = _extract(url, html).product
    assert product is not None and product["price"] == Decimal("8999") == expected["price"]


@pytest.mark.parametrize("lang", ["de", "en", "fr"])
def test_the_title_heading_is_the_one_the_address_agrees_with(lang: str) -> None:
    """A ``<title>`` that names only the shop: the address's slug tells the product's
    ``<h1>`` from the promotion banner's first one."""
    url, html, expected = marketplace_page(lang, "a")
    name = LANGUAGES[lang].name
    slug = "-".join(w.lower() for w in name.split() if w.isalnum())
    url = url.replace("halvorsen-drill-driver-18v", slug)
    html = html.replace(f"<title>{name} : {LANGUAGES[lang].category} : ", "<title>")
    html = html.replace('<h1 id="title">', "<h1>")
    result = _extract(url, html)
    assert result.product is not None, result.rejected
    assert result.product["name"] == expected["name"]
