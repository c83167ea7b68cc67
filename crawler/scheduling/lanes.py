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
  waiting for their due time (scores below ``DELAYED_BELOW``, :mod:`crawler.keys`),
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

Every script that touches the queue uses the Lua of :data:`LANES_LUA`, and
everything that counts it goes through :func:`count_queue` / :func:`queue_counts`
(one round trip, one per node on a cluster). Lane keys are built inside the
scripts from the queue's key: on a cluster they share its slot (Redis 7 lets a
script reach undeclared keys of the declared keys' slot).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from crawler.keys import DELAYED_BELOW, DELAYED_SCORE_BASE, CrawlKeys

LANES_SUFFIX = ":lanes"
KEYED = "~"  # the lane index's mark that the sorted set holds requests (score -inf)
INDEX_READ = 16  # entries of the lane index a pop reads at once (more: read again)


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


# Lua: the queue's operations, for every script that touches it. Functions:
#   keep(queue, members): members {score1, payload1, ...} into the sorted set,
#     and the index's mark that the sorted set holds requests;
#   push(queue, members, front): scores below DELAYED_BELOW kept in the sorted
#     set, the others appended to their lane (prepended with front: a recovered
#     lease goes out first), index updated;
#   take(queue, n): up to n {payload, score text, ...}, best first, the ms
#     until the earliest retry still waiting that the pop met is due (-1: none),
#     and the index as the pop left it when it read all of it (else nil): its
#     lanes' names, and ``keyed``: whether it holds the mark;
#   lanes_length(queue): requests in the lanes;
#   ready(queue, listing): requests ready to go (lanes, and the sorted set's
#     ordinary members when the index is marked); take()'s listing, if any,
#     saves reading the index again.
LANES_LUA = f"""
local DELAYED_BELOW = '{DELAYED_BELOW}'
local DELAYED_SCORE_BASE = {DELAYED_SCORE_BASE}
local KEYED = '{KEYED}'
local INDEX_READ = {INDEX_READ}
local function lane_name(score)
  local n = (tonumber(score) or 0) + 0
  if n == math.floor(n) and math.abs(n) < 1e15 then return string.format('%.0f', n) end
  return string.format('%.17g', n)
end
local function keep(queue, members)
  local added = redis.call('ZADD', queue, unpack(members))
  redis.call('ZADD', queue .. '{LANES_SUFFIX}', '-inf', KEYED)
  return added
end
local function push(queue, members, front)
  local lanes, order, keyed = {{}}, {{}}, {{}}
  for i = 1, #members, 2 do
    local score = tonumber(members[i]) or 0
    if score < tonumber(DELAYED_BELOW) then
      keyed[#keyed + 1] = members[i]
      keyed[#keyed + 1] = members[i + 1]
    else
      local name = lane_name(score)
      if not lanes[name] then
        lanes[name] = {{}}
        order[#order + 1] = name
      end
      local lane = lanes[name]
      lane[#lane + 1] = members[i + 1]
    end
  end
  if #keyed > 0 then keep(queue, keyed) end
  if #order == 0 then return end
  local index = {{}}
  for _, name in ipairs(order) do
    local lane = queue .. ':' .. name
    local length = redis.call(front and 'LPUSH' or 'RPUSH', lane, unpack(lanes[name]))
    -- a lane that held requests before is in the index already (a lane leaves it
    -- only when a pop finds it empty): only a lane this push started is added
    if length == #lanes[name] then
      index[#index + 1] = name
      index[#index + 1] = name
    end
  end
  if #index > 0 then redis.call('ZADD', queue .. '{LANES_SUFFIX}', unpack(index)) end
end
local function take_keyed(queue, lo, hi, n, out)
  local got = redis.call('ZRANGEBYSCORE', queue, lo, hi, 'WITHSCORES', 'LIMIT', 0, n)
  if #got == 0 then return 0 end
  local members = {{}}
  for i = 1, #got, 2 do
    members[#members + 1] = got[i]
    out[#out + 1] = got[i]
    out[#out + 1] = got[i + 1]
  end
  redis.call('ZREM', queue, unpack(members))
  return #members
end
local function index_heads(index)
  local heads = redis.call('ZRANGE', index, 0, INDEX_READ - 1, 'WITHSCORES')
  return heads, (heads[1] == KEYED) and 3 or 1
end
local function take(queue, n)
  local out, wait = {{}}, -1
  local index = queue .. '{LANES_SUFFIX}'
  -- the index's first lanes, read once (again only past them): the pop walks them
  -- in order, and what is left of them is the listing ready() counts
  local heads, pos = index_heads(index)
  local marked = pos == 3
  local lane = {{heads[pos], heads[pos + 1]}}
  local looked = marked or #lane == 0
  local keyed = {{}}
  if looked then
    keyed = redis.call('ZRANGE', queue, 0, 0, 'WITHSCORES')
    if #keyed > 0 and tonumber(keyed[2]) < tonumber(DELAYED_BELOW) then
      local t = redis.call('TIME')
      local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
      local due = string.format('%.0f', DELAYED_SCORE_BASE + now)
      take_keyed(queue, '-inf', due, n, out)
      if #out < 2 * n then
        local later = redis.call('ZRANGEBYSCORE', queue, '(' .. due, '(' .. DELAYED_BELOW,
          'WITHSCORES', 'LIMIT', 0, 1)
        if #later > 0 then wait = tonumber(later[2]) - DELAYED_SCORE_BASE - now end
        keyed = redis.call('ZRANGEBYSCORE', queue, DELAYED_BELOW, '+inf', 'WITHSCORES',
          'LIMIT', 0, 1)
      end
    end
  end
  while #out < 2 * n do
    local want = n - #out / 2
    if #keyed > 0 and (#lane == 0 or tonumber(keyed[2]) <= tonumber(lane[2])) then
      take_keyed(queue, DELAYED_BELOW, lane[2] or '+inf', want, out)
      keyed = redis.call('ZRANGEBYSCORE', queue, DELAYED_BELOW, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
    elseif #lane > 0 then
      local got = redis.call('LPOP', queue .. ':' .. lane[1], want)
      if got then
        for i = 1, #got do
          out[#out + 1] = got[i]
          out[#out + 1] = lane[1]
        end
      end
      -- a lane emptied by taking exactly the rest leaves the index at the next pop
      if not got or #got < want then
        redis.call('ZREM', index, lane[1])
        pos = pos + 2
        if pos > #heads and #heads == 2 * INDEX_READ then heads, pos = index_heads(index) end
        lane = {{heads[pos], heads[pos + 1]}}
      end
    else
      break
    end
  end
  local held = false
  if looked then
    held = redis.call('EXISTS', queue) == 1
    if marked and not held then redis.call('ZREM', index, KEYED) end
    if held and not marked then redis.call('ZADD', index, '-inf', KEYED) end
  end
  -- the index now, when the read above held all of it: lanes left, and the mark
  local listing = nil
  if #heads < 2 * INDEX_READ then
    listing = {{keyed = held}}
    for i = pos, #heads, 2 do listing[#listing + 1] = heads[i] end
  end
  return out, wait, listing
end
local function lanes_length(queue)
  local count = 0
  for _, name in ipairs(redis.call('ZRANGE', queue .. '{LANES_SUFFIX}', 0, -1)) do
    if name ~= KEYED then count = count + redis.call('LLEN', queue .. ':' .. name) end
  end
  return count
end
local function ready(queue, listing)
  local count = 0
  if listing then
    -- the index as take() left it: no need to read it again
    if listing.keyed then count = redis.call('ZCOUNT', queue, DELAYED_BELOW, '+inf') end
    for _, name in ipairs(listing) do
      count = count + redis.call('LLEN', queue .. ':' .. name)
    end
    return count
  end
  for _, name in ipairs(redis.call('ZRANGE', queue .. '{LANES_SUFFIX}', 0, -1)) do
    if name == KEYED then
      count = count + redis.call('ZCOUNT', queue, DELAYED_BELOW, '+inf')
    else
      count = count + redis.call('LLEN', queue .. ':' .. name)
    end
  end
  return count
end
"""

# requeue(inflight, queue, seeds): every payload of a lease hash (of
# crawler.leasing.ledger: ids "<kind>|<score>|<sha1>") back where it came from:
# a seed to the head of ``seeds`` (a list), a request to the head of the lane of
# the score in its lease id (it was taken first: it goes out first again; a
# retry that was waiting: into the sorted set with its score). Returns the
# count. On a cluster the seeds' hash and a shard's are apart: ``seeds`` is
# false for a shard's hash, ``queue`` for the seeds'.
REQUEUE_LUA = (
    LANES_LUA
    + """
local function requeue(inflight, queue, seeds)
  local entries = redis.call('HGETALL', inflight)
  local members = {}
  for i = 1, #entries, 2 do
    local kind, score = string.match(entries[i], '^(%a)|([^|]*)|')
    if kind == 's' and seeds then
      redis.call('LPUSH', seeds, entries[i + 1])
    else
      members[#members + 1] = tonumber(score) or 0
      members[#members + 1] = entries[i + 1]
      if #members >= 1000 then
        push(queue, members, true)
        members = {}
      end
    end
  end
  if #members > 0 then push(queue, members, true) end
  redis.call('DEL', inflight)
  return #entries / 2
end
"""
)

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

# KEYS: queue. Returns {ready, retries waiting, the sorted set's first score or ''}
# (the sorted set counted whether the index is marked or not; with nothing in
# it, the count is a ZCARD, a ZRANGE of the index and an LLEN per lane).
COUNT_LUA = (
    LANES_LUA
    + """
local size = redis.call('ZCARD', KEYS[1])
if size == 0 then return {lanes_length(KEYS[1]), 0, ''} end
local waiting = redis.call('ZCOUNT', KEYS[1], '-inf', '(' .. DELAYED_BELOW)
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return {lanes_length(KEYS[1]) + size - waiting, waiting, first[2]}
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


def count_queue(pipe: Any, queue: str) -> Any:
    """Queue the count of ``queue`` on a pipeline (plain or cluster: an ``EVAL`` of one
    key, sent to the key's node: a cluster pipeline has no eval() of its own); its
    reply goes to :meth:`QueueCount.add`."""
    return pipe.execute_command("EVAL", COUNT_LUA, 1, queue)


def queue_counts(client: Any, keys: CrawlKeys) -> QueueCount:
    """The crawl's queue, counted in one round trip (one per node on a cluster)."""
    pipe = client.pipeline(transaction=False)
    for shard in keys.all_shards():
        count_queue(pipe, shard.requests)
    return QueueCount.of(pipe.execute())


def queued(client: Any, queue: str) -> int:
    """Requests in one queue (one shard's on a cluster), waiting retries included."""
    return QueueCount().add(client.execute_command("EVAL", COUNT_LUA, 1, queue)).total


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
