"""How much faster two CPU-bound processes are than one, on this machine, without any crawler.

Each process extracts the product of the same demo shop page again and again
for ``--seconds`` (HTML parse and the whole zero-configuration extraction, the
bulk of a worker's CPU per page) and counts the pages. First 1 process alone,
then ``--processes`` at once. The ratio of the totals is the best speedup any
CPU-bound crawl can get from that many worker processes here: virtual CPUs
that share a physical core, or a host that is busy, give less than the
process count, whatever the crawler does.

    python -m benchmarks.cpu_ceiling --processes 2 --seconds 10
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import time

from scrapy.http import HtmlResponse

from crawler.extraction import extract_product
from demoshop.catalog import Catalog
from demoshop.pages import PageRenderer


def _page() -> HtmlResponse:
    catalog = Catalog.build(products=20)
    product = catalog.products[0]
    body = PageRenderer(catalog).product(product).encode()
    return HtmlResponse(url="http://127.0.0.1:8080" + product.path, body=body, encoding="utf-8")


def _spin(seconds: float, start: float, counts: multiprocessing.Queue[int]) -> None:
    response = _page()
    while time.time() < start:  # every process begins at the same moment
        time.sleep(0.001)
    done = 0
    end = start + seconds
    while time.time() < end:
        fresh = response.replace(body=response.body)  # a new parse each time, like a new page
        extract_product(fresh)
        done += 1
    counts.put(done)


def pages_per_second(processes: int, seconds: float) -> float:
    counts: multiprocessing.Queue[int] = multiprocessing.Queue()
    start = time.time() + 2.0  # time for every process to import and build its page
    workers = [
        multiprocessing.Process(target=_spin, args=(seconds, start, counts))
        for _ in range(processes)
    ]
    for worker in workers:
        worker.start()
    total = sum(counts.get() for _ in workers)
    for worker in workers:
        worker.join()
    return total / seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.cpu_ceiling",
        description="Speedup of N CPU-bound processes over 1 on this machine (no crawler).",
    )
    parser.add_argument("--processes", type=int, default=2, help="default 2")
    parser.add_argument("--seconds", type=float, default=10, help="per measurement (default 10)")
    parser.add_argument("--rounds", type=int, default=2, help="alternate 1 and N this often")
    args = parser.parse_args(argv)
    for round_ in range(1, args.rounds + 1):
        one = pages_per_second(1, args.seconds)
        many = pages_per_second(args.processes, args.seconds)
        print(
            f"round {round_}: 1 process {one:.1f} extractions/s, {args.processes} processes "
            f"{many:.1f}/s: {many / one:.2f}x",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
