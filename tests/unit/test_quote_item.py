"""The quote: its typed class and its JSON Schema say the same; the spiders and their kinds."""

from __future__ import annotations

import copy
import typing
from decimal import Decimal

from crawler.core import items
from crawler.core.itemkinds import KINDS, SPIDER_ITEM_KINDS, SPIDERS, kind_of, kind_of_spider
from crawler.core.items import Quote
from crawler.pipelines.quote_record import QUOTE_ROW_COLUMNS, QuoteRecord, batch_plan
from crawler.schema import schema_of, validation_errors
from crawler.spiders.ecommerce import EcommerceSpider
from crawler.spiders.finance import FinanceSpider
from tests.unit.test_items import check_against


def inlined(schema: dict) -> dict:
    """The schema with each property's ``$ref`` replaced by its definition."""
    schema = copy.deepcopy(schema)
    for name, prop in schema["properties"].items():
        ref = prop.pop("$ref", None)
        if ref:
            schema["properties"][name] = {**schema["$defs"][ref.split("/")[-1]], **prop}
    return schema


def quote(**overrides: object) -> dict:
    return {
        "url": "https://quotes.example/quote/ACME",
        "symbol": "ACME",
        "name": "Acme",
        "exchange": "NASDAQ",
        "price": Decimal("187.44"),
        "currency": "USD",
        "change": Decimal("-1.2"),
        "change_percent": Decimal("-0.64"),
        "volume": 52345678,
        "market_cap": Decimal("2.95E+12"),
        "as_of": "2025-03-12T16:00:00-04:00",
        "provenance": {"price": "label", "as_of": "label"},
        **overrides,
    }


def test_quote_is_the_schema() -> None:
    check_against(Quote, inlined(schema_of("quote")))


def test_provenance_values_are_the_schema_sources() -> None:
    provenance = schema_of("quote")["properties"]["provenance"]
    assert list(typing.get_args(items.QuoteSource)) == provenance["additionalProperties"]["enum"]
    assert set(provenance["propertyNames"]["enum"]) == set(items.QUOTE_PAGE_FIELDS) - {"url"}


def test_the_lists_derive_from_the_quote() -> None:
    assert items.QUOTE_COLUMNS == (
        "url",
        "symbol",
        "name",
        "exchange",
        "price",
        "currency",
        "change",
        "volume",
        "market_cap",
        "as_of",
    )
    assert items.QUOTE_OBSERVATION == ("url", "symbol", "price", "currency", "volume", "as_of")
    assert QUOTE_ROW_COLUMNS == (*items.QUOTE_COLUMNS, "data")


def test_a_quote_validates_and_absurd_values_do_not() -> None:
    assert validation_errors(quote(), "quote") == []
    typed = Quote(**quote(), crawled_at="2025-03-12T20:00:01+00:00", worker="w1")  # type: ignore[arg-type]
    assert validation_errors(typed, "quote") == []
    for bad, field in (
        (quote(price=0), "price"),
        (quote(volume=-1), "volume"),
        (quote(currency="euro"), "currency"),
        (quote(as_of="yesterday"), "as_of"),
        (quote(symbol=" "), "symbol"),
        (quote(price=-3), "price"),
    ):
        assert field in {p.field for p in validation_errors(bad, "quote")}
    missing = {k: v for k, v in quote().items() if k != "currency"}
    assert [p.field for p in validation_errors(missing, "quote")] == ["currency"]
    assert (
        validation_errors(quote(color="red"), "quote")[0].message == "'color' is not a quote field"
    )


def test_records_keep_the_latest_quote_and_each_observation_once() -> None:
    first = QuoteRecord.of(quote(), "w")
    later = QuoteRecord.of(quote(price=Decimal("190"), as_of="2025-03-12T16:05:00-04:00"), "w")
    again = QuoteRecord.of(quote(), "w")
    plan = batch_plan([later, first, again])
    assert plan.latest == [later]
    assert [r.as_of for r in plan.observations] == [first.as_of, later.as_of]
    fetched = [
        QuoteRecord.of(
            quote(as_of=f"2025-03-12T20:0{n}:00+00:00", provenance={"as_of": "fetch"}), "w"
        )
        for n in range(3)
    ]
    assert len(batch_plan(fetched).observations) == 1  # unchanged, fetched three times
    assert first.price == Decimal("187.44") and first.volume == 52345678


def test_every_spider_says_its_kind_and_the_table_agrees() -> None:
    assert SPIDERS == ("ecommerce", "finance")
    for spider in (EcommerceSpider, FinanceSpider):
        assert SPIDER_ITEM_KINDS[spider.name] == spider.item_kind
        assert kind_of(spider) is KINDS[spider.item_kind] is kind_of_spider(spider.name)
    assert kind_of_spider("a-third-spider").name == "product"
