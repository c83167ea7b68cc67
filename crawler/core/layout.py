"""The crawl's key layout on a Redis Cluster, recorded so that master and workers agree.

On a cluster the per-site keys are spread over ``REDIS_CLUSTER_SHARDS`` shards
(:mod:`crawler.core.keys`). A worker or master started with another shard count
would queue requests in shards the others never read. So the first process to
touch the crawl records its layout in ``<spider>:layout`` (``SET NX``), and every
later one checks it and refuses to run with another. A plain Redis has one
layout only and records nothing.
"""

from __future__ import annotations

import json
from typing import Any

from crawler.core.keys import CrawlKeys


class LayoutMismatch(Exception):
    """The crawl was started with another shard count; ``str()`` says what to do."""


def layout_key(keys: CrawlKeys) -> str:
    return f"{keys.spider}:layout"


def ensure_layout(client: Any, keys: CrawlKeys) -> None:
    """Record ``keys``' layout for the crawl, or check it against the one recorded."""
    if not keys.cluster:
        return
    mine = json.dumps({"shards": keys.shards}, sort_keys=True)
    if client.set(layout_key(keys), mine, nx=True):
        return
    recorded = client.get(layout_key(keys))
    if recorded is None:  # reset between the two calls
        client.set(layout_key(keys), mine, nx=True)
        return
    try:
        shards = int(json.loads(recorded)["shards"])
    except (ValueError, KeyError, TypeError):
        raise LayoutMismatch(f"{layout_key(keys)} holds no layout ({recorded!r})") from None
    if shards != keys.shards:
        raise LayoutMismatch(
            f"this crawl's keys are in {shards} shards, but REDIS_CLUSTER_SHARDS is "
            f"{keys.shards} here: set REDIS_CLUSTER_SHARDS={shards} for every worker and "
            "the master (or `python -m master reset` to start afresh)"
        )
