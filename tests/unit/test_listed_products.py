"""Listed products (issue 43): every product card of a listing page read right, in
several layouts (an ``<ol>`` of plain cards, a grid of ``<div>`` s with promotion and
category tiles among them, a table of rows, cards with a struck-through price beside
the sale price, cards without stock wording), 1 to 60 cards a page; nothing from a
tile, a strip headed as other products' or a product page's recommendation strip;
no price where the card's price is ambiguous."""

from __future__ import annotations

from decimal import Decimal

import pytest
from scrapy.http import HtmlResponse

from crawler.extraction import extract, read_listing
from demoshop.cardlayouts import LAYOUTS, CardLayoutShop
from demoshop.catalog import Catalog
from demoshop.generated import Shelf, build

BASE = "http://127.0.0.1:8000"
FIELDS = ("url", "name", "price", "currency", "regular_price", "availability")


@pytest.fixture(scope="module")
def shop() -> CardLayoutShop:
    generated = build("card-layouts", Catalog.build(products=300))
    assert isinstance(generated, CardLayoutShop)
    return generated


def _response(path: str, html: str) -> HtmlResponse:
    return HtmlResponse(url=BASE + path, body=html.encode("utf-8"), encoding="utf-8")


def _expected(shop: CardLayoutShop, layout: str, products: object) -> list[dict[str, object]]:
    out = []
    for product in products:  # type: ignore[attr-defined]
        card = shop.expected_card(product, layout)
        out.append({**card, "url": BASE + card["url"]})
    return out


# one card outside a list or a table is no listing (the records' limit: the page is
# typed "no_product"), so the grids start at two cards
CASES = [
    (layout, count)
    for layout in (*LAYOUTS, "new")
    for count in (1, 2, 3, 7, 20, 33, 60)
    if count > 1 or layout in ("list", "table", "new")
]


@pytest.mark.parametrize(("layout", "count"), CASES)
def test_every_card_of_every_layout_is_read_right(shop, layout, count):
    shelf = Shelf("/c/any/", "Everything", tuple(shop.products[:count]), count, "page")
    response = _response(shelf.path, shop.listing_page(layout, shelf, 1))
    listed = read_listing(response)
    got = [{key: card[key] for key in FIELDS} for card in listed]
    assert got == _expected(shop, layout, shelf.products)
    assert [card["position"] for card in listed] == list(range(1, count + 1))


def test_the_shops_own_pages_are_read_with_images_ratings_and_struck_prices(shop):
    for shelf in shop.shelf_list:
        layout = shop.layout_of(shelf)
        for number in range(1, shelf.pages + 1):
            listed = read_listing(_response(shelf.page_path(number), shop.listing(shelf, number)))
            got = [{key: card[key] for key in FIELDS} for card in listed]
            assert got == _expected(shop, layout, shelf.page(number)), (shelf.path, number)
    grid = shop.shelf_list[1]
    first = read_listing(_response(grid.path, shop.listing(grid, 1)))[0]
    product = grid.page(1)[0]
    assert first["image"] == BASE + product.images[0]
    assert first["rating"] == ({"value": product.rating[0]} if product.rating else None)
    sale = shop.shelf_list[3]
    listed = read_listing(_response(sale.path, shop.listing(sale, 1)))
    struck = [c for c in listed if c["regular_price"] is not None]
    assert struck and all(c["regular_price"] > c["price"] for c in struck)


def test_no_tile_gives_a_listed_product(shop):
    grid = shop.shelf_list[1]
    listed = read_listing(_response(grid.path, shop.listing(grid, 1)))
    urls = {card["url"] for card in listed}
    assert not any("/c/" in url for url in urls)  # the promotion and category tiles
    assert len(listed) == len(grid.page(1))


def test_a_product_page_and_its_recommendation_strip_give_no_listed_product(shop):
    product = shop.products[5]
    response = _response(product.path, shop.product_page(product))
    assert extract(response).product is not None
    assert read_listing(response) == []


def test_home_page_without_cards_gives_none(shop):
    assert read_listing(_response("/", shop.home())) == []


def _page(cards: str, extra: str = "") -> str:
    return (
        "<html><head><title>Lamps | Shop</title></head><body><h1>Lamps</h1>"
        f'<div class="products">{cards}</div>{extra}</body></html>'
    )


def _div(i: int, price: str, stock: str = "") -> str:
    return (
        f'<div class="item"><a href="/p/lamp-{i}.html"><img src="/i/{i}.jpg"></a>'
        f'<h3><a href="/p/lamp-{i}.html">Desk Lamp Model {i}</a></h3><p>{price}</p>{stock}</div>'
    )


def test_an_ambiguous_price_gives_no_price_and_a_unit_price_is_not_the_price():
    cards = (
        _div(1, "£10.00 £12.00", "<p>In stock</p>")  # two amounts, neither struck
        + _div(2, "from £9.99", "<p>In stock</p>")  # the lowest of several
        + _div(3, "£20.00 <small>£2.00 / kg</small>")  # a unit price beside the price
        + _div(4, "Was £30.00 Now £25.00")  # a list-price label
        + _div(5, "€15,50")
    )
    listed = {c["url"].rsplit("/", 1)[1]: c for c in read_listing(_response("/c/l", _page(cards)))}
    assert listed["lamp-1.html"]["price"] is None
    assert listed["lamp-1.html"]["availability"] == "InStock"
    assert listed["lamp-2.html"]["price"] is None
    assert (listed["lamp-3.html"]["price"], listed["lamp-3.html"]["currency"]) == (
        Decimal("20.00"), "GBP",
    )
    assert listed["lamp-3.html"]["availability"] is None  # no stock wording: nothing said
    assert (listed["lamp-4.html"]["price"], listed["lamp-4.html"]["regular_price"]) == (
        Decimal("25.00"), Decimal("30.00"),
    )
    assert (listed["lamp-5.html"]["price"], listed["lamp-5.html"]["currency"]) == (
        Decimal("15.50"), "EUR",
    )


def test_a_strip_headed_as_other_products_on_a_listing_is_not_read():
    cards = "".join(_div(i, f"£{i}.00") for i in range(1, 6))
    strip = (
        '<div class="more"><h2>Bestsellers</h2><div>'
        + "".join(_div(i, f"£{i}.50") for i in range(50, 54))
        + "</div></div>"
    )
    listed = read_listing(_response("/c/l", _page(cards, strip)))
    assert [c["url"] for c in listed] == [f"{BASE}/p/lamp-{i}.html" for i in range(1, 6)]


def test_a_card_without_a_link_to_a_page_is_no_listed_product():
    cards = "".join(_div(i, f"£{i}.00") for i in range(1, 4)) + (
        '<div class="item"><img src="/i/x.jpg"><h3>Lamp without page</h3><p>£7.00</p></div>'
    )
    listed = read_listing(_response("/c/l", _page(cards)))
    assert len(listed) == 3


def test_the_card_url_is_canonical_as_the_dupefilter_sees_it():
    cards = "".join(
        _div(i, f"£{i}.00").replace(f"/p/lamp-{i}.html", f"/p/lamp?id={i}&b=2#top")
        for i in range(1, 4)
    )
    listed = read_listing(_response("/c/l", _page(cards)))
    assert [c["url"] for c in listed] == [f"{BASE}/p/lamp?b=2&id={i}" for i in range(1, 4)]


def test_a_plain_shops_category_pages_are_read_too():
    shop = build("plain-lists", Catalog.build(products=120))
    for shelf in shop.shelf_list[:6]:
        listed = read_listing(_response(shelf.path, shop.listing(shelf, 1)))
        assert [c["url"] for c in listed] == [BASE + p.path for p in shelf.page(1)]
        assert [c["price"] for c in listed] == [p.price for p in shelf.page(1)]
