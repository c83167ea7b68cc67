"""Rules written against the international development set, each for a class of
pages (stated in each test), on small synthetic pages."""

from __future__ import annotations

from decimal import Decimal

from crawler.extraction import extract_product_from_html


def _page(body: str, head: str = "") -> str:
    return f"<html><head>{head}</head><body>{body}</body></html>"


# -- the item number of the page's address that the page shows (visible/url_code.py)


def test_item_number_in_address_and_shown_alone_is_the_sku() -> None:
    # class: marketplaces and classifieds: /itm/<number>, the number printed under a
    # label in an element of its own
    html = _page(
        "<h1>Pony cart harness</h1><p class='price'>£115.00</p><button>Buy it now</button>"
        "<div class='desc'><div>Marketplace item number:</div><div>143863282131</div></div>"
    )
    product = extract_product_from_html("https://market.example/itm/143863282131", html)
    assert product is not None and product["sku"] == "143863282131"


def test_item_number_shown_after_a_label_of_any_language() -> None:
    # class: a shop's own label in its language ("商品編號：", "딜번호 :", "post id:")
    html = _page(
        "<h1>Sink basket</h1><p class='price'>$2,320</p><button>Add to cart</button>"
        "<p>〈商品編號：M14876706〉</p>"
    )
    product = extract_product_from_html("https://shop.example/store/M14876706.htm", html)
    assert product is not None and product["sku"] == "M14876706"


def test_address_number_not_shown_is_the_last_resort_sku() -> None:
    # class: shops whose product URLs end in their own product id, the page showing no
    # code: the address's number is the SKU, with provenance "url"
    hidden = _page(
        "<h1>Lamp</h1><p class='price'>$20.00</p><button>Add to cart</button>"
        "<script>var id = 55512345;</script>"
    )
    product = extract_product_from_html("https://shop.example/p/lamp-55512345.html", hidden)
    assert product is not None and product["sku"] == "55512345"
    assert product["provenance"]["sku"] == "url"
    # a product-id parameter names the product; the path's number is its store
    product = extract_product_from_html("https://shop.example/store/122725?pid=260591", hidden)
    assert product is not None and product["sku"] == "260591"
    # four digits are too few to tell from a year or a size
    assert extract_product_from_html("https://shop.example/p/lamp-2021", hidden)["sku"] is None


def test_structured_sku_beats_the_address_number() -> None:
    html = _page(
        "<h1>Lamp</h1><p class='price'>$20.00</p><button>Add to cart</button>",
        head='<script type="application/ld+json">{"@type": "Product", "name": "Lamp", '
        '"sku": "LMP-7"}</script>',
    )
    product = extract_product_from_html("https://shop.example/p/lamp-55512345.html", html)
    assert product is not None and product["sku"] == "LMP-7"


def test_barcode_in_the_address_is_no_sku() -> None:
    # a valid GTIN in the address (or printed as the UPC) is a barcode, not the shop's code
    upc = _page(
        "<h1>Glasses</h1><p class='price'>$150.00</p><button>Add to cart</button>"
        "<p>UPC: 8053672667394</p>"
    )
    product = extract_product_from_html("https://shop.example/ray/8053672667394", upc)
    assert product is not None and product["sku"] is None
    assert product["gtin"] == "8053672667394"


def test_a_labelled_shop_code_beats_the_address_number() -> None:
    html = _page(
        "<h1>Chair</h1><p class='price'>$20.00</p><button>Add to cart</button>"
        "<p>SKU: CH-100</p><p>55512345</p>"
    )
    product = extract_product_from_html("https://shop.example/p/55512345", html)
    assert product is not None and product["sku"] == "CH-100"


# -- the product heading when the page has no one product <h1> (visible/name.py)


def test_title_styled_without_h1_is_the_heading() -> None:
    # class: shops whose product title is an h2 or a div classed as a title, the
    # <title> repeating it; a section heading or a card's name is not it
    html = _page(
        "<div class='box'><h2>Related products</h2></div>"
        "<div class='product'><div class='title'>Garlic slicer stainless steel</div>"
        "<p class='price'>$11.99</p><button>Add to cart</button></div>",
        head="<title>Garlic slicer stainless steel - Kitchen Shop</title>",
    )
    product = extract_product_from_html("https://shop.example/p/slicer", html)
    assert product is not None and product["name"] == "Garlic slicer stainless steel"
    assert str(product["price"]) == "11.99"


def test_cards_headed_by_h1_do_not_hide_the_product_title() -> None:
    cards = "".join(
        f"<li class='card'><a href='/p/{i}'><h1>Book number {i}</h1></a></li>" for i in range(4)
    )
    html = _page(
        f"<ul>{cards}</ul><h2 class='deal_title_main'>Good thoughts: a year of issues</h2>"
        "<p class='price'>30,000원</p><button>구매하기</button>",
        head="<title>Good thoughts: a year of issues - Deals</title>",
    )
    product = extract_product_from_html("https://shop.example/deal/1", html)
    assert product is not None and product["name"] == "Good thoughts: a year of issues"


def test_the_fuller_of_two_headings_the_title_repeats() -> None:
    # class: a brand heading and a model heading, both in the <title>
    html = _page(
        "<h1>Tommy Jeans OFLEKI</h1><h1>OFLEKI</h1><p class='price'>26,00 €</p>"
        "<button>Add to cart</button>",
        head="<title>Tommy Jeans OFLEKI Navy - Free delivery | Shoes</title>",
    )
    product = extract_product_from_html("https://shop.example/p/ofleki", html)
    assert product is not None and product["name"] == "Tommy Jeans OFLEKI"


# -- price boxes (visible/index.py, visible/price_text.py)


def test_a_sales_counter_in_the_price_box_is_not_the_price() -> None:
    # class: deal and marketplace pages printing "29 sold" / "29개 구매" in the price box
    for counter in ("29개 구매", "29 sold", "max 999 per person"):
        html = _page(
            "<h1>Subscription, one year</h1><div class='deal_price'>"
            "<p class='deal_price_sell'><strong class='number_unit'>   30,000<sub>원</sub>"
            f"   </strong>   <span class='deal_price_buy_count'>  {counter}  </span></p></div>"
            "<button>구매하기</button>"
        )
        product = extract_product_from_html("https://shop.example/deal/1", html)
        assert product is not None and str(product["price"]) == "30000", counter


def test_a_hidden_machine_copy_inside_the_price_is_not_read() -> None:
    html = _page(
        "<h1>Desktop i7</h1><div class='price-new'><span>Only</span> <span>1,679</span>"
        "<span style='display:none' itemprop='price'>1679</span> ₪</div>"
        "<div class='price-tax'>Price with delivery: 1,718 ₪</div><button>Add to cart</button>"
    )
    product = extract_product_from_html("https://shop.example/prod/1", html)
    assert product is not None and str(product["price"]) == "1679"


# -- what a product code is not (visible/codes.py, visible/url_code.py)


def _code_page(codes: str, url: str = "https://shop.example/p/lamp") -> dict | None:
    html = _page(f"<h1>Lamp</h1><p class='price'>$20.00</p><button>Add to cart</button>{codes}")
    return extract_product_from_html(url, html)


def test_a_price_in_a_code_block_is_no_sku() -> None:
    # class: variant pickers classed "sku-*" that print each variant's price
    product = _code_page(
        "<div id='skuWrap'><div class='sku-price'>US$11.99</div></div><p>Model: YL-32</p>"
    )
    assert product is not None and product["sku"] == "YL-32"


def test_a_model_name_without_a_digit_is_no_sku_but_a_part_number_is() -> None:
    assert _code_page("<p>Model: Primrose</p>")["sku"] is None  # type: ignore[index]
    assert _code_page("<p>Part Number: EMERMUS</p>")["sku"] == "EMERMUS"  # type: ignore[index]


def test_a_rank_is_no_product_code() -> None:
    # class: comparison sites' "Overall Rank: #4198" after the heading
    product = _code_page("<div><strong>Overall Rank:</strong><span>#4198</span></div>")
    assert product is not None and product["sku"] is None


def test_number_inside_an_address_token_and_sizes_are_not_codes() -> None:
    from crawler.extraction.visible.url_code import url_codes

    assert "278526196" in url_codes("https://ads.example/tv/c7200a278526196/remote")
    assert url_codes("https://ads.example/d/garage-4mx5m-13ftx17ft/7221815683.html") == [
        "7221815683"
    ]
    product = _code_page(
        "<p>Ad number: 278526196</p>", url="https://ads.example/tv/c7200a278526196/remote"
    )
    assert product is not None and product["sku"] == "278526196"


def test_code_labels_of_many_languages() -> None:
    from crawler.extraction.visible.codes import label_kind

    for label in ("Код:", "Артикул:", "商品編號：", "상품번호", "Ürün Kodu:", "Produkta kods"):
        assert label_kind(label.rstrip(":：")) == "sku", label


# -- a product image slider's price (visible/index.py)


def test_a_price_in_the_products_image_slider_is_a_price() -> None:
    # class: a product image slider carrying the price; a price-range filter slider is not
    from crawler.extraction.visible.price_marks import _NOT_PRICE_CLASS

    assert not _NOT_PRICE_CLASS.search("ek-slider-pricenew")
    assert _NOT_PRICE_CLASS.search("price-slider") and _NOT_PRICE_CLASS.search("ui-slider")


# -- controls inside the heading, list prices in running text (visible/name.py, price.py)


def test_controls_inside_the_heading_are_not_the_name() -> None:
    # class: marketplaces and classifieds putting a favourite star or a login prompt in h1
    html = _page(
        "<h1><a class='favourite addfav' href='#'><span class='icon'></span></a>"
        "<a class='limit' href='/login?moreFavourites'>Log In needed</a>Casio calculator</h1>"
        "<p class='price'>$15</p><button>Buy now</button>"
    )
    product = extract_product_from_html("https://ads.example/ad/36029524", html)
    assert product is not None and product["name"] == "Casio calculator"


def test_a_list_price_in_running_text_is_not_the_price() -> None:
    html = _page(
        "<h1>Casio calculator</h1><p>Basically brand new. MSRP $25.</p><p>$15</p>"
        "<button>Buy now</button>"
    )
    product = extract_product_from_html("https://ads.example/ad/1", html)
    assert product is not None and str(product["price"]) == "15"


def test_a_code_row_inside_the_product_heading_is_the_sku() -> None:
    # class: shops printing the product code in the title block, even inside a <header>
    html = _page(
        "<header><h1><span>Phone Galaxy A01 red</span> <span>Код: 01245</span></h1></header>"
        "<div class='title'>Phone Galaxy A01 red</div><span class='price'>44 890 тг.</span>"
        "<div class='buy'>Купить</div>",
        head="<title>Phone Galaxy A01 red</title>",
    )
    product = extract_product_from_html("https://shop.example/product/phone-a01", html)
    assert product is not None and product["sku"] == "01245"
    assert product["currency"] == "KZT"


# -- the price paid: gross over net, not unit, instalment or deposit (visible/price.py)


def _price_of(box: str) -> str | None:
    html = _page(f"<h1>Adapter card</h1>{box}<button>Add to cart</button>")
    product = extract_product_from_html("https://shop.example/p/adapter", html)
    assert product is not None
    return None if product["price"] is None else str(product["price"])


def test_vat_included_price_over_the_net_one() -> None:
    # class: shops showing a net and a gross price (B2B, central Europe)
    assert (
        _price_of(
            "<div class='price-wrap'><div class='notax'><span class='text'>bez DPH</span>"
            "<span class='price'>3,56 €</span></div><div class='tax'><span class='text'>s DPH"
            "</span><span class='price'>4,27 €</span></div></div>"
        )
        == "4.27"
    )
    assert (
        _price_of(
            "<p><span class='price'>€10.00</span> <small>excl. VAT</small></p>"
            "<p><span class='price'>€12.10</span> <small>incl. VAT</small></p>"
        )
        == "12.10"
    )


def test_unit_and_instalment_prices_are_not_the_price() -> None:
    assert (
        _price_of(
            "<p><span class='price'>€1.99</span><span>per kg</span></p>"
            "<p><span class='price'>€4.98</span></p>"
        )
        == "4.98"
    )
    assert (
        _price_of(
            "<p>or 4 payments of <span class='price'>$12.50</span></p>"
            "<p><span class='price'>$50.00</span></p>"
        )
        == "50.00"
    )


def test_amounts_in_text_with_asian_currency_words_and_list_labels() -> None:
    # class: plain pages writing "294 元" after a suggested-price label "建議售價 $420"
    html = _page(
        "<h1>Pork floss 250 g</h1><p>建議售價 $420 元</p><p>特價 294 元</p>"
        "<button>加入購物車</button>"
    )
    product = extract_product_from_html("https://shop.example/M67296549.htm", html)
    assert product is not None and str(product["price"]) == "294"


def test_struck_price_classes_of_more_shops() -> None:
    for cls in ("price-prev", "stara-cena", "eski-fiyat", "prezzo-barrato", "deal_price_origin"):
        assert (
            _price_of(
                f"<div><span class='{cls}'>€40,00</span> <span class='price'>€30,00</span></div>"
            )
            == "30.00"
        ), cls


def test_the_shops_own_code_under_its_name() -> None:
    # class: "<shop> item number", "Our SKU": the shop's code labelled with its name
    from crawler.extraction.visible.codes import label_kind

    assert label_kind("eBay item number:") == "sku" and label_kind("Our SKU") == "sku"
    assert label_kind("Coupon code") is None and label_kind("Order item number") is None
    product = _code_page("<p>Marketplace item number: 30247415</p>")
    assert product is not None and product["sku"] == "30247415"


def test_amount_written_right_after_a_struck_list_price() -> None:
    # class: plain pages that mark up only the list price (<del>) and write the price
    html = _page(
        "<h1>Pork floss 250 g</h1><table><tr><td><b>List</b> <del>$420</del><span>元</span>"
        "</td></tr><tr><td><b>Special</b> <span style='color:red'>294</span><span> 元 </span>"
        "</td></tr></table><button>加入購物車</button>"
    )
    product = extract_product_from_html("https://shop.example/M67296549.htm", html)
    assert product is not None and str(product["price"]) == "294"


def test_the_shown_address_number_is_a_product_signal() -> None:
    # class: plain product pages whose only product signal is the item number they print
    html = _page("<h1>Pork floss 250 g</h1><p class='price'>$294</p><p>M67296549</p>")
    product = extract_product_from_html("https://shop.example/24h/M67296549.htm", html)
    assert product is not None and product["sku"] == "M67296549"
    assert extract_product_from_html("https://shop.example/24h/other.htm", html) is None


def test_a_code_row_with_a_full_width_colon_in_brackets() -> None:
    # class: CJK pages writing "〈商品編號：M67296549〉" (full-width colon, brackets)
    product = _code_page("<p>〈商品編號：M67296549〉</p>")
    assert product is not None and product["sku"] == "M67296549"


def test_h1_headed_cards_linking_elsewhere_are_not_the_heading() -> None:
    # class: deal sites whose "other deals" cards are headed by <h1> inside links
    cards = "".join(
        f"<li><a href='/deal/{i}'><h1>Big size bra set {i} cup</h1>"
        f"<p class='price'>{i},900원</p></a></li>"
        for i in (5, 9, 21)
    )
    html = _page(
        "<h2 class='deal_title_main'>Big size bra and panty set 75 to 120</h2>"
        "<p class='deal_price_sell'><strong>2,900원~</strong></p><button>구매하기</button>"
        f"<ul class='deal-list'>{cards}</ul>",
        head="<title>Big size bra and panty set 75 to 120 cup - Deals</title>",
    )
    product = extract_product_from_html("https://shop.example/deal/3454863898", html)
    assert product is not None and product["name"] == "Big size bra and panty set 75 to 120"
    assert str(product["price"]) == "2900"


# -- several sellers' offers (offers.py: AggregateOffer with offerCount >= 2)


def _sellers_page(offers: str, shown: str = "") -> str:
    # class: price-comparison pages and marketplaces: one product, the offers of several
    # sellers summed up as an AggregateOffer, the page listing the sellers and no cart
    return _page(
        f"<h1>Baby carrier One</h1>{shown}"
        "<ul><li>Shop A</li><li>Shop B</li></ul>",
        head='<script type="application/ld+json">{"@type": "Product", "name": '
        f'"Baby carrier One", "offers": {offers}}}</script>',
    )


def test_several_sellers_offers_give_the_cheapest_price_and_are_in_stock() -> None:
    html = _sellers_page(
        '{"@type": "AggregateOffer", "priceCurrency": "USD", "offerCount": 2, '
        '"lowPrice": "502.20", "highPrice": "558.00"}'
    )
    product = extract_product_from_html("https://compare.example/p/carrier-987929.html", html)
    assert product is not None
    assert product["price"] == Decimal("502.20") and product["currency"] == "USD"
    assert product["provenance"]["price"] == "json-ld"
    assert product["availability"] == "InStock"


def test_a_range_without_an_offer_count_stays_a_range() -> None:
    # class: one shop's variants at different prices ("$19.95 – $24.95" by size): no
    # single price, as before
    html = _sellers_page(
        '{"@type": "AggregateOffer", "priceCurrency": "USD", '
        '"lowPrice": "502.20", "highPrice": "558.00"}'
    )
    product = extract_product_from_html("https://compare.example/p/carrier-987929.html", html)
    assert product is not None
    assert product["price"] is None and product["provenance"]["price"] == "range"
    # an offer count of one is one offer's range: a range too
    one = html.replace('"lowPrice"', '"offerCount": "1", "lowPrice"')
    assert extract_product_from_html("https://compare.example/p/c-1.html", one)["price"] is None


def test_several_sellers_with_stock_wording_against_them() -> None:
    html = _sellers_page(
        '{"@type": "AggregateOffer", "priceCurrency": "USD", "offerCount": 3, '
        '"lowPrice": "502.20", "highPrice": "558.00"}',
        shown="<p class='stock'>Out of stock</p>",
    )
    product = extract_product_from_html("https://compare.example/p/carrier-987929.html", html)
    assert product is not None and product["availability"] == "OutOfStock"


# -- an amount written after a label element (visible/price.py, _own_text)


def test_price_written_after_a_bold_label_makes_a_plain_page_a_product() -> None:
    # class: plain pages (event tickets, classifieds, small shops) with no price markup
    # that bold a details row's label and write its value after it
    html = _page(
        "<h1>Lina de Lima</h1><h2><span>Streaming - Santiago</span></h2>"
        "<div class='summary'><p>Director: María Paz</p><p>A story of ten years.</p></div>"
        "<p id='calendar-prices'><strong>Precios:</strong>&#160;&#160;$3.340<br></p>"
        "<a class='btn' href='/buy?event=7'>Comprar Entrada</a>"
    )
    product = extract_product_from_html("https://tickets.example/evento/lina", html)
    assert product is not None
    assert product["price"] == Decimal("3340")  # "$3.340": Chilean pesos, no cents
    assert product["availability"] == "InStock"


def test_amounts_in_a_description_with_line_breaks_are_not_the_price() -> None:
    # a paragraph that writes amounts after <br> children is running text, not a
    # labelled row: only a short label ending in ":" introduces the amount after it
    html = _page(
        "<h1>Vintage skate board</h1><p>Some wear due to age.<br>"
        "All priced $1.00, $2.00 and $4.00. New items are added daily.</p>"
        "<button>Add to cart</button>"
    )
    product = extract_product_from_html("https://shop.example/ad/board", html)
    assert product is None or product["price"] is None
