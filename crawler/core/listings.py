"""The listing pages a crawl read, and what their cards showed of each item.

A spider that reads items off listing pages (the ``ecommerce`` spider's listed
products; any spider may) records each listing page it read with
:meth:`ListingMemory.record`: the page, and for each item a card showed, the fields
the card showed a value of. ``python -m master recrawl --listings``
(:mod:`master.listings`) reads this memory: it queues the listing pages again instead
of the items' own pages, and an item's page only when no listing showed the item, or
its card lacked a field the item has (a price, a stock state).

Keys, under the spider's prefix (:class:`crawler.core.keys.CrawlKeys`): ``<s>:listings:pages``
(hash: page URL -> JSON ``{"cards": n, "seen_at": epoch seconds}``) and
``<s>:listings:items`` (hash: item URL -> JSON ``{"listing": page URL, "shown": [field,
...], "seen_at": epoch seconds}``: the fields shown are those of every card of the item
read so far, so a card that shows less, on a shelf of new arrivals, does not hide what
the category page shows); ``<s>:listings:refresh`` (hash: the last refresh from
listings, written by the master: ``started``, the requests it queued; the workers add
``refreshed``, the items a listing showed since it started). Crawl-wide keys (no
shard): a listing page holds tens of items, so they are a small part of the crawl's keys.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import redis

from crawler.core.keys import CrawlKeys


def shown_fields(card: Mapping[str, Any], fields: Iterable[str]) -> list[str]:
    """The ``fields`` of which the card shows a value (not None)."""
    return [name for name in fields if card.get(name) is not None]


class ListingMemory:
    """The listing pages of one spider's crawl, and what their cards showed (see the
    module doc). Built with the spider's Redis client and keys; writes are blocking
    Redis calls (one pipeline a page)."""

    def __init__(self, server: redis.Redis, keys: CrawlKeys) -> None:
        self.server = server
        self.keys = keys

    def record(
        self,
        page_url: str,
        items: Sequence[tuple[str, Iterable[str]]],
        now: float | None = None,
    ) -> None:
        """Record that the listing page ``page_url`` was read, and for each of its items
        (item URL, the fields its card showed a value of) what it showed."""
        now = time.time() if now is None else now
        keys = self.keys
        urls = [url for url, _ in items]
        read = self.server.pipeline(transaction=False)
        read.hget(keys.listings_refresh, "started")
        if urls:
            read.hmget(keys.listed_items, urls)
        started_raw, *rest = read.execute()
        earlier = rest[0] if rest else []
        started = _number(started_raw)
        values: dict[str, str] = {}
        refreshed = 0  # items seen for the first time since the refresh started
        for (url, shown), before in zip(items, earlier, strict=True):
            fields = set(shown)
            previous: dict[str, Any] = {}
            if before:
                try:
                    previous = json.loads(before)
                    fields.update(previous.get("shown") or ())
                except (ValueError, AttributeError):
                    previous = {}  # a value of an earlier layout: replaced
            if started is not None and (_number(previous.get("seen_at")) or 0) < started:
                refreshed += 1
            values[url] = json.dumps(
                {"listing": page_url, "shown": sorted(fields), "seen_at": round(now, 3)},
                separators=(",", ":"),
            )
        pipe = self.server.pipeline(transaction=False)
        pipe.hset(
            keys.listing_pages,
            page_url,
            json.dumps({"cards": len(items), "seen_at": round(now, 3)}, separators=(",", ":")),
        )
        if values:
            pipe.hset(keys.listed_items, mapping=values)  # type: ignore[arg-type]
        if refreshed:
            pipe.hincrby(keys.listings_refresh, "refreshed", refreshed)
        pipe.execute()


def _number(value: Any) -> float | None:
    try:
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None
