"""Issue 7 rules on synthetic pages: a price range is no price but has a currency;
stock wording the page hides or only states as a condition is not the product's state."""

from __future__ import annotations

from decimal import Decimal

from crawler.extraction import extract_product
from tests.unit.test_extraction_rules import ld, page

BUY = "<button class='add-to-cart'>Add to bag</button>"


def _microdata_range(low: str, high: str, sizes: str = "") -> str:
    return (
        "<div itemscope itemtype='https://schema.org/Product'>"
        "<h1 itemprop='name'>Oven Mitt</h1>"
        f"<div class='subset'>{sizes}"
        "<span itemprop='offers' itemscope itemtype='https://schema.org/AggregateOffer'>"
        "<meta itemprop='priceCurrency' content='USD'>"
        f"<span class='currency-symbol'>$</span><span itemprop='lowPrice' class='price-amount'>"
        f"{low}</span> – <span class='currency-symbol'>$</span>"
        f"<span itemprop='highPrice' class='price-amount'>{high}</span></span></div>"
        f"{BUY}</div>"
    )


def test_visible_range_without_markup_gives_no_price_but_its_currency() -> None:
    body = (
        "<h1>Button-Front Cardi</h1><div class='product-price'>"
        "<span class='price'>$12.97</span> - $24.99</div>" + BUY
    )
    product = extract_product(page(body, head="<meta property='og:locale' content='en_US'>"))
    assert product is not None
    assert product["price"] is None
    assert product["currency"] == "USD"
    assert product["provenance"]["price"] == "range"


def test_a_range_written_in_one_price_element_gives_no_price() -> None:
    # the same range as above, its two ends in the text of one element
    body = "<h1>Button-Front Cardi</h1><div class='price'>$12.97 – $24.99</div>" + BUY
    product = extract_product(page(body, head="<meta property='og:locale' content='en_US'>"))
    assert product is not None
    assert product["price"] is None
    assert product["provenance"]["price"] == "range"


def test_a_range_of_two_price_elements_around_a_dash_gives_no_price() -> None:
    # class: WooCommerce's variable products ("<span>$42.00</span> &ndash; <span>$45.00")
    amount = "<span class='amount'><bdi><span class='symbol'>$</span>{}</bdi></span>"
    body = (
        "<h1>Hoodie</h1><p class='price'>" + amount.format("42.00") + " &ndash; "
        + amount.format("45.00") + "</p>" + BUY
    )
    product = extract_product(page(body, head="<meta property='og:locale' content='en_US'>"))
    assert product is not None
    assert product["price"] is None
    assert product["provenance"]["price"] == "range"


def test_markup_range_end_is_not_the_price_when_the_page_shows_the_range() -> None:
    # the size picker's heading makes the price box a titled block: only the markup reads it
    product = extract_product(page(_microdata_range("19.95", "24.95", "<h4>Select Size:</h4>")))
    assert product is not None
    assert product["price"] is None
    assert product["currency"] == "USD"
    assert product["provenance"]["price"] == "range"
    assert product["provenance"]["currency"] == "microdata"


def test_aggregate_offer_range_in_json_ld_is_no_price_without_a_visible_one() -> None:
    markup = ld({"@context": "https://schema.org", "@type": "Product", "name": "Oven Mitt",
                 "offers": {"@type": "AggregateOffer", "lowPrice": "19.95",
                            "highPrice": "24.95", "priceCurrency": "EUR"}})
    product = extract_product(page("<h1>Oven Mitt</h1>" + BUY, head=markup))
    assert product is not None
    assert (product["price"], product["currency"]) == (None, "EUR")


def test_aggregate_offer_with_one_clear_visible_price_keeps_that_price() -> None:
    markup = ld({"@context": "https://schema.org", "@type": "Product", "name": "Oven Mitt",
                 "offers": {"@type": "AggregateOffer", "lowPrice": "19.95",
                            "highPrice": "24.95", "priceCurrency": "USD"}})
    body = "<h1>Oven Mitt</h1><span class='price'>$24.95</span>" + BUY
    product = extract_product(page(body, head=markup))
    assert product is not None
    assert product["price"] == Decimal("24.95") and product["currency"] == "USD"
    assert product["provenance"]["price"] == "visible"


def test_aggregate_offer_with_equal_ends_is_one_price() -> None:
    markup = ld({"@context": "https://schema.org", "@type": "Product", "name": "Oven Mitt",
                 "offers": {"@type": "AggregateOffer", "lowPrice": "19.95",
                            "highPrice": "19.95", "priceCurrency": "USD"}})
    product = extract_product(page("<h1>Oven Mitt</h1>" + BUY, head=markup))
    assert product is not None
    assert product["price"] == Decimal("19.95") and product["currency"] == "USD"


def test_no_price_and_no_range_still_gives_no_currency() -> None:
    markup = ld({"@context": "https://schema.org", "@type": "Product", "name": "Oven Mitt",
                 "offers": {"@type": "Offer", "priceCurrency": "USD",
                            "availability": "https://schema.org/InStock"}})
    product = extract_product(page("<h1>Oven Mitt</h1>" + BUY, head=markup))
    assert product is not None
    assert product["price"] is None and product["currency"] is None
    assert "price" not in product["provenance"]


def test_range_with_a_bare_dollar_and_no_page_signal_gives_no_currency() -> None:
    body = (
        "<h1>Button-Front Cardi</h1><div class='product-price'>"
        "<span class='price'>$12.97</span> - $24.99</div>" + BUY
    )
    # a .ca shop's "$": CAD from its domain, never a guessed USD
    product = extract_product(page(body, url="https://shop.example.ca/p/cardi"))
    assert product is not None
    assert product["price"] is None and product["currency"] == "CAD"
    # a "$" range on a page that names no currency, language or country: unknown
    product = extract_product(page(body, url="https://shop.example.io/p/cardi"))
    assert product is not None
    assert product["price"] is None and product["currency"] is None


# ------------------------------------------------------------ availability


def test_stock_banner_hidden_by_the_pages_stylesheet_is_not_the_page() -> None:
    head = (
        "<style>#oos-banner { display: none; color: #900 }"
        " #oos-banner.shown { display: block }"
        " .out-of-stock ~ #oos-banner { display: block }</style>"
    )
    body = (
        "<h1>Cashmere Sweater</h1><span class='price'>$175.00</span>"
        "<div><a class='add-to-cart' href='#'>Add To Shopping Bag</a>"
        "<div id='oos-banner'>Sorry, this item is out of stock.</div></div>"
    )
    product = extract_product(page(body, head=head))
    assert product is not None and product["availability"] == "InStock"
    # the rule that shows it again matches: the banner is the page's
    shown = body.replace("class='add-to-cart'", "class='add-to-cart out-of-stock'")
    product = extract_product(page(shown, head=head))
    assert product is not None and product["availability"] == "OutOfStock"


def test_stylesheet_rule_for_one_screen_size_hides_nothing() -> None:
    head = "<style>@media (max-width: 600px) { #oos-banner { display: none } }</style>"
    body = (
        "<h1>Cashmere Sweater</h1><span class='price'>$175.00</span>"
        "<a class='add-to-cart' href='#'>Add To Shopping Bag</a>"
        "<div id='oos-banner'>Sorry, this item is out of stock.</div>"
    )
    product = extract_product(page(body, head=head))
    assert product is not None and product["availability"] == "OutOfStock"


def test_stock_wording_as_a_condition_names_no_state() -> None:
    body = (
        "<h1>Cashmere Sweater</h1><span class='price'>$175.00</span>"
        "<a class='add-to-cart' href='#'>Add To Shopping Bag</a>"
        "<div>If sold out, select size to add to waitlist.</div>"
    )
    product = extract_product(page(body))
    assert product is not None and product["availability"] == "InStock"
    stated = body.replace("If sold out, select size to add to waitlist.", "Sold out.")
    product = extract_product(page(stated))
    assert product is not None and product["availability"] == "OutOfStock"
