"""The extraction benchmark's SKU scoring and its hand-checked SKU truth."""

from __future__ import annotations

import gzip
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

from scrapy.http import HtmlResponse

from benchmarks.extraction_accuracy import SKU_TRUTH, load_sku_truth, run, same_sku


def _case(name: str, sku_html: str, sku: str | None) -> tuple[str, HtmlResponse, dict[str, Any]]:
    html = (
        "<html><body><h1>Widget</h1><p class='price'>$10.00</p>"
        f"{sku_html}<button>Add to cart</button></body></html>"
    )
    truth = {
        "file": f"{name}.html",
        "name": "Widget",
        "price": "10.00",
        "currency": "USD",
        "availability": "InStock",
        "sku": sku,
    }
    response = HtmlResponse(
        url=f"https://{name}.example/p/widget", body=html.encode(), encoding="utf-8"
    )
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


# -- the benchmark's F1 rules (benchmarks/extraction_f1.py), on small synthetic truths


def test_f1_counts_right_wrong_extra_and_missing_values() -> None:
    from benchmarks.extraction_f1 import score_pages

    truths = [
        {"price": ["10.00"]},  # right: tp
        {"price": ["1.299,00"]},  # the page's own text: compared as a number, tp
        {"price": ["5"]},  # wrong value: fp and fn
        {},  # a price where the page shows none: fp
        {"price": ["7"]},  # no prediction: fn
    ]
    products = [
        {"price": Decimal("10")},
        {"price": Decimal("1299")},
        {"price": Decimal("6")},
        {"price": Decimal("3")},
        {"price": None},
    ]
    pages = [(f"p{i}", p, t) for i, (p, t) in enumerate(zip(products, truths, strict=True))]
    scores, misses = score_pages(pages, ["price"])
    s = scores["price"]
    assert (s.tp, s.fp, s.fn) == (2, 2, 2)
    assert s.precision == 0.5 and s.recall == 0.5 and s.f1 == 0.5
    assert [m.split()[2] for m in misses] == ["[wrong]:", "[fp]:", "[fn]:"]


def test_f1_availability_maps_states_and_scores_out_of_stock_apart() -> None:
    from benchmarks.extraction_f1 import score_pages

    pages = [
        ("a", {"availability": "LimitedAvailability"}, {"availability": ["InStock"]}),
        ("b", {"availability": "Discontinued"}, {"availability": ["OutOfStock"]}),
        ("c", {"availability": "OutOfStock"}, {"availability": ["InStock"]}),
        ("d", {"availability": None}, {"availability": ["OutOfStock"]}),
        ("e", None, {"availability": ["InStock"]}),  # no product at all: a miss
    ]
    scores, _ = score_pages(pages, ["availability"])
    a, oos = scores["availability"], scores["OutOfStock"]
    assert (a.tp, a.fp, a.fn) == (2, 1, 3)
    assert (oos.tp, oos.fp, oos.fn) == (1, 1, 1)


def test_f1_sku_is_exact_and_any_acceptable_value_counts() -> None:
    from benchmarks.extraction_f1 import score_pages

    pages = [
        ("a", {"sku": "ab-1"}, {"sku": ["AB-1"]}),  # exact: case counts
        ("b", {"sku": " 7142014 "}, {"sku": ["TE502955", "7142014"]}),
        ("c", {"sku": None}, {}),  # none shown, none given: nothing counted
    ]
    scores, _ = score_pages(pages, ["sku"])
    s = scores["sku"]
    assert (s.tp, s.fp, s.fn) == (1, 1, 1)


def test_f1_currency_symbols_and_prices_as_shown() -> None:
    from benchmarks.extraction_f1 import COMPARE, as_decimal

    same = COMPARE["currency"]
    assert same("EUR", "€") and same("PLN", "zł") and same("KZT", "тг.")
    assert same("KRW", "원~") and same("SAR", "ر.س") and same("BRL", "BRL")
    assert same("TWD", "$") and same("USD", "$") and not same("EUR", "$")
    assert not same("GBP", "€")
    assert as_decimal("131990 ") == Decimal("131990")
    assert as_decimal("1,299.00") == Decimal("1299.00") == as_decimal("1.299,00")
    assert as_decimal("15.99") == Decimal("15.99") and as_decimal("2 433") == 2433


def test_jsonl_folder_is_read_from_gzip_pages_under_their_own_url(tmp_path: Path) -> None:
    from benchmarks.extraction_accuracy import load_folder

    html = (
        "<html><body><h1>Lamp</h1><p class='price'>12,50 €</p>"
        "<button>Add to cart</button></body></html>"
    )
    (tmp_path / "aa.html.gz").write_bytes(gzip.compress(html.encode()))
    row = {
        "id": "aa",
        "file": "aa.html.gz",
        "url": "https://shop.example/lamp",
        "price": ["12,50"],
        "availability": ["InStock"],
    }
    (tmp_path / "truth.jsonl").write_text(json.dumps(row) + "\n", encoding="utf-8")
    [(name, response, truth)] = load_folder(tmp_path)
    assert name == "aa" and response.url == "https://shop.example/lamp"
    assert "Lamp" in response.text and truth == row
    lines, _ = run([(name, response, truth)], [], repeat=1)
    assert any(line.startswith("price ") and line.split()[1:4] == ["1", "0", "0"] for line in lines)
    assert "exceptions: 0" in lines
    assert any("lxml parse" in line and "discover_links" in line for line in lines)
