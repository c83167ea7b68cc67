"""The Lua of the request queue's lanes (:mod:`crawler.scheduling.lanes` documents
the layout): the functions every script that touches the queue is built from."""

from __future__ import annotations

from crawler.core.keys import DELAYED_BELOW, DELAYED_SCORE_BASE
from crawler.scheduling.wakeup import WAKE_LUA

LANES_SUFFIX = ":lanes"
KEYED = "~"  # the lane index's mark that the sorted set holds requests (score -inf)
INDEX_READ = 16  # entries of the lane index a pop reads at once (more: read again)

# Lua: the queue's operations, for every script that touches it. Functions:
#   keep(queue, members): members {score1, payload1, ...} into the sorted set,
#     and the index's mark that the sorted set holds requests;
#   push(queue, members, front): scores below DELAYED_BELOW kept in the sorted
#     set, the others appended to their lane (prepended with front: a recovered
#     lease goes out first), index updated;
#   take(queue, n, hint): up to n {payload, score text, ...}, best first, the ms
#     until the earliest retry still waiting that the pop met is due (-1: none),
#     the index as the pop left it when it read all of it (else nil): its lanes'
#     names, and ``keyed``: whether it holds the mark; and the lane to pop next
#     ('' when the index holds the mark or no lane). ``hint``: that lane as the
#     caller's last pop named it, when nothing can have changed the index's head
#     since (no wake-up heard, no lane started in this script): popped without
#     reading the index, which is read only when the lane runs short;
#   lanes_length(queue): requests in the lanes;
#   browser_queue(queue): the queue of requests that need a browser beside
#     ``queue`` (``...:requests`` -> ``...:browser_requests``: same hash tag, so
#     the same slot on a cluster), laid out the same way;
#   ready(queue, listing): requests ready to go (lanes, and the sorted set's
#     ordinary members when the index is marked); take()'s listing, if any,
#     saves reading the index again.
LANES_LUA = WAKE_LUA + f"""
local DELAYED_BELOW = '{DELAYED_BELOW}'
local DELAYED_SCORE_BASE = {DELAYED_SCORE_BASE}
local KEYED = '{KEYED}'
local INDEX_READ = {INDEX_READ}
local function browser_queue(queue)
  return (string.gsub(queue, 'requests$', 'browser_requests'))
end
local function lane_name(score)
  local n = (tonumber(score) or 0) + 0
  if n == math.floor(n) and math.abs(n) < 1e15 then return string.format('%.0f', n) end
  return string.format('%.17g', n)
end
local function keep(queue, members)
  local added = redis.call('ZADD', queue, unpack(members))
  redis.call('ZADD', queue .. '{LANES_SUFFIX}', '-inf', KEYED)
  if added > 0 then wake(queue) end
  return added
end
local started = false  -- a push of this script started a lane (take() then reads the index)
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
  if #index > 0 then
    redis.call('ZADD', queue .. '{LANES_SUFFIX}', unpack(index))
    wake(queue)  -- work where there was none: idle workers take it now
    started = true
  end
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
local function take(queue, n, hint)
  local out, wait = {{}}, -1
  local index = queue .. '{LANES_SUFFIX}'
  if hint and hint ~= '' and not started then
    local got = redis.call('LPOP', queue .. ':' .. hint, n)
    if got then
      for i = 1, #got do
        out[#out + 1] = got[i]
        out[#out + 1] = hint
      end
    end
    if #out == 2 * n then return out, wait, nil, hint end
  end
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
  return out, wait, listing, (not held and #lane > 0) and lane[1] or ''
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
# the score in its lease id, in ``queue`` (kind ``r``) or in its browser queue
# (kind ``b``: it was popped from there) (it was taken first: it goes out first again; a
# retry that was waiting: into the sorted set with its score). Returns the
# count. On a cluster the seeds' hash and a shard's are apart: ``seeds`` is
# false for a shard's hash, ``queue`` for the seeds'.
REQUEUE_LUA = (
    LANES_LUA
    + """
local function requeue(inflight, queue, seeds)
  local entries = redis.call('HGETALL', inflight)
  local members, browser, woke = {}, {}, false
  for i = 1, #entries, 2 do
    local kind, score = string.match(entries[i], '^(%a)|([^|]*)|')
    if kind == 's' and seeds then
      redis.call('LPUSH', seeds, entries[i + 1])
      if not woke then wake(seeds) end
      woke = true
    else
      local into = (kind == 'b') and browser or members
      into[#into + 1] = tonumber(score) or 0
      into[#into + 1] = entries[i + 1]
      if #members >= 1000 then
        push(queue, members, true)
        members = {}
      end
      if #browser >= 1000 then
        push(browser_queue(queue), browser, true)
        browser = {}
      end
    end
  end
  if #members > 0 then push(queue, members, true) end
  if #browser > 0 then push(browser_queue(queue), browser, true) end
  redis.call('DEL', inflight)
  return #entries / 2
end
"""
)
