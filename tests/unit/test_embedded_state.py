"""The embedded framework state as a structured source: synthetic pages of each framework's shape.

Each page is an application shell (a mount element, no visible product) whose data
sits in the state block its framework writes; the product must come out with
provenance ``embedded-state`` and the state's product and listing URLs as links.
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest
from scrapy.http import HtmlResponse

from crawler.extraction import discover_links, extract
from crawler.extraction.embedded import read_embedded_state, state_of
from crawler.extraction.embedded.blocks import MAX_BLOCK_CHARS
from crawler.extraction.embedded.devalue import unflatten
from crawler.extraction.tree import page_root

URL = "http://shop.test/p/trail-boot-7"


def shell(scripts: str, body: str = '<div id="root"></div>', head: str = "") -> str:
    return (
        f"<!doctype html><html><head><title>Shop</title>{head}</head>"
        f"<body>{body}{scripts}<script src='/static/app.js'></script></body></html>"
    )


def page(html: str, url: str = URL) -> HtmlResponse:
    return HtmlResponse(url, body=html.encode("utf-8"), encoding="utf-8")


BOOT: dict[str, Any] = {
    "__typename": "Product",
    "id": 7,
    "name": "Trail Boot",
    "sku": "TB-7",
    "price": {"amount": "59.90", "currencyCode": "EUR"},
    "inStock": True,
    "url": "/p/trail-boot-7",
    "images": [{"url": "/img/tb-7.jpg"}],
}
RELATED = [
    {"name": "Rain Jacket", "price": 80, "sku": "RJ-1", "url": "/p/rain-jacket-1"},
    {"name": "Wool Socks", "price": 9.5, "sku": "WS-2", "url": "/p/wool-socks-2"},
]


def assert_boot(html: str, *, price: str = "59.90", currency: str | None = "EUR") -> None:
    result = extract(page(html))
    assert result.errors == []
    product = result.product
    assert product is not None, result.rejected
    assert product["name"] == "Trail Boot"
    assert product["price"] == Decimal(price)
    assert product["currency"] == currency
    assert product["availability"] == "InStock"
    assert product["sku"] == "TB-7"
    assert product["provenance"]["name"] == "embedded-state"
    assert product["provenance"]["price"] == "embedded-state"


def test_next_data() -> None:
    state = {"props": {"pageProps": {"product": BOOT, "related": RELATED}}, "page": "/p/[slug]"}
    html = shell(f'<script id="__NEXT_DATA__" type="application/json">{json.dumps(state)}</script>')
    assert_boot(html)
    links = discover_links(page(html))
    assert "http://shop.test/p/rain-jacket-1" in links
    assert "http://shop.test/p/wool-socks-2" in links
    assert not any("/static/" in link or "/img/" in link for link in links)


def devalue(value: Any) -> list[Any]:
    """``value`` in devalue's flattened form (as Nuxt 3 writes ``__NUXT_DATA__``)."""
    out: list[Any] = [["ShallowReactive", 1]]

    def add(item: Any) -> int:
        at = len(out)
        out.append(None)
        if isinstance(item, dict):
            out[at] = {key: add(member) for key, member in item.items()}
        elif isinstance(item, list):
            out[at] = [add(member) for member in item]
        else:
            out[at] = item
        return at

    add(value)
    return out


def test_nuxt_data_flattened() -> None:
    data = devalue({"data": {"product-7": {"product": BOOT}}, "state": {}})
    html = shell(
        '<script type="application/json" id="__NUXT_DATA__" data-ssr="true">'
        f"{json.dumps(data)}</script>"
    )
    assert_boot(html)


def test_devalue_typed_values_and_cycles() -> None:
    # [root, product (refers back to root through "parent"), Date, Set, Map, special values]
    values = [
        {"product": 1, "when": 2, "tags": 3, "map": 4, "gone": -1, "nan": -3},
        {"name": 5, "parent": 0},
        ["Date", "2024-01-01T00:00:00.000Z"],
        ["Set", 5, 6],
        ["Map", 6, 5],
        "Boot",
        "k",
    ]
    root = unflatten(values)
    assert root["product"]["parent"] is root
    assert root["when"] == "2024-01-01T00:00:00.000Z"
    assert root["tags"] == ["Boot", "k"]
    assert root["map"] == {"k": "Boot"}
    assert root["gone"] is None and root["nan"] is None


def test_nuxt2_function_state() -> None:
    script = (
        'window.__NUXT__=(function(a,b,c,d){return {layout:"default",data:[{product:'
        '{__typename:"Product",name:"Trail Boot",sku:a,price:{amount:b,currencyCode:c},'
        'inStock:d,url:"/p/trail-boot-7",note:"a b c"}}],state:{cart:{items:[]}}}}'
        '("TB-7","59.90","EUR",true));'
    )
    assert_boot(shell(f"<script>{script}</script>"))


def test_initial_state_object_literal() -> None:
    script = (
        "window.__INITIAL_STATE__ = {product: {current: {title: 'Trail Boot', skuId: 'TB-7',"
        " salePrice: 59.9, currency: 'EUR', stockStatus: 'IN_STOCK', brand: {name: 'Acme'},},"
        " }, user: null, flags: undefined};"
    )
    result = extract(page(shell(f"<script>{script}</script>")))
    product = result.product
    assert product is not None, result.rejected
    assert (product["name"], product["sku"], product["price"]) == (
        "Trail Boot",
        "TB-7",
        Decimal("59.9"),
    )
    assert (product["currency"], product["availability"], product["brand"]) == (
        "EUR",
        "InStock",
        "Acme",
    )


def test_preloaded_state_json_parse() -> None:
    state = json.dumps({"catalog": {"product": BOOT}})
    script = f"window.__PRELOADED_STATE__ = JSON.parse({json.dumps(state)});"
    assert_boot(shell(f"<script>{script}</script>"))


def test_apollo_normalized_cache() -> None:
    cache = {
        "ROOT_QUERY": {
            "__typename": "Query",
            'product({"slug":"trail-boot-7"})': {"__ref": "Product:7"},
            "recommended": [{"__ref": "Product:8"}, {"__ref": "Product:9"}],
        },
        "Product:7": {
            "__typename": "Product",
            "name": "Trail Boot",
            "sku": "TB-7",
            "price": {"__ref": "Money:7"},
            "availability": "IN_STOCK",
            "url": "/p/trail-boot-7",
            "similar": {"__ref": "Product:7"},  # a cycle
        },
        "Money:7": {"__typename": "Money", "amount": 59.9, "currencyCode": "EUR"},
        "Product:8": {"__typename": "Product", "name": "Gaiter", "price": 20, "url": "/p/gaiter-8"},
        "Product:9": {"__typename": "Product", "name": "Poles", "price": 40, "url": "/p/poles-9"},
    }
    html = shell(f"<script>window.__APOLLO_STATE__ = {json.dumps(cache)};</script>")
    assert_boot(html, price="59.9")
    links = discover_links(page(html))
    assert {"http://shop.test/p/gaiter-8", "http://shop.test/p/poles-9"} <= set(links)


def test_plain_json_script() -> None:
    data = {"product": {**BOOT, "price": "€59.90", "currency": "EUR"}}
    assert_boot(shell(f'<script type="application/json" data-product>{json.dumps(data)}</script>'))


def test_listing_state_is_a_listing_with_links() -> None:
    cards = [
        {"name": f"Boot {i}", "price": 10 + i, "sku": f"B{i}", "url": f"/p/boot-{i}"}
        for i in range(5)
    ]
    state = {
        "props": {
            "pageProps": {
                "category": {"name": "Boots", "url": "/c/boots"},
                "products": cards,
                "next": "/c/boots?page=2",
            }
        }
    }
    html = shell(f'<script id="__NEXT_DATA__" type="application/json">{json.dumps(state)}</script>')
    response = page(html, "http://shop.test/c/boots")
    result = extract(response)
    assert result.product is None and result.rejected == "listing"
    links = discover_links(response)
    assert [f"http://shop.test/p/boot-{i}" for i in range(5)] == [
        link for link in links if "/p/" in link
    ]
    assert "http://shop.test/c/boots?page=2" in links


def test_a_listing_of_one_card_gives_no_product() -> None:
    state = {"props": {"pageProps": {"category": {"name": "Hats"}, "products": [RELATED[0]]}}}
    html = shell(f'<script id="__NEXT_DATA__" type="application/json">{json.dumps(state)}</script>')
    response = page(html, "http://shop.test/c/hats/")
    assert extract(response).product is None
    assert discover_links(response) == ["http://shop.test/p/rain-jacket-1"]


def test_featured_card_beside_a_list_is_no_product() -> None:
    state = {"featured": {**RELATED[0]}, "items": RELATED + [BOOT]}
    html = shell(f'<script type="application/json">{json.dumps(state)}</script>')
    state_read = read_embedded_state(
        page_root(page(html, "http://shop.test/c/all")), "http://shop.test/c/all"
    )
    assert state_read.product is None and state_read.listing


def test_redux_map_of_products_is_listed() -> None:
    by_id = {str(i): {"name": f"Boot {i}", "price": i, "sku": f"B{i}"} for i in range(4)}
    state = {"products": {"byId": by_id}}
    html = shell(f"<script>window.__INITIAL_STATE__ = {json.dumps(state)}</script>")
    read = read_embedded_state(page_root(page(html)), URL)
    assert read.product is None and read.listing


def test_markup_product_wins() -> None:
    jsonld = {
        "@context": "https://schema.org",
        "@type": "Product",
        "name": "Trail Boot (JSON-LD)",
        "offers": {"@type": "Offer", "price": "61.00", "priceCurrency": "USD"},
    }
    state = {"props": {"pageProps": {"product": BOOT}}}
    html = shell(
        f'<script id="__NEXT_DATA__" type="application/json">{json.dumps(state)}</script>',
        head=f'<script type="application/ld+json">{json.dumps(jsonld)}</script>',
    )
    product = extract(page(html)).product
    assert product is not None
    assert product["name"] == "Trail Boot (JSON-LD)" and product["provenance"]["name"] == "json-ld"


@pytest.mark.parametrize(
    "thing",
    [
        {"name": "Express delivery", "price": 5, "currency": "EUR"},  # a fee, not a product
        {"title": "Our story", "url": "/about"},
        {"name": "https://shop.test/x", "price": 1, "sku": "x"},  # a URL is no name
    ],
)
def test_not_product_shaped(thing: dict[str, Any]) -> None:
    html = shell(f'<script type="application/json">{json.dumps({"x": thing})}</script>')
    assert extract(page(html)).product is None


def test_markup_links_first_state_links_only_for_shells() -> None:
    anchors = "".join(f'<a href="/c/cat-{i}">Cat {i}</a>' for i in range(12))
    state = {"related": RELATED}
    html = shell(f'<script type="application/json">{json.dumps(state)}</script>', body=anchors)
    links = discover_links(page(html))
    assert len(links) == 12 and not any("/p/" in link for link in links)


HOSTILE = [
    "[" * 200_000 + "]" * 200_000,  # nested far past any recursion limit
    '{"a": ' * 50_000 + "1" + "}" * 50_000,
    '{"product": {"name": "x", "price": ',  # cut short
    "not json at all {]",
    json.dumps([["ShallowReactive", 1], [1, 2], [0, 1, 2]]),  # devalue pointing in circles
    json.dumps([["Reactive", 0]]),  # a wrapper of itself
    json.dumps({"ROOT_QUERY": {"p": {"__ref": "A:1"}}, "A:1": {"x": {"__ref": "A:1"}}}),
    json.dumps([{"name": "n", "price": 1, "sku": str(i)} for i in range(20_000)]),
]


@pytest.mark.parametrize("text", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_blocks_never_raise(text: str) -> None:
    for script in (
        f'<script type="application/json">{text}</script>',
        f'<script id="__NUXT_DATA__" type="application/json">{text}</script>',
        f"<script>window.__INITIAL_STATE__ = {text};</script>",
        f"<script>window.__NUXT__=(function(a){{return {text}}}(1));</script>",
    ):
        response = page(shell(script))
        result = extract(response)
        assert not [source for source, _ in result.errors if source == "embedded-state"]
        discover_links(response)


def test_oversized_block_is_skipped() -> None:
    filler = "x" * (MAX_BLOCK_CHARS + 1)
    state = {"props": {"pageProps": {"product": BOOT, "pad": filler}}}
    html = shell(f'<script id="__NEXT_DATA__" type="application/json">{json.dumps(state)}</script>')
    response = page(html)
    assert state_of(response).product is None and state_of(response).sources == []
    assert extract(response).product is None
