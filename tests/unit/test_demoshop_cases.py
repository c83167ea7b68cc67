"""The demo shop's cases of issue 16, each read by the real extractor and link
discovery (no crawl; the e2e crawl is tests/e2e/test_page_typing_crawl.py):

* products whose model number looks like an error code ("... Kettle 404"), in the
  three markups, are products;
* "Products in <category>" shelves of 1, 2 and 3 cards, each card marked up as a
  Product (microdata or JSON-LD), are listings;
* a listing's first page is linked both bare and as ``?page=1``, and the shop serves
  both: links give one URL.
"""

from __future__ import annotations

import re

from scrapy.http import HtmlResponse

from crawler.extraction import discover_links, extract
from demoshop.catalog import ERROR_CODE_MODEL_EVERY, Catalog
from demoshop.site import ShopSite
from demoshop.traps import SHELVES, shelf, shelf_path

BASE = "http://127.0.0.1:8000"


def _response(site: ShopSite, target: str) -> HtmlResponse:
    page = site.resolve("GET", target)
    assert page.status == 200, target
    return HtmlResponse(url=BASE + target, body=page.body)


def test_products_whose_model_number_looks_like_an_error_code_are_products() -> None:
    catalog = Catalog.build(300)
    site = ShopSite(catalog)
    odd = [p for p in catalog.products if p.id % 100 == ERROR_CODE_MODEL_EVERY]
    assert {p.markup for p in odd} == {"jsonld", "microdata", "plain"}
    for product in odd:
        assert product.name.endswith(" 404")
        result = extract(_response(site, product.path))
        assert result.product is not None, (product.path, result.rejected)
        expected = catalog.expected_product(product.path)
        got = {k: result.product[k] for k in ("name", "price", "currency", "sku")}
        assert got == {k: expected[k] for k in got}


def test_shelves_of_marked_up_cards_are_listings() -> None:
    catalog = Catalog.build()
    site = ShopSite(catalog)
    for markup, size in SHELVES:
        response = _response(site, shelf_path(markup, size))
        shown = shelf(catalog, markup, size)
        assert len(shown) == size
        body = response.text
        assert body.count("Add to cart</button>") == size
        assert body.count('itemtype="https://schema.org/Product"') == (
            size if markup == "md" else 0
        )
        assert body.count('"@type": "Product"') == (size if markup == "ld" else 0)
        result = extract(response)
        assert (result.product, result.rejected) == (None, "listing"), shelf_path(markup, size)


def test_a_listings_first_page_is_one_url() -> None:
    catalog = Catalog.build()
    site = ShopSite(catalog)
    leaf = next(c for c in catalog.leaves() if c.page_count(catalog.page_size) >= 2)
    # the pager of page 2 links page 1 as ?page=1; the shop serves it as page 1
    assert 'href="?page=1"' in _response(site, leaf.path + "?page=2").text
    assert site.resolve("GET", leaf.path + "?page=1").body == site.resolve("GET", leaf.path).body
    links = discover_links(_response(site, leaf.path + "?page=2"))
    assert BASE + leaf.path in links
    assert not [u for u in links if re.search(r"[?&]page=1(?:&|$)", u)]
    for markup, size in SHELVES:  # a shelf's pager links its own ?page=1
        own = discover_links(_response(site, shelf_path(markup, size)))
        assert not [u for u in own if u.startswith(BASE + "/x/shelf/")]
