"""Item validation: only items that match their kind's schema go on to storage."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from itemadapter import ItemAdapter
from scrapy.exceptions import DropItem
from scrapy_redis.connection import get_redis_from_settings

from crawler.core import defaults
from crawler.core.config import worker_id
from crawler.core.itemkinds import (
    LISTED_PRODUCT,
    LISTED_VALID,
    PRODUCT,
    ItemKind,
    kind_of,
    kind_of_item,
)
from crawler.core.keys import CrawlKeys
from crawler.pipelines.rejects import RejectedItemKeeper
from crawler.schema import validation_errors, validator_of

if TYPE_CHECKING:
    import redis
    from scrapy import Spider
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)

MAX_REASON_LENGTH = 500


class ItemValidationPipeline:
    """Validates every item against the schema of the spider's item kind
    (:mod:`crawler.core.itemkinds`): ``crawler/schema/product.schema.json`` for the
    ``ecommerce`` spider, ``quote.schema.json`` for ``finance``; an item of the
    ``ecommerce`` spider that names its listing page is a listed product
    (``listed_product.schema.json``, :func:`crawler.core.itemkinds.kind_of_item`).

    The schema is loaded and checked once, when the pipeline is built: a broken
    schema stops the worker at start-up. Each item is validated through
    ``ItemAdapter`` (dicts, ``scrapy.Item``, dataclasses, attrs classes).

    A valid item is passed on unchanged. An invalid item never is:

    * it is kept with its errors in ``<spider>:invalid`` (see
      :mod:`crawler.pipelines.rejects`; ``VALIDATION_KEEP_INVALID``) and
      counted in ``<spider>:stats`` as ``items_invalid``; if Redis is away at
      that moment it is logged as JSON at ERROR level instead;
    * it is dropped (``DropItem``, logged by Scrapy at WARNING) with a one-line
      reason.

    Crawl stats: ``validation/items_valid``, ``validation/items_invalid`` and
    ``validation/errors/<field>`` (one count per problem; ``_item`` for a
    problem about the item as a whole).

    Settings: ``REDIS_URL`` (and scrapy-redis's ``REDIS_PARAMS``), ``WORKER_ID``,
    ``VALIDATION_KEEP_INVALID`` (default ``True``).
    """

    def __init__(
        self, crawler: Crawler, server: redis.Redis | None = None, kind: ItemKind | None = None
    ) -> None:
        spidercls = getattr(crawler, "spidercls", None)
        self.kind = kind or (kind_of(spidercls) if spidercls is not None else PRODUCT)
        validator_of(self.kind.name)  # load and check the schema now, not on the first item
        if self.kind is PRODUCT:  # listed products come beside products
            validator_of(LISTED_PRODUCT.name)
        self.crawler = crawler
        self.stats = crawler.stats
        self.worker = worker_id(crawler.settings)
        self.keep_invalid = crawler.settings.getbool(
            "VALIDATION_KEEP_INVALID", defaults.VALIDATION_KEEP_INVALID
        )
        self.server = server
        self._own_server = server is None
        self.keeper: RejectedItemKeeper | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ItemValidationPipeline:
        return cls(crawler)

    def open_spider(self, spider: Spider | None = None) -> None:
        spider = spider or self.crawler.spider
        assert spider is not None, "open_spider() needs the crawler's spider"
        if self.server is None:
            self.server = get_redis_from_settings(self.crawler.settings)
        self.keeper = RejectedItemKeeper(
            self.server,
            CrawlKeys.from_settings(self.crawler.settings, spider.name),
            self.worker,
            keep=self.keep_invalid,
        )

    def close_spider(self, spider: Spider | None = None) -> None:
        if self.server is not None and self._own_server:
            self.server.close()
            self.server = None

    def process_item(self, item: Any) -> Any:
        kind = kind_of_item(item, self.kind)
        problems = validation_errors(item, kind.name)
        if not problems:
            self.stats.inc_value("validation/items_valid")
            if kind is LISTED_PRODUCT:  # counted apart from the items (workerstats)
                self.stats.inc_value(LISTED_VALID)
            return item
        self.stats.inc_value("validation/items_invalid")
        for problem in problems:
            self.stats.inc_value(f"validation/errors/{problem.field or '_item'}")
        assert self.keeper is not None, "process_item() before open_spider()"
        self.keeper.keep_all([(item, problems)])
        url = ItemAdapter(item).get("url") if ItemAdapter.is_item(item) else None
        summary = "; ".join(f"{p.field or 'item'}: {p.message}" for p in problems)
        reason = f"Invalid {kind.name} {url or '(no url)'}: {summary}".replace("\n", " ")
        if len(reason) > MAX_REASON_LENGTH:
            reason = reason[: MAX_REASON_LENGTH - 3] + "..."
        raise DropItem(reason)


#: the name this pipeline had when products were the only items (settings may name it)
ProductValidationPipeline = ItemValidationPipeline
