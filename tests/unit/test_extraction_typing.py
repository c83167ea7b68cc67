"""Page typing, weighing of evidence and provenance: one rule per test."""

from __future__ import annotations

from decimal import Decimal

import pytest
from scrapy.http import HtmlResponse

from crawler.extraction import extract_product
from crawler.extraction.normalize.availability import availability_from_text
from crawler.extraction.normalize.currency import DOLLAR_CURRENCIES
from crawler.extraction.weigh import currency_hint, currency_signals, weigh_name


def page(body: str, head: str = "", url: str = "https://shop.example/p/widget",
         lang: str = "") -> HtmlResponse:
    attr = f' lang="{lang}"' if lang else ""
    html = f"<html{attr}><head>{head}</head><body>{body}</body></html>"
    return HtmlResponse(url=url, body=html.encode("utf-8"), encoding="utf-8")


PRODUCT = (
    "<h1>Oak Desk Lamp</h1><p class='price'>$49.00</p><p class='stock'>In stock</p>"
    "<form action='/cart/add'><button>Add to cart</button></form>"
)


# ------------------------------------------------------------------ page typing


@pytest.mark.parametrize("rows", [1, 2, 3])
def test_a_listing_of_one_two_or_three_rows_is_no_product(rows: int) -> None:
    body = "<h1>Staff picks</h1><table>" + "".join(
        f"<tr><td><a href='/p/lamp-{i}.html'><img src='/i/{i}.png'> Oak Desk Lamp {i}</a></td>"
        f"<td class='cost'>${10 + i}.00</td><td>In stock</td>"
        "<td><form action='/cart/add'><button>Add to cart</button></form></td></tr>"
        for i in range(rows)
    ) + "</table>"
    assert extract_product(page(body, url="https://shop.example/picks/")) is None


def test_a_single_search_result_is_no_product() -> None:
    body = (
        "<h1>Oak Desk Lamp</h1><ol><li><h2><a href='/p/oak-desk-lamp.html'>Oak Desk Lamp"
        "</a></h2><b class='amount'>$49.00</b> In stock <button class='add-to-cart'>Add to cart"
        "</button></li></ol>"
    )
    assert extract_product(page(body, url="https://shop.example/find?q=oak")) is None


def test_an_article_naming_a_price_in_a_sentence_is_no_product() -> None:
    # class: blog posts and buying guides with no price markup that name a product's
    # price in running text ("... at $20.00, available now."); a price row written as
    # text ("Price: $20.00") is at most a label and a few words beside the amount
    article = (
        "<h1>5 lamps under $50</h1><p>Our favourite is the Desk Lamp at $20.00, "
        "available now.</p><p>Posted by Ann</p>"
    )
    assert extract_product(page(article, url="https://shop.example/blog/lamps")) is None
    row = "<h1>Desk Lamp</h1><p>Price: $20.00 incl. VAT</p><p>Available now.</p>"
    product = extract_product(page(row, url="https://shop.example/lamp"))
    assert product is not None and product["price"] == Decimal("20.00")


def test_a_carousel_of_other_products_does_not_hide_the_product() -> None:
    carousel = "<div class='carousel'>" + "".join(
        f"<div class='slide'><a href='/p/{i}'>Other Lamp Number {i}</a><span class='cost'>"
        f"$9{i}.00</span><button class='add-to-cart'>Add to cart</button></div>"
        for i in range(4)
    ) + "</div>"
    product = extract_product(page(PRODUCT + carousel, lang="en-US"))
    assert product is not None
    assert (product["name"], product["price"]) == ("Oak Desk Lamp", Decimal("49.00"))


def test_action_links_beside_the_price_do_not_make_a_card() -> None:
    body = (
        "<h1>Oak Desk Lamp</h1><form><span class='price'>$49.00</span>"
        "<a href='/notify?id=1'>Don't see your size?</a><a href='/fav'>Add to favourites</a>"
        "<button class='add-to-cart'>Add to cart</button></form>"
    )
    product = extract_product(page(body, lang="en-US"))
    assert product is not None and product["price"] == Decimal("49.00")


def test_a_price_range_is_a_product_without_a_single_price() -> None:
    body = (
        "<h1>Crew-Neck Cardigan</h1><h5 class='product-price'><span class='price-low'>$12.97"
        "</span> - $24.99</h5><button class='add-to-cart'>Add to bag</button>"
    )
    product = extract_product(page(body, lang="en-US"))
    # no single price, but the range's "$" on an en-US page: its currency (issue 7)
    assert product is not None and product["price"] is None and product["currency"] == "USD"
    assert product["provenance"]["price"] == "range"


# ---------------------------------------------------------------- availability


def test_hidden_templates_are_not_the_page() -> None:
    body = PRODUCT.replace("In stock", "") + (
        "<div class='stock ng-hide'>Out of stock</div><p class='d-none stock'>Sold out</p>"
        "<p class='stock unvisible'>Out of stock</p>"  # PrestaShop's hiding class
    )
    product = extract_product(page(body, lang="en-US"))
    assert product is not None and product["availability"] == "InStock"


def test_store_pickup_wording_is_no_stock_state() -> None:
    body = PRODUCT.replace(
        "<p class='stock'>In stock</p>",
        "<div class='availability'>Shipping: get it by Friday. Store Pickup: Not Available</div>",
    )
    product = extract_product(page(body, lang="en-US"))
    assert product is not None and product["availability"] == "InStock"


def test_a_shown_buy_button_beats_markup_that_says_out_of_stock() -> None:
    ld = (
        '<script type="application/ld+json">{"@context":"https://schema.org","@type":"Product",'
        '"name":"Oak Desk Lamp","offers":{"@type":"Offer","price":"49.00","priceCurrency":"USD",'
        '"availability":"https://schema.org/OutOfStock"}}</script>'
    )
    body = PRODUCT.replace("<p class='stock'>In stock</p>", "")
    product = extract_product(page(body, head=ld))
    assert product is not None
    assert product["availability"] == "InStock"
    assert product["provenance"]["availability"] == "visible"
    assert product["provenance"]["price"] == "json-ld"


@pytest.mark.parametrize(("text", "state"), [
    ("Nicht auf Lager", "OutOfStock"), ("Esaurito", "OutOfStock"), ("Uitverkocht", "OutOfStock"),
    ("Niedostępny", "OutOfStock"), ("Není skladem", "OutOfStock"), ("Ni na zalogi", "OutOfStock"),
    ("Stoc epuizat", "OutOfStock"), ("Otsas", "OutOfStock"), ("Loppuunmyyty", "OutOfStock"),
    ("Slut i lager", "OutOfStock"), ("Disponibile", "InStock"), ("Op voorraad", "InStock"),
    ("Skladem", "InStock"), ("Na zalogi", "InStock"), ("În stoc", "InStock"), ("Laos", "InStock"),
    ("Varastossa", "InStock"), ("I lager", "InStock"), ("Em estoque", "InStock"),
    ("We'll get this back in stock soon.", "BackOrder"), ("Przedsprzedaż", "PreOrder"),
])
def test_stock_wording_in_many_languages(text: str, state: str) -> None:
    assert availability_from_text(text) == state


# ----------------------------------------------------------------- currency


@pytest.mark.parametrize(("lang", "url", "expected"), [
    ("en-US", "https://shop.example/p/1", "USD"),
    ("es-MX", "https://tienda.com/p/1", "MXN"),
    ("en-CA", "https://shop.com/p/1", "CAD"),
    ("es", "https://tienda.com/p/1", None),  # Spanish: which dollar or peso?
    ("", "https://shop.com.au/p/1", "AUD"),
    ("", "https://shop.com/p/1", "USD"),  # English or unlabelled generic domain: weakest rule
    ("", "http://127.0.0.1:8000/p/1", None),
])
def test_a_bare_dollar_takes_the_pages_own_signals_or_stays_unknown(
    lang: str, url: str, expected: str | None
) -> None:
    product = extract_product(page(PRODUCT, url=url, lang=lang))
    assert product is not None and product["currency"] == expected


def test_currency_codes_in_page_data_are_a_signal() -> None:
    head = '<script>var shop = {"currencyCode": "CAD"};</script>'
    response = page(PRODUCT, head=head, url="http://127.0.0.1:8000/p/1")
    assert ("CAD", "visible") in currency_signals(response)
    product = extract_product(response)
    assert product is not None and product["currency"] == "CAD"


@pytest.mark.parametrize(("body", "encoding"), [
    ('<p>Prix: 12 €</p><script>{"currency": "EUR"}</script>'.encode(), "utf-8"),
    (b"\xef\xbb\xbf" + '<p>été</p><script>{"Currency": "EUR"}</script>'.encode(), "utf-8"),
    (b'<p>\xff\xfe bad</p><script>{"currency": "EUR"}</script>', "utf-8"),
    ('<p>Ω été</p><script>{"currency": "EUR"}</script>'.encode("cp1253", "replace"), "cp1253"),
])
def test_currency_codes_are_read_alike_from_the_body_or_the_text(
    body: bytes, encoding: str
) -> None:
    """The body is searched as it is only when it is the text in UTF-8 (else the text
    is encoded): a byte order mark, an invalid byte or another encoding changes nothing."""
    response = HtmlResponse(url="https://shop.example/p/1", body=body, encoding=encoding)
    assert ("EUR", "visible") in currency_signals(response)


# --------------------------------------------------------------------- names


def test_names_are_weighed_against_heading_and_titles() -> None:
    assert weigh_name("Prima - Leather Laces", None, "SKECHERS Prima - Leather Laces", None,
                      None)[0] == "SKECHERS Prima - Leather Laces"
    assert weigh_name("Kryptonite", "Kryptonite", "Kryptonite", None,
                      "Kryptonite KryptoLok Series 2 - Campus Bike Shop")[0] == (
        "Kryptonite KryptoLok Series 2")
    assert weigh_name("Memory Foam Seat Cushion Car...", None, "Memory Foam Seat Cushion Car...",
                      "Memory Foam Seat Cushion Car Pad", None)[0] == (
        "Memory Foam Seat Cushion Car Pad")
    assert weigh_name("Glow Paper", None, None, "GagGifts.com: Glow Paper", None)[0] == (
        "Glow Paper")


def test_the_code_the_page_shows_beats_the_internal_id() -> None:
    ld = (
        '<script type="application/ld+json">{"@context":"https://schema.org","@type":"Product",'
        '"name":"Oak Desk Lamp","sku":"100325708","offers":{"@type":"Offer","price":"49.00",'
        '"priceCurrency":"USD"}}</script>'
    )
    for label in ("Product code", "Art.-Nr.", "Item #", "Cod produs", "Šifra", "Model"):
        body = PRODUCT + f"<p>{label}: OAK-49</p>"
        product = extract_product(page(body, head=ld))
        assert product is not None and product["sku"] == "OAK-49", label
        assert product["provenance"]["sku"] == "visible"


def test_a_product_headed_by_a_page_header_without_main_is_a_product() -> None:
    # class: themes without <main> that head the product's block with a <header>
    # classed as the page's or product's own header (a site header stays left out)
    body = (
        "<header class='site-header'><a href='/'>Shop</a></header>"
        "<header class='page-header'><h1>Oak Desk Lamp</h1></header>"
        "<div><p class='price'>$49.00</p><form action='/cart/add'><button>Add to cart"
        "</button></form></div>"
    )
    product = extract_product(page(body))
    assert product is not None
    assert product["name"] == "Oak Desk Lamp"


def test_a_heading_in_the_site_header_is_still_not_the_product() -> None:
    body = (
        "<header class='site-header'><h1>Oak Desk Lamp</h1></header>"
        "<div><p class='price'>$49.00</p></div>"
    )
    assert extract_product(page(body)) is None


@pytest.mark.parametrize(("hints", "text"), [
    ([("EUR", "json-ld"), (None, "opengraph")], "12,00 €"),
    ([(None, "profile"), ("EUR", "json-ld")], "$12.00"),  # no dollar: the page's
    ([(None, "profile"), ("AUD", "json-ld")], "$12.00"),
    ([(None, "profile"), (None, ""), (None, "opengraph")], "12,00"),
    ([], None),
])
def test_the_currency_hint_is_the_first_signal_that_serves_the_pages_last(
    hints: list[tuple[str | None, str]], text: str | None
) -> None:
    """The page's own signals (read only when no other serves) come after the others:
    the same hint as one list of every signal, first the fitting one."""
    head = '<script>var shop = {"currencyCode": "CAD"};</script>'
    response = page(PRODUCT, head=head, url="http://127.0.0.1:8000/p/1")
    every = [(c, s) for c, s in [*hints, *currency_signals(response)] if c]
    if text and "$" in text:
        every = [(c, s) for c, s in every if c in DOLLAR_CURRENCIES]
    assert currency_hint(hints, text, response) == (every[0] if every else (None, ""))
