"""The lease tracker's upkeep loop looks at the batch every 5 ms only while it holds
links or leases (a real Redis; the loop on a Twisted ``task.Clock``)."""

from __future__ import annotations

import time

import redis
from scrapy import Spider
from scrapy.utils.reactor import install_reactor, is_reactor_installed
from scrapy.utils.test import get_crawler
from twisted.internet import task

from crawler.core.keys import CrawlKeys
from crawler.leasing.tracker import LeaseTracker
from crawler.scheduling.lanes import queued

KEYS = CrawlKeys("ecommerce")


class _Spider(Spider):
    name = "ecommerce"


def _tracker(redis_url: str) -> tuple[LeaseTracker, task.Clock]:
    # a LoopingCall imports twisted's reactor, which installs the default one unless one
    # is installed: install the project's (TWISTED_REACTOR), as a worker has, so that a
    # later test of this process that makes a crawler finds the reactor it asks for
    if not is_reactor_installed():
        install_reactor("twisted.internet.asyncioreactor.AsyncioSelectorReactor")
    crawler = get_crawler(_Spider, settings_dict={
        "REDIS_URL": redis_url,
        "WORKER_ID": "w1",
        "SCHEDULER_FLUSH_INTERVAL": 0.005,
        "LEASE_FINISH_INTERVAL": 0.5,
        "LEASE_HEARTBEAT_INTERVAL": 1,
        "LEASE_WORKER_TIMEOUT": 10,
    })
    tracker = LeaseTracker(crawler)
    clock = task.Clock()
    tracker.clock = clock
    tracker._start_upkeep()
    return tracker, clock


def _ticks(tracker: LeaseTracker, clock: task.Clock, seconds: float, step: float) -> int:
    counted = [0]
    tick = tracker._tick

    def counting() -> None:
        counted[0] += 1
        tick()

    assert tracker._loop is not None
    tracker._loop.f = counting
    for _ in range(round(seconds / step)):
        clock.advance(step)
    tracker._loop.f = tick
    return counted[0]


def test_an_idle_worker_ticks_at_the_lease_interval_not_200_times_a_second(redis_url):
    tracker, clock = _tracker(redis_url)
    assert _ticks(tracker, clock, 2.1, 0.005) == 4  # every 0.5 s, not 420 times
    assert tracker._loop is not None and tracker._loop.running
    tracker._loop.stop()


def test_a_link_is_sent_within_the_batch_interval_then_the_loop_slows_again(redis_url):
    tracker, clock = _tracker(redis_url)
    client = redis.Redis.from_url(redis_url)
    assert tracker.batch is not None and tracker._loop is not None
    clock.advance(0.3)  # idle, between two slow ticks
    tracker.batch.add_link(b"f" * 20, 0, b"request-1", "")
    assert tracker._loop.interval == 0.005
    time.sleep(0.006)  # the batch's own waits are in real time (time.monotonic)
    clock.advance(0.005)
    assert queued(client, KEYS.requests) == 1 and len(tracker.batch) == 0
    assert tracker._loop.interval == 0.5
    # a finished lease alone waits LEASE_FINISH_INTERVAL, looked at every 5 ms meanwhile
    tracker.batch.finish("r|0|lease")
    assert _ticks(tracker, clock, 0.1, 0.005) >= 19 and len(tracker.batch) == 1
    time.sleep(0.5)
    clock.advance(0.005)
    assert len(tracker.batch) == 0 and tracker._loop.interval == 0.5
    tracker._loop.stop()
    client.close()
