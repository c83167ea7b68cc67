"""The sites' figures in Redis: one JSON string per site, ``<spider>:checks:<site>``
(on a Redis Cluster in the site's shard, ``<spider>:{s<i>}:checks:<site>``:
:meth:`crawler.core.keys.ShardKeys.checks`).

:func:`add_figures` adds a worker's figures since its last sync to a site's and
returns the sum, in one script call (a ``GET`` and a ``SET ... EX`` inside it: three
Redis commands a site a sync, whatever the number of pages); the script keeps the
bounds of :class:`~.figures.Figures` (the ``cap`` most counted values a group, their
examples only). :func:`read_figures` reads sites back for the master.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from crawler.core.keys import CrawlKeys

from .figures import EXAMPLES, TOP_CAP, Figures

# KEYS[1]: the site's figures; ARGV: the figures to add (JSON), cap, examples, ttl (s)
ADD_SCRIPT = """
local raw = redis.call('GET', KEYS[1])
local cur = {}
if raw then cur = cjson.decode(raw) end
if type(cur.n) ~= 'table' then cur.n = {} end
if type(cur.top) ~= 'table' then cur.top = {} end
if type(cur.ex) ~= 'table' then cur.ex = {} end
local add = cjson.decode(ARGV[1])
local cap, keep, ttl = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
for k, v in pairs(add.n or {}) do cur.n[k] = (cur.n[k] or 0) + v end
for g, values in pairs(add.top or {}) do
  local t = cur.top[g]
  if type(t) ~= 'table' then t = {} end
  local size = 0
  for v, c in pairs(values) do t[v] = (t[v] or 0) + c end
  local all = {}
  for v, c in pairs(t) do size = size + 1; all[size] = {v, c} end
  if size > cap then
    table.sort(all, function(a, b)
      if a[2] ~= b[2] then return a[2] > b[2] end
      return a[1] < b[1]
    end)
    t = {}
    for i = 1, cap do t[all[i][1]] = all[i][2] end
    for i = cap + 1, size do cur.ex[g .. '\\t' .. all[i][1]] = nil end
  end
  cur.top[g] = t
end
for key, urls in pairs(add.ex or {}) do
  local g, v = string.match(key, '^([^\\t]*)\\t(.*)$')
  if (not g) or (type(cur.top[g]) == 'table' and cur.top[g][v]) then
    local list = cur.ex[key]
    if type(list) ~= 'table' then list = {} end
    for _, url in ipairs(urls) do
      if #list >= keep then break end
      local seen = false
      for _, have in ipairs(list) do if have == url then seen = true end end
      if not seen then list[#list + 1] = url end
    end
    if #list > 0 then cur.ex[key] = list end
  end
end
local out = cjson.encode(cur)
if ttl > 0 then redis.call('SET', KEYS[1], out, 'EX', ttl) else redis.call('SET', KEYS[1], out) end
return out
"""


class FiguresStore:
    """The figures of one spider's sites in Redis (the client is injected)."""

    def __init__(self, client: Any, keys: CrawlKeys, cap: int = TOP_CAP, ttl: int = 0) -> None:
        self.client = client
        self.keys = keys
        self.cap = cap
        self.ttl = ttl
        self._script = client.register_script(ADD_SCRIPT)

    def key(self, site: str) -> str:
        return self.keys.for_site(site).checks(site)

    def add(self, site: str, figures: Figures) -> Figures:
        """Add ``figures`` to the site's; the sum of every worker's."""
        payload = json.dumps(figures.to_json(), separators=(",", ":"))
        raw = self._script(keys=[self.key(site)], args=[payload, self.cap, EXAMPLES, self.ttl])
        return decode(raw)

    def read(self, sites: Iterable[str]) -> dict[str, Figures]:
        """The figures of ``sites`` (those with none left out), one round trip per node."""
        sites = list(sites)
        if not sites:
            return {}
        pipe = self.client.pipeline(transaction=False)
        for site in sites:
            pipe.get(self.key(site))
        found = {}
        for site, raw in zip(sites, pipe.execute(), strict=True):
            if raw:
                found[site] = decode(raw)
        return found


def decode(raw: Any) -> Figures:
    if isinstance(raw, bytes):
        raw = raw.decode("utf-8", "replace")
    try:
        return Figures.from_json(json.loads(raw))
    except (TypeError, ValueError):
        return Figures()
