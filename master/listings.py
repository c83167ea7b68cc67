"""Refreshing from listings: what ``recrawl --listings`` queues, and the listing figures
``status``, ``report``, the API and the dashboard show (one implementation of each).

The workers remember the listing pages they read and what each card showed
(:mod:`crawler.core.listings`, keys ``<s>:listings:*``, any spider). A refresh queues those
listing pages again (their cards update the items' prices and stock: a tenth to a
sixtieth of the requests of fetching every item page), and an item's own page only when
no listing showed the item, or when its card lacks a field the stored item has (a
price, a stock state: the item kind's ``refreshed_fields``,
:class:`crawler.core.itemkinds.ItemKind`). It records when it started and what it queued
(``<s>:listings:refresh``); the workers count the items their listings showed since
(``refreshed``), so the report gives the requests per refreshed item.
"""

from __future__ import annotations

import datetime as dt
import json
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

import redis

from crawler.core.itemkinds import ItemKind
from crawler.core.keys import CrawlKeys
from master.clusterscan import queue_label

_BATCH = 500


@dataclass
class RefreshPlan:
    """What a refresh from listings queues: the listing pages, and the item pages no
    listing refreshes (with why: ``unlisted`` or ``lacking`` a field)."""

    listing_pages: list[str] = field(default_factory=list)
    item_pages: list[str] = field(default_factory=list)
    unlisted: int = 0
    lacking: int = 0

    @property
    def requests(self) -> int:
        return len(self.listing_pages) + len(self.item_pages)


def _text(value: Any) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def listing_pages(client: redis.Redis, keys: CrawlKeys) -> list[str]:
    """The listing pages the crawl read, sorted."""
    return sorted(_text(url) for url in client.hkeys(keys.listing_pages))


def plan_refresh(
    client: redis.Redis,
    keys: CrawlKeys,
    items: Iterable[dict[str, Any]],
    fields: tuple[str, ...],
) -> RefreshPlan:
    """The refresh of the stored ``items`` (their data, with ``url``): every listing
    page, and the pages of the items a listing does not refresh (see the module doc)."""
    plan = RefreshPlan(listing_pages=listing_pages(client, keys))
    iterator = iter(items)
    while batch := list(islice(iterator, _BATCH)):
        shown = client.hmget(keys.listed_items, [item["url"] for item in batch])
        for item, raw in zip(batch, shown, strict=True):
            if raw is None:
                plan.unlisted += 1
                plan.item_pages.append(item["url"])
                continue
            try:
                on_card = set(json.loads(raw).get("shown") or ())
            except (ValueError, AttributeError):
                on_card = set()
            if any(item.get(name) is not None and name not in on_card for name in fields):
                plan.lacking += 1
                plan.item_pages.append(item["url"])
    return plan


def start_refresh(
    client: redis.Redis, keys: CrawlKeys, plan: RefreshPlan, now: float | None = None
) -> None:
    """Record that a refresh from listings starts now, with what it queues (the workers
    then count ``refreshed``: :class:`crawler.core.listings.ListingMemory`)."""
    now = time.time() if now is None else now
    pipe = client.pipeline(transaction=True)
    pipe.delete(keys.listings_refresh)
    pipe.hset(
        keys.listings_refresh,
        mapping={
            "started": round(now, 3),
            "listing_pages": len(plan.listing_pages),
            "item_pages": len(plan.item_pages),
            "refreshed": 0,
        },
    )
    pipe.execute()


def refresh_round(
    client: redis.Redis,
    keys: CrawlKeys,
    items: Iterable[dict[str, Any]],
    kind: ItemKind,
    queue: Callable[[Iterable[str]], tuple[int, int]],
    dry_run: bool = False,
) -> None:
    """One refresh from listings (``recrawl --listings``): planned from the stored
    ``items``, started, and queued with ``queue`` (URLs -> (seen, newly queued)); with
    ``dry_run`` the URLs are printed and nothing is queued."""
    plan = plan_refresh(client, keys, items, kind.refreshed_fields)
    pages = f"{len(plan.listing_pages)} listing pages and {len(plan.item_pages)} {kind.name} pages"
    if dry_run:
        for url in (*plan.listing_pages, *plan.item_pages):
            print(url)
        print(f"dry run: {pages}; nothing was queued", file=sys.stderr)
        return
    start_refresh(client, keys, plan)
    seen, queued = queue((*plan.listing_pages, *plan.item_pages))
    print(
        f"{dt.datetime.now():%Y-%m-%d %H:%M:%S} queued {queued} of {seen} pages: {pages} "
        f"({plan.unlisted} in no listing, {plan.lacking} whose card lacks a field) "
        f"({seen - queued} were queued already) into {queue_label(keys)}",
        flush=True,
    )


def gather_listings(client: redis.Redis, keys: CrawlKeys) -> dict[str, Any]:
    """The listing figures of a crawl: listing pages read, items listed, and the last
    refresh from listings (None before any) with its requests per refreshed item."""
    pipe = client.pipeline(transaction=False)
    pipe.hlen(keys.listing_pages)
    pipe.hlen(keys.listed_items)
    pipe.hgetall(keys.listings_refresh)
    pages, listed, raw = pipe.execute()
    refresh: dict[str, Any] | None = None
    if raw:
        values = {_text(k): float(_text(v)) for k, v in raw.items()}
        requests = int(values.get("listing_pages", 0) + values.get("item_pages", 0))
        # items refreshed: those a listing showed since the refresh started, and the
        # item pages it queued (each refreshes its item)
        refreshed = int(values.get("refreshed", 0) + values.get("item_pages", 0))
        refresh = {
            "started": values.get("started"),
            "listing_pages": int(values.get("listing_pages", 0)),
            "item_pages": int(values.get("item_pages", 0)),
            "requests": requests,
            "refreshed": refreshed,
            "requests_per_refreshed": round(requests / refreshed, 4) if refreshed else None,
        }
    return {"listing_pages": int(pages), "listed": int(listed), "refresh": refresh}


def describe(
    figures: dict[str, Any], items: str = "products", item: str = "product"
) -> Iterator[str]:
    """The listing figures as lines of text (``status``, ``report``)."""
    if not figures["listing_pages"] and not figures["refresh"]:
        return
    yield f"listed {items}: {figures['listed']} on {figures['listing_pages']} listing pages"
    refresh = figures["refresh"]
    if refresh:
        ratio = refresh["requests_per_refreshed"]
        yield (
            f"last refresh from listings: {refresh['requests']} requests ("
            f"{refresh['listing_pages']} listing pages, {refresh['item_pages']} {item} pages) "
            f"for {refresh['refreshed']} refreshed {items}"
            + (f": {ratio:.3f} requests per refreshed {item}" if ratio is not None else "")
        )
