"""The Lua of :class:`crawler.leasing.batch.OutputBatch`'s one script call (the
module's doc says what it does): links checked and queued (into the browser queue
beside the queue for those that need a browser), finished leases deleted, and a pop."""

from __future__ import annotations

from crawler.scheduling.bloom import BLOOM_LUA
from crawler.scheduling.lanes import LANES_LUA

# ARGV: n links, n to pop, 1 to read the queue's depth after the pop (else 0),
# bloom m, bloom k, the pop's lane hint (take() of lanes_lua; '' for none), then
# n x (fingerprint, score, payload), then finished leases. A score written
# 'b<score>' is a link that needs a browser: into the browser queue.
# KEYS: dupefilter (set or Bloom string), queue, inflight, [bloom meta]. Returns
# {added flags (1/0 per link), {lease1, payload1, ...}, requests left in the
# queue after the pop (-1: not read), ms until the earliest waiting retry the pop
# met is due (-1: none), the lane to pop next ('' : read the index)}.
_HEAD = """
local n = tonumber(ARGV[1])
local npop = tonumber(ARGV[2])
local fps, added = {}, {}
for i = 1, n do fps[i] = ARGV[3 * i + 4] end
local function split(seen)
  local new, members, browser, batch = {}, {}, {}, {}
  for i = 1, n do
    local fp = fps[i]
    if seen[i] == 0 and not batch[fp] then
      batch[fp] = true
      new[#new + 1] = fp
      local score = ARGV[3 * i + 5]
      local into = members
      if string.byte(score, 1) == 98 then  -- 'b'
        into, score = browser, string.sub(score, 2)
      end
      into[#into + 1] = score
      into[#into + 1] = ARGV[3 * i + 6]
      added[i] = 1
    else
      added[i] = 0
    end
  end
  return new, members, browser
end
local function queue_links(members, browser)
  if #members > 0 then push(KEYS[2], members, false) end
  if #browser > 0 then push(browser_queue(KEYS[2]), browser, false) end
end
"""

_DEDUPE_SET = """
if n > 0 then
  local new, members, browser = split(redis.call('SMISMEMBER', KEYS[1], unpack(fps)))
  if #new > 0 then
    redis.call('SADD', KEYS[1], unpack(new))
    queue_links(members, browser)
  end
end
"""

_DEDUPE_BLOOM = """
if n > 0 then
  local m, k = tonumber(ARGV[4]), tonumber(ARGV[5])
  local new, members, browser = split(bloom_seen(KEYS[1], fps, m, k))
  if #new > 0 then
    bloom_add(KEYS[1], new, m, k)
    redis.call('HINCRBY', KEYS[4], 'count', #new)
    queue_links(members, browser)
  end
end
"""

_TAIL = """
local first = 3 * n + 7
if #ARGV >= first then
  redis.call('HDEL', KEYS[3], unpack(ARGV, first, #ARGV))
end
local out, depth, wait, best = {}, -1, -1, ''
if npop > 0 then
  local items, listing
  items, wait, listing, best = take(KEYS[2], npop, ARGV[6])
  if #items > 0 then
    local fields = {}
    for i = 1, #items, 2 do
      local lease = 'r|' .. items[i + 1] .. '|' .. redis.sha1hex(items[i])
      fields[#fields + 1] = lease
      fields[#fields + 1] = items[i]
      out[#out + 1] = lease
      out[#out + 1] = items[i]
    end
    redis.call('HSET', KEYS[3], unpack(fields))
  end
  if #items < 2 * npop then
    depth = 0
  elseif ARGV[3] == '1' then
    depth = ready(KEYS[2], listing)
  end
end
return {added, out, depth, wait, best}
"""

FLUSH_LUA = LANES_LUA + _HEAD + _DEDUPE_SET + _TAIL
FLUSH_BLOOM_LUA = BLOOM_LUA + LANES_LUA + _HEAD + _DEDUPE_BLOOM + _TAIL
