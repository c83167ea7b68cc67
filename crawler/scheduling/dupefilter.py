"""``BinaryFingerprintDupeFilter``: the shared fingerprint set, half the size.

scrapy-redis stores 40-character hex SHA1 strings computed by its own function.
This filter stores the 20 raw bytes of Scrapy's own request fingerprint (the
crawler's ``REQUEST_FINGERPRINTER_CLASS``), in the same Redis set
``<spider>:dupefilter``, and keeps an in-process cache of fingerprints known to
be there already (``DUPEFILTER_LOCAL_CACHE_SIZE``, 0 disables), so the links a
worker sees again and again (menus, breadcrumbs) cost no round trip.

Unlike scrapy-redis's filter, ``close()`` never deletes the set: shared state is
only ever deleted by ``python -m master reset``.

On a Redis Cluster there is one set per shard (``<spider>:{s<i>}:dupefilter``),
and a fingerprint is checked in the shard of its request's site (see
:mod:`crawler.core.keys`).
"""

from __future__ import annotations

from typing import Any

from scrapy import Request
from scrapy_redis.connection import get_redis_from_settings
from scrapy_redis.dupefilter import RFPDupeFilter

from crawler.core import defaults
from crawler.core.keys import CrawlKeys
from crawler.core.sites import site_key
from crawler.scheduling import restarts

#: URLs whose fingerprint is kept (the oldest goes first): the links that repeat.
URL_CACHE_SIZE = 4096


def _is_default_fingerprinter(fingerprinter: Any) -> bool:
    from scrapy.utils.request import RequestFingerprinter, fingerprint

    return (
        type(fingerprinter) is RequestFingerprinter
        and getattr(fingerprinter, "_fingerprint", None) is fingerprint
    )


class BinaryFingerprintDupeFilter(RFPDupeFilter):
    def __init__(
        self,
        server: Any,
        key: str,
        debug: bool = False,
        fingerprinter: Any = None,
        cache_size: int = 0,
        keys: CrawlKeys | None = None,
    ) -> None:
        super().__init__(server, key, debug)
        self.keys = keys or CrawlKeys()  # on a cluster: the set of each request's shard
        if fingerprinter is None:
            from scrapy.utils.request import RequestFingerprinter

            fingerprinter = RequestFingerprinter()
        self.fingerprinter = fingerprinter
        self.cache_size = cache_size
        # URL -> fingerprint, only with Scrapy's own fingerprinter (its function of
        # method, canonical URL and body; any other may read headers or meta)
        self._by_url: dict[str, bytes] | None = (
            {} if _is_default_fingerprinter(fingerprinter) else None
        )
        self._known: dict[bytes, None] = {}
        # a Redis restart may have lost fingerprints the cache says are there
        self._forget_restarts = restarts.on_restart(server, self.forget)

    def forget(self, *restart: str) -> None:
        """Drop the local cache: Redis is the only judge of what was seen."""
        self._known.clear()

    @classmethod
    def from_spider(cls, spider: Any) -> BinaryFingerprintDupeFilter:
        settings = spider.settings
        keys = CrawlKeys.from_settings(settings, spider.name)
        return cls(
            get_redis_from_settings(settings),
            key="" if keys.cluster else keys.dupefilter,
            keys=keys,
            debug=settings.getbool("DUPEFILTER_DEBUG"),
            fingerprinter=spider.crawler.request_fingerprinter,
            cache_size=settings.getint(
                "DUPEFILTER_LOCAL_CACHE_SIZE", defaults.DUPEFILTER_LOCAL_CACHE_SIZE
            ),
        )

    def request_fingerprint(self, request: Request) -> bytes:  # type: ignore[override]
        if (
            self._by_url is None
            or request.method != "GET"
            or request.body
            or request.meta.get("verbatim_url")
        ):
            return bytes(self.fingerprinter.fingerprint(request))
        # Scrapy's default fingerprint of a GET without a body is a function of the
        # URL alone: the same menu link on every page is hashed once
        fingerprint = self._by_url.get(request.url)
        if fingerprint is None:
            fingerprint = bytes(self.fingerprinter.fingerprint(request))
            if len(self._by_url) >= URL_CACHE_SIZE:
                del self._by_url[next(iter(self._by_url))]
            self._by_url[request.url] = fingerprint
        return fingerprint

    def known(self, fingerprint: bytes) -> bool:
        """True when this worker already knows the fingerprint is in Redis."""
        known = self._known
        if fingerprint not in known:
            return False
        # used last, evicted last: the links every page repeats stay in the cache
        del known[fingerprint]
        known[fingerprint] = None
        return True

    def remember(self, fingerprint: bytes) -> None:
        if not self.cache_size:
            return
        if len(self._known) >= self.cache_size:
            del self._known[next(iter(self._known))]
        self._known[fingerprint] = None

    def request_seen(self, request: Request) -> bool:
        fingerprint = self.request_fingerprint(request)
        if self.known(fingerprint):
            return True
        key = self.key
        if self.keys.cluster:
            key = self.keys.for_site(site_key(request.url)).dupefilter
        added = self.server.sadd(key, fingerprint)
        self.remember(fingerprint)
        return added == 0

    def close(self, reason: str = "") -> None:
        """Keep the shared fingerprints (scrapy-redis deletes them here)."""
        self._forget_restarts()
        self._known.clear()
