"""Availability rules written against the international development set, each for a
class of pages (stated in each test), on small synthetic pages."""

from __future__ import annotations

from crawler.extraction import extract_product_from_html

# Stock wording and buy controls in many languages (normalize/availability.py,
# visible/availability.py), rows of offers, classified statuses, offers with no stock
# concept (merge.py).


def _page(body: str, head: str = "") -> str:
    return f"<html><head>{head}</head><body>{body}</body></html>"


def test_stock_wording_of_many_languages() -> None:
    # class: shops of every language: their stock words, negative before positive
    from crawler.extraction.normalize.availability import availability_from_text as said

    out = [
        "Нет в наличии",
        "Stokta yok",
        "売り切れ",
        "品切れ中",
        "غير متوفر",
        "אזל מהמלאי",
        "품절",
        "缺貨",
        "nije dostupno",
        "Notify me when it's back in stock",
        "Notify me",
        "This product is no longer in stock",
        "Hết hàng",
        "Stok habis",
        "สินค้าหมด",
        "स्टॉक में नहीं",
        "ناموجود",
        "Esgotat",
        "Изчерпан",
        "Nav noliktavā",
        "Nedostupné",
        "Ikke på lager",
        "Udsolgt",
        "无货",
    ]
    ins = ["В наличии", "Stokta", "在庫あり", "متوفر", "במלאי", "現貨", "dostupno", "Raktáron",
           "Còn hàng", "Stok tersedia", "มีสินค้า", "स्टॉक में", "موجود", "В наличност",
           "Dostupné", "På lager", "Ready to ship"]
    assert [said(t) for t in out] == ["OutOfStock"] * len(out)
    assert [said(t) for t in ins] == ["InStock"] * len(ins)


def _buy_page(control: str, extra: str = "") -> str:
    return _page(f"<h1>Kettle</h1><p class='price'>1 299 ₽</p>{control}{extra}")


def test_buy_controls_of_many_languages_make_a_page_in_stock() -> None:
    # class: an enabled buy control with no contrary wording, in the shop's language
    controls = [
        "<button>В корзину</button>",
        "<button>Sepete Ekle</button>",
        "<button>カートに入れる</button>",
        "<button>أضف إلى السلة</button>",
        "<button>הוסף לסל</button>",
        "<a href='#' class='btn'>Kupi</a>",
        "<a href='#' class='add-to-basket'><span>do koszyka</span></a>",
        "<img id='addToCartButton' alt='Add to Cart' src='b.png'>",
        "<form><input type='number' name='quantity' value='1'></form>",
        # icon-only controls labelled for screen readers, a scripted action attribute
        "<button aria-label='Add to cart'><svg></svg></button>",
        "<button title='Add to Cart'><i class='icon-cart'></i></button>",
        "<a class='btn' data-action='add-to-cart' href='#'><i></i></a>",
        # English variants and more languages
        "<button>Add item to shopping cart</button>",
        "<button>Thêm vào giỏ hàng</button>",
        "<button>Tambah ke keranjang</button>",
        "<button>หยิบใส่ตะกร้า</button>",
        "<button>कार्ट में जोड़ें</button>",
        "<button>افزودن به سبد خرید</button>",
        "<button>Afegir a la cistella</button>",
        "<button>Добави в количката</button>",
        "<button>Dodaj u korpu</button>",
        "<button>Toevoegen aan winkelwagen</button>",
        "<button>Lägg i kundvagn</button>",
        "<button>Lisää koriin</button>",
        "<button>Pievienot grozam</button>",
        "<button>Додати в кошик</button>",
        "<button>أضف إلى العربة</button>",
        "<button>הוספה לעגלה</button>",
        "<button>장바구니에 담기</button>",
        "<button>放入购物车</button>",
        "<button>Aggiungi alla borsa</button>",
        "<button>Añadir a la bolsa</button>",
    ]
    for control in controls:
        product = extract_product_from_html("https://shop.example/p/kettle", _buy_page(control))
        assert product is not None, control
        assert product["availability"] == "InStock", control


def test_a_verb_of_buying_inside_a_sentence_is_no_buy_control() -> None:
    from crawler.extraction.visible.buy import _BUY_VERB

    assert _BUY_VERB.match("Kaufen") and _BUY_VERB.match(" Купить ")
    assert not _BUY_VERB.match("Wie kaufen Sie bei uns?")


def test_an_action_on_the_order_is_no_buy_control() -> None:
    from crawler.extraction.visible.buy import _ADD_TO_CART_TEXT

    assert not _ADD_TO_CART_TEXT.search("Add a note to your order")
    assert not _ADD_TO_CART_TEXT.search("Add gift wrap to order")


def test_notify_me_instead_of_a_buy_control_is_never_in_stock() -> None:
    html = _buy_page(
        "<button>Add to cart</button>", "<p class='stock'>Notify me when available</p>"
    )
    product = extract_product_from_html("https://shop.example/p/kettle", html)
    assert product is not None and product["availability"] == "OutOfStock"


def test_stock_of_one_row_in_a_table_of_offers_is_not_the_pages() -> None:
    # class: comparison and marketplace pages listing sellers or variants in a table
    rows = (
        "<tr class='stock_OUT_OF_STOCK'><td>Fan, white</td><td>Out of Stock</td>"
        "<td>₹2,900</td></tr><tr class='stock_UNKNOWN'><td>Fan, gold</td><td>₹2,433</td></tr>"
    )
    html = _page(
        f"<h1>Ceiling fan</h1><p class='price'>₹2,433</p><table>{rows}</table>",
        head='<script type="application/ld+json">{"@type": "Product", "name": "Ceiling fan",'
        '"offers": {"@type": "Offer", "price": "2433", "priceCurrency": "INR",'
        '"availability": "https://schema.org/InStock"}}</script>',
    )
    product = extract_product_from_html("https://compare.example/p/fan", html)
    assert product is not None and product["availability"] == "InStock"


def test_classified_ad_status() -> None:
    from crawler.extraction.normalize.availability import availability_from_text as said

    assert said("NOT SOLD") == "InStock" and said("Sold") == "OutOfStock"
    assert said("Sold by Example Shop") is None and said("Vendido por Example") is None


# -- offers with no stock concept (merge.py, visible/availability.py)

_AD_HEAD = (
    '<meta property="og:type" content="product"><meta property="og:title" content="Remote">'
    '<script type="application/ld+json">{"@type": "Product", "name": "TV remote",'
    '"offers": {"@type": "Offer", "price": "20", "priceCurrency": "EUR"}}</script>'
)


def test_a_classified_ad_at_a_shown_price_is_available() -> None:
    # class: classified ads, auction lots, tickets: one offer at the price shown, no cart
    html = _page(
        "<h1>TV remote</h1><p class='price'>€ 20,-</p><p>Contact the seller</p>", head=_AD_HEAD
    )
    product = extract_product_from_html("https://ads.example/ad/278526196", html)
    assert product is not None and product["availability"] == "InStock"


def test_a_shop_page_with_a_hidden_cart_and_no_stock_word_stays_unknown() -> None:
    html = _page(
        "<h1>TV remote</h1><p class='price'>€ 20,-</p>"
        "<button style='display:none' class='add-to-cart'>Add to cart</button>",
        head=_AD_HEAD,
    )
    product = extract_product_from_html("https://shop.example/p/remote", html)
    assert product is not None and product["availability"] is None


def test_a_block_scripted_as_the_buy_button() -> None:
    # class: themes that script a div as the buy button (class and label both say buy)
    html = _buy_page("<div class='aa_buy jq_aa_buy' price='1299'>Купить</div>")
    product = extract_product_from_html("https://shop.example/product/kettle", html)
    assert product is not None and product["availability"] == "InStock"
    text = _buy_page("<div class='buy-info'>How to buy: read our delivery terms</div>")
    product = extract_product_from_html("https://shop.example/product/kettle", text)
    assert product is None or product["availability"] is None


_OOS_HEAD = (
    '<script type="application/ld+json">{"@type": "Product", "name": "Kettle",'
    '"offers": {"@type": "Offer", "price": "20.00", "priceCurrency": "EUR",'
    '"availability": "https://schema.org/OutOfStock"}}</script>'
)


def test_a_disabled_buy_button_does_not_overrule_sold_out_markup() -> None:
    # class: sold-out pages that still render the buy button, greyed out
    for button in (
        "<button disabled>Add to cart</button>",
        "<button class='btn add-to-cart disabled'>Add to cart</button>",
        "<button aria-disabled='true'>Add to cart</button>",
    ):
        html = _page(f"<h1>Kettle</h1><p class='price'>20,00 €</p>{button}", head=_OOS_HEAD)
        product = extract_product_from_html("https://shop.example/p/kettle", html)
        assert product is not None and product["availability"] == "OutOfStock", button
    enabled = _page(
        "<h1>Kettle</h1><p class='price'>20,00 €</p><button>Add to cart</button>", head=_OOS_HEAD
    )
    product = extract_product_from_html("https://shop.example/p/kettle", enabled)
    assert product is not None and product["availability"] == "InStock"


_IN_STOCK_HEAD = _OOS_HEAD.replace("OutOfStock", "InStock")


def test_a_button_whose_whole_label_is_sold_out_beats_stale_markup() -> None:
    # class: shops that replace the buy button by a "Sold out" / "Notify me" button
    for label in ("Sold out", "Notify me", "Agotado", "Нет в наличии"):
        html = _page(
            f"<h1>Kettle</h1><p class='price'>20,00 €</p><button>{label}</button>",
            head=_IN_STOCK_HEAD,
        )
        product = extract_product_from_html("https://shop.example/p/kettle", html)
        assert product is not None and product["availability"] == "OutOfStock", label
    sizes = _page(
        "<h1>Kettle</h1><p class='price'>20,00 €</p><button>S - Sold out</button>"
        "<button>M</button><button>Add to cart</button>",
        head=_IN_STOCK_HEAD,
    )
    product = extract_product_from_html("https://shop.example/p/kettle", sizes)
    assert product is not None and product["availability"] == "InStock"


def test_a_link_calling_the_shops_buy_script_is_a_buy_control() -> None:
    # class: buy controls built as script links (href=javascript:buy_process(...), onclick)
    for control in (
        "<div class='buyBtn'><a href=\"javascript:buy_process('I641n');\">Free delivery</a></div>",
        "<a href='#' onclick='addToCart(123); return false'>Order</a>",
    ):
        html = _buy_page(control)
        product = extract_product_from_html("https://shop.example/p/kettle", html)
        assert product is not None and product["availability"] == "InStock", control
    guide = _buy_page("<a href='#' onclick='openBuyersGuide()'>Buyer's guide</a>")
    product = extract_product_from_html("https://shop.example/p/kettle", guide)
    assert product is None or product["availability"] is None
