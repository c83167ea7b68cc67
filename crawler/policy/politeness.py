"""A request budget per site, shared by every worker through Redis, that backs off.

Each site (host and port, as :func:`crawler.core.sites.site_key` says) has one key,
``<spider>:polite:<site>``, holding the earliest time (Redis clock, ms) at which
the next request to the site may start. :meth:`SiteBudget.reserve` is one Lua
script, so one atomic round trip per request: it takes the slot at
``max(now, next)``, moves ``next`` on by the site's interval, and returns how
long the caller must wait for its slot. N workers reserving slots of the same
key are spaced by the interval between them all, so together they never exceed
``1 / interval`` requests per second over any window. The key expires a minute
after its last slot: an idle site costs nothing. Every wait is also counted in
the crawl's stats hash (``politeness_waits``, ``politeness_wait_ms``), in the
same script.

**Backoff (AIMD).** When the site answers 429 or 503, or a request to it times
out (:meth:`SiteBudget.cut`), the same key becomes a JSON object that also
holds the site's current rate: cut by ``SITE_BACKOFF_FACTOR`` (at most once per
``SITE_BACKOFF_COOLDOWN`` s, never below ``SITE_BACKOFF_MIN_RPS``), and the next
slot moved past the answer's ``Retry-After`` (the whole site pauses). Every
worker's next reservation reads it, so all of them slow down at once. While no
cut comes, the reservations raise the rate by ``SITE_BACKOFF_STEP_RPS`` every
``SITE_BACKOFF_STEP_INTERVAL`` s; once it is back at the site's budget
(``SITE_MAX_RPS``, the profile's ``max_rps``, at most ``1 / Crawl-delay``) the key
is a plain number again. A site without budget is cut to
``SITE_BACKOFF_START_RPS`` and freed at twice that. Cuts and restores are
counted in the stats hash (``site_rate_cuts``, ``site_rate_restores``).
:func:`read_site_state` reads the object back (``master status``).

On a Redis Cluster a site's key is in its shard (``<spider>:{s<i>}:polite:<site>``,
see :mod:`crawler.core.keys`) and the crawl's stats hash has a slot of its own: the
script then gets the site's key alone and the counts above are added by a
separate ``HINCRBY`` (a round trip more, only for a wait, a cut or a restore).

:class:`SiteWaits` is the worker's local view: how many of its requests are
waiting for a slot of each site, so the scheduler can hand out requests of other
sites first (see :class:`crawler.scheduling.scheduler.ReliableScheduler`). It is
an extension (``EXTENSIONS``), one per crawler, found with ``SiteWaits.of(crawler)``.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from typing import Any

import redis

from crawler.core import defaults
from crawler.core.keys import CrawlKeys
from crawler.core.sites import site_key

# The value of <spider>:polite:<site>: the next slot (Redis clock, ms) as a number
# while the site is at its budget; while it is backed off, a JSON object with
# "next", its current "rate" (req/s), "ceiling" (its budget, 0: none), "changed"
# (ms: last cut or step up), "cut_at", "cuts", "reason", "paused_until".
_STATE_LUA = """
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function load(key)
  local raw = redis.call('GET', key)
  if raw and string.sub(raw, 1, 1) == '{' then
    local state = cjson.decode(raw)
    return tonumber(state.next) or 0, state
  end
  return tonumber(raw or '0') or 0, nil
end
"""

# KEYS: the site's key, the crawl's stats hash (none on a cluster: counted by the
# caller). ARGV: interval in ms (budget and
# Crawl-delay; 0: none), step up (req/s), step interval (ms), the rate at which a
# site without budget is free again. Takes the next slot; while the site is
# backed off, the slot is spaced by its current rate, which climbs back a step
# per step interval. Returns {wait in ms, 1 if the site just got back to its
# budget, current rate in mreq/s (0: at its budget)}.
_RESERVE = (
    _STATE_LUA
    + """
local now = now_ms()
local nxt, state = load(KEYS[1])
local interval = tonumber(ARGV[1])
local restored = 0
if state then
  local target = interval > 0 and 1000 / interval or tonumber(ARGV[4])
  local steps = math.floor((now - state.changed) / tonumber(ARGV[3]))
  if steps > 0 then
    state.rate = state.rate + steps * tonumber(ARGV[2])
    state.changed = state.changed + steps * tonumber(ARGV[3])
  end
  if state.rate >= target then
    restored = 1
    state = nil
    if KEYS[2] then redis.call('HINCRBY', KEYS[2], 'site_rate_restores', 1) end
  else
    interval = math.max(interval, math.ceil(1000 / state.rate))
  end
end
local at = math.max(now, math.floor(nxt))
if state then
  state.next = at + interval
  redis.call('SET', KEYS[1], cjson.encode(state), 'PX', math.floor(at + interval - now) + 600000)
else
  redis.call('SET', KEYS[1], at + interval, 'PX', math.floor(at + interval - now) + 60000)
end
if at > now and KEYS[2] then
  redis.call('HINCRBY', KEYS[2], 'politeness_waits', 1)
  redis.call('HINCRBY', KEYS[2], 'politeness_wait_ms', at - now)
end
return {at - now, restored, state and math.floor(state.rate * 1000) or 0}
"""
)

# KEYS: the site's key, the crawl's stats hash. ARGV: interval in ms (0: no
# budget), pause in ms (Retry-After), reason, factor, lowest rate, cooldown ms,
# the rate a site without budget is cut to, step up (req/s) and its interval (ms),
# kept in the state so that readers can tell the rate as of now. Cuts the site's rate (unless it was
# cut less than the cooldown ago: those answers were sent at the old rate) and
# pauses the site. Returns {1 if cut, rate before, rate after (mreq/s)}.
_CUT = (
    _STATE_LUA
    + """
local now = now_ms()
local nxt, state = load(KEYS[1])
local base, pause = tonumber(ARGV[1]), tonumber(ARGV[2])
local factor = tonumber(ARGV[4])
local ceiling = base > 0 and 1000 / base or 0
local old = state and state.rate or (ceiling > 0 and ceiling or tonumber(ARGV[7]) / factor)
local cut = 0
if not state or now - (tonumber(state.cut_at) or 0) >= tonumber(ARGV[6]) then
  state = state or {cuts = 0}
  state.rate = math.max(old * factor, math.min(tonumber(ARGV[5]), old))
  state.cut_at = now
  state.changed = now
  state.cuts = (tonumber(state.cuts) or 0) + 1
  cut = 1
  if KEYS[2] then redis.call('HINCRBY', KEYS[2], 'site_rate_cuts', 1) end
end
state.reason = ARGV[3]
state.ceiling = ceiling
state.step = tonumber(ARGV[8])
state.step_ms = tonumber(ARGV[9])
if pause > 0 then
  nxt = math.max(nxt, now + pause)
  state.paused_until = now + pause
  state.changed = math.max(state.changed, now + pause)  -- no climbing while paused
end
state.next = nxt
redis.call('SET', KEYS[1], cjson.encode(state), 'PX', math.floor(math.max(0, nxt - now)) + 600000)
return {cut, math.floor(old * 1000), math.floor(state.rate * 1000)}
"""
)


def site_interval(max_rps: float, crawl_delay: float | None) -> float:
    """Seconds between two requests to a site: the stricter of the budget and Crawl-delay."""
    interval = 1.0 / max_rps if max_rps > 0 else 0.0
    return max(interval, crawl_delay or 0.0)


@dataclass(frozen=True)
class BackoffRule:
    """How a site's shared rate is cut and climbs back (the ``SITE_BACKOFF_*`` settings)."""

    factor: float = defaults.SITE_BACKOFF_FACTOR
    cooldown: float = defaults.SITE_BACKOFF_COOLDOWN
    min_rps: float = defaults.SITE_BACKOFF_MIN_RPS
    step_rps: float = defaults.SITE_BACKOFF_STEP_RPS
    step_interval: float = defaults.SITE_BACKOFF_STEP_INTERVAL
    start_rps: float = defaults.SITE_BACKOFF_START_RPS

    @classmethod
    def from_settings(cls, settings: Any) -> BackoffRule:
        return cls(
            factor=min(
                0.99,
                max(0.01, settings.getfloat("SITE_BACKOFF_FACTOR", defaults.SITE_BACKOFF_FACTOR)),
            ),
            cooldown=settings.getfloat("SITE_BACKOFF_COOLDOWN", defaults.SITE_BACKOFF_COOLDOWN),
            min_rps=max(
                0.001, settings.getfloat("SITE_BACKOFF_MIN_RPS", defaults.SITE_BACKOFF_MIN_RPS)
            ),
            step_rps=settings.getfloat("SITE_BACKOFF_STEP_RPS", defaults.SITE_BACKOFF_STEP_RPS),
            step_interval=max(
                0.1,
                settings.getfloat(
                    "SITE_BACKOFF_STEP_INTERVAL", defaults.SITE_BACKOFF_STEP_INTERVAL
                ),
            ),
            start_rps=settings.getfloat("SITE_BACKOFF_START_RPS", defaults.SITE_BACKOFF_START_RPS),
        )


@dataclass(frozen=True)
class Reservation:
    """A slot taken: seconds to wait for it; whether the site just got back to its
    budget; its current rate while backed off (0: at its budget)."""

    wait: float
    restored: bool = False
    rate: float = 0.0


@dataclass(frozen=True)
class Cut:
    """A failure told to the site's budget: whether it cut the rate, from and to (req/s)."""

    cut: bool
    before: float
    after: float


class SiteBudget:
    """The shared slots and rates of every site of a crawl (one Lua call per request)."""

    def __init__(
        self, server: redis.Redis, keys: CrawlKeys, rule: BackoffRule | None = None
    ) -> None:
        self.server = server
        self.keys = keys
        self.rule = rule or BackoffRule()
        self._reserve = server.register_script(_RESERVE)
        self._cut = server.register_script(_CUT)

    def _keys(self, site: str) -> list[str]:
        if self.keys.cluster:  # the stats hash is in another slot: counted after
            return [self.keys.for_site(site).polite(site)]
        return [self.keys.polite(site), self.keys.stats]

    def _count(self, counts: dict[str, int]) -> None:
        """Cluster: add to the crawl's stats what the script could not (one round trip)."""
        counts = {name: count for name, count in counts.items() if count}
        if not self.keys.cluster or not counts:
            return
        with self.server.pipeline(transaction=False) as pipe:
            for name, count in counts.items():
                pipe.hincrby(self.keys.stats, name, count)
            pipe.execute()

    def take_slot(self, site: str, interval: float) -> Reservation:
        """Take the site's next slot at ``interval`` s (or the site's current rate, slower)."""
        rule = self.rule
        wait_ms, restored, rate = self._reserve(
            keys=self._keys(site),
            args=[
                round(interval * 1000, 3),
                rule.step_rps,
                int(rule.step_interval * 1000),
                rule.start_rps * 2,
            ],
        )
        waited = max(0, int(wait_ms))
        self._count(
            {
                "politeness_waits": 1 if waited else 0,
                "politeness_wait_ms": waited,
                "site_rate_restores": int(restored),
            }
        )
        return Reservation(waited / 1000.0, bool(restored), int(rate) / 1000.0)

    def reserve(self, site: str, interval: float) -> float:
        """Take the site's next slot; returns the seconds to wait until it (0: go now)."""
        return self.take_slot(site, interval).wait

    def cut(self, site: str, interval: float, pause: float, reason: str) -> Cut:
        """The site failed (429, 503, a timeout): cut its rate, pause it ``pause`` s."""
        rule = self.rule
        cut, before, after = self._cut(
            keys=self._keys(site),
            args=[
                round(interval * 1000, 3),
                int(pause * 1000),
                reason,
                rule.factor,
                rule.min_rps,
                int(rule.cooldown * 1000),
                rule.start_rps,
                rule.step_rps,
                int(rule.step_interval * 1000),
            ],
        )
        self._count({"site_rate_cuts": int(cut)})
        return Cut(bool(cut), int(before) / 1000.0, int(after) / 1000.0)


def rate_now(state: dict[str, Any], now_ms: float) -> float | None:
    """A backed-off site's rate as of ``now_ms`` (Redis clock), with the steps climbed since
    its last request; ``None`` when it is back at its budget (its next request restores it).
    """
    rate = float(state.get("rate") or 0.0)
    step, step_ms = float(state.get("step") or 0.0), float(state.get("step_ms") or 0.0)
    changed = float(state.get("changed") or now_ms)
    if step > 0 and step_ms > 0 and now_ms > changed:
        rate += (now_ms - changed) // step_ms * step
    ceiling = float(state.get("ceiling") or 0.0)
    if ceiling and rate >= ceiling:
        return None
    return rate


def read_site_state(raw: Any) -> dict[str, Any] | None:
    """The backoff of a site from its key's value (``None``: at its budget)."""
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw or "")
    if not text.startswith("{"):
        return None
    try:
        state = json.loads(text)
    except ValueError:
        return None
    return state if isinstance(state, dict) else None


class SiteWaits:
    """Requests of this worker waiting for a site's slot, per site.

    A site is busy while ``POLITENESS_MAX_WAITING_PER_SITE`` of its requests wait.
    """

    def __init__(self, max_waiting: int = 0) -> None:
        self.max_waiting = max_waiting  # 0: never busy (the scheduler parks nothing)
        self.waiting: Counter[str] = Counter()

    @classmethod
    def from_crawler(cls, crawler: Any) -> SiteWaits:
        return cls(
            crawler.settings.getint(
                "POLITENESS_MAX_WAITING_PER_SITE", defaults.POLITENESS_MAX_WAITING_PER_SITE
            )
        )

    @classmethod
    def of(cls, crawler: Any) -> SiteWaits:
        """The crawler's site waits (``crawler.get_extension``); RuntimeError when not enabled."""
        waits = crawler.get_extension(cls)
        if waits is None:
            raise RuntimeError("crawler.policy.politeness.SiteWaits must be enabled in EXTENSIONS")
        return waits

    def busy(self, url: str) -> bool:
        """Whether enough requests of this URL's site wait already: give others a turn."""
        return bool(self.max_waiting) and self.waiting[site_key(url)] >= self.max_waiting

    def enter(self, site: str) -> None:
        self.waiting[site] += 1

    def leave(self, site: str) -> None:
        self.waiting[site] -= 1
        if self.waiting[site] <= 0:
            del self.waiting[site]
