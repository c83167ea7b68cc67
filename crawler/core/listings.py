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
``refreshed``, the items a listing showed since it started); ``<s>:listings:sitemapped``
(hash: page URL -> the sitemap that lists it). Crawl-wide keys (no shard): a listing
page holds tens of items, so they are a small part of the crawl's keys.

The category pages a shop's sitemaps name. The class: the URLs a sitemap lists that the
spider does not take for item pages (``is_item_link``: a product URL's shape). The sitemap
reader (:mod:`crawler.policy.sitemaps`) remembers them in ``<s>:listings:sitemapped``
and marks their requests (:data:`SITEMAPPED_META_KEY`); the worker that reads such a
page, or fails to, drops it (:func:`sitemapped_read`): read, a page whose cards were read
is a listing page like any other, and any other page is no listing. So what the hash
holds are the pages sitemaps name that the crawl has not read (a crawl stopped early, a
page the dupefilter had seen through a link): ``recrawl --listings`` queues them, those
stored as items left out, and each is read once.

A listing page a refresh reads again that shows no card any more (emptied, a page past
the last) or is gone (HTTP 404, 410) is forgotten (:meth:`ListingMemory.forget`,
:func:`page_failed`): the items its cards showed last are then in no listing, and
``recrawl --listings`` fetches their pages.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import redis

from crawler.core.keys import CrawlKeys

#: meta key of the request of a page a sitemap lists that is not an item link: its URL as
#: remembered in ``<s>:listings:sitemapped``, dropped once the page is read (or failed)
SITEMAPPED_META_KEY = "sitemapped"


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


    def forget(self, page_url: str) -> None:
        """A listing page that shows no card any more is no listing page: its items'
        cards then name a page that is not one (they are in no listing)."""
        self.server.hdel(self.keys.listing_pages, page_url)

    def sitemapped(self, urls: Sequence[str], sitemap_url: str) -> None:
        """Remember the pages the sitemap ``sitemap_url`` lists that are not item links
        (read once, by the crawl or a refresh; see the module doc)."""
        if urls:
            self.server.hset(
                self.keys.sitemapped, mapping=dict.fromkeys(urls, sitemap_url)  # type: ignore[arg-type]
            )


def sitemapped_read(server: Any, keys: CrawlKeys, meta: Mapping[str, Any]) -> None:
    """A page a sitemap lists was read (or failed): no longer one the crawl has not read.
    A request without the mark costs nothing; Redis away, the page stays (a refresh reads
    it once more)."""
    url = meta.get(SITEMAPPED_META_KEY)
    if url and server is not None:
        try:
            server.hdel(keys.sitemapped, url)
        except redis.RedisError:
            pass


#: the statuses that say a page is gone (a listing page a refresh finds so is forgotten)
GONE_STATUSES = (404, 410)


def page_failed(server: Any, keys: CrawlKeys, request: Any, failure: Any) -> None:
    """A request failed for good (a worker's errback): a page a sitemap lists is read
    once all the same (:func:`sitemapped_read`), and a page queued again by a refresh
    (``recrawl``) that is gone (404, 410) is no listing page any more."""
    sitemapped_read(server, keys, request.meta)
    status = getattr(getattr(failure.value, "response", None), "status", None)
    if request.meta.get("recrawl") and status in GONE_STATUSES and server is not None:
        try:
            server.hdel(keys.listing_pages, request.url)
        except redis.RedisError:
            pass  # it is queued again by the next refresh, and found gone again


def _number(value: Any) -> float | None:
    try:
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None
