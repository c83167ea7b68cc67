"""``python -m master resume``: the workers of a paused crawl take requests again.

Deletes ``<spider>:paused`` through :func:`master.control.resume`.
"""

from __future__ import annotations

import argparse
import time
from typing import TYPE_CHECKING

from master import control, render
from master.commands.base import EXIT_OK, Subcommands, out, workers_phrase

if TYPE_CHECKING:
    from master.cli import Context


def cmd_resume(ctx: Context, args: argparse.Namespace) -> int:
    result = control.resume(ctx.client, ctx.keys)
    live = len(result.live_workers)
    if result.changed:
        marker = result.marker or {}
        since = marker.get("since")
        held = f", paused for {render.duration(time.time() - since)}" if since else ""
        out(f"resumed crawl {ctx.keys.spider!r} (paused by {marker.get('by') or '?'}{held}).")
        if live:
            out(f"{workers_phrase(live)} will take requests again within about a second.")
        else:
            out("No live worker right now; start workers to continue the crawl.")
    else:
        out(f"crawl {ctx.keys.spider!r} is not paused; nothing changed ({workers_phrase(live)}).")
    return EXIT_OK


def register(commands: Subcommands) -> None:
    parser = commands.add(
        "resume",
        help="resume a paused crawl",
        description="Delete <spider>:paused; the workers take requests again within a second.",
        examples=["resume"],
    )
    parser.set_defaults(handler=cmd_resume)
