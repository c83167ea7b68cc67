"""``PrometheusMetrics``: each worker serves its figures to Prometheus.

Enabled by ``METRICS_PORT`` (unset or ``0``: off, the extension steps aside
with ``NotConfigured``). When the spider opens, prometheus_client's own HTTP
server starts in a thread on ``METRICS_ADDRESS:METRICS_PORT`` and serves
``/metrics`` from a private ``CollectorRegistry``; it is shut down when the
spider closes. A port already taken is logged at ERROR and the worker crawls
on without metrics (the ``CrawlerWorkerDown`` alert sees it).

Most figures are the crawl stats the project keeps anyway, read at each scrape
(nothing is counted twice)::

    crawler_pages_total{status}            downloader/response_status_count/<status>
    crawler_pages_parsed_total             pages/parsed
    crawler_download_errors_total          downloader/exception_count
    crawler_items_scraped_total            item_scraped_count
    crawler_items_stored_total             store/items_stored
    crawler_items_invalid_total{stage}     validation/items_invalid, store/items_rejected
    crawler_dead_letters_total             dead_letters
    crawler_store_retries_total            store/retries
    crawler_store_outages_total            store/outages
    crawler_leases_finished_total          leases/finished
    crawler_leases_recovered_total         leases/recovered
    crawler_retries_total                  retry/count
    crawler_retries_delayed_total          retry/delayed
    crawler_throttled_total                retry/throttled
    crawler_site_rate_cuts_total           politeness/site_cuts
    crawler_site_rate_restores_total       politeness/site_restored
    crawler_redis_round_trips_total        crawler.net.redis_client.ROUND_TRIPS
    crawler_requests_in_flight             requests being downloaded now
    crawler_leases_held                    HLEN <spider>:inflight:<worker>
    crawler_worker_paused                  1 while the crawl is paused
    crawler_last_activity_timestamp_seconds   when a page was last parsed
    crawler_worker_info{worker,spider}     1

Two histograms are observed as things happen: ``crawler_download_latency_seconds``
(signal ``response_received``, Scrapy's ``download_latency``) and
``crawler_store_write_seconds{backend}`` (signal
:data:`crawler.core.signals.items_stored`, one observation per batch written).

Settings: ``METRICS_PORT``, ``METRICS_ADDRESS``, ``METRICS_LATENCY_BUCKETS``,
``METRICS_STORE_WRITE_BUCKETS``, ``WORKER_ID``, ``REDIS_URL``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from typing import Any

import redis
from prometheus_client import CollectorRegistry, Histogram, start_http_server
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector
from scrapy import signals
from scrapy.exceptions import NotConfigured

from crawler.core import defaults
from crawler.core import signals as crawler_signals
from crawler.core.config import worker_id
from crawler.core.keys import SPIDER_NAME, CrawlKeys
from crawler.net.redis_client import ROUND_TRIPS, cluster_client

logger = logging.getLogger(__name__)

STATUS_PREFIX = "downloader/response_status_count/"

# (metric name without _total, stat keys summed, help)
STAT_COUNTERS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("crawler_pages_parsed", ("pages/parsed",), "Responses parsed by the spider."),
    ("crawler_download_errors", ("downloader/exception_count",), "Downloads that failed."),
    ("crawler_items_scraped", ("item_scraped_count",), "Items that left the pipelines."),
    ("crawler_items_stored", ("store/items_stored",), "Items durably written to the store."),
    ("crawler_dead_letters", ("dead_letters",), "Requests that failed for good (dead letters)."),
    ("crawler_store_retries", ("store/retries",), "Store writes retried (store away)."),
    ("crawler_store_outages", ("store/outages",), "Store outages (unreachable, then back)."),
    ("crawler_leases_finished", ("leases/finished",), "Leases finished (work done)."),
    ("crawler_leases_recovered", ("leases/recovered",), "Leases of dead workers requeued."),
    ("crawler_retries", ("retry/count",), "Requests retried (every kind of failure)."),
    ("crawler_retries_delayed", ("retry/delayed",), "Retries sent to wait in Redis (backoff)."),
    ("crawler_throttled", ("retry/throttled",), "429/503 answers and timeouts (site throttling)."),
    ("crawler_site_rate_cuts", ("politeness/site_cuts",), "Site rates this worker cut."),
    ("crawler_site_rate_restores", ("politeness/site_restored",), "Site rates back at budget."),
)


def buckets(settings: Any, name: str, default: list[float]) -> list[float]:
    """A histogram's bucket bounds from a list setting (``-s NAME=0.1,1,10`` too)."""
    return sorted(float(bound) for bound in settings.getlist(name, default))


class WorkerCollector(Collector):
    """Reads the worker's stats (and a few live figures) at each scrape."""

    def __init__(self, extension: PrometheusMetrics) -> None:
        self.extension = extension

    def collect(self) -> Iterator[Any]:
        ext = self.extension
        stats = dict(ext.crawler.stats.get_stats())  # one copy: the reactor keeps writing

        def stat(*names: str) -> float:
            return float(sum(stats.get(name) or 0 for name in names))

        pages = CounterMetricFamily(
            "crawler_pages", "Responses received, by HTTP status.", labels=["status"]
        )
        for key, value in sorted(stats.items()):
            if key.startswith(STATUS_PREFIX):
                pages.add_metric([key[len(STATUS_PREFIX) :]], float(value))
        yield pages
        for name, keys, text in STAT_COUNTERS:
            yield CounterMetricFamily(name, text, value=stat(*keys))
        invalid = CounterMetricFamily(
            "crawler_items_invalid",
            "Items rejected: by the schema (validation) or by the store.",
            labels=["stage"],
        )
        invalid.add_metric(["validation"], stat("validation/items_invalid"))
        invalid.add_metric(["store"], stat("store/items_rejected"))
        yield invalid
        yield CounterMetricFamily(
            "crawler_redis_round_trips",
            "Round trips of this worker to Redis (a pipeline or a script is one).",
            value=float(ROUND_TRIPS.value),
        )
        yield GaugeMetricFamily(
            "crawler_requests_in_flight",
            "Requests being downloaded by this worker now.",
            value=float(ext.requests_in_flight()),
        )
        held = ext.leases_held()
        if held is not None:
            yield GaugeMetricFamily(
                "crawler_leases_held",
                "Requests leased by this worker and not finished (in Redis).",
                value=float(held),
            )
        yield GaugeMetricFamily(
            "crawler_worker_paused",
            "1 while the crawl is paused (master pause).",
            value=1.0 if stats.get("worker/paused") else 0.0,
        )
        yield GaugeMetricFamily(
            "crawler_last_activity_timestamp_seconds",
            "When this worker last parsed a page (Unix time; its start before the first).",
            value=float(stats.get("worker/last_activity") or ext.started_at),
        )
        info = GaugeMetricFamily(
            "crawler_worker_info", "The worker's id and spider.", labels=["worker", "spider"]
        )
        info.add_metric([ext.worker, ext.keys.spider], 1.0)
        yield info


class PrometheusMetrics:
    def __init__(self, crawler: Any, port: int, address: str) -> None:
        self.crawler = crawler
        self.port = port
        self.address = address
        self.worker = worker_id(crawler.settings)
        self.keys = CrawlKeys.from_settings(
            crawler.settings, getattr(crawler.spidercls, "name", None) or SPIDER_NAME
        )
        self.redis_url = crawler.settings.get("REDIS_URL", defaults.REDIS_URL)
        self.started_at = time.time()
        self.registry = CollectorRegistry(auto_describe=False)
        self.download_latency = Histogram(
            "crawler_download_latency_seconds",
            "Time from sending a request to receiving its response.",
            buckets=buckets(
                crawler.settings, "METRICS_LATENCY_BUCKETS", defaults.METRICS_LATENCY_BUCKETS
            ),
            registry=self.registry,
        )
        self.store_write = Histogram(
            "crawler_store_write_seconds",
            "Time to write one batch of items to the store.",
            ["backend"],
            buckets=buckets(
                crawler.settings,
                "METRICS_STORE_WRITE_BUCKETS",
                defaults.METRICS_STORE_WRITE_BUCKETS,
            ),
            registry=self.registry,
        )
        self.registry.register(WorkerCollector(self))
        self._server: Any = None
        self._thread: Any = None
        self._redis: Any = None  # redis.Redis, or a RedisCluster
        #: held by a scrape while it uses :attr:`_redis`, and by the close that ends it:
        #: the client is never closed under a scrape (the server's threads run scrapes)
        self._redis_lock = threading.Lock()
        self._engine: Any = None  # the crawler's engine, once the spider is open

    @classmethod
    def from_crawler(cls, crawler: Any) -> PrometheusMetrics:
        port = crawler.settings.getint("METRICS_PORT", defaults.METRICS_PORT)
        if port <= 0:
            raise NotConfigured  # no message: Scrapy would log a WARNING for an unset port
        extension = cls(
            crawler, port, crawler.settings.get("METRICS_ADDRESS", defaults.METRICS_ADDRESS)
        )
        crawler.signals.connect(extension.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(extension.spider_closed, signal=signals.spider_closed)
        crawler.signals.connect(extension.response_received, signal=signals.response_received)
        crawler.signals.connect(extension.items_stored, signal=crawler_signals.items_stored)
        return extension

    # -- signals ------------------------------------------------------------------------
    def spider_opened(self, spider: Any) -> None:
        self.started_at = time.time()
        self._engine = self.crawler.engine
        # a plain client (not the counting one): scrapes are not the crawl's round trips
        try:
            if self.keys.cluster:
                self._redis = cluster_client(
                    self.redis_url, socket_connect_timeout=2, socket_timeout=2
                )
            else:
                self._redis = redis.Redis.from_url(
                    self.redis_url, socket_connect_timeout=2, socket_timeout=2
                )
        except redis.RedisError as exc:  # a cluster client reads the slots when built
            logger.warning("Metrics: no Redis client (%r); the leases gauge is missing", exc)
        try:
            self._server, self._thread = start_http_server(
                self.port, addr=self.address, registry=self.registry
            )
        except OSError as exc:
            logger.error(
                "Metrics: cannot serve on %s:%d (%s); this worker runs without metrics",
                self.address,
                self.port,
                exc,
            )
            return
        logger.info(
            "Metrics: serving Prometheus metrics on http://%s:%d/metrics", self.address, self.port
        )

    def spider_closed(self, spider: Any) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._thread.join(timeout=5)
            self._server = self._thread = None
        with self._redis_lock:  # a scrape still running ends first; later ones see None
            client, self._redis = self._redis, None
        if client is not None:
            client.close()

    def response_received(self, response: Any, request: Any, spider: Any) -> None:
        latency = request.meta.get("download_latency")
        if latency is not None:
            self.download_latency.observe(latency)

    def items_stored(self, items: list[Any], store: str = "store", seconds: float = 0.0) -> None:
        self.store_write.labels(store).observe(seconds)

    # -- live figures (called from the HTTP server's thread) ----------------------------
    def requests_in_flight(self) -> int:
        downloader = getattr(self._engine, "downloader", None)
        return len(getattr(downloader, "active", ()))

    def leases_held(self) -> int | None:
        with self._redis_lock:
            client = self._redis
            if client is None:
                return None
            try:
                if not self.keys.cluster:
                    return int(client.hlen(self.keys.inflight(self.worker)))
                # every shard's lease hash of this worker and its seeds' (one trip per node)
                with client.pipeline(transaction=False) as pipe:
                    for shard in self.keys.all_shards():
                        pipe.hlen(shard.inflight(self.worker))
                    pipe.hlen(self.keys.seed_inflight(self.worker))
                    return sum(int(count) for count in pipe.execute())
            except redis.RedisError:
                return None  # Redis away: the gauge is missing from this scrape
