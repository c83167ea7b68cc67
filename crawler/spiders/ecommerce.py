"""The ``ecommerce`` spider: products, on the shared machinery of :mod:`crawler.spiders.base`.

Start any number of workers with ``scrapy crawl ecommerce``; their keys are under
``ecommerce:`` (:mod:`crawler.core.keys`). From each page the spider yields at most one
product (product detail pages only; see :mod:`crawler.extraction`), validated
against ``crawler/schema/product.schema.json`` and kept by the product stores
(``products``, ``product_price_history``), and the links that lead to more
products on the seed's own site, product links first (``PRIORITY_PRODUCT``).
Everything about parsing lives in :mod:`crawler.extraction`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar

from scrapy.http import TextResponse

from crawler.core.itemkinds import LISTED_KEY, PRODUCT
from crawler.core.keys import SPIDER_NAME
from crawler.core.listings import ListingMemory, shown_fields
from crawler.core.sites import site_key
from crawler.datachecks.uncertain import read_uncertainly
from crawler.extensions.siteevidence import SiteEvidenceStore
from crawler.extraction import extract, read_listing
from crawler.extraction.product import Extraction
from crawler.spiders.base import DistributedSpider
from crawler.spiders.redischeck import ClusterLayoutMismatch, RedisUnavailable, check_redis

__all__ = ["ClusterLayoutMismatch", "EcommerceSpider", "RedisUnavailable", "check_redis"]


class EcommerceSpider(DistributedSpider):
    """One product per product detail page (:func:`crawler.extraction.extract`)."""

    name = SPIDER_NAME
    item_kind: ClassVar[str] = PRODUCT.name

    def extract_items(self, response: TextResponse, profile: Any) -> Iterator[dict[str, Any]]:
        """The page's product, read with what the worker knows of its site
        (:class:`~crawler.extensions.siteevidence.SiteEvidenceStore`; none: the page alone)."""
        store = SiteEvidenceStore.of(self.crawler)
        site = response.meta.get("site") or site_key(response.url)
        known = {"site": store.knowledge(site)} if store is not None else {}
        result = extract(response, profile, **known)
        if store is not None and result.rejected != "failed":
            if store.observe(response, site, result):
                return  # read again once the site is known (EvidenceRetryMiddleware); counted then
        if self.accepted(response, result) and result.product is not None:
            result.product["uncertain"] = read_uncertainly(result.product, result.uncertain)
            yield result.product
        elif result.rejected == "listing":
            yield from self.listed_products(response, result)
        elif response.meta.get("recrawl"):  # queued again (a listing page?): lists nothing now
            ListingMemory(self.server, self.keys).forget(response.url)

    def listed_products(
        self, response: TextResponse, result: Extraction
    ) -> Iterator[dict[str, Any]]:
        """The listed products of a page typed as a listing (one per card,
        :func:`crawler.extraction.read_listing`), each naming its listing page; the page
        and what each card showed are recorded for ``recrawl --listings``
        (:class:`~crawler.core.listings.ListingMemory`)."""
        try:
            cards = read_listing(response, result)
        except Exception as exc:  # the page's links are still followed
            self.crawler.stats.inc_value("extraction/errors/listing")
            self.logger.warning("Reading the cards of %s failed (%r)", response.url, exc)
            return
        if not cards:
            if response.meta.get("recrawl"):  # a listing page a refresh read: no card now
                ListingMemory(self.server, self.keys).forget(response.url)
            return
        self.crawler.stats.inc_value("listing/pages")
        self.crawler.stats.inc_value("listing/products", len(cards))
        fields = PRODUCT.refreshed_fields
        ListingMemory(self.server, self.keys).record(
            response.url, [(c["url"], shown_fields(c, fields)) for c in cards]
        )
        for card in cards:
            card[LISTED_KEY] = response.url
            yield card
