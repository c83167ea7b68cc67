"""Field normalisation: prices, currencies, availability, GTINs, text, URLs."""

from __future__ import annotations

from decimal import Decimal

import pytest

from crawler.extraction.normalize.availability import (
    availability_from_text,
    normalize_availability,
)
from crawler.extraction.normalize.currency import (
    currency_from_text,
    currency_hint_for_url,
    parse_currency,
)
from crawler.extraction.normalize.identifiers import normalize_gtin
from crawler.extraction.normalize.price import parse_price
from crawler.extraction.normalize.text import normalize_html_text, normalize_text
from crawler.extraction.normalize.urls import absolute_url, normalize_images


@pytest.mark.parametrize(
    ("value", "currency", "expected"),
    [
        ("$1,299.00", None, "1299.00"),
        ("1.299,00 €", None, "1299.00"),
        ("R$ 1.299,90", None, "1299.90"),
        ("$24.990", None, "24990"),
        ("24.990", "CLP", "24990"),
        ("24.990", None, "24.990"),  # a machine number keeps its dot
        ("1299.00", None, "1299.00"),
        (1299.5, None, "1299.5"),
        (45, None, "45"),
        ("12,50", None, "12.50"),
        ("1 299,00 zł", None, "1299.00"),
        ("¥1,200", "JPY", "1200"),
        # digits and separators of other scripts; a Swiss apostrophe; three decimals
        ("٤٩٫٩٩ ر.س", None, "49.99"),
        ("۱۲۹٬۰۰۰ تومان", None, "129000"),
        ("￥１２，８００", None, "12800"),
        ("CHF 1’299.00", None, "1299.00"),
        ("CHF 1'299.00", None, "1299.00"),
        ("KWD 12.500", None, "12.500"),
        ("12.500", "BHD", "12.500"),
        ("KWD 1,250.750", None, "1250.750"),
        ("0", None, "0"),
        (["", "19.99"], None, "19.99"),
        ("free", None, None),
        ("", None, None),
        (None, None, None),
        (True, None, None),
        ("-5.00", None, None),
        ({"price": 1}, None, None),
    ],
)
def test_parse_price(value: object, currency: str | None, expected: str | None) -> None:
    result = parse_price(value, currency)
    assert result == (Decimal(expected) if expected is not None else None)
    assert result is None or isinstance(result, Decimal)


@pytest.mark.parametrize(
    ("text", "hint", "expected"),
    [
        ("$10", None, None),  # USD, CAD, AUD, MXN...: the page must say
        ("$10", "CLP", "CLP"),
        ("$10", "EUR", None),  # "$" is no euro: unknown rather than a guess
        ("US$ 10", "CLP", "USD"),
        ("R$ 10", None, "BRL"),
        ("C$10", None, "CAD"),
        ("10 €", None, "EUR"),
        ("£10", None, "GBP"),
        ("10 zł", None, "PLN"),
        ("CLP 24.990", None, "CLP"),
        ("19.99 USD", None, "USD"),
        ("¥1200", None, "JPY"),
        ("¥1200", "CNY", "CNY"),
        ("199 kr", "NOK", "NOK"),
        ("199 kr", None, "SEK"),
        # abbreviations before the amount; a symbol made of letters is a word of its own
        ("Rs. 1,299", None, "INR"),
        ("Rs 1,299", "PKR", "PKR"),
        ("RM 49.90", None, "MYR"),
        ("Rp 49.000", None, "IDR"),
        ("Lei 49", None, "RON"),
        ("Kleider 49 €", None, "EUR"),
        ("RMA 49", None, None),
        # more countries' symbols and abbreviations beside the amount (class: shops of
        # Turkey, Vietnam, Peru, Croatia, Serbia, Egypt...)
        ("1.299,90 TL", None, "TRY"),
        ("1.299.000 đ", None, "VND"),
        ("S/ 49.90", None, "PEN"),
        ("S/. 49.90", None, "PEN"),
        ("RD$ 1,200", None, "DOP"),
        ("49,90 kn", None, "HRK"),
        ("1.200 din.", None, "RSD"),
        ("ج.م 499", None, "EGP"),
        ("SFr. 49.90", None, "CHF"),
        ("TLX 40", None, None),
        ("dinner 40", None, None),
        ("19.99", None, None),
        (None, None, None),
    ],
)
def test_currency_from_text(text: str | None, hint: str | None, expected: str | None) -> None:
    assert currency_from_text(text, hint) == expected


def test_parse_currency_and_hints() -> None:
    assert parse_currency("usd") == "USD"
    assert parse_currency(" EUR ") == "EUR"
    assert parse_currency("€") == "EUR"
    assert parse_currency("") is None
    assert parse_currency("XYZ") is None
    # codes shops still write for a current one (class: Russian shops' "RUR" in their
    # markup and feeds, "RMB" for the yuan): a price in them would lose its currency
    assert parse_currency("RUR") == "RUB"
    assert parse_currency("rmb") == "CNY"
    assert currency_from_text("249 RUR") == "RUB"
    assert currency_hint_for_url("https://www.tienda.cl/p/1") == "CLP"
    assert currency_hint_for_url("https://shop.com.br/") == "BRL"
    assert currency_hint_for_url("https://shop.example/") is None


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("http://schema.org/InStock", "InStock"),
        ("https://schema.org/OutOfStock", "OutOfStock"),
        ("schema:PreOrder", "PreOrder"),
        ("InStock", "InStock"),
        ("in_stock", "InStock"),
        ("instock", "InStock"),
        ("in stock", "InStock"),
        ("out of stock", "OutOfStock"),
        ("SoldOut", "OutOfStock"),
        # Open Graph product:availability values (Facebook's catalog vocabulary)
        ("oos", "OutOfStock"),
        ("available for order", "InStock"),
        ("pending", None),
        ("https://schema.org/BackOrder", "BackOrder"),
        ("Discontinued", "Discontinued"),
        ("http://schema.org/LimitedAvailability", "LimitedAvailability"),
        ("https://schema.org/InStoreOnly", "InStock"),
        (["", "OutOfStock"], "OutOfStock"),
        ({"@id": "http://schema.org/InStock"}, "InStock"),
        ("mystery", None),
        (None, None),
    ],
)
def test_normalize_availability(value: object, expected: str | None) -> None:
    assert normalize_availability(value) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("In stock", "InStock"),
        ("22 in stock", "InStock"),
        ("(22 available)", "InStock"),
        ("Out of stock", "OutOfStock"),
        ("Sold out", "OutOfStock"),
        ("Currently unavailable.", "OutOfStock"),
        ("0 in stock", "OutOfStock"),
        ("(0 available)", "OutOfStock"),
        ("Only 3 left!", "LimitedAvailability"),
        ("Only 3 left in stock - order soon", "LimitedAvailability"),
        ("Pre-order", "PreOrder"),
        ("Preorder now, ships in May", "PreOrder"),
        ("Available on backorder", "BackOrder"),
        ("Back-order", "BackOrder"),
        ("This product is discontinued", "Discontinued"),
        ("Auf Lager", "InStock"),
        ("Agotado", "OutOfStock"),
        ("Free shipping over $50", None),
        ("", None),
    ],
)
def test_availability_from_text(text: str, expected: str | None) -> None:
    assert availability_from_text(text) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("4006381333931", "4006381333931"),
        ("4 006381 333931", "4006381333931"),
        ("0-12345-67890-5", "012345678905"),
        ("96385074", "96385074"),
        ("10012345678902", "10012345678902"),
        (4006381333931, "4006381333931"),
        ("isbn:9780306406157", "9780306406157"),
        ("12345", None),
        ("ABC1234567890", None),
        ("", None),
        (None, None),
        (["", "4006381333931"], "4006381333931"),
    ],
)
def test_normalize_gtin(value: object, expected: str | None) -> None:
    assert normalize_gtin(value) == expected


def test_text_helpers() -> None:
    assert normalize_text("  a\n\t b\xa0 c ") == "a b c"
    assert normalize_text("   ") is None
    assert normalize_text(None) is None
    assert normalize_html_text("<p>One &amp; <b>two</b></p><p>three</p>") == "One & two three"
    assert normalize_html_text("Fish &amp; chips") == "Fish & chips"


def test_urls() -> None:
    base = "https://shop.example/p/1"
    assert absolute_url("/img/a b.jpg", base) == "https://shop.example/img/a%20b.jpg"
    assert absolute_url("//cdn.example/x.jpg", base) == "https://cdn.example/x.jpg"
    assert absolute_url("data:image/png;base64,xx", base) is None
    assert absolute_url("javascript:x()", base) is None
    assert absolute_url("http://[bad", base) is None
    assert normalize_images(
        ["/a.jpg", {"@type": "ImageObject", "url": "/b.jpg"}, {"contentUrl": ["/c.jpg"]},
         "/a.jpg", 3],
        base,
    ) == ["https://shop.example/a.jpg", "https://shop.example/b.jpg", "https://shop.example/c.jpg"]
    assert normalize_images("/a.jpg", base) == ["https://shop.example/a.jpg"]
    assert normalize_images(None, base) == []
