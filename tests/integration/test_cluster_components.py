"""The worker's components on a real 3-node Redis Cluster: the scheduler built from
the settings (cluster clients), politeness budgets, dead letters, rejected items."""

from __future__ import annotations

import pytest
from scrapy import Request
from scrapy.utils.test import get_crawler

from crawler.leasing.deadletters import DeadLetters
from crawler.leasing.tracker import LeaseTracker
from crawler.net.redis_client import CountingRedisCluster
from crawler.pipelines.rejects import RejectedItemKeeper
from crawler.policy.politeness import SiteBudget
from crawler.scheduling import restarts
from crawler.scheduling.lanes import queued
from crawler.scheduling.scheduler import ReliableScheduler
from crawler.schema import ValidationProblem
from crawler.spiders.ecommerce import EcommerceSpider
from tests.support.cluster import KEYS, sites_in_distinct_shards

# fixtures ``cluster`` (one per module) and ``client`` (the cluster emptied first)
pytest_plugins = ["tests.integration.cluster_support"]


@pytest.fixture(params=[0, 0.005], ids=["unbatched", "batched"])
def scheduler(request, cluster, client):
    from crawler import settings as project_settings

    settings = {
        name: getattr(project_settings, name) for name in dir(project_settings) if name.isupper()
    }
    settings.update(
        REDIS_URL=cluster.startup_urls,
        REDIS_CLUSTER=True,
        WORKER_ID="w1",
        SCHEDULER_IDLE_POLL_INTERVAL=0,
        SCHEDULER_FLUSH_INTERVAL=request.param,
    )
    # the spider's update_settings makes every client a cluster client
    crawler = get_crawler(EcommerceSpider, settings_dict=settings)
    if getattr(crawler, "extensions", None) is None:
        LeaseTracker.from_crawler(crawler)
    spider = EcommerceSpider.from_crawler(crawler)
    crawler.spider = spider
    scheduler = ReliableScheduler.from_crawler(crawler)
    scheduler.open(spider)
    yield scheduler
    scheduler.close("finished")


def test_the_scheduler_queues_each_request_in_its_sites_shard(scheduler, client):
    assert isinstance(scheduler.server, CountingRedisCluster)
    assert isinstance(scheduler.tracker.server, CountingRedisCluster)
    spider = scheduler.spider
    sites = sites_in_distinct_shards(3)
    for site in sites:
        for i in range(2):
            scheduler.enqueue_request(Request(f"http://{site}/p/{i}", callback=spider.parse))
        assert not scheduler.enqueue_request(Request(f"http://{site}/p/0", callback=spider.parse))
    scheduler.tracker.flush()
    for site in sites:
        assert queued(client, KEYS.for_site(site).requests) == 2
    assert scheduler.ledger.waiting() == (6, 0)  # summed over the shards
    handed = [scheduler.next_request() for _ in range(6)]
    assert {request.url.split("/")[2] for request in handed} == set(sites)
    assert scheduler.next_request() is None
    # each lease is in the shard of its request; finishing them empties every hash
    for request in handed:
        shard = KEYS.for_site(request.url.split("/")[2])
        assert client.hexists(shard.inflight("w1"), request.meta["lease"])
        scheduler.tracker.finish(request.meta["lease"])
    scheduler.tracker.flush()
    assert not any(client.exists(shard.inflight("w1")) for shard in KEYS.all_shards())


def test_a_closing_worker_hands_back_what_it_holds_in_every_shard(scheduler, client):
    spider = scheduler.spider
    for site in sites_in_distinct_shards(2):
        scheduler.enqueue_request(Request(f"http://{site}/x", callback=spider.parse))
    scheduler.tracker.flush()
    assert scheduler.next_request() is not None
    scheduler.tracker.spider_closed(spider, "finished")
    assert not any(client.exists(shard.inflight("w1")) for shard in KEYS.all_shards())
    assert scheduler.ledger.waiting() == (2, 0)


def test_the_restart_check_runs_on_every_node(scheduler):
    # the cluster client's own handshake, then the run id check of crawler/scheduling/restarts
    scheduler.ledger.waiting()  # touches every node
    seen = {address[1] for address in restarts._seen}
    nodes = {int(node.port) for node in scheduler.server.get_primaries()}
    assert nodes <= seen


def test_politeness_budgets_live_in_their_shard_and_count_crawl_wide(client):
    site = sites_in_distinct_shards(1)[0]
    budget = SiteBudget(client, KEYS)
    waits = [budget.reserve(site, 0.5) for _ in range(3)]
    assert waits[0] == 0 and waits[2] > waits[1] > 0
    assert client.exists(KEYS.for_site(site).polite(site))
    assert int(client.hget(KEYS.stats, "politeness_waits")) == 2
    cut = budget.cut(site, 0.5, 0, "HTTP 503")
    assert cut.cut and int(client.hget(KEYS.stats, "site_rate_cuts")) == 1


def test_dead_letters_and_rejected_items_without_a_cross_slot_transaction(client):
    letters = DeadLetters(client, KEYS, "w1", stats=_Stats())
    client.sadd(KEYS.seeded, b"x")
    letters.record("http://127.0.0.1:9/refused", "refused: test", refused=True)
    assert client.llen(KEYS.dead) == 1
    assert client.hget(KEYS.stats, "requests_refused") == b"1"
    keeper = RejectedItemKeeper(client, KEYS, "w1")
    keeper.keep_all([({"url": "http://127.0.0.1:9/p"}, [ValidationProblem("name", "missing")])])
    assert client.llen(KEYS.invalid) == 1
    assert client.hget(KEYS.stats, "items_invalid") == b"1"


class _Stats:
    def inc_value(self, *args, **kwargs):
        pass
