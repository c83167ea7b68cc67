"""``SeedBudgetMiddleware``: a seed's ``max_pages``, for all workers together.

A request made for a seed with ``max_pages`` (its ``meta["scope"]``, see
:mod:`crawler.policy.scope`) takes one page of the seed's budget before it is
downloaded: one ``HINCRBY`` of ``<spider>:seedpages`` (field: the seed's id),
atomic in Redis, so N workers together never download more than ``max_pages``
pages for it (sitemaps included, robots.txt aside; a retry is a page again).
A request past the budget is dropped (``IgnoreRequest``: finished, not a dead
letter) and counted (stat ``scope/max_pages``). Requests of seeds without
``max_pages`` cost nothing. It runs after ``RobotsTxtMiddleware`` (a forbidden
URL spends nothing) and before the politeness budget.
"""

from __future__ import annotations

import logging
from typing import Any

from scrapy import Request
from scrapy.exceptions import IgnoreRequest
from scrapy_redis.connection import get_redis_from_settings

from crawler.core.keys import CrawlKeys
from crawler.policy.scope import Scope

logger = logging.getLogger(__name__)


class SeedBudgetMiddleware:
    def __init__(self, server: Any, keys: CrawlKeys, stats: Any) -> None:
        self.server = server
        self.keys = keys
        self.stats = stats
        self._spent: set[str] = set()  # seeds whose budget this worker saw spent

    @classmethod
    def from_crawler(cls, crawler: Any) -> SeedBudgetMiddleware:
        return cls(
            get_redis_from_settings(crawler.settings),
            CrawlKeys.from_settings(crawler.settings, crawler.spidercls.name),
            crawler.stats,
        )

    def process_request(self, request: Request, spider: Any = None) -> None:
        scope = Scope.of(request.meta)
        if not scope.max_pages or request.url.endswith("/robots.txt"):
            return None
        if scope.seed_id not in self._spent:
            taken = int(self.server.hincrby(self.keys.seed_pages, scope.seed_id, 1))
            if taken <= scope.max_pages:
                return None
            self._spent.add(scope.seed_id)
            logger.info("Seed %s has used its max_pages (%d)", scope.seed_id, scope.max_pages)
        self.stats.inc_value("scope/max_pages")
        raise IgnoreRequest(f"seed {scope.seed_id}: max_pages ({scope.max_pages}) reached")
