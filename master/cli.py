"""The master's command line: ``seed``, ``status``, ``pause``, ``resume``, ``report``,
``reset``, ``dead``, ``invalid``, and (in ``master/commands/``) ``metrics``, ``export``,
``recrawl`` and ``bench``.

Exit codes (every command):

====  ==================================================================
0     done
1     nothing done: no valid seed given, confirmation refused or missing,
      live workers block a reset, a dead letter could not be requeued
2     Redis unreachable or failing (one line on stderr says which URL and
      what to do), or a usage error
130   interrupted with Ctrl-C
====  ==================================================================
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import textwrap
import time
from collections.abc import Callable
from typing import Any, TextIO

import redis

from crawler.config import redact_dsn
from crawler.keys import SPIDER_NAME, CrawlKeys
from crawler.network import SETTING as NETWORK_SETTING
from crawler.network import NetworkRule, resolve
from crawler.seeds import SEED_META_KEYS, SeedError
from master import control, deadletters, inspection, render
from master.commands import export as export_command
from master.commands import metrics as metrics_command
from master.commands import recrawl as recrawl_command
from master.commands.bench import cmd_bench
from master.connection import (
    DEFAULT_REDIS_URL,
    MasterRedisError,
    connect,
    explain,
    resolve_redis_url,
)
from master.progress import ProgressLine
from master.seeding import DEFAULT_BATCH_SIZE, SeedCounts, SeedLoader

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_REDIS = 2
EXIT_INTERRUPTED = 130


class Context:
    """What every command needs: the options, the key names, a lazily opened client."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.redis_url = resolve_redis_url(getattr(args, "redis_url", None))
        self.shown_url = redact_dsn(self.redis_url)
        self.keys = CrawlKeys(getattr(args, "spider", None) or SPIDER_NAME)
        self._client: redis.Redis | None = None

    @property
    def client(self) -> redis.Redis:
        if self._client is None:
            self._client = connect(self.redis_url)
        return self._client

    def close(self) -> None:
        if self._client is not None:
            self._client.close()


def out(text: str = "") -> None:
    print(text, file=sys.stdout, flush=True)


def err(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def print_json(data: Any) -> None:
    out(json.dumps(data, indent=2, sort_keys=True, default=str))


def confirm(question: str, stream: TextIO | None = None) -> bool | None:
    """Ask on the terminal; ``None`` when there is no terminal to ask on."""
    stream = stream or sys.stdin
    if not stream.isatty():
        return None
    print(question, end="", flush=True)
    answer = stream.readline()
    return answer.strip().lower() in ("y", "yes")


def workers_phrase(count: int) -> str:
    return f"{count} live worker" + ("" if count == 1 else "s")


# --- seed -------------------------------------------------------------------------------


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


def seed_summary(counts: SeedCounts, refused: list[SeedError], dry_run: bool) -> dict[str, Any]:
    """``seed --json``: the counts, and every refused line with its reason."""
    return {
        "accepted": counts.accepted,
        "already_seeded": counts.already_seeded,
        "rejected": counts.rejected,
        "lines": counts.lines,
        "dry_run": dry_run,
        "rejected_lines": [
            {"line": error.lineno, "reason": error.reason, "text": error.text} for error in refused
        ],
    }


# --- status and report ------------------------------------------------------------------


def cmd_status(ctx: Context, args: argparse.Namespace) -> int:
    if args.watch is None:
        status = inspection.gather_status(ctx.client, ctx.keys)
        if args.json:
            print_json(status)
        else:
            out(render.render_status(status, ctx.shown_url))
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


def cmd_report(ctx: Context, args: argparse.Namespace) -> int:
    report = inspection.gather_report(ctx.client, ctx.keys)
    if args.json:
        print_json(report)
    else:
        out(render.render_report(report))
    return EXIT_OK


# --- pause, resume, reset ---------------------------------------------------------------


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
    if not args.yes:
        answer = confirm(f"Delete all {plan.counts['keys']} keys? [y/N] ")
        if answer is None:
            err("refusing to reset without confirmation: no terminal to ask on; pass --yes")
            return EXIT_FAILED
        if not answer:
            out("reset cancelled; nothing was deleted.")
            return EXIT_FAILED
    deleted = control.reset(ctx.client, ctx.keys)
    out(f"deleted {deleted} keys of crawl {ctx.keys.spider!r}.")
    return EXIT_OK


# --- dead letters and invalid items -----------------------------------------------------


def cmd_dead(ctx: Context, args: argparse.Namespace) -> int:
    if args.action == "list":
        listing = deadletters.list_dead(ctx.client, ctx.keys, args.limit, args.start)
        if args.json:
            print_json(listing)
        else:
            out(render.render_dead(listing))
        return EXIT_OK
    if args.action == "requeue":
        result = deadletters.requeue(ctx.client, ctx.keys, args.limit)
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
                f"{ctx.keys.requests}, {result.seeds} seeds to {ctx.keys.start_urls}; "
                f"{len(result.skipped)} left in place, {result.remaining} remain."
            )
        return EXIT_FAILED if result.skipped else EXIT_OK
    # clear
    count = int(ctx.client.llen(ctx.keys.dead))
    if not count:
        out("no dead letters; nothing to clear.")
        return EXIT_OK
    if not args.yes:
        answer = confirm(f"Delete all {count} dead letters of crawl {ctx.keys.spider!r}? [y/N] ")
        if answer is None:
            err(
                "refusing to clear dead letters without confirmation: no terminal to ask on; "
                "pass --yes"
            )
            return EXIT_FAILED
        if not answer:
            out("cancelled; nothing was deleted.")
            return EXIT_FAILED
    removed = deadletters.clear_dead(ctx.client, ctx.keys)
    out(f"cleared {removed} dead letters.")
    return EXIT_OK


def cmd_invalid(ctx: Context, args: argparse.Namespace) -> int:
    listing = deadletters.list_invalid(ctx.client, ctx.keys, args.limit, args.start)
    if args.json:
        print_json(listing)
    else:
        out(render.render_invalid(listing))
    return EXIT_OK


# --- the parser -------------------------------------------------------------------------


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def _non_negative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {value}")
    return value


def _setting(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, not {text!r}")
    return name, value


def _seconds(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, not {text}")
    return value


def _common_options() -> argparse.ArgumentParser:
    """``--redis-url`` and ``--spider``, accepted before or after the command name."""
    common = argparse.ArgumentParser(add_help=False)
    group = common.add_argument_group("global options")
    group.add_argument(
        "--redis-url",
        metavar="URL",
        default=argparse.SUPPRESS,
        help=f"the crawl's Redis (default: $REDIS_URL, else {DEFAULT_REDIS_URL})",
    )
    group.add_argument(
        "--spider",
        metavar="NAME",
        default=argparse.SUPPRESS,
        help=f"spider whose keys (NAME:*) are used (default: {SPIDER_NAME})",
    )
    return common


COMMANDS: dict[str, dict[str, Any]] = {
    "seed": {
        "help": "validate a seed file and push its new start URLs",
        "description": (
            "Validate every line of FILE (one URL per line, or JSON lines "
            '{"url": ..., "meta": {...}}; blank lines and # comments are skipped) and push '
            "the valid ones not seeded before to <spider>:start_urls. Bad lines are printed "
            "on stderr with their number and reason and never pushed: among them seeds whose "
            f"meta holds a key other than {', '.join(sorted(SEED_META_KEYS))}, and URLs whose "
            "host is, means or resolves to a loopback, private or link-local address not "
            f"listed in {NETWORK_SETTING} (the workers' own network rule). Prints "
            "'accepted N, already seeded M, rejected K' (--json: a JSON object with these "
            "counts and the rejected lines with their reasons). Exit 0 when at least one line "
            "was "
            "valid, 1 when none was, 2 when Redis fails."
        ),
        "examples": [
            "seed seeds.txt",
            "seed --dry-run seeds.txt",
            "seed --json seeds.txt",
            "cat urls.txt | {prog} seed -",
            "seed --batch-size 2000 --redis-url redis://:secret@10.0.0.5:6379/0 big.jsonl",
        ],
    },
    "status": {
        "help": "the crawl at a glance: queue, in flight, live workers, items, paused",
        "description": (
            "Queued requests, pending seeds, seen fingerprints, requests in flight, live "
            "workers with their pages/min, items stored and invalid, dead letters, and the "
            "crawl's state: paused, running, idle or finished."
        ),
        "examples": ["status", "status --json", "status --watch 2"],
    },
    "pause": {
        "help": "pause every worker (they keep running, but take no new requests)",
        "description": (
            "Set <spider>:paused. Every worker polls it about once a second and stops taking "
            "requests while it exists; requests in flight finish. Pausing a paused crawl "
            "changes nothing."
        ),
        "examples": ["pause", "pause --redis-url redis://10.0.0.5:6379/0"],
    },
    "resume": {
        "help": "resume a paused crawl",
        "description": "Delete <spider>:paused; the workers take requests again within a second.",
        "examples": ["resume"],
    },
    "report": {
        "help": "per-worker elapsed seconds, pages, items, pages/min, and the totals",
        "description": (
            "One row per worker that ever reported (id, state, elapsed seconds, idle seconds "
            "before closing, active seconds, pages, items, pages per active minute), a TOTAL "
            "row for the whole crawl (wall time from first start to last end), and where the "
            "products are stored (with the product count of a SQLite store on this machine)."
        ),
        "examples": ["report", "report --json"],
    },
    "reset": {
        "help": "delete the crawl's whole Redis state (asks first)",
        "description": (
            "Delete every key matching <spider>:* (queue, fingerprints, seeds, worker "
            "records, dead letters, ...) after showing what will go and asking. Refuses while "
            "live workers exist unless --force; refuses without a terminal unless --yes."
        ),
        "examples": ["reset", "reset --yes", "reset --yes --force"],
    },
    "dead": {
        "help": "list, requeue or clear dead letters (requests that failed for good)",
        "description": (
            "list (default): show dead letters. requeue: put each back to work (its request "
            "into the request queue, or its URL into the start URLs), removing it from the "
            "list atomically; exit 1 when some could not be requeued. clear: delete them all "
            "(asks first)."
        ),
        "examples": ["dead", "dead list --limit 0 --json", "dead requeue", "dead clear --yes"],
    },
    "metrics": {
        "help": "serve crawl-wide Prometheus metrics read from Redis at each scrape",
        "description": (
            "Serve /metrics for Prometheus: queue depth, pending seeds, seen fingerprints, "
            "requests in flight, live workers, dead letters, invalid items, paused, items "
            "stored, politeness waits and every counter of <spider>:stats, read from Redis "
            "at each scrape. Runs until Ctrl-C or SIGTERM (exit 0)."
        ),
        "examples": ["metrics --port 9400", "metrics --once"],
    },
    "invalid": {
        "help": "list items rejected by the product schema, with their errors",
        "description": "Show the items kept in <spider>:invalid: url and validation errors.",
        "examples": ["invalid", "invalid list --limit 0 --json"],
    },
    "export": {
        "help": "stream the stored products as CSV, JSON lines or JSON",
        "description": (
            "Read the products from the store the workers write to (PostgreSQL, else "
            "MongoDB, else the embedded SQLite file; options or the workers' environment "
            "variables) and write them to FILE or standard output, one at a time, with a "
            "progress bar on stderr. Exit 1 when the store cannot be opened."
        ),
        "examples": [
            "export --format csv --out products.csv",
            "export --format jsonl --since 6h --fields url,name,price,currency",
            "export --format json --out - --postgres-dsn postgresql://crawler@db/crawler",
        ],
    },
    "recrawl": {
        "help": "queue again the products not seen for longer than DURATION",
        "description": (
            "Queue the product URLs whose last_seen is older than DURATION straight into "
            "<spider>:requests (past the dupefilter, for those URLs only), so the workers "
            "refetch them and record price changes. Run it from cron to keep prices fresh."
        ),
        "examples": [
            "recrawl --older-than 6h",
            "recrawl --older-than 2d --dry-run",
            "recrawl --older-than 12h --postgres-dsn postgresql://crawler@db/crawler",
        ],
    },
    "bench": {
        "help": "benchmark 1, 2, 4 ... workers on the demo shop, with reference rows",
        "description": (
            "Start the demo shop and a private Redis (never the crawl's: --redis-url is "
            "ignored), crawl the shop from a clean state with each worker count in turn, "
            "then once under Scrapy's in-memory scheduler and once under stock scrapy-redis "
            "(reference rows). Prints a progress line on stderr, then a table: workers, "
            "elapsed (from the workers' own records), pages/s, speedup and efficiency "
            "against 1 worker, CPU ms per page, Redis commands and round trips per page, "
            "worker peak RSS. Writes bench.json and bench.png to --output. Ctrl-C stops "
            "everything it started (exit 130)."
        ),
        "examples": [
            "bench",
            "bench --products 300 --latency-ms 100 --workers 1 2 4",
            "bench --redis-delay-ms 1 --workers 1",
            "bench --products 30 --workers 1 2 --output /tmp/bench",
        ],
    },
}


def build_parser(prog: str = "python -m master") -> argparse.ArgumentParser:
    common = _common_options()
    parser = argparse.ArgumentParser(
        prog=prog,
        description=textwrap.fill(
            "Control plane of the distributed crawler: seeds, status, pause/resume, report, "
            "reset, dead letters. Exit codes: 0 done, 1 nothing done (see each command), "
            "2 Redis unreachable or usage error, 130 interrupted.",
            79,
        ),
        parents=[common],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n"
        + "\n".join(
            f"  {prog} {example}"
            for example in (
                "seed seeds.txt",
                "status",
                "pause",
                "resume",
                "report",
                "reset --yes",
                "dead requeue",
                "COMMAND --help",
            )
        ),
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    sub: dict[str, argparse.ArgumentParser] = {}
    for name, spec in COMMANDS.items():
        examples = "\n".join(
            "  "
            + (example.format(prog=prog) if example.startswith("cat ") else f"{prog} {example}")
            for example in spec["examples"]
        )
        sub[name] = commands.add_parser(
            name,
            help=spec["help"],
            description=textwrap.fill(spec["description"], 79),
            parents=[common],
            epilog=f"examples:\n{examples}",
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )

    seed = sub["seed"]
    seed.add_argument("file", metavar="FILE", help="the seed file; - reads standard input")
    seed.add_argument(
        "--batch-size",
        type=_positive_int,
        default=DEFAULT_BATCH_SIZE,
        metavar="N",
        help=f"seeds per Redis round trip (default {DEFAULT_BATCH_SIZE})",
    )
    seed.add_argument(
        "--progress",
        action="store_true",
        help="show progress on stderr even when it is not a terminal (it is shown on one)",
    )
    seed.add_argument(
        "--dry-run",
        action="store_true",
        help="validate only: print the bad lines and the counts, push nothing, "
        "do not contact Redis",
    )
    seed.add_argument(
        "--allow-private-networks",
        metavar="LIST",
        default=None,
        help=f"hosts or CIDR ranges that may be seeded although private or loopback "
        f"(default: ${NETWORK_SETTING}, as the workers read it; unset: none)",
    )
    seed.add_argument(
        "--no-resolve",
        action="store_true",
        help="do not resolve host names to check their addresses (addresses written in the "
        "URL, in any form, are still checked; the workers check names when they connect): "
        "for large files of many sites behind a slow DNS",
    )
    seed.add_argument(
        "--json",
        action="store_true",
        help="print a JSON object: accepted, already_seeded, rejected, lines, dry_run and "
        "rejected_lines (line, reason, text) instead of the text lines",
    )
    seed.set_defaults(handler=cmd_seed)

    status = sub["status"]
    status.add_argument("--json", action="store_true", help="print a JSON object")
    status.add_argument(
        "--watch",
        type=_seconds,
        metavar="SECONDS",
        help="refresh every SECONDS until Ctrl-C (exit 0)",
    )
    status.set_defaults(handler=cmd_status)

    sub["pause"].set_defaults(handler=cmd_pause)
    sub["resume"].set_defaults(handler=cmd_resume)

    report = sub["report"]
    report.add_argument("--json", action="store_true", help="print a JSON object")
    report.set_defaults(handler=cmd_report)

    reset = sub["reset"]
    reset.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
    reset.add_argument("--force", action="store_true", help="reset even while live workers exist")
    reset.set_defaults(handler=cmd_reset)

    dead = sub["dead"]
    dead.add_argument(
        "action",
        nargs="?",
        choices=("list", "requeue", "clear"),
        default="list",
        help="list (default), requeue or clear",
    )
    dead.add_argument(
        "--limit",
        type=_non_negative_int,
        default=None,
        metavar="N",
        help="list: show N records (default 50); requeue: the first N (default all); 0 means all",
    )
    dead.add_argument(
        "--start",
        type=_non_negative_int,
        default=0,
        metavar="I",
        help="list: first position shown (default 0)",
    )
    dead.add_argument("--json", action="store_true", help="print JSON")
    dead.add_argument("--yes", "-y", action="store_true", help="clear: do not ask")
    dead.set_defaults(handler=cmd_dead)

    invalid = sub["invalid"]
    invalid.add_argument(
        "action", nargs="?", choices=("list",), default="list", help="list (default)"
    )
    invalid.add_argument(
        "--limit",
        type=_non_negative_int,
        default=50,
        metavar="N",
        help="show N items (default 50; 0: all)",
    )
    invalid.add_argument(
        "--start",
        type=_non_negative_int,
        default=0,
        metavar="I",
        help="first position shown (default 0)",
    )
    invalid.add_argument("--json", action="store_true", help="print JSON")
    invalid.set_defaults(handler=cmd_invalid)

    metrics_command.add_arguments(sub["metrics"])
    export_command.add_arguments(sub["export"])
    sub["export"].set_defaults(handler=export_command.cmd_export)
    recrawl_command.add_arguments(sub["recrawl"])
    sub["recrawl"].set_defaults(handler=recrawl_command.cmd_recrawl)
    bench = sub["bench"]
    bench.add_argument(
        "--products",
        type=_positive_int,
        default=300,
        metavar="N",
        help="products in the demo shop (default 300)",
    )
    bench.add_argument(
        "--latency-ms",
        type=float,
        default=20,
        metavar="MS",
        help="the shop's response latency (default 20)",
    )
    bench.add_argument(
        "--workers",
        type=_positive_int,
        nargs="+",
        default=[1, 2, 4],
        metavar="N",
        help="worker counts, one run each (default: 1 2 4)",
    )
    bench.add_argument(
        "--redis-delay-ms",
        type=float,
        default=0,
        metavar="MS",
        help="round-trip time added between the workers and Redis by a proxy (default 0)",
    )
    bench.add_argument(
        "--concurrency",
        type=_positive_int,
        default=16,
        metavar="N",
        help="CONCURRENT_REQUESTS of each worker (default 16)",
    )
    bench.add_argument(
        "--stock-workers",
        type=_positive_int,
        nargs="+",
        default=[1],
        metavar="N",
        help="worker counts of the stock scrapy-redis reference rows (default: 1)",
    )
    bench.add_argument(
        "--set",
        "-s",
        type=_setting,
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a Scrapy setting for every worker of every run (repeatable)",
    )
    bench.add_argument(
        "--no-reference",
        action="store_true",
        help="skip the reference rows (in-memory scheduler, stock scrapy-redis)",
    )
    bench.add_argument(
        "--output",
        default="bench-results",
        metavar="DIR",
        help="where bench.json and bench.png go (default: bench-results/)",
    )
    bench.add_argument(
        "--timeout",
        type=_seconds,
        default=600,
        metavar="SECONDS",
        help="longest a run may take before the benchmark gives up (default 600)",
    )
    bench.set_defaults(handler=cmd_bench)
    return parser


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    """Run one command; return its exit code (never raises, never prints a traceback)."""
    parser = build_parser(prog or os.path.basename(sys.argv[0] or "master"))
    ctx: Context | None = None
    try:
        args = parser.parse_args(argv)
        if args.command == "dead" and args.limit is None:
            args.limit = 50 if args.action == "list" else 0
        ctx = Context(args)
        handler: Callable[[Context, argparse.Namespace], int] = args.handler
        return handler(ctx, args)
    except SystemExit as exc:  # argparse: --help (0) and usage errors (2)
        return exc.code if isinstance(exc.code, int) else EXIT_REDIS
    except MasterRedisError as exc:
        err(f"error: {exc}")
        return EXIT_REDIS
    except redis.RedisError as exc:
        err(f"error: {explain(exc, ctx.redis_url if ctx else DEFAULT_REDIS_URL)}")
        return EXIT_REDIS
    except KeyboardInterrupt:
        err("interrupted")
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # output piped into head, less, ...
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_FAILED
    finally:
        if ctx is not None:
            ctx.close()
