"""``python -m master checks``: the data checks of every site of the crawl.

Reads the sites' figures from Redis and runs the checks on them through
:func:`crawler.datachecks.report.gather_checks` (what the API, the dashboard and
``master metrics`` call too), with the project's thresholds and site profiles.
Prints each failing check with its figures and example URLs (``--all``: every check's
status; ``--json``: the whole report). Exit status 0, or with ``--fail-on warn`` 1
when a check fails (for cron and CI); 2 when Redis cannot be read.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from crawler.datachecks.report import CheckSettings, gather_checks, render_checks
from master.commands.base import EXIT_FAILED, EXIT_OK, Subcommands, out, print_json

if TYPE_CHECKING:
    from master.cli import Context


def cmd_checks(ctx: Context, args: argparse.Namespace) -> int:
    report = gather_checks(ctx.client, ctx.keys, CheckSettings.from_project())
    if args.json:
        print_json(report)
    else:
        out(render_checks(report, verbose=args.all))
    if args.fail_on == "warn" and report["failing"]:
        return EXIT_FAILED
    return EXIT_OK


def register(commands: Subcommands) -> None:
    parser = commands.add(
        "checks",
        help="the data checks of every site (one value everywhere, coverage, rejected "
        "product pages): which fail, with their figures and example URLs",
        description=(
            "Run the data checks on every site's figures, as the workers keep them in Redis "
            "(docs/data-checks.md): each failing check with the site, what it saw and three "
            "example URLs. Exit status 0; with --fail-on warn, 1 when a check fails."
        ),
        examples=["checks", "checks --all", "checks --json", "checks --spider finance",
                  "checks --fail-on warn"],
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--all", action="store_true", help="also the checks that pass or have too few rows"
    )
    parser.add_argument(
        "--fail-on",
        choices=("never", "warn"),
        default="never",
        help="warn: exit 1 when a check fails (default: never)",
    )
    parser.set_defaults(handler=cmd_checks)
