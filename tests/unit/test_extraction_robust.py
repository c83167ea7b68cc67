"""The extractor never raises, whatever a page holds (property-based, hypothesis).

Real pages (the project's fixtures) are mutated: truncated anywhere, re-encoded
wrongly, given broken, nested or odd JSON-LD (lists where strings are expected,
numbers, nulls, deep nesting) and odd meta tags. :func:`extract_product` must
return a product or None, never raise. When the shared development set is
present (``../shared/product-pages-dev``), its pages are mutated too.
"""

from __future__ import annotations

import json
from decimal import Decimal
from html import escape
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scrapy.http import HtmlResponse

from crawler.extraction import discover_links, extract_product
from crawler.schema import validation_errors

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
ROOT = Path(__file__).resolve().parents[2]
# ../shared/product-pages-dev beside the repository (or beside a worktree's parent)
DEV_SET = next(
    (p for base in (ROOT.parent, ROOT.parent.parent)
     if (p := base / "shared" / "product-pages-dev").is_dir()),
    ROOT.parent / "shared" / "product-pages-dev",
)
PAGES = sorted((FIXTURES / "pages").glob("*.html")) + sorted((FIXTURES / "holdout").glob("*.html"))
DEV_PAGES = sorted(DEV_SET.glob("*.html"))[::6] if DEV_SET.is_dir() else []
BODIES = [p.read_bytes() for p in PAGES + DEV_PAGES]
URL = "https://shop.example/p/thing-1.html"

SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

json_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-10**12, 10**12),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=30),
    st.sampled_from(["Product", "Offer", "InStock", "$1,299.00", "12,50 €", "", " ", "USD"]),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(
            st.sampled_from([
                "@type", "@id", "@graph", "name", "offers", "price", "priceCurrency",
                "availability", "sku", "gtin13", "brand", "image", "url", "aggregateRating",
                "ratingValue", "reviewCount", "itemListElement", "item", "position",
                "priceSpecification", "lowPrice", "hasVariant", "description", "mpn",
            ]),
            inner, max_size=6,
        ),
    ),
    max_leaves=25,
)


def _check(product: dict[str, Any] | None) -> None:
    if product is None:
        return
    item = dict(product, crawled_at="2026-01-01T00:00:00+00:00", worker="t")
    assert isinstance(product["name"], str) and product["name"]
    # whatever came out is either a valid product or rejected by the schema, never a crash
    validation_errors(item)


def _run(body: bytes, url: str = URL, encoding: str | None = "utf-8") -> None:
    response = HtmlResponse(url=url, body=body, encoding=encoding) if encoding else (
        HtmlResponse(url=url, body=body))
    _check(extract_product(response))
    list(discover_links(response, None))


@SETTINGS
@given(page=st.sampled_from(BODIES), cut=st.floats(0, 1))
def test_truncated_pages(page: bytes, cut: float) -> None:
    _run(page[: int(len(page) * cut)])


@SETTINGS
@given(
    page=st.sampled_from(BODIES),
    encoding=st.sampled_from(["latin-1", "utf-16", "cp1252", "shift_jis", "koi8-r"]),
    declared=st.sampled_from([None, "utf-8", "latin-1", "utf-16", "ascii"]),
)
def test_wrong_encodings(page: bytes, encoding: str, declared: str | None) -> None:
    text = page.decode("utf-8", "replace")
    _run(text.encode(encoding, "replace"), encoding=declared)


@SETTINGS
@given(page=st.sampled_from(BODIES), value=json_values, raw=st.booleans(),
       cut=st.integers(0, 200))
def test_odd_json_ld(page: bytes, value: Any, raw: bool, cut: int) -> None:
    data = json.dumps({"@context": "https://schema.org", "@type": "Product", "offers": value,
                       "name": value, "sku": value, "brand": value, "image": value})
    if raw:
        data = data[:cut]  # broken JSON
    script = f'<script type="application/ld+json">{data}</script>'.encode()
    _run(page.replace(b"</head>", script + b"</head>", 1) if b"</head>" in page else script + page)


@SETTINGS
@given(page=st.sampled_from(BODIES), value=json_values)
def test_json_ld_graph_of_anything(page: bytes, value: Any) -> None:
    data = json.dumps({"@context": "https://schema.org", "@graph": [value, {"@type": [
        "Product", value], "name": ["a", ["b"]], "offers": [value, {"price": [value]}]}]})
    script = f'<script type="application/ld+json">{data}</script>'.encode()
    _run(script + page)


@SETTINGS
@given(page=st.sampled_from(BODIES), prop=st.sampled_from([
    "og:type", "og:title", "og:image", "product:price:amount", "product:price:currency",
    "og:price:amount", "product:availability", "og:url", "product:brand",
]), values=st.lists(st.text(max_size=20), min_size=1, max_size=3))
def test_repeated_meta_tags(page: bytes, prop: str, values: list[str]) -> None:
    tags = "".join(
        f'<meta property="{prop}" content="{json.dumps(v)[1:-1]}">' for v in values
    ).encode()
    _run(page.replace(b"<head>", b"<head>" + tags, 1) if b"<head>" in page else tags + page)


@pytest.mark.parametrize("body", [b"", b"<", b"\x00\xff\xfe", b"<html><body><h1>", b"{}" * 500])
def test_degenerate_bodies(body: bytes) -> None:
    _run(body)


# -- every structured-data field gets lists, dicts, numbers and nulls ---------------------

#: Every schema.org property the extractor reads, on a Product, its offers, its brand,
#: its rating and a breadcrumb trail.
PRODUCT_KEYS = (
    "@type",
    "@id",
    "url",
    "name",
    "sku",
    "mpn",
    "productID",
    "gtin",
    "gtin8",
    "gtin12",
    "gtin13",
    "gtin14",
    "isbn",
    "brand",
    "manufacturer",
    "image",
    "description",
    "offers",
    "aggregateRating",
    "productGroupID",
    "inProductGroupWithID",
    "isVariantOf",
    "hasVariant",
    "color",
    "size",
    "category",
    "mainEntityOfPage",
)
OFFER_KEYS = (
    "@type",
    "url",
    "price",
    "priceCurrency",
    "availability",
    "sku",
    "gtin13",
    "lowPrice",
    "highPrice",
    "offers",
    "priceSpecification",
    "itemOffered",
    "seller",
    "offerCount",
)
odd_values = st.one_of(
    st.none(),
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=True),
    st.booleans(),
    st.lists(
        st.one_of(
            st.text(max_size=8),
            st.integers(),
            st.none(),
            st.dictionaries(
                st.sampled_from(["@type", "name", "url", "price"]),
                st.one_of(st.text(max_size=8), st.integers()),
                max_size=2,
            ),
        ),
        max_size=3,
    ),
    st.dictionaries(
        st.sampled_from(["@type", "@id", "name", "url", "price", "0", "a"]), json_values, max_size=3
    ),
    json_values,
)
_BASE_PRODUCT: dict[str, Any] = {
    "@type": "Product",
    "@id": URL + "#product",
    "url": URL,
    "name": "Tea Kettle K1",
    "sku": "K-1",
    "gtin13": "4006381333931",
    "brand": {"@type": "Brand", "name": "Kestrel"},
    "image": ["/img/k1.png"],
    "description": "A kettle.",
    "aggregateRating": {"@type": "AggregateRating", "ratingValue": 4.5, "reviewCount": 3},
    "offers": {
        "@type": "Offer",
        "url": URL,
        "price": "19.99",
        "priceCurrency": "USD",
        "availability": "https://schema.org/InStock",
        "sku": "K-1",
    },
}
SMALL_PAGE = (
    "<html><head><title>Tea Kettle K1</title>{head}</head><body>"
    "<nav class=breadcrumb><a href=/>Home</a> <a href=/c/k/>Kettles</a></nav>{body}"
    "<h1>Tea Kettle K1</h1><p class=price>$19.99</p><p class=stock>In stock</p>"
    "<button class=add-to-cart>Add to cart</button></body></html>"
)


def _page_with(head: str = "", body: str = "", page: bytes | None = None) -> bytes:
    if page is None:
        return SMALL_PAGE.format(head=head, body=body).encode()
    if b"</head>" in page:
        return page.replace(b"</head>", head.encode() + b"</head>", 1) + body.encode()
    return head.encode() + page + body.encode()


def _ld(data: Any) -> str:
    return f'<script type="application/ld+json">{json.dumps(data)}</script>'


@SETTINGS
@given(
    key=st.sampled_from(PRODUCT_KEYS),
    value=odd_values,
    page=st.one_of(st.none(), st.sampled_from(BODIES)),
)
def test_any_value_in_any_product_field(key: str, value: Any, page: bytes | None) -> None:
    node = dict(_BASE_PRODUCT, **{key: value})
    # twice, and beside a related product: the paths that compare products' names and URLs
    related = dict(_BASE_PRODUCT, name="Other Thing", url=value, sku=value)
    _run(_page_with(_ld(node) + _ld([node, related]), page=page))


@SETTINGS
@given(key=st.sampled_from(OFFER_KEYS), value=odd_values, as_map=st.booleans())
def test_any_value_in_any_offer_field(key: str, value: Any, as_map: bool) -> None:
    offer = dict(_BASE_PRODUCT["offers"], **{key: value})
    # offers as a list, or as a dict of dicts (keyed by variant id)
    offers: Any = {"a": offer, "b": dict(offer, price="24.99")} if as_map else [offer, offer]
    _run(_page_with(_ld(dict(_BASE_PRODUCT, offers=offers))))


@SETTINGS
@given(
    values=st.dictionaries(st.sampled_from(PRODUCT_KEYS), odd_values, max_size=8), crumbs=odd_values
)
def test_any_values_everywhere(values: dict[str, Any], crumbs: Any) -> None:
    trail = {
        "@type": "BreadcrumbList",
        "itemListElement": [
            {"@type": "ListItem", "position": crumbs, "name": crumbs, "item": crumbs},
            {"@type": "ListItem", "position": 2, "item": {"@id": crumbs, "name": crumbs}},
        ],
    }
    page = {
        "@context": "https://schema.org",
        "@type": "WebPage",
        "mainEntity": dict(_BASE_PRODUCT, **values),
        "breadcrumb": trail,
    }
    _run(_page_with(_ld(page) + _ld(trail)))


def _microdata(key: str, value: Any, depth: int = 0) -> str:
    """``value`` as microdata under ``itemprop=key``: a dict is a nested item, a list a
    repeated property, anything else a ``content`` attribute or text."""
    if isinstance(value, list):
        return "".join(_microdata(key, v, depth) for v in value[:4])
    if isinstance(value, dict) and depth < 4:
        kind = value.get("@type") if isinstance(value.get("@type"), str) else "Thing"
        inner = "".join(
            _microdata(str(k), v, depth + 1) for k, v in value.items() if not str(k).startswith("@")
        )
        return f'<div itemprop="{key}" itemscope itemtype="https://schema.org/{kind}">{inner}</div>'
    text = escape(json.dumps(value) if not isinstance(value, str) else value)
    if depth % 2:
        return f'<meta itemprop="{key}" content="{text}">'
    return f'<span itemprop="{key}">{text}</span>'


@SETTINGS
@given(
    key=st.sampled_from(PRODUCT_KEYS + OFFER_KEYS),
    value=odd_values,
    in_offer=st.booleans(),
    twice=st.booleans(),
)
def test_any_value_in_any_microdata_field(
    key: str, value: Any, in_offer: bool, twice: bool
) -> None:
    offer = dict(_BASE_PRODUCT["offers"])
    product = {k: v for k, v in _BASE_PRODUCT.items() if k != "offers"}
    (offer if in_offer else product)[key] = value
    inner = "".join(_microdata(k, v) for k, v in product.items() if not k.startswith("@"))
    item = (
        '<div itemscope itemtype="https://schema.org/Product">'
        f"{inner}{_microdata('offers', dict(offer, **{'@type': 'Offer'}))}</div>"
    )
    _run(_page_with(body=item * (2 if twice else 1)))


@pytest.mark.parametrize(
    "node",
    [
        # the shapes real pages were seen to hold where a string is expected
        dict(_BASE_PRODUCT, url=[URL, URL + "?x=1"]),
        dict(_BASE_PRODUCT, name={"@value": "Tea Kettle K1"}),
        dict(_BASE_PRODUCT, sku=123, mpn=None, gtin13=4006381333931),
        dict(_BASE_PRODUCT, image=[{"@type": "ImageObject", "url": "/img/k1.png"}]),
        dict(
            _BASE_PRODUCT,
            offers={"v1": {"@type": "Offer", "price": "19.99", "priceCurrency": "USD"}},
        ),
    ],
)
def test_real_shapes_give_the_product(node: dict[str, Any]) -> None:
    related = dict(_BASE_PRODUCT, name="Other Thing", url=[URL + "?other"])
    response = HtmlResponse(url=URL, body=_page_with(_ld(node) + _ld(related)), encoding="utf-8")
    product = extract_product(response)
    assert product is not None and product["name"] == "Tea Kettle K1"
    assert product["price"] == Decimal("19.99")


def test_the_microdata_generator_reaches_the_microdata_reader() -> None:
    # the property test above is only worth something if its pages are read as microdata
    product = {k: v for k, v in _BASE_PRODUCT.items() if k != "offers"}
    inner = "".join(_microdata(k, v) for k, v in product.items() if not k.startswith("@"))
    offer = _microdata("offers", dict(_BASE_PRODUCT["offers"], **{"@type": "Offer"}))
    body = f'<div itemscope itemtype="https://schema.org/Product">{inner}{offer}</div>'
    found = extract_product(HtmlResponse(url=URL, body=_page_with(body=body), encoding="utf-8"))
    assert found is not None and found["provenance"]["sku"] == "microdata"
    assert (found["sku"], found["price"]) == ("K-1", Decimal("19.99"))
