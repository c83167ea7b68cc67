"""Pause, resume and reset: the master's only writes to the crawl's control state.

``pause`` sets ``<spider>:paused`` to a :class:`crawler.core.records.PauseMarker`,
``{"since": epoch, "by": "user@host"}``; every worker polls that key (about once
a second, ``PAUSE_POLL_INTERVAL``) and stops taking requests while it exists,
without stopping its process.
``resume`` deletes the key. Both are idempotent.

``reset`` deletes every key of the crawl (``<spider>:*``, on every primary of
a cluster) with SCAN and UNLINK in batches; the command line asks for
confirmation first and refuses while live workers exist unless forced.
"""

from __future__ import annotations

import getpass
import socket
import time
from dataclasses import dataclass, field
from typing import Any

import redis

from crawler.core.keys import CrawlKeys
from crawler.core.records import PauseMarker
from crawler.scheduling.lanes import QueueCount, count_queue
from master.clusterscan import Batch, scan, total
from master.inspection import count_inflight, load_workers, read_pause

UNLINK_BATCH = 500


def operator() -> str:
    """``user@host`` of whoever runs the master, for the pause marker."""
    try:
        user = getpass.getuser()
    except Exception:  # no passwd entry, no USER variable (containers)
        user = "unknown"
    return f"{user}@{socket.gethostname()}"


def live_worker_ids(client: redis.Redis, keys: CrawlKeys) -> list[str]:
    return [w.worker for w in load_workers(client, keys) if w.live]


@dataclass
class PauseResult:
    changed: bool  # False: it already was in the requested state
    marker: dict[str, Any] | None  # the pause marker (new, existing, or removed)
    live_workers: list[str]


def pause(client: redis.Redis, keys: CrawlKeys, by: str | None = None) -> PauseResult:
    """Set the pause marker unless it is set already (the first pause's time is kept)."""
    new = PauseMarker(since=time.time(), by=by or operator())
    created = client.set(keys.paused, new.encode(), nx=True)
    marker = new.as_dict() if created else (read_pause(client, keys) or new.as_dict())
    return PauseResult(bool(created), marker, live_worker_ids(client, keys))


def resume(client: redis.Redis, keys: CrawlKeys) -> PauseResult:
    """Delete the pause marker; ``changed`` is False when the crawl was not paused."""
    pipe = client.pipeline(transaction=True)
    pipe.get(keys.paused)
    pipe.delete(keys.paused)
    raw, deleted = pipe.execute()
    marker = PauseMarker.decode(raw).as_dict() if deleted and raw is not None else None
    return PauseResult(bool(deleted), marker, live_worker_ids(client, keys))


@dataclass
class ResetPlan:
    """What ``reset`` would delete: the keys, and the sizes of the well-known ones."""

    keys: list[bytes]
    counts: dict[str, int] = field(default_factory=dict)
    live_workers: list[str] = field(default_factory=list)


def plan_reset(client: redis.Redis, keys: CrawlKeys) -> ResetPlan:
    """The keys under ``<spider>:*`` on every primary, and the crawl's sizes (summed over
    the shards on a cluster)."""
    found = sorted(scan(client, keys.all_pattern))
    batch = Batch(client, keys)
    # both queues: the plain one and the one for requests that need a browser
    queued = batch.per_shard(lambda pipe, shard: count_queue(pipe, shard.requests, True))
    batch.add(lambda pipe: pipe.llen(keys.start_urls))
    batch.add(lambda pipe: pipe.scard(keys.seeded))
    seen = batch.per_shard(lambda pipe, shard: pipe.scard(shard.dupefilter))
    batch.add(lambda pipe: pipe.hlen(keys.workers))
    batch.add(lambda pipe: pipe.llen(keys.dead))
    batch.add(lambda pipe: pipe.llen(keys.invalid))
    replies = batch.execute()
    pending, seeded = replies[queued.stop : seen.start]
    workers, dead, invalid = replies[seen.stop :]
    counts = {
        "keys": len(found),
        "queued_requests": QueueCount.of(replies[queued]).total,
        "pending_seeds": int(pending),
        "seeded_urls": int(seeded),
        "seen_fingerprints": total(replies[seen]),
        "in_flight": count_inflight(client, keys),
        "worker_records": int(workers),
        "dead_letters": int(dead),
        "invalid_items": int(invalid),
    }
    return ResetPlan(found, counts, live_worker_ids(client, keys))


def reset(client: redis.Redis, keys: CrawlKeys) -> int:
    """Delete every key matching ``<spider>:*`` (SCAN on every primary, UNLINK in batches;
    on a cluster redis-py splits a batch into one UNLINK per hash slot, since one command
    may only name keys of one slot); return how many were deleted. The layout key
    (``<spider>:layout``, :mod:`crawler.core.layout`) goes too: the next crawl may use
    another shard count."""
    deleted = 0
    batch: list[bytes] = []
    for name in scan(client, keys.all_pattern):
        batch.append(name)
        if len(batch) >= UNLINK_BATCH:
            deleted += int(client.unlink(*batch))
            batch = []
    if batch:
        deleted += int(client.unlink(*batch))
    return deleted
