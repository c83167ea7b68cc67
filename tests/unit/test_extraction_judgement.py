"""What a careful reader of the page would say: stock states the page does not back,
pages that contradict themselves, hidden-looking styles, was/now prices, title names."""

from __future__ import annotations

import json
from decimal import Decimal

from scrapy.http import HtmlResponse

from crawler.extraction import extract_product


def page(body: str, head: str = "", url: str = "https://shop.example/p/widget") -> HtmlResponse:
    html = f"<html lang='en-US'><head>{head}</head><body>{body}</body></html>"
    return HtmlResponse(url=url, body=html.encode("utf-8"), encoding="utf-8")


def ld(availability: str, name: str = "Oak Desk Lamp") -> str:
    data = {
        "@context": "https://schema.org", "@type": "Product", "name": name,
        "offers": {"@type": "Offer", "price": "49.00", "priceCurrency": "USD",
                   "availability": f"https://schema.org/{availability}"},
    }
    return f'<script type="application/ld+json">{json.dumps(data)}</script>'


BUY = "<form action='/cart/add'><button>Add to cart</button></form>"
LAMP = "<h1>Oak Desk Lamp</h1><p class='price'>$49.00</p>" + BUY


def test_limited_availability_from_markup_alone_is_in_stock_when_the_page_sells_it() -> None:
    product = extract_product(page(LAMP, ld("LimitedAvailability")))
    assert product is not None and product["availability"] == "InStock"
    # loose wording of one size is no limited-stock wording of the product
    body = LAMP + "<ul class='sizes'><li>S</li><li>XL <span>Sold out</span></li></ul>"
    product = extract_product(page(body, ld("LimitedAvailability")))
    assert product is not None and product["availability"] == "InStock"


def test_limited_availability_stays_when_the_page_says_only_a_few_are_left() -> None:
    body = LAMP + "<p class='stock'>Only 2 left in stock</p>"
    product = extract_product(page(body, ld("LimitedAvailability")))
    assert product is not None and product["availability"] == "LimitedAvailability"


def test_limited_availability_from_markup_without_a_buy_button_is_kept() -> None:
    body = "<h1>Oak Desk Lamp</h1><p class='price'>$49.00</p>"
    product = extract_product(page(body, ld("LimitedAvailability")))
    assert product is not None and product["availability"] == "LimitedAvailability"


def test_out_of_stock_markup_and_a_buy_button_not_tied_to_the_product_is_no_state() -> None:
    # the page's heading is a promotion, not the product: the button decides nothing
    body = "<h1>Free shipping on orders over $99</h1><div><p>Desk lamps</p></div>" + BUY
    product = extract_product(page(body, ld("OutOfStock")))
    assert product is not None and product["name"] == "Oak Desk Lamp"
    assert product["availability"] is None
    assert "availability" not in product["provenance"]


def test_out_of_stock_markup_and_the_products_own_buy_button_is_in_stock() -> None:
    product = extract_product(page(LAMP, ld("OutOfStock")))
    assert product is not None and product["availability"] == "InStock"


def test_a_page_saying_it_cannot_be_bought_online_has_no_stock_state() -> None:
    body = LAMP + (
        "<div class='panel'><p><b>Please note:</b> This bike is not eligible for shipping and"
        " can only be purchased at one of our retail locations.</p></div>"
    )
    product = extract_product(page(body, ld("InStock")))
    assert product is not None and product["availability"] is None
    body = LAMP + "<p>This item cannot be purchased online.</p>"
    product = extract_product(page(body, ld("InStock")))
    assert product is not None and product["availability"] is None


def test_store_pickup_wording_is_not_a_page_refusing_online_sales() -> None:
    body = LAMP + "<p>Free store pickup: order online, collect in our stores.</p>"
    product = extract_product(page(body, ld("InStock")))
    assert product is not None and product["availability"] == "InStock"


def test_a_backface_visibility_style_hides_nothing() -> None:
    body = (
        "<div style='position: relative; -webkit-backface-visibility: hidden;'>"
        "<h1>Atomic Wall Clock</h1><span class='price'>$59.95</span>"
        "<p class='availability'>In stock</p>" + BUY + "</div>"
    )
    product = extract_product(page(body))
    assert product is not None
    assert (product["name"], product["price"], product["availability"]) == (
        "Atomic Wall Clock", Decimal("59.95"), "InStock")
    hidden = body.replace("-webkit-backface-visibility: hidden", "visibility: hidden")
    assert extract_product(page(hidden)) is None


def test_now_labelled_amount_beats_the_marked_down_amount_before_it() -> None:
    body = (
        "<h1>Mesh Panel Leggings</h1><h5 class='markdown'>$64.95</h5>"
        "<h5 class='highlight'>Now $52.00</h5>" + BUY
    )
    product = extract_product(page(body))
    assert product is not None and product["price"] == Decimal("52.00")
    body = "<h1>Mesh Panel Leggings</h1><h5>$64.95</h5><h5>$52.00</h5>" + BUY
    product = extract_product(page(body))
    assert product is not None and product["price"] == Decimal("64.95")


def test_a_name_from_the_title_is_the_product_as_the_page_shows_it() -> None:
    head = "<title>Gorilla Playsets Treasure Trove Swing Set You'll Love | Shop | Shop</title>" + (
        ld("InStock", name="")
    )
    body = (
        "<div class='featured'><a href='/p/swing'><strong>Gorilla Playsets</strong> Treasure"
        " Trove Swing Set</a><span class='price'>$49.00</span>" + BUY + "</div>"
    )
    product = extract_product(page(body, head))
    assert product is not None and product["name"] == "Gorilla Playsets Treasure Trove Swing Set"


def test_was_and_now_written_in_one_price_element() -> None:
    # class: price blocks that write "Was X Now Y" in one element, the labels in plain
    # spans with no list-price class: the amount labelled current is paid
    box = "<div class='prices'><span>Was $40.00</span> <span>Now $30.00</span></div>"
    product = extract_product(page("<h1>Oak Desk Lamp</h1>" + box + BUY))
    assert product is not None and product["price"] == Decimal("30.00")
    # a list-price label alone drops its amount; the unlabelled one is paid
    box = "<div class='price'><span>RRP £50.00</span> <b>£42.00</b></div>"
    product = extract_product(page("<h1>Oak Desk Lamp</h1>" + box + BUY))
    assert product is not None and product["price"] == Decimal("42.00")
    # two amounts and no labels: a range, the page's first amount as before
    box = "<div class='price'>$12.97 <span>$24.99</span></div>"
    product = extract_product(page("<h1>Oak Desk Lamp</h1>" + box + BUY))
    assert product is not None and product["price"] == Decimal("12.97")


def test_a_shipping_cost_is_never_the_price() -> None:
    # class: shops printing the delivery cost or a free-shipping threshold near the
    # price, as a price element or as text, in any language
    rows = [
        "<p><b>Shipping:</b> $5.99</p><p><b>Price:</b> $49.00</p>",
        "<p>Free shipping over $50</p><p>Price: $49.00</p>",
        "<p>Envío: 5,99 €</p><p>Precio: 49,00 €</p>",
        "<p class='ship'>Shipping <span class='price'>$5.99</span></p><p class='price'>$49.00</p>",
        "<div><span>Delivery:</span><span class='price'>$4.95</span></div>"
        "<p class='price'>$49.00</p>",
    ]
    for row in rows:
        product = extract_product(page("<h1>Oak Desk Lamp</h1>" + row + BUY))
        assert product is not None and product["price"] == Decimal("49.00"), row
    # a free-shipping badge before the price, or words after it, label nothing
    for row in (
        "<p><span>Free shipping</span><span class='price'>$49.00</span></p>",
        "<p><span class='price'>$49.00</span> + free shipping</p>",
        "<p class='price'>$49.00 <small>+ Free shipping</small></p>",
        "<p class='price'><small>Free shipping</small> $49.00</p>",
    ):
        product = extract_product(page("<h1>Oak Desk Lamp</h1>" + row + BUY))
        assert product is not None and product["price"] == Decimal("49.00"), row


def test_a_sign_after_the_amount_in_a_price_row_written_as_text() -> None:
    # class: pages with no price markup in locales that write the sign after the
    # amount ("49,99 $" in Canadian French, "2 000 ₽"); a sign after a number is not
    # the sign of the amount after it ("Pack of 3 $9.99")
    rows = {
        "<p>Prix : 49,99 $</p>": Decimal("49.99"),
        "<p>Цена: 2 000 ₽</p>": Decimal("2000"),
        "<p>Pack of 3 $9.99</p>": Decimal("9.99"),
    }
    for row, price in rows.items():
        product = extract_product(page("<h1>Oak Desk Lamp</h1>" + row + BUY))
        assert product is not None and product["price"] == price, row
