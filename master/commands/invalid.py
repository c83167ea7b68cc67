"""``python -m master invalid``: the items their schema rejected, with their errors.

Lists ``<spider>:invalid`` through :func:`master.deadletters.list_invalid`.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from master import deadletters, render
from master.commands.base import EXIT_OK, Subcommands, _non_negative_int, out, print_json

if TYPE_CHECKING:
    from master.cli import Context


def cmd_invalid(ctx: Context, args: argparse.Namespace) -> int:
    listing = deadletters.list_invalid(ctx.client, ctx.keys, args.limit, args.start)
    if args.json:
        print_json(listing)
    else:
        out(render.render_invalid(listing))
    return EXIT_OK


def register(commands: Subcommands) -> None:
    parser = commands.add(
        "invalid",
        help="list items rejected by their schema (products; --spider finance: quotes), "
        "with their errors",
        description="Show the items kept in <spider>:invalid: url and validation errors.",
        examples=["invalid", "invalid list --limit 0 --json"],
    )
    parser.add_argument(
        "action", nargs="?", choices=("list",), default="list", help="list (default)"
    )
    parser.add_argument(
        "--limit",
        type=_non_negative_int,
        default=50,
        metavar="N",
        help="show N items (default 50; 0: all)",
    )
    parser.add_argument(
        "--start",
        type=_non_negative_int,
        default=0,
        metavar="I",
        help="first position shown (default 0)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(handler=cmd_invalid)
