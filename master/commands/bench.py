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
from typing import Any

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_INTERRUPTED = 130


def cmd_bench(ctx: Any, args: argparse.Namespace) -> int:
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
