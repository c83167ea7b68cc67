"""The extraction benchmark's SKU scoring and its hand-checked SKU truth."""

from __future__ import annotations

import json
from typing import Any

from scrapy.http import HtmlResponse

from benchmarks.extraction_accuracy import SKU_TRUTH, load_sku_truth, run, same_sku


def _case(name: str, sku_html: str, sku: str | None) -> tuple[str, HtmlResponse, dict[str, Any]]:
    html = (
        "<html><body><h1>Widget</h1><p class='price'>$10.00</p>"
        f"{sku_html}<button>Add to cart</button></body></html>"
    )
    truth = {"file": f"{name}.html", "name": "Widget", "price": "10.00", "currency": "USD",
             "availability": "InStock", "sku": sku}
    response = HtmlResponse(url=f"https://{name}.example/p/widget", body=html.encode(),
                            encoding="utf-8")
    return name, response, truth


def test_sku_compares_case_insensitively_after_trimming() -> None:
    assert same_sku(" ab-12 ", "AB-12")
    assert not same_sku("AB-12", "AB-13")
    assert not same_sku(None, "AB-12")
    assert not same_sku("AB-12", None)
    assert same_sku(None, None)


def test_sku_rows_score_shown_codes_and_count_codes_where_none_is_shown() -> None:
    cases = [
        _case("right", "<p>SKU: ab-12</p>", "AB-12"),
        _case("wrong", "<p>SKU: AB-99</p>", "AB-12"),
        _case("none-shown", "<p>SKU: ZZ-1</p>", None),
        _case("none-given", "", None),
    ]
    lines, misses = run(cases, [], repeat=0)  # type: ignore[arg-type]
    sku_row = next(line for line in lines if line.startswith("sku "))
    assert sku_row.split()[1:3] == ["1", "2"]  # correct, total: pages with a shown code
    assert "sku where page shows none: 1 of 2 pages" in lines
    assert any(m.startswith("wrong: sku: got 'AB-99'") for m in misses)
    assert any(m.startswith("none-shown: sku: got 'ZZ-1'") for m in misses)


def test_sku_truth_file_covers_each_page_with_label_and_evidence() -> None:
    data = json.loads(SKU_TRUTH.read_text(encoding="utf-8"))
    assert len(data) == 47
    for slug, entry in data.items():
        assert set(entry) <= {"sku", "label", "evidence", "notes"}, slug
        assert 0 < len(entry["evidence"]) < 120, slug
        if entry["sku"] is not None:
            assert entry["sku"] == entry["sku"].strip() and entry["sku"], slug
    truth = load_sku_truth()
    assert truth["bestbuy"] == "5577872" and truth["wayfair"] is None
