"""``OutageReport``: the log says when Redis is unreachable, what the worker holds, when it is back.

The lines are :class:`crawler.net.outage.OutageLog`'s (see there): a WARNING within
``REDIS_SOCKET_TIMEOUT`` seconds of a stalled or refused connection, again every
``OUTAGE_LOG_INTERVAL`` seconds while it lasts, an INFO line with how long the
worker was cut off when Redis answers again. This extension gives the process's
Redis log (:data:`crawler.net.outage.REDIS`, fed by the retry policy of
``REDIS_PARAMS``) the server's address, the interval, and :func:`holdings`:
what the worker holds, read from memory (never from Redis)::

    holding 15 requests (7 in flight, 4 popped and not started, 7 with items not
    stored yet), 7 items waiting to be written, 4 links and finished leases to
    send

Settings: ``REDIS_URL``, ``OUTAGE_LOG_INTERVAL`` (``REDIS_SOCKET_TIMEOUT`` is
applied by the spider to every Redis client, see
:meth:`crawler.spiders.base.DistributedSpider.update_settings`).
"""

from __future__ import annotations

from typing import Any

from redis.connection import parse_url
from scrapy import signals

from crawler.core import defaults
from crawler.leasing.meta import lease_of
from crawler.net.outage import REDIS, OutageLog, nothing_held
from crawler.net.redis_client import split_urls


def redis_service(url: str, cluster: bool = False) -> str:
    """``Redis at host:port`` (``Redis Cluster at ...``), without credentials."""
    try:
        first = parse_url(split_urls(url)[0])
        where = f"{first.get('host', 'localhost')}:{first.get('port', 6379)}"
    except ValueError:
        where = "?"
    return f"Redis Cluster at {where}" if cluster else f"Redis at {where}"


def _count(label: str, count: int, one: str = "") -> str:
    """``3 items``, ``1 item`` (``one``: the label of one), ``""`` for none."""
    return f"{count} {one if count == 1 and one else label}" if count else ""


def holdings(crawler: Any) -> str:
    """What the worker holds, from memory: its requests, items, links not yet sent.

    A request is counted once: in flight (downloading, or being parsed until its
    items have gone through the pipelines), popped and not started, or parsed
    with items not stored yet. Each was leased; a lease already finished (its
    page's output safe) may still be counted while its items go through the
    pipelines, so the count is at least the leases the worker holds in Redis.
    """
    engine = getattr(crawler, "engine", None)
    scraper = getattr(engine, "scraper", None)
    # downloading, or downloaded and being parsed
    inflight = set(getattr(getattr(engine, "downloader", None), "active", ()) or ())
    inflight |= set(getattr(getattr(scraper, "slot", None), "active", ()) or ())
    scheduler = getattr(engine, "scheduler", None)  # popped requests wait in its queue
    buffered = int(getattr(getattr(scheduler, "queue", None), "buffered", 0) or 0)
    tracker = _tracker(crawler)
    unsafe = tracker.pending.waiting_leases if tracker is not None else set()
    # popped and not started: leased, and not among the others
    held = len(({lease_of(request) for request in inflight} | unsafe) - {""}) + buffered
    detail = [
        _count("in flight", len(inflight)),
        _count("popped and not started", buffered),
        _count("with items not stored yet", len(unsafe)),
    ]
    shown = ", ".join(part for part in detail if part)
    parts = [f"{_count('requests', held, 'request')} ({shown})" if held else ""]
    waiting = 0
    for pipe in getattr(getattr(scraper, "itemproc", None), "middlewares", ()):
        waiting += int(getattr(pipe, "pending_count", 0) or 0)
    parts.append(_count("items waiting to be written", waiting, "item waiting to be written"))
    if tracker is not None:
        unsent = tracker.unsent
        parts.append(_count("links and finished leases to send", unsent, "link or lease to send"))
    said = [part for part in parts if part]
    return "holding " + (", ".join(said) if said else "nothing")


def _tracker(crawler: Any) -> Any:
    from crawler.leasing.tracker import LeaseTracker

    try:
        return LeaseTracker.of(crawler)
    except RuntimeError:
        return None


class OutageReport:
    """Configures the process's Redis outage log for this crawler (see the module)."""

    def __init__(self, crawler: Any, log: OutageLog = REDIS) -> None:
        settings = crawler.settings
        self.crawler = crawler
        self.log = log
        self.service = redis_service(
            settings.get("REDIS_URL", defaults.REDIS_URL),
            settings.getbool("REDIS_CLUSTER", defaults.REDIS_CLUSTER),
        )
        self.interval = settings.getfloat("OUTAGE_LOG_INTERVAL", defaults.OUTAGE_LOG_INTERVAL)
        self.attach()

    @classmethod
    def from_crawler(cls, crawler: Any) -> OutageReport:
        extension = cls(crawler)
        crawler.signals.connect(extension.engine_stopped, signal=signals.engine_stopped)
        return extension

    def attach(self) -> None:
        self.log.service = self.service
        self.log.interval = self.interval
        self.log.holding = lambda: holdings(self.crawler)

    def engine_stopped(self) -> None:
        self.log.holding = nothing_held
