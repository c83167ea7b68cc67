"""JSON-LD blocks read each on its own and leniently (crawler/extraction/jsonld.py):
a broken block beside a good one, and good blocks in the wrappers old templates put
around scripts, still give the product. Class: shops whose templates or widgets
write JSON-LD that a strict parser of the whole page's blocks rejects."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from scrapy.http import HtmlResponse

from crawler.extraction import extract_product_from_html
from crawler.extraction.jsonld import jsonld_items
from crawler.extraction.tree import page_root

_PRODUCT = json.dumps(
    {
        "@context": "https://schema.org",
        "@type": "Product",
        "name": "Oak Lamp",
        "sku": "OL-1",
        "offers": {"@type": "Offer", "price": "1299.00", "priceCurrency": "USD",
                   "availability": "https://schema.org/OutOfStock"},
    }
)


def _page(*blocks: str) -> str:
    scripts = "".join(f"<script type='application/ld+json'>{b}</script>" for b in blocks)
    return f"<html><head>{scripts}</head><body><h1>Oak Lamp</h1></body></html>"


_BLOCKS = {
    "a broken block before it": ("{broken", _PRODUCT),
    "a broken block after it": (_PRODUCT, '{"@type": "Review", '),
    "an HTML comment around it": (f"<!-- {_PRODUCT} -->",),
    "a CDATA section around it": (f"//<![CDATA[\n{_PRODUCT}\n//]]>",),
    "a closing semicolon": (f"{_PRODUCT};",),
    "a trailing comma": (_PRODUCT[:-2] + ",}}",),
    "a JavaScript comment": (f"/* product */\n{_PRODUCT}",),
}


@pytest.mark.parametrize("case", sorted(_BLOCKS))
def test_the_product_of_a_good_block_is_read(case: str) -> None:
    product = extract_product_from_html("https://shop.example/p/oak-lamp", _page(*_BLOCKS[case]))
    assert product is not None
    assert product["provenance"]["price"] == "json-ld"
    assert (product["price"], product["sku"], product["availability"]) == (
        Decimal("1299.00"), "OL-1", "OutOfStock"
    )


def test_blocks_in_document_order_lists_unpacked_and_bad_ones_skipped() -> None:
    html = _page('[{"@type": "A"}, {"@type": "B"}]', "not json", "", '{"@type": "C"}', "null")
    response = HtmlResponse(url="https://shop.example/", body=html.encode(), encoding="utf-8")
    assert jsonld_items(page_root(response)) == [{"@type": "A"}, {"@type": "B"}, {"@type": "C"}]


def test_a_block_nested_thousands_deep_is_skipped_not_raised() -> None:
    deep = '{"a":' * 5000 + "1" + "}" * 5000
    html = _page(deep, _PRODUCT)
    response = HtmlResponse(url="https://shop.example/", body=html.encode(), encoding="utf-8")
    assert [item.get("name") for item in jsonld_items(page_root(response))] == ["Oak Lamp"]
