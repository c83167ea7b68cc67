"""The request queue's layout in Redis: one list per priority ("lane"), and a sorted set.

A sorted set costs about 100 bytes per member besides the member itself; a list
packs its members in listpacks at a few bytes each. So the bulk of the queue
``<s>:requests`` is kept in lists:

* **lanes**: ``<queue>:<score>``, one list per score (``-priority`` as a whole
  number's text: ``ecommerce:requests:0``, ``:-1``), FIFO within a lane; on a
  cluster ``<s>:{s<i>}:requests:<score>``, in its shard's slot (same hash tag);
* **the lane index** ``<queue>:lanes``: a sorted set of the non-empty lanes
  (member: the score's text), so a pop finds the best lane with one ``ZRANGE``.
  Every non-empty lane is in it, so a push adds only the lanes it starts (its
  ``RPUSH`` answers the lane's length); a lane a pop empties by taking exactly
  what it held leaves the index at the next pop (counts read its length, 0);
* **the sorted set** ``<queue>`` itself, for what must be keyed or timed: retries
  waiting for their due time (scores below ``DELAYED_BELOW``, :mod:`crawler.core.keys`),
  requests the master queues once however often it is asked (``master recrawl``,
  dead-letter replay: ``ZADD`` keeps one copy of a payload), and a queue written
  by a previous version (every request there).

A pop hands out, best first: due retries; then, score by score, the sorted
set's ordinary members of that score or better, then the lane of that score
(an old queue's members drain first; priority order holds across both). The
index holds a mark (member ``~``, score ``-inf``) while the sorted set holds
anything, so that with nothing there a pop is a ``ZRANGE`` of the index and one
``LPOP`` of up to ``n`` from the best lane. A pop that finds no lane looks at the
sorted set anyway and marks the index if it holds requests (an earlier version's
queue had no mark); a worker marks it when its queue opens (:func:`mark_earlier_queue`).

Every script that touches the queue uses the Lua of :data:`LANES_LUA`
(:mod:`crawler.scheduling.lanes_lua`), and
everything that counts it goes through :func:`count_queue` / :func:`queue_counts`
(one round trip, one per node on a cluster). Lane keys are built inside the
scripts from the queue's key: on a cluster they share its slot (Redis 7 lets a
script reach undeclared keys of the declared keys' slot).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from crawler.core.keys import DELAYED_BELOW, CrawlKeys
from crawler.scheduling.lanes_lua import (  # noqa: F401 (the queue's Lua, used from here)
    INDEX_READ,
    KEYED,
    LANES_LUA,
    LANES_SUFFIX,
    REQUEUE_LUA,
)


def lane_key(queue: str, score: float) -> str:
    """The lane of ``score`` in ``queue`` (``lane_name`` of :data:`LANES_LUA`)."""
    return f"{queue}:{lane_name(score)}"


def lane_name(score: float) -> str:
    """A score's text as the scripts write it: a whole number as its digits."""
    value = float(score) + 0.0  # no "-0"
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.17g}"  # Lua's string.format('%.17g')


def index_key(queue: str) -> str:
    """The sorted set of the non-empty lanes of ``queue``."""
    return queue + LANES_SUFFIX


# KEYS: queue. ARGV: score1, payload1, ... Queues them (lanes or sorted set, by score).
PUSH_LUA = (
    LANES_LUA
    + """
push(KEYS[1], ARGV, false)
return #ARGV / 2
"""
)

# KEYS: queue. ARGV: score1, payload1, ... Into the sorted set (once each: what
# the master queues, ``recrawl``, ``dead requeue``); returns how many were new.
KEEP_LUA = (
    LANES_LUA
    + """
return keep(KEYS[1], ARGV)
"""
)

# KEYS: queue. ARGV: '1' to count its browser queue too. Returns {ready, retries
# waiting, the sorted sets' first score or ''} (a sorted set counted whether the
# index is marked or not; with nothing in it, the count is a ZCARD, a ZRANGE of
# the index and an LLEN per lane).
COUNT_LUA = (
    LANES_LUA
    + """
local function count(queue)
  local size = redis.call('ZCARD', queue)
  if size == 0 then return lanes_length(queue), 0, nil end
  local waiting = redis.call('ZCOUNT', queue, '-inf', '(' .. DELAYED_BELOW)
  local first = redis.call('ZRANGE', queue, 0, 0, 'WITHSCORES')
  return lanes_length(queue) + size - waiting, waiting, first[2]
end
local ready, waiting, first = count(KEYS[1])
if ARGV[1] == '1' then
  local more, later, other = count(browser_queue(KEYS[1]))
  ready, waiting = ready + more, waiting + later
  if other and (not first or tonumber(other) < tonumber(first)) then first = other end
end
return {ready, waiting, first or ''}
"""
)


@dataclass
class QueueCount:
    """What a request queue holds (summed over the shards on a cluster)."""

    ready: int = 0  # requests ready to go: the lanes and the sorted set's ordinary members
    delayed: int = 0  # retries waiting for their due time
    first_delayed: float | None = None  # the earliest of those's score (None: none)

    @property
    def total(self) -> int:
        return self.ready + self.delayed

    @classmethod
    def of(cls, replies: list[Any]) -> QueueCount:
        """The sum of :data:`COUNT_LUA` replies (one per shard)."""
        counted = cls()
        for reply in replies:
            counted.add(reply)
        return counted

    def add(self, reply: Any) -> QueueCount:
        """Add one queue's :data:`COUNT_LUA` reply."""
        ready, delayed, first = reply
        self.ready += int(ready)
        self.delayed += int(delayed)
        if first not in (b"", "", None):
            score = float(first)
            if score < DELAYED_BELOW and (self.first_delayed is None or score < self.first_delayed):
                self.first_delayed = score
        return self


def count_queue(pipe: Any, queue: str, with_browser: bool = False) -> Any:
    """Queue the count of ``queue`` (``with_browser``: and of its browser queue, in the
    same call) on a pipeline (plain or cluster: an ``EVAL`` of one key, sent to the
    key's node: a cluster pipeline has no eval() of its own); its reply goes to
    :meth:`QueueCount.add`."""
    return pipe.execute_command("EVAL", COUNT_LUA, 1, queue, "1" if with_browser else "0")


def queue_counts(client: Any, keys: CrawlKeys, browser: bool = False) -> QueueCount:
    """The crawl's queue (``browser``: its queue of requests that need a browser),
    counted in one round trip (one per node on a cluster)."""
    pipe = client.pipeline(transaction=False)
    for shard in keys.all_shards():
        count_queue(pipe, shard.browser_requests if browser else shard.requests)
    return QueueCount.of(pipe.execute())


def queued(client: Any, queue: str) -> int:
    """Requests in one queue (one shard's on a cluster), waiting retries included."""
    return QueueCount().add(client.execute_command("EVAL", COUNT_LUA, 1, queue, "0")).total


def _members(requests: dict[Any, float]) -> list[Any]:
    """A script's ARGV of requests (payload -> score): score1, payload1, ..."""
    return [value for payload, score in requests.items() for value in (score, payload)]


def keep_requests(client: Any, queue: str, requests: dict[Any, float]) -> Any:
    """Queue payloads (payload -> score) in the sorted set, once each (a payload there
    already is not added again); returns how many were new, or the pipeline."""
    return client.execute_command("EVAL", KEEP_LUA, 1, queue, *_members(requests))


# KEYS: queue. Marks the index when the sorted set holds anything (an earlier
# version's queue has no mark). Returns 1 if it does.
_MARK_LUA = f"""
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('ZADD', KEYS[1] .. '{LANES_SUFFIX}', '-inf', '{KEYED}')
return 1
"""


def mark_earlier_queue(client: Any, keys: CrawlKeys) -> int:
    """Mark the lane index of every shard whose sorted set holds requests (one round
    trip, one per node on a cluster), so that pops look there: a queue written by an
    earlier version, all in the sorted set. Returns the shards marked."""
    pipe = client.pipeline(transaction=False)
    for shard in keys.all_shards():
        pipe.execute_command("EVAL", _MARK_LUA, 1, shard.requests)
    return sum(int(marked) for marked in pipe.execute())


def push_requests(client: Any, queue: str, requests: dict[bytes, float]) -> Any:
    """Queue payloads (payload -> score) as the workers do: into their lanes (a score
    below ``DELAYED_BELOW``: into the sorted set). ``client`` may be a pipeline."""
    return client.execute_command("EVAL", PUSH_LUA, 1, queue, *_members(requests))


def queue_keys(client: Any, queue: str) -> list[str]:
    """Every key of ``queue``: its sorted set, its lane index and its lanes."""
    names = [name.decode() for name in client.zrange(index_key(queue), 0, -1)]
    return [queue, index_key(queue), *(f"{queue}:{name}" for name in names if name != KEYED)]
