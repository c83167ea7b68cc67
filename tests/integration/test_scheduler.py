"""The reliable scheduler on a real Redis, driven directly (no engine)."""

from __future__ import annotations

import time
from types import SimpleNamespace

import pytest
import redis
from scrapy import Request, Spider
from scrapy.utils.test import get_crawler

from crawler.core.flow import FlowControl
from crawler.core.keys import CrawlKeys
from crawler.leasing.tracker import LeaseTracker
from crawler.scheduling.lanes import KEYED, index_key, push_requests, queued
from crawler.scheduling.scheduler import ReliableScheduler
from tests.support.queue import queue_contents

KEYS = CrawlKeys("ecommerce")


class _Spider(Spider):
    name = "ecommerce"

    def parse(self, response):  # pragma: no cover - referenced by name only
        pass


@pytest.fixture(params=[0, 0.005], ids=["plain", "batched"])
def scheduler(request, redis_url):
    from crawler import settings as project_settings

    settings = {
        name: getattr(project_settings, name) for name in dir(project_settings) if name.isupper()
    }
    settings.update(
        REDIS_URL=redis_url,
        WORKER_ID="w1",
        SCHEDULER_IDLE_POLL_INTERVAL=0,
        SCHEDULER_WAKEUPS=False,  # no engine to wake: the idle looks are driven by hand
        SCHEDULER_FLUSH_INTERVAL=request.param,
    )
    crawler = get_crawler(_Spider, settings_dict=settings)
    if getattr(crawler, "extensions", None) is None:  # else the enabled tracker claimed w1
        LeaseTracker.from_crawler(crawler)
    spider = _Spider.from_crawler(crawler)
    crawler.spider = spider
    scheduler = ReliableScheduler.from_crawler(crawler)
    scheduler.open(spider)
    yield scheduler
    scheduler.close("finished")


@pytest.fixture
def redis_url(module_redis):
    client = redis.Redis.from_url(module_redis.url)
    client.flushall()
    client.close()
    return module_redis.url


def _calls(client, command="evalsha"):
    stats = client.info("commandstats")
    return stats.get(f"cmdstat_{command}", {}).get("calls", 0)


def test_duplicates_are_filtered_with_binary_fingerprints(scheduler, redis_client):
    spider = scheduler.spider
    assert scheduler.enqueue_request(Request("http://shop.test/a", callback=spider.parse))
    assert not scheduler.enqueue_request(Request("http://shop.test/a", callback=spider.parse))
    assert scheduler.enqueue_request(Request("http://shop.test/a", dont_filter=True))
    scheduler.tracker.flush()  # batched: sends the links gathered so far
    [member] = redis_client.smembers(KEYS.dupefilter)
    assert len(member) == 20  # raw SHA1 digest, not 40 hex characters
    assert queued(redis_client, KEYS.requests) == 2


def test_known_duplicates_cost_no_round_trip(scheduler, redis_client):
    spider = scheduler.spider
    scheduler.enqueue_request(Request("http://shop.test/menu", callback=spider.parse))
    before = _calls(redis_client)
    for _ in range(50):
        assert not scheduler.enqueue_request(
            Request("http://shop.test/menu", callback=spider.parse)
        )
    assert _calls(redis_client) == before


def test_popped_requests_are_leased_and_carry_their_lease(scheduler, redis_client):
    spider = scheduler.spider
    for i in range(3):
        scheduler.enqueue_request(
            Request(f"http://shop.test/{i}", callback=spider.parse, priority=i)
        )
    request = scheduler.next_request()
    assert request.url == "http://shop.test/2"  # highest priority first
    assert request.callback == spider.parse
    lease = request.meta["lease"]
    assert redis_client.hexists(KEYS.inflight("w1"), lease)
    assert scheduler.has_pending_requests()


def test_a_redirect_takes_over_the_lease_of_its_request(scheduler, redis_client):
    spider = scheduler.spider
    scheduler.enqueue_request(Request("http://shop.test/old", callback=spider.parse))
    request = scheduler.next_request()
    redirected = request.replace(url="http://shop.test/new")
    assert scheduler.enqueue_request(redirected)
    scheduler.tracker.flush()
    # the queued redirect replaces the finished original: nothing leased, one queued
    assert not redis_client.exists(KEYS.inflight("w1"))
    assert queued(redis_client, KEYS.requests) == 1
    assert b"lease" not in queue_contents(redis_client, KEYS.requests)[0][0]


def test_no_request_is_handed_out_while_held(scheduler):
    spider = scheduler.spider
    scheduler.enqueue_request(Request("http://shop.test/x", callback=spider.parse))
    flow = FlowControl.of(scheduler.crawler)
    flow.hold("test")
    assert scheduler.next_request() is None
    assert scheduler.has_pending_requests()  # held is waiting, not idle
    flow.release("test")
    assert scheduler.next_request().url == "http://shop.test/x"


def test_a_queue_of_the_previous_version_pops_first_once_a_worker_opens(redis_url, redis_client):
    from scrapy.utils.test import get_crawler as make

    # the previous version's request, in the sorted set; a lane's, of the same priority
    redis_client.zadd(KEYS.requests, {b'{"url":"http://shop.test/old"}': 0})
    push_requests(redis_client, KEYS.requests, {b'{"url":"http://shop.test/new"}': 0})
    crawler = make(
        _Spider,
        settings_dict={
            "REDIS_URL": redis_url,
            "SCHEDULER_QUEUE_CLASS": "crawler.scheduling.queue.ReliablePriorityQueue",
            "SCHEDULER_SERIALIZER": "crawler.scheduling.serializer",
            "DUPEFILTER_CLASS": "crawler.scheduling.dupefilter.BinaryFingerprintDupeFilter",
            "SCHEDULER_IDLE_POLL_INTERVAL": 0,
            "SCHEDULER_POP_BATCH": 1,
            "EXTENSIONS": {
                "crawler.core.flow.FlowControl": 10,
                "crawler.policy.politeness.SiteWaits": 20,
                "crawler.leasing.tracker.LeaseTracker": 100,
            },
        },
    )
    spider = _Spider.from_crawler(crawler)
    scheduler = ReliableScheduler.from_crawler(crawler)
    scheduler.open(spider)
    try:
        assert redis_client.zrange(index_key(KEYS.requests), 0, 0) == [KEYED.encode()]
        assert [scheduler.next_request().url for _ in range(2)] == [
            "http://shop.test/old",
            "http://shop.test/new",
        ]
    finally:
        scheduler.close("finished")
        scheduler.df.close("finished")


def test_closing_never_deletes_shared_state(redis_url, redis_client):
    from scrapy.utils.test import get_crawler as make

    crawler = make(
        _Spider,
        settings_dict={
            "REDIS_URL": redis_url,
            "SCHEDULER_PERSIST": False,
            "SCHEDULER_FLUSH_ON_START": True,
            "SCHEDULER_QUEUE_CLASS": "crawler.scheduling.queue.ReliablePriorityQueue",
            "SCHEDULER_SERIALIZER": "crawler.scheduling.serializer",
            "DUPEFILTER_CLASS": "crawler.scheduling.dupefilter.BinaryFingerprintDupeFilter",
            "SCHEDULER_IDLE_POLL_INTERVAL": 0,
            "EXTENSIONS": {
                "crawler.core.flow.FlowControl": 10,
                "crawler.policy.politeness.SiteWaits": 20,
                "crawler.leasing.tracker.LeaseTracker": 100,
            },
        },
    )
    redis_client.zadd(KEYS.requests, {b'{"url":"http://shop.test/q"}': 0})
    redis_client.sadd(KEYS.dupefilter, b"x" * 20)
    spider = _Spider.from_crawler(crawler)
    scheduler = ReliableScheduler.from_crawler(crawler)
    scheduler.open(spider)
    scheduler.close("finished")
    scheduler.df.close("finished")
    assert queued(redis_client, KEYS.requests) == 1
    assert redis_client.scard(KEYS.dupefilter) == 1


def test_an_idle_worker_requeues_its_orphaned_leases(scheduler, redis_client):
    spider = scheduler.spider
    scheduler.enqueue_request(Request("http://shop.test/lost", callback=spider.parse))
    scheduler.tracker.flush()
    # Redis ran the pop but the reply never came back: the lease exists, no request does
    scheduler.ledger.pop(8)
    assert redis_client.hlen(KEYS.inflight("w1")) == 1
    tracker = scheduler.tracker
    item = {"url": "http://shop.test/p"}
    tracker.item_pending(item, "r|0|other")
    assert tracker.reclaim_orphans() == 0  # an item still waits for storage: not idle
    tracker.items_stored([item])
    assert tracker.reclaim_orphans() == 1
    assert queued(redis_client, KEYS.requests) == 1
    assert not redis_client.exists(KEYS.inflight("w1"))


def test_links_known_to_be_seen_are_dropped_next_to_the_spider(scheduler):
    from crawler.middlewares.knownlinks import KnownLinkFilterMiddleware

    spider = scheduler.spider
    scheduler.enqueue_request(Request("http://shop.test/menu", callback=spider.parse))
    # the middleware asks the engine for its scheduler: stand one in for this engine-less test
    scheduler.crawler.engine = SimpleNamespace(scheduler=scheduler)
    middleware = KnownLinkFilterMiddleware.from_crawler(scheduler.crawler)
    output = [
        Request("http://shop.test/menu", callback=spider.parse),
        Request("http://shop.test/new", callback=spider.parse),
        Request("http://shop.test/menu", dont_filter=True),
        {"url": "http://shop.test/p"},
    ]
    kept = list(middleware.process_spider_output(None, output))
    assert [getattr(e, "url", None) or e["url"] for e in kept] == [
        "http://shop.test/new",
        "http://shop.test/menu",
        "http://shop.test/p",
    ]
    assert scheduler.crawler.stats.get_value("links/known_dropped") == 1


def test_a_starved_worker_looks_at_redis_less_often_then_at_once_when_fed(scheduler, redis_client):
    import time

    woken = []
    slot = SimpleNamespace(closing=None, nextcall=SimpleNamespace(schedule=woken.append))
    scheduler.crawler.engine = SimpleNamespace(_slot=slot, needs_backout=lambda: False)
    scheduler.idle_poll_interval, scheduler.idle_poll_max = 0.02, 0.16
    scheduler._fed()
    assert scheduler.next_request() is None  # nothing queued: starved
    looks = _calls(redis_client, "eval")  # the queue's count
    begun = time.monotonic()
    waits = []
    while time.monotonic() - begun < 2.0:  # the waker's loop, at its tick
        before = scheduler._next_poll
        scheduler._wake_engine_if_work()
        if scheduler._next_poll != before:
            waits.append(round(scheduler._poll_wait, 2))
        time.sleep(0.02)
    assert not woken
    assert waits[0] == 0.02 and waits[-1] == 0.16  # the full rate for a second, then halved
    assert waits == sorted(waits)
    looked = _calls(redis_client, "eval") - looks
    assert looked == len(waits) < 2.0 / 0.02 * 0.75
    scheduler.enqueue_request(Request("http://shop.test/new", callback=scheduler.spider.parse))
    scheduler.tracker.flush()  # the link is in the shared queue
    time.sleep(max(0.0, scheduler._next_poll - time.monotonic()))  # the next look is due
    scheduler._wake_engine_if_work()
    assert woken == [0] and not scheduler._starved
    assert scheduler._poll_wait == 0.02 and scheduler._vain_since is None  # full rate again


def test_a_retry_waits_in_redis_and_a_starved_worker_pops_again_only_when_it_is_due(
    scheduler, redis_client
):
    import time

    from crawler.policy.retrypolicy import DELAY_META_KEY, HISTORY_META_KEY

    spider = scheduler.spider
    scheduler.enqueue_request(Request("http://shop.test/p/1", callback=spider.parse))
    request = scheduler.next_request()
    # the page failed: its retry (as the retry middleware makes it) waits 0.8 s in Redis
    retry = request.replace(dont_filter=True)
    retry.meta[DELAY_META_KEY] = 0.8
    retry.meta[HISTORY_META_KEY] = [{"status": 429, "time": 1.0, "wait": 0.8}]
    assert scheduler.enqueue_request(retry)
    assert not redis_client.exists(KEYS.inflight("w1"))  # the failed lease is finished
    assert queued(redis_client, KEYS.requests) == 1
    assert scheduler.next_request() is None  # not due: nothing handed out
    depth, _ = scheduler.ledger.waiting()
    # the starved worker's idle looks see the retry but do not pop for it before it is due
    evals = _calls(redis_client)
    assert [scheduler.queue.ready_work(depth) for _ in range(5)] == [False] * 5
    assert _calls(redis_client) == evals
    assert scheduler.queue.ready_work(depth + 1)  # but new requests are worth a pop
    time.sleep(0.85)
    assert scheduler.queue.ready_work(depth)
    again = scheduler.next_request()
    assert again is not None and again.url == "http://shop.test/p/1"
    # the history and the count came through Redis; the wait was used up
    assert again.meta[HISTORY_META_KEY][0]["status"] == 429
    assert DELAY_META_KEY not in again.meta
    assert redis_client.hexists(KEYS.inflight("w1"), again.meta["lease"])


def test_a_push_onto_a_lane_that_holds_requests_writes_no_index(redis_url):
    """The lane index is written when a push starts a lane, not on every push."""
    client = redis.Redis.from_url(redis_url)
    queue = CrawlKeys("ecommerce").requests
    push_requests(client, queue, {b"a": 0})
    zadds = _calls(client, "zadd")
    push_requests(client, queue, {b"b": 0, b"c": 0})
    push_requests(client, queue, {b"d": 0})
    assert _calls(client, "zadd") == zadds  # the lane held requests: no index write
    push_requests(client, queue, {b"e": -1})  # a new lane
    assert _calls(client, "zadd") == zadds + 1
    assert [p for p, _ in queue_contents(client, queue)] == [b"e", b"a", b"b", b"c", b"d"]
    client.close()


def _payload(scheduler, n):
    request = Request(f"http://shop.test/p/{n}", callback=scheduler.spider.parse)
    return scheduler.queue._encode_request(request)


@pytest.mark.parametrize("scheduler", [0.005], ids=["batched"], indirect=True)
def test_a_deep_queue_is_popped_twice_the_batch_at_a_time(scheduler, redis_client):
    push_requests(redis_client, KEYS.requests, {_payload(scheduler, i): 0 for i in range(100)})
    batch = scheduler.queue.batch_size
    assert scheduler.queue.pop() is not None  # depth unknown yet: one batch
    assert redis_client.hlen(KEYS.inflight("w1")) == batch
    while scheduler.queue.buffered:
        scheduler.queue.pop()
    assert scheduler.tracker.batch.queue_deep  # 92 left
    scheduler.queue.pop()
    assert redis_client.hlen(KEYS.inflight("w1")) == 3 * batch


def test_a_listening_worker_that_saw_the_queue_empty_asks_redis_again_only_when_told(
    scheduler, redis_client
):
    from crawler.scheduling.wakeup import WakeUps

    scheduler.wakeups = WakeUps(scheduler.server, KEYS.wake, scheduler._woken).start()
    try:
        assert scheduler.wakeups.wait_live(30)
        assert scheduler.next_request() is None  # one look: empty
        calls = _calls(redis_client, "evalsha") + _calls(redis_client, "eval")
        assert scheduler.next_request() is None
        assert not scheduler.has_pending_requests()  # no count of the queue either
        assert _calls(redis_client, "evalsha") + _calls(redis_client, "eval") == calls
        push_requests(redis_client, KEYS.requests, {_payload(scheduler, 1): 0})  # another's push
        deadline = time.monotonic() + 30
        while scheduler._seen_empty:  # until the wake-up (its callback: _woken)
            assert time.monotonic() < deadline, "no wake-up"
            time.sleep(0.01)
        assert scheduler.has_pending_requests()
        assert scheduler.next_request() is not None
    finally:
        scheduler.wakeups.stop()
