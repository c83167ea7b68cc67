"""``python -m master reset``: delete the crawl's whole Redis state, after asking.

Shows what :func:`master.control.plan_reset` found under ``<spider>:*``, refuses while
live workers exist (unless ``--force``) or when there is no terminal to ask on (unless
``--yes``), then deletes it with :func:`master.control.reset`.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from master import control
from master.commands.base import (
    EXIT_FAILED,
    EXIT_OK,
    Subcommands,
    confirmed,
    err,
    out,
    workers_phrase,
)

if TYPE_CHECKING:
    from master.cli import Context

RESET_LABELS = (
    ("queued_requests", "queued requests"),
    ("pending_seeds", "pending seeds"),
    ("seeded_urls", "seeded URLs"),
    ("seen_fingerprints", "seen fingerprints"),
    ("in_flight", "requests in flight"),
    ("worker_records", "worker records"),
    ("dead_letters", "dead letters"),
    ("invalid_items", "invalid items"),
)


def cmd_reset(ctx: Context, args: argparse.Namespace) -> int:
    plan = control.plan_reset(ctx.client, ctx.keys)
    if not plan.keys:
        out(f"nothing to delete: no key matches {ctx.keys.all_pattern} on {ctx.shown_url}")
        return EXIT_OK
    if plan.live_workers and not args.force:
        names = ", ".join(plan.live_workers[:5]) + (", ..." if len(plan.live_workers) > 5 else "")
        err(
            f"refusing to reset: {workers_phrase(len(plan.live_workers))} ({names}) at work on "
            "this crawl; stop them first, or pass --force"
        )
        return EXIT_FAILED
    out(
        f"reset deletes {plan.counts['keys']} keys matching {ctx.keys.all_pattern} "
        f"on {ctx.shown_url}:"
    )
    width = max(len(label) for _, label in RESET_LABELS)
    digits = max(len(str(plan.counts[name])) for name, _ in RESET_LABELS)
    for name, label in RESET_LABELS:
        out(f"  {label.ljust(width)}  {plan.counts[name]:>{digits}}")
    if plan.live_workers:
        out(f"  (--force: {workers_phrase(len(plan.live_workers))} still running)")
    question = f"Delete all {plan.counts['keys']} keys? [y/N] "
    if not args.yes and not confirmed(question, "reset", "reset cancelled; nothing was deleted."):
        return EXIT_FAILED
    deleted = control.reset(ctx.client, ctx.keys)
    out(f"deleted {deleted} keys of crawl {ctx.keys.spider!r}.")
    return EXIT_OK


def register(commands: Subcommands) -> None:
    parser = commands.add(
        "reset",
        help="delete the crawl's whole Redis state (asks first)",
        description=(
            "Delete every key matching <spider>:* (queue, fingerprints, seeds, worker "
            "records, dead letters, ...; on a Redis Cluster on every primary, the layout key "
            "included) after showing what will go and asking. Refuses while "
            "live workers exist unless --force; refuses without a terminal unless --yes."
        ),
        examples=["reset", "reset --yes", "reset --yes --force"],
    )
    parser.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
    parser.add_argument("--force", action="store_true", help="reset even while live workers exist")
    parser.set_defaults(handler=cmd_reset)
