"""The ``ecommerce`` spider: one identical worker of a distributed crawl.

Start any number with ``scrapy crawl ecommerce``; they share the Redis request
queue and fingerprint set of scrapy-redis (keys in :mod:`crawler.keys`). Seeds
are read from ``ecommerce:start_urls`` (``python -m master seed``), validated
with the master's own rules, and crawled through the shared dupefilter like any
other link, so a page is never fetched twice.

A seed that fails validation (a ``meta`` key outside the allow-list, see
:mod:`crawler.seeds`) and a request the network rule refuses
(:mod:`crawler.middlewares.network`) become dead letters marked ``refused``,
with their reason and a WARNING; nothing refused is dropped silently.

From each page the spider yields at most one product (product detail pages
only; see :mod:`crawler.extraction`) and the links that lead to more products on
the seed's own site, product links first (``PRIORITY_PRODUCT``). Everything
about parsing lives in :mod:`crawler.extraction`. A seed's ``strategy`` and
scope (:mod:`crawler.scope`) travel with every request made for it; sitemaps
are read by :class:`crawler.sitemaps.SitemapReader`, from the robots.txt each
worker fetches (signal ``robots_parsed``).

A worker closes after ``MAX_IDLE_TIME_BEFORE_CLOSE`` seconds during which the
whole crawl had nothing to do (no queued request, no seed, no request held by
any worker); it never closes while paused. 0 means never. The idle clock starts
when the spider is open and has read the crawl's state in Redis for the first
time, not when the process starts: a worker started before the crawl is seeded
waits the full time, however long its start-up took.

On a Redis Cluster (``REDIS_CLUSTER=true``, ``REDIS_URL`` = a node or a
comma-separated list of nodes), :meth:`EcommerceSpider.update_settings` gives
every component a :class:`crawler.redis_client.CountingRedisCluster`
(:func:`crawler.redis_client.worker_redis_params`), and the start-up check
records the crawl's shard count or refuses to run with another
(:mod:`crawler.layout`).
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

import redis
from scrapy import Request, signals
from scrapy.exceptions import DontCloseSpider, IgnoreRequest
from scrapy.http import TextResponse
from scrapy.settings import SETTINGS_PRIORITIES
from scrapy.spidermiddlewares.httperror import HttpError
from scrapy_redis.spiders import RedisSpider
from scrapy_redis.utils import bytes_to_str

from crawler import defaults
from crawler.config import redact_dsn, worker_id
from crawler.extensions.siteevidence import SiteEvidenceStore
from crawler.extraction import ProfileRegistry, discover_links, extract
from crawler.extraction.links import looks_like_product
from crawler.firstpage import without_first_page
from crawler.flow import FlowControl
from crawler.keys import SPIDER_NAME, CrawlKeys
from crawler.layout import LayoutMismatch, ensure_layout
from crawler.leasing.meta import LEASE_META_KEY, lease_of
from crawler.leasing.tracker import LeaseTracker
from crawler.middlewares.network import RefusedRequest
from crawler.network import NetworkRule
from crawler.redis_client import cluster_client, worker_redis_params
from crawler.retrypolicy import HISTORY_META_KEY, describe_history
from crawler.scheduling import restarts, serializer
from crawler.scheduling.scheduler import wake_engine
from crawler.scope import Scope
from crawler.seeds import SEED_LABEL_KEYS, InvalidSeed, parse_seed
from crawler.sitemaps import SitemapReader, robots_sitemap_urls
from crawler.sites import site_key
from crawler.startup import StartupError

BUSY_CHECK_INTERVAL = 1.0


class RedisUnavailable(StartupError):
    """The shared Redis cannot be reached when a worker starts."""


class ClusterLayoutMismatch(StartupError):
    """The crawl on the cluster was started with another ``REDIS_CLUSTER_SHARDS``."""


def check_redis(settings: Any) -> None:
    """Fail at once, saying what to do, when the shared Redis does not answer (on a
    cluster: or when the crawl's keys were laid out in another number of shards)."""
    url = settings.get("REDIS_URL", defaults.REDIS_URL)
    keys = CrawlKeys.from_settings(settings)
    client: Any = None
    try:
        if keys.cluster:
            client = cluster_client(url, socket_connect_timeout=5, socket_timeout=5)
        else:
            client = redis.Redis.from_url(url, socket_connect_timeout=5, socket_timeout=5)
        client.ping()
        ensure_layout(client, keys)
        if keys.cluster:
            restarts.note_cluster_primaries(client)
    except (redis.RedisError, ValueError) as exc:
        what, hint = "Redis", "."
        if keys.cluster:
            what, hint = "Redis Cluster", " (REDIS_CLUSTER=true: any node, or a list of nodes)."
        raise RedisUnavailable(
            f"Cannot reach the shared {what} at {redact_dsn(url)} ({exc}). Start Redis, or point "
            "REDIS_URL (environment or -s REDIS_URL=...) at the crawl's Redis" + hint
        ) from None
    except LayoutMismatch as exc:
        raise ClusterLayoutMismatch(str(exc)) from None
    finally:
        if client is not None:
            client.close()


class EcommerceSpider(RedisSpider):
    name = SPIDER_NAME
    # monotonic time of the last work seen in the crawl; None until Redis was read once
    idle_since: float | None = None
    _busy_checked: float = 0.0  # monotonic time of the last look at the whole crawl

    @classmethod
    def update_settings(cls, settings: Any) -> None:
        """On a Redis Cluster, every Redis client of the worker is a cluster client."""
        super().update_settings(settings)
        cluster = settings.getbool("REDIS_CLUSTER", defaults.REDIS_CLUSTER)
        if cluster:
            # at the spider's priority at least: the crawler process merges its own
            # (project) settings into the crawler's again, and would undo it
            priority = max(SETTINGS_PRIORITIES["spider"], settings.getpriority("REDIS_PARAMS") or 0)
            params = worker_redis_params(settings.getdict("REDIS_PARAMS"), cluster)
            settings.set("REDIS_PARAMS", params, priority=priority)
            # scrapy-redis's own start_urls key (unused: seeds are popped under lease)
            start_urls = CrawlKeys.from_settings(settings).start_urls
            settings.set("REDIS_START_URLS_KEY", start_urls, priority="spider")

    @classmethod
    def from_crawler(cls, crawler: Any, *args: Any, **kwargs: Any) -> EcommerceSpider:
        check_redis(crawler.settings)
        spider = super().from_crawler(crawler, *args, **kwargs)
        settings = crawler.settings
        spider.keys = CrawlKeys.from_settings(settings, spider.name)
        spider.worker_id = worker_id(settings)
        profiles_dir = settings.get("SITE_PROFILES_DIR", defaults.SITE_PROFILES_DIR)
        spider.profiles = (
            ProfileRegistry.from_dir(profiles_dir) if profiles_dir else ProfileRegistry.from_dir()
        )
        crawler.signals.connect(spider._note_activity, signal=signals.response_received)
        crawler.signals.connect(spider.robots_parsed, signal=signals.robots_parsed)
        spider.sitemaps = SitemapReader(spider, settings, NetworkRule.from_settings(settings))
        spider.product_priority = settings.getint("PRIORITY_PRODUCT", defaults.PRIORITY_PRODUCT)
        return spider

    # Extensions are built after the spider: look them up when needed.
    @property
    def leases(self) -> LeaseTracker:
        return LeaseTracker.of(self.crawler)

    @property
    def flow(self) -> FlowControl:
        return FlowControl.of(self.crawler)

    # -- seeds -------------------------------------------------------------------------
    async def start(self) -> AsyncIterator[Any]:
        for request in self.next_requests():
            yield request

    def next_requests(self) -> Iterator[Request]:
        """Take a batch of seeds under lease (none while paused)."""
        if self.flow.held:
            return
        for lease, payload in self.leases.take_seeds(self.redis_batch_size):
            request = self.make_request_from_data(payload, lease)
            if request is not None:
                yield request

    def make_request_from_data(self, data: bytes, lease: str = "") -> Request | None:  # type: ignore[override]
        text = bytes_to_str(data, self.redis_encoding)
        try:
            seed = parse_seed(text)
        except InvalidSeed as exc:
            # not a request: kept in the reason, never requeued as one
            reason = f"invalid seed {text[:200]!r}: {exc}"
            self.leases.dead_letter(url=None, reason=reason, lease=lease, refused=True)
            return None
        scope = Scope.from_seed_meta(seed.url, seed.meta)
        labels = {key: value for key, value in seed.meta.items() if key in SEED_LABEL_KEYS}
        meta = {**labels, "site": site_key(seed.url), LEASE_META_KEY: lease, **scope.to_meta()}
        if scope.max_pages:  # for master status --sites: whose budget this is
            info = {"url": seed.url, "strategy": scope.strategy, "max_pages": scope.max_pages}
            self.server.hset(self.keys.seed_pages, f"{scope.seed_id} seed", json.dumps(info))
        if scope.strategy == "sitemap":
            return self._sitemap_seed(seed.url, scope, meta)
        priority = self.product_priority if scope.strategy == "direct" else 0
        # one first page of a listing: a seed's ?page=1 is its bare URL, as in links
        url = without_first_page(seed.url)
        return Request(url, callback=self.parse, errback=self.errback, meta=meta, priority=priority)

    def _sitemap_seed(self, url: str, scope: Scope, meta: dict[str, Any]) -> Request:
        """A ``sitemap`` seed fetches the site's robots.txt (or the sitemap it names)."""
        path = urlsplit(url).path.lower()
        if path.endswith((".xml", ".xml.gz")) or "sitemap" in path:
            request = self.sitemaps.sitemap_request(url, scope)
            request.meta.update(meta)
            return request
        parts = urlsplit(url)
        robots = f"{parts.scheme}://{parts.netloc}/robots.txt"
        meta.update({"dont_obey_robotstxt": True, "handle_httpstatus_list": [403, 404, 410]})
        return Request(robots, callback=self.parse_robots, errback=self.errback, meta=meta)

    # -- sitemaps ------------------------------------------------------------------------
    def robots_parsed(self, robotparser: Any, request: Request) -> None:
        """A worker read a site's robots.txt: queue its sitemaps (the shared dupefilter
        lets one worker of the crawl read each)."""
        if not self.sitemaps.enabled:
            return
        parts = urlsplit(request.url)
        robots = f"{parts.scheme}://{parts.netloc}/robots.txt"
        scope = Scope.of(request.meta)
        urls = robots_sitemap_urls(robotparser, robots)
        for sitemap in self.sitemaps.from_robots(urls, request.url, scope):
            self.crawler.engine.crawl(sitemap)

    def parse_robots(self, response: Any) -> Iterator[Request]:
        yield from self.sitemaps.from_robots_response(response, Scope.of(response.meta))

    def parse_sitemap(self, response: Any) -> Iterator[Request]:
        yield from self.sitemaps.parse(response)

    # -- idleness ------------------------------------------------------------------------
    def _note_activity(self, response: Any = None, request: Any = None, spider: Any = None) -> None:
        self.idle_since = time.monotonic()

    def spider_idle(self) -> None:
        self.schedule_next_requests()
        now = time.monotonic()
        if self.flow.held:
            self.idle_since = now
        elif now - self._busy_checked >= BUSY_CHECK_INTERVAL:
            self._busy_checked = now
            try:
                self.leases.reclaim_orphans()
                if self.leases.crawl_busy() or self.idle_since is None:
                    # busy, or the first look at the crawl: the idle clock starts now
                    self.idle_since = now
            except Exception as exc:  # Redis away: wait for it rather than close
                self.logger.warning("Redis unreachable (%r); waiting", exc)
                self.idle_since = now
        if self.max_idle_time:
            if self.idle_since is None:  # Redis not read yet: look again soon
                wake_engine(self.crawler, BUSY_CHECK_INTERVAL)
                raise DontCloseSpider
            idle = now - self.idle_since
            if idle >= self.max_idle_time:
                self.logger.info(
                    "No work in the crawl for %.1f s (MAX_IDLE_TIME_BEFORE_CLOSE=%s): closing",
                    idle,
                    self.max_idle_time,
                )
                return
            # look again when the limit may be reached (the engine's own beat is 5 s)
            wake_engine(self.crawler, min(BUSY_CHECK_INTERVAL, self.max_idle_time - idle))
        raise DontCloseSpider

    # -- pages -------------------------------------------------------------------------
    def parse(self, response: Any, **kwargs: Any) -> Iterator[Any]:
        site = response.meta.get("site") or site_key(response.url)
        if site_key(response.url) != site:
            self.crawler.stats.inc_value("offsite/redirected")
            self.logger.debug("Not following %s: redirected off %s", response.url, site)
            return
        if not isinstance(response, TextResponse):
            self.crawler.stats.inc_value("pages/not_text")
            return
        profile = self.profiles.for_url(response.url)
        product = self._extract(response, profile)
        if product is not None:
            product["crawled_at"] = datetime.now(UTC).isoformat(timespec="seconds")
            product["worker"] = self.worker_id
            yield product
        scope = Scope.of(response.meta)
        if not scope.follows_links:
            return
        if scope.max_depth and response.meta.get("depth", 0) >= scope.max_depth:
            self.crawler.stats.inc_value("scope/max_depth")
            return
        listing = scope.listing
        if listing and urlsplit(response.url).path != listing:
            return  # pagination: a product of the listing; its links are not followed
        meta: dict[str, Any] = {"site": site, **scope.to_meta()}
        try:
            links = discover_links(response, profile)
        except Exception as exc:  # the product is out already; count and say it
            self.crawler.stats.inc_value("extraction/errors/links")
            self.logger.warning("Link discovery failed on %s (%r)", response.url, exc)
            links = []
        for url in links:
            is_product = looks_like_product(url)
            if listing and not is_product and urlsplit(url).path != listing:
                continue
            if not scope.allows(url):
                self.crawler.stats.inc_value("scope/filtered")
                continue
            yield Request(
                url,
                callback=self.parse,
                errback=self.errback,
                meta=meta,
                priority=self.product_priority if is_product else 0,
            )

    def _extract(self, response: TextResponse, profile: Any) -> dict[str, Any] | None:
        """The page's product. A page that gives none is counted by its reason
        (``extraction/rejected/<reason>``, a DEBUG line); a source of the extractor that
        raised is counted (``extraction/errors/<source>``) and logged (WARNING) while
        the product comes from the other sources; an error that costs the whole
        extraction becomes a replayable dead letter (the page's links are still followed)."""
        stats = self.crawler.stats
        store = SiteEvidenceStore.of(self.crawler)  # the site's evidence (None: page alone)
        site = response.meta.get("site") or site_key(response.url)
        known = {"site": store.knowledge(site)} if store is not None else {}
        try:
            result = extract(response, profile, **known)
        except Exception as exc:
            self._extraction_failed(response, f"{type(exc).__name__}: {exc}", exc)
            return None
        for source, error in result.errors:
            stats.inc_value(f"extraction/errors/{source}")
            self.logger.warning("Extraction: %s failed on %s (%s)", source, response.url, error)
        if result.rejected == "failed":
            self._extraction_failed(response, result.errors[0][1] if result.errors else "")
            return None
        if store is not None and store.observe(response, site, result):
            return None  # read again once the site is known (EvidenceRetryMiddleware)
        if result.rejected is not None:
            stats.inc_value(f"extraction/rejected/{result.rejected}")
            self.logger.debug("No product on %s: %s", response.url, result.rejected)
        return result.product

    def _extraction_failed(
        self, response: TextResponse, reason: str, exc: Exception | None = None
    ) -> None:
        self.crawler.stats.inc_value("extraction/errors")
        self.logger.warning(
            "Extraction failed on %s: %s", response.url, reason, exc_info=exc is not None
        )
        request = response.request or Request(response.url, callback=self.parse)
        self.leases.dead_letter(
            url=response.url,
            reason=f"extraction failed: {reason}",
            payload=serializer.encode_request(serializer.requeueable(request), self),
        )  # no lease: the page's own lease ends with its output, as usual

    def errback(self, failure: Any) -> None:
        request = failure.request
        lease = lease_of(request)
        if failure.check(RefusedRequest):
            # the network rule: a dead letter with the reason (requeue it once allowed)
            self.leases.dead_letter(
                url=request.url,
                reason=f"refused: {failure.value.reason}",
                payload=serializer.encode_request(serializer.requeueable(request), self),
                lease=lease,
                refused=True,
            )
            return
        history = request.meta.get(HISTORY_META_KEY) or None
        if failure.check(HttpError):
            reason = f"HTTP {failure.value.response.status}"
        elif failure.check(IgnoreRequest):
            # robots.txt, offsite: a decision, not a failure
            self.crawler.stats.inc_value("requests/ignored")
            self.leases.finish(lease)
            return
        else:
            reason = f"{type(failure.value).__name__}: {failure.value}"
        if history and len(history) > 1:
            reason += f" after {len(history)} attempts ({describe_history(history)})"
        self.leases.dead_letter(
            url=request.url,
            reason=reason,
            payload=serializer.encode_request(serializer.requeueable(request), self),
            lease=lease,
            history=history,
        )
