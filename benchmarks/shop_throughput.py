"""Throughput of the demo shop: a bounded load generator on loopback.

Starts a ``ShopProcess`` and sends ``--requests`` GET requests (default 5000) over
``--connections`` persistent HTTP/1.1 connections (default 32), spread over
``--processes`` client processes (default 2, so the Python client is not the
bottleneck) each running one thread per connection with ``http.client``.
The URLs cycle through the shop's crawlable pages. Stops after ``--max-seconds``
whatever happens. Prints requests/s, p50/p99/max latency and the error count.

    python benchmarks/shop_throughput.py
    python benchmarks/shop_throughput.py --requests 20000 --connections 64 --latency-ms 20

The shop runs on its own core only if the machine has one to spare: on a
two-core machine the clients and the shop share the CPU, so the figure is a
lower bound on what the shop alone can serve.
"""

from __future__ import annotations

import argparse
import http.client
import multiprocessing
import os
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from demoshop import ShopProcess  # noqa: E402


def _client_thread(
    port: int, paths: list[str], count: int, deadline: float, out: list[float], errors: list[str]
) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    headers = {"User-Agent": "demoshop-bench/1.0", "Accept-Encoding": "identity"}
    for i in range(count):
        if time.monotonic() > deadline:
            break
        started = time.perf_counter()
        try:
            conn.request("GET", paths[i % len(paths)], headers=headers)
            response = conn.getresponse()
            response.read()
            if response.status != 200:
                errors.append(f"status {response.status}")
        except (OSError, http.client.HTTPException) as exc:
            errors.append(repr(exc))
            conn.close()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            continue
        out.append(time.perf_counter() - started)
    conn.close()


def _client_process(
    port: int, paths: list[str], per_connection: list[int], max_seconds: float, queue: object
) -> None:
    deadline = time.monotonic() + max_seconds
    latencies: list[float] = []
    errors: list[str] = []
    threads = []
    for n, count in enumerate(per_connection):
        # Each connection starts at a different page so the connections do not march in step.
        offset = (n * 7919) % len(paths)
        rotated = paths[offset:] + paths[:offset]
        thread = threading.Thread(
            target=_client_thread, args=(port, rotated, count, deadline, latencies, errors)
        )
        threads.append(thread)
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    queue.put((latencies, errors))  # type: ignore[attr-defined]


def run(args: argparse.Namespace) -> dict[str, float]:
    with ShopProcess(
        products=args.products, latency_ms=args.latency_ms, access_log=args.access_log
    ) as shop:
        paths = sorted(shop.catalog.crawlable_paths())
        connections = max(1, args.connections)
        processes = max(1, min(args.processes, connections))
        per_conn = [args.requests // connections] * connections
        for i in range(args.requests % connections):
            per_conn[i] += 1
        chunks = [per_conn[p::processes] for p in range(processes)]
        queue: multiprocessing.Queue[tuple[list[float], list[str]]] = multiprocessing.Queue()
        workers = [
            multiprocessing.Process(
                target=_client_process, args=(shop.port, paths, chunk, args.max_seconds, queue)
            )
            for chunk in chunks
        ]
        started = time.perf_counter()
        for worker in workers:
            worker.start()
        latencies: list[float] = []
        errors: list[str] = []
        for _ in workers:
            got_latencies, got_errors = queue.get(timeout=args.max_seconds + 30)
            latencies += got_latencies
            errors += got_errors
        elapsed = time.perf_counter() - started
        for worker in workers:
            worker.join()
        logged = len(shop.read_access_log())
    latencies.sort()

    def pct(p: float) -> float:
        if not latencies:
            return 0.0
        return latencies[min(len(latencies) - 1, int(p * len(latencies)))] * 1000

    return {
        "requests": len(latencies),
        "errors": len(errors),
        "seconds": elapsed,
        "rps": len(latencies) / elapsed if elapsed else 0.0,
        "p50_ms": pct(0.50),
        "p99_ms": pct(0.99),
        "max_ms": latencies[-1] * 1000 if latencies else 0.0,
        "mean_ms": statistics.fmean(latencies) * 1000 if latencies else 0.0,
        "logged": logged,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=5000, help="total requests (default 5000)")
    parser.add_argument("--connections", type=int, default=32, help="persistent connections")
    parser.add_argument("--processes", type=int, default=2, help="client processes")
    parser.add_argument("--products", type=int, default=200, help="products in the shop")
    parser.add_argument("--latency-ms", type=float, default=0, help="the shop's --latency-ms")
    parser.add_argument("--max-seconds", type=float, default=60, help="hard time limit")
    parser.add_argument("--access-log", default=None, help="keep the access log at this path")
    args = parser.parse_args(argv)
    if not 1 <= args.requests <= 1_000_000:
        parser.error("--requests must be between 1 and 1000000")
    result = run(args)
    print(
        f"demoshop: {result['requests']} requests in {result['seconds']:.2f}s over "
        f"{args.connections} connections ({args.processes} client processes, "
        f"{os.cpu_count()} CPUs): {result['rps']:.0f} requests/s; latency "
        f"p50 {result['p50_ms']:.2f} ms, p99 {result['p99_ms']:.2f} ms, "
        f"max {result['max_ms']:.2f} ms; {result['errors']} errors; "
        f"{result['logged']} access log lines"
    )
    return 1 if result["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
