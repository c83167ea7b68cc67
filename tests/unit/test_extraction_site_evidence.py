"""Evidence from the whole shop (issue 29, point 2): a site's template statements are
not a product's stock, the visible twins of its structured data tell where it shows
price and stock on pages without any, a field that disagrees with the site's pattern
is flagged; in bounded memory; a page seen alone reads as before.

Class of pages: shops whose template puts stock wording about other things on every
page (a delivery notice, a sold-out badge of a recommendation box) and that carry
structured data on some product pages only (:mod:`demoshop.templated`)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from scrapy.http import HtmlResponse

from crawler.extraction import extract
from crawler.extraction.evidence import MIN_PAGES, PageEvidence, SiteEvidence
from demoshop.catalog import Catalog
from demoshop.templated import TemplatedShop

BASE = "http://shop.example"


@pytest.fixture(scope="module")
def shop() -> TemplatedShop:
    return TemplatedShop(Catalog.build(products=24))


def _response(shop: TemplatedShop, path: str) -> HtmlResponse:
    return HtmlResponse(url=BASE + path, body=shop.resolve("GET", path).body, encoding="utf-8")


@pytest.fixture(scope="module")
def known(shop: TemplatedShop) -> SiteEvidence:
    """The evidence of the shop's home, listings and JSON-LD product pages."""
    known = SiteEvidence()
    paths = sorted(shop.listing_paths()) + [
        p.path for p in shop.products if shop.has_json_ld(p)
    ]
    for path in paths:
        result = extract(_response(shop, path), site=known)
        assert result.evidence is not None
        known.add(result.evidence.counts())
    return known


def test_pages_without_structured_data_read_where_the_site_shows_price_and_stock(
    shop: TemplatedShop, known: SiteEvidence
) -> None:
    assert known.mature
    assert known.position("price") and known.position("availability")
    plain = [p for p in shop.products if not shop.has_json_ld(p)]
    assert {p.availability for p in plain} >= {"InStock", "OutOfStock"}
    for product in plain:
        alone = extract(_response(shop, product.path))
        assert alone.product is None  # one page alone: no price after its heading
        read = extract(_response(shop, product.path), site=known).product
        assert read is not None, product.path
        want = shop.expected_product(product)
        assert (read["price"], read["availability"]) == (want["price"], want["availability"])
        assert read["provenance"]["price"] == "site"


def test_the_templates_sold_out_badge_is_not_the_products_stock(
    shop: TemplatedShop, known: SiteEvidence
) -> None:
    assert "Sold out" in known.template()
    assert "Express delivery is currently unavailable." in known.template()
    # the product's own "Sold out" (its buy box) is no template statement
    own = [p for p in shop.products if p.availability != "InStock"][0]
    assert not known.is_template(known.position("availability") or "", "Sold out")
    read = extract(_response(shop, own.path), site=known).product
    assert read is not None and read["availability"] == "OutOfStock"


def test_a_statement_every_page_agrees_with_is_no_template() -> None:
    """Seen on every page, but only on product pages that say the same in their
    structured data: the products' own stock line, not a template's."""
    known = SiteEvidence()
    page = PageEvidence(
        product=True,
        statements=(("#buybox/p[2]", "In stock", "InStock"),),
        structured=(("availability", "InStock"),),
    )
    for _ in range(MIN_PAGES * 2):
        known.add(page.counts())
    assert known.template() == {}
    listing = PageEvidence(product=False, statements=page.statements).counts()
    known.add(listing)  # one page it cannot describe: not enough
    assert known.template() == {}
    for _ in range(3):
        known.add(listing)
    assert known.is_template("#buybox/p[2]", "In stock")


def test_a_field_disagreeing_with_the_sites_pattern_is_flagged(
    shop: TemplatedShop, known: SiteEvidence
) -> None:
    product = next(p for p in shop.products if shop.has_json_ld(p))
    html = shop.resolve("GET", product.path).body.decode()
    stale = html.replace(f'"price": "{product.price:.2f}"', '"price": "1.00"')
    response = HtmlResponse(url=BASE + product.path, body=stale.encode(), encoding="utf-8")
    read = extract(response, site=known).product
    assert read is not None and read["price"] == Decimal("1.00")  # the markup's, as before
    assert read["provenance"]["disagrees"] == ["price"]
    fine = extract(_response(shop, product.path), site=known).product
    assert fine is not None and "disagrees" not in fine["provenance"]


def test_a_sites_evidence_is_bounded() -> None:
    known = SiteEvidence(limit=64)
    for i in range(2000):
        known.add(PageEvidence(False, statements=((f"body/p[{i}]", "Sold out", "OutOfStock"),))
                  .counts())
    assert len(known.counts) <= 64
    assert known.pages == 2000  # the page counts are never dropped


def test_a_page_read_with_a_young_sites_evidence_reads_as_alone(shop: TemplatedShop) -> None:
    for product in shop.products[:6]:
        alone = extract(_response(shop, product.path))
        young = extract(_response(shop, product.path), site=SiteEvidence())
        assert (alone.product, alone.rejected) == (young.product, young.rejected)
