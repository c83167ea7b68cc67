"""``python -m master pause``: every worker stops taking requests, without stopping.

Sets ``<spider>:paused`` through :func:`master.control.pause`; ``resume`` deletes it.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from master import control, render
from master.commands.base import EXIT_OK, Subcommands, out, workers_phrase

if TYPE_CHECKING:
    from master.cli import Context


def cmd_pause(ctx: Context, args: argparse.Namespace) -> int:
    result = control.pause(ctx.client, ctx.keys)
    live = len(result.live_workers)
    marker = result.marker or {}
    if result.changed:
        out(f"paused crawl {ctx.keys.spider!r} (by {marker.get('by')}).")
        if live:
            out(
                f"{workers_phrase(live)} will stop taking requests within about a second; "
                "requests already in flight finish."
            )
        else:
            out("No live worker right now; workers that start will wait until `resume`.")
    else:
        out(
            f"crawl {ctx.keys.spider!r} is already paused since "
            f"{render.when(marker.get('since'))} by {marker.get('by') or '?'}; nothing changed "
            f"({workers_phrase(live)} holding)."
        )
    return EXIT_OK


def register(commands: Subcommands) -> None:
    parser = commands.add(
        "pause",
        help="pause every worker (they keep running, but take no new requests)",
        description=(
            "Set <spider>:paused. Every worker polls it about once a second and stops taking "
            "requests while it exists; requests in flight finish. Pausing a paused crawl "
            "changes nothing."
        ),
        examples=["pause", "pause --redis-url redis://10.0.0.5:6379/0"],
    )
    parser.set_defaults(handler=cmd_pause)
