"""Requests that need a browser, on a real Redis: routed to the browser queue when they are
queued, popped only by a worker that renders (within its share), handed over with their
lease by a worker that renders none, and put back where they came from when a worker dies."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import redis
from scrapy import Request, Spider
from scrapy.utils.test import get_crawler

from crawler.browser.sites import BrowserSites
from crawler.core.keys import CrawlKeys
from crawler.leasing.tracker import LeaseTracker
from crawler.policy.scope import Scope
from crawler.scheduling.lanes import push_requests, queued
from crawler.scheduling.scheduler import ReliableScheduler
from crawler.scheduling.wakeup import BROWSER, Wake, WakeUps
from tests.support.queue import queue_contents
from tools.redis_server import RedisServer

KEYS = CrawlKeys("ecommerce")
APP = "http://shop.test/app/p/{}"


class _Spider(Spider):
    name = "ecommerce"

    def parse(self, response):  # type: ignore[no-untyped-def]  # pragma: no cover
        pass

    def errback(self, failure):  # type: ignore[no-untyped-def]  # pragma: no cover
        pass


Make = Callable[..., ReliableScheduler]


@pytest.fixture
def redis_url(module_redis: RedisServer) -> str:
    """The module's own redis-server, emptied before each test: wake-ups are Pub/Sub
    messages, which a server sends to every database's subscribers, so another test
    process pushing into ``ecommerce:requests`` of the shared server (another database)
    would be heard here as a plain wake-up."""
    client = redis.Redis.from_url(module_redis.url)
    client.flushall()
    client.close()
    return module_redis.url


@pytest.fixture
def make(redis_url: str) -> Iterator[Make]:
    """Schedulers of workers (each its own crawler and id), opened on the test's Redis."""
    opened: list[ReliableScheduler] = []

    def build(worker: str, renders: bool, batched: bool = False, **extra: Any) -> ReliableScheduler:
        from crawler import settings as project_settings

        settings = {
            name: getattr(project_settings, name)
            for name in dir(project_settings)
            if name.isupper()
        }
        settings.update(
            REDIS_URL=redis_url,
            WORKER_ID=worker,
            SCHEDULER_IDLE_POLL_INTERVAL=0,
            SCHEDULER_WAKEUPS=False,
            SCHEDULER_FLUSH_INTERVAL=0.005 if batched else 0,
            # a browser that is never started: these schedulers download nothing
            BROWSER_EXECUTABLE="/usr/bin/true",
            BROWSER_CONCURRENCY=1 if renders else 0,
            BROWSER_SITES_REFRESH=0,
            **extra,
        )
        crawler = get_crawler(_Spider, settings_dict=settings)
        if getattr(crawler, "extensions", None) is None:
            LeaseTracker.from_crawler(crawler)
        spider = _Spider.from_crawler(crawler)
        crawler.spider = spider
        scheduler = ReliableScheduler.from_crawler(crawler)
        scheduler.open(spider)
        opened.append(scheduler)
        return scheduler

    yield build
    for scheduler in opened:
        scheduler.close("finished")


def app_site_needs_browser(client: Any) -> None:
    BrowserSites(client, KEYS.browser_sites, "w0", 0).remember(APP.format("x"))


def urls(client: Any, queue: str) -> list[str]:
    return [json.loads(payload)["u"] for payload, _ in queue_contents(client, queue)]


def payload(url: str, **meta: Any) -> bytes:
    return json.dumps({"u": url, "m": meta}).encode()


def send(scheduler: ReliableScheduler) -> None:
    batch = scheduler.tracker.batch
    if batch is not None:
        batch.flush()


@pytest.mark.parametrize("batched", [False, True], ids=["plain", "batched"])
def test_requests_go_to_the_queue_their_site_needs(make, redis_client, batched) -> None:  # type: ignore[no-untyped-def]
    app_site_needs_browser(redis_client)
    scheduler = make("w1", renders=False, batched=batched)
    spider = scheduler.spider
    for url in (APP.format(1), "http://shop.test/p/1", APP.format(2)):
        assert scheduler.enqueue_request(Request(url, callback=spider.parse))
    assert not scheduler.enqueue_request(Request(APP.format(1), callback=spider.parse))
    # a seed that asks for the browser, and a robots.txt of the section (never rendered)
    seed = Scope.from_seed_meta("http://other.test/", {"render": "true"}).to_meta()
    assert scheduler.enqueue_request(Request("http://other.test/", meta=seed))
    assert scheduler.enqueue_request(Request("http://other.test/robots.txt", meta=seed))
    send(scheduler)
    assert urls(redis_client, KEYS.browser_requests) == [
        APP.format(1), APP.format(2), "http://other.test/"
    ]
    assert urls(redis_client, KEYS.requests) == [
        "http://shop.test/p/1", "http://other.test/robots.txt"
    ]
    marked = [json.loads(p)["m"] for p, _ in queue_contents(redis_client, KEYS.browser_requests)]
    assert [(m["playwright"], m["render_reason"]) for m in marked] == [
        (True, "site"), (True, "site"), (True, "seed")
    ]
    # the worker without a browser takes the plain requests only, and does not count the
    # others as its work
    assert scheduler.ledger.waiting() == (2, 0)
    taken = [scheduler.next_request(), scheduler.next_request()]
    assert {r.url for r in taken if r} == {"http://shop.test/p/1", "http://other.test/robots.txt"}
    assert scheduler.next_request() is None
    assert not scheduler.has_pending_requests()
    assert queued(redis_client, KEYS.browser_requests) == 3


def test_a_worker_that_renders_pops_the_browser_queue_within_its_share(make, redis_client) -> None:  # type: ignore[no-untyped-def]
    push_requests(redis_client, KEYS.browser_requests, {
        payload(APP.format(i), playwright=True, render_reason="site"): 0 for i in range(5)
    })
    push_requests(redis_client, KEYS.requests, {payload("http://shop.test/p/1"): 0})
    # BROWSER_CONCURRENCY=1 x BROWSER_HOLD_PER_SLOT=2: two at a time
    scheduler = make("w1", renders=True, BROWSER_HOLD_PER_SLOT=2)
    assert scheduler.ledger.waiting() == (6, 0)  # both queues are its work
    first = scheduler.next_request()
    second = scheduler.next_request()
    third = scheduler.next_request()
    assert [r.url for r in (first, second)] == [APP.format(0), APP.format(1)]
    assert third is not None and third.url == "http://shop.test/p/1"
    leases = [key.decode() for key in redis_client.hkeys(KEYS.inflight("w1"))]
    assert sorted(lease[0] for lease in leases) == ["b", "b", "r"]
    # two in hand (popped, not downloaded yet): no more from the browser queue; the queue
    # is not taken for empty meanwhile
    scheduler.queue._buffer.extend([first, second])
    assert scheduler.next_request() is first
    scheduler.queue._buffer.clear()
    assert scheduler.next_request().url == APP.format(2)
    assert scheduler.has_pending_requests()


def test_work_for_a_browser_wakes_only_the_workers_that_render(
    make: Make, redis_client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A push into the browser queue is announced as such: a listening worker that renders
    pops it at once; one that renders none lets it be (not even a look at Redis)."""
    schedulers = {"plain": make("w1", renders=False), "render": make("w2", renders=True)}
    heard: dict[str, list[Wake]] = {name: [] for name in schedulers}

    def listener(name: str, scheduler: ReliableScheduler) -> Callable[[Wake], None]:
        def on_wake(wake: Wake) -> None:
            scheduler._woken(wake)
            heard[name].append(wake)

        return on_wake

    for name, scheduler in schedulers.items():
        scheduler.wakeups = WakeUps(scheduler.server, KEYS.wake, listener(name, scheduler))
        assert scheduler.wakeups.start().wait_live(30)
    plain, render = schedulers["plain"], schedulers["render"]
    try:
        for scheduler in (plain, render):
            assert scheduler.next_request() is None  # one look each: both queues empty
            assert scheduler._seen_empty
            scheduler._starved = False  # no engine here to wake
        push_requests(redis_client, KEYS.browser_requests, {
            payload(APP.format(1), playwright=True, render_reason="site"): 0
        })
        deadline = time.monotonic() + 30
        while not (heard["plain"] and heard["render"]):
            assert time.monotonic() < deadline, "no wake-up"
            time.sleep(0.01)
        assert heard == {"plain": [BROWSER], "render": [BROWSER]}
        assert plain._seen_empty and not render._seen_empty
        looks: list[int] = []
        monkeypatch.setattr(plain.queue, "pop", lambda: looks.append(1))  # any look at Redis
        assert plain.next_request() is None
        assert looks == []  # it did not look
        taken = render.next_request()
        assert taken is not None and taken.url == APP.format(1)
    finally:
        for scheduler in schedulers.values():
            scheduler.wakeups.stop()


def test_a_worker_without_a_browser_hands_over_what_needs_one(make, redis_client) -> None:  # type: ignore[no-untyped-def]
    # in the plain queue: a request marked elsewhere (a dead browser worker's lease put
    # back, a queue of before), one of a site found to need a browser after it was
    # queued, and a plain one
    push_requests(redis_client, KEYS.requests, {
        payload(APP.format(1), playwright=True, render_reason="shell"): 0,
        payload(APP.format(2)): 0,
        payload("http://shop.test/p/1"): 0,
    })
    app_site_needs_browser(redis_client)
    plain = make("w1", renders=False)
    request = plain.next_request()
    assert request is not None and request.url == "http://shop.test/p/1"
    assert plain.next_request() is None
    assert urls(redis_client, KEYS.browser_requests) == [APP.format(1), APP.format(2)]
    assert not queued(redis_client, KEYS.requests)
    # the leases moved with them: only the plain request's is held
    assert len(redis_client.hkeys(KEYS.inflight("w1"))) == 1
    assert plain.stats.get_value("browser/handed_over") == 2
    # a worker that renders takes them as they are
    browser = make("w2", renders=True)
    got = [browser.next_request(), browser.next_request()]
    assert [(r.url, r.meta["render_reason"]) for r in got if r] == [
        (APP.format(1), "shell"), (APP.format(2), "site")
    ]
    assert not browser.stats.get_value("browser/handed_over")


def test_never_marks_nothing_but_hands_over_what_is_marked(make, redis_client) -> None:  # type: ignore[no-untyped-def]
    app_site_needs_browser(redis_client)
    push_requests(redis_client, KEYS.requests, {
        payload(APP.format(1), playwright=True, render_reason="site"): 0,
    })
    never = make("w1", renders=True, BROWSER_RENDERING="never")
    assert never.enqueue_request(Request(APP.format(2), callback=never.spider.parse))
    assert never.next_request().url == APP.format(2)  # its own choice: fetched plainly
    assert never.next_request() is None
    assert urls(redis_client, KEYS.browser_requests) == [APP.format(1)]


def test_a_dead_workers_browser_requests_go_back_to_the_browser_queue(make, redis_client) -> None:  # type: ignore[no-untyped-def]
    push_requests(redis_client, KEYS.browser_requests, {
        payload(APP.format(1), playwright=True, render_reason="site"): 0
    })
    push_requests(redis_client, KEYS.requests, {payload("http://shop.test/p/1"): -1})
    browser = make("w1", renders=True)
    assert browser.next_request() is not None and browser.next_request() is not None
    assert not queued(redis_client, KEYS.browser_requests)
    assert not queued(redis_client, KEYS.requests)
    # the worker is dead (its heartbeat gone): another recovers what it held
    redis_client.delete(KEYS.alive("w1"))
    other = make("w2", renders=False)
    assert other.ledger.recover("w1") == 2
    assert urls(redis_client, KEYS.browser_requests) == [APP.format(1)]
    assert urls(redis_client, KEYS.requests) == ["http://shop.test/p/1"]


def test_a_shell_found_by_a_worker_without_a_browser_waits_for_one(make, redis_client) -> None:  # type: ignore[no-untyped-def]
    """The re-request of a shell (marked ``shell``, ``dont_filter``, carrying the lease of
    the page fetched plainly) goes to the browser queue, the lease moving with it."""
    push_requests(redis_client, KEYS.requests, {payload(APP.format(1)): 0})
    plain = make("w1", renders=False)
    fetched = plain.next_request()
    assert fetched is not None and redis_client.hlen(KEYS.inflight("w1")) == 1
    again = fetched.replace(dont_filter=True)
    again.meta.update(playwright=True, render_reason="shell")
    assert plain.enqueue_request(again)
    assert urls(redis_client, KEYS.browser_requests) == [APP.format(1)]
    assert redis_client.hlen(KEYS.inflight("w1")) == 0
