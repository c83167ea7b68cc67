"""``python -m master seed FILE``: validate a seed file and push its new start URLs.

The lines are read, validated and pushed in batches by :class:`master.seeding.SeedLoader`
(one Redis round trip per batch); this module reports on them: each refused line on
stderr (``--json``: in the summary), a progress line on a terminal or with ``--progress``,
and the counts.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

import redis

from crawler.net.network import SETTING as NETWORK_SETTING
from crawler.net.network import NetworkRule, resolve
from crawler.policy.seeds import SEED_META_KEYS, SeedError
from master.commands.base import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_REDIS,
    Subcommands,
    _positive_int,
    err,
    out,
    print_json,
)
from master.connection import explain
from master.progress import ProgressLine
from master.seeding import DEFAULT_BATCH_SIZE, SeedCounts, SeedLoader, seed_summary

if TYPE_CHECKING:
    from master.cli import Context


def cmd_seed(ctx: Context, args: argparse.Namespace) -> int:
    source = args.file
    name = "standard input" if source == "-" else source
    allow = args.allow_private_networks
    if allow is None:
        allow = os.environ.get(NETWORK_SETTING, "")
    try:
        rule = NetworkRule(allow, NetworkRule.no_resolution if args.no_resolve else resolve)
    except ValueError as exc:
        err(f"error: {exc}")
        return EXIT_FAILED
    try:
        stream = sys.stdin.buffer if source == "-" else open(source, "rb")  # noqa: SIM115
    except OSError as exc:
        err(f"error: cannot read {name}: {exc.strerror or exc}")
        return EXIT_FAILED

    # a progress line on stderr: on a terminal, or when asked for (--progress)
    progress = ProgressLine(stream) if args.progress or sys.stderr.isatty() else None
    refused: list[SeedError] = []

    def on_error(error: SeedError) -> None:
        if args.json:  # reported in the JSON summary instead
            refused.append(error)
            return
        if progress is not None and progress.tty:
            sys.stderr.write("\r\033[K")
        err(str(error))

    def on_progress(counts: SeedCounts) -> None:
        if progress is not None:
            progress.update(counts.lines, counts.summary())

    try:
        client = None if args.dry_run else ctx.client
        loader = SeedLoader(client, ctx.keys, args.batch_size, on_error, on_progress, rule=rule)
        try:
            counts = loader.load_stream(stream)
        except KeyboardInterrupt:
            err(
                f"interrupted after line {loader.counts.lines}: {loader.counts.summary()} "
                "(the batch being read was not pushed)"
            )
            return EXIT_INTERRUPTED
        except redis.RedisError as exc:
            err(f"error: {explain(exc, ctx.redis_url)}")
            err(f"stopped after line {loader.counts.lines}: {loader.counts.summary()}")
            return EXIT_REDIS
    finally:
        if progress is not None:
            progress.close()
        if stream is not sys.stdin.buffer:
            stream.close()
    if args.json:
        print_json(seed_summary(counts, refused, args.dry_run))
    elif args.dry_run:
        out(
            f"dry run: valid {counts.accepted}, duplicates {counts.already_seeded}, "
            f"rejected {counts.rejected}; nothing was pushed"
        )
    else:
        out(counts.summary())
    if counts.valid == 0:
        err(f"error: no valid seed in {name}")
        return EXIT_FAILED
    return EXIT_OK


def register(commands: Subcommands) -> None:
    parser = commands.add(
        "seed",
        help="validate a seed file and push its new start URLs",
        description=(
            "Validate every line of FILE (one URL per line, or JSON lines "
            '{"url": ..., "meta": {...}}; blank lines and # comments are skipped) and push '
            "the valid ones not seeded before to <spider>:start_urls. Bad lines are printed "
            "on stderr with their number and reason and never pushed: among them seeds whose "
            f"meta holds a key other than {', '.join(sorted(SEED_META_KEYS))}, and URLs whose "
            "host is, means or resolves to a loopback, private or link-local address not "
            f"listed in {NETWORK_SETTING} (the workers' own network rule). Prints "
            "'accepted N, already seeded M, rejected K' (--json: a JSON object with these "
            "counts and the rejected lines with their reasons). Exit 0 when at least one line "
            "was valid, 1 when none was, 2 when Redis fails."
        ),
        examples=[
            "seed seeds.txt",
            "seed --dry-run seeds.txt",
            "seed --json seeds.txt",
            "cat urls.txt | {prog} seed -",
            "seed --batch-size 2000 --redis-url redis://:secret@10.0.0.5:6379/0 big.jsonl",
        ],
    )
    parser.add_argument("file", metavar="FILE", help="the seed file; - reads standard input")
    parser.add_argument(
        "--batch-size",
        type=_positive_int,
        default=DEFAULT_BATCH_SIZE,
        metavar="N",
        help=f"seeds per Redis round trip (default {DEFAULT_BATCH_SIZE})",
    )
    parser.add_argument(
        "--progress",
        action="store_true",
        help="show progress on stderr even when it is not a terminal (it is shown on one)",
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="validate only: print the bad lines and the counts, push nothing, "
        "do not contact Redis",
    )
    parser.add_argument(
        "--allow-private-networks",
        metavar="LIST",
        default=None,
        help=f"hosts or CIDR ranges that may be seeded although private or loopback "
        f"(default: ${NETWORK_SETTING}, as the workers read it; unset: none)",
    )
    parser.add_argument(
        "--no-resolve",
        action="store_true",
        help="do not resolve host names to check their addresses (addresses written in the "
        "URL, in any form, are still checked; the workers check names when they connect): "
        "for large files of many sites behind a slow DNS",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="print a JSON object: accepted, already_seeded, rejected, lines, dry_run and "
        "rejected_lines (line, reason, text) instead of the text lines",
    )
    parser.set_defaults(handler=cmd_seed)
