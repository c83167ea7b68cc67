"""Per-site and per-seed figures (``master status --sites``; the dashboard calls it too).

:func:`gather_sites` reads the hash ``<spider>:sites`` that every worker adds to
(:mod:`crawler.extensions.sitestats`: pages, products, sitemaps per site) and
``<spider>:seedpages`` (the pages taken from each ``max_pages`` budget, and the
seed each budget belongs to), and returns a plain dict (JSON as it is).

It also says what needs a browser (:func:`browser_needs`): the sites and sections
remembered in ``<spider>:browser_sites`` (:mod:`crawler.browser.sites`) and the
requests that wait in the browser queue (``<spider>:browser_requests``) for a
worker that renders, in all and, while they are at most :data:`BROWSER_COUNT_MAX`,
per site (their payloads read: one ``LRANGE`` per lane), and the data checks
(:func:`crawler.datachecks.report.gather_checks`: ``"checks"``, and each site's failing
checks in ``checks_failing``, the ``checks`` column).
"""

from __future__ import annotations

import json
import time
from collections import Counter
from typing import Any

import redis

from crawler.browser.sites import read_browser_sites
from crawler.core.keys import CrawlKeys
from crawler.core.sites import site_key
from crawler.datachecks.report import CheckSettings, failing_by_site, gather_checks
from crawler.scheduling.lanes import index_key, queue_counts, queue_keys

COUNTERS = ("pages", "products", "sitemaps")
SEED_SUFFIX = " seed"
BROWSER_COUNT_MAX = 10_000  # requests of the browser queue read to count them per site


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def gather_sites(client: redis.Redis, keys: CrawlKeys) -> dict[str, Any]:
    """``{"sites": [{"site", "pages", "products", "sitemaps"}...], "seeds": [...]}``,
    sites by pages (most first), seeds with their budget (``max_pages``) and use."""
    sites: dict[str, dict[str, Any]] = {}
    for field, value in client.hgetall(keys.sites).items():  # type: ignore[union-attr]
        counter, _, site = _text(field).partition(" ")
        if counter in COUNTERS and site:
            entry = sites.setdefault(site, {"site": site, **dict.fromkeys(COUNTERS, 0)})
            entry[counter] = int(value)
    raw = {_text(k): _text(v) for k, v in client.hgetall(keys.seed_pages).items()}  # type: ignore[union-attr]
    seeds = []
    for field, value in raw.items():
        if not field.endswith(SEED_SUFFIX):
            continue
        seed_id = field.removesuffix(SEED_SUFFIX)
        try:
            info = json.loads(value)
        except ValueError:
            info = {}
        max_pages = int(info.get("max_pages") or 0)
        taken = int(raw.get(seed_id, 0))
        seeds.append(
            {
                "id": seed_id,
                "url": info.get("url"),
                "strategy": info.get("strategy", "auto"),
                "max_pages": max_pages,
                # attempts past the budget are counted too; the pages fetched are at most this
                "pages": min(taken, max_pages) if max_pages else taken,
            }
        )
    checks = gather_checks(client, keys, CheckSettings.from_project())
    checked = failing_by_site(checks)
    for entry in sites.values():  # None: no figures yet; []: every check passes or is quiet
        entry["checks_failing"] = checked.get(entry["site"])
    return {
        "sites": sorted(sites.values(), key=lambda s: (-s["pages"], s["site"])),
        "seeds": sorted(seeds, key=lambda s: (s["url"] or "", s["id"])),
        "browser": browser_needs(client, keys),
        "checks": checks,
    }


def browser_needs(client: redis.Redis, keys: CrawlKeys) -> dict[str, Any]:
    """``{"scopes": [{"scope", "since", "worker", "url"}...], "waiting": n,
    "waiting_by_site": {site: n} or None}``: what needs a browser and what waits for one
    (``waiting_by_site`` None when more than :data:`BROWSER_COUNT_MAX` wait)."""
    scopes = [
        {"scope": scope, **record}
        for scope, record in sorted(read_browser_sites(client, keys.browser_sites).items())
    ]
    waiting = queue_counts(client, keys, browser=True).total
    by_site: Counter[str] | None = None
    if waiting <= BROWSER_COUNT_MAX:
        by_site = Counter()
        for shard in keys.all_shards():
            queue = shard.browser_requests
            for key in queue_keys(client, queue):
                if key == index_key(queue):
                    continue
                payloads = (
                    client.zrange(key, 0, -1) if key == queue else client.lrange(key, 0, -1)
                )
                for payload in payloads:  # type: ignore[union-attr]
                    by_site[_site_of(payload)] += 1
    return {
        "scopes": scopes,
        "waiting": waiting,
        "waiting_by_site": dict(by_site.most_common()) if by_site is not None else None,
    }


def _site_of(payload: Any) -> str:
    """The site of a queued request's URL (``?`` for a payload that is no request)."""
    try:
        data = json.loads(payload)
        return site_key(data.get("u") or data.get("url") or "") or "?"
    except (TypeError, ValueError, AttributeError):
        return "?"


def render_sites(figures: dict[str, Any], items: str = "products") -> str:
    """The table of ``--sites``; ``items``: what the spider's items are called (its
    ``products`` counter counts them: quotes for ``finance``)."""
    lines = [f"{'site':<40} {'pages':>8} {items:>9} {'sitemaps':>9}  checks"]
    for site in figures["sites"]:
        lines.append(
            f"{site['site']:<40} {site['pages']:>8} {site['products']:>9} {site['sitemaps']:>9}"
            f"  {_checks_cell(site.get('checks_failing'))}"
        )
    if not figures["sites"]:
        lines.append("(no page fetched yet)")
    browser = figures.get("browser") or {}
    if browser.get("scopes") or browser.get("waiting"):
        lines.append("")
        lines.append(f"{'needs a browser (site or section)':<40} {'since':<19}  found by")
        for scope in browser.get("scopes", []):
            since = _when(scope.get("since"))
            lines.append(f"{scope['scope']:<40} {since:<19}  {scope.get('worker') or '?'}")
        by_site = browser.get("waiting_by_site")
        detail = (
            ": " + ", ".join(f"{site} {count}" for site, count in by_site.items())
            if by_site
            else ""
        )
        lines.append(f"pages waiting for a browser: {browser.get('waiting', 0)}{detail}")
    if figures["seeds"]:
        lines.append("")
        lines.append(f"{'seed (strategy, max_pages)':<60} {'pages':>8}")
        for seed in figures["seeds"]:
            label = f"{seed['url']} ({seed['strategy']}, {seed['max_pages'] or '-'})"
            lines.append(f"{label:<60} {seed['pages']:>8}")
    return "\n".join(lines)


def _checks_cell(failing: list[str] | None) -> str:
    """The ``checks`` column: ``-`` (no figures yet), ``ok``, or the failing checks."""
    if failing is None:
        return "-"
    return "FAIL " + ", ".join(failing) if failing else "ok"


def _when(epoch: Any) -> str:
    try:
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(epoch)))
    except (TypeError, ValueError):
        return "-"
