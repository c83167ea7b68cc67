"""The typed product (crawler/core/items.py) and the JSON Schema say the same; what
derives from it."""

from __future__ import annotations

import dataclasses
import re
import sqlite3
import types
import typing
from decimal import Decimal
from typing import Any, Literal

import pytest

from crawler.core import items
from crawler.core.items import Product, Rating
from crawler.pipelines import embedded, postgres
from crawler.pipelines.product_record import ROW_COLUMNS, ProductRecord
from crawler.schema import product_schema, validation_errors
from tests.support.products import make_product

SCALARS = {str: "string", Decimal: "number", float: "number", int: "integer", bool: "boolean"}


def resolve(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with its ``$ref`` (to ``#/$defs/...``) replaced by what it points to."""
    ref = schema.get("$ref")
    if ref is None:
        return schema
    target = product_schema()["$defs"][ref.removeprefix("#/$defs/")]
    return {**target, **{key: value for key, value in schema.items() if key != "$ref"}}


def schema_types(schema: dict[str, Any]) -> set[str]:
    """The JSON types a property allows (``enum`` included)."""
    schema = resolve(schema)
    if "enum" in schema:
        return {"null" if value is None else SCALARS[type(value)] for value in schema["enum"]}
    declared = schema["type"]
    return {declared} if isinstance(declared, str) else set(declared)


def alternatives(hint: Any) -> list[Any]:
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        return list(typing.get_args(hint))
    return [hint]


def json_type(hint: Any) -> str:
    """The JSON type a Python annotation (without ``None``) is written as."""
    origin = typing.get_origin(hint)
    if origin is Literal:
        (kind,) = {SCALARS[type(value)] for value in typing.get_args(hint)}
        return kind
    if origin is list:
        return "array"
    if origin is dict or dataclasses.is_dataclass(hint):
        return "object"
    return SCALARS[hint]


def check_against(cls: type, schema: dict[str, Any]) -> None:
    """``cls``'s fields are ``schema``'s properties: names, order, required, types, enums."""
    hints = typing.get_type_hints(cls)
    properties = schema["properties"]
    assert [f.name for f in dataclasses.fields(cls)] == list(properties)
    required = {
        f.name
        for f in dataclasses.fields(cls)
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    }
    assert required == set(schema.get("required", [])), cls.__name__
    for name, prop in properties.items():
        prop = resolve(prop)
        options = alternatives(hints[name])
        nullable = type(None) in options
        python = {json_type(option) for option in options if option is not type(None)}
        allowed = schema_types(prop)
        assert python == allowed - {"null"}, name
        assert ("null" in allowed) <= nullable, f"{name}: the schema allows null"
        if nullable and "null" not in allowed:
            # only what the crawl adds may be None for "absent" (it is never null)
            assert name in items.CRAWL_FIELDS, f"{name}: None, but the schema refuses null"
            assert name not in required, f"{name}: required but the schema refuses null"
        for option in options:
            if typing.get_origin(option) is Literal:
                enum = [value for value in prop["enum"] if value is not None]
                assert list(typing.get_args(option)) == enum, name
            if typing.get_origin(option) is list:
                (inner,) = typing.get_args(option)
                assert {json_type(inner)} == schema_types(prop["items"]), name
            if dataclasses.is_dataclass(option):
                check_against(typing.cast(type, option), prop)


def test_product_is_the_schema() -> None:
    check_against(Product, product_schema())


def test_provenance_values_are_the_schema_sources() -> None:
    provenance = product_schema()["properties"]["provenance"]
    assert typing.get_type_hints(Product)["provenance"] == dict[str, items.Source]
    assert list(typing.get_args(items.Source)) == provenance["additionalProperties"]["enum"]


def test_the_check_notices_drift() -> None:
    schema = product_schema()

    @dataclasses.dataclass(kw_only=True)
    class Renamed:
        url: str
        title: str

    @dataclasses.dataclass(kw_only=True)
    class Retyped:
        url: str
        name: int

    @dataclasses.dataclass(kw_only=True)
    class Optional:
        url: str
        name: str | None = None

    small = {**schema, "properties": {k: schema["properties"][k] for k in ("url", "name")}}
    for drifted in (Renamed, Retyped, Optional):
        with pytest.raises(AssertionError):
            check_against(drifted, small)
    with pytest.raises(AssertionError):  # a field the class does not have
        check_against(Product, {**schema, "properties": {**schema["properties"], "color": {}}})


def test_a_full_product_is_a_valid_item() -> None:
    product = Product(
        url="https://shop.example/p/1",
        name="Chair",
        price=Decimal("19.90"),
        currency="EUR",
        availability="InStock",
        sku="C-1",
        gtin="4006381333931",
        brand="Acme",
        images=["https://shop.example/1.jpg"],
        breadcrumbs=["Home", "Chairs"],
        rating=Rating(value=4.5, count=12),
        description="A chair.",
        provenance={"name": "json-ld", "price": "visible"},
        crawled_at="2026-11-22T03:19:21.123+00:00",
        worker="w1",
    )
    assert validation_errors(product) == []


def test_the_lists_derive_from_the_product() -> None:
    assert items.FIELDS == tuple(product_schema()["properties"])
    assert items.PAGE_FIELDS + ("provenance", "uncertain") + items.CRAWL_FIELDS == items.FIELDS
    assert set(items.PROFILE_FIELDS) == (set(items.PAGE_FIELDS) - {"url", "rating"}) | {
        "rating_value",
        "rating_count",
    }
    assert set(items.COLUMNS) <= set(items.FIELDS)
    assert set(items.OFFER_FIELDS) <= set(items.COLUMNS)


def test_the_storage_record_has_the_columns() -> None:
    assert [f.name for f in dataclasses.fields(ProductRecord)] == [
        *items.COLUMNS,
        "data",
        "data_json",
    ]
    record = ProductRecord.of(make_product(1), "w")
    assert record.row()[: len(items.COLUMNS)] == tuple(
        getattr(record, column) for column in items.COLUMNS
    )
    assert record.row()[-1] == record.data_json


def table_columns(schema_sql: str, table: str) -> list[str]:
    body = re.search(rf"CREATE TABLE IF NOT EXISTS {table} \((.*?)\n\);", schema_sql, re.S)
    assert body is not None
    return [line.split()[0] for line in body.group(1).strip().splitlines()]


def test_the_tables_have_the_record_s_columns() -> None:
    row = [*ROW_COLUMNS, "first_seen", "last_seen"]
    history = ["id", "url", *items.OFFER_FIELDS, "worker", "seen_at"]
    for sql in (postgres.SCHEMA_SQL, embedded.SCHEMA_SQL):
        assert table_columns(sql, "products") == row
        assert table_columns(sql, "product_price_history") == history
    conn = sqlite3.connect(":memory:")
    conn.executescript(embedded.SCHEMA_SQL)
    assert [r[1] for r in conn.execute("PRAGMA table_info(products)")] == row
    conn.close()
