"""The extractor never raises, whatever a page holds (property-based, hypothesis).

Real pages (the project's fixtures) are mutated: truncated anywhere, re-encoded
wrongly, given broken, nested or odd JSON-LD (lists where strings are expected,
numbers, nulls, deep nesting) and odd meta tags. :func:`extract_product` must
return a product or None, never raise. When the shared development set is
present (``../shared/product-pages-dev``), its pages are mutated too.
"""

from __future__ import annotations

import json
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
