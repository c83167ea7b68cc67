"""The machinery every spider of the crawl shares: :class:`DistributedSpider`.

A spider of this project is one identical worker of a distributed crawl. Start
any number with ``scrapy crawl <name>``; they share the Redis request queue and
fingerprint set of scrapy-redis under the spider's own key prefix (``<name>:``,
:mod:`crawler.core.keys`), so two spiders crawl at once on one Redis (or cluster)
without touching each other's keys. Seeds are read from ``<name>:start_urls``
(``python -m master seed --spider <name>``), validated with the master's own
rules, and crawled through the shared dupefilter like any other link, so a page
is never fetched twice.

What a subclass says (see :mod:`crawler.spiders.ecommerce`,
:mod:`crawler.spiders.finance` and ``docs/spiders.md``):

* ``name`` and ``item_kind`` (:mod:`crawler.core.itemkinds`: the schema its items
  are validated against and the stores that keep them);
* :meth:`DistributedSpider.extract_items`: the items of one page, the one
  per-page extraction step (rendering or evidence across pages plug in there);
* :meth:`DistributedSpider.is_item_link`: which links to queue first;
* :meth:`DistributedSpider.follows_links_of`: whether a response has links to
  follow at all.

Everything else is here and the same for every spider: leases, politeness,
back-off, sitemaps, a seed's strategy and scope (:mod:`crawler.policy.scope`),
pause/resume, idleness, dead letters, metrics, and the Redis Cluster layout.

A seed that fails validation (a ``meta`` key outside the allow-list, see
:mod:`crawler.policy.seeds`) and a request the network rule refuses
(:mod:`crawler.middlewares.network`) become dead letters marked ``refused``,
with their reason and a WARNING; nothing refused is dropped silently.

A worker closes after ``MAX_IDLE_TIME_BEFORE_CLOSE`` seconds during which the
whole crawl had nothing to do (no queued request, no seed, no request held by
any worker); it never closes while paused. 0 means never. The idle clock starts
when the spider is open and has read the crawl's state in Redis for the first
time, not when the process starts: a worker started before the crawl is seeded
waits the full time, however long its start-up took.

On a Redis Cluster (``REDIS_CLUSTER=true``, ``REDIS_URL`` = a node or a
comma-separated list of nodes), :meth:`DistributedSpider.update_settings` gives
every component a :class:`crawler.net.redis_client.CountingRedisCluster`
(:func:`crawler.net.redis_client.set_worker_redis_params`), and the start-up check
records the crawl's shard count or refuses to run with another
(:mod:`crawler.core.layout`).
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Iterable, Iterator
from datetime import UTC, datetime
from typing import Any, ClassVar
from urllib.parse import urlsplit

from scrapy import Request, signals
from scrapy.exceptions import DontCloseSpider, IgnoreRequest
from scrapy.http import TextResponse
from scrapy.spidermiddlewares.httperror import HttpError
from scrapy_redis.spiders import RedisSpider
from scrapy_redis.utils import bytes_to_str

from crawler.core import defaults
from crawler.core.config import worker_id
from crawler.core.flow import FlowControl
from crawler.core.keys import CrawlKeys
from crawler.core.listings import page_failed, sitemapped_read
from crawler.core.sites import site_key
from crawler.extensions.datachecks import DataChecks
from crawler.extraction import ProfileRegistry, discover_links
from crawler.extraction.links import looks_like_product
from crawler.leasing.meta import LEASE_META_KEY, lease_of
from crawler.leasing.tracker import LeaseTracker
from crawler.middlewares.network import RefusedRequest
from crawler.net.network import NetworkRule
from crawler.net.redis_client import set_worker_redis_params
from crawler.policy.firstpage import without_first_page
from crawler.policy.retrypolicy import HISTORY_META_KEY, describe_history
from crawler.policy.scope import Scope
from crawler.policy.seeds import SEED_LABEL_KEYS, InvalidSeed, parse_seed
from crawler.policy.sitemaps import SitemapReader, robots_sitemap_urls
from crawler.scheduling import serializer
from crawler.scheduling.scheduler import wake_engine
from crawler.spiders.redischeck import check_redis

BUSY_CHECK_INTERVAL = 1.0


class DistributedSpider(RedisSpider):
    """Base of the project's spiders: the shared machinery (see the module's doc).

    Subclasses set ``name`` and ``item_kind`` and implement :meth:`extract_items`.
    """

    name: str = ""
    #: the kind of the items this spider yields (crawler.core.itemkinds)
    item_kind: ClassVar[str] = ""
    # monotonic time of the last work seen in the crawl; None until Redis was read once
    idle_since: float | None = None
    _busy_checked: float = 0.0  # monotonic time of the last look at the whole crawl

    @classmethod
    def update_settings(cls, settings: Any) -> None:
        """Every Redis client of the worker waits ``REDIS_SOCKET_TIMEOUT`` s for an answer;
        on a Redis Cluster, every one is a cluster client."""
        super().update_settings(settings)
        cluster = settings.getbool("REDIS_CLUSTER", defaults.REDIS_CLUSTER)
        set_worker_redis_params(settings, cluster)
        if cluster:
            # scrapy-redis's own start_urls key (unused: seeds are popped under lease)
            start_urls = CrawlKeys.from_settings(settings, cls.name).start_urls
            settings.set("REDIS_START_URLS_KEY", start_urls, priority="spider")

    @classmethod
    def from_crawler(cls, crawler: Any, *args: Any, **kwargs: Any) -> DistributedSpider:
        check_redis(crawler.settings, cls.name)
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
                self._say_browser_work()
                return
            # look again when the limit may be reached (the engine's own beat is 5 s)
            wake_engine(self.crawler, min(BUSY_CHECK_INTERVAL, self.max_idle_time - idle))
        raise DontCloseSpider

    def _say_browser_work(self) -> None:
        """A worker that renders nothing closes while pages may wait for a browser
        (its work is the plain queue only): it says how many, for whoever reads its log."""
        if self.leases.ledger.counts_browser:
            return
        try:
            waiting = self.leases.ledger.browser_queued()
        except Exception:  # noqa: BLE001 -- Redis away: nothing to say
            return
        if waiting:
            self.logger.info(
                "%d page(s) wait for a worker with a browser (this one renders none)", waiting
            )

    # -- pages -------------------------------------------------------------------------
    def parse(self, response: Any, **kwargs: Any) -> Iterator[Any]:
        sitemapped_read(self.server, self.keys, response.meta)  # crawler.core.listings
        site = response.meta.get("site") or site_key(response.url)
        if site_key(response.url) != site:
            self.crawler.stats.inc_value("offsite/redirected")
            self.logger.debug("Not following %s: redirected off %s", response.url, site)
            return
        if not isinstance(response, TextResponse):
            self.crawler.stats.inc_value("pages/not_text")
            return
        profile = self.profiles.for_url(response.url)
        crawled_at = datetime.now(UTC).isoformat(timespec="seconds")
        for item in self._extract(response, profile):
            item["crawled_at"] = crawled_at
            item["worker"] = self.worker_id
            DataChecks.mark_item(self.crawler, item, site)  # its fields in doubt ("uncertain")
            yield item
        if not self.follows_links_of(response):
            return
        scope = Scope.of(response.meta)
        if not scope.follows_links:
            return
        if scope.max_depth and response.meta.get("depth", 0) >= scope.max_depth:
            self.crawler.stats.inc_value("scope/max_depth")
            return
        listing = scope.listing
        if listing and urlsplit(response.url).path != listing:
            return  # pagination: an item page of the listing; its links are not followed
        meta: dict[str, Any] = {"site": site, **scope.to_meta()}
        try:
            links = discover_links(response, profile)
        except Exception as exc:  # the items are out already; count and say it
            self.crawler.stats.inc_value("extraction/errors/links")
            self.logger.warning("Link discovery failed on %s (%r)", response.url, exc)
            links = []
        for url in links:
            is_item = self.is_item_link(url)
            if listing and not is_item and urlsplit(url).path != listing:
                continue
            if not scope.allows(url):
                self.crawler.stats.inc_value("scope/filtered")
                continue
            yield Request(
                url,
                callback=self.parse,
                errback=self.errback,
                meta=meta,
                priority=self.product_priority if is_item else 0,
            )

    # -- what a subclass says ------------------------------------------------------------
    def extract_items(self, response: TextResponse, profile: Any) -> Iterable[dict[str, Any]]:
        """The items of one page (``profile``: the site's, or None). A subclass reads them
        with its extractor and hands the result to :meth:`accepted`, which counts a page
        that gave none by its reason. An exception costs the page's items only: it
        becomes a replayable dead letter and the page's links are still followed."""
        raise NotImplementedError

    def is_item_link(self, url: str) -> bool:
        """Does the URL look like one of an item page? It only orders the queue (those
        first, ``PRIORITY_PRODUCT``): no URL is left out for its shape."""
        return looks_like_product(url)

    def follows_links_of(self, response: TextResponse) -> bool:
        """Whether the response may have links to follow (every text response here)."""
        return True

    def accepted(self, response: TextResponse, result: Any) -> bool:
        """Count an extractor's result (its ``errors`` and ``rejected`` reason): False
        when the page gave no item. A page that gives none is counted by its reason
        (``extraction/rejected/<reason>``, a DEBUG line); a source of the extractor that
        raised is counted (``extraction/errors/<source>``) and logged (WARNING) while the
        item comes from the other sources; ``rejected == "failed"`` (every source
        failed) becomes a replayable dead letter."""
        stats = self.crawler.stats
        for source, error in result.errors:
            stats.inc_value(f"extraction/errors/{source}")
            self.logger.warning("Extraction: %s failed on %s (%s)", source, response.url, error)
        if result.rejected == "failed":
            self._extraction_failed(response, result.errors[0][1] if result.errors else "")
            return False
        if result.rejected is not None:
            stats.inc_value(f"extraction/rejected/{result.rejected}")
            DataChecks.rejected(self.crawler, response, result.rejected)
            self.logger.debug("No %s on %s: %s", self.item_kind, response.url, result.rejected)
            return False
        return True

    def _extract(self, response: TextResponse, profile: Any) -> list[dict[str, Any]]:
        try:
            return list(self.extract_items(response, profile))
        except Exception as exc:
            self._extraction_failed(response, f"{type(exc).__name__}: {exc}", exc)
            return []

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
        page_failed(self.server, self.keys, request, failure)  # crawler.core.listings
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
