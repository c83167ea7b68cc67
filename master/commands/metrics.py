"""``python -m master metrics``: the crawl-wide view from Redis, for Prometheus.

Serves ``/metrics`` (prometheus_client's own HTTP server, private registry).
Every scrape reads Redis afresh through :func:`master.inspection.gather_status`
(the figures of ``master status``) and the crawl-wide counters of
``<spider>:stats``; nothing is cached, so any number of these servers may run.
A scrape while Redis is away answers ``crawl_redis_up 0`` and nothing else.

Metrics (all prefixed ``crawl_``): ``queued_requests``, ``browser_queued``, ``pending_seeds``,
``seeded_urls``, ``seen_fingerprints``, ``requests_in_flight``,
``live_workers``, ``known_workers``, ``pages_per_minute``, ``dead_letters``
(list length), ``requests_refused``, ``paused``, ``state{state}``,
``items_stored_total``, ``items_invalid_total``, ``worker_pages{worker}`` and
``worker_items{worker}`` (live workers), ``politeness_waits_total`` (when the
stats hash has ``politeness_waits``), ``stats{field}`` (every numeric field of
``<spider>:stats``), ``redis_up``; backoff (:func:`master.inspection.gather_backoff`):
``retries_waiting`` (retries waiting in Redis for their time), ``sites_in_backoff``,
``site_rate{site}`` and ``site_budget{site}`` (req/s of each site in backoff),
``site_paused_seconds{site}``, ``site_rate_cuts_total``, ``site_rate_restores_total``;
data checks (:func:`crawler.datachecks.report.gather_checks`): ``data_check_failing{site,check}``.
"""

from __future__ import annotations

import argparse
import signal
import socketserver
import sys
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import redis
from prometheus_client import CollectorRegistry, generate_latest, start_http_server
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from crawler.core.keys import CrawlKeys
from crawler.core.records import StatsFields, as_float, as_text
from crawler.datachecks.checks import FAIL
from crawler.datachecks.report import CheckSettings, gather_checks
from master import inspection

if TYPE_CHECKING:
    from master.cli import Context
    from master.commands.base import Subcommands

DEFAULT_PORT = 9400
STATES = ("running", "paused", "idle", "finished")
GAUGES = (
    ("queued_requests", "Requests waiting in the shared queue."),
    ("browser_queued", "Requests waiting in the browser queue for a worker that renders."),
    ("pending_seeds", "Seeds pushed and not yet taken by a worker."),
    ("seeded_urls", "URLs accepted as seeds so far."),
    ("seen_fingerprints", "Request fingerprints in the dupefilter."),
    ("in_flight", "Requests leased by workers and not finished."),
    ("live_workers", "Workers whose heartbeat is alive."),
    ("known_workers", "Workers that ever reported."),
    ("pages_per_min", "Pages per minute of the live workers together."),
    ("dead_letters", "Dead letters kept (requests that failed for good)."),
    ("requests_refused", "Seeds and requests refused by the network rule or seed meta (ever)."),
)
RETRIES_WAITING = "crawl_retries_waiting"  # work too: the KEDA scaler counts it
# the status field -> the metric's name where they differ
RENAMED = {"in_flight": "requests_in_flight", "pages_per_min": "pages_per_minute"}


class CrawlCollector(Collector):
    """Reads the crawl's state from Redis at each scrape."""

    def __init__(self, client: redis.Redis, keys: CrawlKeys) -> None:
        self.client = client
        self.keys = keys
        self.checks = CheckSettings.from_project()

    def collect(self) -> Iterator[Any]:
        up = GaugeMetricFamily("crawl_redis_up", "1 when the crawl's Redis answered this scrape.")
        try:
            status = inspection.gather_status(self.client, self.keys)
            stats = self.client.hgetall(self.keys.stats)
            checks = gather_checks(self.client, self.keys, self.checks)
        except redis.RedisError:
            up.add_metric([], 0.0)
            yield up
            return
        up.add_metric([], 1.0)
        yield up
        for field, text in GAUGES:
            name = "crawl_" + RENAMED.get(field, field)
            yield GaugeMetricFamily(name, text, value=float(status[field]))
        yield GaugeMetricFamily(
            "crawl_paused", "1 while the crawl is paused.", value=float(bool(status["paused"]))
        )
        state = GaugeMetricFamily(
            "crawl_state", "The crawl's state (1 for the current one).", labels=["state"]
        )
        for name in STATES:
            state.add_metric([name], float(status["state"] == name))
        yield state
        yield CounterMetricFamily(
            "crawl_items_stored", "Items stored by all workers.", value=status["items_stored"]
        )
        yield CounterMetricFamily(
            "crawl_items_invalid",
            "Items rejected (schema or store) by all workers.",
            value=status["items_invalid"],
        )
        pages = GaugeMetricFamily(
            "crawl_worker_pages", "Pages parsed by each live worker.", labels=["worker"]
        )
        items = GaugeMetricFamily(
            "crawl_worker_items", "Items scraped by each live worker.", labels=["worker"]
        )
        for worker in status["workers"]:
            pages.add_metric([worker["worker"]], float(worker["pages"]))
            items.add_metric([worker["worker"]], float(worker["items"]))
        yield pages
        yield items
        numbers = {
            as_text(field): value
            for field, raw in stats.items()
            if (value := as_float(raw)) is not None
        }
        yield from backoff_metrics(status["backoff"])
        yield from data_check_metrics(checks)
        if StatsFields.POLITENESS_WAITS in numbers:
            yield CounterMetricFamily(
                "crawl_politeness_waits",
                "Times a worker waited for a site's shared request budget.",
                value=numbers[StatsFields.POLITENESS_WAITS],
            )
        every = GaugeMetricFamily(
            "crawl_stats", "Every numeric counter of <spider>:stats.", labels=["field"]
        )
        for field in sorted(numbers):
            every.add_metric([field], numbers[field])
        yield every


def backoff_metrics(backoff: dict[str, Any]) -> Iterator[Any]:
    """Retries waiting and the sites whose shared rate is cut."""
    yield GaugeMetricFamily(
        RETRIES_WAITING,
        "Retries waiting in Redis for their time (backoff, Retry-After).",
        value=float(backoff["retries_waiting"]),
    )
    yield GaugeMetricFamily(
        "crawl_sites_in_backoff",
        "Sites whose shared rate is cut below their budget.",
        value=float(len(backoff["sites"])),
    )
    rate = GaugeMetricFamily(
        "crawl_site_rate", "Current shared rate of a site in backoff, req/s.", labels=["site"]
    )
    budget = GaugeMetricFamily(
        "crawl_site_budget", "Budget of a site in backoff, req/s (0: none).", labels=["site"]
    )
    paused = GaugeMetricFamily(
        "crawl_site_paused_seconds", "Seconds a site stays paused (Retry-After).", labels=["site"]
    )
    for site in backoff["sites"]:
        rate.add_metric([site["site"]], float(site["rate"]))
        budget.add_metric([site["site"]], float(site["budget"]))
        paused.add_metric([site["site"]], float(site["paused_for"]))
    yield rate
    yield budget
    yield paused
    yield CounterMetricFamily(
        "crawl_site_rate_cuts",
        "Times a site's shared rate was cut.",
        value=backoff["site_rate_cuts"],
    )
    yield CounterMetricFamily(
        "crawl_site_rate_restores",
        "Times a site's shared rate climbed back to its budget.",
        value=backoff["site_rate_restores"],
    )


def data_check_metrics(report: dict[str, Any]) -> Iterator[Any]:
    """One series per site and check: 1 while the check fails there, else 0 (it passes,
    has too few rows yet, or is silenced for the site)."""
    failing = GaugeMetricFamily(
        "crawl_data_check_failing",
        "1 while a data check fails on a site (docs/data-checks.md), else 0.",
        labels=["site", "check"],
    )
    for site in report["sites"]:
        for result in site["checks"]:
            failing.add_metric([site["site"], result["check"]], float(result["status"] == FAIL))
    yield failing


def build_registry(client: redis.Redis, keys: CrawlKeys) -> CollectorRegistry:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(CrawlCollector(client, keys))
    return registry


def cmd_metrics(ctx: Context, args: argparse.Namespace) -> int:
    client = ctx.client  # connects (and pings) now: a wrong URL fails at once, exit 2
    registry = build_registry(client, ctx.keys)
    if args.once:
        sys.stdout.write(generate_latest(registry).decode())
        return 0
    server, thread = start_http_server(args.port, addr=args.address, registry=registry)
    # a scrape still running at Ctrl-C is answered before the Redis client closes:
    # server_close() joins the scrapes' threads when they are not daemons
    if isinstance(server, socketserver.ThreadingMixIn):
        server.daemon_threads = False
    stop = threading.Event()
    previous = signal.signal(signal.SIGTERM, lambda *_: stop.set())
    print(
        f"serving crawl metrics of {ctx.keys.spider} ({ctx.shown_url}) on "
        f"http://{args.address}:{server.server_port}/metrics (Ctrl-C to stop)",
        flush=True,
    )
    try:
        while not stop.wait(1.0):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
    print("stopped", flush=True)
    return 0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--port",
        type=int,
        default=DEFAULT_PORT,
        metavar="P",
        help=f"port to serve /metrics on (default {DEFAULT_PORT}; 0 picks a free one)",
    )
    parser.add_argument(
        "--address",
        default="0.0.0.0",
        metavar="ADDR",
        help="address to listen on (default 0.0.0.0: every interface)",
    )
    parser.add_argument(
        "--once",
        action="store_true",
        help="print the metrics once on standard output and exit (no server)",
    )


def register(commands: Subcommands) -> None:
    parser = commands.add(
        "metrics",
        help="serve crawl-wide Prometheus metrics read from Redis at each scrape",
        description=(
            "Serve /metrics for Prometheus: queue depth, pending seeds, seen fingerprints, "
            "requests in flight, live workers, dead letters, invalid items, paused, items "
            "stored, politeness waits and every counter of <spider>:stats, read from Redis "
            "at each scrape. Runs until Ctrl-C or SIGTERM (exit 0)."
        ),
        examples=["metrics --port 9400", "metrics --once"],
    )
    add_arguments(parser)
    parser.set_defaults(handler=cmd_metrics)
