"""The browser queue on a real 3-node Redis Cluster: each site's requests that need a
browser wait in its shard's ``browser_requests`` (the slot of its plain queue), are
popped there under lease by a worker that renders, handed over within the slot by one
that renders none, and recovered into it when a worker dies."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from scrapy import Request
from scrapy.utils.test import get_crawler

from crawler.browser.sites import BrowserSites
from crawler.leasing.tracker import LeaseTracker
from crawler.scheduling.lanes import push_requests, queued
from crawler.scheduling.scheduler import ReliableScheduler
from crawler.spiders.ecommerce import EcommerceSpider
from tests.support.cluster import KEYS, sites_in_distinct_shards
from tests.support.queue import queue_contents

pytest_plugins = ["tests.integration.cluster_support"]


@pytest.fixture
def make(cluster: Any, client: Any) -> Iterator[Any]:
    opened: list[ReliableScheduler] = []

    def build(worker: str, renders: bool, batched: bool = False) -> ReliableScheduler:
        from crawler import settings as project_settings

        settings = {
            name: getattr(project_settings, name)
            for name in dir(project_settings)
            if name.isupper()
        }
        settings.update(
            REDIS_URL=cluster.startup_urls,
            REDIS_CLUSTER=True,
            WORKER_ID=worker,
            SCHEDULER_IDLE_POLL_INTERVAL=0,
            SCHEDULER_WAKEUPS=False,
            SCHEDULER_FLUSH_INTERVAL=0.005 if batched else 0,
            BROWSER_EXECUTABLE="/usr/bin/true",  # never started: nothing is downloaded
            BROWSER_CONCURRENCY=4 if renders else 0,
            BROWSER_SITES_REFRESH=0,
        )
        crawler = get_crawler(EcommerceSpider, settings_dict=settings)
        if getattr(crawler, "extensions", None) is None:
            LeaseTracker.from_crawler(crawler)
        spider = EcommerceSpider.from_crawler(crawler)
        crawler.spider = spider
        scheduler = ReliableScheduler.from_crawler(crawler)
        scheduler.open(spider)
        opened.append(scheduler)
        return scheduler

    yield build
    for scheduler in opened:
        scheduler.close("finished")


def urls(client: Any, queue: str) -> list[str]:
    return [json.loads(payload)["u"] for payload, _ in queue_contents(client, queue)]


@pytest.mark.parametrize("batched", [False, True], ids=["unbatched", "batched"])
def test_browser_requests_live_in_their_sites_shard(make, client, batched) -> None:  # type: ignore[no-untyped-def]
    sites = sites_in_distinct_shards(3)
    for site in sites[:2]:
        BrowserSites(client, KEYS.browser_sites, "w0", 0).remember(f"http://{site}/")
    plain = make("w1", renders=False, batched=batched)
    for site in sites:
        assert plain.enqueue_request(Request(f"http://{site}/p/1", callback=plain.spider.parse))
    if plain.tracker.batch is not None:
        plain.tracker.batch.flush()
    for site in sites:
        where = KEYS.for_site(site)
        expected = [f"http://{site}/p/1"]
        in_browser = site in sites[:2]
        assert urls(client, where.browser_requests) == (expected if in_browser else [])
        assert urls(client, where.requests) == ([] if in_browser else expected)
    # the worker without a browser takes the third site's only
    assert plain.next_request().url == f"http://{sites[2]}/p/1"
    assert plain.next_request() is None
    # one that renders takes the others, under lease in their shards' hashes
    browser = make("w2", renders=True)
    got = {browser.next_request().url, browser.next_request().url}
    assert got == {f"http://{site}/p/1" for site in sites[:2]}
    for site in sites[:2]:
        leases = client.hkeys(KEYS.for_site(site).inflight("w2"))
        assert [lease.decode()[0] for lease in leases] == ["b"]
    # it dies: its requests go back to their shards' browser queues
    client.delete(KEYS.alive("w2"))
    assert plain.ledger.recover("w2") == 2
    for site in sites[:2]:
        assert urls(client, KEYS.for_site(site).browser_requests) == [f"http://{site}/p/1"]


def test_a_marked_request_is_handed_over_within_its_shard(make, client) -> None:  # type: ignore[no-untyped-def]
    site = sites_in_distinct_shards(1)[0]
    where = KEYS.for_site(site)
    url = f"http://{site}/p/9"
    marked = json.dumps({"u": url, "m": {"playwright": True, "render_reason": "shell"}})
    push_requests(client, where.requests, {marked.encode(): 0})
    plain = make("w1", renders=False)
    assert plain.next_request() is None
    assert urls(client, where.browser_requests) == [url]
    assert not queued(client, where.requests)
    assert not client.exists(where.inflight("w1"))  # the lease moved with it
    assert plain.stats.get_value("browser/handed_over") == 1
