"""``python -m master status``: the crawl at a glance, once or every few seconds.

The figures come from :func:`master.inspection.gather_status` (a plain dict, which
``--json`` prints as it is) and are drawn by :func:`master.render.render_status`.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import TYPE_CHECKING

from crawler.core.itemkinds import SPIDERS, kind_of_spider
from master import inspection, render, sites
from master.commands.base import EXIT_OK, Subcommands, _seconds, out, print_json

if TYPE_CHECKING:
    from master.cli import Context


def cmd_all(ctx: Context, args: argparse.Namespace) -> int:
    """``--all-spiders``: the status of every spider's crawl, one after the other."""
    statuses = {name: inspection.gather_status(ctx.client, ctx.keys_of(name)) for name in SPIDERS}
    if args.json:
        print_json(statuses)
        return EXIT_OK
    for number, status in enumerate(statuses.values()):
        if number:
            out()
        out(render.render_status(status, ctx.shown_url))
    return EXIT_OK


def cmd_status(ctx: Context, args: argparse.Namespace) -> int:
    if args.all_spiders:
        return cmd_all(ctx, args)
    if args.watch is None:
        status = inspection.gather_status(ctx.client, ctx.keys)
        if args.sites:
            status["sites"] = sites.gather_sites(ctx.client, ctx.keys)
        if args.json:
            print_json(status)
        else:
            out(render.render_status(status, ctx.shown_url))
            if args.sites:
                out()
                items = kind_of_spider(ctx.keys.spider).plural
                out(sites.render_sites(status["sites"], items))
        return EXIT_OK
    clear = sys.stdout.isatty() and not args.json
    try:
        while True:
            status = inspection.gather_status(ctx.client, ctx.keys)
            if args.json:
                out(json.dumps(status, sort_keys=True, default=str))
            else:
                if clear:
                    sys.stdout.write("\033[H\033[2J")
                out(f"{render.when(status['time'])}  (every {args.watch:g}s, Ctrl-C to stop)")
                out(render.render_status(status, ctx.shown_url))
                if not clear:
                    out()
            time.sleep(args.watch)
    except KeyboardInterrupt:
        return EXIT_OK


def register(commands: Subcommands) -> None:
    parser = commands.add(
        "status",
        help="the crawl at a glance: queue, in flight, live workers, items, paused",
        description=(
            "Queued requests, retries waiting in Redis for their time, pending seeds, seen "
            "fingerprints, requests in flight, live workers with their pages/min, items stored "
            "and invalid, dead letters, the sites whose shared rate is cut (rate, budget, "
            "cuts, pause; docs/backoff.md), and the crawl's state: paused, running, idle or "
            "finished. On a Redis Cluster (REDIS_CLUSTER=true) the figures are summed over "
            "the shards, the keys scanned on every primary."
        ),
        examples=[
            "status",
            "status --json",
            "status --watch 2",
            "status --sites",
            "status --spider finance",
            "status --all-spiders",
        ],
    )
    parser.add_argument(
        "--all-spiders",
        action="store_true",
        help=f"the status of every spider's crawl ({', '.join(SPIDERS)}), one after the "
        "other (--json: an object by spider)",
    )
    parser.add_argument("--json", action="store_true", help="print a JSON object")
    parser.add_argument(
        "--sites",
        action="store_true",
        help="also the pages, products and sitemaps of each site, and each seed's max_pages "
        'budget and use (--json: under "sites")',
    )
    parser.add_argument(
        "--watch",
        type=_seconds,
        metavar="SECONDS",
        help="refresh every SECONDS until Ctrl-C (exit 0)",
    )
    parser.set_defaults(handler=cmd_status)
