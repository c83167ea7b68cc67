"""A storage pipeline tells the lease tracker that a request is done only once it stored the items.

Without a registered store, the lease tracker takes an item as safe once it went
through every pipeline (``item_scraped``); with one, only once every registered
store sent :data:`crawler.core.signals.items_stored` for it.

:func:`claim_crawl_count`: with several stores (PostgreSQL and MongoDB), only the
first of ``ITEM_PIPELINES`` adds to the crawl-wide ``items_stored``, so that an
item written to both counts once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

_COUNTING_STORE: WeakKeyDictionary[Crawler, str] = WeakKeyDictionary()


def register_store(crawler: Crawler, store: str) -> bool:
    """Register ``store`` with the crawl's lease tracker; ``False`` when leases are off."""
    # imported here: the master reads the stores without loading the lease machinery
    from crawler.leasing.tracker import LeaseTracker

    try:
        tracker = LeaseTracker.of(crawler)
    except RuntimeError:
        return False  # no lease tracking in this crawl
    tracker.register_store(store)
    return True


def claim_crawl_count(crawler: Crawler, store: str) -> bool:
    """Does ``store`` keep the crawl-wide count? True for the crawler's first store only."""
    return _COUNTING_STORE.setdefault(crawler, store) == store
