"""Per-site and per-seed figures (``master status --sites``; the dashboard calls it too).

:func:`gather_sites` reads the hash ``<spider>:sites`` that every worker adds to
(:mod:`crawler.extensions.sitestats`: pages, products, sitemaps per site) and
``<spider>:seedpages`` (the pages taken from each ``max_pages`` budget, and the
seed each budget belongs to), and returns a plain dict (JSON as it is).
"""

from __future__ import annotations

import json
from typing import Any

import redis

from crawler.keys import CrawlKeys

COUNTERS = ("pages", "products", "sitemaps")
SEED_SUFFIX = " seed"


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
    return {
        "sites": sorted(sites.values(), key=lambda s: (-s["pages"], s["site"])),
        "seeds": sorted(seeds, key=lambda s: (s["url"] or "", s["id"])),
    }


def render_sites(figures: dict[str, Any], items: str = "products") -> str:
    """The table of ``--sites``; ``items``: what the spider's items are called (its
    ``products`` counter counts them: quotes for ``finance``)."""
    lines = [f"{'site':<40} {'pages':>8} {items:>9} {'sitemaps':>9}"]
    for site in figures["sites"]:
        lines.append(
            f"{site['site']:<40} {site['pages']:>8} {site['products']:>9} {site['sitemaps']:>9}"
        )
    if not figures["sites"]:
        lines.append("(no page fetched yet)")
    if figures["seeds"]:
        lines.append("")
        lines.append(f"{'seed (strategy, max_pages)':<60} {'pages':>8}")
        for seed in figures["seeds"]:
            label = f"{seed['url']} ({seed['strategy']}, {seed['max_pages'] or '-'})"
            lines.append(f"{label:<60} {seed['pages']:>8}")
    return "\n".join(lines)
