"""ProductValidationPipeline against a real Redis: invalid items are kept, counted and dropped."""

from __future__ import annotations

import json
import logging

import pytest
import redis
from scrapy.exceptions import DropItem

from crawler.pipelines.validation import ProductValidationPipeline
from tests.support.products import EcommerceSpider, make_crawler, make_product


@pytest.fixture
def pipeline(redis_url: str):  # type: ignore[no-untyped-def]
    crawler = make_crawler({"REDIS_URL": redis_url, "WORKER_ID": "worker-a"})
    pipeline = ProductValidationPipeline.from_crawler(crawler)
    pipeline.open_spider(EcommerceSpider())
    yield pipeline
    pipeline.close_spider()


def test_valid_item_passes_unchanged(pipeline: ProductValidationPipeline, redis_client) -> None:  # type: ignore[no-untyped-def]
    item = make_product(1)
    assert pipeline.process_item(item) is item
    assert pipeline.stats.get_value("validation/items_valid") == 1
    assert redis_client.llen("ecommerce:invalid") == 0


def test_invalid_item_is_kept_with_its_errors_and_dropped(
    pipeline: ProductValidationPipeline, redis_client: redis.Redis
) -> None:
    item = make_product(2, url="/relative", availability="Sold out")
    del item["currency"]
    with pytest.raises(DropItem) as raised:
        pipeline.process_item(item)
    reason = str(raised.value)
    assert "\n" not in reason and "/relative" in reason and "availability" in reason

    assert redis_client.llen("ecommerce:invalid") == 1
    record = json.loads(redis_client.lindex("ecommerce:invalid", 0))
    assert record["item"]["url"] == "/relative"
    assert record["item"]["price"] == 12.99
    assert record["worker"] == "worker-a"
    assert record["url"] == "/relative"
    assert record["time"].endswith("+00:00")
    assert {e["field"] for e in record["errors"]} == {"url", "availability", "currency"}
    assert all(e["message"] for e in record["errors"])
    assert redis_client.hget("ecommerce:stats", "items_invalid") == b"1"

    stats = pipeline.stats.get_stats()
    assert stats["validation/items_invalid"] == 1
    assert stats["validation/errors/url"] == 1
    assert stats["validation/errors/availability"] == 1
    assert stats["validation/errors/currency"] == 1
    assert "validation/items_valid" not in stats


def test_counts_add_up_over_many_items(
    pipeline: ProductValidationPipeline, redis_client: redis.Redis
) -> None:
    for i in range(10):
        item = make_product(i, name="") if i % 3 == 0 else make_product(i)
        try:
            pipeline.process_item(item)
        except DropItem:
            pass
    assert pipeline.stats.get_value("validation/items_valid") == 6
    assert pipeline.stats.get_value("validation/items_invalid") == 4
    assert pipeline.stats.get_value("validation/errors/name") == 4
    assert redis_client.llen("ecommerce:invalid") == 4
    assert redis_client.hget("ecommerce:stats", "items_invalid") == b"4"


def test_redis_away_logs_the_item_at_error_and_still_drops_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from tests.support.net import free_port

    crawler = make_crawler(
        {
            "REDIS_URL": f"redis://127.0.0.1:{free_port()}/0",
            "REDIS_PARAMS": {"socket_connect_timeout": 1, "socket_timeout": 1},
        }
    )
    pipeline = ProductValidationPipeline.from_crawler(crawler)
    pipeline.open_spider(EcommerceSpider())
    with caplog.at_level(logging.ERROR), pytest.raises(DropItem):
        pipeline.process_item(make_product(3, gtin="12"))
    pipeline.close_spider()
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1
    logged = errors[0].getMessage()
    assert "https://shop.example/product/3" in logged and '"gtin"' in logged
