"""Three real workers share one site's request budget (SITE_MAX_RPS, robots.txt Crawl-delay)."""

from __future__ import annotations

import json

import pytest
from scrapy.utils.request import RequestFingerprinter

from crawler.scheduling.lanes import push_requests
from demoshop.process import ShopProcess
from master.requeue import encode, recrawl_request

from .conftest import KEYS, Crawl, page_fetches, parsed_pages

pytestmark = pytest.mark.workers

LIMIT = 8.0  # requests per second, all workers together
WINDOW = 2.0  # seconds
# Slots are spaced by 1/LIMIT in Redis; a request may reach the shop a little after
# its slot (a busy CPU), so allow the one extra request any window may hold plus two.
TOLERANCE = 3
# A request reaches the shop at or after its slot, never before: a worker that stalls
# (a busy machine) sends its requests late, and late requests may arrive bunched, so a
# short window of arrivals can hold more than the budget although every slot was
# spaced. What the budget guarantees at the shop is cumulative: from the first arrival
# on, the k-th request came no earlier than k / LIMIT seconds after the first slot.
# Only a delay of the very first arrivals (all early slot holders stalled at once) can
# make that count look higher: up to LIMIT requests per second of such a delay.
FIRST_DELAY = 0.5  # seconds of delay of the first arrival allowed for


def max_in_window(times: list[float], window: float) -> int:
    """The most requests that arrived within any ``window`` seconds."""
    times = sorted(times)
    best, start = 0, 0
    for end, stamp in enumerate(times):
        while stamp - times[start] >= window:
            start += 1
        best = max(best, end - start + 1)
    return best


def excess_over_budget(times: list[float], rate: float) -> float:
    """The most requests that arrived, from the first arrival on, beyond what ``rate``
    per second allows since then (a crawl within its budget: at most 1)."""
    times = sorted(times)
    return max(count - rate * (stamp - times[0]) for count, stamp in enumerate(times, 1))


def crawl_with_three_workers(crawl: Crawl, shop: ShopProcess, prefix: str, **settings: object):
    # started during a pause: all three are open before any takes work (a short
    # crawl is over before a worker that starts seconds late on a busy machine opens)
    crawl.seed(shop.url)
    crawl.pause()
    workers = [crawl.start_worker(f"{prefix}{n}", **settings) for n in range(3)]
    crawl.wait_open(3)
    crawl.resume()
    crawl.wait_workers()
    crawl.assert_clean_logs()
    fetched = page_fetches(shop)
    expected = shop.catalog.crawlable_paths()
    assert set(fetched) == expected
    assert max(fetched.values()) == 1, "a page was fetched twice"
    pages = {
        worker.worker_id: int(
            json.loads(crawl.client.hget(KEYS.workers, worker.worker_id))["pages"]
        )
        for worker in workers
    }
    assert sum(pages.values()) == parsed_pages(shop), pages  # the sitemaps are pages too
    return shop.read_access_log(), pages


@pytest.mark.timeout(600)  # two rounds of worker start-ups
def test_three_workers_together_hold_the_site_budget(crawl, shop_factory):
    limited_shop = shop_factory(products=40)  # 61 pages
    log, pages = crawl_with_three_workers(crawl, limited_shop, "limited-", SITE_MAX_RPS=LIMIT)
    limited = [entry.time for entry in log]
    # the workers shared the site
    assert sum(count > 0 for count in pages.values()) >= 2, pages
    free_shop = shop_factory(products=40)
    log, _ = crawl_with_three_workers(crawl, free_shop, "free-", SITE_MAX_RPS=0)
    free = [entry.time for entry in log]

    allowed = 1 + TOLERANCE + LIMIT * FIRST_DELAY
    worst = excess_over_budget(limited, LIMIT)
    assert worst <= allowed, (
        f"{worst:.1f} requests more than a budget of {LIMIT}/s allows since the first"
    )
    # the budget, not the machine, held the limited crawl: without it the same crawl
    # went faster than the budget allows (how much faster depends on the machine)
    assert excess_over_budget(free, LIMIT) > allowed, excess_over_budget(free, LIMIT)
    limited_span = max(limited) - min(limited)
    free_span = max(free) - min(free)
    # the workers waited for their turns, and counted it crawl-wide
    assert int(crawl.client.hget("ecommerce:stats", "politeness_waits") or 0) > 0
    print(
        f"\nlimited: {len(limited)} requests in {limited_span:.1f}s, at most "
        f"{max_in_window(limited, WINDOW)} in any {WINDOW:g}s, {worst:.1f} beyond the "
        f"budget; free: {len(free)} in {free_span:.1f}s, at most "
        f"{max_in_window(free, WINDOW)} in any {WINDOW:g}s"
    )


def test_robots_crawl_delay_is_honoured_by_all_workers_together(crawl, shop_factory):
    delay = 0.25  # robots.txt: Crawl-delay 0.25 s, i.e. 4 requests per second
    shop = shop_factory(products=12, crawl_delay=delay)
    # no budget of our own: only the shop's Crawl-delay spaces the requests
    log, _ = crawl_with_three_workers(crawl, shop, "delay-", SITE_MAX_RPS=0)
    # a worker's robots.txt request comes before it knows the delay
    pages = [entry.time for entry in log if entry.path != "/robots.txt"]
    worst = excess_over_budget(pages, 1 / delay)
    assert worst <= 1 + TOLERANCE + FIRST_DELAY / delay, (
        f"{worst:.1f} requests more than one per {delay}s allows since the first"
    )
    assert any("Crawl-delay: 0.25" in worker.log() for worker in crawl.workers)


def test_a_worker_waiting_on_a_slow_site_crawls_the_other_sites_meanwhile(crawl, shop_factory):
    slow = shop_factory(products=12, crawl_delay=0.3)  # 25 pages at 3.3 per second
    fast = shop_factory(products=40)  # 61 pages, no limit
    # every page of the slow site queued at once (and known to the dupefilter), ahead
    # of everything else: the scheduler sets them aside while the site is busy (the
    # stat "scheduler/parked"), and the worker crawls the fast site meanwhile
    base = slow.url.rstrip("/")
    fingerprinter = RequestFingerprinter()
    for path in slow.catalog.crawlable_paths():
        request = recrawl_request(base + path)
        crawl.client.sadd(KEYS.dupefilter, bytes(fingerprinter.fingerprint(request)))
        push_requests(crawl.client, KEYS.requests, {encode(request): -1})
    crawl.seed(fast.url)
    crawl.start_worker("only", SITE_MAX_RPS=0, CONCURRENT_REQUESTS=8)
    crawl.wait_workers()
    crawl.assert_clean_logs()
    assert set(page_fetches(slow)) == slow.catalog.crawlable_paths()
    assert set(page_fetches(fast)) == fast.catalog.crawlable_paths()
    slow_times = [entry.time for entry in slow.read_access_log()]
    fast_times = [entry.time for entry in fast.read_access_log()]
    # the fast site was crawled while the slow one waited for its turns: fast pages
    # come between the slow site's first fetch and its half-way one (at least 3.6 s
    # apart at its Crawl-delay, however fast the machine; on a slow machine the fast
    # site takes longer, but still meanwhile: an earlier check, "the fast site done
    # before the slow one's half-way", failed on a machine busy with other tests)
    slow_times.sort()
    first, halfway = slow_times[0], slow_times[len(slow_times) // 2]
    meanwhile = sum(first < stamp < halfway for stamp in fast_times)
    assert meanwhile >= 3, (meanwhile, len(fast_times), len(slow_times))
    log = crawl.workers[0].log()
    assert "'scheduler/parked'" in log
