"""``BrowserSites``: the sites (or sections of sites) whose pages need a browser, for the crawl.

When a worker finds a page to be an application shell (see
:mod:`crawler.middlewares.rendering`), it records where: the page's site and the
first segment of its path (:func:`browser_scope`: ``shop.example/app/`` for
``https://shop.example/app/c/boots``; ``shop.example/`` for a page at the site's root or
with no such segment, i.e. the whole site), in the hash ``<spider>:browser_sites``
(:attr:`crawler.core.keys.CrawlKeys.browser_sites`; field: that scope, the site as
:func:`crawler.core.sites.site_key` names it; value: JSON ``{"since": <unix time>, "worker":
<id>, "url": <the page>}``; the first worker's record stays). A shop built in the
browser is one scope (its home page is a shell); a shop with one section built in the
browser (an outlet, a configurator) gets that section only, and its other pages are
still fetched plainly. Every worker reads the hash's fields again every
``BROWSER_SITES_REFRESH`` seconds, when it next asks, so each queues those pages for a
browser worker from the start instead of fetching them plainly first
(:mod:`crawler.browser.routing`). ``python -m master reset`` deletes
it with the rest of the crawl.

Redis away: the last known sites stand, and the record is written at the next page
that needs it (a WARNING says so).
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any
from urllib.parse import urlsplit

from crawler.core.sites import site_key

logger = logging.getLogger(__name__)


def browser_scope(url: str) -> str:
    """``<site>/<first segment>/`` of a URL whose path has one followed by more, else
    ``<site>/`` (see the module doc)."""
    path = urlsplit(url).path
    first, sep, _ = path.lstrip("/").partition("/")
    return f"{site_key(url)}/{first}/" if first and sep else f"{site_key(url)}/"


def scopes_of(url: str) -> tuple[str, ...]:
    """The scopes a URL is in: its site's, and its section's when it has one."""
    scope = browser_scope(url)
    whole = f"{site_key(url)}/"
    return (whole,) if scope == whole else (whole, scope)


class BrowserSites:
    def __init__(self, server: Any, key: str, worker: str, refresh: float) -> None:
        self.server = server
        self.key = key
        self.worker = worker
        self.refresh = refresh
        self._known: set[str] = set()
        self._read_at = float("-inf")

    def needs_browser(self, url: str) -> bool:
        """Was the URL's site or section found to need a browser (by any worker)?"""
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
        return any(scope in self._known for scope in scopes_of(url))

    def remember(self, url: str) -> str | None:
        """Record that the page's scope needs a browser; the scope when this worker recorded
        it first, else None."""
        scope = browser_scope(url)
        self._known.add(scope)
        record = json.dumps({"since": round(time.time(), 3), "worker": self.worker, "url": url})
        try:
            return scope if self.server.hsetnx(self.key, scope, record) else None
        except Exception as exc:  # noqa: BLE001 -- recorded at the next shell of the site
            self._known.discard(scope)
            logger.warning("Could not record that %s needs a browser (%r)", scope, exc)
            return None


def read_browser_sites(server: Any, key: str) -> dict[str, dict[str, Any]]:
    """Every scope that needs a browser, with its record (for the master and the tests)."""
    out: dict[str, dict[str, Any]] = {}
    for field, value in (server.hgetall(key) or {}).items():
        name = field.decode() if isinstance(field, bytes) else str(field)
        try:
            out[name] = json.loads(value)
        except (TypeError, ValueError):
            out[name] = {}
    return out
