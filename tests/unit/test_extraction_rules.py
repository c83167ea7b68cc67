"""Focused rules of extract_product: page recognition both ways, offers, currencies."""

from __future__ import annotations

import json
import time
from decimal import Decimal
from typing import Any

from scrapy.http import HtmlResponse, TextResponse

from crawler.extraction import extract_product, extract_product_from_html
from tests.unit.test_extraction import CASES, load_case


def page(body: str, head: str = "", url: str = "https://shop.example/p/widget") -> HtmlResponse:
    html = f"<html><head>{head}</head><body>{body}</body></html>"
    return HtmlResponse(url=url, body=html.encode("utf-8"), encoding="utf-8")


def ld(data: Any) -> str:
    return f'<script type="application/ld+json">{json.dumps(data)}</script>'


def card(name: str, price: str) -> str:
    return (
        f'<div class="card"><a href="/p/{name}">{name}</a>'
        f'<span class="price">{price}</span><button>Add to cart</button></div>'
    )


# ------------------------------------------------------------ page recognition


def test_plain_product_page_is_recognised() -> None:
    product = extract_product(
        page("<h1>Widget</h1><div class='price'>$10.00</div><button>Add to cart</button>")
    )
    assert product is not None
    assert product["price"] == Decimal("10.00") and product["currency"] == "USD"


def test_heading_and_price_without_product_signal_is_not_a_product() -> None:
    # e.g. a blog post or a landing page quoting a price
    body = "<h1>Our price promise</h1><p class='price'>$10.00</p><p>We match any price.</p>"
    assert extract_product(page(body)) is None


def test_grid_of_cards_without_structured_data_is_a_listing() -> None:
    body = "<h1>Widgets</h1><div class='grid'>" + "".join(
        card(f"w{i}", f"${i}.00") for i in range(1, 7)
    ) + "</div>"
    assert extract_product(page(body)) is None


def test_product_with_related_cards_is_still_a_product() -> None:
    body = (
        "<main><h1>Widget</h1><p class='price'>$12.00</p><p class='stock'>In stock</p>"
        "<div class='grid'>"
        + "".join(card(f"w{i}", f"${i}.00") for i in range(1, 5))
        + "</div></main>"
    )
    product = extract_product(page(body))
    assert product is not None and product["price"] == Decimal("12.00")
    assert product["availability"] == "InStock"


def test_listing_with_one_marked_up_product_for_a_rich_snippet() -> None:
    markup = ld({"@context": "https://schema.org", "@type": "Product", "name": "Widgets range",
                 "url": "https://shop.example/c/widgets-range",
                 "offers": {"@type": "AggregateOffer", "lowPrice": "1.00", "highPrice": "6.00",
                            "priceCurrency": "USD", "offerCount": 6}})
    body = "<h1>All widgets</h1><div class='grid'>" + "".join(
        card(f"w{i}", f"${i}.00") for i in range(1, 7)
    ) + "</div>"
    assert extract_product(page(body, markup, url="https://shop.example/c/widgets")) is None


def test_several_unrelated_products_are_a_listing() -> None:
    markup = "".join(
        ld({"@context": "https://schema.org", "@type": "Product", "name": name,
            "url": f"https://shop.example/p/{name}",
            "offers": {"@type": "Offer", "price": "5", "priceCurrency": "USD"}})
        for name in ("red-hat", "blue-shoe", "green-scarf")
    )
    listing = page("<h1>Accessories</h1>", markup, url="https://shop.example/c/acc")
    assert extract_product(listing) is None


def test_cart_and_search_urls_are_never_products() -> None:
    body = "<h1>Widget</h1><div class='price'>$10.00</div><button>Add to cart</button>"
    assert extract_product(page(body, url="https://shop.example/cart")) is None
    assert extract_product(page(body, url="https://shop.example/search?q=widget")) is None


def test_non_html_is_not_a_product() -> None:
    assert extract_product(TextResponse(url="https://shop.example/a.json", body=b"{}")) is None


# ------------------------------------------------------------ offers and variants


def product_group(url: str) -> HtmlResponse:
    base = "https://shop.example/p/tee"
    markup = ld({
        "@context": "https://schema.org", "@type": "ProductGroup", "name": "Tee",
        "productGroupID": "TEE", "brand": {"@type": "Brand", "name": "Basics"},
        "hasVariant": [
            {"@type": "Product", "name": "Tee S", "sku": "TEE-S", "url": f"{base}?size=s",
             "offers": {"@type": "Offer", "price": "20.00", "priceCurrency": "EUR",
                        "availability": "https://schema.org/InStock"}},
            {"@type": "Product", "name": "Tee XL", "sku": "TEE-XL", "url": f"{base}?size=xl",
             "offers": {"@type": "Offer", "price": "18.00", "priceCurrency": "EUR",
                        "availability": "https://schema.org/OutOfStock"}},
            {"@type": "Product", "name": "Tee M", "sku": "TEE-M", "url": f"{base}?size=m",
             "offers": {"@type": "Offer", "price": "22.00", "priceCurrency": "EUR",
                        "availability": "https://schema.org/InStock"}},
        ],
    })
    return page("<h1>Tee</h1>", markup, url=url)


def test_product_group_offer_matching_the_page_wins() -> None:
    product = extract_product(product_group("https://shop.example/p/tee?size=xl"))
    assert product is not None
    assert (product["name"], product["sku"], product["price"], product["availability"]) == (
        "Tee", "TEE-XL", Decimal("18.00"), "OutOfStock")
    assert product["brand"] == "Basics"


def test_product_group_lowest_available_offer_otherwise() -> None:
    product = extract_product(product_group("https://shop.example/p/tee"))
    assert product is not None
    assert (product["price"], product["sku"], product["availability"]) == (
        Decimal("20.00"), "TEE-S", "InStock")


def test_price_specification_only_list_price_gives_no_price() -> None:
    markup = ld({"@context": "https://schema.org", "@type": "Product", "name": "Widget",
                 "offers": {"@type": "Offer", "priceCurrency": "USD", "priceSpecification": {
                     "@type": "UnitPriceSpecification", "priceType": "https://schema.org/ListPrice",
                     "price": 30}}})
    product = extract_product(page("<h1>Widget</h1>", markup))
    assert product is not None and product["price"] is None and product["currency"] is None


def test_structured_currency_resolves_a_visible_dollar() -> None:
    markup = ld({"@context": "https://schema.org", "@type": "Product", "name": "Widget",
                 "offers": {"@type": "Offer", "price": "12.00", "priceCurrency": "CAD"}})
    body = "<h1>Widget</h1><span class='price'>$10.00</span>"
    product = extract_product(page(body, markup))
    assert product is not None
    assert product["price"] == Decimal("10.00") and product["currency"] == "CAD"


def test_country_domain_resolves_a_bare_dollar() -> None:
    body = "<h1>Silla</h1><span class='price'>$45.990</span><button>Agregar al carrito</button>"
    product = extract_product(page(body, url="https://tienda.cl/p/silla"))
    assert product is not None
    assert product["price"] == Decimal("45990") and product["currency"] == "CLP"


def test_sale_price_beats_list_prices_in_the_price_box() -> None:
    for box in (
        "<span class='regular-price'>$30.00</span><span class='price'>$20.00</span>",
        "<span class='was-price'>$30.00</span><span class='now'>$20.00</span>",
        "<del>$30.00</del> <ins>$20.00</ins>",
        "<s class='price'>$30.00</s><span class='price'>$20.00</span>",
        "<span class='old-price'><span class='price'>$30.00</span></span>"
        "<span class='special-price'><span class='price'>$20.00</span></span>",
    ):
        body = f"<h1>Widget</h1><div class='price-box'>{box}</div><button>Add to cart</button>"
        product = extract_product(page(body))
        assert product is not None and product["price"] == Decimal("20.00"), box


def test_only_a_regular_price_is_the_price() -> None:
    body = "<h1>Widget</h1><span class='regular-price'>$30.00</span><button>Add to cart</button>"
    product = extract_product(page(body))
    assert product is not None and product["price"] == Decimal("30.00")


def test_canonical_on_another_site_is_ignored() -> None:
    head = '<link rel="canonical" href="https://mirror.example/p/widget">'
    body = "<h1>Widget</h1><div class='price'>$10.00</div><button>Add to cart</button>"
    product = extract_product(page(body, head, url="https://shop.example/p/widget?ref=x#top"))
    assert product is not None and product["url"] == "https://shop.example/p/widget?ref=x"


def test_from_html_helper() -> None:
    product = extract_product_from_html(
        "https://shop.example/p/w",
        "<html><body><h1>W</h1><p class='price'>€5,00</p>"
        "<p class='stock'>Sold out</p></body></html>",
    )
    assert product is not None and product["availability"] == "OutOfStock"
    assert product["currency"] == "EUR" and product["price"] == Decimal("5.00")


def test_extraction_is_fast() -> None:
    responses = [load_case(case)[0] for case in CASES]
    extract_product(responses[0])  # warm-up
    start = time.perf_counter()
    for response in responses:
        # fresh responses: parsing is part of the cost
        fresh = response.replace(body=response.body)
        extract_product(fresh)
    per_page = (time.perf_counter() - start) / len(responses)
    assert per_page < 0.05, f"{per_page * 1000:.1f} ms per page"


def test_rating_without_count_keeps_the_value() -> None:
    markup = ld({"@context": "https://schema.org", "@type": "Product", "name": "Widget",
                 "aggregateRating": {"@type": "AggregateRating", "ratingValue": 4.5}})
    product = extract_product(page("<h1>Widget</h1>", markup))
    assert product is not None and product["rating"] == {"value": 4.5, "count": None}


# ------------------------------------------------------------ layouts seen in the wild


def test_shopify_dawn_price_blocks() -> None:
    body = (
        "<h1>Tee</h1><div class='price price--on-sale'>"
        "<div class='price__regular'>"
        "<span class='price-item price-item--regular'>$30.00</span></div>"
        "<div class='price__sale'><s class='price-item price-item--regular'>$30.00</s>"
        "<span class='price-item price-item--sale'>$20.00</span></div></div>"
        "<button name='add'>Add to cart</button>"
    )
    product = extract_product(page(body))
    assert product is not None and product["price"] == Decimal("20.00")


def test_price_just_above_the_heading() -> None:
    body = (
        "<div class='product'><div class='price'>$20.00</div><h1>Tee</h1>"
        "<button>Add to cart</button></div>"
    )
    product = extract_product(page(body))
    assert product is not None and product["price"] == Decimal("20.00")


def test_instalments_savings_and_tax_excluded_prices_are_not_the_price() -> None:
    for extra in (
        "<p class='afterpay'>or 4 payments of <span class='afterpay-amount'>$12.50</span></p>",
        "<span class='price-save'>Save $20.00</span>",
        "<span class='price-excluding-tax'><span class='price'>$41.67</span></span>",
    ):
        body = f"<h1>Tee</h1>{extra}<span class='price'>$50.00</span><button>Add to cart</button>"
        product = extract_product(page(body))
        assert product is not None and product["price"] == Decimal("50.00"), extra


def test_category_with_a_featured_deal_is_not_a_product() -> None:
    body = (
        "<h1>Shirts</h1><div class='featured'><h2>Deal of the day</h2>"
        "<span class='price'>$9.99</span><button>Add to cart</button></div><div class='grid'>"
        + "".join(card(f"p{i}", f"${i}.00") for i in range(1, 7))
        + "</div>"
    )
    assert extract_product(page(body, url="https://shop.example/c/shirts")) is None


def test_logo_heading_is_ignored() -> None:
    body = (
        "<h1 class='logo'>Shop</h1><main><h1>Tee</h1><span class='price'>$5.00</span>"
        "<button>Add to cart</button></main>"
    )
    product = extract_product(page(body))
    assert product is not None and product["name"] == "Tee"


def test_sold_out_buy_button_beats_stale_markup() -> None:
    markup = ld({"@context": "https://schema.org", "@type": "Product", "name": "Tee",
                 "offers": {"price": "5", "priceCurrency": "USD", "availability": "InStock"}})
    body = (
        "<h1>Tee</h1><span class='price'>$5.00</span>"
        "<button class='add-to-cart' disabled>Sold out</button>"
    )
    product = extract_product(page(body, markup))
    assert product is not None and product["availability"] == "OutOfStock"


def test_article_quoting_prices_is_not_a_product() -> None:
    markup = ld({"@context": "https://schema.org", "@type": "Article", "headline": "Best"})
    body = (
        "<h1>Best headphones</h1><p>The NC700 costs $39.99.</p>"
        "<p class='price'>Our pick: $39.99</p>"
    )
    assert extract_product(page(body, markup, url="https://shop.example/blog/best")) is None


def test_messy_structured_data() -> None:
    broken = (
        '<script type="application/ld+json">{"@context":"https://schema.org","@type":"Product",'
        '"name":"Tee","offers":{"@type":"Offer","price":"20.00","priceCurrency":"USD",},}</script>'
    )
    product = extract_product(page("<h1>Tee</h1>", broken))
    assert product is not None and product["price"] == Decimal("20.00")
    typed = ld({"@context": "https://schema.org", "@type": ["Product", "Thing"], "name": "Tee",
                "offers": {"price": "5", "priceCurrency": "USD",
                           "availability": "http://schema.org/InStock "}})
    product = extract_product(page("<h1>Tee</h1>", typed))
    assert product is not None and product["availability"] == "InStock"
    wrapped = ld({"@context": "https://schema.org", "@type": "ItemPage",
                  "mainEntity": {"@type": "Product", "name": "Tee",
                                 "offers": {"price": "5", "priceCurrency": "GBP"}}})
    product = extract_product(page("<h1>Tee</h1>", wrapped))
    assert product is not None and product["currency"] == "GBP"
    micro = (
        "<div itemscope itemtype='https://schema.org/Product'><h1 itemprop='name'>Mantel</h1>"
        "<div itemprop='offers' itemscope itemtype='https://schema.org/Offer'>"
        "<span itemprop='price' content='1.299,00'>1.299,00 €</span>"
        "<meta itemprop='priceCurrency' content='EUR'></div></div>"
    )
    product = extract_product(page(micro))
    assert product is not None and product["price"] == Decimal("1299.00")
