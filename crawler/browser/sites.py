"""``BrowserSites``: the sites whose pages need a browser, remembered by the whole crawl.

When a worker finds a site's page to be an application shell (see
:mod:`crawler.middlewares.rendering`), it records the site in the hash
``<spider>:browser_sites`` (:attr:`crawler.keys.CrawlKeys.browser_sites`; field: the
site as :func:`crawler.sites.site_key` names it, value: JSON ``{"since": <unix time>,
"worker": <id>, "url": <the page>}``; the first worker's record stays). Every worker
reads the hash's fields again every ``BROWSER_SITES_REFRESH`` seconds, when it next
asks, so each renders that site's pages from the start instead of fetching them
plainly first. ``python -m master reset`` deletes it with the rest of the crawl.

Redis away: the last known sites stand, and the record is written at the next page
that needs it (a WARNING says so).
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

logger = logging.getLogger(__name__)


class BrowserSites:
    def __init__(self, server: Any, key: str, worker: str, refresh: float) -> None:
        self.server = server
        self.key = key
        self.worker = worker
        self.refresh = refresh
        self._known: set[str] = set()
        self._read_at = float("-inf")

    def needs_browser(self, site: str) -> bool:
        """Was the site found to need a browser (by any worker)?"""
        now = time.monotonic()
        if now - self._read_at >= self.refresh:
            self._read_at = now
            try:
                self._known = {
                    f.decode() if isinstance(f, bytes) else str(f)
                    for f in self.server.hkeys(self.key)
                }
            except Exception as exc:  # noqa: BLE001 -- keep what was known
                logger.warning("Could not read %s (%r); using what was known", self.key, exc)
        return site in self._known

    def remember(self, site: str, url: str) -> bool:
        """Record that ``site`` needs a browser; True when this worker recorded it first."""
        self._known.add(site)
        record = json.dumps({"since": round(time.time(), 3), "worker": self.worker, "url": url})
        try:
            return bool(self.server.hsetnx(self.key, site, record))
        except Exception as exc:  # noqa: BLE001 -- recorded at the next shell of the site
            self._known.discard(site)
            logger.warning("Could not record that %s needs a browser (%r)", site, exc)
            return False


def read_browser_sites(server: Any, key: str) -> dict[str, dict[str, Any]]:
    """Every site that needs a browser, with its record (for the master and the tests)."""
    out: dict[str, dict[str, Any]] = {}
    for field, value in (server.hgetall(key) or {}).items():
        name = field.decode() if isinstance(field, bytes) else str(field)
        try:
            out[name] = json.loads(value)
        except (TypeError, ValueError):
            out[name] = {}
    return out
