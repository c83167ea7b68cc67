"""``python -m master dead [list|requeue|clear]``: the requests that failed for good.

``list`` shows them (:func:`master.deadletters.list_dead`), ``requeue`` puts each back to
work and takes it off the list atomically (:func:`master.deadletters.requeue`), ``clear``
deletes them all after asking (:func:`master.deadletters.clear_dead`).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from crawler.core.layout import ensure_layout
from master import deadletters, render
from master.clusterscan import queue_label
from master.commands.base import (
    EXIT_FAILED,
    EXIT_OK,
    Subcommands,
    _non_negative_int,
    confirmed,
    err,
    out,
    print_json,
)

if TYPE_CHECKING:
    from master.cli import Context

LIST_LIMIT = 50  # records shown by `dead list` without --limit; requeue takes them all


def cmd_dead(ctx: Context, args: argparse.Namespace) -> int:
    if args.limit is None:
        args.limit = LIST_LIMIT if args.action == "list" else 0
    if args.action == "list":
        listing = deadletters.list_dead(ctx.client, ctx.keys, args.limit, args.start, args.reason)
        if args.json:
            print_json(listing)
        else:
            out(render.render_dead(listing))
        return EXIT_OK
    if args.action == "reasons":
        groups = deadletters.dead_reasons(ctx.client, ctx.keys)
        if args.json:
            print_json(groups)
        else:
            for group in groups["reasons"]:
                out(f"{group['count']:>8}  {group['reason']}")
            out(f"{groups['total']:>8}  dead letters in all")
        return EXIT_OK
    if args.action == "requeue":
        return requeue(ctx, args)
    return clear(ctx, args)


def requeue(ctx: Context, args: argparse.Namespace) -> int:
    ensure_layout(ctx.client, ctx.keys)  # another shard count: refused, exit 2
    result = deadletters.requeue(ctx.client, ctx.keys, args.limit, args.reason)
    for skipped in result.skipped:
        err(
            f"dead letter #{skipped['index']} ({skipped['url'] or 'no url'}) left in place: "
            f"{skipped['reason']}"
        )
    if args.json:
        print_json(
            {
                "requeued": result.requeued,
                "requests": result.requests,
                "seeds": result.seeds,
                "skipped": result.skipped,
                "vanished": result.vanished,
                "remaining": result.remaining,
            }
        )
    else:
        out(
            f"requeued {result.requeued} dead letters: {result.requests} requests to "
            f"{queue_label(ctx.keys)}, {result.seeds} seeds to {ctx.keys.start_urls}; "
            f"{len(result.skipped)} left in place, {result.remaining} remain."
        )
    return EXIT_FAILED if result.skipped else EXIT_OK


def clear(ctx: Context, args: argparse.Namespace) -> int:
    if args.reason is None:
        count = int(ctx.client.llen(ctx.keys.dead))
        which = f"all {count} dead letters"
    else:
        count = deadletters.list_dead(ctx.client, ctx.keys, 1, 0, args.reason)["total"]
        which = f"the {count} dead letters of reason {args.reason!r}"
    if not count:
        out("no dead letters; nothing to clear.")
        return EXIT_OK
    question = f"Delete {which} of crawl {ctx.keys.spider!r}? [y/N] "
    if not args.yes and not confirmed(
        question, "clear dead letters", "cancelled; nothing was deleted."
    ):
        return EXIT_FAILED
    removed = deadletters.clear_dead(ctx.client, ctx.keys, args.reason)
    out(f"cleared {removed} dead letters.")
    return EXIT_OK


def register(commands: Subcommands) -> None:
    parser = commands.add(
        "dead",
        help="list, requeue or clear dead letters (requests that failed for good)",
        description=(
            "list (default): show dead letters. reasons: their reasons with counts, largest "
            "first. requeue: put each back to work (its request "
            "into the request queue, or its URL into the start URLs), removing it from the "
            "list atomically (on a Redis Cluster: pushed first, then removed; at least once, "
            "see docs/running.md); exit 1 when some could not be requeued. clear: delete "
            "them all (asks first)."
        ),
        examples=[
            "dead",
            "dead list --limit 0 --json",
            "dead reasons",
            "dead requeue",
            "dead requeue --reason 'HTTP 500'",
            "dead clear --yes",
        ],
    )
    parser.add_argument(
        "action",
        nargs="?",
        choices=("list", "reasons", "requeue", "clear"),
        default="list",
        help="list (default), reasons (counts per reason), requeue or clear",
    )
    parser.add_argument(
        "--limit",
        type=_non_negative_int,
        default=None,
        metavar="N",
        help=f"list: show N records (default {LIST_LIMIT}); requeue: the first N (default all); "
        "0 means all",
    )
    parser.add_argument(
        "--start",
        type=_non_negative_int,
        default=0,
        metavar="I",
        help="list: first position shown (default 0)",
    )
    parser.add_argument(
        "--reason",
        metavar="TEXT",
        default=None,
        help="only the dead letters of this exact reason (list, requeue, clear); "
        "`dead reasons` lists the reasons with their counts",
    )
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--yes", "-y", action="store_true", help="clear: do not ask")
    parser.set_defaults(handler=cmd_dead)
