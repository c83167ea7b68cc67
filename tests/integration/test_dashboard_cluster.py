"""``master serve``'s JSON API on a real uvicorn and a real 3-node Redis Cluster.

The crawl's state is written by hand in several sites' shards (on every node,
``tests/support/cluster_crawl.py``); each route must answer the sums over the shards,
and its writes (seeds, requeue, pause) must land where the workers read them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest
from redis.cluster import RedisCluster as ClusterClient

from crawler.core.layout import layout_key
from master.web.config import DashboardConfig
from tests.support.cluster_crawl import KEYS, SITES, fill_crawl, flush, payload
from tests.support.dashboard import DashboardServer, store_args
from tools.redis_cluster import RedisCluster

# the module's one 3-node cluster (``cluster``); ``client`` below is this module's own
pytest_plugins = ["tests.integration.cluster_support"]


@pytest.fixture
def client(cluster: RedisCluster) -> Iterator[ClusterClient]:
    connection = cluster.client()
    flush(connection)
    yield connection
    flush(connection)
    connection.close()


def serve(url: str, keys: object = KEYS) -> DashboardServer:
    config = DashboardConfig(
        redis_url=url,
        keys=keys,  # type: ignore[arg-type]
        store_args=store_args(),
        allow_private_networks="127.0.0.1",
    )
    return DashboardServer(config)


@pytest.fixture
def api(cluster: RedisCluster, client: ClusterClient) -> Iterator[httpx.Client]:
    # every node listed, as REDIS_URL may list them
    with (
        serve(cluster.startup_urls) as server,
        httpx.Client(base_url=server.url + "/api/v1", timeout=30) as http,
    ):
        yield http


def test_status_and_workers_sum_every_shard(api: httpx.Client, client: ClusterClient) -> None:
    written = fill_crawl(client)
    status = api.get("/status").json()
    assert status["queued_requests"] == written.queued
    assert status["backoff"]["retries_waiting"] == written.retries
    assert status["seen_fingerprints"] == written.fingerprints
    assert status["in_flight"] == written.leases
    assert status["dead_letters"] == 3
    assert status["items_stored"] == 42
    assert [site["site"] for site in status["backoff"]["sites"]] == [written.backoff_site]
    workers = api.get("/workers").json()
    assert workers["total"]["workers"] == 3 and workers["total"]["pages"] == 47
    assert api.get("/series").status_code == 200
    assert api.get("/invalid").json()["total"] == 2
    assert api.get("/dead/reasons").json()["total"] == 3


def test_seeds_pause_and_dead_letters(api: httpx.Client, client: ClusterClient) -> None:
    fill_crawl(client)
    seeds = "".join(f"http://{site}/\n" for site in SITES[:2])
    answer = api.post("/seeds", content=seeds, headers={"Content-Type": "text/plain"})
    assert answer.status_code == 200, answer.text
    assert answer.json()["accepted"] == 2
    assert client.llen(KEYS.start_urls) == 2
    assert json.loads(client.get(layout_key(KEYS)) or b"{}") == {"shards": 16}

    assert api.post("/pause").json()["changed"] is True
    assert api.get("/status").json()["state"] == "paused"
    assert api.post("/resume").json()["changed"] is True

    moved = api.post("/dead/requeue", json={"reason": "HTTP 500"}).json()
    assert (moved["requests"], moved["remaining"]) == (2, 1)
    assert client.zscore(KEYS.for_site(SITES[3]).requests, payload(f"http://{SITES[3]}/d/1")) == 0
    assert api.post("/dead/clear", json={}).json() == {"cleared": 1}
    assert api.get("/status").json()["pending_seeds"] == 2


def test_a_write_with_another_shard_count_is_refused(
    cluster: RedisCluster, client: ClusterClient
) -> None:
    from crawler.core.keys import CrawlKeys

    fill_crawl(client)
    client.set(layout_key(KEYS), json.dumps({"shards": 16}))
    with (
        serve(cluster.url, CrawlKeys.layout(cluster=True, shards=8)) as server,
        httpx.Client(base_url=server.url + "/api/v1", timeout=30) as http,
    ):
        answer = http.post("/dead/requeue", json={})
        assert answer.status_code == 409
        assert "REDIS_CLUSTER_SHARDS=16" in answer.json()["detail"]
        seeded = http.post("/seeds", content="http://127.0.0.1:8001/\n")
        assert seeded.status_code == 409
    assert client.llen(KEYS.dead) == 3
