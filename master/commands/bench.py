"""``python -m master bench``: 1, 2, 4 ... workers against the demo shop, with reference rows.

Starts the demo shop and a private Redis (optionally behind a delaying proxy),
crawls the shop once per row from a clean state, prints a progress line on
stderr while it runs, then the table, and writes ``bench.json`` and
``bench.png`` to ``--output``. See :mod:`benchmarks.bench` for how each
figure is measured, and ``docs/benchmarks.md`` for a real run.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from master.commands.base import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_REDIS,
    Subcommands,
    _non_negative_int,
    _positive_int,
    _seconds,
    _setting,
)

if TYPE_CHECKING:
    from master.cli import Context


def cmd_frontier(count: int, cluster_primaries: int) -> int:
    """``bench --frontier N``: bytes per queued request and per fingerprint, on one Redis,
    then on a private Redis Cluster (``cluster_primaries`` 0: not)."""
    import shutil

    from benchmarks.frontier import measure, measure_cluster, render

    if 0 < cluster_primaries < 3:
        sys.stderr.write("error: --cluster-primaries: a Redis Cluster needs at least 3\n")
        return EXIT_REDIS  # a usage error
    for line in render(measure(count)):
        print(line, flush=True)
    if not cluster_primaries:
        return EXIT_OK
    if shutil.which("redis-cli") is None:
        sys.stderr.write("no Redis Cluster measured: redis-cli is needed to create one\n")
        return EXIT_OK
    print(flush=True)
    for line in render(measure_cluster(count, cluster_primaries)):
        print(line, flush=True)
    return EXIT_OK


def cmd_bench(ctx: Context, args: argparse.Namespace) -> int:
    if ctx.keys.spider != "ecommerce":
        sys.stderr.write(
            f"error: --spider {ctx.keys.spider}: bench measures the ecommerce spider's crawl of "
            "the demo shop in a private Redis; no other spider is benchmarked\n"
        )
        return EXIT_REDIS  # a usage error
    if args.frontier is not None:
        return cmd_frontier(args.frontier, args.cluster_primaries)
    # heavy imports (the shop, matplotlib) only for this command
    from benchmarks.bench import Bench, BenchFailed, RunResult, RunSpec
    from benchmarks.bench_report import draw_chart, render_ratios, render_table, write_json
    from demoshop.process import ShopProcess, ShopStartError

    output = Path(args.output)
    output.mkdir(parents=True, exist_ok=True)
    specs = [RunSpec("reliable", n) for n in args.workers]
    if not args.no_reference:
        specs.append(RunSpec("memory", 1))
        specs += [RunSpec("scrapy-redis", n) for n in args.stock_workers]
    setup: dict[str, Any] = {
        "products": args.products,
        "latency_ms": args.latency_ms,
        "redis_delay_ms": args.redis_delay_ms,
        "concurrency": args.concurrency,
        "settings": dict(args.set),
        "cpus": os.cpu_count(),
        "python": sys.version.split()[0],
        "command": " ".join(["python -m master bench", *sys.argv[2:]]),
    }
    tty = sys.stderr.isatty()
    last_line = [0.0]

    def progress(line: str) -> None:
        """One line rewritten in place on a terminal; elsewhere a line every 5 s."""
        if tty:
            sys.stderr.write("\r\033[K" + line)
        elif time.monotonic() - last_line[0] >= 5:
            last_line[0] = time.monotonic()
            sys.stderr.write(line + "\n")
        sys.stderr.flush()

    results: list[RunResult] = []
    print(
        f"bench: demo shop {args.products} products, {args.latency_ms:g} ms latency; "
        f"Redis +{args.redis_delay_ms:g} ms round trip; CONCURRENT_REQUESTS={args.concurrency}; "
        f"{len(specs)} runs",
        flush=True,
    )
    try:
        with (
            tempfile.TemporaryDirectory(prefix="bench-") as tmp,
            ShopProcess(
                products=args.products,
                latency_ms=args.latency_ms,
                access_log=Path(tmp) / "access.log",
                startup_timeout=120,  # a big shop renders for a while on a busy machine
            ) as shop,
        ):
            bench = Bench(
                shop,
                Path(tmp),
                redis_delay_ms=args.redis_delay_ms,
                concurrency=args.concurrency,
                timeout=args.timeout,
                extra_settings=dict(args.set),
                on_progress=progress,
            )
            with bench.started():
                for spec in specs:
                    results.append(bench.run(spec))
                    if tty:
                        sys.stderr.write("\r\033[K")
                    sys.stderr.write(
                        f"done: {spec.mode} x{spec.workers}: "
                        f"{results[-1].pages} pages in {results[-1].elapsed:.2f} s\n"
                    )
    except KeyboardInterrupt:
        sys.stderr.write("\ninterrupted: workers, Redis and the shop were stopped\n")
        return EXIT_INTERRUPTED
    except (BenchFailed, ShopStartError) as exc:
        sys.stderr.write(f"\nerror: {exc}\n")
        return EXIT_FAILED
    print(render_table(results))
    for line in render_ratios(results):
        print(line)
    write_json(output / "bench.json", setup, results)
    draw_chart(output / "bench.png", setup, results)
    print(f"wrote {output / 'bench.json'} and {output / 'bench.png'}", flush=True)
    return EXIT_OK


def register(commands: Subcommands) -> None:
    parser = commands.add(
        "bench",
        help="benchmark 1, 2, 4 ... workers on the demo shop, with reference rows",
        description=(
            "Start the demo shop and a private Redis (never the crawl's: --redis-url is "
            "ignored), crawl the shop from a clean state with each worker count in turn, "
            "then once under Scrapy's in-memory scheduler and once under stock scrapy-redis "
            "(reference rows). Prints a progress line on stderr, then a table: workers, "
            "elapsed (from the workers' own records), pages/s, speedup and efficiency "
            "against 1 worker, CPU ms per page, Redis commands and round trips per page, "
            "worker peak RSS. Writes bench.json and bench.png to --output. Ctrl-C stops "
            "everything it started (exit 130)."
        ),
        examples=[
            "bench",
            "bench --products 300 --latency-ms 100 --workers 1 2 4",
            "bench --redis-delay-ms 1 --workers 1",
            "bench --products 30 --workers 1 2 --output /tmp/bench",
            "bench --frontier 100000",
        ],
    )
    parser.add_argument(
        "--products",
        type=_positive_int,
        default=300,
        metavar="N",
        help="products in the demo shop (default 300)",
    )
    parser.add_argument(
        "--latency-ms",
        type=float,
        default=20,
        metavar="MS",
        help="the shop's response latency (default 20)",
    )
    parser.add_argument(
        "--workers",
        type=_positive_int,
        nargs="+",
        default=[1, 2, 4],
        metavar="N",
        help="worker counts, one run each (default: 1 2 4)",
    )
    parser.add_argument(
        "--redis-delay-ms",
        type=float,
        default=0,
        metavar="MS",
        help="round-trip time added between the workers and Redis by a proxy (default 0)",
    )
    parser.add_argument(
        "--concurrency",
        type=_positive_int,
        default=16,
        metavar="N",
        help="CONCURRENT_REQUESTS of each worker (default 16)",
    )
    parser.add_argument(
        "--stock-workers",
        type=_positive_int,
        nargs="+",
        default=[1],
        metavar="N",
        help="worker counts of the stock scrapy-redis reference rows (default: 1)",
    )
    parser.add_argument(
        "--set",
        "-s",
        type=_setting,
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a Scrapy setting for every worker of every run (repeatable)",
    )
    parser.add_argument(
        "--no-reference",
        action="store_true",
        help="skip the reference rows (in-memory scheduler, stock scrapy-redis)",
    )
    parser.add_argument(
        "--output",
        default="bench-results",
        metavar="DIR",
        help="where bench.json and bench.png go (default: bench-results/)",
    )
    parser.add_argument(
        "--frontier",
        type=_positive_int,
        default=None,
        metavar="N",
        help=(
            "instead of crawling: queue N typical product links and their fingerprints in "
            "a private Redis and print the bytes per queued request and per fingerprint "
            "(exact set and Bloom filter); then the same on a private Redis Cluster "
            "(--cluster-primaries), every shard's keys summed"
        ),
    )
    parser.add_argument(
        "--cluster-primaries",
        type=_non_negative_int,
        default=3,
        metavar="P",
        help="with --frontier: primaries of the private Redis Cluster measured after the "
        "single Redis (default 3, at least 3; 0: the single Redis only)",
    )
    parser.add_argument(
        "--timeout",
        type=_seconds,
        default=600,
        metavar="SECONDS",
        help="longest a run may take before the benchmark gives up (default 600)",
    )
    parser.set_defaults(handler=cmd_bench)
