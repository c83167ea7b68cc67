"""Rejected items, kept in Redis where ``master status`` counts them.

Both the validation pipeline (an item the schema refuses) and the storage
pipelines (a row the database refuses) keep a rejected item the same way:

* ``LPUSH <spider>:invalid`` a :class:`crawler.core.records.InvalidItem`
  ``{"item": {...}, "errors": [{"field": ..., "message": ...}], "worker": ...,
  "url": ..., "time": <RFC 3339 UTC>}`` (newest first), unless
  ``VALIDATION_KEEP_INVALID`` is false;
* ``HINCRBY <spider>:stats items_invalid 1`` (:attr:`StatsFields.ITEMS_INVALID
  <crawler.core.records.StatsFields.ITEMS_INVALID>`).

When Redis cannot be reached at that moment the record is logged at ERROR
level instead, so a rejected item is never lost silently.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import redis

from crawler.core.keys import CrawlKeys
from crawler.core.records import InvalidItem, StatsFields
from crawler.schema import ValidationProblem, item_to_dict

logger = logging.getLogger(__name__)


def utc_now_text() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds")


def _safe_item(item: Any) -> Any:
    try:
        return item_to_dict(item)
    except Exception:  # noqa: BLE001 - a record must be written whatever the item is
        return repr(item)


def invalid_record(item: Any, problems: Sequence[ValidationProblem], worker: str) -> InvalidItem:
    """The record kept in ``<spider>:invalid`` for one rejected item."""
    data = _safe_item(item)
    return InvalidItem(
        item=data,
        errors=[problem.as_dict() for problem in problems],
        worker=worker,
        url=data.get("url") if isinstance(data, dict) else None,
        time=utc_now_text(),
    )


@dataclass
class RejectedItemKeeper:
    """Keeps rejected items in ``<spider>:invalid`` and counts them in ``<spider>:stats``."""

    server: redis.Redis
    keys: CrawlKeys
    worker: str
    keep: bool = True

    def keep_all(self, rejected: Sequence[tuple[Any, Sequence[ValidationProblem]]]) -> None:
        """Keep each ``(item, problems)``; one Redis round trip for all of them."""
        if not rejected:
            return
        records = [
            invalid_record(item, problems, self.worker).encode() for item, problems in rejected
        ]
        try:
            # on a cluster the keys have slots of their own: no MULTI across them
            pipe = self.server.pipeline(transaction=not self.keys.cluster)
            if self.keep:
                pipe.lpush(self.keys.invalid, *records)
            pipe.hincrby(self.keys.stats, StatsFields.ITEMS_INVALID, len(records))
            pipe.execute()
        except (redis.RedisError, OSError) as exc:
            for record in records:
                logger.error(
                    "Redis unreachable (%s): rejected item not kept in %s: %s",
                    exc,
                    self.keys.invalid,
                    record,
                )
            return
        if not self.keep:
            for record in records:
                logger.warning("Rejected item (VALIDATION_KEEP_INVALID is off): %s", record)
