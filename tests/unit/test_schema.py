"""The product schema: what passes, and every violation reported with its field."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from crawler.core.items import FIELDS
from crawler.schema import (
    SCHEMA_PATH,
    product_fields,
    product_validator,
    to_json_ready,
    validation_errors,
)
from tests.support.products import make_product


def fields_of(item: dict[str, Any]) -> set[str | None]:
    return {problem.field for problem in validation_errors(item)}


def test_schema_file_is_a_valid_draft_2020_12_schema() -> None:
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["additionalProperties"] is False
    assert product_validator() is product_validator()  # compiled once


def test_fields_are_the_contract_fields() -> None:
    assert set(product_fields()) == set(FIELDS)


def test_valid_product_passes() -> None:
    assert validation_errors(make_product(1)) == []


def test_minimal_product_passes() -> None:
    assert validation_errors({"url": "http://shop.example/p", "name": "x"}) == []


@pytest.mark.parametrize(
    "overrides",
    [
        {"price": None, "currency": None},
        {"availability": None, "gtin": None, "brand": None, "sku": None},
        {"rating": None, "description": None},
        {"rating": {"value": 3}},
        {"gtin": "12345678"},
        {"gtin": "012345678905"},
        {"gtin": "12345678901231"},
        {"price": 0, "currency": "USD"},
        {"price": Decimal("1234567.89")},
        {"images": [], "breadcrumbs": []},
        {"crawled_at": "2026-01-02T03:04:05Z"},
    ],
)
def test_valid_variants_pass(overrides: dict[str, Any]) -> None:
    assert validation_errors(make_product(1, **overrides)) == []


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"url": "/product/1"}, "url"),
        ({"url": "ftp://shop.example/p"}, "url"),
        ({"url": "https://"}, "url"),
        ({"url": "https://shop.example/a b"}, "url"),
        ({"name": ""}, "name"),
        ({"name": "   "}, "name"),
        ({"name": None}, "name"),
        ({"price": Decimal("-0.01")}, "price"),
        ({"price": "12.50"}, "price"),
        ({"price": Decimal("NaN")}, "price"),
        ({"price": float("inf")}, "price"),
        ({"currency": "eur"}, "currency"),
        ({"currency": "EURO"}, "currency"),
        ({"currency": None}, "currency"),
        ({"availability": "in stock"}, "availability"),
        ({"availability": "https://schema.org/InStock"}, "availability"),
        ({"gtin": "123"}, "gtin"),
        ({"gtin": "1234567890"}, "gtin"),
        ({"gtin": "40063813339x1"}, "gtin"),
        ({"images": ["img/1.jpg"]}, "images"),
        ({"images": "https://shop.example/i.jpg"}, "images"),
        ({"breadcrumbs": [1, 2]}, "breadcrumbs"),
        ({"rating": {"value": 4, "count": -1}}, "rating"),
        ({"rating": {"count": 3}}, "rating"),
        ({"rating": {"value": 4, "best": 5}}, "rating"),
        ({"crawled_at": "yesterday"}, "crawled_at"),
        ({"crawled_at": "2026-13-01T00:00:00Z"}, "crawled_at"),
        ({"crawled_at": "2026-01-01T00:00:00"}, "crawled_at"),
        ({"worker": 7}, "worker"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_each_violation_is_reported_with_its_field(change: dict[str, Any], field: str) -> None:
    problems = validation_errors(make_product(1, **change))
    assert {p.field for p in problems} == {field}, problems
    assert all(p.message for p in problems)


def test_missing_url_and_name_are_reported() -> None:
    product = make_product(1)
    del product["url"], product["name"]
    problems = validation_errors(product)
    assert [(p.field, p.message) for p in problems] == [
        ("name", "'name' is a required property"),
        ("url", "'url' is a required property"),
    ]


def test_price_without_currency_is_reported_on_currency() -> None:
    product = make_product(1)
    del product["currency"]
    problems = validation_errors(product)
    assert [p.field for p in problems] == ["currency"]
    assert "with a price" in problems[0].message


def test_nested_problems_name_their_place() -> None:
    problems = validation_errors(make_product(1, images=["https://ok.example/a.jpg", "bad"]))
    assert problems[0].field == "images"
    assert problems[0].message.startswith("images/1: 'bad'")


def test_several_problems_are_all_reported_sorted_by_field() -> None:
    problems = validation_errors({"url": "nope", "name": "", "extra": 1, "price": -1})
    assert [p.field for p in problems] == ["currency", "extra", "name", "price", "url"]


def test_long_values_give_short_messages() -> None:
    problems = validation_errors(make_product(1, url="x" * 10_000))
    assert len(problems[0].message) <= 300


def test_not_an_object_is_one_problem_without_field() -> None:
    problems = validation_errors(["not", "a", "product"])
    assert [p.field for p in problems] == [None]


def test_to_json_ready_decides_conversions_in_one_place() -> None:
    ready = to_json_ready(
        {
            "price": Decimal("19.99"),
            "big": Decimal("1e400"),
            "nan": Decimal("NaN"),
            "inf": float("inf"),
            "when": dt.datetime(2026, 1, 2, 3, 4, 5),
            "day": dt.date(2026, 1, 2),
            "tags": ("a", "b"),
            "nested": {"value": Decimal("4.5")},
        }
    )
    assert ready == {
        "price": 19.99,
        "big": "1E+400",
        "nan": "NaN",
        "inf": "inf",
        "when": "2026-01-02T03:04:05+00:00",
        "day": "2026-01-02",
        "tags": ["a", "b"],
        "nested": {"value": 4.5},
    }
    json.dumps(ready, allow_nan=False)


def test_items_of_any_kind_are_validated_through_itemadapter() -> None:
    import scrapy

    class Product(scrapy.Item):
        url = scrapy.Field()
        name = scrapy.Field()
        price = scrapy.Field()

    assert fields_of(Product(url="https://a.example/p", name="x", price=Decimal("1"))) == {
        "currency"
    }
    assert validation_errors(Product(url="https://a.example/p", name="x")) == []


def test_provenance_names_fields_and_sources() -> None:
    good = make_product(1, provenance={"price": "visible", "availability": "json-ld"})
    assert not validation_errors(good)
    assert "provenance" in fields_of(make_product(1, provenance={"price": "guessed"}))
    assert "provenance" in fields_of(make_product(1, provenance={"colour": "visible"}))
