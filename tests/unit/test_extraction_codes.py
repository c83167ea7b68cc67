"""The SKU the page shows (issue 7): labels in many languages, label and value in
adjacent elements, elements marked as the code, the shop's own number over the
maker's, a lone "#code" in the details, and coupon codes that are not SKUs."""

from __future__ import annotations

import json

import pytest
from scrapy.http import HtmlResponse

from crawler.extraction import extract_product
from crawler.extraction.visible.codes import label_kind

BUY = "<h1>Widget</h1><p class='price'>$10.00</p><button>Add to cart</button>"


def sku_of(body: str, head: str = "") -> str | None:
    html = f"<html><head>{head}</head><body>{body}</body></html>"
    response = HtmlResponse(url="https://shop.example/p/widget", body=html.encode("utf-8"),
                            encoding="utf-8")
    product = extract_product(response)
    assert product is not None
    return product["sku"]


@pytest.mark.parametrize(
    ("label", "kind"),
    [
        ("SKU:", "sku"), ("Item #", "sku"), ("Item Id:", "sku"), ("Web ID:", "sku"),
        ("型號", "mpn"), ("型番", "mpn"), ("모델명", "mpn"),
        ("Product Sku:", "sku"), ("Style Number", "sku"), ("Art.-Nr.", "sku"),
        ("Cod produs", "sku"), ("Šifra", "sku"), ("Référence", "sku"),
        ("Walmart #:", "shop"), ("B&H #", "shop"),
        ("Model:", "mpn"), ("Model #", "mpn"), ("MFR #", "mpn"), ("Mfg Part#", "mpn"),
        ("Manufacturer #", "mpn"), ("Part Number:", "mpn"),
        ("Manufacturer", "brand"), ("UPC:", "gtin"),
        ("Order #", None), ("Colour:", None),
    ],
)
def test_label_kinds(label: str, kind: str | None) -> None:
    assert label_kind(label) == kind


@pytest.mark.parametrize(
    "row",
    ["Cod. prodotto: 12345", "Katalognummer: 12345", "Mã sản phẩm: 12345",
     "Kode produk: 12345", 'מק"ט: 12345', "מק״ט: 12345"],
)
def test_code_rows_of_more_languages(row: str) -> None:
    # class: product-code labels of shops in Italian, German, Vietnamese, Indonesian,
    # Hebrew (written with a quotation mark or a gershayim)
    assert sku_of(f"<main><h1>Widget</h1><p class='price'>$5.00</p><p>{row}</p></main>") == "12345"


def test_label_and_value_in_adjacent_elements() -> None:
    body = BUY + "<div><span>Item Id:</span> <span>GLOWROLL</span><span>Qty</span></div>"
    assert sku_of(body) == "GLOWROLL"


def test_shop_code_beats_the_model_shown_before_it() -> None:
    body = BUY + (
        "<ul><li><span class='label'>Model:</span> <span>MMEF2AM/A</span></li>"
        "<li><span class='label'>SKU:</span> <span>5577872</span></li></ul>"
    )
    assert sku_of(body) == "5577872"


def test_shop_number_beats_the_makers_part_number() -> None:
    body = BUY + (
        "<div><!-- react-text -->Walmart #:<!-- / --> <!-- react-text -->553503329<!-- / -->"
        "</div>"
        "<table><tr><td>Manufacturer Part Number</td><td>31911718</td></tr>"
        "<tr><td>Model</td><td>31911718</td></tr></table>"
    )
    assert sku_of(body) == "553503329"


def test_shop_number_needs_a_digit_and_is_not_an_order_number() -> None:
    assert sku_of(BUY + "<p>Order # 12345</p><p>Gift # ABC</p>") is None


def test_manufacturer_number_is_not_the_brand() -> None:
    body = BUY + "<p>Acme # AC-1001</p><p>Manufacturer # HS-MG-0174</p>"
    html = f"<html><body>{body}</body></html>"
    product = extract_product(HtmlResponse(url="https://shop.example/p/w",
                                           body=html.encode(), encoding="utf-8"))
    assert product is not None
    assert (product["sku"], product["brand"]) == ("AC-1001", None)


def test_model_shown_beats_the_structured_internal_id() -> None:
    data = {"@context": "https://schema.org", "@type": "Product", "name": "Widget",
            "sku": "5301079", "offers": {"price": "10.00", "priceCurrency": "USD"}}
    head = f'<script type="application/ld+json">{json.dumps(data)}</script>'
    assert sku_of(BUY + "<p>Model#: 35SC060</p>", head) == "35SC060"
    assert sku_of(BUY, head) == "5301079"


@pytest.mark.parametrize(
    ("html", "sku"),
    [
        ("<div class='itemNo'>A294466</div>", "A294466"),
        ("<span id='sku'> SKU <span itemprop='sku'>8958197</span></span>", "8958197"),
        ("<div class='product-sku'><h5>Item 3928</h5></div>", "3928"),
        ("<p class='product-sku'><small><span>Online Inquiries: </span>NMF17_X3U1W</small>"
         " <span>| Store Inquiries: #2265578</span></p>", "NMF17_X3U1W"),
        ("<span class='item-number'>Item #489021<span class='sep'></span>A55</span>", "489021"),
    ],
)
def test_element_marked_as_the_code_by_class_or_id(html: str, sku: str) -> None:
    assert sku_of(BUY + html) == sku


def test_label_with_a_full_stop_and_trailing_words() -> None:
    assert sku_of(BUY + "<div class='ref'>REF. 81070185 - Crepus</div>") == "81070185"


def test_lone_hash_code_after_the_heading() -> None:
    details = "<ul><li>Mid rise.</li><li>Machine wash.</li><li>#790485</li></ul>"
    assert sku_of(BUY + details) == "790485"


def test_hash_rank_and_hash_before_the_heading_are_not_codes() -> None:
    assert sku_of("<p>#20170</p>" + BUY + "<ol><li>#1</li><li>#MYSHOP</li></ol>") is None


def test_coupon_code_is_not_a_sku() -> None:
    banner = (
        "<div class='promoBanner'>$5 off your first order with "
        "<span>Code <span>FIVE4U</span><span> | See Restrictions</span></span></div>"
        "<p>Code FIVE4U | See restrictions</p>"
    )
    assert sku_of(banner + BUY) is None


@pytest.mark.parametrize("code", ["LMP77", "TRX2000", "ABC12345"])
def test_three_letters_and_digits_are_a_code_not_an_amount(code: str) -> None:
    # class: shops whose codes start with three capitals; only an ISO 4217 code before
    # an amount makes it money ("USD 11.99" beside a code label is a price)
    assert sku_of(BUY + f"<p>SKU: {code}</p>") == code
    assert sku_of(BUY + "<p>SKU: USD 11.99</p>") is None


def test_an_itemprop_sku_outside_any_item_is_the_code() -> None:
    # class: themes whose microdata lacks its itemscope, so no microdata reader sees it
    assert sku_of(f"{BUY}<p>Ref <span itemprop='sku'>KP-2000-BL</span></p>") == "KP-2000-BL"
