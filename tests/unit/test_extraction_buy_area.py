"""Stock with one precedence (issue 42, point 2): this product's enabled buy control
says ``InStock`` unless wording in the buy area says that this product is out of stock;
wording about a channel ("Unavailable for store pickup", "Delivery not available to
90210"), an image ("Image not available") or other products' cards ("Only 1 left in
stock") is not this product's stock.

Class of pages: in-stock product pages read ``OutOfStock`` from a channel's or an image
placeholder's wording, or ``LimitedAvailability`` from recommendation cards. The pages
are generated (:mod:`tests.support.marketplace_pages`), in several layouts and
languages, without structured data (the visible wording decides) and with JSON-LD
``InStock`` (where a stock element would override it)."""

from __future__ import annotations

import pytest
from scrapy.http import HtmlResponse

from crawler.extraction import extract
from tests.support.marketplace_pages import (
    SHOP_WORDS,
    button,
    channel_buy_area,
    image_gallery,
    shop_page,
)

LAYOUTS = ("a", "b", "c")


def _availability(url: str, html: str) -> str | None:
    product = extract(HtmlResponse(url=url, body=html.encode(), encoding="utf-8")).product
    assert product is not None
    return product["availability"]


@pytest.mark.parametrize("markup", [None, "InStock"])
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("lang", sorted(SHOP_WORDS))
def test_a_channel_that_does_not_sell_it_is_no_stock_state(
    lang: str, layout: str, markup: str | None
) -> None:
    page = shop_page(lang, layout, channel_buy_area(lang, layout), ld_availability=markup)
    assert _availability(*page) == "InStock"


@pytest.mark.parametrize("markup", [None, "InStock"])
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("lang", ["de", "en", "es", "fr"])
def test_an_image_not_available_is_no_stock_state(
    lang: str, layout: str, markup: str | None
) -> None:
    words = SHOP_WORDS[lang]
    page = shop_page(
        lang, layout, button(words, layout), gallery=image_gallery(lang, layout),
        ld_availability=markup,
    )
    assert _availability(*page) == "InStock"


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("lang", sorted(SHOP_WORDS))
def test_other_products_only_one_left_is_not_this_products_stock(lang: str, layout: str) -> None:
    words = SHOP_WORDS[lang]
    url, html = shop_page(lang, layout, button(words, layout))
    assert html.count(words.left) >= 6
    assert _availability(url, html) == "InStock"


@pytest.mark.parametrize(
    ("lang", "line"),
    [
        ("en", "Currently unavailable."),
        ("en", "Out of stock - free delivery on orders over $50"),
        ("de", "Derzeit nicht verfügbar. Lieferung nach 10115 möglich"),
        ("fr", "Rupture de stock, retrait en magasin indisponible"),
        ("es", "Agotado"),
        ("ja", "在庫切れ"),
    ],
)
def test_this_products_own_unavailability_beside_its_button_is_out_of_stock(
    lang: str, line: str
) -> None:
    words = SHOP_WORDS[lang]
    area = f'<p class="buy-line">{line}</p>' + button(words, "a").replace(
        "<button", "<button disabled"
    )
    assert _availability(*shop_page(lang, "a", area)) == "OutOfStock"


@pytest.mark.parametrize("lang", sorted(SHOP_WORDS))
def test_a_channel_line_beside_no_buy_control_and_no_other_wording_says_nothing(
    lang: str,
) -> None:
    words = SHOP_WORDS[lang]
    area = f"<p>{words.pickup_out}</p>"
    assert _availability(*shop_page(lang, "b", area, ld_availability="InStock")) == "InStock"


def _cards_after_the_buy_box(lang: str, shape: str) -> tuple[str, str]:
    """Recommendation cards right after the buy control that the page's records do not
    hold: one card alone, or two under a heading of their own, each with its own stock
    line ("Only 1 left in stock")."""
    words = SHOP_WORDS[lang]
    card = (
        '<div class="rec"><a href="/p/other-{i}"><img src="/img/o{i}.jpg" alt=""></a>'
        '<a href="/p/other-{i}">{name}</a><span>{price}</span><span>{left}</span></div>'
    )
    cards = [
        card.format(i=i, name=f"Torvik Glass Carafe {i} Litre", price=words.price, left=words.left)
        for i in range(2)
    ]
    strip = cards[0] if shape == "one" else f"<div><h3>{words.also}?</h3>{''.join(cards)}</div>"
    return shop_page(lang, "a", button(words, "a") + strip)


@pytest.mark.parametrize("shape", ["one", "headed"])
@pytest.mark.parametrize("lang", sorted(SHOP_WORDS))
def test_a_recommendation_cards_only_one_left_is_not_this_products_stock(
    lang: str, shape: str
) -> None:
    assert _availability(*_cards_after_the_buy_box(lang, shape)) == "InStock"
