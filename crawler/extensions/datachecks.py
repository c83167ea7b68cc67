"""``DataChecks``: every site's figures kept while it is crawled, shared by every worker,
and the data checks run on them (:mod:`crawler.datachecks`; ``docs/data-checks.md``).

The worker adds each stored row (``item_scraped``) and each page that gave no item
(:data:`crawler.core.signals.page_rejected`) to its site's figures in memory, and adds them
to the site's figures in Redis (:class:`crawler.datachecks.store.FiguresStore`: one
script call, three commands) once ``DATACHECKS_SYNC_PAGES`` of the site's pages were
counted since the last addition, every ``DATACHECKS_SYNC_INTERVAL`` seconds for the
sites with fewer, and when the spider closes; then it runs the checks on the sum of
every worker's. So the checks cost at most ``3 / DATACHECKS_SYNC_PAGES`` Redis
commands a page (0.03) on a site crawled fast, and three per interval on a slow one.

When a check starts failing on a site the worker logs one
WARNING::

    Data check availability_one_value fails on shop.example: 100% of 60 rows have the
    availability 'OutOfStock' (threshold 0.95, min 50 rows); e.g. https://... https://...

once per site and check (an INFO line when it passes again), and puts the field in
doubt in the ``uncertain`` list of the site's rows read from then on
(:func:`crawler.datachecks.uncertain.mark`, through :meth:`mark`).

Settings: ``DATACHECKS_ENABLED`` (False: ``NotConfigured``), ``DATACHECKS_SYNC_PAGES``,
``DATACHECKS_SYNC_INTERVAL``,
``DATACHECKS_TOP_VALUES``, ``DATACHECKS_TTL``, ``DATACHECKS_OVERRIDES`` (thresholds for
every site; a site profile's ``checks`` section wins). Stats: ``datachecks/synced``,
``datachecks/failing``. Other components find it with :meth:`DataChecks.of`.
"""

from __future__ import annotations

import logging
from typing import Any

from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy_redis.connection import get_redis_from_settings
from twisted.internet import task

from crawler.core import defaults
from crawler.core import signals as crawler_signals
from crawler.core.itemkinds import LISTED_PRODUCT, PRODUCT, kind_of_item
from crawler.core.keys import SPIDER_NAME, CrawlKeys
from crawler.core.sites import site_key
from crawler.datachecks import uncertain
from crawler.datachecks.checks import FAIL, run_checks, validate_overrides
from crawler.datachecks.figures import (
    Figures,
    observe_product,
    observe_quote,
    observe_rejected,
)
from crawler.datachecks.store import FiguresStore
from crawler.extraction.links import looks_like_product

logger = logging.getLogger(__name__)


class DataChecks:
    def __init__(self, crawler: Any) -> None:
        settings = crawler.settings
        if not settings.getbool("DATACHECKS_ENABLED", defaults.DATACHECKS_ENABLED):
            raise NotConfigured("DATACHECKS_ENABLED is off")
        spidercls = crawler.spidercls
        self.kind = getattr(spidercls, "item_kind", "") or "product"
        keys = CrawlKeys.from_settings(settings, getattr(spidercls, "name", None) or SPIDER_NAME)
        self.store = FiguresStore(
            get_redis_from_settings(settings),
            keys,
            cap=settings.getint("DATACHECKS_TOP_VALUES", defaults.DATACHECKS_TOP_VALUES),
            ttl=settings.getint("DATACHECKS_TTL", defaults.DATACHECKS_TTL),
        )
        self.overrides = validate_overrides(
            settings.getdict("DATACHECKS_OVERRIDES", defaults.DATACHECKS_OVERRIDES),
            "DATACHECKS_OVERRIDES",
        )
        self.interval = settings.getfloat(
            "DATACHECKS_SYNC_INTERVAL", defaults.DATACHECKS_SYNC_INTERVAL
        )
        self.sync_pages = settings.getint("DATACHECKS_SYNC_PAGES", defaults.DATACHECKS_SYNC_PAGES)
        self.stats = crawler.stats
        self.pending: dict[str, Figures] = {}
        self.counted: dict[str, int] = {}  # pages counted per site since its last addition
        #: site -> {check: field} of the checks failing there (as last synced)
        self.failing: dict[str, dict[str, str]] = {}
        self.profiles: Any = None
        self._loop: task.LoopingCall | None = None

    @classmethod
    def from_crawler(cls, crawler: Any) -> DataChecks:
        extension = cls(crawler)
        crawler.signals.connect(extension.item_scraped, signal=signals.item_scraped)
        crawler.signals.connect(extension.page_rejected, signal=crawler_signals.page_rejected)
        crawler.signals.connect(extension.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(extension.spider_closed, signal=signals.spider_closed)
        return extension

    @classmethod
    def of(cls, crawler: Any) -> DataChecks | None:
        """The crawler's extension, or None when the checks are off."""
        found: DataChecks | None = crawler.get_extension(cls)
        return found

    # -- figures -------------------------------------------------------------------
    def _figures(self, url: str) -> tuple[str, Figures]:
        site = site_key(url)
        figures = self.pending.get(site)
        if figures is None:
            figures = self.pending[site] = Figures()
        return site, figures

    def _counted(self, site: str, figures: Figures) -> None:
        """One more page of the site: its figures go to Redis every ``sync_pages``."""
        count = self.counted[site] = self.counted.get(site, 0) + 1
        if self.sync_pages > 0 and count >= self.sync_pages:
            self._sync_site(site, self.pending.pop(site, figures))
        elif len(figures.top.get("price") or ()) > 4 * self.store.cap or len(
            figures.top.get("rejected") or ()
        ) > 4 * self.store.cap:
            figures.trim(2 * self.store.cap)

    def item_scraped(self, item: Any, response: Any = None, spider: Any = None) -> None:
        url = item.get("url") if hasattr(item, "get") else None
        if not url or is_listed(item):  # a listing's card is no row of the site's
            return
        site, figures = self._figures(url)
        if self.kind == "quote":
            observe_quote(figures, item)
        else:
            text = getattr(response, "text", None) if response is not None else None
            observe_product(figures, item, text if isinstance(text, str) else None)
        self._counted(site, figures)

    def page_rejected(self, response: Any, reason: str, spider: Any = None) -> None:
        url = getattr(response, "url", "")
        if url:
            site, figures = self._figures(url)
            observe_rejected(figures, url, reason, looks_like_product(url))
            self._counted(site, figures)

    def mark(self, item: dict[str, Any], site: str) -> None:
        """Set the item's ``uncertain`` list (its own and its site's failing checks')."""
        uncertain.mark(item, self.failing.get(site, {}))

    @classmethod
    def mark_item(cls, crawler: Any, item: dict[str, Any], site: str) -> None:
        """:meth:`mark` by the crawler's extension; without it, the item's own list only.
        A listed product (a listing's card) is left as it is: an observation of its
        product, no row of its own."""
        if is_listed(item):
            return
        checks = cls.of(crawler)
        if checks is not None:
            checks.mark(item, site)
        else:
            uncertain.mark(item, {})

    @staticmethod
    def rejected(crawler: Any, response: Any, reason: str) -> None:
        """Say that a page gave no item (:data:`crawler.core.signals.page_rejected`)."""
        crawler.signals.send_catch_log(
            crawler_signals.page_rejected, response=response, reason=reason
        )

    # -- sharing and checking ------------------------------------------------------
    def spider_opened(self, spider: Any = None) -> None:
        self.profiles = getattr(spider, "profiles", None)
        if self.interval > 0:
            self._loop = task.LoopingCall(self.sync)
            self._loop.start(self.interval, now=False)

    def spider_closed(self, spider: Any = None) -> None:
        if self._loop is not None and self._loop.running:
            self._loop.stop()
        self.sync()

    def sync(self) -> None:
        """Add each touched site's figures to the shared ones; run the checks on the sums."""
        pending, self.pending = self.pending, {}
        for site, figures in pending.items():
            self._sync_site(site, figures)

    def _sync_site(self, site: str, figures: Figures) -> None:
        self.counted.pop(site, None)
        try:
            shared = self.store.add(site, figures)
        except Exception as exc:  # Redis away: keep them for the next sync
            self.pending.setdefault(site, Figures()).add(figures, 2 * self.store.cap)
            logger.warning("Could not share the data checks' figures (%r); retrying", exc)
            return
        self.stats.inc_value("datachecks/synced")
        self._check(site, shared)

    def site_overrides(self, site: str) -> dict[str, Any]:
        if self.profiles is None:
            return {}
        profile = self.profiles.for_url(f"http://{site}/")
        return dict(getattr(profile, "checks", None) or {}) if profile is not None else {}

    def _check(self, site: str, figures: Figures) -> None:
        results = run_checks(site, figures, self.kind, self.overrides, self.site_overrides(site))
        before = self.failing.get(site, {})
        now = uncertain.failing_fields(results)
        for result in results:
            name = result["check"]
            if result["status"] == FAIL and name not in before:
                self.stats.inc_value("datachecks/failing")
                logger.warning(
                    "Data check %s fails on %s: %s (threshold %s, min %d rows); e.g. %s",
                    name,
                    site,
                    result["message"],
                    result["threshold"],
                    result["min_rows"],
                    " ".join(result["examples"]) or "-",
                )
            elif result["status"] != FAIL and name in before:
                logger.info("Data check %s passes again on %s: %s", name, site, result["message"])
        failing = {r["check"] for r in results if r["status"] == FAIL}
        # a failing check without a field to doubt (product_pages_rejected) is kept too
        self.failing[site] = {name: now.get(name, "") for name in failing}
        if not failing:
            self.failing.pop(site, None)


def is_listed(item: Any) -> bool:
    """A listed product (the card of a listing page), yielded beside products."""
    return kind_of_item(item, PRODUCT) is LISTED_PRODUCT
