"""Reading the crawl's state for ``status`` and ``report``; everything returned is a plain dict.

Nothing here writes to Redis. Worker records are the JSON values of the hash
``<spider>:workers`` (field = worker id), written by the workers' stats
extension and decoded by :meth:`crawler.core.records.WorkerRecord.decode` (missing
or malformed fields are tolerated: old or partial records). A worker is *live*
while its heartbeat key ``<spider>:alive:<id>`` exists.
"""

from __future__ import annotations

import sqlite3
import time
from contextlib import closing
from dataclasses import asdict
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import quote

import redis

from crawler.core.config import redact_dsn
from crawler.core.itemkinds import kind_of_spider
from crawler.core.keys import DELAYED_SCORE_BASE, CrawlKeys
from crawler.core.records import PauseMarker, StatsFields, WorkerRecord, as_float, as_int, as_text
from crawler.policy.politeness import rate_now, read_site_state
from crawler.scheduling.lanes import QueueCount, count_queue
from master.clusterscan import Batch, scan, site_of_polite_key, total
from master.listings import gather_listings

REPO_ROOT = Path(__file__).resolve().parent.parent
ACTIVE_STATES = ("running", "paused")


def load_workers(
    client: redis.Redis, keys: CrawlKeys, now: float | None = None
) -> list[WorkerRecord]:
    """Every worker record, with its liveness, sorted by start time then id."""
    now = time.time() if now is None else now
    raw = client.hgetall(keys.workers)
    fields = sorted(raw, key=as_text)
    pipe = client.pipeline(transaction=False)
    for field in fields:
        pipe.exists(keys.alive(as_text(field)))
    alive = pipe.execute() if fields else []
    records = [
        WorkerRecord.decode(raw[field], field, live=bool(flag), now=now)
        for field, flag in zip(fields, alive, strict=True)
    ]
    records.sort(
        key=lambda r: (r.started_at if r.started_at is not None else float("inf"), r.worker)
    )
    return records


def count_inflight(client: redis.Redis, keys: CrawlKeys) -> int:
    """Requests leased by workers and not yet finished (sum of HLEN over the inflight hashes,
    on every primary of a cluster)."""
    names = list(scan(client, keys.inflight_pattern))
    if not names:
        return 0
    pipe = client.pipeline(transaction=False)
    for name in names:
        pipe.hlen(name)
    return sum(int(n) for n in pipe.execute())


def read_pause(client: redis.Redis, keys: CrawlKeys) -> dict[str, Any] | None:
    """The pause marker as ``{"since": epoch|None, "by": str}``, or ``None`` when not paused."""
    raw = client.get(keys.paused)
    return None if raw is None else PauseMarker.decode(raw).as_dict()


def crawl_state(
    paused: bool, live: list[WorkerRecord], known: int, queued: int, pending: int, inflight: int
) -> tuple[str, str]:
    """(state, explanation): ``paused``, ``running``, ``idle`` or ``finished``."""
    waiting = queued + pending
    workers = f"{len(live)} live worker" + ("" if len(live) == 1 else "s")
    if paused:
        return "paused", f"{workers} hold; resume with `python -m master resume`"
    if any(w.state not in ("idle", "finished") for w in live) or (live and inflight):
        return "running", f"{workers} at work"
    if live:
        if waiting:
            return "idle", "live workers report idle although work is queued"
        return "idle", "live workers wait for work; seed more URLs to continue"
    if inflight:
        return (
            "idle",
            f"no live worker; {inflight} request(s) leased by dead workers await recovery",
        )
    if waiting:
        return "idle", "no live worker; start workers to crawl what is queued"
    if known:
        return "finished", "no live worker and nothing left to crawl"
    return "idle", "nothing seeded yet; run `master seed FILE`"


def _get(name: bytes, pipe: Any) -> Any:
    return pipe.get(name)


def gather_backoff(client: redis.Redis, keys: CrawlKeys) -> dict[str, Any]:
    """Retries waiting in Redis and the sites whose shared rate is cut (``status``, metrics,
    the dashboard): ``retries_waiting``, ``next_retry_in`` (s, None: none), ``sites`` (one
    dict per site in backoff: ``site``, ``rate`` (as of now, with the steps it climbed since
    its last request) and ``budget`` in req/s (budget 0: none),
    ``cuts``, ``reason``, ``cut_ago`` and ``paused_for`` in s), and the crawl-wide counters
    ``site_rate_cuts``, ``site_rate_restores``, ``retries_delayed``."""
    names = sorted(scan(client, keys.polite_pattern))
    batch = Batch(client, keys)
    clock = batch.time()
    # retries of both queues: the plain one's and the browser one's
    queues = batch.per_shard(lambda pipe, shard: count_queue(pipe, shard.requests, True))
    fields = [
        StatsFields.SITE_RATE_CUTS,
        StatsFields.SITE_RATE_RESTORES,
        StatsFields.RETRIES_DELAYED,
    ]
    counters = batch.add(lambda pipe: pipe.hmget(keys.stats, fields))
    for name in names:
        batch.add(partial(_get, name))
    replies = batch.execute()
    seconds, micros = replies[clock]
    values = replies[counters + 1 :]
    now_ms = seconds * 1000 + micros // 1000  # Redis's clock, which the due times are on
    sites = []
    for name, raw in zip(names, values, strict=True):
        state = read_site_state(raw)
        rate = rate_now(state, now_ms) if state is not None else None
        if state is None or rate is None:
            continue
        cut_at = as_float(state.get("cut_at"))
        paused = as_float(state.get("paused_until"))
        sites.append(
            {
                "site": site_of_polite_key(keys, name),
                "rate": round(rate, 3),
                "budget": round(as_float(state.get("ceiling")) or 0.0, 3),
                "cuts": as_int(state.get("cuts")),
                "reason": str(state.get("reason") or ""),
                "cut_ago": round((now_ms - cut_at) / 1000, 1) if cut_at is not None else None,
                "paused_for": round(max(0.0, (paused - now_ms) / 1000), 1)
                if paused is not None and paused > now_ms
                else 0.0,
            }
        )
    # the earliest retry of any shard: the smallest score below DELAYED_BELOW
    counted = QueueCount.of(replies[queues])
    first = counted.first_delayed
    next_retry = None
    if first is not None:
        next_retry = round(max(0.0, (first - DELAYED_SCORE_BASE - now_ms) / 1000), 1)
    cuts, restores, retried = replies[counters]
    return {
        "retries_waiting": counted.delayed,
        "next_retry_in": next_retry,
        "sites": sites,
        "site_rate_cuts": as_int(cuts),
        "site_rate_restores": as_int(restores),
        "retries_delayed": as_int(retried),
    }


def _bloom_status(client: redis.Redis, keys: CrawlKeys) -> dict[str, Any] | None:
    """The Bloom filter's figures (on a cluster, of the shards' filters together)."""
    # imported here: the module brings Scrapy, which `master --help` need not load
    from crawler.scheduling.bloom import bloom_status

    return bloom_status(client, keys)


def gather_status(client: redis.Redis, keys: CrawlKeys, now: float | None = None) -> dict[str, Any]:
    """The crawl at a glance (the data behind ``master status``); on a cluster the
    per-shard figures (queue, fingerprints) are summed over the shards."""
    now = time.time() if now is None else now
    batch = Batch(client, keys)
    # ready to go: not the waiting retries
    ready = batch.per_shard(lambda pipe, shard: count_queue(pipe, shard.requests))
    rendered = batch.per_shard(lambda pipe, shard: count_queue(pipe, shard.browser_requests))
    batch.add(lambda pipe: pipe.llen(keys.start_urls))
    fingerprints = batch.per_shard(lambda pipe, shard: pipe.scard(shard.dupefilter))
    batch.add(lambda pipe: pipe.scard(keys.seeded))
    fields = [StatsFields.ITEMS_STORED, StatsFields.ITEMS_INVALID, StatsFields.REQUESTS_REFUSED]
    batch.add(lambda pipe: pipe.hmget(keys.stats, fields))
    batch.add(lambda pipe: pipe.llen(keys.dead))
    batch.add(lambda pipe: pipe.llen(keys.invalid))
    replies = batch.execute()
    queued, seen = QueueCount.of(replies[ready]).ready, total(replies[fingerprints])
    for_browser = QueueCount.of(replies[rendered]).ready
    pending, seeded, counters, dead, kept = (
        replies[rendered.stop],
        replies[fingerprints.stop],
        *replies[fingerprints.stop + 1 :],
    )
    stored, invalid_count, refused = counters
    inflight = count_inflight(client, keys)
    workers = load_workers(client, keys, now)
    live = [w for w in workers if w.live]
    pause = read_pause(client, keys)
    backoff = gather_backoff(client, keys)
    listings = gather_listings(client, keys)
    state, detail = crawl_state(
        pause is not None,
        live,
        len(workers),
        queued + for_browser + backoff["retries_waiting"],
        pending,
        inflight,
    )
    return {
        "spider": keys.spider,
        "state": state,
        "detail": detail,
        "paused": pause,
        "queued_requests": int(queued),
        # ready requests that wait for a worker with a browser (the browser queue)
        "browser_queued": int(for_browser),
        "pending_seeds": int(pending),
        "seeded_urls": int(seeded),
        "seen_fingerprints": int(seen),
        "in_flight": inflight,
        # requests leased before the pause: their workers hold them until resume
        "in_flight_held": inflight if pause is not None else 0,
        "live_workers": len(live),
        "known_workers": len(workers),
        "pages_per_min": round(sum(w.pages_per_min for w in live), 2),
        "workers": [
            {
                "worker": w.worker,
                "host": w.host,
                "state": w.state,
                "pages": w.pages,
                "items": w.items,
                "pages_per_min": round(w.pages_per_min, 2),
                "updated_ago": round(now - w.updated_at, 1) if w.updated_at is not None else None,
            }
            for w in live
        ],
        # workers that stopped beating without finishing (cut off, stalled or killed):
        # their leases go to other workers; "since" is their last report
        "stale_workers": [stale_worker(w, now) for w in workers if w.lost],
        "items_stored": as_int(stored),
        # the counter counts every rejected item; the kept records (when the workers
        # keep them) are never more, unless the counter was lost: take the larger
        "items_invalid": max(as_int(invalid_count), int(kept)),
        "dead_letters": int(dead),
        # seeds and requests the workers refused (network rule, seed meta), ever;
        # each became a dead letter
        "requests_refused": as_int(refused),
        "bloom": _bloom_status(client, keys),  # None unless the Bloom dupefilter is used
        # the cards of listing pages (master.listings): items listed, pages, last refresh
        "listed_products": listings["listed"],
        "listings": listings,
        # retries waiting in Redis for their time, and the sites whose rate is cut
        "backoff": backoff,
        "time": now,
    }


def stale_worker(w: WorkerRecord, now: float) -> dict[str, Any]:
    """A worker whose heartbeat expired while its record says it is at work: its id, host,
    state, ``since`` (epoch of its last report: it beat until then) and ``stale_for`` (s)."""
    since = w.updated_at if w.updated_at is not None else w.started_at
    return {
        "worker": w.worker,
        "host": w.host,
        "state": w.state,
        "since": since,
        "stale_for": round(now - since, 1) if since is not None else None,
    }


def _rate(pages: int, seconds: float) -> float:
    return round(pages * 60.0 / seconds, 2) if seconds > 0 else 0.0


def build_report(
    workers: list[WorkerRecord], now: float, items: str = "products"
) -> dict[str, Any]:
    """Per-worker rows and the crawl's totals (pure: the data behind ``master report``).

    A worker's pages/min is its pages over its *active* minutes (elapsed minus
    the idle tail before it closed). The total's elapsed is the crawl's wall
    time, from the first start to the last end (``finished_at``, or now for a
    live worker, or the last update of a worker whose heartbeat is gone); its
    active window ends when the last worker stopped working (end minus idle
    tail), and its pages/min is all pages over that window.
    """
    rows = []
    for w in workers:
        row = asdict(w)
        row["elapsed"] = round(w.elapsed, 2)
        row["idle_tail"] = round(w.idle_tail, 2)
        row["active"] = round(w.active, 2)
        row["pages_per_min"] = _rate(w.pages, w.active)
        # stopped beating without finishing, since its last report (see stale_worker)
        row["stale"] = w.lost
        row["stale_since"] = stale_worker(w, now)["since"] if w.lost else None
        rows.append(row)
    starts: list[float] = []
    ends: list[tuple[float, float]] = []  # (end, idle tail) of each worker with a start
    for w in workers:
        end = w.end_time(now)
        if w.started_at is not None and end is not None:
            starts.append(w.started_at)
            ends.append((end, w.idle_tail))
    pages = sum(w.pages for w in workers)
    total: dict[str, Any] = {
        "workers": len(workers),
        "live": sum(1 for w in workers if w.live),
        "started_at": min(starts) if starts else None,
        "ended_at": None,
        "elapsed": 0.0,
        "idle_tail": 0.0,
        "active": 0.0,
        "pages": pages,
        "items": sum(w.items for w in workers),
        "pages_per_min": 0.0,
    }
    if starts and ends:
        first = min(starts)
        last = max(end for end, _ in ends)
        last_active = max(end - idle for end, idle in ends)
        wall = max(0.0, last - first)
        active = min(wall, max(0.0, last_active - first))
        total.update(
            ended_at=last,
            elapsed=round(wall, 2),
            idle_tail=round(wall - active, 2),
            active=round(active, 2),
            pages_per_min=_rate(pages, active),
        )
    stores = sorted({w.store for w in workers if w.store})
    return {
        "workers": rows,
        "total": total,
        "stores": [describe_store(store, items) for store in stores],
        "time": now,
    }


def sqlite_path(store: str) -> Path | None:
    """The file of a ``sqlite:/path`` (or ``sqlite:///path``, ``sqlite:relative``) store."""
    if not store.startswith("sqlite:"):
        return None
    rest = store[len("sqlite:") :]
    if rest.startswith("//"):
        rest = rest[2:]
    return Path(rest) if rest else None


def describe_store(store: str, items: str = "products") -> dict[str, Any]:
    """A store string, and for a SQLite file on this machine the number of ``items``
    (``products``, ``quotes``: the table) in it, under that name."""
    info: dict[str, Any] = {"store": redact_dsn(store), items: None, "note": ""}
    path = sqlite_path(store)
    if path is None:
        return info
    candidates = [path] if path.is_absolute() else [Path.cwd() / path, REPO_ROOT / path]
    found = next((p for p in candidates if p.is_file()), None)
    if found is None:
        info["note"] = "not found on this machine"
        return info
    uri = f"file:{quote(str(found.resolve()))}?mode=ro"
    try:
        with closing(sqlite3.connect(uri, uri=True, timeout=5)) as conn:
            (count,) = conn.execute(f"SELECT count(*) FROM {items}").fetchone()
    except sqlite3.Error as exc:
        info["note"] = f"cannot count {items} ({exc})"
        return info
    info[items] = int(count)
    info["path"] = str(found.resolve())
    return info


def gather_report(client: redis.Redis, keys: CrawlKeys, now: float | None = None) -> dict[str, Any]:
    now = time.time() if now is None else now
    items = kind_of_spider(keys.spider).plural
    report = build_report(load_workers(client, keys, now), now, items)
    report["spider"] = keys.spider
    report["listings"] = gather_listings(client, keys)  # requests per refreshed product
    return report
