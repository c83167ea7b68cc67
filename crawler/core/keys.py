"""Every Redis key of a crawl, in one place.

The master and the workers both build their key names from :class:`CrawlKeys`,
so the layout below is the single reference (see also ``docs/architecture.md``).
Every spider has its own prefix, its name: all keys of the spider ``ecommerce``
start with ``ecommerce:``, all of ``finance`` with ``finance:``, so two spiders
crawl at once on one Redis (or cluster) without sharing a key. ``<s>`` below is
the spider's name; :data:`SPIDER_NAME` is only the default one (the master's
``--spider``, a component built without a spider).

============================  ======  =====================================================
key                           type    content
============================  ======  =====================================================
``<s>:start_urls``            list    seeds as JSON ``{"url": ..., "meta": {...}}`` (scrapy-redis)
``<s>:seeded``                set     canonical URLs the master has accepted as seeds
``<s>:requests:<score>``      list    the shared request queue's lanes: one list per score
                                      (-priority), FIFO (:mod:`crawler.scheduling.lanes`)
``<s>:requests:lanes``        zset    the index of the non-empty lanes (member: the score)
``<s>:requests``              zset    the rest of the queue: retries waiting for their time
                                      (below), the master's once-only pushes (recrawl,
                                      dead letters requeued), an earlier version's queue
``<s>:browser_requests``      zset    the queue of requests that need a headless browser,
                                      laid out as ``<s>:requests`` (``:<score>`` lanes,
                                      ``:lanes`` index): only workers that render pop it
                                      (:mod:`crawler.browser.routing`)
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
``<s>:polite:<site>``         string  next time (Redis clock, ms) a request to the site may start;
                                      while the site is backed off, a JSON object with it,
                                      the site's current rate and the last cut
``<s>:series``                hash    pages and items per minute, last ``SERIES_MINUTES`` minutes
``<s>:seedpages``             hash    seed id -> requests made for it (seeds with max_pages)
``<s>:sites``                 hash    "<counter> <site>" -> count (pages, products, sitemaps)
``<s>:evidence:<site>``       hash    the site's evidence counters (crawler/extraction/evidence.py)
``<s>:listings:pages``        hash    listing page URL -> JSON {cards, seen_at}: the listing pages
                                      the crawl read (:mod:`crawler.core.listings`)
``<s>:listings:items``        hash    item URL -> JSON {listing, shown, seen_at}: what a listing's
                                      card showed of it, last (:mod:`crawler.core.listings`)
``<s>:listings:refresh``      hash    the last ``recrawl --listings``: started, requests queued
``<s>:listings:sitemapped``   hash    page URL -> sitemap URL: pages a sitemap lists, not item
                                      links, the crawl has not read (:mod:`crawler.core.listings`)
``<s>:checks:<site>``         string  JSON: the site's data-check figures, added to by every
                                      worker (:mod:`crawler.datachecks`); in the site's shard
``<s>:browser_sites``         hash    site -> JSON {since, worker, url}: sites whose pages need
                                      a headless browser (:mod:`crawler.browser.sites`)
``<s>:wake``                  channel not a key: pub/sub messages that wake idle workers
                                      (:mod:`crawler.scheduling.wakeup`)
============================  ======  =====================================================

Scores of the queue: a request ready to go has ``-priority`` (scrapy-redis), the
score of its lane; a retry waiting for its time has ``DELAYED_SCORE_BASE + due``
(``due``: Redis clock, ms), below ``DELAYED_BELOW``, in the sorted set, so
retries sort first, earliest due first, and a pop hands out those that are due
(before any lane) and leaves the others where they are.

**On a Redis Cluster** (``REDIS_CLUSTER=true``) the same keys are laid out so
that every Lua script and transaction touches one hash slot:

* a site's keys live in its **shard**: ``REDIS_CLUSTER_SHARDS`` shards (16 by
  default), the shard of a site being ``crc32(site) % shards``
  (:meth:`CrawlKeys.shard_of`). Shard ``i`` has the hash tag ``{s<i>}``: its
  queue ``<s>:{s<i>}:requests`` (with its lanes ``<s>:{s<i>}:requests:<score>``
  and their index, same tag), its browser queue ``<s>:{s<i>}:browser_requests`` (and
  its lanes and index), its fingerprints ``<s>:{s<i>}:dupefilter`` (or
  ``:bloom`` and ``:bloom:meta``), the politeness budgets ``<s>:{s<i>}:polite:<site>``
  and data-check figures ``<s>:{s<i>}:checks:<site>`` of its sites and each worker's
  leases of its requests ``<s>:{s<i>}:inflight:<worker>``.
  A request is queued, and its fingerprint checked, in the shard of the site of
  its URL;
* the seeds and their leases live together under ``{seeds}``:
  ``<s>:{seeds}:start_urls``, ``<s>:{seeds}:seeded``, ``<s>:{seeds}:inflight:<worker>``;
* every other key (workers, alive, paused, stats, dead, invalid, series,
  seedpages, sites, evidence, browser_sites) keeps its name above and so its own slot;
  no script touches two of them.

On a plain Redis there is one shard and no tag: the names are those of the
table, exactly as before.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Any

SPIDER_NAME = "ecommerce"  # the default spider (master --spider); each spider has its own

# scrapy-redis templates (settings SCHEDULER_QUEUE_KEY, SCHEDULER_DUPEFILTER_KEY,
# REDIS_START_URLS_KEY): scrapy-redis formats them itself.
QUEUE_KEY_TEMPLATE = "%(spider)s:requests"
DUPEFILTER_KEY_TEMPLATE = "%(spider)s:dupefilter"
START_URLS_KEY_TEMPLATE = "%(name)s:start_urls"

# Scores of the queue below this are retries waiting for their time (see above).
DELAYED_BELOW = -1_000_000_000_000_000
DELAYED_SCORE_BASE = -4_000_000_000_000_000  # + due time in ms: exact in a double until 2255


DEFAULT_CLUSTER_SHARDS = 16  # shards of a crawl on a Redis Cluster (REDIS_CLUSTER_SHARDS)
DEFAULT_REDIS_CLUSTER = False  # whether the crawl lives on a Redis Cluster (REDIS_CLUSTER)
SEEDS_TAG = "{seeds}"  # hash tag of the seed keys on a cluster


class ClusterKeyError(LookupError):
    """A per-site key was asked for without its site, on a cluster layout."""


@dataclass(frozen=True)
class ShardKeys:
    """The per-site keys of one shard: queue, fingerprints, leases, politeness budgets.

    ``tag`` is ``""`` on a plain Redis (the names of the module's table) and the
    shard's hash tag, ``{s<i>}``, on a cluster.
    """

    spider: str = SPIDER_NAME
    tag: str = ""
    index: int = 0

    def _key(self, name: str) -> str:
        return f"{self.spider}:{self.tag}:{name}" if self.tag else f"{self.spider}:{name}"

    @property
    def requests(self) -> str:
        return self._key("requests")

    @property
    def browser_requests(self) -> str:
        """The queue of requests that need a browser (same slot as :attr:`requests`)."""
        return self._key("browser_requests")

    @property
    def dupefilter(self) -> str:
        return self._key("dupefilter")

    @property
    def bloom(self) -> str:
        return self._key("bloom")

    @property
    def bloom_meta(self) -> str:
        return self._key("bloom:meta")

    def inflight(self, worker: str) -> str:
        return self._key(f"inflight:{worker}")

    @property
    def inflight_pattern(self) -> str:
        return self._key("inflight:*")

    def polite(self, site: str) -> str:
        return self._key(f"polite:{site}")

    def evidence(self, site: str) -> str:
        """The counters of a site's evidence (:mod:`crawler.extensions.siteevidence`)."""
        return f"{self.spider}:evidence:{site}"

    def checks(self, site: str) -> str:
        """A site's data-check figures (:mod:`crawler.datachecks.store`), in its shard."""
        return self._key(f"checks:{site}")

    @property
    def polite_pattern(self) -> str:
        return self._key("polite:*")


@dataclass(frozen=True)
class CrawlKeys:
    """The Redis key names of one spider's crawl.

    ``cluster`` lays them out for a Redis Cluster in ``shards`` shards (see the
    module's doc); the per-site keys are then reached through :meth:`for_site`,
    :meth:`shard` or :meth:`all_shards` (the shortcuts ``requests``,
    ``browser_requests``, ``dupefilter``, ``bloom``, ``inflight()`` and ``polite()`` raise
    :class:`ClusterKeyError` there: they would name a key of no shard).
    """

    spider: str = SPIDER_NAME
    cluster: bool = False
    shards: int = 1

    def __post_init__(self) -> None:
        if self.shards < 1:
            raise ValueError(f"a crawl needs at least one shard, not {self.shards}")
        if not self.cluster and self.shards != 1:
            raise ValueError("shards other than 1 need the cluster layout (REDIS_CLUSTER=true)")

    @classmethod
    def layout(cls, spider: str = SPIDER_NAME, cluster: bool = False, shards: int = 0) -> CrawlKeys:
        """The keys of ``spider``'s crawl; ``shards`` 0: the default for the layout."""
        if not cluster:
            return cls(spider)
        return cls(spider, cluster=True, shards=shards or DEFAULT_CLUSTER_SHARDS)

    @classmethod
    def from_settings(cls, settings: Any, spider: str = SPIDER_NAME) -> CrawlKeys:
        """The layout the settings ``REDIS_CLUSTER`` and ``REDIS_CLUSTER_SHARDS`` give."""
        return cls.layout(
            spider,
            cluster=settings.getbool("REDIS_CLUSTER", DEFAULT_REDIS_CLUSTER),
            shards=settings.getint("REDIS_CLUSTER_SHARDS", DEFAULT_CLUSTER_SHARDS),
        )

    # -- per-site keys: shards ---------------------------------------------------------
    def shard_of(self, site: str) -> int:
        """The shard of a site (:func:`crawler.core.sites.site_key`): ``crc32 % shards``."""
        if self.shards == 1:
            return 0
        return zlib.crc32(site.encode("utf-8", "surrogatepass")) % self.shards

    def shard(self, index: int) -> ShardKeys:
        if not 0 <= index < self.shards:
            raise IndexError(f"shard {index} of {self.shards}")
        return ShardKeys(self.spider, f"{{s{index}}}" if self.cluster else "", index)

    def for_site(self, site: str) -> ShardKeys:
        """The keys of the shard that holds ``site``'s queue, fingerprints and budget."""
        return self.shard(self.shard_of(site))

    def all_shards(self) -> list[ShardKeys]:
        return [self.shard(index) for index in range(self.shards)]

    def _plain(self, what: str) -> ShardKeys:
        if self.cluster:
            raise ClusterKeyError(
                f"{what} is per shard on a cluster: use keys.for_site(site) or keys.all_shards()"
            )
        return self.shard(0)

    @property
    def seed_tag(self) -> str:
        return f"{SEEDS_TAG}:" if self.cluster else ""

    def seed_inflight(self, worker: str) -> str:
        """Where a worker's leases of seeds are: its ``inflight`` hash on a plain Redis."""
        if not self.cluster:
            return self.shard(0).inflight(worker)
        return f"{self.spider}:{SEEDS_TAG}:inflight:{worker}"

    @property
    def prefix(self) -> str:
        return f"{self.spider}:"

    @property
    def start_urls(self) -> str:
        if self.cluster:
            return f"{self.spider}:{SEEDS_TAG}:start_urls"
        return START_URLS_KEY_TEMPLATE % {"name": self.spider}

    @property
    def seeded(self) -> str:
        return f"{self.spider}:{self.seed_tag}seeded"

    @property
    def requests(self) -> str:
        return self._plain("requests").requests

    @property
    def browser_requests(self) -> str:
        return self._plain("browser_requests").browser_requests

    @property
    def dupefilter(self) -> str:
        return self._plain("dupefilter").dupefilter

    @property
    def bloom(self) -> str:
        return self._plain("bloom").bloom

    @property
    def bloom_meta(self) -> str:
        return self._plain("bloom").bloom_meta

    def inflight(self, worker: str) -> str:
        return self._plain("inflight").inflight(worker)

    @property
    def inflight_pattern(self) -> str:
        """Every lease hash of the crawl: of every shard, and of the seeds."""
        if self.cluster:
            return f"{self.spider}:{{*}}:inflight:*"
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
        return self._plain("polite").polite(site)

    @property
    def seed_pages(self) -> str:
        return f"{self.spider}:seedpages"

    @property
    def sites(self) -> str:
        return f"{self.spider}:sites"

    def evidence(self, site: str) -> str:
        """The counters of a site's evidence (:mod:`crawler.extensions.siteevidence`)."""
        return f"{self.spider}:evidence:{site}"

    @property
    def listing_pages(self) -> str:
        """The listing pages the crawl read (:mod:`crawler.core.listings`)."""
        return f"{self.spider}:listings:pages"

    @property
    def listed_items(self) -> str:
        """What a listing's card last showed of each item (:mod:`crawler.core.listings`)."""
        return f"{self.spider}:listings:items"

    @property
    def listings_refresh(self) -> str:
        """The last refresh from listings (``recrawl --listings``)."""
        return f"{self.spider}:listings:refresh"

    @property
    def sitemapped(self) -> str:
        """The pages a sitemap lists, not item links, the crawl has not read yet."""
        return f"{self.spider}:listings:sitemapped"

    @property
    def browser_sites(self) -> str:
        return f"{self.spider}:browser_sites"

    @property
    def wake(self) -> str:
        """The pub/sub channel of wake-ups (the same name on a cluster: not a key)."""
        return f"{self.spider}:wake"

    @property
    def polite_pattern(self) -> str:
        """Every politeness budget of the crawl, in every shard."""
        if self.cluster:
            return f"{self.spider}:{{*}}:polite:*"
        return f"{self.spider}:polite:*"

    @property
    def all_pattern(self) -> str:
        return f"{self.spider}:*"
