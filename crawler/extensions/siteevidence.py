"""``SiteEvidenceStore``: the evidence of whole sites, kept by every worker and shared
through Redis (:mod:`crawler.extraction.evidence` says what it is and how it is read).

The spider reads each page with its site's evidence (:meth:`knowledge`) and hands
back what the page adds (:meth:`observe`). The store keeps, per site, the counters it
read from Redis plus its own since; every ``SITE_EVIDENCE_SYNC_INTERVAL`` seconds
(and when the spider closes) it adds its own to the site's hash
``<spider>:evidence:<site>`` (``HINCRBY``, one pipelined round trip for all sites) and
reads back the sums of the sites it met since, so every worker reads with what all
have seen. Memory is bounded: at most ``SITE_EVIDENCE_MAX_SITES`` sites in a worker
(the least recently met are forgotten), at most ``SITE_EVIDENCE_MAX_KEYS`` counters
per site in a worker and in Redis (the least counted are dropped); a site's hash
expires ``SITE_EVIDENCE_TTL`` seconds after its last exchange.

A page that lacks structured data and leaves its product, price or stock state to a
guess (:func:`crawler.extraction.sitepage.uncertain`), met while its site's evidence
is young, gives no product yet: the store marks its response, and
:class:`crawler.middlewares.evidenceretry.EvidenceRetryMiddleware` queues the page
again, once, at ``SITE_EVIDENCE_RETRY_PRIORITY`` (after the site's other pages);
``SITE_EVIDENCE_RETRY`` False reads every page once, with the evidence there is.

Settings: ``SITE_EVIDENCE_ENABLED`` (False: ``NotConfigured``, pages are read one by
one), ``SITE_EVIDENCE_SYNC_INTERVAL``, ``SITE_EVIDENCE_MAX_SITES``,
``SITE_EVIDENCE_MAX_KEYS``, ``SITE_EVIDENCE_TTL``, ``SITE_EVIDENCE_RETRY``,
``SITE_EVIDENCE_RETRY_PRIORITY``. Stats: ``evidence/pages``, ``evidence/deferred``,
``evidence/synced``. Other components find it with :meth:`SiteEvidenceStore.of`.
"""

from __future__ import annotations

import logging
from collections import Counter, OrderedDict
from typing import Any

from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy_redis.connection import get_redis_from_settings
from twisted.internet import task

from crawler.core import defaults
from crawler.core.keys import SPIDER_NAME, CrawlKeys
from crawler.extraction.evidence import SiteEvidence

logger = logging.getLogger(__name__)

#: The response meta key that marks a page to read again (see the module doc).
RETRY_META_KEY = "evidence_retry"
#: The request meta key of a page queued again: it is read once more, never deferred.
RETRIED_META_KEY = "evidence_retried"


class SiteEvidenceStore:
    def __init__(self, crawler: Any) -> None:
        settings = crawler.settings
        if not settings.getbool("SITE_EVIDENCE_ENABLED", defaults.SITE_EVIDENCE_ENABLED):
            raise NotConfigured("SITE_EVIDENCE_ENABLED is off")
        self.server = get_redis_from_settings(settings)
        self.keys = CrawlKeys.from_settings(
            settings, getattr(crawler.spidercls, "name", None) or SPIDER_NAME
        )
        self.stats = crawler.stats
        self.interval = settings.getfloat(
            "SITE_EVIDENCE_SYNC_INTERVAL", defaults.SITE_EVIDENCE_SYNC_INTERVAL
        )
        self.max_sites = settings.getint(
            "SITE_EVIDENCE_MAX_SITES", defaults.SITE_EVIDENCE_MAX_SITES
        )
        self.max_keys = settings.getint("SITE_EVIDENCE_MAX_KEYS", defaults.SITE_EVIDENCE_MAX_KEYS)
        self.ttl = settings.getint("SITE_EVIDENCE_TTL", defaults.SITE_EVIDENCE_TTL)
        self.retry = settings.getbool("SITE_EVIDENCE_RETRY", defaults.SITE_EVIDENCE_RETRY)
        self.sites: OrderedDict[str, SiteEvidence] = OrderedDict()
        #: counters added since the last exchange, per site; the sites read since
        self.pending: dict[str, Counter[str]] = {}
        self.touched: set[str] = set()
        self._loop: task.LoopingCall | None = None

    @classmethod
    def from_crawler(cls, crawler: Any) -> SiteEvidenceStore:
        store = cls(crawler)
        crawler.signals.connect(store.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(store.spider_closed, signal=signals.spider_closed)
        return store

    @classmethod
    def of(cls, crawler: Any) -> SiteEvidenceStore | None:
        """The crawler's store, or None when it is not enabled (pages read one by one)."""
        found: SiteEvidenceStore | None = crawler.get_extension(cls)
        return found

    def knowledge(self, site: str) -> SiteEvidence:
        """The evidence of ``site`` this worker has (the most recently met sites are kept)."""
        self.touched.add(site)
        known = self.sites.get(site)
        if known is None:
            known = self.sites[site] = SiteEvidence(limit=self.max_keys)
            while len(self.sites) > self.max_sites:
                forgotten, _ = self.sites.popitem(last=False)
                self.pending.pop(forgotten, None)
        else:
            self.sites.move_to_end(site)
        return known

    def observe(self, response: Any, site: str, result: Any) -> bool:
        """Add what the page of ``site`` adds to its site's evidence (``result``: the
        page's :class:`crawler.extraction.Extraction`); True when the page is to be
        read again later (its response is marked for the retry middleware)."""
        if result.evidence is None:
            return False
        counts = result.evidence.counts()
        known = self.knowledge(site)
        young = not known.mature
        known.add(counts)
        self.pending.setdefault(site, Counter()).update(counts)
        self.stats.inc_value("evidence/pages")
        if (
            self.retry
            and young
            and result.uncertain
            and not response.meta.get(RETRIED_META_KEY)
        ):
            response.meta[RETRY_META_KEY] = True
            self.stats.inc_value("evidence/deferred")
            return True
        return False

    # -- sharing -----------------------------------------------------------------------
    def spider_opened(self, spider: Any = None) -> None:
        if self.interval > 0:
            self._loop = task.LoopingCall(self.sync)
            self._loop.start(self.interval, now=False)

    def spider_closed(self, spider: Any = None) -> None:
        if self._loop is not None and self._loop.running:
            self._loop.stop()
        self.sync()

    def sync(self) -> None:
        """Add this worker's counters to the shared ones and read the sums back, for
        the sites met or read since the last exchange."""
        pending, self.pending = self.pending, {}
        sites = sorted(set(pending) | (self.touched & set(self.sites)))
        self.touched = set()
        if not sites:
            return
        try:
            pipe = self.server.pipeline(transaction=False)
            for site in sites:
                key = self.keys.evidence(site)
                for field, count in pending.get(site, {}).items():
                    pipe.hincrby(key, field, count)
                if self.ttl > 0 and site in pending:
                    pipe.expire(key, self.ttl)
                pipe.hgetall(key)
            replies = pipe.execute()
        except Exception as exc:  # Redis away: keep the counters for the next exchange
            for site, counts in pending.items():
                self.pending.setdefault(site, Counter()).update(counts)
            self.touched.update(sites)
            logger.warning("Could not share the sites' evidence (%r); retrying", exc)
            return
        shared: list[dict[Any, Any]] = [r for r in replies if isinstance(r, dict)]
        for site, reply in zip(sites, shared, strict=True):
            decoded = {_text(k): int(v) for k, v in reply.items()}
            if not decoded and site not in pending:
                continue  # nothing shared yet (or expired): keep what this worker has
            if len(decoded) > self.max_keys:
                self._trim(site, decoded)
            known = self.sites.get(site)
            if known is None:  # forgotten meanwhile: only Redis keeps it now
                continue
            known.replace(decoded)
            since = self.pending.get(site)
            if since:  # added while the exchange ran: not in the sums yet
                known.add(since)
        self.stats.inc_value("evidence/synced", len(sites))

    def _trim(self, site: str, counts: dict[str, int]) -> None:
        """Drop the least counted counters of a site's hash beyond the bound."""
        kept = SiteEvidence(counts, limit=self.max_keys).counts
        dropped = [k for k in counts if k not in kept]
        if dropped:
            try:
                self.server.hdel(self.keys.evidence(site), *dropped)
            except Exception as exc:
                logger.warning("Could not trim the evidence of %s (%r)", site, exc)


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
