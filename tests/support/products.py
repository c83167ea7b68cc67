"""Helpers of the schema, validation and storage tests: products, crawlers, an event loop."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from decimal import Decimal
from typing import Any, TypeVar

from scrapy import Spider
from scrapy.crawler import Crawler
from scrapy.utils.test import get_crawler

from crawler.core.signals import items_stored

T = TypeVar("T")


class EcommerceSpider(Spider):
    name = "ecommerce"


def make_product(i: int, **overrides: Any) -> dict[str, Any]:
    """A valid product, number ``i``, with ``overrides`` replacing or adding fields."""
    product: dict[str, Any] = {
        "url": f"https://shop.example/product/{i}",
        "name": f"Product {i}",
        "price": Decimal(f"{10 + i}.99"),
        "currency": "EUR",
        "availability": "InStock",
        "sku": f"SKU-{i}",
        "gtin": "4006381333931",
        "brand": "Acme",
        "images": [f"https://shop.example/img/{i}.jpg"],
        "breadcrumbs": ["Home", "Chairs"],
        "rating": {"value": 4.5, "count": 12},
        "description": "A product.",
        "crawled_at": "2026-11-22T03:19:21.123+00:00",
        "worker": "test-worker",
    }
    product.update(overrides)
    return product


# The worker's extensions that storage pipelines find with ``Cls.of(crawler)``.
PIPELINE_EXTENSIONS = {"crawler.core.flow.FlowControl": 10}


def make_crawler(settings: dict[str, Any]) -> Crawler:
    """A crawler with ``settings``, its ``EXTENSIONS`` added to :data:`PIPELINE_EXTENSIONS`."""
    extensions = {**PIPELINE_EXTENSIONS, **settings.get("EXTENSIONS", {})}
    return get_crawler(EcommerceSpider, settings_dict={**settings, "EXTENSIONS": extensions})


def run(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine on a fresh asyncio loop (Scrapy's helpers use it as the reactor's)."""
    return asyncio.run(coro)


class StoredRecorder:
    """Records every ``items_stored`` signal of a crawler."""

    def __init__(self, crawler: Crawler) -> None:
        self.calls: list[list[Any]] = []
        crawler.signals.connect(self._on_stored, signal=items_stored, weak=False)

    def _on_stored(self, items: list[Any], spider: Spider) -> None:
        assert spider.name == "ecommerce"
        self.calls.append(list(items))

    @property
    def items(self) -> list[Any]:
        return [item for call in self.calls for item in call]
