"""A crawl's state written by hand on a real Redis Cluster, as the workers would write it.

For the master's tests on a cluster: :func:`fill_crawl` puts requests in the
queues of several sites' shards (some of them retries waiting for their time),
fingerprints, leases of requests and of seeds, a site in backoff, worker records,
stats, dead letters and invalid items, all through :class:`crawler.core.keys.CrawlKeys`,
and returns what it wrote so that tests check the master's figures against it.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from redis.cluster import RedisCluster as ClusterClient

from crawler.core.keys import DELAYED_SCORE_BASE, CrawlKeys
from crawler.core.sites import site_key
from crawler.scheduling.lanes import push_requests
from master.requeue import encode, recrawl_request
from tests.support.cluster import flush_all as flush

__all__ = ["flush"]

KEYS = CrawlKeys.layout(cluster=True)  # 16 shards: the default
# loopback sites; their shards are on every node of a 3-node cluster (checked by the tests)
SITES = [f"127.0.0.1:{port}" for port in range(8001, 8009)]


def node_of(client: ClusterClient, key: str) -> str:
    node = client.get_node_from_key(key)
    return f"{node.host}:{node.port}"


def keys_per_node(client: ClusterClient, pattern: str = KEYS.all_pattern) -> dict[str, int]:
    counts = {}
    for node in client.get_primaries():
        plain = client.get_redis_connection(node)
        counts[f"{node.host}:{node.port}"] = sum(1 for _ in plain.scan_iter(match=pattern))
    return counts


def payload(url: str) -> bytes:
    """A request as the queue stores it."""
    return encode(recrawl_request(url))


def worker_record(worker: str, **fields: Any) -> dict[str, Any]:
    now = time.time()
    record = {
        "worker": worker,
        "host": "box",
        "pid": 1,
        "state": "running",
        "started_at": now - 100,
        "updated_at": now,
        "finished_at": None,
        "elapsed": 100.0,
        "idle_tail": 0.0,
        "pages": 0,
        "items": 0,
        "pages_per_min": 0.0,
        "store": "",
        "finish_reason": None,
    }
    record.update(fields)
    return record


def dead_letter(url: str, reason: str, request: bytes | None = None) -> str:
    letter: dict[str, Any] = {"url": url, "reason": reason, "worker": "w1", "time": time.time()}
    if request is not None:
        letter["request"] = request.decode()
    return json.dumps(letter)


@dataclass
class Written:
    """What :func:`fill_crawl` wrote."""

    queued: int = 0  # ready requests, over every shard
    retries: int = 0  # retries waiting for their time
    fingerprints: int = 0
    leases: int = 0  # of requests and of seeds
    queued_per_site: Counter[str] = field(default_factory=Counter)
    dead: list[str] = field(default_factory=list)
    invalid: int = 0
    stats: dict[str, int] = field(default_factory=dict)
    backoff_site: str = ""


def fill_crawl(client: ClusterClient, keys: CrawlKeys = KEYS) -> Written:
    written = Written()
    now_ms = int(time.time() * 1000)
    for number, site in enumerate(SITES):
        shard = keys.for_site(site)
        ready = {payload(f"http://{site}/p/{n}.html"): 0 for n in range(number + 1)}
        push_requests(client, shard.requests, ready)
        written.queued += len(ready)
        written.queued_per_site[site] += len(ready)
        if number % 3 == 0:  # a retry waiting for its time, due in 30 s + number s
            due = DELAYED_SCORE_BASE + now_ms + 30_000 + number * 1000
            client.zadd(shard.requests, {payload(f"http://{site}/retry.html"): due})
            written.retries += 1
        prints = [bytes([number, n]) * 10 for n in range(2 * number + 1)]
        client.sadd(shard.dupefilter, *prints)
        written.fingerprints += len(prints)
        leases = {
            f"lease-{number}-{n}": payload(f"http://{site}/l/{n}") for n in range(number % 2 + 1)
        }
        client.hset(shard.inflight("w1"), mapping=leases)  # type: ignore[arg-type]
        written.leases += len(leases)
    client.hset(
        keys.seed_inflight("w1"), mapping={"seed-lease": '{"url": "http://127.0.0.1:8001/"}'}
    )
    written.leases += 1
    written.backoff_site = SITES[1]
    state = {
        "rate": 0.5,
        "ceiling": 2.0,
        "cuts": 1,
        "reason": "HTTP 429",
        "cut_at": now_ms,
        "changed": now_ms,
    }
    client.set(keys.for_site(SITES[1]).polite(SITES[1]), json.dumps(state))
    client.set(keys.for_site(SITES[2]).polite(SITES[2]), str(now_ms))  # at its budget
    written.stats = {"items_stored": 42, "items_invalid": 3, "requests_refused": 1}
    client.hset(keys.stats, mapping=written.stats)  # type: ignore[arg-type]
    for worker, live, pages in (("w1", True, 30), ("w2", True, 12), ("w0", False, 5)):
        client.hset(keys.workers, worker, json.dumps(worker_record(worker, pages=pages)))
        if live:
            client.set(keys.alive(worker), "1", ex=600)
    written.dead = [
        dead_letter(f"http://{SITES[3]}/d/1", "HTTP 500", payload(f"http://{SITES[3]}/d/1")),
        dead_letter(f"http://{SITES[5]}/d/2", "HTTP 500", payload(f"http://{SITES[5]}/d/2")),
        dead_letter(f"http://{SITES[6]}/", "DNS lookup failed"),  # a seed: no request
    ]
    client.rpush(keys.dead, *written.dead)
    invalid = {"item": {"url": "u"}, "errors": [{"field": "price", "message": "missing"}]}
    client.rpush(keys.invalid, json.dumps(invalid), json.dumps(invalid))
    written.invalid = 2
    client.hset(keys.sites, mapping={f"pages {SITES[0]}": 7, f"products {SITES[0]}": 5})
    return written


def site_of_payload(raw: bytes) -> str:
    from crawler.scheduling.serializer import loads

    return site_key(str(loads(raw)["url"]))
