"""Real workers crawl real demo shops through a real 3-node Redis Cluster started here."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from redis.cluster import RedisCluster as ClusterClient

from crawler.core.keys import CrawlKeys
from crawler.core.sites import site_key
from tests.support.cluster import flush_all
from tools.redis_cluster import RedisCluster
from tools.redis_server import free_port_below

from .conftest import CRAWL_TIMEOUT, Crawl, freeze_when, page_fetches

pytestmark = pytest.mark.workers

KEYS = CrawlKeys.layout("ecommerce", cluster=True)  # REDIS_CLUSTER_SHARDS' default, 16


class ClusterCrawl(Crawl):
    """A :class:`Crawl` whose Redis is a cluster: workers and master get every node's URL."""

    def __init__(self, cluster: RedisCluster, workdir: Path) -> None:
        super().__init__(cluster.url, workdir)
        self.client.close()
        self.client = ClusterClient.from_url(cluster.url)  # type: ignore[assignment]
        self.env.update(REDIS_URL=cluster.startup_urls, REDIS_CLUSTER="true")

    def keys_matching(self, pattern: str) -> list[str]:
        return [
            key.decode()
            for key in self.client.scan_iter(
                match=pattern, count=1000, target_nodes=ClusterClient.PRIMARIES
            )
        ]

    def leases_of(self, worker: str) -> int:
        keys = [shard.inflight(worker) for shard in KEYS.all_shards()]
        return sum(self.client.hlen(key) for key in [*keys, KEYS.seed_inflight(worker)])


@pytest.fixture(scope="module")
def cluster() -> Iterator[RedisCluster]:
    with RedisCluster(primaries=3) as started:
        yield started


@pytest.fixture
def crawl(cluster, tmp_path) -> Iterator[ClusterCrawl]:  # type: ignore[no-untyped-def]
    crawl = ClusterCrawl(cluster, tmp_path)
    flush_all(crawl.client)  # type: ignore[arg-type]
    yield crawl
    crawl.cleanup()


def _shops_on_every_node(cluster, shop_factory, count, **options):  # type: ignore[no-untyped-def]
    """``count`` shops whose sites' queues are on ``count`` different primaries."""
    shops, nodes = [], set()
    while len(shops) < count:
        port = free_port_below(55536)
        node = cluster.primary_of(KEYS.for_site(f"127.0.0.1:{port}").requests).port
        if node in nodes:
            continue
        nodes.add(node)
        shops.append(shop_factory(port=port, **options))
    return shops


def _stored(crawl: Crawl) -> list[str]:
    with sqlite3.connect(crawl.workdir / "products.sqlite3") as db:
        return [url for (url,) in db.execute("select url from products")]


def _product_urls(shop) -> set[str]:  # type: ignore[no-untyped-def]
    return {shop.url.rstrip("/") + path for path in shop.catalog.product_paths()}


@pytest.mark.timeout(600)
def test_two_workers_crawl_three_shops_on_a_cluster_once(crawl, cluster, shop_factory):
    # 3 x 200 products, about 700 pages: a crawl long enough for both workers to pop,
    # lease and finish in every shard many times (3 x 500 cost the suite 30 s of CPU more)
    shops = _shops_on_every_node(cluster, shop_factory, 3, products=200, latency_ms=5)
    crawl.pause()
    for worker_id in ("w1", "w2"):
        crawl.start_worker(worker_id, MAX_IDLE_TIME_BEFORE_CLOSE=5)
    crawl.wait_open(2)
    crawl.seed(*(shop.url for shop in shops))
    crawl.resume()
    crawl.wait_workers(CRAWL_TIMEOUT * 2)
    crawl.assert_clean_logs()

    for shop in shops:
        fetched = page_fetches(shop)
        expected = shop.catalog.crawlable_paths()
        assert set(fetched) == expected, sorted(expected - set(fetched))[:10]
        twice = {path: n for path, n in fetched.items() if n > 1}
        assert not twice, f"fetched more than once: {twice}"

    # every product stored once, each scraped once
    stored = _stored(crawl)
    products = set().union(*(_product_urls(shop) for shop in shops))
    assert len(products) == 600
    assert sorted(stored) == sorted(products)
    records = [json.loads(raw) for raw in crawl.client.hvals(KEYS.workers)]
    assert len(records) == 2 and all(record["pages"] > 0 for record in records), records
    assert sum(record["items"] for record in records) == len(products)

    # the crawl's keys are spread: on every primary, and in the shards of the three sites
    for node in crawl.client.get_primaries():
        assert crawl.client.dbsize(target_nodes=node) > 0, node
    shards = {key.split(":")[1] for key in crawl.keys_matching("ecommerce:{s*}:dupefilter")}
    assert shards == {KEYS.for_site(site_key(shop.url)).tag for shop in shops}
    assert crawl.keys_matching(KEYS.inflight_pattern) == []  # every lease finished

    # the master's figures are the sums over every shard on every node
    result = crawl.master("status", "--json")
    assert result.returncode == 0, result.stderr
    status = json.loads(result.stdout)
    assert status["items_stored"] == len(products)
    assert status["queued_requests"] == 0 and status["in_flight"] == 0
    assert status["seeded_urls"] == 3 and status["pending_seeds"] == 0
    fingerprints = sum(
        crawl.client.scard(key) for key in crawl.keys_matching("ecommerce:{s*}:dupefilter")
    )
    pages = sum(len(shop.catalog.crawlable_paths()) for shop in shops)
    assert status["seen_fingerprints"] == fingerprints >= pages
    assert status["known_workers"] == 2 and status["live_workers"] == 0  # both finished
    report = crawl.master("report", "--json")
    assert report.returncode == 0, report.stderr
    assert sum(worker["items"] for worker in json.loads(report.stdout)["workers"]) == len(products)


@pytest.mark.timeout(600)
def test_a_killed_worker_loses_nothing_on_a_cluster(crawl, cluster, shop_factory):
    shops = _shops_on_every_node(cluster, shop_factory, 2, products=100, latency_ms=40)
    expected = {shop.url: shop.catalog.crawlable_paths() for shop in shops}
    crawl.seed(*(shop.url for shop in shops))
    # the victim crawls alone until it holds leases mid-crawl; the test looks only while
    # it is frozen (see test_stop_and_resume.py), so it is killed holding what was seen
    victim = crawl.start_worker("victim", CONCURRENT_REQUESTS=8)
    freeze_when(
        victim,
        lambda: crawl.leases_of("victim") > 0 and sum(len(page_fetches(s)) for s in shops) > 30,
        CRAWL_TIMEOUT,
        "the victim to hold leases after 30 pages",
    )
    victim.kill()  # SIGKILL: no chance to hand anything back
    held = crawl.leases_of("victim")
    assert held > 0
    assert any(len(page_fetches(shop)) < len(expected[shop.url]) for shop in shops)
    survivor = crawl.start_worker("survivor")
    crawl.wait_workers()
    assert f"Worker victim stopped beating: requeued the {held} request(s)" in survivor.log()
    for shop in shops:
        assert set(page_fetches(shop)) == expected[shop.url]
    stored = _stored(crawl)
    assert set(stored) == set().union(*(_product_urls(shop) for shop in shops))
    assert len(stored) == len(set(stored))
    assert crawl.keys_matching(KEYS.inflight_pattern) == []
