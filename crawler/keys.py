"""Every Redis key of a crawl, in one place.

The master and the workers both build their key names from :class:`CrawlKeys`,
so the layout below is the single reference (see also ``docs/architecture.md``).
All keys of the spider ``ecommerce`` start with ``ecommerce:``.

============================  ======  =====================================================
key                           type    content
============================  ======  =====================================================
``<s>:start_urls``            list    seeds as JSON ``{"url": ..., "meta": {...}}`` (scrapy-redis)
``<s>:seeded``                set     canonical URLs the master has accepted as seeds
``<s>:requests``              zset    the shared request queue (scrapy-redis priority queue)
``<s>:dupefilter``            set     request fingerprints (20-byte binary SHA1 digests)
``<s>:bloom``                 string  Bloom filter of fingerprints (option, instead of dupefilter)
``<s>:bloom:meta``            hash    its sizes (m, k, capacity, error_rate) and count
``<s>:inflight:<worker>``     hash    lease id -> serialized request, popped but not finished
``<s>:workers``               hash    worker id -> JSON record (state, pages, items, timings)
``<s>:alive:<worker>``        string  heartbeat; expires when the worker stops beating
``<s>:paused``                string  present while the crawl is paused (JSON: since, by)
``<s>:stats``                 hash    crawl-wide counters (items_stored, items_invalid, ...)
``<s>:dead``                  list    dead letters: JSON of requests that failed for good
``<s>:invalid``               list    JSON of items rejected by the schema, with errors
``<s>:polite:<site>``         string  next time (Redis clock, ms) a request to the site may start
``<s>:series``                hash    pages and items per minute, last ``SERIES_MINUTES`` minutes
``<s>:seedpages``             hash    seed id -> requests made for it (seeds with max_pages)
``<s>:sites``                 hash    "<counter> <site>" -> count (pages, products, sitemaps)
============================  ======  =====================================================
"""

from __future__ import annotations

from dataclasses import dataclass

SPIDER_NAME = "ecommerce"

# scrapy-redis templates (settings SCHEDULER_QUEUE_KEY, SCHEDULER_DUPEFILTER_KEY,
# REDIS_START_URLS_KEY): scrapy-redis formats them itself.
QUEUE_KEY_TEMPLATE = "%(spider)s:requests"
DUPEFILTER_KEY_TEMPLATE = "%(spider)s:dupefilter"
START_URLS_KEY_TEMPLATE = "%(name)s:start_urls"


@dataclass(frozen=True)
class CrawlKeys:
    """The Redis key names of one spider's crawl."""

    spider: str = SPIDER_NAME

    @property
    def prefix(self) -> str:
        return f"{self.spider}:"

    @property
    def start_urls(self) -> str:
        return START_URLS_KEY_TEMPLATE % {"name": self.spider}

    @property
    def seeded(self) -> str:
        return f"{self.spider}:seeded"

    @property
    def requests(self) -> str:
        return QUEUE_KEY_TEMPLATE % {"spider": self.spider}

    @property
    def dupefilter(self) -> str:
        return DUPEFILTER_KEY_TEMPLATE % {"spider": self.spider}

    @property
    def bloom(self) -> str:
        return f"{self.spider}:bloom"

    @property
    def bloom_meta(self) -> str:
        return f"{self.spider}:bloom:meta"

    def inflight(self, worker: str) -> str:
        return f"{self.spider}:inflight:{worker}"

    @property
    def inflight_pattern(self) -> str:
        return f"{self.spider}:inflight:*"

    @property
    def workers(self) -> str:
        return f"{self.spider}:workers"

    def alive(self, worker: str) -> str:
        return f"{self.spider}:alive:{worker}"

    @property
    def paused(self) -> str:
        return f"{self.spider}:paused"

    @property
    def stats(self) -> str:
        return f"{self.spider}:stats"

    @property
    def dead(self) -> str:
        return f"{self.spider}:dead"

    @property
    def invalid(self) -> str:
        return f"{self.spider}:invalid"

    @property
    def series(self) -> str:
        return f"{self.spider}:series"

    def polite(self, site: str) -> str:
        return f"{self.spider}:polite:{site}"

    @property
    def seed_pages(self) -> str:
        return f"{self.spider}:seedpages"

    @property
    def sites(self) -> str:
        return f"{self.spider}:sites"

    @property
    def polite_pattern(self) -> str:
        return f"{self.spider}:polite:*"

    @property
    def all_pattern(self) -> str:
        return f"{self.spider}:*"
