"""``python -m master report``: one row per worker that ever reported, and the totals.

The figures come from :func:`master.inspection.gather_report` (a plain dict, which
``--json`` prints as it is) and are drawn by :func:`master.render.render_report`.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from crawler.core.itemkinds import SPIDERS
from master import inspection, render
from master.commands.base import EXIT_OK, Subcommands, out, print_json

if TYPE_CHECKING:
    from master.cli import Context


def cmd_report(ctx: Context, args: argparse.Namespace) -> int:
    names = SPIDERS if args.all_spiders else (ctx.keys.spider,)
    reports = {name: inspection.gather_report(ctx.client, ctx.keys_of(name)) for name in names}
    if args.json:
        print_json(reports if args.all_spiders else reports[ctx.keys.spider])
        return EXIT_OK
    for number, (name, report) in enumerate(reports.items()):
        if args.all_spiders:
            out(("\n" if number else "") + f"spider {name}:")
        out(render.render_report(report))
    return EXIT_OK


def register(commands: Subcommands) -> None:
    parser = commands.add(
        "report",
        help="per-worker elapsed seconds, pages, items, pages/min, and the totals",
        description=(
            "One row per worker that ever reported (id, state, elapsed seconds, idle seconds "
            "before closing, active seconds, pages, items, pages per active minute), a TOTAL "
            "row for the whole crawl (wall time from first start to last end), and where the "
            "products are stored (with the product count of a SQLite store on this machine)."
        ),
        examples=["report", "report --json", "report --spider finance", "report --all-spiders"],
    )
    parser.add_argument(
        "--all-spiders",
        action="store_true",
        help=f"a report for every spider's crawl ({', '.join(SPIDERS)}); --json: an object "
        "by spider",
    )
    parser.add_argument("--json", action="store_true", help="print a JSON object")
    parser.set_defaults(handler=cmd_report)
