"""SKU and price as the shop labels and charges them (issue 29, point 5).

* SKU: the code the page labels as its reference or item number wins over a variant id
  of the structured data, however the label is written ("REF 81070185", "Reference
  number", "Ref.: 81070185 | Colour: black"), and codes in specification tables under
  labels in the page's language ("Numéro d'article", "Kod katalogowy", "Código de
  referencia", "Referentie") are read. Class: shops whose markup carries a variant id
  while the page shows the shop's reference (5 pages of one shop of a public benchmark),
  and spec tables in the page's language (4 pages).
* Price: the price a shopper pays, VAT included where a net price is shown beside it,
  the discounted price beside its list price where the page says it is reduced. Class:
  B2B and EU shops showing the net price first (2 pages), price boxes whose list price
  carries no mark of its own (1 page)."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from scrapy.http import HtmlResponse

from crawler.extraction import extract

URL = "https://shop.example/p/kettle-1.html"


def _ld(sku: str) -> str:
    data = {
        "@context": "https://schema.org", "@type": "Product", "name": "Norvik Kettle",
        "sku": sku,
        "offers": {"@type": "Offer", "price": "53.63", "priceCurrency": "EUR", "sku": sku},
    }
    return f'<script type="application/ld+json">{json.dumps(data)}</script>'


def _product(body: str, head: str = "", price: str = '<p class="price">53,63 €</p>') -> dict:
    html = (
        f"<html><head><title>Norvik Kettle</title>{head}</head><body><h1>Norvik Kettle</h1>"
        f"{price}<button>Add to cart</button>{body}</body></html>"
    )
    product = extract(HtmlResponse(url=URL, body=html.encode(), encoding="utf-8")).product
    assert product is not None
    return product


@pytest.mark.parametrize(
    "row",
    [
        "<div>REF 81070185</div>",
        "<p>Reference number 81070185</p>",
        "<p>Ref.: 81070185 | Colour: black</p>",
    ],
)
def test_the_labelled_reference_beats_the_structured_variant_id(row: str) -> None:
    product = _product(row, _ld("40002-BLK"))
    assert (product["sku"], product["provenance"]["sku"]) == ("81070185", "visible")


@pytest.mark.parametrize(
    "label",
    ["Numéro d'article", "Kod katalogowy", "Código de referencia", "Referentie"],
)
def test_codes_under_labels_in_the_pages_language(label: str) -> None:
    row = f"<table><tr><td>Brand</td><td>Norvik</td></tr><tr><td>{label}</td><td>NV-2231</td></tr>"
    assert _product(row + "</table>")["sku"] == "NV-2231"


def test_a_coupon_code_is_still_no_sku() -> None:
    assert _product("<p>Code FIVE4U for 5% off</p>")["sku"] is None


@pytest.mark.parametrize(
    "price,paid",
    [
        ('<p class="price">£10.00 <small>excl. VAT</small></p>'
         '<p class="price">£12.00 <small>incl. VAT</small></p>', "12.00"),
        ('<div class="price"><span>£10.00</span> ex VAT</div>'
         '<div class="price-incl"><span>£12.00</span> inc VAT</div>', "12.00"),
        ("<p>Price: 100,00 € netto</p><p>119,00 € brutto</p>", "119.00"),
        ('<div class="product-price"><span class="price">10,00 € HT</span>'
         '<span class="price">12,00 € TTC</span></div>', "12.00"),
        ('<p class="price">bez DPH 3,56 €</p><p class="price">s DPH 4,27 €</p>', "4.27"),
        ('<div class="prices"><div><span>Net price</span><span>€10.00</span></div><div><span>'
         'Gross price</span><span>€12.30</span></div></div>', "12.30"),
        ('<p class="price">£10.00 + VAT</p><p>£12.00 inc. VAT</p>', "12.00"),
        ("<p>Our price: £10.00 (£12.00 inc VAT)</p>", "12.00"),
        ('<p class="price">£12.00</p>', "12.00"),
    ],
)
def test_the_vat_included_price_is_paid(price: str, paid: str) -> None:
    assert _product("", price=price)["price"] == Decimal(paid)


@pytest.mark.parametrize(
    "price,paid",
    [
        ('<p class="price">£80.00</p><p class="price special">£60.00</p>'
         "<p>You save £20.00</p>", "60.00"),
        ('<div class="price"><p>£80.00</p><p>£60.00</p></div><p>Save 25%</p>', "60.00"),
        ('<div class="product-price"><span class="price">£80.00</span> '
         '<span class="price">£60.00</span> <span class="badge">Sale</span></div>', "60.00"),
        ('<div><span style="text-decoration: line-through">£80.00</span> <span>£60.00</span>'
         "</div>", "60.00"),
        ("<div class=price><div class=p1>£80.00</div><div class=p2>£60.00</div></div>"
         "<div>-25%</div>", "60.00"),
        # a discount code is no reduction everyone gets
        ('<p class="price">£80.00</p><p class="price">£60.00 with discount code SAVE</p>',
         "80.00"),
    ],
)
def test_the_discounted_price_is_paid(price: str, paid: str) -> None:
    assert _product("", price=price)["price"] == Decimal(paid)
