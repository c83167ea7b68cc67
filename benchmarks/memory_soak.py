"""A worker's resident memory over a long crawl: is it flat?

Starts the demo shop (``--products``, 100 000 by default: about 108 000 pages)
and a private Redis, crawls the whole shop with ``--workers`` real ``scrapy
crawl ecommerce`` processes at ``--concurrency`` requests each (the same runs
as ``python -m master bench``, :mod:`benchmarks.bench`), and samples every
worker's RSS (``psutil``) with the pages crawled so far. Prints a line every
``--interval`` seconds while it runs, then the RSS at each tenth of the crawl,
and writes every sample to ``--output``/``memory.json``.

    python -m benchmarks.memory_soak --products 100000 --concurrency 64

What to read: the RSS once the worker is warm (at a tenth of the crawl) against
its RSS at the end. The bounded in-process caches (``DUPEFILTER_LOCAL_CACHE_SIZE``
known fingerprints, ``SCHEDULER_FLUSH_MAX``, ``SCHEDULER_POP_BATCH``) fill up to
their bound and stop; anything else that grows with pages is a leak.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from benchmarks.bench import Bench, BenchFailed, RunSpec
from demoshop.process import ShopProcess
from master.commands.base import _setting

MB = 1024 * 1024


def checkpoints(samples: list[tuple[float, int, int]], parts: int = 10) -> list[tuple[int, int]]:
    """(pages, largest worker RSS in bytes) at the first sample past each 1/parts of the pages."""
    if not samples:
        return []
    total = samples[-1][1]
    marks = []
    for part in range(1, parts + 1):
        goal = total * part / parts
        for _, pages, rss in samples:
            if pages >= goal:
                marks.append((pages, rss))
                break
    return marks


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.memory_soak",
        description="Sample worker RSS over a long crawl of the demo shop (is it flat?).",
    )
    parser.add_argument("--products", type=int, default=100_000, help="default 100000")
    parser.add_argument("--workers", type=int, default=1, help="default 1")
    parser.add_argument("--concurrency", type=int, default=64, help="default 64")
    parser.add_argument("--latency-ms", type=float, default=0, help="shop latency (default 0)")
    parser.add_argument("--interval", type=float, default=30, help="seconds between printed lines")
    parser.add_argument("--timeout", type=float, default=4 * 3600, help="give up after (s)")
    parser.add_argument("--output", default="bench-results", help="where memory.json goes")
    parser.add_argument(
        "--set", "-s", type=_setting, action="append", default=[], metavar="NAME=VALUE",
        help="a Scrapy setting for the workers (repeatable)",
    )
    args = parser.parse_args(argv)

    samples: list[tuple[float, int, int]] = []  # (seconds, pages, largest worker RSS)
    last_line = [0.0]

    def sample(elapsed: float, pages: int, rss: dict[int, int]) -> None:
        samples.append((round(elapsed, 1), pages, max(rss.values(), default=0)))
        if elapsed - last_line[0] >= args.interval:
            last_line[0] = elapsed
            sizes = " ".join(f"{value / MB:.0f}" for value in rss.values())
            print(f"{elapsed:7.0f} s  {pages:7d} pages  worker RSS MB: {sizes}", flush=True)

    output = Path(args.output)
    output.mkdir(parents=True, exist_ok=True)
    print(
        f"memory soak: demo shop {args.products} products, {args.latency_ms:g} ms latency, "
        f"{args.workers} worker(s) at CONCURRENT_REQUESTS={args.concurrency}",
        flush=True,
    )
    try:
        with (
            tempfile.TemporaryDirectory(prefix="soak-") as tmp,
            ShopProcess(
                products=args.products,
                latency_ms=args.latency_ms,
                access_log=Path(tmp) / "access.log",
                startup_timeout=1800,  # 100 000 products: the shop renders its pages for minutes
            ) as shop,
        ):
            bench = Bench(
                shop,
                Path(tmp),
                concurrency=args.concurrency,
                timeout=args.timeout,
                on_sample=sample,
                extra_settings=dict(args.set),
            )
            with bench.started():
                result = bench.run(RunSpec("reliable", args.workers))
    except KeyboardInterrupt:
        sys.stderr.write("\ninterrupted: workers, Redis and the shop were stopped\n")
        return 130
    except BenchFailed as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 1
    print(
        f"crawled {result.pages} pages, {result.items} items in {result.elapsed:.0f} s "
        f"({result.pages_per_s:.1f} pages/s); peak RSS {result.peak_rss_mb:.0f} MB (ru_maxrss)"
    )
    print("pages      largest worker RSS MB")
    for pages, rss in checkpoints(samples):
        print(f"{pages:8d}   {rss / MB:6.1f}")
    (output / "memory.json").write_text(
        json.dumps(
            {
                "setup": vars(args),
                "result": result.as_dict(),
                "samples": [{"s": s, "pages": p, "rss": r} for s, p, r in samples],
            },
            indent=1,
        )
        + "\n"
    )
    print(f"wrote {output / 'memory.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
