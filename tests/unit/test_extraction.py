"""Every saved page gives exactly its expected product (or None), field by field."""

from __future__ import annotations

import json
import re
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from scrapy.http import HtmlResponse

from crawler.extraction import PRODUCT_FIELDS, extract_product

PAGES = Path(__file__).resolve().parent.parent / "fixtures" / "pages"
SOURCES = {"json-ld", "microdata", "rdfa", "opengraph", "visible", "language", "profile", "url"}
_URL_COMMENT = re.compile(r"<!--\s*url:\s*(\S+)\s*-->")


def load_case(case: str, folder: Path = PAGES) -> tuple[HtmlResponse, dict[str, Any] | None]:
    """The saved page as a response (URL from its first-line comment) and its expectation."""
    html = (folder / f"{case}.html").read_text(encoding="utf-8")
    match = _URL_COMMENT.search(html)
    assert match, f"{case}.html must start with <!-- url: ... -->"
    response = HtmlResponse(url=match.group(1), body=html.encode("utf-8"), encoding="utf-8")
    expected = json.loads((folder / f"{case}.expected.json").read_text(encoding="utf-8"))
    return response, expected


CASES = sorted(p.name[: -len(".html")] for p in PAGES.glob("*.html"))


def _comparable(field: str, value: Any) -> Any:
    if field == "price" and value is not None:
        return Decimal(str(value))
    return value


def test_every_fixture_has_an_expectation() -> None:
    assert CASES, "no fixtures found"
    for case in CASES:
        assert (PAGES / f"{case}.expected.json").exists(), case


@pytest.mark.parametrize("case", CASES)
def test_fixture(case: str) -> None:
    response, expected = load_case(case)
    product = extract_product(response)
    if expected is None:
        assert product is None, f"{case}: not a product page, got {product!r}"
        return
    assert product is not None, f"{case}: product page not recognised"
    assert set(product) == set(PRODUCT_FIELDS) | {"provenance"}
    provenance = product["provenance"]
    assert provenance["name"] in SOURCES, (case, provenance)
    for field, source in provenance.items():
        assert source in SOURCES and product[field] not in (None, ""), (case, field, source)
    for field in ("price", "availability", "sku"):
        assert (field in provenance) == (product[field] is not None), (case, field, provenance)
    assert isinstance(product["price"], (Decimal, type(None)))
    mismatches = {
        field: (product[field], expected.get(field))
        for field in PRODUCT_FIELDS
        if _comparable(field, product[field]) != _comparable(field, expected.get(field))
    }
    assert not mismatches, f"{case}: got vs expected: {mismatches}"


@pytest.mark.parametrize("case", CASES)
def test_fixture_product_passes_the_product_schema(case: str) -> None:
    schema = pytest.importorskip("crawler.schema")
    response, expected = load_case(case)
    product = extract_product(response)
    if product is None:
        return
    item = dict(product, crawled_at="2026-01-01T00:00:00+00:00", worker="test-worker")
    assert not schema.validation_errors(item), case
