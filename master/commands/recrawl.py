"""``python -m master recrawl --older-than 6h`` / ``--changed`` / ``--every 5m`` /
``--listings``: fetch again the items not seen lately, those the site's sitemaps say
changed since they were last seen (``lastmod`` newer than ``last_seen``;
:mod:`master.freshness`), every stored item at an interval, for as long as the command
runs, or refresh them from the listing pages the crawl read (``--listings``, once or
``--every``: :mod:`master.listings`; the listing pages instead of the item pages).

The items are the spider's (``--spider``: products for ``ecommerce``, quotes for
``finance``, read from their store: :mod:`master.quotestore`). ``--every 5m`` is
how quotes are observed at an interval: each round (one at once, then one every
interval, until Ctrl-C or SIGTERM, or ``--rounds`` rounds) queues the stored URLs
whose ``last_seen`` is older than ``--older-than`` (default: half the interval),
so a quote fetched meanwhile, by a crawl or a round that the workers have not
finished, waits for the next round: a quote is fetched at most once per interval.
A URL still queued from the previous round is not queued twice (see below). The
rows of a CSV or JSON endpoint (``<url>#<symbol>``) are one request: the
endpoint's URL, queued once.

The product URLs whose ``last_seen`` is older than the limit are read from the
store (:mod:`master.stores`) and pushed straight into the shared request queue
``<spider>:requests``, the way the workers queue requests (same JSON payload,
popped under lease), so any running worker fetches them and the pipelines
update their price and price history.

Why straight into the queue: every one of these URLs has been crawled, so its
fingerprint is in the dupefilter, and a worker would drop it as seen. Rather
than lifting the dupefilter (removing fingerprints would let a link found
meanwhile queue the same page twice, and a crash between removing and pushing
would lose it), the requests go into the queue directly, one ``ZADD`` per batch
into its sorted set (not a lane, :mod:`crawler.scheduling.lanes`: the sorted set
keeps one copy of a payload, and pops it before the lane of its priority),
and the dupefilter is left as it is, whatever structure it uses: the
fingerprints of these pages are in it since their first crawl. Nothing else gets past the
dupefilter: links found on the refetched pages are filtered as always, so only
the stale pages are fetched again. Running the command twice before the workers
catch up queues nothing twice (the sorted set holds a payload once). Once queued, a
request is as safe as any other (leases: at least once).
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from typing import TYPE_CHECKING, Any
from urllib.parse import urldefrag

from crawler.core.itemkinds import ItemKind, kind_of_spider
from crawler.core.layout import ensure_layout
from master.clusterscan import queue_label
from master.durations import parse_duration
from master.listings import refresh_round
from master.quotestore import open_item_store
from master.requeue import queue_again
from master.rounds import Stopped, run_rounds
from master.stores import StoreError, add_store_options, read_errors

if TYPE_CHECKING:
    from master.cli import Context
    from master.commands.base import Subcommands


def pages_of(urls: Iterable[str]) -> Iterator[str]:
    """The pages to fetch for stored items: an endpoint's rows (``<url>#<symbol>``, stored
    in URL order, so together) are its one URL."""
    endpoints: set[str] = set()
    for url in urls:
        page, fragment = urldefrag(url)
        if not fragment:
            yield url
        elif page not in endpoints:
            endpoints.add(page)
            yield page


def _changed(store: Any, args: argparse.Namespace) -> tuple[Iterator[str], str, Any]:
    import os

    from crawler.net.network import SETTING, NetworkRule
    from master.freshness import SitemapFetcher, changed_products

    rule = NetworkRule(os.environ.get(SETTING, ""))
    fetcher = SitemapFetcher(rule, lambda text: print(f"warning: {text}", file=sys.stderr))
    return changed_products(store.last_seen(), fetcher), "whose sitemap lastmod is newer", fetcher


def _open_store(args: argparse.Namespace, kind: ItemKind) -> Any:
    """The store of the spider's items, or None when it cannot be opened (said)."""
    try:
        return open_item_store(args, kind)
    except StoreError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return None


def _rounds(
    store: Any, one_round: Callable[[int], Any], interval: float | None, most: int
) -> tuple[int, int]:
    """``one_round(n)`` now and every ``interval`` seconds (None: once) until Ctrl-C,
    SIGTERM or ``most`` rounds (0: no limit): :func:`master.rounds.run_rounds`; (rounds
    made, exit status). The store is closed at the end."""
    rounds = 0
    try:
        rounds = run_rounds(one_round, interval, most)
    except Stopped as stopped:
        rounds = stopped.rounds
        print(f"stopped after {rounds} rounds", flush=True)
    except read_errors() as exc:
        print(f"error: reading {store.location} failed: {exc}".rstrip(), file=sys.stderr)
        return rounds, 1
    finally:
        store.close()
    return rounds, 0


def cmd_every(ctx: Context, args: argparse.Namespace, kind: ItemKind) -> int:
    """Rounds of ``--every``: each queues the items not seen for ``--older-than``."""
    try:
        interval = parse_duration(args.every)
        age = parse_duration(args.older_than) if args.older_than else interval / 2
    except ValueError as exc:
        print(f"error: --every/--older-than: {exc}", file=sys.stderr)
        return 2
    if interval.total_seconds() <= 0:
        print("error: --every: the interval must be more than 0", file=sys.stderr)
        return 2
    store = _open_store(args, kind)
    if store is None:
        return 1
    ensure_layout(ctx.client, ctx.keys)
    queued_total = 0

    def one_round(number: int) -> None:
        nonlocal queued_total
        cutoff = dt.datetime.now(dt.UTC) - age
        stale = pages_of(store.urls_seen_before(cutoff))
        seen, queued = queue_again(ctx.client, ctx.keys, stale)
        queued_total += queued
        print(
            f"{dt.datetime.now():%Y-%m-%d %H:%M:%S} round {number}: queued {queued} of {seen} "
            f"pages of {kind.plural} last seen before {cutoff:%H:%M:%S} UTC "
            f"({seen - queued} were queued already) into {queue_label(ctx.keys)}",
            flush=True,
        )

    rounds, status = _rounds(store, one_round, interval.total_seconds(), args.rounds)
    if status:
        return status
    print(f"queued {queued_total} pages in {rounds} rounds every {args.every}")
    return 0


def _seconds(option: str, value: str) -> float | None:
    """``value`` of ``option`` in seconds, or None once said why it is no duration."""
    try:
        seconds = parse_duration(value).total_seconds()
    except ValueError as exc:
        print(f"error: {option}: {exc}", file=sys.stderr)
        return None
    if seconds <= 0:
        print(f"error: {option}: the duration must be more than 0", file=sys.stderr)
        return None
    return seconds


def cmd_listings(ctx: Context, args: argparse.Namespace, kind: ItemKind) -> int:
    """``--listings``: one refresh from listings, or one every ``--every``."""
    interval = _seconds("--every", args.every) if args.every else None
    follow_up = _seconds("--follow-up", args.follow_up) if args.follow_up else None
    if (args.every and interval is None) or (args.follow_up and follow_up is None):
        return 2
    store = _open_store(args, kind)
    if store is None:
        return 1
    every = None if args.dry_run else interval
    def one_round(_: int) -> None:
        if not args.dry_run:
            ensure_layout(ctx.client, ctx.keys)
        queue = partial(queue_again, ctx.client, ctx.keys)
        refresh_round(
            ctx.client, ctx.keys, store.products, kind, queue, args.dry_run, follow_up
        )

    _, status = _rounds(store, one_round, every, args.rounds)
    return status


def cmd_recrawl(ctx: Context, args: argparse.Namespace) -> int:
    kind = kind_of_spider(ctx.keys.spider)
    if args.follow_up and not args.listings:
        print("error: --follow-up goes with --listings", file=sys.stderr)
        return 2
    if args.listings:
        if args.changed or args.older_than:
            print("error: --listings goes with --every only", file=sys.stderr)
            return 2
        if args.rounds and not args.every:
            print("error: --rounds goes with --every", file=sys.stderr)
            return 2
        return cmd_listings(ctx, args, kind)
    if not (args.every or args.changed or args.older_than):
        print(
            "error: one of --older-than, --changed, --every, --listings is required",
            file=sys.stderr,
        )
        return 2
    if args.changed and args.older_than:
        print("error: --changed and --older-than do not go together", file=sys.stderr)
        return 2
    if args.rounds and not args.every:
        print("error: --rounds goes with --every", file=sys.stderr)
        return 2
    if args.every:
        return cmd_every(ctx, args, kind)
    cutoff = dt.datetime.now(dt.UTC)
    if not args.changed:
        try:
            age = parse_duration(args.older_than)
        except ValueError as exc:
            print(f"error: --older-than: {exc}", file=sys.stderr)
            return 2
        cutoff -= age
    store = _open_store(args, kind)
    if store is None:
        return 1
    what = f"last seen before {cutoff:%Y-%m-%d %H:%M:%S} UTC"
    try:
        if args.changed:
            urls, what, fetcher = _changed(store, args)
            what += " than their last_seen"
        else:
            urls = store.urls_seen_before(cutoff)
        if args.dry_run:
            count = 0
            for url in urls:
                print(url)
                count += 1
            print(
                f"dry run: {count} {kind.plural} {what} in {store.location}; nothing was queued",
                file=sys.stderr,
            )
            return 0
        ensure_layout(ctx.client, ctx.keys)  # another shard count: refused, exit 2
        seen, queued = queue_again(ctx.client, ctx.keys, pages_of(urls))
    except read_errors() as exc:
        print(f"error: reading {store.location} failed: {exc}".rstrip(), file=sys.stderr)
        return 1
    finally:
        store.close()
    print(
        f"queued {queued} of {seen} {kind.plural} {what} "
        f"({seen - queued} were queued already) into {queue_label(ctx.keys)}"
    )
    return 0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    which = parser.add_mutually_exclusive_group()
    parser.add_argument(
        "--older-than",
        metavar="DURATION",
        help="queue items whose last_seen is older than this: 90s, 30m, 6h, 2d, 1w (with "
        "--every: in each round; default half the interval)",
    )
    which.add_argument(
        "--every",
        metavar="DURATION",
        help="run until Ctrl-C (or SIGTERM): a round now and one every DURATION (5m, 1h), "
        "each queuing the stored items not seen for --older-than; how quotes are observed "
        "at an interval (--spider finance)",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=0,
        metavar="N",
        help="with --every: stop after N rounds (default 0: until stopped)",
    )
    which.add_argument(
        "--changed",
        action="store_true",
        help="queue products whose sitemap lastmod is newer than their last_seen (the "
        "sitemaps of the stored products' sites are read again; ALLOW_PRIVATE_NETWORKS "
        "applies to every sitemap fetched)",
    )
    parser.add_argument(
        "--listings",
        action="store_true",
        help="refresh from listings: queue again the listing pages the crawl read (their "
        "cards update prices and stock), the pages its sitemaps name that are not item links "
        "and were not read yet (category pages), and the item pages only of items no listing "
        "shows (never shown, or the page that showed them last was read again without them) "
        "or whose card lacks a field the item has (a price, a stock state); with --every: "
        "every DURATION",
    )
    parser.add_argument(
        "--follow-up",
        metavar="DURATION",
        help="with --listings: then wait up to DURATION (say 10m) for the workers to read the "
        "listing pages again, and queue the pages of the items they no longer show (without "
        "it, the next refresh queues them)",
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="print the stale URLs on stdout and queue nothing",
    )
    add_store_options(parser)


def register(commands: Subcommands) -> None:
    parser = commands.add(
        "recrawl",
        help="queue again the items not seen for longer than DURATION, changed according "
        "to their sitemaps, or all of them every DURATION (quotes: --spider finance --every 5m), "
        "or refresh them from listing pages (--listings)",
        description=(
            "Queue the spider's stored URLs (products; --spider finance: quotes) whose "
            "last_seen is older than DURATION (--older-than), or whose sitemap lastmod is "
            "newer than their last_seen (--changed), straight into <spider>:requests (on a "
            "Redis Cluster: the queue of each URL's site's shard), past the dupefilter for "
            "those URLs only, so the workers refetch them and record price changes. Run it "
            "from cron to keep prices fresh, or let --every run rounds at an interval until "
            "Ctrl-C: each queues what was not seen for half the interval (--older-than), "
            "so each quote is observed once per interval. --listings refreshes prices and "
            "stock from the listing pages the crawl read instead (requests per refreshed "
            "product: status, report)."
        ),
        examples=[
            "recrawl --older-than 6h",
            "recrawl --older-than 2d --dry-run",
            "recrawl --changed",
            "recrawl --listings",
            "recrawl --listings --every 1d",
            "recrawl --listings --follow-up 30m",
            "recrawl --spider finance --every 5m",
            "recrawl --spider finance --older-than 1h",
            "recrawl --older-than 12h --postgres-dsn postgresql://crawler@db/crawler",
        ],
    )
    add_arguments(parser)
    parser.set_defaults(handler=cmd_recrawl)
