"""A variant picker's options say their own stock ("M - sold out"): the product's
state comes from its buy control and stock wording, not from one option's.
Class: size and colour pickers built from buttons, labelled radio inputs or links."""

from __future__ import annotations

import pytest

from crawler.extraction import extract_product_from_html

_URL = "https://shop.example/products/linen-shirt"


def _page(picker: str, buy: str = "<button class='add-to-cart'>Add to cart</button>") -> str:
    return (
        "<html><head><title>Linen Shirt</title></head><body><main><h1>Linen Shirt</h1>"
        f"<div class='price'>$49.99</div><p>SKU: LS-100</p>{picker}{buy}</main></body></html>"
    )


_PICKERS = {
    "buttons": "<div class='sizes'><button>S</button><button disabled>M - sold out</button>"
    "<button>L</button></div>",
    "labelled radios": "<fieldset><div><input type='radio' id='s' name='size'>"
    "<label for='s'>S</label></div><div><input type='radio' id='m' name='size' disabled>"
    "<label for='m'>M - Sold out</label></div></fieldset>",
    "buttons with spans": "<div class='swatches'><button><span>Red</span></button>"
    "<button disabled><span>Blue (out of stock)</span></button></div>",
}


@pytest.mark.parametrize("picker", sorted(_PICKERS))
def test_a_sold_out_option_leaves_a_buyable_product_in_stock(picker: str) -> None:
    product = extract_product_from_html(_URL, _page(_PICKERS[picker]))
    assert product is not None
    assert product["availability"] == "InStock"


def test_a_disabled_buy_button_that_says_sold_out_beside_a_wish_list_button() -> None:
    # two buttons side by side are no picker when one is a longer action, not an option
    buy = (
        "<div class='actions'><button disabled>Temporarily out of stock</button>"
        "<button class='wishlist'>Add to wish list</button></div>"
    )
    product = extract_product_from_html(_URL, _page("", buy))
    assert product is not None
    assert product["availability"] == "OutOfStock"


def test_a_lone_disabled_button_that_says_sold_out_is_the_products_state() -> None:
    product = extract_product_from_html(_URL, _page("", "<button disabled>Sold out</button>"))
    assert product is not None
    assert product["availability"] == "OutOfStock"


@pytest.mark.parametrize(
    "offer",
    [
        "<form class='back-in-stock'><p>Get notified when this item is back in stock</p>"
        "<input type='email'><button>Notify me</button></form>",
        "<button class='btn'>Join the waitlist</button>",
        "<p>Let me know when it's available</p>",
    ],
)
def test_an_offer_to_tell_when_it_is_back_is_sold_out(offer: str) -> None:
    # class: sold-out pages that offer a back-in-stock alert or a waiting list instead
    # of a buy control (a "back-in-stock" class names the form, not a state)
    product = extract_product_from_html(_URL, _page("", offer))
    assert product is not None
    assert product["availability"] == "OutOfStock"


def test_a_long_list_of_links_after_the_heading_is_no_picker_to_weigh(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a page of thousands of sibling links (a store directory, a sitemap page) once had
    # every link's siblings weighed as options for each of them: the siblings of one
    # option are looked at only when its words say a state, and never past a picker's size
    from crawler.extraction.visible import availability

    looked = []
    weigh = availability._names_an_option
    monkeypatch.setattr(
        availability, "_names_an_option", lambda c: looked.append(c) or weigh(c)
    )
    links = "".join(f"<a href='/p/{i}'>Item {i}</a>" for i in range(3000))
    product = extract_product_from_html(_URL, _page(f"<div>{links}<a href='#'>Sold out</a></div>"))
    assert product is not None
    assert len(looked) <= availability._MOST_OPTIONS


_DETAILS = "<tr><th>Brand</th><td>Acme</td></tr><tr><th>Weight</th><td>2 kg</td></tr>"


@pytest.mark.parametrize(
    ("row", "state"),
    [
        ("<table><tr><th>In stock</th><td>No</td></tr>" + _DETAILS + "</table>", "OutOfStock"),
        ("<table>" + _DETAILS + "<tr><th>Stock</th><td>12</td></tr></table>", "InStock"),
        ("<dl><dt>Availability</dt><dd>0</dd></dl>", "OutOfStock"),
        ("<p>Lagerbestand: 0 Stück</p>", "OutOfStock"),
        ("<p><span>Stock:</span><span>3 pcs</span></p>", "InStock"),
        ("<p>Auf Lager: Ja</p>", "InStock"),
    ],
)
def test_a_details_row_that_answers_the_stock_question(row: str, state: str) -> None:
    # class: specification tables and details lists (B2B shops, classifieds) answering
    # "In stock" with a yes, a no or a count; the label alone says nothing
    product = extract_product_from_html(_URL, _page(row, ""))
    assert product is not None
    assert product["availability"] == state


def test_a_cell_of_a_variants_table_says_only_its_own_stock() -> None:
    table = (
        "<table><tr><th>Size</th><th>Stock</th></tr><tr><td>S</td><td>Stock: 0</td></tr>"
        "<tr><td>M</td><td>Stock: 4</td></tr></table>"
    )
    product = extract_product_from_html(_URL, _page(table))
    assert product is not None
    assert product["availability"] == "InStock"  # the enabled buy button's
