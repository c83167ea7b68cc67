"""``<spider>:series``: pages and items per minute over the last hour, for the dashboard.

One Redis hash, bounded: field ``<minute>:p`` (pages) and ``<minute>:i`` (items), where
``<minute>`` is the Unix time divided by 60; values are counts that every worker adds
its own share to (``HINCRBY``), so the hash holds the crawl's totals per minute. Each
write sets the key to expire after twice ``SERIES_MINUTES`` minutes, and a worker's
first write of a minute also deletes the fields older than that, so the hash never
holds more than about ``2 * SERIES_MINUTES`` fields, and a crawl that stopped leaves
nothing behind for long.

Writer: the workers' :class:`crawler.extensions.workerstats.WorkerStats`, at each beat,
with the pages and items since its previous beat. Reader: :func:`read_series`
(``python -m master serve``'s chart, ``GET /api/v1/series``).
"""

from __future__ import annotations

import time
from typing import Any

import redis

from crawler.core.keys import CrawlKeys
from crawler.core.records import as_int, as_text

# KEYS[1] = <spider>:series; ARGV = minute, pages, items, oldest minute kept, ttl seconds,
# '1' to trim the fields older than the oldest minute kept (a writer's first write of a minute)
ADD_LUA = """
local minute = tonumber(ARGV[1])
if tonumber(ARGV[2]) > 0 then redis.call('HINCRBY', KEYS[1], ARGV[1] .. ':p', ARGV[2]) end
if tonumber(ARGV[3]) > 0 then redis.call('HINCRBY', KEYS[1], ARGV[1] .. ':i', ARGV[3]) end
local oldest = tonumber(ARGV[4])
if ARGV[6] ~= '0' then
    for _, name in ipairs(redis.call('HKEYS', KEYS[1])) do
        local m = tonumber(string.match(name, '^(%d+):'))
        if m == nil or m < oldest then redis.call('HDEL', KEYS[1], name) end
    end
end
redis.call('EXPIRE', KEYS[1], ARGV[5])
return minute
"""


class SeriesWriter:
    """Adds a worker's pages and items to the minute they were counted in."""

    def __init__(self, client: redis.Redis, keys: CrawlKeys, minutes: int) -> None:
        self.keys = keys
        self.minutes = minutes
        self.script = client.register_script(ADD_LUA)
        self.pages = 0  # what was sent already
        self.items = 0
        self.minute = -1  # of the last write (the first of a minute trims)

    def add(self, pages: int, items: int, now: float | None = None) -> None:
        """``pages`` and ``items``: the worker's totals so far (the delta is sent)."""
        if self.minutes <= 0:
            return
        delta_pages, delta_items = pages - self.pages, items - self.items
        if delta_pages <= 0 and delta_items <= 0:
            return
        minute = int((time.time() if now is None else now) // 60)
        args = [minute, max(0, delta_pages), max(0, delta_items), minute - self.minutes + 1]
        trim = 1 if minute != self.minute else 0
        self.script(keys=[self.keys.series], args=[*args, self.minutes * 120, trim])
        self.pages, self.items, self.minute = pages, items, minute


def read_series(
    client: redis.Redis, keys: CrawlKeys, minutes: int = 60, now: float | None = None
) -> dict[str, Any]:
    """The last ``minutes`` minutes, oldest first, every minute present (0 when none)."""
    current = int((time.time() if now is None else now) // 60)
    raw = client.hgetall(keys.series)
    counts: dict[tuple[int, str], int] = {}
    for name, value in raw.items():
        minute, _, kind = as_text(name).partition(":")
        if minute.isdigit():
            counts[(int(minute), kind)] = as_int(value)
    points = [
        {
            "minute": m * 60,
            "pages": counts.get((m, "p"), 0),
            "items": counts.get((m, "i"), 0),
        }
        for m in range(current - minutes + 1, current + 1)
    ]
    return {"minutes": minutes, "points": points}
