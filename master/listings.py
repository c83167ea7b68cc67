"""Refreshing from listings: what ``recrawl --listings`` queues, and the listing figures
``status``, ``report``, the API and the dashboard show (one implementation of each).

The workers remember the listing pages they read and what each card showed
(:mod:`crawler.core.listings`, keys ``<s>:listings:*``, any spider). A refresh queues those
listing pages again (their cards update the items' prices and stock: a tenth to a
sixtieth of the requests of fetching every item page), the pages a sitemap lists that
are not item links and that the crawl has not read (the category pages a shop's
sitemaps name; read once: kept as listing pages when they show cards), and an item's
own page only when no listing shows the item, or when its card lacks a field the
stored item has (a price, a stock state: the item kind's ``refreshed_fields``,
:class:`crawler.core.itemkinds.ItemKind`).

An item no listing shows: one no card ever showed, or one that left its listings: the
listing page that showed its card last was read again since without it, or is no
listing page any more (it showed no card, or was gone, when a refresh read it). So the
refresh after the one in which an item left its listings (the next ``--every`` round,
or the next run) fetches its page, and every refresh after as long as no listing shows
it; an item whose listing page was not read again yet is judged by that page's last
reading. With ``--follow-up`` the same refresh fetches it: the command waits (a bounded
time) for the workers to read the listing pages it queued, then queues the pages of the
items those no longer show. The refresh records when it started and what it queued
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
    """What a refresh from listings queues: the listing pages, the pages sitemaps name
    that the crawl has not read, and the item pages no listing refreshes (with why:
    ``unlisted``, of which ``left`` their listings, or ``lacking`` a field)."""

    listing_pages: list[str] = field(default_factory=list)
    item_pages: list[str] = field(default_factory=list)
    sitemap_pages: list[str] = field(default_factory=list)
    unlisted: int = 0
    left: int = 0
    lacking: int = 0
    #: pages sitemaps name that the crawl knows now (listing pages, stored items): dropped
    known: list[str] = field(default_factory=list)
    #: each listing page's reading (``seen_at``) when planned: a follow-up waits for new ones
    readings: dict[str, float | None] = field(default_factory=dict)

    @property
    def requests(self) -> int:
        return len(self.listing_pages) + len(self.item_pages) + len(self.sitemap_pages)


def _text(value: Any) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def _seen_at(raw: Any) -> float | None:
    """``seen_at`` of a listing page's or a card's JSON (None: unreadable)."""
    try:
        return float(json.loads(raw)["seen_at"])
    except (ValueError, TypeError, KeyError):
        return None


def listing_pages(client: redis.Redis, keys: CrawlKeys) -> list[str]:
    """The listing pages the crawl read, sorted."""
    return sorted(_text(url) for url in client.hkeys(keys.listing_pages))


def _left(card: dict[str, Any], pages: dict[str, float | None]) -> bool:
    """Has the item left its listings? The page that showed its card last is no listing
    page any more, or was read since without it (its reading is later than the card's;
    both are the worker's clock of that page's reading)."""
    listing = card.get("listing")
    if not isinstance(listing, str) or listing not in pages:
        return True
    page_seen, card_seen = pages[listing], card.get("seen_at")
    if page_seen is None or not isinstance(card_seen, int | float):
        return False  # unreadable: taken as shown (its page's reading decides next time)
    return page_seen > card_seen


def plan_refresh(
    client: redis.Redis,
    keys: CrawlKeys,
    items: Iterable[dict[str, Any]],
    fields: tuple[str, ...],
) -> RefreshPlan:
    """The refresh of the stored ``items`` (their data, with ``url``): every listing
    page, the pages sitemaps name that the crawl has not read (stored items left out),
    and the pages of the items a listing does not refresh (see the module doc)."""
    pages = {_text(url): _seen_at(raw) for url, raw in client.hgetall(keys.listing_pages).items()}
    plan = RefreshPlan(listing_pages=sorted(pages), readings=pages)
    sitemapped = {_text(url) for url in client.hkeys(keys.sitemapped)}
    plan.known.extend(sorted(sitemapped & pages.keys()))
    sitemapped -= pages.keys()
    iterator = iter(items)
    while batch := list(islice(iterator, _BATCH)):
        shown = client.hmget(keys.listed_items, [item["url"] for item in batch])
        for item, raw in zip(batch, shown, strict=True):
            if item["url"] in sitemapped:
                sitemapped.discard(item["url"])
                plan.known.append(item["url"])
            card: dict[str, Any] = {}
            if raw is not None:
                try:
                    card = json.loads(raw)
                except ValueError:
                    card = {}
                card = card if isinstance(card, dict) else {}
            if raw is None or _left(card, pages):
                plan.unlisted += 1
                plan.left += raw is not None
                plan.item_pages.append(item["url"])
                continue
            on_card = set(card.get("shown") or ())
            if any(item.get(name) is not None and name not in on_card for name in fields):
                plan.lacking += 1
                plan.item_pages.append(item["url"])
    plan.sitemap_pages = sorted(sitemapped)
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
            "listing_pages": len(plan.listing_pages) + len(plan.sitemap_pages),
            "item_pages": len(plan.item_pages),
            "refreshed": 0,
        },
    )
    if plan.known:  # known now as listing pages or items: no longer pages not read
        pipe.hdel(keys.sitemapped, *plan.known)
    pipe.execute()


def wait_for_listings(
    client: redis.Redis,
    keys: CrawlKeys,
    readings: dict[str, float | None],
    wait: float,
    poll: float = 0.5,
) -> int:
    """Wait up to ``wait`` seconds for the workers to read the listing pages of a refresh
    again: each page's reading differs from its reading when planned (``readings``), or
    it is no listing page any more. Returns the number read (those read when it stops)."""
    waiting = dict(readings)
    deadline = time.monotonic() + wait
    while waiting:
        urls = list(waiting)
        for start in range(0, len(urls), _BATCH):
            batch = urls[start : start + _BATCH]
            for url, raw in zip(batch, client.hmget(keys.listing_pages, batch), strict=True):
                if raw is None or _seen_at(raw) != waiting[url]:
                    del waiting[url]
        if not waiting or time.monotonic() >= deadline:
            break
        time.sleep(poll)
    return len(readings) - len(waiting)


def refresh_round(
    client: redis.Redis,
    keys: CrawlKeys,
    items: Callable[[], Iterable[dict[str, Any]]],
    kind: ItemKind,
    queue: Callable[..., tuple[int, int]],
    dry_run: bool = False,
    follow_up: float | None = None,
) -> None:
    """One refresh from listings (``recrawl --listings``): planned from the stored
    items (``items()``: their data, with ``url``), started, and queued with ``queue``
    (URLs -> (seen, newly queued); with ``sitemapped=True``, the pages sitemaps name,
    marked so the worker that reads them drops them from those not read); with
    ``dry_run`` the URLs are printed and nothing is queued. ``follow_up``: then wait up
    to that many seconds for the workers to read the listing pages again, and queue the
    pages of the items they no longer show (in this refresh, not the next)."""
    plan = plan_refresh(client, keys, items(), kind.refreshed_fields)
    pages = f"{len(plan.listing_pages)} listing pages and {len(plan.item_pages)} {kind.name} pages"
    if plan.sitemap_pages:
        pages += f" and {len(plan.sitemap_pages)} pages sitemaps name, not read yet"
    if dry_run:
        for url in (*plan.listing_pages, *plan.sitemap_pages, *plan.item_pages):
            print(url)
        print(f"dry run: {pages}; nothing was queued", file=sys.stderr)
        return
    start_refresh(client, keys, plan)
    seen, queued = queue((*plan.listing_pages, *plan.item_pages))
    if plan.sitemap_pages:
        more = queue(plan.sitemap_pages, sitemapped=True)
        seen, queued = seen + more[0], queued + more[1]
    left = f", {plan.left} of them left their listings" if plan.left else ""
    print(
        f"{dt.datetime.now():%Y-%m-%d %H:%M:%S} queued {queued} of {seen} pages: {pages} "
        f"({plan.unlisted} in no listing{left}, {plan.lacking} whose card lacks a field) "
        f"({seen - queued} were queued already) into {queue_label(keys)}",
        flush=True,
    )
    if follow_up is not None and plan.listing_pages:
        read = wait_for_listings(client, keys, plan.readings, follow_up)
        after = plan_refresh(client, keys, items(), kind.refreshed_fields)
        asked = set(plan.item_pages)
        more_pages = [url for url in after.item_pages if url not in asked]
        seen, queued = queue(more_pages)
        client.hincrby(keys.listings_refresh, "item_pages", len(more_pages))
        print(
            f"{dt.datetime.now():%Y-%m-%d %H:%M:%S} follow-up: {read} of "
            f"{len(plan.listing_pages)} listing pages read again; queued {queued} of {seen} "
            f"{kind.name} pages no listing shows any more",
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
